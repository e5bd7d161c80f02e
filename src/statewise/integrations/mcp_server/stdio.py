"""Running the MCP server: over stdio until the client closes the connection, and the
``python -m statewise.integrations.mcp_server`` entry point."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from statewise.errors import InputError, StateWiseError
from statewise.integrations.mcp_server.service import Service
from statewise.integrations.mcp_server.tools import build_server

__all__ = ["main", "serve_stdio"]


def serve_stdio(*, store_location: str | None, contract_path: str | None, workspace: str | None) -> None:
    """Serve StateWise over stdio until the client closes the connection (blocking).

    The store is opened before serving, so a bad location or contract fails here with a
    StateWise error instead of on the first call; it is closed when serving ends.
    """
    server = build_server(store_location=store_location, contract_path=contract_path, workspace=workspace)
    service: Service = server.statewise  # type: ignore[attr-defined]
    service.open()

    def stop(signum: int, _frame: object) -> None:
        # The SDK reads stdin in a worker thread, so Ctrl-C in a terminal would otherwise wait
        # for input that never comes: close the store (a write in flight is one transaction,
        # rolled back if unfinished) and leave.
        service.close()
        print(f"statewise mcp: stopped by {signal.Signals(signum).name}", file=sys.stderr, flush=True)
        os._exit(130 if signum == signal.SIGINT else 143)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run("stdio")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        service.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m statewise.integrations.mcp_server",
                                     description="Serve StateWise's store and guard over MCP (stdio).")
    parser.add_argument("--store", default=os.environ.get("STATEWISE_STORE"), metavar="LOCATION",
                        help="SQLite file or postgresql:// URL (default: $STATEWISE_STORE, else "
                             ".statewise/store.db in the project)")
    parser.add_argument("--contract", default=os.environ.get("STATEWISE_CONTRACT"), metavar="FILE",
                        help="contract file (default: $STATEWISE_CONTRACT, else the built-in coding contract)")
    parser.add_argument("--workspace", metavar="DIR", help="the directory tasks run in (default: here)")
    args = parser.parse_args(argv)
    try:
        serve_stdio(store_location=args.store, contract_path=args.contract, workspace=args.workspace)
    except StateWiseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2 if isinstance(error, InputError) else 1
    except KeyboardInterrupt:
        return 130
    return 0
