"""What every command of the command line shares: the context object (settings, store,
contract, consoles), the one error handler, the project option and JSON output.

The parts that need no click (the context object, the consoles, the error exit) live in
:mod:`statewise.front`, which the front door uses too, and are re-exported here.

Imported by every command, ``statewise --help`` included, so it imports only click and the
standard library at start-up: rich, pydantic, the store and the workspace are imported when a
command first uses them (docs/performance-cli.md).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import Any

import click

from statewise.errors import StateWiseError
from statewise.front import (
    Context,
    LazyConsole,
    console,
    errors,
    exit_for,
    task_scope_of,
    validation_message,
)

__all__ = ["Context", "ExampleCommand", "LazyConsole", "SentenceGroup", "command_path", "console", "emit_json",
           "errors", "format_examples", "handled", "project_option", "suggest_key", "task_scope_of", "unknown_key",
           "validation_message"]


def emit_json(data: Any) -> None:
    # A model can only be in ``data`` when pydantic was imported: do not import it to ask.
    pydantic = sys.modules.get("pydantic")

    def default(value: Any) -> Any:
        if pydantic is not None and isinstance(value, pydantic.BaseModel):
            return value.model_dump(mode="json")
        if isinstance(value, datetime):
            return value.isoformat()
        raise TypeError(f"cannot serialise {type(value).__name__}")

    click.echo(json.dumps(data, default=default, indent=2))


def handled(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one clear line on stderr and a non-zero exit, no traceback."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - sorted by exit_for, which re-raises a bug on request
            exit_for(error)

    return wrapper


def project_option(name: str = "project", *, aliases: tuple[str, ...] = ("--cwd", "--workspace"),
                   help: str = "The project directory (default: here; its git root holds the store).",
                   exists: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--project DIR``, the one name for the project directory (as ``gh`` and ``uv`` have
    it), with the older names as hidden aliases that still work and say they are deprecated.

    The value arrives in the command's parameter ``name`` whichever spelling was used.
    """
    meta_key = f"statewise.alias.{name}"

    def from_alias(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is None:
            return
        used = next((opt for opt in aliases if opt in sys.argv or any(a.startswith(opt + "=") for a in sys.argv)),
                    aliases[0])
        if sys.stderr.isatty():  # a person at a terminal learns the new name; a script's output stays as it was
            errors.print(f"warning: {used} is deprecated; use --project", highlight=False, markup=False)
        if ctx.params.get(name) is not None:
            raise click.UsageError(f"give --project or {used}, not both", ctx=ctx)
        ctx.meta[meta_key] = value
        if name in ctx.params:  # --project was processed already (absent): fill it in
            ctx.params[name] = value

    def from_main(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is not None and ctx.meta.get(meta_key) is not None:
            raise click.UsageError("give --project or its deprecated alias, not both", ctx=ctx)
        return value if value is not None else ctx.meta.get(meta_key)

    kind = click.Path(exists=exists, file_okay=False)

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        command = click.option(*aliases, f"_{name}_alias", type=kind, hidden=True, expose_value=False,
                               callback=from_alias, is_eager=False)(command)
        return click.option("--project", name, type=kind, callback=from_main, metavar="DIR", help=help)(command)

    return decorate


def suggest_key(contract: Any, key: str) -> str | None:
    from statewise.settings import suggest

    base, bracket, rest = key.partition("[")
    # A verifier's name is a likely guess for its key (python.version observes runtime.python_version).
    by_verifier: dict[str, str] = {}
    for name, spec in sorted(contract.state.items()):
        verifier = spec.verifier if isinstance(spec.verifier, str) else getattr(spec.verifier, "adapter", None)
        if verifier:
            by_verifier.setdefault(verifier, name)
    found = by_verifier.get(base) or suggest(base, sorted(contract.state))
    if found is None:
        close = suggest(base, sorted(by_verifier))
        found = by_verifier[close] if close else None
    if found is None:
        return None
    return f"{found}[{rest}" if bracket and contract.state[found].qualified else found


def unknown_key(contract: Any, key: str) -> StateWiseError:
    from statewise.errors import KeyNameError

    hint = suggest_key(contract, key)
    problem = "the contract in force does not declare this key"
    problem += f"; did you mean {hint}?" if hint else ""
    return KeyNameError(key, problem + " (`statewise keys` lists them)")


def command_path(ctx: click.Context) -> str:
    """The words after ``statewise`` that name ``ctx``'s command ("" for ``statewise``)."""
    names = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def format_examples(ctx: click.Context, formatter: click.HelpFormatter) -> None:
    """The help's "Examples" section (statewise.cli.examples), written as is: never re-wrapped."""
    from statewise.cli.examples import EXAMPLES

    lines = EXAMPLES.get(command_path(ctx))
    if lines:
        with formatter.section("Examples"):
            for line in lines:
                # A comment as it is; a command after a prompt; a continued command under it.
                mark = "" if line.startswith("#") else "  " if line.startswith(" ") else "$ "
                formatter.write(f"{'':>{formatter.current_indent}}{mark}{line}\n")


def _with_context(error: click.UsageError, ctx: click.Context) -> click.UsageError:
    # click's parser raises some errors ("Option '--scope' requires an argument.") without
    # the context it was parsing, so their usage line could not name the command.
    if error.ctx is None:
        error.ctx = ctx
    return error


class _NamesItsContext(click.Command):
    """A command whose parsing errors carry the context being parsed (:func:`_with_context`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as error:
            raise _with_context(error, ctx) from None


class ExampleCommand(_NamesItsContext):
    """A command whose help ends with its examples."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        format_examples(ctx, formatter)


class _UsageInProjectStyle(click.UsageError):
    """(Private: click's own error class, re-styled; not one of the project's errors, which
    derive from StateWiseError.) A usage error (an unknown option, a missing argument, a bad choice) printed as every
    other error of the command line: ``error: MESSAGE`` on one line, then the command's usage
    and where its help is, on a second; click's own form ("Usage: ...", "Try ...", a blank line,
    "Error: ...") is four lines in another style. The message and exit status are click's."""

    def show(self, file: Any = None) -> None:
        click.echo(f"{click.style('error:', fg='red')} {self.format_message()}", file=file, err=True)
        if self.ctx is not None:  # else not raised while parsing a command's words: no usage to show
            usage, path = " ".join(self.ctx.command.collect_usage_pieces(self.ctx)), self.ctx.command_path
            click.echo(f"usage: {path} {usage} (more: {path} --help)", file=file, err=True)


def _in_project_style(error: click.UsageError) -> _UsageInProjectStyle:
    if isinstance(error, _UsageInProjectStyle):
        return error
    return _UsageInProjectStyle(error.format_message(), error.ctx)  # exit status 2, as every usage error


class SentenceGroup(click.Group, _NamesItsContext):
    """A command group whose listing shows each command's first sentence whole: click's own cuts
    it at the terminal's width with "...", mid-sentence; this one lets the line wrap. Its help,
    and its commands', end with their examples, and a usage error anywhere beneath it is printed
    in the project's style (:class:`_UsageInProjectStyle`)."""

    #: Subgroups made with ``@group.group()`` are of this class too, and commands ExampleCommands.
    group_class = type
    command_class = ExampleCommand

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as error:  # this group's own options
            raise _in_project_style(error) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:  # an unknown command, a subcommand's options or arguments
            raise _in_project_style(error) from None

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        format_examples(ctx, formatter)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=1000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
