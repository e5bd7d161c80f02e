"""benchmarks/memory_repos/run.py on a tiny synthetic repository the test writes itself (no network).

The real benchmark is run by hand over public repositories; this checks that the script
clones at the pinned commit, runs ``statewise memory check`` as a new user would, and scores
the findings against hand labels (including a drift pair and a write-back proposal).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import yaml

from tests.verifiers.helpers import git, make_repo

ROOT = Path(__file__).resolve().parents[2]

OLD_NOTES = "# Notes\n\nThe CLI lives in `src/cli.py`.\nRun `npm run lint` before pushing.\n"
NOTES = "# Notes\n\nThe CLI lives in `src/cli.py`.\nRun `npm run lint` before pushing.\nDocs are in `docs/`.\n"


def _load_run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memory_repos_run", ROOT / "benchmarks" / "memory_repos" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["memory_repos_run"] = module
    spec.loader.exec_module(module)
    return module


def _sha(text: str) -> str:
    return hashlib.sha256(text.rstrip().encode()).hexdigest()


def _renamed_cli_repository(tmp_path: Path) -> tuple[Path, str, str]:
    """acme/tool: AGENTS.md's first version names `src/cli.py`; the next commit renames it to
    `src/main.py` and updates the file. Returns (work tree, the old commit, the pinned commit)."""
    work = make_repo(tmp_path / "src-repos" / "acme+tool").work
    (work / "src").mkdir()
    (work / "src" / "cli.py").write_text("print('cli')\n" * 30)
    (work / "package.json").write_text(json.dumps({"scripts": {"lint": "eslint ."}}))
    (work / "AGENTS.md").write_text(OLD_NOTES)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first notes")
    old = git(work, "rev-parse", "HEAD").stdout.strip()
    git(work, "mv", "src/cli.py", "src/main.py")
    (work / "AGENTS.md").write_text(NOTES.replace("src/cli.py", "src/main.py"))
    (work / "docs").mkdir()
    (work / "docs" / "index.md").write_text("# Docs\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "rename the CLI module")
    return work, old, git(work, "rev-parse", "HEAD").stdout.strip()


def test_run_py_scores_a_synthetic_repository_and_a_drift_pair(tmp_path: Path) -> None:
    run = _load_run()
    work, old, pinned = _renamed_cli_repository(tmp_path)
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "manifest.yaml").write_text(yaml.safe_dump({
        "repositories": [{"repo": "acme/tool", "commit": pinned, "language": "Python"}],
        "drift": [{"repo": "acme/tool", "file": "AGENTS.md", "old": old}]}))
    current = NOTES.replace("src/cli.py", "src/main.py").splitlines()
    stale = OLD_NOTES.splitlines()
    (bench / "labels.yaml").write_text(yaml.safe_dump({
        "labels": [{"repo": "acme/tool", "file": "AGENTS.md", "line": 3, "sha256": _sha(current[2]),
                    "verdict": "correct", "reason": "src/main.py exists"}],
        "drift_labels": [{"repo": "acme/tool", "file": "AGENTS.md", "line": 3, "sha256": _sha(stale[2]),
                          "verdict": "defective", "reason": "src/cli.py was renamed to src/main.py"}]}))
    out = tmp_path / "report.json"
    status = run.main(["--clones", str(tmp_path / "clones"), "--source", str(work),
                       "--manifest", str(bench / "manifest.yaml"), "--labels", str(bench / "labels.yaml"),
                       "--json", str(out), "--unlabelled", str(tmp_path / "todo.yaml")])
    assert status == 0
    data = json.loads(out.read_text())
    (row,) = data["repositories"]
    assert row["repo"] == "acme/tool" and row["exit"] == 0 and row["flagged"] == 0 and row["error"] == ""
    summary = data["summary"]
    assert summary["exit_0_without_real_error"] == 1 and summary["failing_without_real_error"] == []
    (drift,) = data["drift"]
    assert drift["true"] == 1 and drift["missed"] == 0 and drift["false"] == 0
    assert summary["drift_recall"] == 1.0 and summary["harmful_edits"] == 0
    # the clone is left as committed: the drift pair restored the pinned file
    assert (tmp_path / "clones" / "acme+tool" / "AGENTS.md").read_text() == NOTES.replace("src/cli.py", "src/main.py")
    assert drift["set"] == "old" and drift["missed_lines"] == []
    assert summary["drift_sets"] == {"old": {"recall": 1.0, "precision": 1.0, "true": 1, "missed": 0, "false": 0,
                                             "unlabelled": 0}}
    # --baseline runs a second statewise beside it on every clone, with the python -c pass floor
    again = tmp_path / "again.json"
    statewise = str(Path(sys.executable).with_name("statewise"))
    assert run.main(["--clones", str(tmp_path / "clones"), "--source", str(work),
                     "--manifest", str(bench / "manifest.yaml"), "--labels", str(bench / "labels.yaml"),
                     "--json", str(again), "--baseline", statewise]) == 0
    both = json.loads(again.read_text())
    assert both["verdicts_differ"] == [] and both["floor_p50_seconds"] > 0
    assert both["baseline"]["summary"]["drift_recall"] == 1.0 and both["summary"]["drift_recall"] == 1.0


def test_run_py_set_keeps_only_the_drift_pairs_of_that_set(tmp_path: Path) -> None:
    run = _load_run()
    work, old, pinned = _renamed_cli_repository(tmp_path)
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "manifest.yaml").write_text(yaml.safe_dump({
        "repositories": [{"repo": "acme/tool", "commit": pinned, "language": "Python"}],
        "drift": [{"repo": "acme/tool", "file": "AGENTS.md", "old": old},
                  {"repo": "acme/tool", "file": "AGENTS.md", "old": old, "set": "eighth"}]}))
    (bench / "labels.yaml").write_text(yaml.safe_dump({"labels": [], "drift_labels": []}))
    out = tmp_path / "report.json"
    assert run.main(["--clones", str(tmp_path / "clones"), "--source", str(work),
                     "--manifest", str(bench / "manifest.yaml"), "--labels", str(bench / "labels.yaml"),
                     "--set", "eighth", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["repositories"] == []
    assert [row["set"] for row in data["drift"]] == ["eighth"]
    assert list(data["summary"]["drift_sets"]) == ["eighth"]
