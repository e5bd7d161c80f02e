"""Generate the paper's benchmark case sets (section 5.1) as case files.

    python benchmarks/generate_cases.py                 # (re)write benchmarks/cases/<set>/
    python benchmarks/generate_cases.py --out DIR       # write the sets under DIR instead
    python benchmarks/generate_cases.py --verify        # run the plain agent on every case:
                                                        # it must pass under `correct` and, for
                                                        # value defects, fail under `corrupted`
    python benchmarks/generate_cases.py --verify --sets primary,beyond --jobs 2
    python benchmarks/generate_cases.py --transfer-only # rewrite only transfer.json (after dev/
                                                        # changed), leaving every set as it is

Sets (docs/cases.md describes the format; each folder's README.md describes the set):

    primary/            150 cases, 125 act + 25 stop, six categories x five value defects
    erroneous/          150 cases, 105 act + 45 stop, erroneous target values
    defective_context/  150 cases, 105 act + 45 stop, correct values with defective metadata
    planners/            20 cases for comparing planners
    sequences/           32 four-task sequences (the store carries over, nothing else)
    beyond/              interacting records, conflicting corrections, partial evidence
    transfer.json        seen/unseen interface units of the primary set against dev/ (RQ6)

How a case is made. A *template* is one task family in one category over one state key
(`TEMPLATES`, e.g. `push_protected`: push_changes x git_policy x repository.protected). It
has a table of *rows* (values, branches, packages...; each row says whether the correct
outcome is to act or to stop) and a list of *repositories* (`REPOS`: named layouts; the ones
the dev set uses are "seen" (seven of them also used here, two by dev cases only), the others
are new). A *defect variant* (`VALUE_VARIANTS`,
`CONTEXT_VARIANTS`) says how the corrupted target record differs from the correct one: its
value and provenance (wrong_value, stale_value, ...) or only its metadata
(correct_value_defective_metadata). The set builders walk a fixed allocation (category x
defect x act/stop) and draw template, row, repository and variant round-robin from tables
shuffled once with a fixed seed, so the output is deterministic and every cell is spread
over different repositories, values, families and scopes.

Every case builds a real sandbox (git with a bare origin whose hook enforces protection,
files, shims for every tool any condition may run, env, venvs) and is judged from what
happens there. Nothing here knows StateWise's internals; the cases are written as an
evaluator would write them.

The code lives in ``benchmarks/casegen/`` (one module per part: ``base`` the layouts, ``texts``
the set contract and playbook, ``specs`` the builders and template registry, ``families_env`` and
``families_repo`` the templates, ``sets`` the set builders, ``writing`` transfer, output and
verification); this script is its command line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# The parts are a folder beside this script (benchmarks/ is not a package): put it on the path
# also when the script is loaded as a module (tests/bench/conftest.py does).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from casegen.base import CASES, REPOS, SET_NAMES, dev_case_maps  # noqa: E402
from casegen.writing import dev_units, generate, verify, write_transfer  # noqa: E402

#: What the tests and other scripts use of the generator, as before the split.
__all__ = ["CASES", "REPOS", "SET_NAMES", "dev_case_maps", "dev_units", "generate", "main", "verify", "write_transfer"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=CASES, help="where to write the sets (default: benchmarks/cases)")
    parser.add_argument("--verify", action="store_true",
                        help="after writing, run the plain agent on every case (correct and corrupted)")
    parser.add_argument("--no-write", action="store_true", help="with --verify: check the sets as they are")
    parser.add_argument("--transfer-only", action="store_true",
                        help="rewrite only transfer.json (after dev/ changed), leaving every set as it is")
    parser.add_argument("--sets", default=",".join(SET_NAMES), help="sets to verify (comma-separated)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if args.transfer_only:
        summary = write_transfer(out=args.out)["summary"]
        print(f"wrote {args.out / 'transfer.json'}: " + ", ".join(f"{k} {v}" for k, v in summary.items()))
        return 0
    if not args.no_write:
        counts = generate(args.out)
        print("wrote " + ", ".join(f"{name}/ ({count})" for name, count in counts.items()) + f" under {args.out}")
    if args.verify:
        problems = verify(args.out, [s for s in args.sets.split(",") if s], args.jobs)
        for problem in problems:
            print(problem)
        print(f"verify: {len(problems)} problem(s)")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
