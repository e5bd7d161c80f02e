"""Regenerate ``case.schema.json`` from the case models: ``python -m statewise.bench.schema``
(``--check`` exits 1 when the saved file is out of date instead of writing it)."""

from __future__ import annotations

import sys

from statewise.bench.case import SCHEMA_PATH, schema_text


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = schema_text()
    saved = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
    if "--check" in args:
        if saved != text:
            print(f"{SCHEMA_PATH} is out of date; run python -m statewise.bench.schema", file=sys.stderr)
            return 1
        return 0
    if saved != text:
        SCHEMA_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
