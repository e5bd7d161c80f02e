"""What every command of the command line shares: the context object (settings, store,
contract, consoles), the one error handler, the project option and JSON output.

Imported by every command, ``statewise --help`` included, so it imports only click and the
standard library at start-up: rich, pydantic, the store and the workspace are imported when a
command first uses them (docs/performance.md, "Start-up of the command line").
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from datetime import datetime
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from statewise.errors import InputError, StateWiseError

if TYPE_CHECKING:
    from pydantic import ValidationError
    from rich.console import Console

    from statewise.records import KeyType
    from statewise.scopes import TaskScope
    from statewise.store.base import Store


class LazyConsole:
    """A rich ``Console`` made on first use: importing rich costs more than many commands'
    whole work, and ``--help`` or a usage error never prints through it.

    Attribute access is passed on to the console; hand :meth:`real` to code that keeps it.
    """

    def __init__(self, *, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    def real(self) -> Console:
        """The rich ``Console`` itself, made now if it was not yet."""
        if self._console is None:
            from rich.console import Console

            # Piped output is plain and never hard-wrapped (a record id split across lines
            # cannot be copied); on a terminal rich wraps to the window as usual.
            tty = (sys.stderr if self._stderr else sys.stdout).isatty()
            self._console = Console(stderr=self._stderr, soft_wrap=not tty, no_color=not tty or None)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


console, errors = LazyConsole(stderr=False), LazyConsole(stderr=True)


class Context:
    """What the group options established; commands open the store lazily.

    ``store_location`` and ``contract_path`` are what the flag or the environment said (None
    when neither did): the hook and install commands pass exactly those on. The project's
    ``.statewise/config.toml`` and the defaults are applied by :attr:`settings`, for the
    project a command names with ``--project`` (default: here).
    """

    def __init__(self, store_flag: str | None, contract_flag: str | None, verbosity: int = 0) -> None:
        self._store_flag = store_flag
        self._contract_flag = contract_flag
        self.store_location = store_flag or os.environ.get("STATEWISE_STORE") or None
        self.contract_path = contract_flag or os.environ.get("STATEWISE_CONTRACT") or None
        self.verbosity = verbosity
        self.project: Path | None = None
        self._settings: Any = None
        self._store: Store | None = None
        self._contract: Any = None

    def at(self, project: str | Path | None) -> Context:
        """Use the project holding ``project`` (before anything was resolved)."""
        if project is not None and self._settings is None:
            self.project = Path(project).resolve()
        return self

    @property
    def settings(self) -> Any:
        if self._settings is None:
            from statewise.settings import resolve_settings

            self._settings = resolve_settings(self.project, store=self._store_flag, contract=self._contract_flag)
            if self.verbosity > 0:
                for line in self._settings.describe():
                    errors.print(line, highlight=False, markup=False)
        return self._settings

    @property
    def contract(self) -> Any:
        if self._contract is None:
            from statewise.contract import builtin_contract, load_contract

            path = self.settings.contract.value
            self._contract = load_contract(path) if path else builtin_contract()
        return self._contract

    @property
    def location(self) -> str:
        """The store's location after flag, environment, config.toml and default."""
        from statewise.store import default_location

        return self.settings.store.value or default_location(self.settings.root)

    @property
    def store(self) -> Store:
        """The store, created when missing (for the commands that write the first record)."""
        if self._store is None:
            from statewise.store import open_store

            self._store = open_store(self.location, key_schema=self.contract)
        return self._store

    def existing_location(self) -> str:
        """The store's location, which must hold a store: a read never creates one, and a
        mistyped ``--store`` is an error with a did-you-mean rather than a new empty store."""
        location = self.location
        scheme, sep, rest = location.partition("://")
        path = rest if (sep and scheme == "sqlite") else (None if sep and scheme.isidentifier() else location)
        if path is not None and not Path(path).is_file():
            from statewise.settings import missing_store_error

            raise missing_store_error(path, self.settings.store.source)
        return location

    def existing_store(self) -> Store:
        """The store, which must exist (:meth:`existing_location`). Its key schema is the
        contract loaded when a write first asks for a key's type: a read (``record list``)
        never loads it. The commands that create the store or import into it take
        :attr:`store`, whose contract is loaded first (an import may parse in a forked
        process, which should not load it again)."""
        if self._store is None:
            from statewise.store import open_store

            self._store = open_store(self.existing_location(), key_schema=_ContractOnUse(self))
        return self._store

    def info(self, message: str) -> None:
        """A note for a person on stderr; ``-q`` silences it."""
        if self.verbosity >= 0:
            errors.print(message, highlight=False, markup=False)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


class _ContractOnUse:
    """The contract as the store's key schema, loaded when a write first asks a key's type: a
    command that only reads (``record list``) never loads it (the contract's models import
    pydantic, many times the rest of the command's start-up)."""

    def __init__(self, context: Context) -> None:
        self._context = context

    def key_type(self, key: str) -> KeyType | None:
        return self._context.contract.key_type(key)  # type: ignore[no-any-return]


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


def validation_message(error: ValidationError, what: str) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or what
    message = first["msg"].removeprefix("Value error, ")
    return f"{what}: {field}: {message}"


def handled(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one clear line on stderr and a non-zero exit, no traceback."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - sorted by _exit_for, which re-raises a bug on request
            _exit_for(error)

    return wrapper


def _is_validation_error(error: Exception) -> bool:
    # Only a command that imported pydantic can raise its error: do not import it to ask.
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(error, pydantic.ValidationError)


def _exit_for(error: Exception) -> None:
    """Print ``error`` as one line on stderr and exit with its status; a bug is re-raised
    under ``STATEWISE_DEBUG`` for its traceback."""
    from rich.markup import escape

    # The message is text, not markup: `statewise[mcp]` or `python.package[requests]` keep
    # their brackets.
    if isinstance(error, StateWiseError):
        message, status = str(error), 2 if isinstance(error, InputError) else 1
    elif isinstance(error, click.ClickException):  # a refusal a command raised itself
        message, status = error.format_message(), 2
    elif _is_validation_error(error):
        message, status = validation_message(error, "input"), 2  # type: ignore[arg-type]
    elif isinstance(error, OSError):
        message, status = str(error), 1
    else:  # a bug: still one line, the traceback only on request
        if os.environ.get("STATEWISE_DEBUG"):
            raise error
        errors.print(f"[red]internal error:[/red] {type(error).__name__}: {escape(str(error))} "
                     "(set STATEWISE_DEBUG=1 for the traceback)", highlight=False, soft_wrap=True)
        sys.exit(70)
    errors.print(f"[red]error:[/red] {escape(message)}", highlight=False, markup=True, soft_wrap=True)
    sys.exit(status)


def task_scope_of(task: str | None, cwd: str | None) -> TaskScope:
    from statewise.scopes import TaskScope
    from statewise.workspace import derive_task_scope

    if task:
        return TaskScope.parse(task)
    return derive_task_scope(cwd or os.getcwd())




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


class ExampleCommand(click.Command):
    """A command whose help ends with its examples."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        format_examples(ctx, formatter)


class SentenceGroup(click.Group):
    """A command group whose listing shows each command's first sentence whole: click's own cuts
    it at the terminal's width with "...", mid-sentence; this one lets the line wrap. Its help,
    and its commands', end with their examples."""

    #: Subgroups made with ``@group.group()`` are of this class too, and commands ExampleCommands.
    group_class = type
    command_class = ExampleCommand

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
