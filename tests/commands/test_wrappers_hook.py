"""Issue 22 items 4, 6 and 7 through the installed hook: wrapper prefixes, several ecosystems
in one repository, valid bash the grammar used to reject, terminal multiplexers.

Every command goes to ``python -m statewise.cli hook claude-code`` as a real subprocess fed
the JSON Claude Code sends, in a realistic mixed repository: a protected ``main`` on a bare
origin (StateWise's own pre-receive hook), a Python side (pyproject.toml, requirements.txt,
an activated .venv) beside a Node side (package.json, package-lock.json), ``.env`` and
``migrations/``, with a store holding the developer's protected paths. Ordinary work must be
allowed; a dangerous command behind a wrapper must be stopped exactly as without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from statewise.contract import builtin_contract
from statewise.records import Provenance, RecordDraft
from statewise.store.sqlite import SQLiteStore
from statewise.verifiers.protection import install_branch_protection
from statewise.workspace import derive_task_scope

DEV = Provenance(source="developer", authority="developer", actor="dev")
MACHINE = Provenance(source="observation", authority="machine", actor="test")
_GIT_ENV = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "Dev",
            "GIT_COMMITTER_EMAIL": "dev@example.com", "GIT_CONFIG_NOSYSTEM": "1"}

FILES = {
    "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n',
    "requirements.txt": "flask==3.0.3\nrequests>=2.31\n",
    "package.json": json.dumps({"name": "shop-web", "version": "1.0.0", "private": True,
                                "scripts": {"test": "vitest run", "build": "vite build"},
                                "devDependencies": {"vite": "^5.3.1", "vitest": "^1.6.0"}}, indent=2) + "\n",
    "package-lock.json": '{"name": "shop-web", "lockfileVersion": 3, "requires": true, "packages": {}}\n',
    ".gitignore": "__pycache__/\n.venv\nnode_modules/\n",
    "shop/__init__.py": "",
    "tests/test_shop.py": "def test_ok():\n    assert True\n",
    ".env": "API_TOKEN=dev-token\n",
    "migrations/0001_init.sql": "create table stock (sku text primary key, qty int);\n",
    "README.md": "# shop\n",
}


def _run(argv: list[str], cwd: Path) -> None:
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True, timeout=120, env={**os.environ, **_GIT_ENV})


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("mixed")))
    origin, work = base / "origin.git", base / "shop"
    _run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], base)
    _run(["git", "init", "-q", "-b", "main", str(work)], base)
    for relative, content in FILES.items():
        (work / relative).parent.mkdir(parents=True, exist_ok=True)
        (work / relative).write_text(content)
    _run(["git", "add", "-A"], work)
    _run(["git", "commit", "-q", "-m", "Initial project"], work)
    _run(["git", "remote", "add", "origin", str(origin)], work)
    _run(["git", "push", "-q", "-u", "origin", "main"], work)
    install_branch_protection(origin, ["main"])
    _run(["git", "switch", "-q", "-c", "feature/work"], work)
    _run([sys.executable, "-m", "venv", "--without-pip", ".venv"], work)
    # The venv's pip, as `python -m venv` writes it: a script run by the venv's python.
    pip = work / ".venv" / "bin" / "pip"
    pip.write_text(f"#!{work / '.venv' / 'bin' / 'python'}\nfrom pip._internal.cli.main import main\nmain()\n")
    pip.chmod(0o755)
    store = str(base / "store.db")
    scope = derive_task_scope(work)
    opened = SQLiteStore(store, key_schema=builtin_contract())
    try:
        opened.put(RecordDraft(key="fs.protected_paths", value=[".env", "migrations", ".git"],
                               scope=f"repo:{scope.repo}", provenance=DEV))
        opened.put(RecordDraft(key="repository.protected_branches", value=["main"], scope=f"repo:{scope.repo}",
                               provenance=MACHINE))
    finally:
        opened.close()
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update({"PATH": f"{work / '.venv' / 'bin'}:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": str(work / ".venv")})
    return {"work": work, "store": store, "env": env}


def decide(mixed: dict[str, object], command: str) -> tuple[str, str]:
    """The installed hook's decision on ``command`` (allow, ask or deny) and its reason."""
    payload = {"session_id": "wrappers", "transcript_path": "/dev/null", "cwd": str(mixed["work"]),
               "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "issue 22"}, "tool_use_id": "t"}
    done = subprocess.run([sys.executable, "-m", "statewise.cli", "--store", str(mixed["store"]), "hook",
                           "claude-code"], input=json.dumps(payload), capture_output=True, text=True, timeout=120,
                          env=mixed["env"], cwd=str(mixed["work"]))
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout or "{}").get("hookSpecificOutput", {})
    return output.get("permissionDecision") or "allow", output.get("permissionDecisionReason", "")


#: Ordinary work in a mixed Python + Node repository, each stopped before issue 22.
ORDINARY = [
    # item 6: pip/uv installs are checked against the Python side, npm against the Node side
    "pip install -r requirements.txt",
    "pip install requests",
    "python -m pip install -U pip",
    "pip install --index-url https://pypi.company.example/simple requests",
    "pip install --find-links ./wheels requests",
    "uv pip install requests",
    "npm install",
    "npm install lodash",
    "conda install -c conda-forge numpy",
    # item 4: the command inside a wrapper is ordinary
    "conda run -n base pytest -q",
    "mamba run -n base python -m pytest",
    "nix develop -c pytest -q",
    "nix-shell -p python3 --run 'pytest -q'",
    "direnv exec . pytest",
    "pixi run pytest",
    "timeout 600 pytest -x",
    # item 7: valid bash, detached multiplexers
    "cat <<'A' && cat <<'B'\nfirst\nA\nsecond\nB",
    "python - <<'PY' 2>&1 | head -20\nimport json\nprint(json.dumps({'ok': True}))\nPY",
    "cat > NOTES.md <<'EOF'\n# Notes\n\n- run `pytest` with $HOME set\nEOF",
    "echo hi | tee >(wc -c)",
    "tmux new-session -d -s web 'python -m http.server 8000'",
    "tmux send-keys -t web 'pytest -q' Enter",
    "tmux split-window -h",
    "tmux kill-session -t web",
    "screen -dmS web python -m http.server",
    "screen -S web -X quit",
    # the other ordinary false stops of the issue
    "docker rm web",
    "docker volume rm data",
    "git shortlog -sn --committer",
    "env --argv0 lister ls -la",
    "zip -r --split-size 10m shop.zip shop",
    "pytest tests/test_shop.py::test_ok -q",
]

#: Dangerous commands, each behind a wrapper: stopped exactly as the unwrapped command is.
WRAPPED = [
    ("conda run -n base git push -f origin main", "git push -f origin main"),
    ("mamba run -n base rm -rf migrations", "rm -rf migrations"),
    ("micromamba run -n x sh -c 'echo x > .env'", "echo x > .env"),
    ("poetry run rm -rf migrations", "rm -rf migrations"),
    ("pipenv run rm -rf migrations", "rm -rf migrations"),
    ("uv run rm .env", "rm .env"),
    ("pdm run rm -rf migrations", "rm -rf migrations"),
    ("hatch run rm -rf migrations", "rm -rf migrations"),
    ("rye run rm -rf migrations", "rm -rf migrations"),
    ("pixi run rm -rf migrations", "rm -rf migrations"),
    ("nix develop -c rm -rf migrations", "rm -rf migrations"),
    ("nix-shell --run 'git push -f origin main'", "git push -f origin main"),
    ("devbox run rm -rf migrations", "rm -rf migrations"),
    ("direnv exec . rm -rf migrations", "rm -rf migrations"),
    ("sudo rm -rf migrations", "rm -rf migrations"),
    ("doas rm -rf migrations", "rm -rf migrations"),
    ("nice -n 10 rm -rf migrations", "rm -rf migrations"),
    ("ionice -c3 rm -rf migrations", "rm -rf migrations"),
    ("timeout 60 git push -f origin main", "git push -f origin main"),
    ("time rm -rf migrations", "rm -rf migrations"),
    ("env FOO=1 rm .env", "rm .env"),
    ("stdbuf -oL rm -rf migrations", "rm -rf migrations"),
    ("watch -n 5 rm -rf migrations", "rm -rf migrations"),
    ("npx rimraf migrations", "rimraf migrations"),
    ("bunx rimraf migrations", "rimraf migrations"),
    ("pnpm dlx rimraf migrations", "rimraf migrations"),
    ("tmux send-keys -t web 'rm -rf migrations' Enter", "rm -rf migrations"),
    ("tmux new-session -d 'git push -f origin main'", "git push -f origin main"),
    ("screen -dmS job rm -rf migrations", "rm -rf migrations"),
    ("screen -S job -X stuff 'echo x > .env^M'", "echo x > .env"),
]

#: Wrappers whose inner command cannot be found, or that open a session: stopped.
CANNOT_FIND = [
    "conda run --no-such-option -n base git push -f origin main",
    "conda run -n base",
    "nix develop",
    "direnv exec",
    "tmux attach -t web",
    "nix-shell --run \"$CMD\"",
]


def _invariants(reason: str) -> list[str]:
    return sorted(set(part.split(":", 1)[0] for part in reason.split("invariant:")[1:]))


def test_ordinary_commands_pass_the_installed_hook(mixed):
    stopped = [(command, decision, reason[:300]) for command in ORDINARY
               for decision, reason in [decide(mixed, command)] if decision != "allow"]
    assert stopped == []


def test_a_wrapped_dangerous_command_is_stopped_exactly_as_unwrapped(mixed):
    differences = []
    unwrapped = {bare: decide(mixed, bare) for bare in dict.fromkeys(bare for _, bare in WRAPPED)}
    for wrapped, bare in WRAPPED:
        bare_decision, bare_reason = unwrapped[bare]
        decision, reason = decide(mixed, wrapped)
        assert bare_decision == "deny", f"{bare!r} is not denied unwrapped: {bare_reason[:300]}"
        if decision != bare_decision or _invariants(reason) != _invariants(bare_reason):
            differences.append((wrapped, decision, reason[:300]))
    assert differences == []


def test_a_wrapper_whose_command_cannot_be_found_fails_closed(mixed):
    passed = [command for command in CANNOT_FIND if decide(mixed, command)[0] != "deny"]
    assert passed == []


def test_each_side_of_a_mixed_repository_keeps_its_own_manager(mixed, tmp_path):
    # A uv project beside an npm one: pip bypasses uv's lock and yarn npm's, each is stopped;
    # each side's own manager passes. (A store of its own: the managers observed before the
    # lock file appeared are kept for their ttl.)
    (mixed["work"] / "uv.lock").write_text('version = 1\nrequires-python = ">=3.10"\n')
    fresh = {**mixed, "store": str(tmp_path / "store.db")}
    try:
        decision, reason = decide(fresh, "pip install requests")
        assert decision == "deny" and "install_with_project_package_manager" in reason
        assert 'python.package_manager = "uv"' in reason
        decision, reason = decide(fresh, "yarn add lodash")
        assert decision == "deny" and 'node.package_manager = "npm"' in reason
        assert decide(fresh, "uv add requests")[0] == "allow"
        assert decide(fresh, "npm install lodash")[0] == "allow"
    finally:
        (mixed["work"] / "uv.lock").unlink()
