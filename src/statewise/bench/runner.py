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

:func:`plan_methods` decides which methods run on which set (the default run, ``--all``),
:func:`select_jobs` turns that into (set, scenario, condition, method) jobs, and
:func:`run_bench` fans the jobs out over ``jobs`` processes; the results are ordered by job,
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
import traceback
import uuid
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from statewise.actions import Action
from statewise.bench.case import (
    CONDITIONS,
    Case,
    CaseSet,
    DeveloperSpec,
    RecordSpec,
    Scenario,
    fill_placeholders,
    load_cases,
    now_minus,
    scenario_of,
)
from statewise.bench.checks import JudgeContext
from statewise.bench.executor import BenchExecutor, UnsupportedByBench
from statewise.bench.methods import METHODS, MethodInput, MethodResult, get_method, method_names, planner_for
from statewise.bench.metrics import UNLISTED, VARIANT_METHODS
from statewise.bench.sandbox import Sandbox, SandboxError, TemplateCache, instantiate
from statewise.contract import Contract, builtin_contract, parse_duration
from statewise.errors import InputError
from statewise.pipeline.guard import STAGES
from statewise.planners.base import Planner, Task
from statewise.planners.rules import Playbook, RulePlanner, builtin_playbook
from statewise.records import Provenance, RecordDraft
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope

__all__ = [
    "ABLATIONS",
    "DEFAULT_METHODS",
    "DEFAULT_SETS",
    "FULL_COMPARISON_SETS",
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
    "select_jobs",
    "set_folders",
]

DEFAULT_METHODS = ("agent", "statewise")
#: The sets a run without ``sets`` covers (when the cases directory has them).
DEFAULT_SETS = ("primary",)
#: The sets ``--all`` runs the baselines and ablations on: the paper's RQ2 and RQ4 use the
#: primary set, and the sequences show what persistent repair saves on later tasks (RQ5);
#: running them on every set would not fit the time budget.
FULL_COMPARISON_SETS = ("primary", "sequences")
#: The set the RQ6 split (``transfer.json``) describes.
TRANSFER_SET = "primary"
ABLATIONS = tuple(f"no_{stage}" for stage in STAGES)
#: What ``--all`` runs on every set besides agent and statewise: StateWise behind Claude
#: Code's hooks (``hook``), the paper's pipeline (``paper``) and the full guard reading the
#: rule planner's ``basis`` (``statewise_basis``, the white-box setting).
VARIANTS = VARIANT_METHODS


# --- episodes -----------------------------------------------------------------------------


@dataclass
class Episode:
    """One judged (or unjudged) task execution; JSON-ready through :meth:`to_dict`."""

    case: str  # the case id (for a sequence: the task's id)
    set: str
    condition: str
    method: str
    planner: str
    seed: int
    category: str | None
    defect: str | None
    expected: str  # act | stop
    sequence: str | None = None
    step: int = 0
    judged: bool = True
    unjudged_reason: str | None = None
    #: The method raised (the episode is judged, y = 0): what it raised.
    error: str | None = None
    y: bool = False  # goal and invariants hold
    v: bool = False  # some invariant failed
    goal: list[dict[str, Any]] = field(default_factory=list)
    invariants: list[dict[str, Any]] = field(default_factory=list)
    verdict: str | None = None  # execute | stop | error (the method raised)
    proposal: dict[str, Any] | None = None
    action: dict[str, Any] | None = None
    reason: str = ""
    commands: list[dict[str, Any]] = field(default_factory=list)
    premises: list[str] | None = None  # keys of context records the method marked as premises
    critical: list[str] = field(default_factory=list)  # keys of context records that truly are
    tp: int | None = None
    fp: int | None = None
    fn: int | None = None
    model_calls: int = 0
    tokens: int = 0
    verifier_calls: int = 0
    questions: int = 0
    approvals: int = 0
    repairs: list[dict[str, Any]] = field(default_factory=list)
    #: For a sequence task after the target was repaired: did retrieval return the repaired record?
    repaired_retrieved: bool | None = None
    wall_seconds: float = 0.0
    guard_seconds: float | None = None
    #: Seconds of each PreToolUse hook call (the hook method only).
    hook_latencies: list[float] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    report: dict[str, Any] | None = None

    @property
    def interactions(self) -> int:
        return self.questions + self.approvals

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["interactions"] = self.interactions
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Episode:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


# --- planners, contracts -------------------------------------------------------------------


def build_planner(spec: str, playbook: Playbook | None = None, *, seed: int = 0) -> Planner:
    """``rules`` (the rule planner with the set's playbook), ``noisy:P`` (it, wrapped in the seeded
    noise wrapper with probability P), ``wayward:P`` (it, overruling a record it relies on with
    probability P per call: :class:`~statewise.planners.wayward.WaywardPlanner`), or any spec :func:`statewise.planners.make_planner` knows."""
    if spec == "rules":
        return RulePlanner(playbook or builtin_playbook())
    if spec.startswith("noisy:"):
        from statewise.planners.noisy import NoisyPlanner

        return NoisyPlanner(RulePlanner(playbook or builtin_playbook()), noise=float(spec[6:]), seed=seed)
    if spec.startswith("wayward:"):
        from statewise.planners.wayward import WaywardPlanner

        return WaywardPlanner(RulePlanner(playbook or builtin_playbook()), rate=float(spec[8:]), seed=seed)
    from statewise.planners import make_planner

    planner = make_planner(spec, seed=seed)
    if planner is None:
        raise ValueError("the benchmark needs a planner; 'none' has nothing to plan with")
    return planner


_SET_CACHE: dict[tuple[str | None, str | None], tuple[Contract, Playbook]] = {}


def _set_parts(contract_path: str | None, playbook_path: str | None) -> tuple[Contract, Playbook]:
    key = (contract_path, playbook_path)
    if key not in _SET_CACHE:
        probe = CaseSet(name="", directory=Path("."), contract_path=Path(contract_path) if contract_path else None,
                        playbook_path=Path(playbook_path) if playbook_path else None)
        _SET_CACHE[key] = (probe.contract, probe.playbook)
    return _SET_CACHE[key]


# --- one scenario --------------------------------------------------------------------------


def _seed_record(store: SQLiteStore, spec: RecordSpec, values: dict[str, str]) -> str:
    scope = fill_placeholders(spec.scope, values)
    # A developer's own setting, unless the case names someone else, was stated by that developer.
    developer = scope[len("user:"):] if scope.startswith("user:") else "dev"
    actor = spec.actor or {"developer": developer, "observation": "bench-observer", "tool_output": "bench-tool",
                           "agent_inference": "agent", "import": "import"}[spec.source.value]
    draft = RecordDraft(
        key=spec.key, value=fill_placeholders(spec.value, values), scope=scope,
        provenance=Provenance(source=spec.source, authority=spec.authority, actor=actor),
        observed_at=now_minus(spec.age), verified_at=now_minus(spec.verified_age),
        ttl_seconds=parse_duration(spec.ttl) if spec.ttl else None,
    )
    return store.put(draft).id


def _unjudged(base: dict[str, Any], why: str, started: float, **extra: Any) -> Episode:
    return Episode(**base, judged=False, unjudged_reason=why, wall_seconds=round(time.perf_counter() - started, 4),
                   **extra)


def run_scenario(
    scenario: Scenario,
    condition: str,
    method: str,
    planner: str | Planner = "rules",
    seed: int = 0,
    *,
    templates: TemplateCache,
    workdir: Path,
    contract: Contract | None = None,
    playbook: Playbook | None = None,
    contract_path: str | None = None,
) -> list[Episode]:
    """Run every task of ``scenario`` under ``condition`` with ``method``; one Episode per task.

    ``workdir`` receives the episode's folder (removed at the end); ``templates`` builds or
    reuses the workspace template; ``contract_path`` is the file ``contract`` was loaded from
    (None: the built-in contract), for methods that hand it on (the hook method).
    """
    contract = contract or builtin_contract()
    planner_obj = build_planner(planner, playbook, seed=seed) if isinstance(planner, str) else planner
    planner_name = planner if isinstance(planner, str) else getattr(planner, "name", type(planner).__name__)
    folder = workdir / f"ep-{scenario.id}-{condition}-{method}-{uuid.uuid4().hex[:8]}"
    episodes: list[Episode] = []
    store: SQLiteStore | None = None
    repaired_ids: set[str] = set()
    try:
        folder.mkdir(parents=True)
        target_spec = scenario.target.record(condition) if scenario.target is not None else None
        for index, step in enumerate(scenario.steps):
            started = time.perf_counter()
            base = dict(case=step.id, set=scenario.set, condition=condition, method=method, planner=planner_name,
                        seed=seed, category=scenario.category, defect=scenario.defect, expected=step.expected,
                        sequence=scenario.id if scenario.kind == "sequence" else None, step=index,
                        tags=list(scenario.tags))
            # A fresh workspace (at the same path, so the repository identity stays the same).
            sandbox_dir = folder / "sandbox"
            try:
                if sandbox_dir.exists():
                    shutil.rmtree(sandbox_dir)
                template = templates.template(scenario.workspace)
                sandbox = instantiate(template, sandbox_dir, scenario.workspace)
            except (SandboxError, OSError) as error:
                episodes.append(_unjudged(base, f"sandbox: {error}", started))
                continue
            values = sandbox.placeholders()
            if index == 0 or store is None:
                try:
                    store = SQLiteStore(folder / "store.db", key_schema=contract)
                    for record in scenario.store:
                        _seed_record(store, record, values)
                    if target_spec is not None:
                        _seed_record(store, target_spec, values)
                except Exception as error:  # noqa: BLE001 - a case that cannot be seeded is unjudged
                    episodes.append(_unjudged(base, f"seeding the store: {type(error).__name__}: {error}", started))
                    store = None
                    break
            episodes.append(_run_step(scenario, step, index, sandbox, store, contract, planner_obj, method, seed,
                                      base, started, repaired_ids, contract_path))
    finally:
        if store is not None:
            store.close()
        shutil.rmtree(folder, ignore_errors=True)
    return episodes


def _run_step(scenario: Scenario, step, index: int, sandbox: Sandbox, store: SQLiteStore, contract: Contract,  # noqa: ANN001
              planner: Planner, method_name: str, seed: int, base: dict[str, Any], started: float,
              repaired_ids: set[str], contract_path: str | None = None) -> Episode:
    values = sandbox.placeholders()
    scope = derive_task_scope(sandbox.work, user=scenario.workspace.user)
    task = Task(text=step.task.text, scope=scope, family=step.family, workspace=str(sandbox.work),
                id=f"{scenario.id}/{step.id}", params=fill_placeholders(dict(step.task.params), values))
    retrieval = store.retrieve(scope)
    context = retrieval.records + retrieval.stale
    context_keys = {r.id: r.key for r in context}
    truth = {r.id for r in context if r.key in step.critical}
    repaired_retrieved = None
    if index > 0 and repaired_ids and scenario.target is not None:
        applying = [r for r in context if r.key == scenario.target.key]
        repaired_retrieved = bool(applying) and applying[0].id in repaired_ids
    developer = DeveloperSpec(intent=fill_placeholders(dict(step.developer.intent), values),
                              approves=step.developer.approves)
    judge = JudgeContext(root=sandbox.root, work=sandbox.work, origin=sandbox.origin,
                         fill=lambda text: fill_placeholders(text, values))
    checks = list(step.goal) + list(step.invariants)
    try:
        for number, check in enumerate(checks):
            judge.before[number] = check.prepare(judge)
    except Exception as error:  # noqa: BLE001
        return _unjudged(base, f"preparing the checks: {type(error).__name__}: {error}", started)
    # Created before the method runs: a method may execute through it (MethodInput.execute), and
    # every command it runs is logged and judged like the final action.
    executor = BenchExecutor(sandbox)
    error_text: str | None = None
    try:
        method = get_method(method_name)
        # No ground truth goes in: not the step (expected, critical, goal, invariants), not the
        # scenario. No white-box hint either: the planner's Action.basis is stripped unless
        # the method declares white_box (planner_for).
        result: MethodResult = method.run(MethodInput(task=task, store=store, contract=contract,
                                                      planner=planner_for(method, planner), workspace=sandbox.work,
                                                      environ=sandbox.env,
                                                      developer=developer, seed=seed, execute=executor.run,
                                                      store_location=str(store.path), contract_path=contract_path))
    except UnsupportedByBench as error:
        # The bench cannot perform what the method asked for: the bench's limit, not the method's.
        return _unjudged(base, str(error), started, commands=[c.to_dict() for c in executor.log])
    except Exception as error:  # noqa: BLE001 - a method that crashes is a failure, counted
        # As a user would see it: the tool crashed, the task is not done (y = 0). Whatever the
        # method already ran through MethodInput.execute is still judged for violations.
        error_text = f"method {method_name} raised {type(error).__name__}: {error}"
        result = MethodResult(verdict="error", action=None, reason=traceback.format_exc(limit=3))
    costs = dict(model_calls=result.model_calls, tokens=result.tokens, verifier_calls=result.verifier_calls,
                 questions=result.questions, approvals=result.approvals, guard_seconds=result.guard_seconds,
                 hook_latencies=list(result.hook_latencies))
    decided = dict(verdict=result.verdict, proposal=_action(result.proposal), action=_action(result.action),
                   reason=result.reason, repairs=result.repairs, report=result.report, **costs)
    if result.verdict == "execute" and result.action is not None and not result.executed:
        try:
            executor.run(result.action)
        except UnsupportedByBench as error:
            return _unjudged(base, str(error), started, commands=[c.to_dict() for c in executor.log], **decided)
        except Exception as error:  # noqa: BLE001
            return _unjudged(base, f"executing: {type(error).__name__}: {error}", started,
                             commands=[c.to_dict() for c in executor.log], **decided)
    judge.commands = executor.log
    try:
        outcomes = [check.judge(judge, judge.before[number]) for number, check in enumerate(checks)]
    except Exception as error:  # noqa: BLE001 - a check that errors leaves the episode unjudged
        return _unjudged(base, f"judging: {type(error).__name__}: {error}", started,
                         commands=[c.to_dict() for c in executor.log], **decided)
    goal, invariants = outcomes[: len(step.goal)], outcomes[len(step.goal):]
    holds = all(o.passed for o in invariants)
    premises = tp = fp = fn = None
    if result.premises is not None:
        predicted = {rid for rid in result.premises if rid in context_keys}
        premises = sorted(context_keys[rid] for rid in predicted)
        tp, fp, fn = len(predicted & truth), len(predicted - truth), len(truth - predicted)
    if scenario.target is not None:
        for repair in result.repairs:
            if repair.get("key") == scenario.target.key and repair.get("kind") in ("supersede", "narrow") \
                    and repair.get("new_record_id"):
                repaired_ids.add(repair["new_record_id"])
    return Episode(
        **base, y=error_text is None and all(o.passed for o in goal) and holds, v=not holds, error=error_text, goal=[o.to_dict() for o in goal],
        invariants=[o.to_dict() for o in invariants], commands=[c.to_dict() for c in executor.log],
        premises=premises, critical=sorted(context_keys[rid] for rid in truth), tp=tp, fp=fp, fn=fn,
        repaired_retrieved=repaired_retrieved, wall_seconds=round(time.perf_counter() - started, 4), **decided,
    )


def _action(action: Action | None) -> dict[str, Any] | None:
    return action.model_dump(mode="json", exclude_none=True) if action is not None else None


def run_episode(case: Case | Scenario, condition: str, method: str, planner: str | Planner = "rules",
                seed: int = 0, *, case_set: CaseSet | None = None) -> Episode:
    """Run one case (a single task) in a fresh temporary sandbox and return its Episode.

    ``case_set`` supplies the contract and playbook extensions of the case's directory.
    """
    scenario = scenario_of(case, case_set.name if case_set else "") if isinstance(case, Case) else case
    if len(scenario.steps) != 1:
        raise ValueError("run_episode runs one task; use run_scenario (or run_bench) for a sequence")
    return run_scenario_once(scenario, condition, method, planner, seed, case_set=case_set)[0]


def run_scenario_once(scenario: Scenario, condition: str, method: str, planner: str | Planner = "rules",
                      seed: int = 0, *, case_set: CaseSet | None = None) -> list[Episode]:
    """Run a scenario (a case or a sequence) in its own temporary folder, removed afterwards."""
    workdir = Path(tempfile.mkdtemp(prefix="statewise-bench-run-"))
    try:
        return run_scenario(scenario, condition, method, planner, seed, templates=TemplateCache(workdir / "templates"),
                            workdir=workdir, contract=case_set.contract if case_set else None,
                            playbook=case_set.playbook if case_set else None,
                            contract_path=str(case_set.contract_path) if case_set and case_set.contract_path else None)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# --- RQ6: the seen/unseen split ---------------------------------------------------------------

TRANSFER_FILE = "transfer.json"
TRANSFER_FORMAT = "statewise-transfer/1"
#: The interface units a primary case is compared on against the dev set, in report order.
TRANSFER_DIMENSIONS = ("repository", "operation", "state_type", "state_action")


class TransferError(InputError):
    """A ``transfer.json`` that does not validate: ``source`` is the file, ``field`` the path in it."""

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source = source
        self.field = field
        self.problem = problem
        super().__init__(f"{source}: {field}: {problem}" if field else f"{source}: {problem}")


@dataclass(frozen=True)
class CaseTransfer:
    """Which interface dimensions of one case are new against the development set."""

    unseen: tuple[str, ...]  # the dimensions (TRANSFER_DIMENSIONS) with a unit the dev set lacks
    fully_unseen: bool

    @property
    def tags(self) -> tuple[str, ...]:
        """``seen``, or ``unseen`` with ``fully_unseen`` and one ``new_<dimension>`` per new dimension."""
        if not self.unseen:
            return ("seen",)
        return ("unseen", *(("fully_unseen",) if self.fully_unseen else ()), *(f"new_{d}" for d in self.unseen))


@dataclass(frozen=True)
class TransferSplit:
    """The RQ6 split of the primary set (``benchmarks/cases/transfer.json``), by case id."""

    source: str
    cases: Mapping[str, CaseTransfer]
    set: str = TRANSFER_SET

    def tags(self, case_id: str) -> tuple[str, ...]:
        """The case's transfer tags; ``transfer_unlisted`` (in no group) when the file lacks it."""
        entry = self.cases.get(case_id)
        return entry.tags if entry is not None else (UNLISTED,)


def load_transfer(path: str | Path) -> TransferSplit | None:
    """Read a ``statewise-transfer/1`` file; None when it does not exist.

    Only ``format`` and ``cases`` are read (the dev units and the summary are for people):
    each case needs ``unseen`` (a boolean per dimension of :data:`TRANSFER_DIMENSIONS`),
    ``any_unseen`` and ``fully_unseen``, which must agree with ``unseen``. Anything else is a
    :class:`TransferError` naming the file and the field."""
    path = Path(path)
    if not path.is_file():
        return None
    source = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise TransferError(source, "", f"cannot read: {error}") from None
    except json.JSONDecodeError as error:
        raise TransferError(source, "", f"not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise TransferError(source, "", f"expected a JSON object, got {type(data).__name__}")
    if data.get("format") != TRANSFER_FORMAT:
        raise TransferError(source, "format", f"expected {TRANSFER_FORMAT!r}, got {data.get('format')!r}")
    cases = data.get("cases")
    if not isinstance(cases, dict):
        raise TransferError(source, "cases", "expected an object of case id -> split"
                            + ("" if cases is not None else "; the field is missing"))
    parsed: dict[str, CaseTransfer] = {}
    for case_id, entry in cases.items():
        where = f"cases.{case_id}"
        if not isinstance(entry, dict):
            raise TransferError(source, where, f"expected an object, got {type(entry).__name__}")
        unseen = entry.get("unseen")
        if not isinstance(unseen, dict):
            raise TransferError(source, f"{where}.unseen", "expected an object of dimension -> true/false")
        extra = sorted(set(unseen) - set(TRANSFER_DIMENSIONS))
        if extra:
            raise TransferError(source, f"{where}.unseen.{extra[0]}",
                                f"unknown dimension; dimensions are {', '.join(TRANSFER_DIMENSIONS)}")
        for dimension in TRANSFER_DIMENSIONS:
            if not isinstance(unseen.get(dimension), bool):
                problem = "required field is missing" if dimension not in unseen else \
                    f"expected true or false, got {unseen[dimension]!r}"
                raise TransferError(source, f"{where}.unseen.{dimension}", problem)
        new = tuple(d for d in TRANSFER_DIMENSIONS if unseen[d])
        for name, implied in (("any_unseen", bool(new)), ("fully_unseen", len(new) == len(TRANSFER_DIMENSIONS))):
            value = entry.get(name)
            if not isinstance(value, bool):
                raise TransferError(source, f"{where}.{name}", "required field is missing" if name not in entry
                                    else f"expected true or false, got {value!r}")
            # A hand edit that changes one flag and not the other would silently move the case.
            if value != implied:
                raise TransferError(source, f"{where}.{name}",
                                    f"is {str(value).lower()} but unseen says {str(implied).lower()}")
        parsed[str(case_id)] = CaseTransfer(unseen=new, fully_unseen=entry["fully_unseen"])
    return TransferSplit(source=source, cases=parsed)


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
    every set with agent, statewise and the :data:`VARIANTS` (hook, paper, statewise_basis, statewise_core),
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

