"""Running the benchmark: episodes in real sandboxes, in parallel, judged from what happened.

One *episode* is one task of one scenario under one condition and one method: a fresh copy
of the scenario's workspace template, the store (a fresh SQLite file seeded from the case,
the target record per condition; for a sequence the store carries over between tasks), the
method's decision, the execution of its action in the sandbox, and the judgement of the
case's goal and invariant checks (``y = goal and invariants``, ``v = not invariants``).
An episode that cannot be judged (the sandbox could not be built, seeding failed, the
executor cannot run the operation, a check errored: the bench's own failures) is *unjudged*,
with the reason, and never counts as a pass. A method that raises is not unjudged: it is a
failure (``y = 0``, verdict ``error``), counted in every rate, as a crashed tool is for its user.

The parts live in their own modules and are re-exported here: :mod:`statewise.bench.episode`
(one episode: :func:`run_scenario`, :class:`Episode`), :mod:`statewise.bench.jobs` (which
jobs: :func:`plan_methods` decides which methods run on which set, the default run or
``--all``, and :func:`select_jobs` turns that into (set, scenario, condition, method) jobs)
and :mod:`statewise.bench.transfer` (the RQ6 split). This module orchestrates a run:
:func:`run_bench` builds the templates once and fans the jobs out over ``jobs`` processes; the results are ordered by job,
so they do not depend on ``jobs``. When the cases directory holds ``transfer.json`` (the RQ6
seen/unseen split, :func:`load_transfer`), the primary set's episodes carry its tags.
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from statewise.bench.case import CONDITIONS, Scenario, load_cases
from statewise.bench.episode import (
    Episode,
    _set_parts,
    build_planner,
    run_episode,
    run_scenario,
    run_scenario_once,
)
from statewise.bench.jobs import (
    ABLATIONS,
    DEFAULT_METHODS,
    DEFAULT_SETS,
    FULL_COMPARISON_SETS,
    VARIANTS,
    PlannedJob,
    baseline_names,
    plan_methods,
    select_jobs,
    set_folders,
)
from statewise.bench.methods import METHODS, method_names
from statewise.bench.metrics import UNLISTED
from statewise.bench.sandbox import SandboxError, TemplateCache
from statewise.bench.transfer import (
    TRANSFER_DIMENSIONS,
    TRANSFER_FILE,
    TRANSFER_FORMAT,
    TRANSFER_SET,
    CaseTransfer,
    TransferError,
    TransferSplit,
    load_transfer,
)

__all__ = [
    "ABLATIONS",
    "DEFAULT_METHODS",
    "DEFAULT_SETS",
    "FULL_COMPARISON_SETS",
    "TRANSFER_DIMENSIONS",
    "TRANSFER_FILE",
    "TRANSFER_FORMAT",
    "TRANSFER_SET",
    "VARIANTS",
    "BenchResult",
    "CaseTransfer",
    "Episode",
    "PlannedJob",
    "TransferError",
    "TransferSplit",
    "baseline_names",
    "build_planner",
    "default_cases_dir",
    "load_transfer",
    "plan_methods",
    "run_bench",
    "run_episode",
    "run_scenario",
    "run_scenario_once",
    "select_jobs",
    "set_folders",
]

# --- the whole benchmark -------------------------------------------------------------------


@dataclass(frozen=True)
class _Job:
    index: int
    scenario: Scenario
    condition: str
    method: str
    planner: str
    seed: int
    contract_path: str | None
    playbook_path: str | None
    workdir: str
    templates: str
    modules: tuple[str, ...]
    tags: tuple[str, ...] = ()


def _run_job(job: _Job) -> tuple[int, list[dict[str, Any]]]:
    for module in job.modules:
        importlib.import_module(module)
    contract, playbook = _set_parts(job.contract_path, job.playbook_path)
    episodes = run_scenario(job.scenario, job.condition, job.method, job.planner, job.seed,
                            templates=TemplateCache(Path(job.templates)), workdir=Path(job.workdir),
                            contract=contract, playbook=playbook, contract_path=job.contract_path)
    for episode in episodes:
        episode.tags = list(dict.fromkeys([*episode.tags, *job.tags]))
    return job.index, [e.to_dict() for e in episodes]


def default_cases_dir() -> Path:
    """``$STATEWISE_BENCH_CASES``, else ``./benchmarks/cases``, else the cases shipped in the
    wheel (``statewise/bench/cases``), else the source tree's."""
    env = os.environ.get("STATEWISE_BENCH_CASES")
    if env:
        return Path(env)
    here = Path.cwd() / "benchmarks" / "cases"
    if here.is_dir():
        return here
    shipped = Path(__file__).resolve().parent / "cases"
    if shipped.is_dir():
        return shipped
    return Path(__file__).resolve().parents[3] / "benchmarks" / "cases"


@dataclass
class BenchResult:
    """Every episode of a run, and how it was run. Metrics are computed from the episodes."""

    planner: str
    seed: int
    sets: list[str]
    methods: list[str]
    conditions: list[str]
    episodes: list[Episode]
    jobs: int = 1
    quick: bool = False
    started: str = ""
    wall_seconds: float = 0.0
    bootstrap: int = 2000
    #: set -> the methods run on it (they differ per set with ``--all``)
    methods_by_set: dict[str, list[str]] = field(default_factory=dict)
    everything: bool = False
    #: the transfer.json whose tags the primary set's episodes carry, if any
    transfer: str | None = None
    #: cases of that set the transfer file does not list (tagged ``transfer_unlisted``, in no group)
    transfer_unlisted: list[str] = field(default_factory=list)
    _metrics: tuple[tuple[int, int, int, int], dict[str, Any]] | None = field(default=None, init=False, repr=False,
                                                                               compare=False)

    def metrics(self) -> dict[str, Any]:
        """:func:`statewise.bench.metrics.aggregate` of the episodes. Computed once per episode
        list: the bootstraps of a full run take tens of seconds, and the JSON, the terminal
        summary and the HTML report all need them."""
        from statewise.bench.metrics import aggregate

        key = (id(self.episodes), len(self.episodes), self.bootstrap, self.seed)
        if self._metrics is None or self._metrics[0] != key:
            self._metrics = (key, aggregate(self.episodes, bootstrap=self.bootstrap, seed=self.seed))
        return self._metrics[1]

    def to_dict(self, *, include_reports: bool = True) -> dict[str, Any]:
        episodes = [e.to_dict() for e in self.episodes]
        if not include_reports:
            for episode in episodes:
                episode["report"] = None
        return {
            "format": "statewise-bench/1", "planner": self.planner, "seed": self.seed, "sets": self.sets,
            "methods": self.methods, "methods_by_set": self.methods_by_set, "all": self.everything,
            "conditions": self.conditions, "jobs": self.jobs, "quick": self.quick, "started": self.started,
            "wall_seconds": self.wall_seconds, "transfer": self.transfer, "transfer_unlisted": self.transfer_unlisted,
            "metrics": self.metrics(), "episodes": episodes,
        }

    def write_json(self, path: str | Path, *, include_reports: bool = True) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(include_reports=include_reports), indent=1, default=str),
                        encoding="utf-8")
        return path

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BenchResult:
        return cls(planner=data["planner"], seed=data["seed"], sets=data["sets"], methods=data["methods"],
                   conditions=data["conditions"], episodes=[Episode.from_dict(e) for e in data["episodes"]],
                   jobs=data.get("jobs", 1), quick=data.get("quick", False), started=data.get("started", ""),
                   wall_seconds=data.get("wall_seconds", 0.0),
                   bootstrap=(data.get("metrics") or {}).get("bootstrap", {}).get("resamples")
                   or (200 if data.get("quick") else 2000),
                   methods_by_set=data.get("methods_by_set") or {s: list(data["methods"]) for s in data["sets"]},
                   everything=data.get("all", False), transfer=data.get("transfer"),
                   transfer_unlisted=data.get("transfer_unlisted") or [])


def run_bench(
    cases_dir: str | Path | None = None,
    *,
    sets: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    conditions: Sequence[str] = CONDITIONS,
    planner_spec: str = "rules",
    quick: bool = False,
    jobs: int = 2,
    out: str | Path | None = None,
    progress: bool = True,
    seed: int = 0,
    cases: Sequence[str] | None = None,
    console: Any = None,
    everything: bool = False,
    progress_console: Any = None,
) -> BenchResult:
    """Run the benchmark and return every episode (and write JSON to ``out`` when given).

    ``cases_dir`` holds one folder per set (default :func:`default_cases_dir`). Which methods
    run on which sets is :func:`plan_methods`'s: ``sets`` picks folders (default: the
    primary set when there is one, else every set; every set when ``cases`` is given);
    ``methods`` are names from :data:`statewise.bench.methods.METHODS` (default agent and
    statewise); ``everything`` (``--all``) runs every set with agent and statewise plus every
    baseline and ablation on the primary set and the sequences, and excludes ``sets`` and
    ``methods``.
    ``conditions`` is a subset of correct, corrupted, removed; ``planner_spec`` is ``rules``,
    ``noisy:P`` or a model spec; ``quick`` runs one case per (category, expected) and the
    first sequence of each set, with 200 bootstrap resamples instead of 2000; ``jobs`` worker
    processes (1: in this process); ``cases`` limits the run to these case or sequence ids
    (an id found in no chosen set is an error); ``progress`` shows a progress bar and the
    final tables on ``console`` (a rich Console; default stdout). A ``transfer.json`` in
    ``cases_dir`` tags the primary set's episodes (:func:`load_transfer`).
    """
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad:
        raise ValueError(f"unknown condition(s) {', '.join(bad)}; conditions are {', '.join(CONDITIONS)}")
    if not conditions:
        raise ValueError("no condition to run")
    if methods is not None:  # before touching the cases directory: a typo is the likelier mistake
        unknown = [m for m in methods if m not in METHODS]
        if unknown:
            raise ValueError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(method_names())}")
    root = Path(cases_dir) if cases_dir is not None else default_cases_dir()
    folders = {folder.name: folder for folder in set_folders(root)}
    plan = plan_methods(list(folders), sets=sets, methods=methods, everything=everything, cases=cases)
    case_sets = [load_cases(folders[name]) for name in plan]
    if cases is not None:
        known = {s.id for case_set in case_sets for s in case_set.scenarios}
        missing = [c for c in cases if c not in known]
        if missing:
            raise ValueError(f"no case or sequence {', '.join(missing)} in the set(s) {', '.join(plan)}")
    transfer = load_transfer(root / TRANSFER_FILE) if TRANSFER_SET in plan else None
    planned = select_jobs(case_sets, plan, conditions, quick=quick, cases=cases, transfer=transfer)
    unlisted = list(dict.fromkeys(p.scenario.id for p in planned if UNLISTED in p.tags))
    all_methods = list(dict.fromkeys(m for names in plan.values() for m in names))
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    clock = time.perf_counter()
    modules = tuple(sorted({getattr(METHODS[m], "__module__", "") for m in all_methods}
                           - {"", __name__, "statewise.bench.methods"}))
    workdir = Path(tempfile.mkdtemp(prefix="statewise-bench-run-"))
    try:
        templates = TemplateCache(workdir / "templates")
        # Every distinct workspace is built once, here (concurrently); workers copy the templates.
        _build_templates(templates, [p.scenario.workspace for p in planned], jobs)
        jobs_list = [_Job(
            index=index, scenario=p.scenario, condition=p.condition, method=p.method, planner=planner_spec, seed=seed,
            contract_path=str(p.case_set.contract_path) if p.case_set.contract_path else None,
            playbook_path=str(p.case_set.playbook_path) if p.case_set.playbook_path else None,
            workdir=str(workdir), templates=str(workdir / "templates"), modules=modules, tags=p.tags,
        ) for index, p in enumerate(planned)]
        # The bar may go elsewhere than the tables (the CLI: stderr), so piped stdout holds results only.
        results = _execute(jobs_list, jobs, progress=progress and progress_console is not False,
                           console=progress_console or console)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    episodes = [Episode.from_dict(e) for index in sorted(results) for e in results[index]]
    result = BenchResult(planner=planner_spec, seed=seed, sets=[s.name for s in case_sets], methods=all_methods,
                         conditions=list(conditions), episodes=episodes, jobs=jobs, quick=quick, started=started_at,
                         wall_seconds=round(time.perf_counter() - clock, 3), bootstrap=200 if quick else 2000,
                         methods_by_set={name: list(names) for name, names in plan.items()}, everything=everything,
                         transfer=transfer.source if transfer is not None else None, transfer_unlisted=unlisted)
    if out is not None:
        result.write_json(out)
    if progress:
        from statewise.bench.report import print_summary

        print_summary(result, console=console)
    return result


def _build_templates(templates: TemplateCache, specs: list[Any], jobs: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    distinct = list({templates.key(spec): spec for spec in specs}.values())

    def build(spec: Any) -> None:
        try:
            templates.template(spec)
        except SandboxError:
            pass  # its episodes will be unjudged, with the reason

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(build, distinct))


def _execute(jobs_list: list[_Job], jobs: int, *, progress: bool, console: Any) -> dict[int, list[dict[str, Any]]]:
    results: dict[int, list[dict[str, Any]]] = {}
    bar = _progress(console) if progress else None
    task_id = bar.add_task("episodes", total=len(jobs_list)) if bar is not None else None

    def done(index: int, episodes: list[dict[str, Any]]) -> None:
        results[index] = episodes
        if bar is not None:
            bar.advance(task_id)

    if jobs <= 1 or len(jobs_list) <= 1:
        if bar is not None:
            bar.start()
        try:
            for job in jobs_list:
                done(*_run_job(job))
        finally:
            if bar is not None:
                bar.stop()
        return results
    # fork: workers start on the first submit, before the progress bar's thread exists, and
    # need no re-import of the caller's main module (a script without a __main__ guard works).
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        # Longest scenarios (sequences) first, for a better balance; results are keyed by index.
        ordered = sorted(jobs_list, key=lambda job: -len(job.scenario.steps))
        futures = [pool.submit(_run_job, job) for job in ordered]
        if bar is not None:
            bar.start()
        try:
            for future in _as_completed(futures):
                done(*future.result())
        finally:
            if bar is not None:
                bar.stop()
    return results


def _as_completed(futures: Iterable[Any]) -> Iterable[Any]:
    from concurrent.futures import as_completed

    return as_completed(list(futures))


def _progress(console: Any) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("[bold]bench[/bold] {task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=False)

