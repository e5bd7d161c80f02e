"""The normalizer assembled: dispatch by program, the contract's command rules, the entry points."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from statewise.actions import Action
from statewise.commands.base import UNRESOLVED, ShellAnalysis
from statewise.commands.rules import CommandMatch, CommandProblem, CommandRules
from statewise.commands.tables import (
    _COMPRESSORS,
    _CONTAINER_TOOLS,
    _EDITOR_LAUNCHERS,
    _HELP_PASSED_ON,
    _INFO_OPTIONS,
    _KNOWN_UNGUARDED,
    _NODE_RUNNERS,
    _OUTPUT_OPTIONS,
    _PIP_NAME,
    _READ_ONLY,
    _READ_ONLY_ARGS,
    _SESSIONS,
    _SHELLS,
    _TRANSPARENT,
    _WRAPPED_DANGER,
    _canonical,
)
from statewise.commands.tools import _npx_call, _split_node_package, _Tools
from statewise.commands.walk import _Walk
from statewise.commands.words import _UVX, _Call, _Ctx, _Spec, _Word
from statewise.commands.wrapper_shapes import WRAPPERS
from statewise.commands.wrappers import _Wrappers
from statewise.contract import Contract, builtin_contract


class _Analyzer(_Walk, _Wrappers, _Tools):
    """The whole normalizer: the walk, the wrappers and the per-tool handling together."""

    def dispatch(self, call: _Call) -> None:
        if not call.words:
            return
        head = call.words[0]
        if head.value is None:
            self.fail(f"the command name `{head.text}` is not a static word ({head.why})", call.part)
            return
        name = head.value
        if call.kept and (call.kept[0].value or "").rsplit("/", 1)[-1] in _NODE_RUNNERS and "@" in name[1:]:
            name = _split_node_package(name)[0]  # npx prisma@5 migrate runs prisma
            call = _Call(call.words, call.env, call.ctx, call.part, call.kept, program=name)
        base = name.rsplit("/", 1)[-1]
        if not base:
            self.unguard(call.part)
            return
        # macOS file systems are case-insensitive: `RM -rf x` runs rm there.
        key = _canonical(base.lower())
        if "/" not in name and self.asks_for_help(key, [w.value for w in call.args]):
            return  # prints its version or help and exits: read-only
        handler = _HANDLERS.get(key)
        if handler is not None:
            handler(self, call)
        elif key in _EDITOR_LAUNCHERS and (not _EDITOR_LAUNCHERS[key] or _EDITOR_LAUNCHERS[key] in (
                w.value for w in call.args)):
            self.interactive(call, "an editor ($EDITOR)")
        elif key in _SHELLS:
            self.shell(call)
        elif key in _READ_ONLY_ARGS:
            self.read_only_program(call, key)
        elif key in _READ_ONLY:
            self.read_only_builtin(call, key)
        elif key in _SESSIONS:
            self.session(call, key)
        elif key in _OUTPUT_OPTIONS:
            self.output_options(call)
            self.unknown(call)
        elif key in _CONTAINER_TOOLS:
            self.container(call)
        else:
            self.unknown(call)
        if key != "git" and (key in self.rules.by_name or key in self.rules.shapes) and not any(
                c is call for c in self.declared_calls):
            # A program the normalizer reads itself (npm, ssh, psql, rsync ...) that command rules
            # also name (npm publish, the catalogue's): their actions are added beside the reading.
            # git: after its global options (-C, -c), in git().
            before = len(self.actions)
            self.beside(call, call.args, own_only=key in self.rules.own_programs)
            if len(self.actions) > before and call.part in self.unguarded:
                self.unguarded.remove(call.part)  # a rule read it: no longer unguarded

    def asks_for_help(self, key: str, values: Sequence[str | None]) -> bool:
        """``PROGRAM --version`` or ``--help`` alone (any program found by name; a workspace
        script, named by a path, is read instead: it may ignore its arguments), or ``PROGRAM
        SUBCOMMAND --help`` for git and the catalogue's programs (:data:`_HELP_PASSED_ON` aside)."""
        if len(values) == 1:
            return values[0] in _INFO_OPTIONS
        if len(values) == 2 and values[1] == "--help" and values[0] and not values[0].startswith("-"):
            family = key.split(".", 1)[0]  # mkfs.ext4 is mkfs
            return (key == "git" or key in self.rules.by_name) and family not in _HELP_PASSED_ON
        return False

    def unknown(self, call: _Call) -> None:
        if "/" in call.name:
            # ./x.sh: a workspace script's text is read (scripts.py); the contract's rules still
            # classify the program itself (`./deploy.sh prod` as a team's deploy operation).
            self.path_program(call)
        if self.rules and self.declared(call):
            return
        key = _canonical(call.name.rsplit("/", 1)[-1].lower())
        if key not in _KNOWN_UNGUARDED:
            for word in call.args:
                value = word.value
                if value is None:
                    continue
                first = value.strip().split(None, 1)[0] if value.strip() else ""
                for candidate in (value, first):
                    name = candidate.rsplit("/", 1)[-1]
                    if name in _WRAPPED_DANGER or _PIP_NAME.match(name):
                        self.fail(f"`{call.name}` is not a program StateWise knows, and it may run `{value}`",
                                  call.part)
                        return
        self.unguard(call.part)

    def beside(self, call: _Call, args: Sequence[_Word], *, own_only: bool = True) -> None:
        """The ``program:`` rules for a program the normalizer reads itself (``git tag`` as a
        team's ``release.tag``; with ``own_only`` false also the built-in catalogue's, ``npm
        publish``), and the operations that name its argv shape: a matching rule's action is added beside what
        the built-in reader reports, never instead of it. A rule that cannot read the command
        leaves it unresolved; options before the subcommand do not make it unresolved here,
        since the built-in reader is what says what the command does (docs/shell.md)."""
        values = [w.value for w in args]
        found = self.rules.classify(call.name, values, call.env, call.ctx.cwd, own_only=own_only)
        if isinstance(found, CommandProblem):
            if not found.leading_option:
                self.fail(found.reason, call.part)
        elif isinstance(found, CommandMatch):
            self.add_match(call, found)
        for shaped in self.rules.shaped(call.name, values, found):
            self.add_match(call, shaped)

    def add_match(self, call: _Call, found: CommandMatch) -> None:
        args = dict(found.args)
        args.setdefault("command", call.text())
        if found.cwd and "cwd" not in args and self.cwd_arg(call) is not None:
            args["cwd"] = self.cwd_arg(call)
        self.actions.append(found.action(args=args, reason=f"the contract's command rule {found.rule}"))

    def declared(self, call: _Call) -> bool:
        """True if the contract's ``commands:`` rules declare this program: the command is then
        emitted as the rule's operation, or unresolved when the rule cannot read it."""
        self.declared_calls.append(call)  # kept alive, so identity is safe to test
        values = [w.value for w in call.args]
        found = self.rules.classify(call.name, values, call.env, call.ctx.cwd)
        shaped = self.rules.shaped(call.name, values, found)
        if found is None and not shaped:
            return False
        if isinstance(found, CommandProblem):
            self.fail(found.reason, call.part)
            return True
        if isinstance(found, CommandMatch):
            self.add_match(call, found)
        for match in shaped:  # the contract's operations that name this argv shape, beside
            self.add_match(call, match)
        return True

    # -- read-only, proven --



_HANDLERS: dict[str, Callable[[_Analyzer, _Call], None]] = {
    **{name: _Analyzer.wrapped for name in WRAPPERS},  # the table of wrapper shapes
    "git": _Analyzer.git,
    "sudo": _Analyzer.sudo,
    "env": _Analyzer.env_wrapper,
    "time": _Analyzer.simple_wrapper,
    "flock": _Analyzer.simple_wrapper,
    **{name: _Analyzer.simple_wrapper for name in _TRANSPARENT},
    "xargs": _Analyzer.xargs,
    "tmux": _Analyzer.multiplexer,
    "screen": _Analyzer.multiplexer,
    "watch": _Analyzer.watch,
    "eval": _Analyzer.eval_builtin,
    "trap": _Analyzer.shell_body_builtin,
    "alias": _Analyzer.shell_body_builtin,
    "source": _Analyzer.source,
    ".": _Analyzer.source,
    "rm": _Analyzer.rm,
    "rmdir": _Analyzer.rmdir,
    "unlink": _Analyzer.unlink,
    "shred": _Analyzer.shred,
    "trash": _Analyzer.trash,
    "trash-put": _Analyzer.trash,
    "rimraf": _Analyzer.trash,
    "del-cli": _Analyzer.trash,
    "find": _Analyzer.find,
    "tee": _Analyzer.tee,
    "cp": _Analyzer.cp,
    "mv": _Analyzer.mv,
    "ln": _Analyzer.ln,
    "install": _Analyzer.install,
    "touch": _Analyzer.touch,
    "truncate": _Analyzer.truncate,
    "sed": _Analyzer.sed,
    "dd": _Analyzer.dd,
    "chmod": _Analyzer.chmod,
    "chown": _Analyzer.chmod,
    "chgrp": _Analyzer.chmod,
    "rsync": _Analyzer.rsync,
    "ssh": _Analyzer.ssh,
    "curl": _Analyzer.curl,
    "wget": _Analyzer.wget,
    "zip": _Analyzer.zip,
    "tar": _Analyzer.tar,
    "easy_install": _Analyzer.easy_install,
    "gtar": _Analyzer.tar,
    "bsdtar": _Analyzer.tar,
    "unzip": _Analyzer.unzip,
    "patch": _Analyzer.patch,
    "split": _Analyzer.split,
    "csplit": _Analyzer.split,
    **{name: _Analyzer.compressor for name in _COMPRESSORS},
    "python": _Analyzer.python,
    "pip": _Analyzer.pip,
    "uv": _Analyzer.uv,
    "uvx": _Analyzer.uvx,
    "poetry": _Analyzer.poetry,
    "virtualenv": _Analyzer.virtualenv,
    "pdm": lambda self, call: (self.generic_add(call, "pdm.add", "pdm") if call.args and call.args[0].value == "add"
                               else self.wrapped(call, "unguarded")),
    "pipenv": lambda self, call: (self.generic_add(call, "pipenv.install", "pipenv")
                                  if call.args and call.args[0].value == "install"
                                  else self.interactive(call, "an interactive shell in the environment")
                                  if call.args and call.args[0].value == "shell"
                                  else self.runner(call, 2, _Spec.of(stop_at_positional=True))
                                  if call.args and call.args[0].value == "run" else self.unguard(call.part)),
    **{name: lambda self, call: (self.generic_add(call, "conda.install", call.name.rsplit("/", 1)[-1])
                                 if call.args and call.args[0].value == "install" else self.wrapped(call, "unguarded"))
       for name in ("conda", "mamba", "micromamba")},
    "pipx": lambda self, call: (self.runner(call, 2, _UVX) if call.args and call.args[0].value == "run"
                                else self.pipx(call)),
    "npm": _Analyzer.npm,
    "pnpm": _Analyzer.npm,
    "yarn": _Analyzer.npm,
    "bun": _Analyzer.npm,
    "npx": _npx_call,
    "bunx": _npx_call,
    "make": _Analyzer.make,
    "gmake": _Analyzer.make,
    "bundle": _Analyzer.bundle,
    "just": _Analyzer.just,
    "tox": _Analyzer.tox,
    **{name: _Analyzer.awk for name in ("awk", "gawk", "mawk", "nawk")},
    **{name: _Analyzer.interpreter_e for name in ("perl", "ruby", "node", "nodejs")},
}


# --- the public entry points -----------------------------------------------------------------


def analyze_command(command: str, *, cwd: str | Path, workspace: str | Path | None = None,
                    env: Mapping[str, str] | None = None, contract: Contract | None = None,
                    typed_input: bool = False) -> ShellAnalysis:
    """Normalize what ``command`` would do, run by bash in ``cwd``, into actions.

    ``workspace`` (default: ``cwd``) is what paths are made relative to: a path inside it is
    written workspace-relative, any other path absolute. ``env`` (default: this process's
    environment) is the environment the command would see; PATH decides which ``pip`` or
    ``python`` runs and HOME what ``~`` means. ``contract``'s ``commands:`` rules classify
    programs the normalizer has no built-in handling for (without one, such programs are
    unguarded). ``typed_input``: the client can type into the command's terminal later with no
    hook call (Codex's ``write_stdin``), so a program that reads and runs its terminal input (an
    interactive interpreter or shell, ``python3 -c 'exec(input())'``) is listed in ``sessions``
    for the hook to ask about at its start, instead of being unresolved.
    """
    start = Path(os.path.realpath(cwd))
    root = Path(os.path.realpath(workspace)) if workspace is not None else start
    environment = dict(os.environ if env is None else env)
    environment.setdefault("PWD", str(start))
    analyzer = _Analyzer(command, root, environment, CommandRules.of(contract, root), contract)
    analyzer.typed_input = typed_input
    ctx = _Ctx(start, environment)
    try:
        analyzer.analyze_text(command, ctx, command)
    except RecursionError:
        analyzer.fail("the command nests too deeply to analyze", command)
    unresolved_actions = [
        Action(tool="shell", operation=UNRESOLVED,
               args={"command": command, "part": part.strip()[:2000], "why": reason[:2000]},
               risk="high", reason=reason)
        for reason, part in analyzer.unresolved
    ]
    reasons = tuple(reason for reason, _ in analyzer.unresolved)
    actions = tuple(unresolved_actions + analyzer.actions)
    unguarded = tuple(part.strip() for part in analyzer.unguarded)
    sessions = tuple(what for what, _ in analyzer.sessions)
    return ShellAnalysis(command=command, actions=actions, unresolved=reasons, unguarded=unguarded,
                         read_only=not actions and not unguarded and not sessions, sessions=sessions,
                         named=tuple(dict.fromkeys(analyzer.named)))


def command_disagreement(action: Action, *, cwd: str | Path, workspace: str | Path | None = None,
                         env: Mapping[str, str] | None = None, contract: Contract | None = None,
                         unguarded_agrees: bool = False) -> str | None:
    """Why ``action``'s typed slots disagree with the shell command it will run, or None.

    For an action proposed with both typed slots and ``args.command`` (the API and planner
    paths), the command is normalized as the hook would normalize it and the proposal must be
    one of the actions it yields: same operation, and every slot the proposal types equal to
    the slot read from the command (an ``index`` that names the private index while the
    command installs from the public one disagrees). A command that cannot be read with
    confidence disagrees too. Without ``args.command`` there is nothing to compare: None.
    With ``unguarded_agrees``, a command that runs no guarded action at all (``git commit``
    typed as a set contract's ``git.commit``) agrees: what runs needs no check.
    """
    command = action.args.get("command")
    if not isinstance(command, str) or not command.strip():
        return None
    analysis = analyze_command(command, cwd=cwd, workspace=workspace, env=env, contract=contract)
    if analysis.unresolved:
        return f"its command cannot be read with confidence: {analysis.unresolved[0]}"
    same = [a for a in analysis.actions if a.operation == action.operation]
    if not same and not analysis.actions and unguarded_agrees:
        return None
    if not same:
        found = ", ".join(analysis.operations) or "no guarded action"
        return f"its command `{command[:200]}` is {found}, not {action.operation}"
    spec = (contract.operations.get(action.operation) if contract is not None else None) or \
        builtin_contract("coding").operations.get(action.operation)
    base = Path(os.path.realpath(workspace if workspace is not None else cwd))

    def agrees(name: str, proposed: Any, read: Any) -> bool:
        if proposed == read:
            return True
        # A path slot may be written workspace-relative or absolute: the same file is the same.
        slot = spec.slots.get(name) if spec is not None else None
        return (slot is not None and slot.value_type.value == "path" and isinstance(proposed, str)
                and isinstance(read, str)
                and os.path.realpath(base / proposed) == os.path.realpath(base / read))

    best = None
    for derived in same:
        differing = [name for name, value in action.args.items()
                     if name != "command" and name in derived.args and not agrees(name, value, derived.args[name])]
        missing = [name for name in ("index", "extra_index", "find_links", "no_index", "target_dir", "user")
                   if name in derived.args and name not in action.args]
        if not differing and not missing:
            return None
        problem = "; ".join([f"{name} is {action.args[name]!r} but the command uses {derived.args[name]!r}"
                             for name in differing] +
                            [f"the command also sets {name} = {derived.args[name]!r}" for name in missing])
        best = best or problem
    return f"its slots disagree with its command `{command[:200]}`: {best}"


_PATH_KEYS = ("file_path", "path", "notebook_path", "absolute_path", "filePath", "filename", "file")


def file_action(tool_name: str, tool_input: Mapping[str, Any], *, cwd: str | Path,
                workspace: str | Path | None = None) -> Action:
    """The ``fs.write`` action of an agent's file tool (Edit, Write, MultiEdit, NotebookEdit,
    Gemini's write_file/replace ...), as the built-in contract maps it.

    ``args.path`` is the target resolved against ``cwd`` (symlinks followed, as a write
    follows them), workspace-relative when inside ``workspace`` (default ``cwd``) and absolute
    otherwise; ``args.inside_workspace`` says which. An input without a usable path is a
    ``shell.unresolved`` action, which the gate stops. :func:`file_actions` gives every action
    a contract's rules add beside it.
    """
    return file_actions(tool_name, tool_input, cwd=cwd, workspace=workspace)[0]


def file_actions(tool_name: str, tool_input: Mapping[str, Any], *, cwd: str | Path,
                 workspace: str | Path | None = None, contract: Contract | None = None,
                 reading: str = "fs.write") -> list[Action]:
    """What an agent's file tool does: the ``reading`` (``fs.write``, or ``fs.delete`` for a
    patch that deletes a file) of its target path, mapped by ``contract``'s ``commands:`` rules
    and the built-in ones (a contract's rule on ``fs.write`` with ``when: {path: "infra/*"}``
    adds its operation beside ``fs.write``, as for a shell command's write). The built-in
    mapping comes first."""
    start = Path(os.path.realpath(cwd))
    root = Path(os.path.realpath(workspace)) if workspace is not None else start
    raw = next((tool_input[key] for key in _PATH_KEYS if isinstance(tool_input.get(key), str) and tool_input[key]),
               None)
    if raw is None:
        return [Action(tool="fs", operation=UNRESOLVED, args={"command": f"{tool_name} {dict(tool_input)!r}"[:2000]},
                       risk="high", reason=f"the {tool_name} input names no file path")]
    expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
    absolute = os.path.realpath(os.path.join(str(start), expanded))
    analyzer = _Analyzer("", root, {}, CommandRules.of(contract, root), contract)
    path, inside = analyzer.represent(absolute)
    edits = tool_input.get("edits")
    facts: dict[str, Any] = {"path": path, "inside_workspace": inside, "via": tool_name}
    link = analyzer.link_name(_Ctx(start, {}), expanded, path)
    if link is not None:
        facts["link_path"] = link
    if isinstance(edits, list):
        facts["edits"] = len(edits)
    verb = "deletes" if reading == "fs.delete" else "writes"
    matches = sorted(analyzer.rules.map_reading(reading, facts), key=lambda match: match.operation != reading)
    if not matches:
        return [Action(tool="fs", operation=UNRESOLVED, args={"command": f"{tool_name} {path}"[:2000]}, risk="high",
                       reason=f"{tool_name} {verb} {path}: no command rule of the contract maps {reading}")]
    return [match.action(target=path, reason=f"{tool_name} {verb} {path}") for match in matches]
