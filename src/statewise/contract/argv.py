"""A verifier's argv must be a program's own arguments, never a shell string.

The ``command`` adapter runs ``argv`` without a shell. A binding such as ``[sh, -c, "..."]``
(or ``[env, sudo, bash, -lc, "..."]``) would turn it back into a shell command line, with
its placeholders spliced into shell syntax; :func:`shell_string_problem` finds those after
peeling the wrappers that run the rest of their argv.
"""

from __future__ import annotations

import posixpath
import re

# Programs that would turn "-c <string>" back into a shell command line.
_SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "ash", "fish", "csh", "tcsh", "rc", "es", "xonsh",
     "nu", "elvish", "cmd", "cmd.exe", "powershell", "powershell.exe", "pwsh", "pwsh.exe"}
)
# Shell options that take the next argument as their value (bash -o pipefail script.sh).
_SHELL_VALUED_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
# Wrappers that run the rest of their argv as a command: (options that take a value, positional
# arguments before the command). A verifier's argv is checked after peeling them, so
# ``[env, sh, -c, ...]`` is refused like ``[sh, -c, ...]``.
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-a", "--argv0"}), 0),
    "sudo": (frozenset({"-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "--close-from",
                        "-D", "--chdir", "-r", "--role", "-t", "--type", "-U", "--other-user", "-T",
                        "--command-timeout", "-R", "--chroot"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "command": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "builtin": (frozenset(), 0),
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "stdbuf": (frozenset({"-i", "--input", "-o", "--output", "-e", "--error"}), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset({"-c", "--cpu-list"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "xargs": (frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "--eof", "-I", "--replace", "-L",
                         "--max-lines", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars",
                         "--process-slot-var"}), 0),
    "busybox": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "firejail": (frozenset(), 0),
    "flock": (frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), 1),
}
# Wrappers (or wrapper options) that take a command line as one string: always refused.
_STRING_RUNNERS = {
    "env": frozenset({"-S", "--split-string"}),
    "sudo": frozenset({"-s", "--shell", "-i", "--login"}),
    "doas": frozenset({"-s"}),
    "flock": frozenset({"-c", "--command"}),
    "su": None,  # su -c STRING, or a login shell: never a verifier
    "runuser": None,
    "watch": None,  # runs its arguments through sh -c
    "script": None,
    "ssh": None,
    "eval": None,
    "source": None,
    ".": None,
}


def shell_string_problem(argv: tuple[str, ...]) -> str | None:
    """Why ``argv`` runs a shell string (after peeling wrappers), or None if it does not."""
    index = 0
    wrappers: list[str] = []
    while index < len(argv):
        program = posixpath.basename(argv[index])
        lowered = program.lower()
        if lowered in _SHELLS:
            shown = " ".join(wrappers + [program])
            for item in argv[index + 1 :]:
                if _is_command_option(lowered, item):
                    return f"{shown} {item} runs a shell string; give the command's own argv instead"
            # Conservative on purpose: a string option anywhere above is refused; here, a shell
            # with no script operand (or told -s/-i) reads its commands from its input.
            position = index + 1
            while position < len(argv) and argv[position].startswith(("-", "+")) and argv[position] != "--":
                if argv[position] in ("-s", "-i"):
                    return f"{shown} {argv[position]} reads commands from its input; give the command's own argv"
                position += 2 if argv[position] in _SHELL_VALUED_OPTIONS else 1
            if position < len(argv) and argv[position] == "--":
                position += 1
            if position >= len(argv):
                return f"{shown} reads commands from its input; give the command's own argv instead"
            return None
        if lowered in _STRING_RUNNERS and lowered not in _WRAPPERS:
            return (f"{' '.join(wrappers + [program])} runs a command line given as a string; "
                    "give the command's own argv")
        spec = _WRAPPERS.get(lowered)
        if spec is None:
            return None
        valued, positionals = spec
        refused = _STRING_RUNNERS.get(lowered) or frozenset()
        wrappers.append(program)
        index += 1
        if lowered == "busybox":
            continue  # the next argument is the applet
        remaining = positionals
        while index < len(argv):
            item = argv[index]
            name = item.split("=", 1)[0]
            if name in refused or (item.startswith("-") and not item.startswith("--") and
                                   any(f"-{ch}" in refused for ch in item[1:])):
                return f"{' '.join(wrappers)} {item} runs a command line given as a string; give the command's own argv"
            if item == "--":
                index += 1
                break
            if lowered == "env" and "=" in item and not item.startswith("-"):
                index += 1  # NAME=VALUE
                continue
            if lowered == "nice" and re.fullmatch(r"-\d+", item):
                index += 1
                continue
            if item in valued:
                index += 2
                continue
            if item.startswith("-") and item != "-":
                index += 1
                continue
            if remaining:  # the wrapper's own operands (a duration, a lock file); options may follow
                remaining -= 1
                index += 1
                continue
            break
    return None


def _is_command_option(shell: str, item: str) -> bool:
    """Whether ``item`` makes ``shell`` run a string: ``-c``, ``-lc``, ``--command``, ``/c``, ``-Command``..."""
    lowered = item.lower()
    if shell.startswith("cmd"):
        return lowered in ("/c", "/k", "/r")
    if shell.startswith(("powershell", "pwsh")):
        name = lowered.lstrip("-/")
        return len(lowered) > 1 and bool(name) and (
            "command".startswith(name) or "encodedcommand".startswith(name) or name in ("ec", "e")
        )
    if lowered == "--command" or lowered.startswith("--command="):
        return True
    return bool(re.fullmatch(r"[-+][A-Za-z]*c[A-Za-z]*", item))
