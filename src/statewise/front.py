"""What the command line's click commands and its front door (:mod:`statewise.__main__`)
share, without click: the context object (settings, store, contract, consoles), the one error
exit, and ``record list``'s reading and printing.

The front door answers ``statewise record list`` through :func:`retrieve_for_list` and
:func:`print_retrieval` without importing click (docs/performance-cli.md); ``statewise.cli``'s
command calls the same functions, so there is one implementation, whichever parser read the
options.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.errors import InputError, StateWiseError

if TYPE_CHECKING:
    from pydantic import ValidationError
    from rich.console import Console

    from statewise.records import KeyType
    from statewise.scopes import TaskScope
    from statewise.store.base import Store
    from statewise.store.rows import RetrievalRows

__all__ = ["Context", "LazyConsole", "console", "errors", "exit_for", "print_retrieval", "retrieve_for_list",
           "stdout_is_plain", "task_scope_of", "validation_message"]


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


def validation_message(error: ValidationError, what: str) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or what
    message = first["msg"].removeprefix("Value error, ")
    return f"{what}: {field}: {message}"


def _is_click_exception(error: Exception) -> bool:
    # Only a process that imported click can raise its error: the front door does not import it.
    click = sys.modules.get("click")
    return click is not None and isinstance(error, click.ClickException)


def _is_validation_error(error: Exception) -> bool:
    # Only a command that imported pydantic can raise its error: do not import it to ask.
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(error, pydantic.ValidationError)


def exit_for(error: Exception) -> None:
    """Print ``error`` as one line on stderr and exit with its status; a bug is re-raised
    under ``STATEWISE_DEBUG`` for its traceback."""
    from rich.markup import escape

    # The message is text, not markup: `statewise[mcp]` or `python.package[requests]` keep
    # their brackets.
    if isinstance(error, StateWiseError):
        message, status = str(error), 2 if isinstance(error, InputError) else 1
    elif _is_click_exception(error):  # a refusal a command raised itself
        message, status = error.format_message(), 2  # type: ignore[attr-defined]
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


def stdout_is_plain() -> bool:
    """True when the command line's stdout console (:data:`console`) is not a terminal for
    rich: stdout is not a tty and neither ``TTY_COMPATIBLE`` nor ``FORCE_COLOR`` is set (either
    can make rich treat it as one). Then :func:`statewise.render.retrieval_plain` is what rich
    would print."""
    if os.environ.get("TTY_COMPATIBLE") or "FORCE_COLOR" in os.environ:
        return False
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def retrieve_for_list(obj: Context, task: str | None, cwd: str | None, keys: tuple[str, ...],
                      text: str | None) -> RetrievalRows:
    """What ``statewise record list`` shows: the rows that apply to the task (``task``, else the
    one ``cwd`` derives), and those held back. Rows, not models: the view needs no pydantic."""
    from statewise.workspace import git_answers_kept

    # One reading of git for the settings, the store's location and the task's scope, which
    # each ask for the worktree's root; the command changes nothing git reports.
    with git_answers_kept():
        return obj.at(cwd).existing_store().retrieve_rows(task_scope_of(task, cwd), keys=list(keys) or None,
                                                          text=text)


def print_retrieval(result: RetrievalRows) -> None:
    """The retrieval's view on stdout: written as plain text where rich would print it so
    (:func:`stdout_is_plain`, :func:`statewise.render.retrieval_plain`), else by rich."""
    from statewise.render import retrieval_plain

    plain = retrieval_plain(result) if stdout_is_plain() else None
    if plain is not None:
        try:
            sys.stdout.write(plain)  # encoded whole before anything is written
        except UnicodeEncodeError:
            pass  # rich says it its own way (with a hint about PYTHONIOENCODING): let it
        else:
            sys.stdout.flush()  # as rich does after each print
            return
    from statewise.render import retrieval_view

    console.print(retrieval_view(result))
