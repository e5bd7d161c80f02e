"""A session start's cost in instructions, which a loaded machine does not blur: the installed
SessionStart command run under ``valgrind --tool=callgrind`` (every process of the call:
``/bin/sh``, the wrapper's interpreter), beside ``python -c pass`` from the same interpreter.

    python benchmarks/session_instructions.py [--agent claude-code] [--worker]

The world is hook_speed.py's (a repository with a bare origin, ``statewise init``, ``statewise
install``); one full SessionStart writes the note and a push records what it verified. Counted:
SessionStart with nothing changed; an hour later (the note's clock input moved back an hour, the
store file touched as by writes outside the session's scopes), whose first start reads the
store; and the start after that. Without ``--worker`` no warm worker runs (as an hour later
finds it: a worker ends after 15 idle minutes), so a start that takes the full path checks in
its own, counted, process; with it a worker is alive, whose forked children are not counted.
Needs ``valgrind``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hook_speed  # noqa: E402


def _instructions(folder: Path, argv: list[str], payload: str | None, cwd: Path, env: dict[str, str]) -> \
        tuple[int, int, str]:
    """Instructions of every process of ``argv`` (the warm worker's own start left out), their
    number, and the command's stdout."""
    folder.mkdir()
    done = subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                           f"--callgrind-out-file={folder}/callgrind.%p",
                           "--trace-children-skip-by-arg=*warm import serve*", *argv],
                          input=payload, capture_output=True, text=True, cwd=cwd, env=env, timeout=900)
    total, files = 0, sorted(folder.glob("callgrind.*"))
    for path in files:
        for line in path.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                total += int(line.split()[1])
                break
    return total, len(files), done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", choices=["claude-code", "codex", "gemini"], default="claude-code")
    parser.add_argument("--worker", action="store_true", help="keep a warm worker alive while counting")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="statewise-session-instructions-") as temporary:
        root = Path(temporary)
        env = {**os.environ, "STATEWISE_CACHE_DIR": str(root / "cache"), "GIT_CONFIG_NOSYSTEM": "1",
               "PYTHONPYCACHEPREFIX": str(root / "pycache"), "STATEWISE_RUNTIME_DIR": str(root / "warm")}
        env.pop("STATEWISE_STORE", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        work, hooks = hook_speed._world(root, options.agent, env)
        commands = {event: groups[-1]["hooks"][0]["command"] for event, groups in hooks.items()}
        pre = commands["PreToolUse" if "PreToolUse" in commands else "BeforeTool"]
        start = ["/bin/sh", "-c", commands["SessionStart"]]
        session = json.dumps({"session_id": "count", "cwd": str(work), "hook_event_name": "SessionStart",
                              "source": "startup"})
        push = hook_speed._payloads(options.agent, work)["git push origin feature"][2]

        def run(command: list[str], payload: str) -> None:
            subprocess.run(command, input=payload, capture_output=True, text=True, cwd=work, env=env, timeout=600)

        run(start, session)  # the full path: the note
        run(["/bin/sh", "-c", pre], push)  # a guarded call records what it verified; a worker starts
        hook_speed._await_listening(root / "warm")
        for _ in range(3):  # the records changed: the note again; bytecode caches written
            run(start, session)
        if not options.worker:
            hook_speed._end_worker(root / "warm")
            env["STATEWISE_NO_WARM"] = "1"  # none in or beside the counted processes
        rows = [("python -c pass", [sys.executable, "-c", "pass"], None)]
        rows.append(("session start, nothing changed", start, session))
        counts: dict[str, tuple[int, int, str]] = {}
        for name, command, payload in rows:
            counts[name] = _instructions(root / f"count-{len(counts)}", command, payload, work, env)
        for note_file in (root / "cache" / "session-notes").glob("*.json"):
            note = json.loads(note_file.read_text())
            note["created"] -= 3600
            note_file.write_text(json.dumps(note))
        later = time.time() + 3600
        os.utime(work / ".statewise" / "store.db", (later, later))
        for name in ("session start, an hour later, store written", "session start after that"):
            counts[name] = _instructions(root / f"count-{len(counts)}", start, session, work, env)
        if options.worker:
            hook_speed._end_worker(root / "warm")
    base = counts["python -c pass"][0]
    load = os.getloadavg()
    print(f"instructions (callgrind, every process of the command), {options.agent}, "
          f"{'a warm worker alive' if options.worker else 'no warm worker'}, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for name, (total, processes, stdout) in counts.items():
        print(f"{name:45} {total:>14,} {total / base:6.2f} x pass  ({processes} processes)  {stdout[:50]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
