"""The anchor: the least a key-value store could do for the same questions, on a 3-column schema.

Issue 27 measured StateWise against "the shared anchor's raw query": raw SQLite on a table of
three columns, ``(scope, key, value)``, with nothing else (no id, status, times, provenance,
version or lineage). The anchor's own script is not in this repository, so this module builds
what that description says, and store_speed.py times it in the same iterations as StateWise,
its own 19-column raw query and LangGraph:

* ``anchor_records(scope, key, value)`` holds each active record's scope, key and JSON value,
  with ``PRIMARY KEY (scope, key)`` (its automatic index is what both reads use), filled in
  the order the records were learned, as the store's rows are;
* get is ``SELECT value FROM anchor_records WHERE scope = ? AND key = ?``;
* retrieve is ``SELECT scope, key, value FROM anchor_records WHERE scope IN (<the task's
  applicable scopes>)``, handed the scope list ready-made, with no ranking or near misses;
* the history write is one transaction that copies the old row to
  ``anchor_history(scope, key, value)`` (three columns too, no index) and overwrites the
  value in place: the least write that still keeps the old value;
* the raw import (:func:`raw_import`) reads the same JSONL file the public import reads,
  ``json.loads`` each line and ``executemany`` the store's 19- and 9-column rows into a fresh
  store's schema in one transaction: the parsing a user's own import would do, with none of
  StateWise's validation.

The file uses the same PRAGMAs as the store (WAL, ``synchronous = NORMAL``).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ANCHOR_SCHEMA = (
    "CREATE TABLE anchor_records (scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, "
    "PRIMARY KEY (scope, key))",
    "CREATE TABLE anchor_history (scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL)",
)
ANCHOR_GET = "SELECT value FROM anchor_records WHERE scope = ? AND key = ?"
ANCHOR_COPY_OLD = "INSERT INTO anchor_history SELECT scope, key, value FROM anchor_records WHERE scope = ? AND key = ?"
ANCHOR_OVERWRITE = "UPDATE anchor_records SET value = ? WHERE scope = ? AND key = ?"


def open_anchor(path: Path) -> sqlite3.Connection:
    """A connection to the anchor's file, under the store's PRAGMAs."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def build_anchor(path: Path, active: Sequence[tuple[str, str, str]]) -> tuple[sqlite3.Connection, float]:
    """Create the anchor's file with ``active`` (scope, key, value JSON) rows; (connection, seconds)."""
    conn = open_anchor(path)
    started = time.perf_counter()
    for statement in ANCHOR_SCHEMA:
        conn.execute(statement)
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO anchor_records VALUES (?, ?, ?)", active)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return conn, time.perf_counter() - started


def anchor_get(conn: sqlite3.Connection, scope: str, key: str) -> Any:
    """The anchor's get: one row's value, or None."""
    return conn.execute(ANCHOR_GET, (scope, key)).fetchone()


def anchor_retrieve(conn: sqlite3.Connection, scopes: tuple[str, ...]) -> list[Any]:
    """The anchor's retrieve: every row in the task's applicable scopes."""
    return conn.execute(
        f"SELECT scope, key, value FROM anchor_records WHERE scope IN ({', '.join('?' * len(scopes))})", scopes,
    ).fetchall()


def anchor_history_write(conn: sqlite3.Connection, scope: str, key: str, value_json: str) -> None:
    """The anchor's history write: keep the old value, overwrite the current one, one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(ANCHOR_COPY_OLD, (scope, key))
        if conn.execute(ANCHOR_OVERWRITE, (value_json, scope, key)).rowcount != 1:
            raise RuntimeError(f"anchor history write: no row for ({scope}, {key})")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


# The raw import, run in a child process as the public import is. It parses every line with
# json.loads and builds the row tuples the store's schema takes, nothing more.
RAW_IMPORT_SCRIPT = """
import json, sqlite3, sys, time
from statewise.store.sqlite import SQLiteStore
from statewise.store.sql import LINK_COLUMNS, RECORD_COLUMNS
SQLiteStore(sys.argv[1]).close()  # a fresh store's schema, made by its migrations
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("PRAGMA synchronous = NORMAL")
insert_record = f"INSERT INTO sw_records ({RECORD_COLUMNS}) VALUES ({', '.join('?' * 19)})"
insert_link = f"INSERT INTO sw_links ({LINK_COLUMNS}) VALUES ({', '.join('?' * 9)})"
dumps = json.dumps
started = time.perf_counter()
conn.execute("BEGIN IMMEDIATE")
records, links, count = [], [], 0
with open(sys.argv[2], encoding="utf-8") as handle:
    for line in handle:
        item = json.loads(line)
        if item["type"] == "record":
            t, p = item["time"], item["provenance"]
            records.append((item["id"], item["key"], item["scope"], item["value_type"], dumps(item["value"]),
                            item["status"], t["observed_at"], t["recorded_at"], t["verified_at"], t["ttl_seconds"],
                            p["source"], p["authority"], p["actor"], p["reference"], item["supersedes"],
                            item["superseded_by"], item["version"], item["status_reason"],
                            item["status_changed_at"]))
        else:
            evidence = item["evidence"]
            links.append((item["id"], item["kind"], item["from_record"], item["to_record"], item["scope"],
                          None if evidence is None else dumps(evidence), item["reason"], item["actor"],
                          item["created_at"]))
        if len(records) + len(links) >= 10000:
            conn.executemany(insert_record, records)
            conn.executemany(insert_link, links)
            count += len(records) + len(links)
            records, links = [], []
conn.executemany(insert_record, records)
conn.executemany(insert_link, links)
count += len(records) + len(links)
conn.execute("COMMIT")
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
print(count, time.perf_counter() - started)
"""


def raw_import(tmp: Path, jsonl: Path, n_lines: int) -> dict[str, Any]:
    """The raw import of ``jsonl`` in a child process: wall seconds (of the import itself, as
    for ``Store.import_jsonl``) and the child's CPU seconds."""
    target = tmp / "imported-raw.db"
    child = subprocess.Popen([sys.executable, "-c", RAW_IMPORT_SCRIPT, str(target), str(jsonl)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    out, err = child.stdout.read(), child.stderr.read()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0 or out.split()[:1] != [str(n_lines)]:
        raise SystemExit(f"raw import failed: {out}{err}")
    for suffix in ("", "-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    return {"raw_seconds": float(out.split()[1]), "raw_cpu_seconds": usage.ru_utime + usage.ru_stime}


def active_triples(rows: Sequence[tuple[Any, ...]]) -> list[tuple[str, str, str]]:
    """(scope, key, value JSON) of the active rows among the store's encoded record rows, in order."""
    return [(row[2], row[1], row[4]) for row in rows if row[5] == "active"]


def check_same(kind: str, anchor_out: Any, expected: int) -> None:
    """Stop the run when the anchor's answer does not match the others' row count."""
    got = len(anchor_out) if isinstance(anchor_out, list) else (0 if anchor_out is None else 1)
    if got != expected:
        raise SystemExit(f"the anchor's {kind} returned {got} rows, the others {expected}")

