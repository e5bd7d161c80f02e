"""The hook process's front door: cheap calls decided before the heavy imports, the rest bounded
by one deadline.

An agent runs a hook on every tool call, so a guard that costs seconds per ``git status`` gets
uninstalled. This module imports only the standard library. It settles the calls that cannot
need a check (a plainly read-only command, a tool StateWise does not guard, a finished command
none of the contract's observation rules could match) in a few milliseconds, and hands every
other call to :func:`statewise.integrations.hooks.run_hook` in a worker thread, answering for it
when the deadline passes: before a tool runs that answer is a block, never a pass.

The read-only table here is deliberately small and strict: words made of plain characters (no
quoting, expansion, redirection, globbing or command separators), a program named without a
path, and only the options listed. Anything else goes through the full normalizer, and a test
checks every entry against it, so this table can only ever say less than the normalizer does.

The wrapper that ``statewise install`` writes (see :mod:`statewise.integrations.install`) adds
the outside half: a missing interpreter, a crash, a kill or output that is not a decision
becomes a block there.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path

__all__ = ["READ_ONLY", "fast_decision", "main"]

#: Events as each client names them -> the hook's event ("pre", "post" or "session").
EVENTS = {
    "PreToolUse": "pre", "BeforeTool": "pre",
    "PostToolUse": "post", "PostToolUseFailure": "post", "AfterTool": "post",
    "SessionStart": "session",
}

#: The tools that run shell commands, per agent (kept equal to hooks.AGENT_TOOLS by a test).
SHELL_TOOLS = {
    "claude-code": frozenset({"Bash"}),
    "codex": frozenset({"Bash", "exec_command"}),  # Codex 0.171 sends exec_command calls as Bash
    "gemini": frozenset({"run_shell_command"}),
}

_PLAIN_COMMAND = re.compile(r"[A-Za-z0-9_./:=@%+,^~\- ]+")
_NUMBER = re.compile(r"[0-9]+")

# Option tables. ``flags``: options that take no value; ``valued``: options whose value is the
# next word (or after '='); ``bundles``: letters that may be combined after one '-';
# ``positional``: whether operands (paths, revisions) are allowed.
_LS = {"bundles": "1aAbBcdFgGhHiklLmnNopqQrRsStuUvxXZ", "flags": {"--color", "--color=auto", "--color=never",
       "--all", "--almost-all", "--human-readable", "--long"}, "positional": True}
_CAT = {"bundles": "AbeEnstTuv", "positional": True}
_HEAD = {"bundles": "qv", "valued": {"-n", "-c", "--lines", "--bytes"}, "numeric_short": True, "positional": True}
_WC = {"bundles": "clmwL", "flags": {"--lines", "--words", "--bytes", "--chars"}, "positional": True}
_GREP = {"bundles": "cEFGHhiIlLnoqrRsvwxz", "valued": {"-e", "-m", "-A", "-B", "-C", "--include", "--exclude"},
         "flags": {"--color", "--color=auto", "--color=never", "--line-number", "--recursive", "--ignore-case",
                   "--files-with-matches", "--count", "--fixed-strings", "--extended-regexp", "--word-regexp"},
         "positional": True}
_RG = {"bundles": "cFiHlLnNsSuvwx", "valued": {"-e", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "--glob", "--type",
                                                "--max-count"},
       "flags": {"--files", "--hidden", "--no-ignore", "--count", "--line-number", "--no-heading", "--smart-case",
                 "--ignore-case", "--fixed-strings", "--word-regexp", "--files-with-matches", "--json",
                 "--color=never", "--color=auto", "--vimgrep"}, "positional": True}
_NOTHING = {"positional": False}
_PATHS = {"positional": True}

#: git subcommands (without global options such as -C or -c) that read only, with their options.
_GIT = {
    "status": {"bundles": "sbvu", "flags": {"--short", "--branch", "--porcelain", "--porcelain=v1", "--porcelain=v2",
                                             "--long", "--untracked-files=no", "--untracked-files=normal",
                                             "--untracked-files=all", "-uno", "-unormal", "-uall", "--ignored",
                                             "--show-stash", "--ahead-behind"}, "positional": True},
    "diff": {"bundles": "w", "valued": {"-U"}, "flags": {"--stat", "--cached", "--staged", "--name-only",
                                                           "--name-status", "--shortstat", "--numstat", "--check",
                                                           "--color", "--no-color", "--no-ext-diff", "--word-diff",
                                                           "--"}, "positional": True},
    "log": {"bundles": "p", "valued": {"-n", "--max-count"}, "numeric_short": True,
            "flags": {"--oneline", "--graph", "--decorate", "--stat", "--all", "--no-color", "--reverse",
                      "--first-parent", "--merges", "--no-merges", "--name-only", "--name-status", "--"},
            "positional": True},
    "show": {"bundles": "s", "flags": {"--stat", "--name-only", "--name-status", "--oneline", "--no-patch",
                                        "--no-color", "--"}, "positional": True},
    "branch": {"bundles": "arv", "flags": {"--show-current", "--list", "--all", "--remotes", "-vv",
                                            "--verbose"}, "positional": False},
    "rev-parse": {"flags": {"--show-toplevel", "--abbrev-ref", "--short", "--git-dir", "--is-inside-work-tree",
                            "--show-prefix", "--symbolic-full-name", "--verify", "--quiet"}, "positional": True},
    "remote": {"bundles": "v", "flags": {"--verbose"}, "positional": False},
    "ls-files": {"flags": {"--others", "--cached", "--modified", "--deleted", "--exclude-standard", "-o", "-c",
                           "-m", "-d", "--"}, "positional": True},
    "describe": {"flags": {"--tags", "--always", "--abbrev=0", "--dirty"}, "positional": True},
    "blame": {"bundles": "ws", "valued": {"-L"}, "positional": True},
}

#: Programs that only read, with their options; values are option tables as above.
READ_ONLY: dict[str, dict[str, object]] = {
    "ls": _LS, "cat": _CAT, "head": _HEAD, "tail": _HEAD, "wc": _WC, "grep": _GREP, "rg": _RG,
    "pwd": _NOTHING, "whoami": _NOTHING, "echo": _PATHS, "which": _PATHS, "true": _NOTHING, "stat": _PATHS,
    "file": _PATHS, "du": {"bundles": "shac", "positional": True}, "tree": {"bundles": "adfL", "positional": True},
}


def _options_fit(words: list[str], table: dict[str, object]) -> bool:
    flags = table.get("flags", set())
    valued = table.get("valued", set())
    bundles = str(table.get("bundles", ""))
    positional = bool(table.get("positional"))
    assert isinstance(flags, set) and isinstance(valued, set)
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word in flags:
            continue
        if word in valued:
            if index >= len(words):
                return False
            index += 1
            continue
        if word.startswith("--") and word.partition("=")[0] in valued:
            continue
        if word.startswith("-") and len(word) > 1:
            body = word[1:]
            if table.get("numeric_short") and _NUMBER.fullmatch(body):
                continue
            if bundles and all(letter in bundles for letter in body):
                continue
            return False
        if not positional:
            return False
    return True


def fast_decision(command: str) -> bool:
    """True when ``command`` is proven read-only by the table alone (no check needed)."""
    if not _PLAIN_COMMAND.fullmatch(command):
        return False
    words = command.split()
    if not words or any(word.startswith("~") for word in words):  # ~ expands only at a word's start
        return False
    program, rest = words[0], words[1:]
    if program == "git":
        if not rest or rest[0] not in _GIT:
            return False
        return _options_fit(rest[1:], _GIT[rest[0]])
    if program in ("python", "python3", "node", "npm", "uv", "cargo", "go") and rest in (["--version"], ["-V"],
                                                                                         ["-v"], ["version"]):
        return True
    table = READ_ONLY.get(program)
    return table is not None and _options_fit(rest, table)


# --- the observation index: which finished commands could reveal a fact ---------------------


def cache_dir() -> Path:
    """Where StateWise keeps derived, disposable files (``$STATEWISE_CACHE_DIR``, else XDG)."""
    explicit = os.environ.get("STATEWISE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "statewise"


def builtin_contract_path() -> Path:
    return Path(__file__).resolve().parent.parent / "contracts" / "coding.yaml"


def contract_digest(contract_path: str | None) -> str | None:
    """The content hash that keys the observation index, or None if the file cannot be read."""
    import hashlib  # here, not at the top: loading OpenSSL costs the fast path ~20 ms

    try:
        data = Path(contract_path).read_bytes() if contract_path else builtin_contract_path().read_bytes()
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest()


def _index_path(digest: str) -> Path:
    return cache_dir() / f"observation-index-{digest[:32]}.json"


def write_observation_index(digest: str, command_patterns: list[str]) -> None:
    """Remember the contract's observation command patterns (best effort, written atomically)."""
    if os.environ.get("STATEWISE_NO_CACHE"):
        return
    _write_json(_index_path(digest), {"digest": digest, "command_patterns": command_patterns})


def _write_json(path: Path, data: object) -> None:
    """Write a cache file atomically, best effort: a cache that cannot be written costs time only."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass


def _could_observe(command: str, digest: str | None) -> bool:
    """False only when the cached index proves no observation rule matches ``command``."""
    if digest is None or os.environ.get("STATEWISE_NO_CACHE"):
        return True
    try:
        index = json.loads(_index_path(digest).read_text(encoding="utf-8"))
        if index.get("digest") != digest:
            return True
        return any(re.search(pattern, command.strip()) for pattern in index["command_patterns"])
    except (OSError, ValueError, KeyError, TypeError, re.error):
        return True


# --- the session note: what SessionStart said, while nothing it depends on changed ----------

#: How long a session note may be reused at most, even when nothing it watched changed (the
#: live workspace it was checked against can change without touching a watched file).
SESSION_NOTE_SECONDS = 600


def _stat(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_size]


def _session_note_path(workspace: str) -> Path:
    import hashlib  # here, not at the top: loading OpenSSL costs the fast path ~20 ms

    return cache_dir() / "session-notes" / f"{hashlib.sha256(workspace.encode()).hexdigest()[:32]}.json"


def write_session_note(workspace: str, watched: list[str], stdout: str, digest: str | None) -> None:
    """Remember a SessionStart answer with the state of every file it depends on (the memory
    files, their folders, the store); best effort, written atomically."""
    if os.environ.get("STATEWISE_NO_CACHE"):
        return
    note = {"workspace": workspace, "digest": digest, "created": time.time(), "stdout": stdout,
            "watched": {name: _stat(name) for name in sorted(set(watched))}}
    _write_json(_session_note_path(workspace), note)


def _session_note(workspace: str, contract_path: str | None) -> str | None:
    """The remembered SessionStart answer, if it is young and nothing it watched changed."""
    if os.environ.get("STATEWISE_NO_CACHE"):
        return None
    try:
        note = json.loads(_session_note_path(workspace).read_text(encoding="utf-8"))
        if note.get("workspace") != workspace or note.get("digest") != contract_digest(contract_path):
            return None
        if not 0 <= time.time() - float(note["created"]) <= SESSION_NOTE_SECONDS:
            return None
        if any(_stat(name) != state for name, state in note["watched"].items()):
            return None
        stdout = note["stdout"]
        return stdout if isinstance(stdout, str) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


# --- the entry point -----------------------------------------------------------------------


def _event(agent_event: str, data: object) -> str:
    named = data.get("hook_event_name") if isinstance(data, dict) else None
    return EVENTS.get(named, agent_event) if isinstance(named, str) else agent_event


def _shell_command(agent: str, data: object) -> str | None:
    if not isinstance(data, dict) or data.get("tool_name") not in SHELL_TOOLS.get(agent, ()):
        return None
    tool_input = data.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return command if isinstance(command, str) else None


def _project_settings(cwd: object) -> bool:
    """Whether a ``.statewise/config.toml`` above ``cwd`` may choose the contract or store, in
    which case the caches keyed by the built-in contract prove nothing."""
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        return False
    directory = os.path.realpath(cwd)
    while True:
        if os.path.isfile(os.path.join(directory, ".statewise", "config.toml")):
            return True
        parent = os.path.dirname(directory)
        if parent == directory:
            return False
        directory = parent


def quick_outcome(agent: str, event: str, raw: str, contract_path: str | None) -> str | None:
    """The hook's stdout when the call can be settled without the guard, else None."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None  # the full path names what is wrong, and blocks
    event = _event(event, data)
    if event != "pre" and contract_path is None and isinstance(data, dict) and _project_settings(data.get("cwd")):
        return None
    if event == "session":
        cwd = data.get("cwd") if isinstance(data, dict) else None
        return _session_note(os.path.realpath(cwd), contract_path) if isinstance(cwd, str) and cwd else None
    if event == "pre":
        command = _shell_command(agent, data)
        return "{}" if command is not None and fast_decision(command.strip()) else None
    if event == "post":
        if not isinstance(data, dict) or data.get("tool_name") not in SHELL_TOOLS.get(agent, ()):
            return "{}"  # only shell output is matched against observation rules
        command = _shell_command(agent, data)
        if command is not None and not _could_observe(command, contract_digest(contract_path)):
            return "{}"
    return None


def _parse_arguments(argv: list[str]) -> dict[str, str | None]:
    usage = ("usage: python -m statewise.integrations.hook_entry AGENT [pre|post|session] [--store LOCATION] "
             "[--contract FILE] [--on-pass defer|allow] [--deadline SECONDS]")
    options: dict[str, str | None] = {"store": None, "contract": None, "on-pass": None, "deadline": "20"}
    positional: list[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        if word.startswith("--") and word[2:] in options:
            if index + 1 >= len(argv):
                raise SystemExit(f"{usage}\n{word} needs a value")
            options[word[2:]] = argv[index + 1]
            index += 2
            continue
        positional.append(word)
        index += 1
    if not positional or len(positional) > 2:
        raise SystemExit(usage)
    options["agent"] = positional[0]
    options["event"] = positional[1] if len(positional) == 2 else "pre"
    return options


def _emit(stdout: str, stderr: str, code: int) -> None:
    sys.stdout.write(stdout + "\n")
    if stderr:
        sys.stderr.write(stderr.replace("\n", " ") + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the worker thread may still be waiting on a verifier: do not wait for it


def main(argv: list[str] | None = None) -> None:
    """Run one hook call: read the agent's JSON on stdin, print the decision, exit."""
    started = time.monotonic()
    options = _parse_arguments(list(sys.argv[1:] if argv is None else argv))
    agent, event = str(options["agent"]), str(options["event"])
    try:
        deadline = max(0.5, float(options["deadline"] or 20))
    except ValueError:
        deadline = 20.0
    raw = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    quick = quick_outcome(agent, event, raw, options["contract"])
    if quick is not None:
        _emit(quick, "", 0)

    result: list[tuple[str, str, int]] = []

    def work() -> None:
        from statewise.integrations.hooks import run_hook

        outcome = run_hook(agent, raw, event=event, store_location=options["store"],
                           contract_path=options["contract"], on_pass=options["on-pass"])
        result.append((outcome.stdout, outcome.stderr, outcome.exit_code))

    worker = threading.Thread(target=work, name="statewise-hook", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - (time.monotonic() - started)))
    if result:
        _emit(*result[0])
    if worker.is_alive():
        reason = (f"StateWise could not finish checking in time ({deadline:g} s); the call was not run. "
                  "Run `statewise doctor` to see what is slow.")
    else:  # run_hook never raises, but a thread can still die (MemoryError, a bug in the import)
        reason = "StateWise failed while checking this call; denied to be safe. Run `statewise doctor`."
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if _event(event, data) != "pre":
        _emit("{}", reason, 0)
    _emit("", reason, 2)  # exit 2 with the reason on stderr is a block in all three clients


if __name__ == "__main__":
    main()
