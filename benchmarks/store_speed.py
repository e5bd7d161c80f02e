"""Store speed: StateWise's SQLite store against a raw indexed SQLite query, side by side.

For each store size this script builds a SQLite store in a temporary directory, filled with
realistic records (about 50 users, 2,000 repositories with a few branches each, workspaces
under /home/<user>/src/<repo>, about 60 base keys, global/user/workspace/repo/branch scopes,
and some superseded, retracted and expired history), then times three operations, each
next to a raw SQLite statement that does the same database work on a plain ``sqlite3``
connection to the same file, in the same run, interleaved iteration by iteration:

* retrieve   ``store.retrieve(TaskScope(...))`` vs ``SELECT <record columns> FROM sw_records
  WHERE status = 'active' AND scope IN (<the task's applicable scopes>)``, all rows fetched;
* get_active ``store.get_active(key, scope)`` vs ``SELECT ... WHERE key = ? AND scope = ?
  AND status = 'active'``;
* supersede  ``store.supersede(record_id, evidence, expected_version=...)`` vs one raw write
  transaction doing the same writes (read the old row by id, UPDATE it with a version
  check, INSERT the new row, INSERT the link row) under the same PRAGMAs (WAL,
  synchronous=NORMAL).

Goals: retrieve p50 under 5 ms at 1,000,000 records, and every operation's p50 within 3x of
its raw query (ratio = statewise p50 / raw p50).

In the same run (issue 15) it also times LangGraph's ``SqliteStore`` on the same active
records (a benchmark-only dependency: ``pip install langgraph-checkpoint-sqlite``; skip it with
``--no-langgraph``), the public bulk import (``statewise record import`` and
``Store.import_jsonl``, each in a child process, with peak RSS), the guarded hook
(``hook_entry claude-code pre`` on ``git push origin feature`` in a real repository with a bare
origin) at each store size, and with ``--postgres DSN`` the PostgreSQL backend beside raw
psycopg plus ``--concurrent-hooks`` hook processes at once on that store with a lost-update
audit. A goals summary ends the output.

Usage::

    python benchmarks/store_speed.py --records 100000 1000000 [--iterations N] [--json OUT]
    python benchmarks/store_speed.py --records 10000 100000 1000000 --postgres postgresql://... \
        --postgres-records 100000 --concurrent-hooks 16

Loading a million records through ``store.put`` one at a time would take far too long, so
the records are built as validated :class:`statewise.records.Record` objects, encoded with
the store's own ``_record_params`` and bulk-inserted with ``executemany`` into the schema the
store's migrations created, in one transaction; links go through the store's own
``_insert_link``. At most one record per (key, scope) is active, as the store requires (its
partial unique index would reject anything else).

The code lives in ``benchmarks/storebench/`` (``dataset`` the records and goals, ``langgraph``
the peer, ``timing`` the side-by-side timings, ``imports`` the import and hook runs, ``runs`` a run
per size and the summary); this script is its command line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
from pathlib import Path

# The parts are a folder beside this script (benchmarks/ is not a package).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from storebench.runs import print_goals, run_size, source_state  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--iterations", type=int, default=2000, help="timed iterations per operation")
    parser.add_argument("--supersede-iterations", type=int, default=None,
                        help="timed supersede iterations (default: --iterations)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed iterations before timing")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--profile", type=int, default=0, metavar="CALLS",
                        help="also cProfile this many store.retrieve calls per size")
    parser.add_argument("--breakdown", type=int, default=0, metavar="CALLS",
                        help="also time the parts of store.retrieve separately over this many tasks")
    parser.add_argument("--tmpdir", default=None, help="where to build the temporary stores")
    parser.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="write the results as JSON")
    parser.add_argument("--no-langgraph", dest="langgraph", action="store_false",
                        help="skip LangGraph's SqliteStore (pip install langgraph-checkpoint-sqlite to run it)")
    parser.add_argument("--no-import", dest="imports", action="store_false",
                        help="skip timing `statewise record import` and Store.import_jsonl")
    parser.add_argument("--no-api-import", dest="api_import", action="store_false",
                        help="time only the CLI import, not Store.import_jsonl as well")
    parser.add_argument("--hook-calls", type=int, default=15,
                        help="guarded hook calls timed per size (0 skips the hook)")
    parser.add_argument("--postgres", default=None, metavar="DSN",
                        help="also run the PostgreSQL backend beside raw psycopg (a fresh schema, dropped after)")
    parser.add_argument("--postgres-records", type=int, default=None,
                        help="the --records size to run PostgreSQL at (default: the smallest)")
    parser.add_argument("--concurrent-hooks", type=int, default=16,
                        help="hook processes run at once on the PostgreSQL store (0 skips)")
    parser.add_argument("--hook-rounds", type=int, default=3, help="rounds of --concurrent-hooks processes")
    args = parser.parse_args(argv)

    machine = {
        "statewise_source": source_state(),
        "nproc": os.cpu_count(), "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(), "loadavg_at_start": os.getloadavg(),
    }
    print(f"python {machine['python']}, sqlite {machine['sqlite']}, {machine['nproc']} CPUs, "
          f"{machine['platform']}, load average {machine['loadavg_at_start'][0]:.2f}")
    print("command: python " + " ".join([sys.argv[0], *sys.argv[1:]]))
    print(f"statewise source: {machine['statewise_source']}")
    if args.langgraph:
        try:
            import langgraph.store.sqlite  # noqa: F401
        except ImportError:
            raise SystemExit("LangGraph's SqliteStore is not installed: pip install langgraph-checkpoint-sqlite "
                             "(a benchmark-only dependency), or pass --no-langgraph") from None
    runs = [run_size(n, args) for n in args.records]
    print_goals(runs)
    machine["loadavg_at_end"] = os.getloadavg()
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"machine": machine, "argv": sys.argv[1:], "runs": runs},
                                                  indent=2, default=str) + "\n")
        print(f"\nwrote {args.json_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
