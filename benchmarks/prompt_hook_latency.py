"""The prompt-time check's latency as the agent pays it (issue 23): the installed
``UserPromptSubmit`` hook command, spawned as Claude Code spawns it (``/bin/sh -c <command from
the settings file>`` with the prompt's JSON on stdin), beside ``python -c pass``.

    python benchmarks/prompt_hook_latency.py [--iterations 11]

Cases: a workspace with no store (answered by the front door); a store whose records need no
check and were told already in this session (the quiet answer the front door reuses); and a
store holding a stale, agent-stated ``repository.protected = false`` for main, re-seeded before
every call, which the check verifies on a loopback bare origin (its pre-receive hook protects
main), repairs and tells. Prints the p50 of each in milliseconds, and the largest verifying call.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from statewise.contract import builtin_contract
from statewise.integrations.install import install_hooks, settings_path
from statewise.records import Authority, Provenance, RecordDraft, SourceKind
from statewise.sandbox import make_git_sandbox
from statewise.store.sqlite import SQLiteStore


def _prompt_command(project: Path) -> str:
    hooks = json.loads(settings_path("claude-code", project=project).read_text())["hooks"]
    return str(hooks["UserPromptSubmit"][0]["hooks"][0]["command"])


def _put(store_path: str, key: str, value: object, scope: str, provenance: Provenance, days_old: int) -> None:
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        store.put(RecordDraft(key=key, value=value, scope=scope, provenance=provenance,
                              observed_at=datetime.now(UTC) - timedelta(days=days_old)), replace=True)
    finally:
        store.close()


def _run(command: str, cwd: Path, session: str) -> tuple[float, str]:
    payload = json.dumps({"session_id": session, "transcript_path": "/dev/null", "cwd": str(cwd),
                          "hook_event_name": "UserPromptSubmit", "prompt": "push the fix"})
    started = time.perf_counter()
    # As Claude Code spawns it: in the project's folder, with CLAUDE_PROJECT_DIR set (the installed
    # command is portable: it finds the wrapper from that variable, else from the working folder).
    done = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, text=True, check=False,
                          cwd=cwd, env={**os.environ, "CLAUDE_PROJECT_DIR": str(cwd)})
    return time.perf_counter() - started, done.stdout


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=11)
    n = parser.parse_args().iterations
    scratch = Path(tempfile.mkdtemp(prefix="statewise-prompt-latency-"))
    os.environ["STATEWISE_CACHE_DIR"] = str(scratch / "cache")
    sandbox = make_git_sandbox(scratch / "sb")
    store_path = str(scratch / "store.db")
    install_hooks("claude-code", project=sandbox.work, store=store_path)
    bare = scratch / "bare"
    bare.mkdir()
    subprocess.run(["git", "init", "-q", str(bare)], check=True)
    install_hooks("claude-code", project=bare)
    baseline = []
    for _ in range(n):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        baseline.append(time.perf_counter() - started)
    no_store = [_run(_prompt_command(bare), bare, f"n{i}")[0] for i in range(n)]
    developer = Provenance(source=SourceKind.DEVELOPER, authority=Authority.DEVELOPER, actor="dev")
    _put(store_path, "project.test_command", "make test", f"repo:{sandbox.repo_identity}", developer, 0)
    command = _prompt_command(sandbox.work)
    _run(command, sandbox.work, "quiet")  # told once, and the warm worker started
    _run(command, sandbox.work, "quiet")
    quiet = [_run(command, sandbox.work, "quiet")[0] for _ in range(n)]
    agent = Provenance(source=SourceKind.AGENT_INFERENCE, authority=Authority.AGENT, actor="claude")
    verifying = []
    for i in range(n):
        _put(store_path, "repository.protected", False, f"repo:{sandbox.repo_identity}@main", agent, 60)
        seconds, stdout = _run(command, sandbox.work, f"v{i}")
        if "now true" not in stdout:
            raise SystemExit(f"the check did not correct the record: {stdout}")
        verifying.append(seconds)
    print(json.dumps({"iterations": n, "python -c pass p50 ms": _ms(baseline), "no store p50 ms": _ms(no_store),
                      "quiet prompt p50 ms": _ms(quiet), "verifies loopback protection p50 ms": _ms(verifying),
                      "verifying max ms": round(max(verifying) * 1000, 1)}))


if __name__ == "__main__":
    main()
