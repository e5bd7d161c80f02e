"""The MCP server's machinery: strict argument checking, the shared service (one contract, one
store, one workspace) and the one-line errors every tool reports."""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

from statewise.contract import Contract
from statewise.errors import InputError, StateWiseError
from statewise.records import parse_time
from statewise.scopes import TaskScope
from statewise.store import default_location, open_store
from statewise.store.base import Store
from statewise.workspace import derive_task_scope

__all__ = ["SerializedStore", "Service", "StrictServer", "one_line", "parse_time", "session_note", "tool_call",
           "validation_line"]

T = TypeVar("T")


# --- strict arguments ----------------------------------------------------------------------


class StrictServer(MCPServer[Any]):
    """The SDK's server, with arguments checked the way StateWise's docs promise: an argument
    the tool does not declare is an error (the SDK ignores it), and the SDK's multi-line
    pydantic dump for a missing or malformed argument becomes one line naming the argument."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            declared = set(tool.parameters.get("properties", {}))
            extra = sorted(set(arguments) - declared)
            if extra:
                raise ToolError(f"{name}: unexpected argument{'s' if len(extra) > 1 else ''} "
                                f"{', '.join(extra)}; it takes {', '.join(sorted(declared)) or 'none'}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError) and not isinstance(error, UnexpectedToolError):
                raise ToolError(f"{name}: {validation_line(error.__cause__)}") from None
            raise


# --- the service: one contract, one store, one workspace ----------------------------------


class SerializedStore:
    """The store, used by one thread at a time (tool calls run concurrently in worker threads).

    The lock is held for one store operation, never across a whole check, so a check that is
    waiting for the developer's answer does not hold up other calls.
    """

    def __init__(self, store: Store, lock: threading.RLock) -> None:
        self._store = store
        self._lock = lock

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if not callable(attribute):
            return attribute

        @functools.wraps(attribute)
        def serialized(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attribute(*args, **kwargs)

        return serialized


class Service:
    """What the tools share: the contract, the store (opened once) and the default workspace."""

    def __init__(self, *, store_location: str | None, contract: Contract, workspace: Path, user: str | None) -> None:
        self.contract = contract
        self.workspace = workspace
        self.user = user
        self.store_location = store_location or default_location(workspace)
        self.lock = threading.RLock()
        self._store: Store | None = None
        self._serialized: SerializedStore | None = None
        self._sessions = 0

    @property
    def store(self) -> Any:
        """The store (opened on first use), serialized across worker threads."""
        with self.lock:
            if self._store is None:
                self._store = open_store(self.store_location, key_schema=self.contract, long_lived=True)
                self._serialized = SerializedStore(self._store, self.lock)
            assert self._serialized is not None
            return self._serialized

    def open(self) -> None:
        """Open the store now, so a bad location fails at start-up rather than on the first call."""
        self.store  # noqa: B018 - the property opens it

    def close(self) -> None:
        """Close the store (it reopens on next use)."""
        with self.lock:
            if self._store is not None:
                self._store.close()
                self._store = None
                self._serialized = None

    @asynccontextmanager
    async def lifespan(self, _server: Any) -> AsyncIterator[Service]:
        """Shared by every session of this server; the store is closed when the last one ends."""
        self._sessions += 1
        try:
            yield self
        finally:
            self._sessions -= 1
            if self._sessions == 0:
                await anyio.to_thread.run_sync(self.close)

    # --- where a call runs ----------------------------------------------------------------

    def workspace_for(self, workspace: str | None) -> Path:
        """The directory a call runs in: ``workspace`` (relative to the server's), or the server's."""
        if workspace is None:
            return self.workspace
        path = Path(workspace).expanduser()
        if not path.is_absolute():
            path = self.workspace / path
        if not path.is_dir():
            raise InputError(f"workspace {workspace!r}: not a directory")
        return path.resolve()

    def task_scope(self, workspace: Path) -> TaskScope:
        """The scope of a task run in ``workspace`` (its user, directory, repository and branch)."""
        return derive_task_scope(workspace, user=self.user)


def session_note(service: Service, workspace: Path) -> str:
    """The SessionStart hook's note for ``workspace`` (the same function, hence the same text
    and budget), computed against the server's store."""
    # Lazy: the hook module is only needed here. Its note builder takes a hook request; only
    # the cwd is read from it.
    from statewise.integrations.hooks import HookRequest, _session_context

    request = HookRequest(agent="claude-code", event="session", cwd=workspace, tool_name="", tool_input={})
    # The note opens its own connection and writes (import, check verdicts): hold the service's
    # lock so no other tool call is half-way through a transaction on the shared connection.
    with service.lock:
        return _session_context(request, store_location=service.store_location, contract=service.contract)


def tool_call(function: Callable[[], T]) -> T:
    """Run a tool body; a StateWise error or bad input becomes a tool error with one line."""
    try:
        return function()
    except ToolError:
        raise
    except ValidationError as error:
        raise ToolError(validation_line(error)) from None
    except (StateWiseError, ValueError, OSError) as error:
        raise ToolError(one_line(str(error))) from None


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) made one space."""
    return " ".join(text.split())


def validation_line(error: ValidationError) -> str:
    """A pydantic validation error as one line naming the first field at fault."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return one_line(f"{field}: {message}" if field else message)


