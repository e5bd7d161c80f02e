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

The wrapper that ``statewise install`` writes (see :mod:`statewise.integrations.install`) runs
this module in an interpreter started with ``-I -S`` (no site-packages scan, no ``.pth`` files,
no environment, no working directory on ``sys.path``), so the fast path imports nothing but
``os`` beyond what the interpreter loads anyway: JSON is read with the C scanner behind
:mod:`json` (:func:`loads`), and the observation index is checked with literals before any
regular expression is compiled. The slow path asks the warm worker
(:mod:`statewise.integrations.warm`) first, whose fork has the guard imported already; without
one it loads ``site`` itself, then the guard, and starts a worker for the next calls. A missing
interpreter, a crash or a kill becomes a block in the wrapper and the settings command; output
that is not a decision becomes one in :func:`_emit`.
"""

from __future__ import annotations

import posix  # built in; `os` (with posixpath and collections.abc) is imported where it is needed,
import sys  # which a pre-tool call never is
import time

from statewise.integrations.hook_files import (
    EVENTS,
    READ_TOOLS,
    SECRET_HINTS,
    SHELL_TOOLS,
    contract_digest,
    could_observe,
    environ,
    exists,
    loads,
    parent_folder,
    realpath,
    session_note,
)

__all__ = ["READ_ONLY", "fast_decision", "main"]

#: The characters a command may hold to be settled by the table (no quoting, expansion,
#: redirection, globbing or separators); a set, not a regular expression: importing ``re``
#: costs the fast path more than the whole decision.
_PLAIN_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=@%+,^~- ")
_DIGITS = frozenset("0123456789")

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
_NOTHING: dict[str, object] = {"positional": False}
_PATHS: dict[str, object] = {"positional": True}

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
            if table.get("numeric_short") and body and _DIGITS.issuperset(body):
                continue
            if bundles and all(letter in bundles for letter in body):
                continue
            return False
        if not positional:
            return False
    return True


def fast_decision(command: str) -> bool:
    """True when ``command`` is proven read-only by the table alone (no check needed) and names
    nothing that may be a secret."""
    if not command or not _PLAIN_CHARACTERS.issuperset(command):
        return False
    if any(hint in command for hint in SECRET_HINTS):
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
    return _in_folder_or_above(cwd, ".statewise", "config.toml")


def _in_folder_or_above(cwd: str, *relative: str) -> bool:
    """Whether ``relative`` names a file (or folder) in ``cwd`` (absolute) or in a folder above
    it; without importing :mod:`os`, which a finished command's check otherwise would for this alone."""
    directory, tail = realpath(cwd), "/".join(relative)
    while True:
        if exists(f"{directory.rstrip('/')}/{tail}"):
            return True
        parent = parent_folder(directory)
        if parent == directory:
            return False
        directory = parent


def quick_outcome(agent: str, event: str, raw: str, contract_path: str | None) -> str | None:
    """The hook's stdout when the call can be settled without the guard, else None."""
    try:
        data = loads(raw)
    except (ValueError, RecursionError):
        return None  # the full path names what is wrong, and blocks
    return _quick(agent, _event(event, data), data, contract_path)


def _has_store(cwd: object) -> bool:
    """Whether a store may hold records for ``cwd``: ``$STATEWISE_STORE``, or a
    ``.statewise/store.db`` in it or a folder above it (where the default store lives)."""
    if environ("STATEWISE_STORE"):
        return True
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        return True  # the full path names what is wrong
    return _in_folder_or_above(cwd, ".statewise", "store.db")


def _quick(agent: str, event: str, data: object, contract_path: str | None, store: str | None = None) -> str | None:
    if event != "pre" and contract_path is None and isinstance(data, dict) and _project_settings(data.get("cwd")):
        return None
    if event == "session":
        cwd = data.get("cwd") if isinstance(data, dict) else None
        if not isinstance(cwd, str) or not cwd:
            return None
        import os

        return session_note(os.path.realpath(cwd), agent, contract_path)
    if event in ("prompt", "stop"):
        # Nothing to check before the model plans, or as it stops, where this workspace has no
        # store; and a stop the hook already continued once is never continued again.
        if isinstance(data, dict) and data.get("stop_hook_active") is True:
            return "{}"
        cwd = data.get("cwd") if isinstance(data, dict) else None
        if store is None and not _has_store(cwd):
            return "{}"
        session = data.get("session_id") if isinstance(data, dict) else None
        if event == "prompt" and isinstance(cwd, str) and isinstance(session, str) and session:
            import os

            # The session was told everything and nothing the check reads has changed since
            # (statewise.integrations.prompt.remember_quiet_prompt).
            return session_note(os.path.realpath(cwd), f"{agent}\0prompt\0{session}", contract_path)
        return None
    if event == "pre":
        if isinstance(data, dict) and data.get("tool_name") in READ_TOOLS.get(agent, ()):
            # A read is hooked only for secrets: one whose input names nothing like one passes.
            text = str(data.get("tool_input"))
            return None if any(hint in text for hint in SECRET_HINTS) else "{}"
        command = _shell_command(agent, data)
        return "{}" if command is not None and fast_decision(command.strip()) else None
    if event == "post":
        if not isinstance(data, dict) or data.get("tool_name") not in SHELL_TOOLS.get(agent, ()):
            return "{}"  # only shell output is matched against observation rules
        command = _shell_command(agent, data)
        if command is not None and not could_observe(command, contract_digest(contract_path)):
            return "{}"
    return None


def _parse_arguments(argv: list[str]) -> dict[str, str | None]:
    usage = ("usage: python -m statewise.integrations.hook_entry AGENT [pre|post|session|prompt|stop] "
             "[--store LOCATION] [--contract FILE] [--on-pass defer|allow] [--deadline SECONDS]")
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


#: Where the answer goes. The slow path points descriptors 1 and 2 at /dev/null first
#: (:func:`_quiet`) and keeps copies here, so that nothing a library prints can reach the client
#: around the decision (Codex shows the hook's stderr to the model as the reason).
_answer_fds = {"out": 1, "err": 2}


def _quiet() -> None:
    import os

    try:
        out, err = os.dup(1), os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)
    except OSError:
        return
    _answer_fds.update(out=out, err=err)


def _write(fd: int, text: str) -> None:
    data = text.encode("utf-8", errors="backslashreplace")
    while data:
        data = data[posix.write(fd, data):]


def _emit(stdout: str, stderr: str, code: int, event: str = "pre") -> None:
    """Write the answer and end the process. An answer that is not a decision (an exit status
    other than 0 and 2, or a stdout that is not a JSON object, unless exit 2 names a reason)
    is turned into a block before a tool runs, and into nothing after, as the wrapper for a
    foreign program does in the shell."""
    text, reason = stdout.strip(), " ".join(stderr.split())
    problem = None
    if code not in (0, 2):
        problem = f"the hook failed (exit {code}) {reason}".rstrip()
    elif not (text.startswith("{") and text.endswith("}")) and not (code == 2 and reason):
        problem = f"the hook printed no decision {reason}".rstrip()
    if problem is not None:
        if event == "pre":
            text, reason, code = "", f"StateWise blocked this call: {problem}", 2
        else:
            text, reason, code = "{}", "", 0
    try:
        if text:
            _write(_answer_fds["out"], text + "\n")
        if reason:
            _write(_answer_fds["err"], reason + "\n")
    finally:
        posix._exit(code)  # the worker thread may still be waiting on a verifier: do not wait for it


def _read_input(event: str) -> str:
    """The client's JSON from stdin; over :data:`~statewise.limits.MAX_HOOK_INPUT_BYTES` the call
    is answered at once without parsing it: blocked before a tool runs, nothing after."""
    from statewise.limits import MAX_HOOK_INPUT_BYTES

    data = sys.stdin.buffer.read(MAX_HOOK_INPUT_BYTES + 1)
    if len(data) <= MAX_HOOK_INPUT_BYTES:
        return data.decode("utf-8", errors="replace")
    # Read the rest, only to name its size and so the client never writes into a closed pipe
    # (which a client may count as a hook failure, and run the tool); at most one second.
    size, until, source = len(data), time.monotonic() + 1.0, "the hook's JSON on stdin"
    read = getattr(sys.stdin.buffer, "read1", sys.stdin.buffer.read)  # what arrived, without waiting for more
    while True:
        chunk = read(1 << 20)
        if not chunk:
            break
        size += len(chunk)
        if time.monotonic() > until:
            source += " (still arriving after 1 s; counted so far)"
            break
    from statewise.errors import InputTooLargeError

    error = InputTooLargeError(source, size, MAX_HOOK_INPUT_BYTES, "the JSON a client sends a hook", unread=False)
    reason = f"StateWise blocked this call: {error}"
    if event != "pre":
        _emit("{}", reason, 0, event)
    _emit("", reason, 2, event)
    raise AssertionError("unreachable: _emit ends the process")


def main(argv: list[str] | None = None) -> None:
    """Run one hook call: read the agent's JSON on stdin, print the decision, exit."""
    started = time.monotonic()
    options = _parse_arguments(list(sys.argv[1:] if argv is None else argv))
    agent, event = str(options["agent"]), str(options["event"])
    try:
        deadline = max(0.5, float(options["deadline"] or 20))
    except ValueError:
        deadline = 20.0
    raw = _read_input(event)
    try:
        data = loads(raw)
    except (ValueError, RecursionError):
        data = None  # the full path names what is wrong, and blocks
    else:
        event = _event(event, data)
        if event == "session":
            from statewise.integrations.warm import prepare

            # First, to give it the longest start: the session's first guarded call then finds
            # the warm worker ready, or starting (and waits for it).
            prepare()
        quick = _quick(agent, event, data, options["contract"], options["store"])
        if quick is not None:
            _emit(quick, "", 0, event)

    _quiet()
    import threading

    result: list[tuple[str, str, int]] = []

    def work() -> None:
        # A warm worker (statewise.integrations.warm) answers in a fork that has the guard
        # imported already; without one (the first call, another code version, any failure)
        # this process checks the call itself, and one is started for the next calls.
        from statewise.integrations.warm import ask

        answer = ask(agent, event, raw, options, started + deadline)
        if answer is not None:
            result.append(answer)
            return
        import gc

        # The imports below create a few hundred thousand objects (modules, classes, schemas)
        # that live as long as the process; the cyclic collector would walk them over and
        # over (about 80 collections, 15-20 ms). It is paused for the imports, and what they
        # made is frozen out of its reach (gc.freeze) before it runs again for the check.
        collecting = gc.isenabled()
        gc.disable()
        try:
            if sys.flags.no_site:
                # The wrapper starts the interpreter with -S for the fast path; the guard needs
                # the installed dependencies (pydantic, the YAML and CEL packages).
                import site

                site.main()
            from statewise.integrations.hooks import run_hook
        finally:
            gc.freeze()
            if collecting:
                gc.enable()
        from statewise.integrations.warm import fork_worker

        fork_worker()  # when ask() found no worker alive: it starts from these imports
        outcome = run_hook(agent, raw, event=event, store_location=options["store"],
                           contract_path=options["contract"], on_pass=options["on-pass"])
        result.append((outcome.stdout, outcome.stderr, outcome.exit_code))

    worker = threading.Thread(target=work, name="statewise-hook", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - (time.monotonic() - started)))
    if result:
        _emit(*result[0], event)
    if worker.is_alive():
        reason = (f"StateWise could not finish checking in time ({deadline:g} s); the call was not run. "
                  "Run `statewise doctor` to see what is slow.")
    else:  # run_hook never raises, but a thread can still die (MemoryError, a bug in the import)
        reason = "StateWise failed while checking this call; denied to be safe. Run `statewise doctor`."
    if event != "pre":
        _emit("{}", reason, 0, event)
    _emit("", reason, 2, event)  # exit 2 with the reason on stderr is a block in all three clients


if __name__ == "__main__":
    main()
