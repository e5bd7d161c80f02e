"""Which jobs a run has: the case set folders, which methods run on which set, and the
(set, scenario, condition, method) jobs in run order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statewise.bench.case import CONDITIONS, CaseSet, Scenario
from statewise.bench.methods import METHODS, method_names
from statewise.bench.metrics import VARIANT_METHODS
from statewise.bench.transfer import TransferSplit
from statewise.pipeline.guard import STAGES

__all__ = ["ABLATIONS", "DEFAULT_METHODS", "DEFAULT_SETS", "FULL_COMPARISON_SETS", "VARIANTS", "PlannedJob",
           "baseline_names", "plan_methods", "select_jobs", "set_folders"]

DEFAULT_METHODS = ("agent", "statewise")
#: The sets a run without ``sets`` covers (when the cases directory has them).
DEFAULT_SETS = ("primary",)
#: The sets ``--all`` runs the baselines and ablations on: the paper's RQ2 and RQ4 use the
#: primary set, and the sequences show what persistent repair saves on later tasks (RQ5);
#: running them on every set would not fit the time budget.
FULL_COMPARISON_SETS = ("primary", "sequences")
ABLATIONS = tuple(f"no_{stage}" for stage in STAGES)
#: What ``--all`` runs on every set besides agent and statewise: StateWise behind Claude
#: Code's hooks (``hook``), the paper's pipeline (``paper``) and the full guard reading the
#: rule planner's ``basis`` (``statewise_basis``, the white-box setting).
VARIANTS = VARIANT_METHODS


# --- which jobs a run has -----------------------------------------------------------------


def _holds_cases(folder: Path) -> bool:
    return any(f.is_file() and f.suffix in (".yaml", ".yml", ".json") for f in folder.iterdir())


def set_folders(root: str | Path) -> list[Path]:
    """The case set folders under ``root`` (sorted), or ``[root]`` when it holds cases itself."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"{root}: not a directory of case sets; name one with --cases DIR or "
                         "STATEWISE_BENCH_CASES")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and _holds_cases(p))
    if not folders and _holds_cases(root):
        folders = [root]
    return folders


def baseline_names() -> list[str]:
    """Every registered baseline (bundled, entry points, :func:`register_method`): every
    method except ``agent``, ``statewise``, the :data:`VARIANTS` and the ablations, in
    registration order."""
    return [m for m in method_names() if m not in DEFAULT_METHODS and m not in VARIANTS and not m.startswith("no_")]


def plan_methods(available: Sequence[str], *, sets: Sequence[str] | None = None,
                 methods: Sequence[str] | None = None, everything: bool = False,
                 cases: Sequence[str] | None = None) -> dict[str, tuple[str, ...]]:
    """Which methods run on which set, in run order: ``{set name: methods}``.

    ``available`` are the set names of the cases directory. With ``everything`` (``--all``):
    every set with agent, statewise and the :data:`VARIANTS` (hook, paper, statewise_basis,
    statewise_core),
    and on :data:`FULL_COMPARISON_SETS` (run first) also every baseline and every ablation; it cannot be combined with ``sets`` or ``methods``.
    Otherwise ``sets`` (default :data:`DEFAULT_SETS` when the directory has them, else every
    set; every set too when ``cases`` names the cases to run, since ids pick them) and
    ``methods`` (default :data:`DEFAULT_METHODS`) on each."""
    available = list(available)
    if everything:
        given = [name for name, value in (("sets", sets), ("methods", methods)) if value is not None]
        if given:
            raise ValueError(f"--all runs every set, baseline and ablation; it cannot be combined with "
                             f"{' or '.join('--' + g for g in given)} (drop --all to choose them yourself)")
        every = (*DEFAULT_METHODS, *VARIANTS)
        full = (*every, *baseline_names(), *ABLATIONS)
        # The main comparison first, so its table leads the summary.
        ordered = sorted(available, key=lambda name: name not in FULL_COMPARISON_SETS)
        return {name: full if name in FULL_COMPARISON_SETS else every for name in ordered}
    if sets is not None:
        chosen = list(dict.fromkeys(sets))
        missing = [name for name in chosen if name not in available]
        if missing:
            raise ValueError(f"no case set {', '.join(missing)}; sets here: {', '.join(available) or 'none'}")
    elif cases is None and all(name in available for name in DEFAULT_SETS):
        chosen = list(DEFAULT_SETS)
    else:
        chosen = available
    methods = tuple(dict.fromkeys(methods)) if methods is not None else DEFAULT_METHODS
    if not methods:
        raise ValueError("no method to run")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(method_names())}")
    return {name: methods for name in chosen}


@dataclass(frozen=True)
class PlannedJob:
    """One (set, scenario, condition, method) of a run, with the tags its episodes get on top
    of the case's own (the RQ6 split)."""

    case_set: CaseSet
    scenario: Scenario
    condition: str
    method: str
    tags: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.case_set.name, self.scenario.id, self.condition, self.method


def select_jobs(case_sets: Sequence[CaseSet], methods_by_set: Mapping[str, Sequence[str]],
                conditions: Sequence[str] = CONDITIONS, *, quick: bool = False, cases: Sequence[str] | None = None,
                transfer: TransferSplit | None = None) -> list[PlannedJob]:
    """Every job of a run, in order: per set, scenario, condition (those the scenario has) and
    method. ``quick`` keeps one case per (category, expected) and the first sequence of each
    set; ``cases`` keeps those ids; ``transfer`` tags the cases of its set."""
    planned = []
    for case_set in case_sets:
        scenarios = [s for s in case_set.scenarios if cases is None or s.id in cases]
        if quick:
            scenarios = _quick_subset(scenarios)
        for scenario in scenarios:
            tags = transfer.tags(scenario.id) if transfer is not None and case_set.name == transfer.set \
                and scenario.kind == "case" else ()
            for condition in scenario.conditions(conditions):
                for method in methods_by_set[case_set.name]:
                    planned.append(PlannedJob(case_set, scenario, condition, method, tags))
    return planned


def _quick_subset(scenarios: list[Scenario]) -> list[Scenario]:
    """One case per (category, expected), and the first sequence."""
    seen: set[tuple[Any, ...]] = set()
    chosen = []
    for scenario in scenarios:
        key = ("sequence",) if scenario.kind == "sequence" else (scenario.category, scenario.expected)
        if key not in seen:
            seen.add(key)
            chosen.append(scenario)
    return chosen
