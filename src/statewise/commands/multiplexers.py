"""Terminal multiplexers (tmux, screen) read as what they run.

An agent starts servers and long jobs in a detached session (``tmux new-session -d -s web
'npm run dev'``, ``screen -dmS web python -m http.server``), splits panes, types into them
(``tmux send-keys -t web 'pytest -q' Enter``) and kills them. None of that is an interactive
session the hook cannot see: the command a session, window or pane starts is in the argv, and
so is every key sequence typed into it. Only attaching (``tmux attach``, ``tmux`` alone,
``tmux new`` without ``-d``, ``screen -r``, ``screen`` alone) hands the terminal to a session
whose later input never reaches the hook.

:func:`read_tmux` and :func:`read_screen` turn the words into :class:`Effect` values:
``session`` (interactive), ``shell`` (a command string run by a shell or typed into a pane),
``argv`` (the words from an index on are a command), ``write`` (a file it writes), ``fail``
(cannot be read). The tmux command table is data: each command's option letters that take
a value, and what its positionals are.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from statewise.commands.words import _Word

SESSION = "session"
SHELL = "shell"
ARGV = "argv"
WRITE = "write"
FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Effect:
    """One thing a multiplexer call does."""

    kind: str  # SESSION, SHELL, ARGV, WRITE or FAIL
    text: str = ""  # SHELL: the command text; WRITE: the path; FAIL: the reason
    start: int = 0  # ARGV: the index of the command's first word in the call's words
    directory: str | None = None  # SHELL: the start directory it runs in (tmux -c DIR), when given


@dataclass(frozen=True, slots=True)
class _TmuxCommand:
    """A tmux command: which option letters take a value, and what its positionals are."""

    flags: str  # option letters without a value
    valued: str  # option letters with a value
    positionals: str = "none"  # none, shell (a shell command), keys (send-keys), path (written), other
    detached_flag: str = ""  # new-session: without this letter the client attaches (a session)


_TMUX_COMMANDS: dict[str, _TmuxCommand] = {
    "new-session": _TmuxCommand("AdDEPX", "cefnstxy", "shell", detached_flag="d"),
    "attach-session": _TmuxCommand("dErx", "cft", "session"),
    "new-window": _TmuxCommand("abdkPS", "cenFt", "shell"),
    "split-window": _TmuxCommand("bdfhIvPZ", "celpFt", "shell"),
    "respawn-pane": _TmuxCommand("k", "cet", "shell"),
    "respawn-window": _TmuxCommand("k", "cet", "shell"),
    "run-shell": _TmuxCommand("bE", "cdt", "shell"),
    "pipe-pane": _TmuxCommand("IOo", "t", "shell"),
    "send-keys": _TmuxCommand("FHKlMRX", "cNt", "keys"),
    "save-buffer": _TmuxCommand("a", "b", "path"),
    "kill-session": _TmuxCommand("aC", "t"),
    "kill-server": _TmuxCommand("", ""),
    "kill-window": _TmuxCommand("a", "t"),
    "kill-pane": _TmuxCommand("a", "t"),
    "list-sessions": _TmuxCommand("", "fF"),
    "list-windows": _TmuxCommand("a", "fFt"),
    "list-panes": _TmuxCommand("as", "fFt"),
    "list-clients": _TmuxCommand("", "fFt"),
    "list-buffers": _TmuxCommand("", "fF"),
    "list-keys": _TmuxCommand("1aN", "PT", "other"),
    "list-commands": _TmuxCommand("", "F", "other"),
    "has-session": _TmuxCommand("", "t"),
    "display-message": _TmuxCommand("aINpv", "cdt", "other"),
    "capture-pane": _TmuxCommand("aepPqCJNTM", "bEtS"),
    "show-buffer": _TmuxCommand("", "b"),
    "delete-buffer": _TmuxCommand("", "b"),
    "set-buffer": _TmuxCommand("aw", "bnt", "other"),
    "select-pane": _TmuxCommand("DdegLlMmRUZ", "Tt"),
    "select-window": _TmuxCommand("lnpT", "t"),
    "select-layout": _TmuxCommand("Enop", "t", "other"),
    "resize-pane": _TmuxCommand("DLMRTUZ", "txy", "other"),
    "rename-session": _TmuxCommand("", "t", "other"),
    "rename-window": _TmuxCommand("", "t", "other"),
    "detach-client": _TmuxCommand("aP", "Est"),
    "switch-client": _TmuxCommand("ElnprZ", "cTt"),
    "wait-for": _TmuxCommand("LSU", "", "other"),
    "set-option": _TmuxCommand("aFgopqsuUw", "t", "other"),
    "set-window-option": _TmuxCommand("aFgoqu", "t", "other"),
    "show-options": _TmuxCommand("AgHpqsvw", "t", "other"),
    "show-window-options": _TmuxCommand("gv", "t", "other"),
    "set-environment": _TmuxCommand("Fhgru", "t", "other"),
    "show-environment": _TmuxCommand("hgs", "t", "other"),
    "start-server": _TmuxCommand("", ""),
    "server-info": _TmuxCommand("", ""),
    "clear-history": _TmuxCommand("H", "t"),
    "swap-pane": _TmuxCommand("dDUZ", "st"),
    "move-window": _TmuxCommand("abdkr", "st"),
    "break-pane": _TmuxCommand("abdP", "Fnst"),
    "join-pane": _TmuxCommand("bdfhv", "lst"),
    "refresh-client": _TmuxCommand("cDlLRSU", "ABCfFt", "other"),
}
_TMUX_ALIASES = {
    "new": "new-session", "attach": "attach-session", "a": "attach-session", "at": "attach-session",
    "neww": "new-window", "splitw": "split-window", "respawnp": "respawn-pane", "respawnw": "respawn-window",
    "run": "run-shell", "pipep": "pipe-pane", "send": "send-keys", "saveb": "save-buffer",
    "ls": "list-sessions", "lsw": "list-windows", "lsp": "list-panes", "lsc": "list-clients", "lsb": "list-buffers",
    "lsk": "list-keys", "lscm": "list-commands", "has": "has-session", "display": "display-message",
    "capturep": "capture-pane", "showb": "show-buffer", "deleteb": "delete-buffer", "setb": "set-buffer",
    "selectp": "select-pane", "selectw": "select-window", "selectl": "select-layout", "resizep": "resize-pane",
    "rename": "rename-session", "renamew": "rename-window", "detach": "detach-client", "switchc": "switch-client",
    "wait": "wait-for", "set": "set-option", "setw": "set-window-option", "show": "show-options",
    "showw": "show-window-options", "setenv": "set-environment", "showenv": "show-environment",
    "start": "start-server", "info": "server-info", "clearhist": "clear-history", "swapp": "swap-pane",
    "movew": "move-window", "breakp": "break-pane", "joinp": "join-pane", "refresh": "refresh-client",
    "killp": "kill-pane", "killw": "kill-window",
}
_TMUX_GLOBAL_FLAGS = "2DlNuvV"
_TMUX_GLOBAL_VALUED = "cfLST"
# Keys send-keys names: those that end a line run what was typed; the others do not add text.
_ENTER_KEYS = frozenset({"Enter", "C-m", "C-M", "KPEnter", "C-j", "C-J"})
_KEY_NAME = re.compile(
    r"^(?:(?:C|M|S)-)+\S$|^(?:(?:C|M|S)-)*(?:Up|Down|Left|Right|BSpace|BTab|DC|End|Home|IC|NPage|PageDown|PgDn|"
    r"PPage|PageUp|PgUp|Tab|Escape|Space|Enter|KPEnter|F\d{1,2}|KP\w+)$")


def _command(name: str) -> str | None:
    if name in _TMUX_COMMANDS:
        return name
    if name in _TMUX_ALIASES:
        return _TMUX_ALIASES[name]
    matches = [command for command in _TMUX_COMMANDS if command.startswith(name)]  # tmux takes unique prefixes
    return matches[0] if len(matches) == 1 else None


def _options(values: Sequence[str | None], start: int, flags: str, valued: str
             ) -> tuple[int, dict[str, str | None], str | None]:
    """Single-letter options (clusters allowed) from ``start``: the index of the first
    positional, the options read, or an error."""
    found: dict[str, str | None] = {}
    i = start
    while i < len(values):
        value = values[i]
        if value is None or not value.startswith("-") or value == "-":
            break
        if value == "--":
            return i + 1, found, None
        j = 1
        while j < len(value):
            letter = value[j]
            if letter in valued:
                rest = value[j + 1:]
                if rest:
                    found[letter] = rest
                elif i + 1 < len(values):
                    i += 1
                    found[letter] = values[i]
                else:
                    return i, found, f"option -{letter} needs a value"
                break
            if letter not in flags:
                return i, found, f"unknown option -{letter}"
            found[letter] = ""
            j += 1
        i += 1
    return i, found, None


def _typed(keys: Sequence[str], literal: bool) -> str:
    """The text ``send-keys`` types: key names that end a line become newlines."""
    text = ""
    for key in keys:
        if literal or not _KEY_NAME.match(key):
            text += key
        elif key in _ENTER_KEYS:
            text += "\n"
        elif key == "Space":
            text += " "
        else:
            text += "\n"  # C-c, Escape, arrows: what was typed so far is its own line at most
    return text


def _shell_text(words: Sequence[str]) -> str:
    """A tmux shell-command: one argument is run by the shell as is; several are a command
    and its arguments."""
    return words[0] if len(words) == 1 else shlex.join(words)


def read_tmux(words: Sequence[_Word]) -> list[Effect]:
    """What ``tmux ...`` (``words``: the whole call) does."""
    values = [w.value for w in words]
    i, options, error = _options(values, 1, _TMUX_GLOBAL_FLAGS, _TMUX_GLOBAL_VALUED)
    if error:
        return [Effect(FAIL, f"tmux: {error}")]
    if "V" in options:
        return []
    if "C" in options:
        return [Effect(SESSION)]
    effects: list[Effect] = []
    if options.get("c"):
        effects.append(Effect(SHELL, options["c"] or ""))  # tmux -c CMD runs CMD with the default shell
        return effects
    if i >= len(values):
        return [Effect(SESSION)]  # `tmux` alone creates a session and attaches to it
    while i < len(values):
        end = next((k for k in range(i, len(values)) if values[k] == ";"), len(values))
        effects += _read_tmux_command(values[i:end])
        i = end + 1
    return effects


def _read_tmux_command(values: Sequence[str | None]) -> list[Effect]:
    if not values:
        return []
    head = values[0]
    if head is None:
        return [Effect(FAIL, "the tmux command is only known at run time")]
    name = _command(head)
    if name is None:
        return [Effect(FAIL, f"`tmux {head}` is not a tmux command StateWise knows")]
    spec = _TMUX_COMMANDS[name]
    start, options, error = _options(values, 1, spec.flags, spec.valued)
    if error:
        return [Effect(FAIL, f"tmux {name}: {error}")]
    rest = list(values[start:])
    if spec.positionals == "session" or (spec.detached_flag and spec.detached_flag not in options):
        return [Effect(SESSION)]
    if any(v is None for v in rest) and spec.positionals in ("shell", "keys", "path"):
        return [Effect(FAIL, f"what `tmux {name}` runs or types is only known at run time")]
    static = [v for v in rest if v is not None]
    if name == "send-keys":
        if "X" in options or not static:
            return []  # a copy-mode command, or nothing typed
        if "H" in options:
            return [Effect(FAIL, "`tmux send-keys -H` types keys given in hexadecimal")]
        return [Effect(SHELL, _typed(static, literal="l" in options))]
    if name == "run-shell" and "C" in options:
        return [Effect(FAIL, "`tmux run-shell -C` runs tmux commands StateWise does not read")]
    if spec.positionals == "shell":
        if "c" in options and options["c"] is None:
            return [Effect(FAIL, f"the directory `tmux {name} -c` starts in is only known at run time")]
        return [Effect(SHELL, _shell_text(static), directory=options.get("c"))] if static else []
    if spec.positionals == "path":
        return [Effect(WRITE, static[0])] if static else []
    return []


_SCREEN_FLAGS = frozenset("-d -D -m -r -R -x -L -A -a -U -q -O -i -l -ln -list -ls -wipe -v -Q -f -fn -fa".split())
_SCREEN_VALUED = frozenset("-S -t -c -h -p -X -s -T -e -Logfile -logfile".split())


def read_screen(words: Sequence[_Word]) -> list[Effect]:
    """What ``screen ...`` (``words``: the whole call) does."""
    values = [w.value for w in words]
    options: dict[str, str | None] = {}
    i = 1
    while i < len(values):
        value = values[i]
        if value is None or not value.startswith("-"):
            break
        if value in _SCREEN_VALUED:
            if i + 1 >= len(values):
                return [Effect(FAIL, f"screen: option {value} needs a value")]
            options[value] = values[i + 1]
            if value == "-X":
                i += 2
                break  # the rest is the screen command and its arguments
            i += 2
            continue
        if value in _SCREEN_FLAGS:
            options[value] = ""
            i += 1
            continue
        if value[:2] in _SCREEN_VALUED and len(value) > 2 and value not in _SCREEN_FLAGS:
            options[value[:2]] = value[2:]  # -Sname
            i += 1
            continue
        letters = ["-" + c for c in value[1:]]
        if not all(letter in _SCREEN_FLAGS or letter == "-S" for letter in letters):
            return [Effect(FAIL, f"screen: unknown option {value}")]
        for index, letter in enumerate(letters):
            if letter == "-S":  # -dmS name
                if index != len(letters) - 1 or i + 1 >= len(values):
                    return [Effect(FAIL, f"screen: option -S needs a value (in {value})")]
                options["-S"] = values[i + 1]
                i += 1
                break
            options[letter] = ""
        i += 1
    if any(name in options for name in ("-ls", "-list", "-wipe", "-v", "-Q")):
        return []
    if "-X" in options:
        command = [options["-X"], *values[i:]]
        if any(v is None for v in command):
            return [Effect(FAIL, "the screen command `screen -X` sends is only known at run time")]
        head = command[0] or ""
        if head == "stuff":
            typed = "".join(v or "" for v in command[1:])
            return [Effect(SHELL, typed.replace("^M", "\n").replace("\\n", "\n").replace("\\r", "\n"))]
        if head in ("hardcopy", "log", "logfile", "writebuf", "bufferfile", "exec", "screen", "eval", "source"):
            return [Effect(FAIL, f"`screen -X {head}` runs a command or writes a file StateWise does not read")]
        return []  # quit, kill, detach, title ...
    detached = ("-d" in options or "-D" in options) and "-m" in options
    if any(name in options for name in ("-r", "-R", "-x")) or not detached:
        return [Effect(SESSION)]
    if i < len(values):
        return [Effect(ARGV, start=i)]
    return []  # a detached shell: what is typed into it later (screen -X stuff) is read then
