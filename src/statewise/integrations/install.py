"""Add StateWise's hooks to an agent's settings file, and take them out again.

What ``statewise install`` writes is built to fail closed in the client, outside the Python
process, where the clients themselves fail open (a hook that is not found, crashes or runs past
its timeout lets the tool run in Claude Code and Codex, and in Gemini CLI on a crash or a
timeout):

- a wrapper, ``.statewise/bin/statewise-hook`` at the project root (or ``~/.statewise/bin/``
  for ``--user``), specific to this machine and kept out of git. For StateWise's own hook it
  is one file, a POSIX shell script and a Python program at once: the shell half starts the
  interpreter that installed StateWise (by absolute path, with ``-I -S``: no site-packages
  scan) with a watchdog beside it, so a stall even before Python runs is a block at the
  wrapper's deadline; the Python half puts the installed package's directory on its path and
  runs the hook. A crash, StateWise missing from that directory, a missing interpreter or an
  answer that is not a decision becomes a block: exit status 2 with a one-line reason on
  stderr, which all three clients honour (Gemini turns a plain-text stderr with an exit status
  other than 0 and 1 into ``decision: deny``). For any other program (``--executable``) it is
  a POSIX shell script that captures and checks the program's output, with a watchdog;
- settings entries whose commands are portable in a project's settings (the file a team
  commits): a loop of shell built-ins finds the wrapper from the client's project folder
  (``$CLAUDE_PROJECT_DIR``, ``$GEMINI_PROJECT_DIR``; Codex: the hook's working folder)
  upwards, and the guard's command turns every other exit status (no wrapper on this machine,
  a kill) into that same block (``|| … exit 2``), saying what to install when there is no
  wrapper. The user's settings name the wrapper by absolute path;
- timeouts in each client's unit (seconds for Claude Code and Codex, milliseconds for Gemini
  CLI), with the wrapper's deadline and the hook's own below them.

Installing is idempotent and keeps every hook already there; uninstalling removes only
StateWise's entries, and the events and files that held nothing else. A settings file that is
not valid JSON is reported and left untouched; files are written to a temporary name and
renamed (keeping the file's mode), so a crash never leaves a half-written settings file.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.errors import InputError

if TYPE_CHECKING:
    from statewise.contract import Contract

__all__ = [
    "AGENTS",
    "DEFAULT_TIMEOUT",
    "RULE_CHARACTERS",
    "AgentHooks",
    "command_wrapper",
    "if_rule",
    "install_hooks",
    "installed_capture_gaps",
    "our_entries",
    "post_filter_command",
    "post_filter_literals",
    "post_filter_parts",
    "post_literals",
    "post_tool_literals",
    "project_root",
    "rule_literal",
    "settings_path",
    "strip_locate",
    "uncovered_observation_rules",
    "uninstall_hooks",
    "wrapper_path",
]

#: Every command StateWise installs names this, which is how uninstall finds its own.
WRAPPER_NAME = "statewise-hook"
#: Where the wrapper lives below a project's (or the home) folder.
WRAPPER_RELATIVE = f".statewise/bin/{WRAPPER_NAME}"
#: Older installs wrote bare ``statewise hook`` commands; uninstall removes those too.
LEGACY_PREFIX = "statewise hook"
#: The client's timeout for StateWise's hook, in seconds, unless ``--timeout`` says otherwise.
DEFAULT_TIMEOUT = 30
#: Seconds kept between the client's timeout and the wrapper's deadline, and between that and
#: the hook's own deadline (interpreter start-up, writing the answer).
WRAPPER_MARGIN, HOOK_MARGIN = 4, 3


@dataclass(frozen=True, slots=True)
class AgentHooks:
    """Where an agent keeps its hooks, which events and tools StateWise listens to, and the
    unit of its hook timeout."""

    name: str
    project_file: str  # relative to the project root
    user_file: str  # relative to the home directory
    pre_event: str
    post_events: tuple[str, ...]
    session_event: str | None
    pre_matcher: str
    post_matcher: str
    timeout_scale: int  # client timeout units per second: 1 for seconds, 1000 for milliseconds
    if_filters: bool = False  # the client can skip spawning a hook by an `if` rule (Claude Code)
    prompt_event: str | None = None  # fired before the model plans a turn (statewise.integrations.prompt)
    stop_event: str | None = None  # fired as the agent ends its turn (statewise.integrations.stop)
    #: The variable the client sets to the project's folder when it runs a hook (None: Codex
    #: sets none and runs hooks in the session's folder, which may be below the project's top).
    project_dir_var: str | None = None

    def locate(self, event: str) -> str:
        """The start of every portable command: a loop of shell built-ins that finds the nearest
        folder holding the wrapper, from the client's project folder (else the hook's working
        folder) upwards, into ``$d``. Where there is none (a clone on a machine where
        ``statewise install`` never ran), the guard blocks the call with one line saying what
        to install (exit 2, which every client honours and hands the model as the reason), and
        the other events answer ``{}``: after a tool ran, or as a session starts or ends, there
        is nothing to block, a Stop answered with exit 2 would keep the agent going, and a
        prompt blocked that way ends ``codex exec``'s turn without a word (tests/e2e). The
        client's JSON is read first either way: a client whose write finds the hook gone gets
        a broken pipe, which Codex reports as a hook error instead of a block."""
        start = f"${{{self.project_dir_var}:-$PWD}}" if self.project_dir_var else "$PWD"
        if event == "pre":
            missing = (f"cat >/dev/null; echo \"StateWise blocked this call: StateWise is not set up on this machine for this project "
                       f"(no {WRAPPER_RELATIVE} in {start} or above); install StateWise (pip install statewise) "
                       f"and run: statewise install {self.name}\" >&2; exit 2")
        else:
            missing = "cat >/dev/null; echo '{}'; exit 0"
        return (f"d={start}; until [ -x \"$d/{WRAPPER_RELATIVE}\" ] || [ -z \"$d\" ]; do d=${{d%/*}}; done; "
                f"[ -n \"$d\" ] || {{ {missing}; }}; ")

    def invocation(self, wrapper: Path | None, event: str) -> str:
        """The call of the wrapper for ``event``: by absolute path (``wrapper``), or, for the
        portable commands a project's settings hold (None), through :meth:`locate`'s ``$d``."""
        named = shlex.quote(str(wrapper)) if wrapper is not None else f"\"$d/{WRAPPER_RELATIVE}\""
        return f"{named} {self.name} {event}"

    def command(self, wrapper: Path | None, event: str) -> str:
        """A whole hook command for ``event`` (without a post-tool filter)."""
        return (self.locate(event) if wrapper is None else "") + self.invocation(wrapper, event)

    def entries(self, wrapper: Path | None, timeout: int,
                post_literals: tuple[str, ...] | None = None) -> dict[str, list[dict[str, Any]]]:
        """The settings entries per event, for a wrapper at ``wrapper`` (None: the portable
        commands of a project's settings, which find the wrapper from the project's folder).

        ``post_literals`` (:func:`post_tool_literals`): the post-tool hook runs only for a call
        holding one of them. Where the client takes ``if`` rules (Claude Code) that is one hook
        per literal, spawned only for a command holding it (``"if": "Bash(*literal*)"``);
        elsewhere one hook whose command is a shell pre-filter on the client's whole JSON
        payload (:func:`post_filter_command`). None for one unconditional hook. The guard and
        the session hook are never filtered."""
        # If the wrapper itself is gone the shell says "not found" (127), which Claude Code and
        # Codex would take as "go ahead": turn every status but the wrapper's own block into one.
        # A portable command that finds no wrapper (a clone on a machine without StateWise, or
        # where `statewise install` never ran) says what to install.
        named = f"$d/{WRAPPER_RELATIVE}" if wrapper is None else shlex.quote(str(wrapper))
        failed = (f"echo \"StateWise hook wrapper {named} failed (exit $s); blocked to be safe; run: statewise doctor "
                  f"--agent {self.name}\" >&2")
        pre = f"{self.command(wrapper, 'pre')} || {{ s=$?; [ \"$s\" = 2 ] || {failed}; exit 2; }}"
        scaled = timeout * self.timeout_scale
        entries = {self.pre_event: [{"matcher": self.pre_matcher,
                                     "hooks": [{"type": "command", "command": pre, "timeout": scaled}]}]}
        invocation = self.invocation(wrapper, "post")
        post = {"type": "command", "command": self.command(wrapper, "post"), "timeout": scaled}
        for event in self.post_events:
            if post_literals is None:
                entries[event] = [{"matcher": self.post_matcher, "hooks": [post]}]
            elif self.if_filters:
                # One entry per rule: Claude Code keeps hooks with different `if`s apart and runs
                # every one that matches, so a command holding two literals is captured twice
                # (observe.capture makes the second write a confirmation).
                entries[event] = [{"matcher": self.post_matcher, "hooks": [{**post, "if": if_rule(literal)}]}
                                  for literal in post_literals]
            else:
                command = (self.locate("post") if wrapper is None else "") + post_filter_command(invocation, post_literals)
                entries[event] = [{"matcher": self.post_matcher, "hooks": [{**post, "command": command}]}]
        for named_event, kind in ((self.session_event, "session"), (self.prompt_event, "prompt"),
                                  (self.stop_event, "stop")):
            if named_event:
                entries[named_event] = [{"hooks": [{"type": "command", "command": self.command(wrapper, kind),
                                                    "timeout": scaled}]}]
        return entries


AGENTS = {
    "claude-code": AgentHooks(
        name="claude-code", project_file=".claude/settings.json", user_file=".claude/settings.json",
        pre_event="PreToolUse", post_events=("PostToolUse", "PostToolUseFailure"), session_event="SessionStart",
        pre_matcher="Bash|Write|Edit|NotebookEdit|Read", post_matcher="Bash", timeout_scale=1, if_filters=True,
        prompt_event="UserPromptSubmit", stop_event="Stop", project_dir_var="CLAUDE_PROJECT_DIR",
    ),
    "codex": AgentHooks(
        name="codex", project_file=".codex/hooks.json", user_file=".codex/hooks.json",
        pre_event="PreToolUse", post_events=("PostToolUse",), session_event="SessionStart",
        pre_matcher="Bash|apply_patch|write_stdin", post_matcher="Bash", timeout_scale=1,
        prompt_event="UserPromptSubmit", stop_event="Stop",  # codex-rs/hooks: the events' JSON schemas
    ),
    "gemini": AgentHooks(
        name="gemini", project_file=".gemini/settings.json", user_file=".gemini/settings.json",
        pre_event="BeforeTool", post_events=("AfterTool",), session_event="SessionStart",
        pre_matcher="run_shell_command|write_file|replace|read_file", post_matcher="run_shell_command", timeout_scale=1000,
        # Gemini CLI sets GEMINI_PROJECT_DIR in the hook's environment, and replaces a bare
        # `$GEMINI_PROJECT_DIR` in the command by the folder already shell-quoted: the braced
        # form is left to the shell (bundle 0.61: HookRunner.expandCommand).
        prompt_event="BeforeAgent", stop_event="AfterAgent", project_dir_var="GEMINI_PROJECT_DIR",
    ),
}


def _agent(name: str) -> AgentHooks:
    try:
        return AGENTS[name]
    except KeyError:
        raise InputError(f"unknown agent {name!r}; expected one of {', '.join(AGENTS)}") from None


def project_root(directory: str | Path | None = None) -> Path:
    """The git work tree's top containing ``directory`` (default: here), else ``directory``.

    Hooks belong at the root: an agent reads ``.claude/settings.json`` there, not in ``src/``."""
    base = Path(directory or os.getcwd()).resolve()
    try:
        done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=base, capture_output=True, text=True,
                              timeout=5, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return base
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else base


def settings_path(agent: str, *, project: str | Path | None = None, user: bool = False) -> Path:
    """The settings file for ``agent``: the project's (default, at its git root) or the user's."""
    spec = _agent(agent)
    if user:
        return Path.home() / spec.user_file
    return project_root(project) / spec.project_file


def wrapper_path(*, project: str | Path | None = None, user: bool = False) -> Path:
    """Where the fail-closed wrapper lives for a project (or for the user)."""
    base = Path.home() if user else project_root(project)
    return base / ".statewise" / "bin" / WRAPPER_NAME


#: The wrapper for a program other than StateWise's own hook (``--executable``), whose output
#: the shell captures and checks, with a watchdog process.
_WRAPPER = """#!/bin/sh
# StateWise hook wrapper, written by `statewise install`; `statewise doctor` checks it.
# Usage: statewise-hook AGENT pre|post|session|prompt|stop, with the client's JSON on stdin.
# It fails closed: a missing program, a crash, a signal, a run past {deadline} s or output that
# is not a JSON object becomes a block before a tool runs (exit 2, one-line reason on stderr),
# which Claude Code, Codex and Gemini CLI all honour. After a tool ran, nothing can be blocked.
program={program}
agent=$1 event=$2
[ "$#" -ge 2 ] && shift 2
block() {{
    if [ "$event" = pre ]; then
        printf 'StateWise blocked this call: %s\\n' "$1" >&2
        exit 2
    fi
    printf '{{}}\\n'
    exit 0
}}
[ -x "$program" ] || block "its program $program is missing or not executable; run: statewise install $agent"
if [ -n "${{PYTHONDONTWRITEBYTECODE:-}}" ]; then
    # Common in container images: every hook call would then recompile StateWise from source
    # (about a second). Keep the hook's own bytecode in StateWise's cache instead.
    unset PYTHONDONTWRITEBYTECODE
    PYTHONPYCACHEPREFIX="${{STATEWISE_CACHE_DIR:-${{XDG_CACHE_HOME:-$HOME/.cache}}/statewise}}/pycache"
    export PYTHONPYCACHEPREFIX
fi
tmp="${{TMPDIR:-/tmp}}/statewise-hook.$$"
mkdir -m 700 "$tmp" 2>/dev/null || block "no private temporary directory could be made at $tmp"
exec 3<&0
"$program" "$agent" "$event" --deadline {inner}{options} "$@" <&3 >"$tmp/out" 2>"$tmp/err" &
pid=$!
(
    sleeper=
    trap 'kill $sleeper 2>/dev/null; exit 0' TERM
    sleep {deadline} &
    sleeper=$!
    wait "$sleeper"
    : >"$tmp/late"
    kill -9 "$pid" 2>/dev/null
) </dev/null >/dev/null 2>&1 &
watchdog=$!
{{ wait "$pid"; }} 2>/dev/null  # no "Killed" from the shell: the reason must stay one line
status=$?
kill "$watchdog" 2>/dev/null
late=no
[ -e "$tmp/late" ] && late=yes
# The hook writes one line to each; shell built-ins read them (each fork costs the fast path).
out= err=
IFS= read -r out <"$tmp/out"
IFS= read -r err <"$tmp/err"
rm -rf "$tmp"
[ "$late" = yes ] && block "the check did not finish within {deadline} s"
case $status in
    0|2) ;;
    *) block "the hook failed (exit $status) ${{err}}" ;;
esac
case $out in
    \\{{*\\}}) ;;
    *) [ "$status" = 2 ] && [ -n "$err" ] && {{ printf '%s\\n' "$err" >&2; exit 2; }}
       block "the hook printed no decision ${{err}}" ;;
esac
printf '%s\\n' "$out"
[ -n "$err" ] && printf '%s\\n' "$err" >&2
exit $status
"""


#: The wrapper for StateWise's own hook: one file that is a POSIX shell script to /bin/sh and a
#: Python program to the interpreter it names (sh runs the lines inside the Python string after
#: a no-op ``:``; Python skips the string). The shell half is the alarm that holds from the
#: first instant: it starts the interpreter in the background with a watchdog beside it
#: (``sleep``, then ``kill -9``), and answers itself when the interpreter is missing, ends
#: abnormally or is killed at the deadline: a stall before Python runs (a hung file system, an
#: interpreter that never gets going) is a block, before the client's own timeout would let the
#: tool run. Only POSIX sh, ``sleep`` and ``kill`` are used (dash, bash as /bin/sh on macOS,
#: busybox): GNU ``timeout`` is not on macOS. The Python half is isolated from site-packages,
#: ``.pth`` files, the environment and the working directory; its ``alarm()`` and the hook's
#: own deadline answer a slow check before the watchdog fires, and its
#: :func:`~statewise.integrations.hook_entry._emit` refuses to print anything but a decision.
#: The settings command (``|| … exit 2``) turns a missing wrapper into the same block. The
#: shell half must hold no three single quotes in a row and only backslash escapes Python
#: knows (a test compiles the file with warnings as errors).
_PYTHON_WRAPPER = """#!/bin/sh
''':'
# StateWise hook wrapper, written by `statewise install` on this machine: it names this
# machine's Python, so it stays out of git (.statewise/.gitignore); `statewise doctor` checks it.
# Usage: statewise-hook AGENT pre|post|session|prompt|stop, with the client's JSON on stdin.
# It fails closed: a missing interpreter, a crash, a signal, a run past {deadline} s (the
# watchdog below kills the process, even one stalled before Python runs) or output that is not
# a JSON object becomes a block before a tool runs (exit 2, one-line reason on stderr), which
# Claude Code, Codex and Gemini CLI all honour. After a tool ran, nothing can be blocked.
python={python}
agent=${{1:-}} event=${{2:-}}
block() {{
    if [ "$event" = pre ]; then
        printf 'StateWise blocked this call: %s\\n' "$1" >&2
        exit 2
    fi
    printf '{{}}\\n'
    exit 0
}}
[ -x "$python" ] || {{ cat >/dev/null; block "the Python that installed StateWise here ($python) is gone; install StateWise on this machine and run: statewise install $agent"; }}
exec 3<&0
"$python" -IS "$0" "$@" <&3 3<&- &
pid=$!
(
    trap 'kill $sleeper 2>/dev/null; exit 0' TERM
    sleep {deadline} &
    sleeper=$!
    wait $sleeper && kill -9 $pid
) </dev/null >/dev/null 2>&1 3<&- &
watchdog=$!
{{ wait $pid; }} 2>/dev/null  # no "Killed" from the shell: the reason must stay one line
status=$?
kill $watchdog 2>/dev/null
case $status in
    0|2) exit $status ;;
    137|142) block "the hook did not answer within {deadline} s (or was killed); run: statewise doctor --agent $agent" ;;
esac
block "the hook ended abnormally (exit $status); run: statewise doctor --agent $agent"
'''
import sys

try:
    from _signal import alarm
except ImportError:
    from signal import alarm
alarm({deadline})
sys.path.append({package_dir!r})  # where `statewise install` found StateWise


def fail(what, error):
    # One line, whatever went wrong: Codex shows the hook's stderr to the model as the reason.
    if sys.argv[2:3] in (["post"], ["session"], ["prompt"], ["stop"]):  # no tool call to block
        print("{{}}")
        sys.exit(0)
    reason = " ".join(f"{{type(error).__name__}}: {{error}}".split())[:500]
    sys.stderr.write(f"StateWise blocked this call: {{what}} ({{reason}}); "
                     f"run: statewise doctor --agent {{' '.join(sys.argv[1:2])}}\\n")
    sys.exit(2)


try:
    from statewise.integrations.hook_entry import main
except BaseException as error:
    fail("StateWise cannot be loaded from " + {package_dir!r}, error)
try:
    main([*sys.argv[1:], "--deadline", "{inner}"{options}])
except BaseException as error:  # main() ends the process itself; reaching here is a failure
    fail("the hook failed", error)
"""


def package_directory() -> Path:
    """The directory that holds the ``statewise`` package this interpreter imports: site-packages
    for a wheel, the source tree's ``src`` for an editable install."""
    import statewise

    return Path(statewise.__file__).resolve().parent.parent


def render_wrapper(*, timeout: int, executable: str | Path | None = None, store: str | None = None,
                   contract: str | None = None, interpreter: str | Path | None = None,
                   package_dir: str | Path | None = None) -> str:
    """The wrapper script's text.

    By default it runs StateWise's hook entry (``statewise.integrations.hook_entry``) in
    ``interpreter`` (this one) with ``package_dir`` (this StateWise) on its path.
    ``executable`` replaces the hook with any program taking the same arguments (tests use it
    to stand in a crashing hook); since that program's output cannot be trusted, its wrapper
    is a shell script that captures and checks it, with a watchdog."""
    deadline = max(2, timeout - WRAPPER_MARGIN)
    inner = max(1, deadline - HOOK_MARGIN)
    if executable is None:
        python = str(Path(interpreter or sys.executable).absolute())
        options = ""
        if store:
            options += f", \"--store\", {store!r}"
        if contract:
            options += f", \"--contract\", {str(Path(contract).absolute())!r}"
        return _PYTHON_WRAPPER.format(python=shlex.quote(python), deadline=deadline, inner=inner,
                                      package_dir=str(package_dir or package_directory()), options=options)
    program = str(Path(executable).absolute())
    options = ""
    if store:
        options += f" --store {shlex.quote(store)}"
    if contract:
        options += f" --contract {shlex.quote(str(Path(contract).absolute()))}"
    return _WRAPPER.format(program=shlex.quote(program), deadline=deadline, inner=inner, options=options)


#: Characters a literal may keep in a Claude Code ``if`` rule. The client matches the rule
#: against each simple command's words joined by one space, after the shell's quoting is
#: undone, and reads ``*``, ``(``, ``)``, ``\\`` and a ``:*`` ending as rule syntax: a piece of
#: a literal made of these characters only reads the same in the command text and in those
#: words, whatever the quoting. (Any piece of a required literal is required too.)
RULE_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./@%+=,-")


def rule_literal(pattern: str) -> str | None:
    """The text a Claude Code ``if`` rule can look for so that the hook still runs for every
    command the observation pattern ``pattern`` matches: the longest run of plain characters
    (:data:`RULE_CHARACTERS`) in the literals every match contains
    (:func:`~statewise.integrations.hook_files.required_literals`), or None when there is none."""
    from statewise.integrations.hook_files import required_literals

    pieces: list[str] = []
    for literal in required_literals(pattern):
        piece = ""
        for character in literal + "\0":  # the NUL ends the last piece
            if character in RULE_CHARACTERS:
                piece += character
            elif piece:
                pieces.append(piece)
                piece = ""
    return max(pieces, key=len, default=None)


def post_tool_literals(contract_path: str | bool | None) -> tuple[str, ...] | None:
    """The texts the post-tool hooks filter on for the contract at ``contract_path`` (None: the
    built-in one): each distinct :func:`rule_literal` of its observation rules, in the
    contract's order. None (one unconditional hook) when a rule has no literal, when the
    contract cannot be read, when it has no observation rules, or when ``contract_path`` is
    False (the contract in effect cannot be known at install time): a capture is never lost to
    a filter. Claude Code's ``if`` rules (:func:`if_rule`) and the shell pre-filter of the other
    clients (:func:`post_filter_command`) are both made from these."""
    if contract_path is False:
        return None
    from statewise.contract import builtin_contract, load_contract

    try:
        contract = load_contract(contract_path) if isinstance(contract_path, str) else builtin_contract()
    except Exception:  # noqa: BLE001 - a contract that does not load proves nothing: filter nothing
        return None
    literals: list[str] = []
    for rule in contract.observations:
        literal = rule_literal(rule.command)
        if literal is None:
            return None
        if literal not in literals:
            literals.append(literal)
    return tuple(literals) or None


def if_rule(literal: str) -> str:
    """Claude Code's ``if`` rule that spawns a hook only for a shell command holding ``literal``."""
    return f"Bash(*{literal}*)"


#: How a shell pre-filter starts; the whole command is :func:`post_filter_command`'s.
_FILTER_READ = "p=$(cat && printf .) || exec "
_FILTER_CASE = "; case $p in "


def post_filter_command(invocation: str, literals: tuple[str, ...]) -> str:
    """A post-tool hook command for a client without ``if`` rules (Codex, Gemini CLI), which run
    the command through a POSIX shell: it runs ``invocation`` (the quoted wrapper and its
    arguments) with the client's payload only when that payload holds one of ``literals``,
    and otherwise answers ``{}`` with exit 0, as the hook itself does for a command no
    observation rule can match, without starting a process beyond one ``cat``.

    The whole JSON payload is matched, not the command read out of it: the command's text is
    in it verbatim (JSON escapes none of :data:`RULE_CHARACTERS`), so no call a rule can match
    is filtered out; the tool's output holding a literal only costs a spawn. The ``.`` after
    ``cat`` keeps the payload's trailing newlines, which ``$(…)`` would strip: the wrapper gets
    the bytes the client sent. Should ``cat`` fail, the wrapper runs on what stdin still holds
    (all of it when ``cat`` could not start): uncertain means the hook runs. The exit status is
    the wrapper's own (the pipeline's last command), so the post-tool semantics do not change:
    nothing can be blocked after a tool ran, and the wrapper answers ``{}`` on any failure."""
    if not literals or not all(literal and RULE_CHARACTERS.issuperset(literal) for literal in literals):
        raise ValueError(f"post-tool filter literals must be plain characters: {literals!r}")
    patterns = "|".join(f"*'{literal}'*" for literal in literals)  # quoted, though nothing in them is special
    return (f"{_FILTER_READ}{invocation}{_FILTER_CASE}{patterns}) printf %s \"${{p%.}}\" | {invocation} ;; "
            "*) printf '{}\\n' ;; esac")


def post_filter_parts(command: str) -> tuple[str, tuple[str, ...]] | None:
    """(the invocation, the literals) of a post-tool command written by
    :func:`post_filter_command`; None for a command without that pre-filter (it runs the hook
    for every call), and the literals empty for one that starts like it but is not exactly what
    this StateWise writes (edited by hand): it proves no rule covered."""
    command = strip_locate(command)
    if not command.startswith(_FILTER_READ):
        return None
    invocation, found, rest = command[len(_FILTER_READ):].partition(_FILTER_CASE)
    pieces = rest.partition(")")[0].split("|") if found else []
    if not pieces or not all(len(piece) > 4 and piece[:2] == "*'" and piece[-2:] == "'*" for piece in pieces):
        return invocation, ()
    literals = tuple(piece[2:-2] for piece in pieces)
    try:
        rendered = post_filter_command(invocation, literals)
    except ValueError:
        return invocation, ()
    return invocation, literals if rendered == command else ()


def strip_locate(command: str) -> str:
    """``command`` without the :meth:`AgentHooks.locate` loop a portable command starts with."""
    for spec in AGENTS.values():
        for event in ("pre", "post"):
            prefix = spec.locate(event)
            if command.startswith(prefix):
                return command[len(prefix):]
    return command


def command_wrapper(command: str, root: Path) -> tuple[Path | None, bool]:
    """(the wrapper an installed hook command runs when the client starts it for the project at
    ``root``, whether the command is portable). A portable command (:meth:`AgentHooks.locate`)
    finds the nearest ``.statewise/bin/statewise-hook`` from ``root`` upwards, as its loop does:
    None when there is none. Any other command names its wrapper first (None when it names
    none)."""
    if strip_locate(command) != command:
        for folder in (root, *root.parents):
            candidate = folder / WRAPPER_RELATIVE
            if os.access(candidate, os.X_OK):
                return candidate, True
        return None, True
    try:
        words = shlex.split(command.partition(" || ")[0])
    except ValueError:
        return None, False
    return (Path(words[0]) if words else None), False


def post_filter_literals(command: str) -> tuple[str, ...] | None:
    """The literals of a post-tool command's shell pre-filter (:func:`post_filter_parts`), so that
    ``statewise doctor`` and the session check can tell which observation rules it still lets
    through: None when the command runs the hook for every call, empty when the filter is not
    one this StateWise writes."""
    parts = post_filter_parts(command)
    return None if parts is None else parts[1]


def _install_contract(contract: str | None, *, project: str | Path | None, user: bool) -> str | bool | None:
    """The contract the hooks will use, as far as install can tell: the one it was given (the
    flag or ``$STATEWISE_CONTRACT``, written into the wrapper), else the project's
    ``.statewise/config.toml`` one, else None (the built-in). False when it cannot be told: a
    user-wide install serves every project, each of which may name its own contract, and a
    malformed config.toml names none."""
    if contract:
        return str(Path(contract).absolute())
    if user:
        return False
    from statewise.settings import resolve_settings

    try:
        chosen = resolve_settings(project_root(project)).contract.value
    except InputError:
        return False
    return chosen or None


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as error:
        raise InputError(f"{path}: not valid JSON (line {error.lineno}, column {error.colno}); left untouched") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object at the top; left untouched")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError(f"{path}: 'hooks' must be an object; left untouched")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise InputError(f"{path}: hooks.{event} must be a list; left untouched")
    return data


def _write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write atomically; keep an existing file's mode (else ``mode``, else 0o644)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        keep = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        keep = mode if mode is not None else 0o644
    handle, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, keep)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _is_ours(hook: Any) -> bool:
    if not isinstance(hook, dict):
        return False
    command = str(hook.get("command", ""))
    return command.startswith(LEGACY_PREFIX) or f"/.statewise/bin/{WRAPPER_NAME}" in command


#: What install writes into ``.statewise/.gitignore`` when there is none (``statewise init``
#: writes the same): the wrapper names this machine's Python and stays out of git, as does the
#: store; config.toml may be committed.
GITIGNORE = ("# Written by `statewise init`: the store stays out of git; config.toml may be committed.\n"
             "*\n!.gitignore\n!config.toml\n")


def install_hooks(agent: str, *, project: str | Path | None = None, user: bool = False,
                  executable: str | Path | None = None, timeout: int = DEFAULT_TIMEOUT,
                  store: str | None = None, contract: str | None = None,
                  interpreter: str | Path | None = None) -> tuple[Path, bool]:
    """Write the wrapper and add the hooks. Returns (settings file, whether it changed).

    A project's settings (the file a team commits) get portable commands only: they find the
    wrapper from the client's project folder (:meth:`AgentHooks.locate`), and the wrapper, which
    names this machine's Python, stays out of git (``.statewise/.gitignore``). The user's
    settings (``user``) name the wrapper by absolute path. ``timeout`` is in seconds whatever
    the client's unit; ``store`` and ``contract`` are passed to every hook call;
    ``interpreter`` is the Python the wrapper starts (default: this one)."""
    spec = _agent(agent)
    if not isinstance(timeout, int) or timeout < 10:
        raise InputError(f"--timeout: must be a whole number of seconds, at least 10 (got {timeout!r})")
    path = settings_path(agent, project=project, user=user)
    wrapper = wrapper_path(project=project, user=user)
    script = render_wrapper(timeout=timeout, executable=executable, store=store, contract=contract,
                            interpreter=interpreter)
    data = _load(path)  # before writing anything: a malformed settings file changes nothing
    changed = False
    if not wrapper.exists() or wrapper.read_text(encoding="utf-8") != script:
        _write_text(wrapper, script, mode=0o755)
        changed = True
    ignore = wrapper.parent.parent / ".gitignore"
    if not user and not ignore.exists():
        _write_text(ignore, GITIGNORE)
    literals = post_tool_literals(_install_contract(contract, project=project, user=user))
    hooks = data.setdefault("hooks", {})
    for event, entries in spec.entries(wrapper if user else None, timeout, literals).items():
        groups = hooks.setdefault(event, [])
        ours = [g for g in groups if isinstance(g, dict) and any(_is_ours(h) for h in g.get("hooks", []))]
        if ours != entries:
            # Replace the older StateWise entries for this event instead of stacking more.
            kept = [g for g in groups if not (isinstance(g, dict) and any(_is_ours(h) for h in g.get("hooks", [])))]
            hooks[event] = [*kept, *entries]
            changed = True
    if changed:
        _write_text(path, json.dumps(data, indent=2) + "\n")
    return path, changed


def uninstall_hooks(agent: str, *, project: str | Path | None = None, user: bool = False) -> tuple[Path, int]:
    """Remove StateWise's hook entries only. Returns (settings file, entries removed).

    Events left empty are dropped, then an empty ``hooks`` object, then a settings file that
    holds nothing else; the wrapper goes when no agent's settings in this place still use it."""
    _agent(agent)
    path = settings_path(agent, project=project, user=user)
    if not path.exists():
        return path, 0
    data = _load(path)
    hooks = data.get("hooks", {})
    removed = 0
    for event in list(hooks):
        kept_groups = []
        for group in hooks[event]:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                remaining = [h for h in group["hooks"] if not _is_ours(h)]
                removed += len(group["hooks"]) - len(remaining)
                if not remaining:
                    continue
                group = {**group, "hooks": remaining}
            kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not removed:
        return path, 0
    if not hooks:
        data.pop("hooks", None)
    if data:
        _write_text(path, json.dumps(data, indent=2) + "\n")
    else:
        path.unlink()
        try:
            path.parent.rmdir()  # only if StateWise's file was all it held
        except OSError:
            pass
    if not any(_uses_wrapper(settings_path(name, project=project, user=user)) for name in AGENTS):
        wrapper_path(project=project, user=user).unlink(missing_ok=True)
    return path, removed


def _uses_wrapper(path: Path) -> bool:
    try:
        data = _load(path)
    except InputError:
        return True  # cannot tell: keep the wrapper
    return any(_is_ours(h) for groups in data.get("hooks", {}).values() for g in groups if isinstance(g, dict)
               for h in g.get("hooks", []))


# --- reading back what was installed: which post-tool hooks run for which commands ---------


def our_entries(groups: Any) -> list[dict[str, Any]]:
    """Every StateWise hook of one event (Claude Code's post-tool hooks are one per ``if``)."""
    return [{"matcher": group.get("matcher", ""), **hook}
            for group in (groups if isinstance(groups, list) else []) if isinstance(group, dict)
            for hook in group.get("hooks", []) if isinstance(hook, dict)
            and "statewise-hook" in str(hook.get("command", ""))]


def post_literals(post: dict[str, Any]) -> tuple[str, ...] | None:
    """The texts one installed post-tool hook is filtered on, one of which a call must hold for
    the client to run it: its ``if`` rule's (Claude Code, ``Bash(*text*)``) or its command's
    shell pre-filter's (:func:`~statewise.integrations.install.post_filter_literals`); None for
    a hook that runs for every call. A filter not in either form proves nothing covered: ()."""
    rule = post.get("if")
    if rule:
        rule = str(rule)
        text = rule[len("Bash(*"):-len("*)")]
        plain = rule.startswith("Bash(*") and rule.endswith("*)") and text and RULE_CHARACTERS.issuperset(text)
        return (text,) if plain else ()
    return post_filter_literals(str(post.get("command", "")))


def uncovered_observation_rules(filters: list[tuple[str, ...] | None], contract: str | Contract | None) -> list[str]:
    """The names of the observation rules in ``contract`` (a loaded contract, or the path of
    one; None: the built-in one) for which none of the post-tool hooks filtered on these texts
    would run (one entry per hook, as :func:`post_literals` reads it). A hook without a filter
    (None) covers every rule; a text covers a rule when, plain characters only, it is part of a
    literal that every command the rule matches contains
    (:func:`~statewise.integrations.hook_files.required_literals`). Raises what loading the
    contract raises."""
    from statewise.contract import Contract, builtin_contract, load_contract
    from statewise.integrations.hook_files import required_literals

    if not isinstance(contract, Contract):
        contract = load_contract(contract) if contract else builtin_contract()
    if None in filters:
        return []
    texts = [text for texts in filters if texts is not None for text in texts
             if text and RULE_CHARACTERS.issuperset(text)]
    return [rule.name for rule in contract.observations
            if not any(text in literal for text in texts for literal in required_literals(rule.command))]


def installed_capture_gaps(agent: str, root: Path, contract: Contract) -> tuple[list[Path], list[str]]:
    """For a session starting in ``root``: the settings files the client reads StateWise's
    post-tool hooks from (the project's and the user's), and the observation rules of
    ``contract`` that no such hook runs for, in any post-tool event, because of the filters it
    was installed with (Claude Code's ``if`` rules, the other clients' shell pre-filter; a
    contract changed or chosen after ``statewise install``).
    No gap when StateWise has no post-tool hook there at all (``doctor`` reports that) or a file
    does not parse."""
    spec = AGENTS[agent]
    files = [root / spec.project_file, Path.home() / spec.user_file]  # ``root``: the project's top already
    filters: dict[str, list[tuple[str, ...] | None]] = {event: [] for event in spec.post_events}
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        hooks = data.get("hooks") if isinstance(data, dict) else None
        for event in spec.post_events:
            posts = our_entries(hooks.get(event) if isinstance(hooks, dict) else None)
            filters[event] += [post_literals(post) for post in posts]
    gaps: list[str] = []
    for event_filters in filters.values():
        if event_filters:
            gaps += [name for name in uncovered_observation_rules(event_filters, contract) if name not in gaps]
    return files, gaps
