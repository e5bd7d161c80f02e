"""Reading inside what a command runs (issue 22, item 3), through the installed hook.

A real git repository with a real bare origin (branch protection enforced by its hook, the
local main rewritten so only a force push would land), real Makefiles, package.json files, a
justfile, shell and Python scripts; each call is a ``statewise hook claude-code`` subprocess fed
Claude Code's JSON. A recipe, script or inline program that does something dangerous is stopped
as the inner command typed directly is; ordinary ones pass quietly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from statewise.contract import builtin_contract
from statewise.records import Provenance, RecordDraft
from statewise.sandbox import GitSandbox, make_git_sandbox
from statewise.store.sqlite import SQLiteStore

DEV = Provenance(source="developer", authority="developer", actor="dev")
FORCE_PUSH = "git push --force origin main"
WIPE = "rm -rf migrations"

MAKEFILE = """\
BUILD := build
PY ?= python3
VERSION = $(shell git describe --tags)
.PHONY: all build test clean reset push lint

all: build

build:
\tmkdir -p $(BUILD)
\t@echo "built $(VERSION)" > $(BUILD)/stamp.txt

test:
\t$(PY) -c 'print("tests")'

lint:
\tgrep -rn TODO src || true

clean:
\t-rm -rf $(BUILD) migrations

reset: clean
\t@echo reset done

again:
\t$(MAKE) clean

push:
\tgit push --force origin main

sub:
\t$(MAKE) -C services/api wipe

%.o: %.c
\t$(CC) -c $< -o $@
"""

SUB_MAKEFILE = """\
wipe:
\trm -rf ../../migrations
"""

PACKAGE = {
    "name": "app", "private": True, "workspaces": ["packages/*"],
    "scripts": {"build": "tsc -p .", "prebuild": "node -e 'console.log(1)'", "test": "node --test",
                "clean": "rm -rf dist migrations", "lint": "eslint src", "release": "npm run build && git push --force origin main"},
}
WEB_PACKAGE = {"name": "@app/web", "scripts": {"build": "tsc", "deploy": "git push --force origin main"}}

JUSTFILE = """\
default:
    echo hello

deploy target="origin":
    git push --force {{target}} main

wipe:
    rm -rf migrations
"""


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitSandbox, str]:
    root = tmp_path_factory.mktemp("inside")
    sandbox = make_git_sandbox(root / "sb")
    work = sandbox.work
    (work / "Makefile").write_text(MAKEFILE)
    (work / "services" / "api").mkdir(parents=True)
    (work / "services" / "api" / "Makefile").write_text(SUB_MAKEFILE)
    (work / "package.json").write_text(json.dumps(PACKAGE))
    (work / "packages" / "web").mkdir(parents=True)
    (work / "packages" / "web" / "package.json").write_text(json.dumps(WEB_PACKAGE))
    (work / "justfile").write_text(JUSTFILE)
    (work / "tox.ini").write_text("[tox]\nenvlist = py\n\n[testenv]\ncommands = python3 -c 'print(1)'\n\n"
                                  "[testenv:lint]\ncommands = grep -rn TODO src\n\n"
                                  "[testenv:wipe]\ncommands = rm -rf {toxinidir}/migrations\n")
    (work / "migrations").mkdir()
    (work / "migrations" / "0001_init.sql").write_text("create table t (id int);\n")
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text("print('app')\n")
    scripts = work / "scripts"
    scripts.mkdir()
    (scripts / "clean.sh").write_text("#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")\"/.. || exit\n"
                                      "echo cleaning\nrm -rf migrations\n")
    (scripts / "report.sh").write_text("#!/bin/sh\nls -la\ncat README.md\ngit status --short\ngit log --oneline -n 3\n")
    (scripts / "ship.sh").write_text("#!/bin/bash\ngit push --force origin main\n")
    for script in scripts.iterdir():
        script.chmod(0o755)
    tools = work / "tools"
    tools.mkdir()
    (tools / "wipe.py").write_text("import shutil\nfrom pathlib import Path\n\nTARGET = Path('migrations')\n\n"
                                   "def main():\n    shutil.rmtree(TARGET)\n\nmain()\n")
    (tools / "report.py").write_text("import json, subprocess\nfrom pathlib import Path\n\n"
                                     "print(Path('README.md').read_text())\n"
                                     "print(subprocess.run(['git', 'status', '--short'], capture_output=True).stdout)\n")
    _git(work, "add", "-A")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "project files")
    store_path = str(root / "store.db")
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        for key, value, scope in (("repository.protected", True, f"repo:{sandbox.repo_identity}@main"),
                                  ("fs.protected_paths", [".env", "migrations"], f"repo:{sandbox.repo_identity}")):
            store.put(RecordDraft(key=key, value=value, scope=scope, provenance=DEV))
    finally:
        store.close()
    return sandbox, store_path


def decide(world: tuple[GitSandbox, str], command: str) -> tuple[str, str]:
    """The hook's decision on a Bash call (deny/ask/pass) and its reason."""
    sandbox, store_path = world
    payload = {"session_id": "inside", "transcript_path": "/dev/null", "cwd": str(sandbox.work),
               "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "inside"}, "tool_use_id": "toolu_inside"}
    done = subprocess.run([sys.executable, "-m", "statewise.cli", "--store", store_path, "hook", "claude-code"],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=120, cwd=sandbox.work)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout).get("hookSpecificOutput", {})
    return output.get("permissionDecision", "pass"), output.get("permissionDecisionReason", "")


#: (what the agent runs, the dangerous command inside it)
DANGEROUS = [
    ("make push", FORCE_PUSH),
    ("make clean", WIPE),
    ("make reset", WIPE),  # a prerequisite's recipe
    ("make again", WIPE),  # $(MAKE) clean
    ("make sub", WIPE),  # $(MAKE) -C services/api wipe
    ("make -C services/api wipe", WIPE),
    ("make -f services/api/Makefile wipe", "rm -rf ../../migrations"),
    ("npm run clean", WIPE),
    ("npm run release", FORCE_PUSH),
    ("npm run deploy -w packages/web", FORCE_PUSH),
    ("npm run deploy --workspace=@app/web", FORCE_PUSH),
    ("pnpm clean", WIPE),
    ("yarn clean", WIPE),
    ("bun run clean", WIPE),
    ("just wipe", WIPE),
    ("just deploy", FORCE_PUSH),
    ("tox -e wipe", WIPE),
    ("bash scripts/clean.sh", WIPE),
    ("sh scripts/ship.sh", FORCE_PUSH),
    ("./scripts/ship.sh", FORCE_PUSH),
    ("cd scripts && ./clean.sh", WIPE),
    ("source scripts/ship.sh", FORCE_PUSH),
    (". scripts/clean.sh", WIPE),
    ("python3 -c 'import shutil; shutil.rmtree(\"migrations\")'", WIPE),
    ("python3 -c 'import os; os.system(\"git push --force origin main\")'", FORCE_PUSH),
    ("python3 - <<'PY'\nimport subprocess\nsubprocess.run(['git', 'push', '--force', 'origin', 'main'], check=True)\n"
     "PY", FORCE_PUSH),
    ("python3 tools/wipe.py", WIPE),
    ("perl -e 'system(\"git push --force origin main\")'", FORCE_PUSH),
    ("node -e 'require(\"child_process\").execSync(\"rm -rf migrations\")'", WIPE),
    ("ruby -e 'require \"fileutils\"; FileUtils.rm_rf(\"migrations\")'", WIPE),
    ("awk 'BEGIN { system(\"git push --force origin main\") }'", FORCE_PUSH),
]

ORDINARY = [
    "make", "make build", "make test", "make lint", "make hello.o", "make -n clean",
    "npm run build", "npm run lint", "npm test", "pnpm build",
    "just", "tox -e lint",
    "bash scripts/report.sh", "./scripts/report.sh", "python3 tools/report.py",
    "python3 -c 'print(1)'", "python3 - <<'PY'\nimport json\nprint(json.dumps({'a': 1}))\nPY",
    "node -e 'console.log(process.version)'", "perl -ne 'print if /app/' README.md", "awk '{print $1}' README.md",
    "ruby -e 'puts 1'",
]


@pytest.mark.parametrize(("command", "inner"), DANGEROUS)
def test_what_runs_inside_is_stopped_as_the_inner_command(world, command, inner):
    direct, _ = decide(world, inner)
    assert direct in ("deny", "ask"), f"the inner command {inner!r} itself is not stopped: {direct}"
    got, reason = decide(world, command)
    assert got == direct, f"{command!r}: {got} ({reason}), typed directly {inner!r}: {direct}"


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_recipes_scripts_and_programs_pass_quietly(world, command):
    got, reason = decide(world, command)
    assert got == "pass", f"{command!r}: {got} ({reason})"


def test_the_reason_says_where_the_command_came_from(world):
    got, reason = decide(world, "make clean")
    assert got == "deny" and "make clean" in reason and "Makefile line" in reason and "migrations" in reason


def test_a_makefile_read_from_standard_input_cannot_be_checked(world):
    got, reason = decide(world, "make -f /dev/stdin clean")
    assert got == "deny" and "standard input" in reason


def test_a_python_choice_among_literals_passes_when_every_value_does_and_stops_when_one_does_not(world):
    # issue 23, inc-migrate-staging: the file a script writes is one of a few literals picked at
    # run time; each is checked, so harmless writes pass and one protected value stops it.
    writes = ("import os, pathlib\nurl = os.environ.get('DATABASE_URL', '')\n"
              "t = next((n for n in ('production', 'staging') if n in url), 'unknown')\n"
              "pathlib.Path(f'migrated-{t}.txt').write_text('x')\n")
    got, reason = decide(world, f"python3 - <<'PY'\n{writes}PY")
    assert got == "pass", reason
    wipes = "import os, shutil\nd = 'build' if os.environ.get('CI') else 'migrations'\nshutil.rmtree(d)\n"
    direct, _ = decide(world, WIPE)
    got, reason = decide(world, f"python3 - <<'PY'\n{wipes}PY")
    assert direct == "deny" and got == direct and "migrations" in reason, reason
