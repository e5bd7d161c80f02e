"""LangGraph's SqliteStore on the same active records: the comparison a user would make first.

Part of benchmarks/store_speed.py (split for size; the script documents the whole)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any


def lg_namespace(scope: str) -> tuple[str, ...]:
    """LangGraph namespace labels may not hold '.', so the scope is percent-encoded there."""
    return (scope.replace("%", "%25").replace(".", "%2E"),)


def open_langgraph(path: Path) -> Any:
    """LangGraph's SqliteStore on its own file, under the same PRAGMAs as the others."""
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    store = SqliteStore(conn)
    store.setup()
    return store


def lg_value(row: tuple[Any, ...]) -> dict[str, Any]:
    """What a LangGraph user keeps per (namespace, key): the value and its provenance."""
    return {"value": json.loads(row[4]), "value_type": row[3], "observed_at": row[6], "source": row[10],
            "authority": row[11], "actor": row[12]}


def load_langgraph(lg: Any, active_rows: list[tuple[Any, ...]]) -> float:
    """Put every active record (LangGraph keeps no history) in batches of 1,000; seconds."""
    from langgraph.store.base import PutOp

    started = time.perf_counter()
    for start in range(0, len(active_rows), 1000):
        lg.batch([PutOp(lg_namespace(row[2]), row[1], lg_value(row)) for row in active_rows[start:start + 1000]])
    return time.perf_counter() - started


def lg_retrieve(lg: Any, scopes: tuple[str, ...]) -> list[Any]:
    """A task's records from LangGraph: one search per applicable scope, in one batch call."""
    from langgraph.store.base import SearchOp

    results = lg.batch([SearchOp(lg_namespace(scope), limit=100_000) for scope in scopes])
    return [item for found in results for item in found]


