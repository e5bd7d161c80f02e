"""The honest replay of real traffic (benchmarks/traffic/test_paths.py, benchmarks/real_traffic.py)
on a synthetic mini-swe-agent trajectory the test writes itself, in a real bare git repository:
which test paths existed where the agent ran each command is read from the command's own output,
which database its Django project used from what came before, and the replay through the
installed hook creates what existed (and only that) before sending the command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "benchmarks" / "traffic"))

import extract  # noqa: E402
import real_traffic  # noqa: E402
import test_paths  # noqa: E402

RAN = "============ test session starts ============\ncollected 3 items\n\ntests/test_old.py ...\n\n3 passed in 0.1s\n"
GONE = "ERROR: file or directory not found: tests/test_gone.py\n\ncollected 0 items\nno tests ran in 0.01s\n"
SETTINGS = ("cat <<'EOF' > demo/proj/settings.py\nDATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', "
            "'NAME': 'db.sqlite3'}}\nEOF")
STEPS = [
    ("pytest tests/test_old.py", RAN),
    ("pytest tests/test_gone.py", GONE),
    ("pytest tests/test_nopytest.py", "bash: line 1: pytest: command not found\n"),
    ("grep -n needle tests/test_listed.py", "tests/test_listed.py:3: needle = 1\n"),
    ("pytest tests/test_listed.py", "bash: line 1: pytest: command not found\n"),
    (SETTINGS, ""),
    ("cd demo && python3 manage.py migrate", "Operations to perform:\n  Apply all migrations: app\n"),
]


def _trajectory() -> dict[str, object]:
    messages: list[dict[str, str]] = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    for command, output in STEPS:
        messages.append({"role": "assistant", "content": f"THOUGHT: go.\n\n```bash\n{command}\n```"})
        messages.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{output}</output>"})
    return {"messages": messages}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The corpus and the evidence file of the synthetic source."""
    root = tmp_path_factory.mktemp("traffic-evidence")
    work = root / "work"
    (work / "runs" / "t-1").mkdir(parents=True)
    (work / "runs" / "t-1" / "t-1.traj.json").write_text(json.dumps(_trajectory()))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=work, check=True)
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "trajectories"], cwd=work, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, check=True, capture_output=True,
                            text=True).stdout.strip()
    mirrors = root / "mirrors"
    (mirrors / "example+trajs").mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirrors / "example+trajs" / "repo")], check=True)
    manifest = root / "sources.yaml"
    manifest.write_text(yaml.safe_dump({"sources": [
        {"id": "mini", "repo": "example/trajs", "commit": commit, "paths": ["runs/*/*.traj.json"],
         "format": "mini-swe-agent", "agent": "mini-swe-agent", "model": "m", "workspace_roots": ["/testbed"]}]}))
    corpus, evidence = root / "corpus.jsonl", root / "test_paths.yaml"
    extract.main(["--mirrors", str(mirrors), "--sources", str(manifest), "--out", str(corpus)])
    assert test_paths.main(["--mirrors", str(mirrors), "--sources", str(manifest), "--corpus", str(corpus),
                            "--out", str(evidence)]) == 0
    return corpus, evidence, root


def _sha(command: str) -> str:
    return extract.command_hash(command)


def test_the_evidence_is_read_from_each_commands_output(built):
    _, evidence_file, _ = built
    evidence = test_paths.load_evidence(evidence_file)
    key = test_paths.path_key
    assert evidence[_sha("pytest tests/test_old.py")] == {key("tests/test_old.py"): "existed"}
    assert evidence[_sha("pytest tests/test_gone.py")] == {key("tests/test_gone.py"): "missing"}
    assert evidence[_sha("pytest tests/test_nopytest.py")] == {key("tests/test_nopytest.py"): "unknown"}
    # pytest was missing, but grep printed a line of the file earlier in the same trajectory
    assert evidence[_sha("pytest tests/test_listed.py")] == {key("tests/test_listed.py"): "existed"}
    assert test_paths.load_databases(evidence_file) == {_sha("cd demo && python3 manage.py migrate"): "sqlite3"}
    text = evidence_file.read_text()
    assert "tests/test_old.py" not in text and "pytest" not in text.split("commands:", 1)[1]


def test_the_replay_creates_what_existed_and_counts_the_rest(built):
    corpus, evidence_file, _ = built
    entries = [e for e in extract.read_corpus(corpus) if "pytest" in e["command"] or "manage.py" in e["command"]]
    created: real_traffic.Counter[str] = real_traffic.Counter()
    outcomes, _, _ = real_traffic.run(entries, {}, jobs=1, evidence=test_paths.load_evidence(evidence_file),
                                      databases=test_paths.load_databases(evidence_file), created=created)
    verdicts = {o.sha256: o for o in outcomes}
    for command in ("pytest tests/test_old.py", "pytest tests/test_listed.py", "cd demo && python3 manage.py migrate"):
        assert verdicts[_sha(command)].verdict == "allow", (command, verdicts[_sha(command)].reason)
    for command in ("pytest tests/test_gone.py", "pytest tests/test_nopytest.py"):
        outcome = verdicts[_sha(command)]
        assert outcome.verdict == "deny" and "test_paths_exist" in outcome.reason, (command, outcome.reason)
    assert created == real_traffic.Counter({"created": 2, "not created": 2, "django projects": 1})


def test_without_the_evidence_the_same_paths_are_stopped(built):
    corpus, _, _ = built
    entries = [e for e in extract.read_corpus(corpus) if e["command"] in ("pytest tests/test_old.py",
                                                                           "cd demo && python3 manage.py migrate")]
    outcomes, _, _ = real_traffic.run(entries, {}, jobs=1)
    verdicts = {o.sha256: o.verdict for o in outcomes}
    assert verdicts == {_sha("pytest tests/test_old.py"): "deny", _sha("cd demo && python3 manage.py migrate"): "ask"}


def test_a_path_no_output_speaks_of_is_looked_up_where_the_task_was_cut(tmp_path):
    """A task named owner__name-N was cut at pull request N's base commit: the merge base of
    the parents of its merge commit. A path there existed when the agent ran; one that is not
    there, or a task whose repository or merge commit is not at hand, stays unknown."""
    work = tmp_path / "widget"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(work)]
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "test_up.py").write_text("def test_up(): pass\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
    subprocess.run([*git, "checkout", "-q", "-b", "fix"], check=True)
    (work / "fix.txt").write_text("fix\n")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the fix"], check=True)
    subprocess.run([*git, "checkout", "-q", "main"], check=True)
    subprocess.run([*git, "rm", "-q", "tests/test_up.py"], check=True)  # gone on main after the branch point
    subprocess.run([*git, "commit", "-q", "-m", "later"], check=True)
    subprocess.run([*git, "merge", "-q", "--no-ff", "fix", "-m", "Merge pull request #7 from someone/fix"], check=True)
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirrors / "acme+widget" / "repo")], check=True)
    state = test_paths.upstream_state
    assert state("tests/test_up.py", mirrors, "trajs/acme__widget-7/acme__widget-7.traj.json") == "existed"
    assert state("tests/test_new.py", mirrors, "trajs/acme__widget-7/acme__widget-7.traj.json") == "unknown"
    assert state("tests/test_up.py", mirrors, "trajs/acme__widget-8/acme__widget-8.traj.json") == "unknown"
    assert state("tests/test_up.py", mirrors, "trajs/acme__gadget-7/acme__gadget-7.traj.json") == "unknown"
    assert state("tests/test_up.py", mirrors, "runs/t-1/t-1.traj.json") == "unknown"
