"""One episode of the benchmark: a scenario's tasks run under one condition and one method.

:func:`run_scenario` copies the workspace template, seeds the store (the target and the
records linked to it per condition; for a sequence the store carries over between tasks),
and for each task runs :func:`_run_step`: every step of the task planned by the planner and
decided by the method within the task's budget, the decision executed in the sandbox, then the
goal and invariant checks judged once (``y = goal and invariants``, ``v = not invariants``).
An episode the bench cannot judge is *unjudged*, with the reason; a method that raises is a
counted failure. :class:`Episode` is what one task yields.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import traceback
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from statewise.actions import Action
from statewise.bench.case import (
    Case,
    CaseSet,
    DeveloperSpec,
    RecordSpec,
    Scenario,
    Step,
    fill_placeholders,
    now_minus,
    scenario_of,
)
from statewise.bench.checks import JudgeContext
from statewise.bench.executor import BenchExecutor, UnsupportedByBench
from statewise.bench.methods import MethodInput, MethodResult, get_method, planner_for
from statewise.bench.sandbox import Sandbox, SandboxError, TemplateCache, instantiate
from statewise.contract import Contract, builtin_contract, parse_duration
from statewise.planners.base import Planner, Task
from statewise.planners.rules import Playbook, RulePlanner, builtin_playbook
from statewise.records import Provenance, RecordDraft
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope

__all__ = ["Episode", "build_planner", "run_episode", "run_scenario", "run_scenario_once"]


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
    #: A multi-step task: each method call (step, family, verdict, proposal, action, exits).
    steps: list[dict[str, Any]] = field(default_factory=list)
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
    probability P per call: :class:`~statewise.planners.wayward.WaywardPlanner`), or any spec
    :func:`statewise.planners.make_planner` knows."""
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
        # Records that vary with the target take the same condition.
        linked_specs = [linked.record(condition) for linked in scenario.linked]
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
                    for linked in linked_specs:
                        if linked is not None:
                            _seed_record(store, linked, values)
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


def _run_step(scenario: Scenario, step: Step, index: int, sandbox: Sandbox, store: SQLiteStore,
              contract: Contract, planner: Planner, method_name: str, seed: int, base: dict[str, Any],
              started: float, repaired_ids: set[str], contract_path: str | None = None) -> Episode:
    """One task of a scenario: each of its steps planned and decided by the method and executed,
    within its budget of method calls, then the goal and invariants judged once."""
    values = sandbox.placeholders()
    scope = derive_task_scope(sandbox.agent_dir, user=scenario.workspace.user)
    retrieval = store.retrieve(scope)
    context = retrieval.records + retrieval.stale
    context_keys = {r.id: r.key for r in context}
    repaired_retrieved = None
    if index > 0 and repaired_ids and scenario.target is not None:
        applying = [r for r in context if r.key == scenario.target.key]
        repaired_retrieved = bool(applying) and applying[0].id in repaired_ids
    developer = DeveloperSpec(intent=fill_placeholders(dict(step.developer.intent), values),
                              approves=step.developer.approves)
    judge = JudgeContext(root=sandbox.root, work=sandbox.work, origin=sandbox.origin,
                         fill=lambda text: fill_placeholders(text, values), store=store, env=sandbox.env)
    checks = list(step.goal) + list(step.invariants)
    try:
        for number, check in enumerate(checks):
            judge.before[number] = check.prepare(judge)
    except Exception as error:  # noqa: BLE001
        return _unjudged(base, f"preparing the checks: {type(error).__name__}: {error}", started)
    # Created before the method runs: a method may execute through it (MethodInput.execute), and
    # every command it runs is logged and judged like the final action.
    executor = BenchExecutor(sandbox)
    plans = step.plans
    budget = step.budget or len(plans)
    multi = len(plans) > 1 or budget > 1
    results: list[MethodResult] = []
    trail: list[dict[str, Any]] = []
    error_text: str | None = None
    done = 0  # steps completed
    calls = 0
    while done < len(plans) and calls < budget:
        family, spec = plans[done]
        calls += 1
        if calls > 1:  # a later step sees the store as the earlier ones left it
            later = store.retrieve(scope)
            context_keys.update({r.id: r.key for r in later.records + later.stale})
        task = Task(text=spec.text, scope=scope, family=family, workspace=str(sandbox.agent_dir),
                    id=f"{scenario.id}/{step.id}" + (f"/{done + 1}" if done else ""),
                    params=fill_placeholders(dict(spec.params), values))
        logged = len(executor.log)
        try:
            method = get_method(method_name)
            # No ground truth goes in: not the step (expected, critical, goal, invariants), not
            # the scenario. No white-box hint either: the planner's Action.basis is stripped
            # unless the method declares white_box (planner_for).
            result: MethodResult = method.run(MethodInput(
                task=task, store=store, contract=contract, planner=planner_for(method, planner),
                workspace=sandbox.agent_dir, environ=sandbox.env, developer=developer, seed=seed,
                execute=executor.run, store_location=str(store.path), contract_path=contract_path))
        except UnsupportedByBench as error:
            # The bench cannot perform what the method asked for: the bench's limit, not the method's.
            return _unjudged(base, str(error), started, commands=[c.to_dict() for c in executor.log],
                             **_decided(results, trail, multi))
        except Exception as error:  # noqa: BLE001 - a method that crashes is a failure, counted
            # As a user would see it: the tool crashed, the task is not done (y = 0). Whatever the
            # method already ran through MethodInput.execute is still judged for violations.
            error_text = f"method {method_name} raised {type(error).__name__}: {error}"
            result = MethodResult(verdict="error", action=None, reason=traceback.format_exc(limit=3))
        results.append(result)
        if result.verdict == "execute" and result.action is not None and not result.executed:
            try:
                executor.run(result.action)
            except UnsupportedByBench as error:
                return _unjudged(base, str(error), started, commands=[c.to_dict() for c in executor.log],
                                 **_decided(results, trail, multi))
            except Exception as error:  # noqa: BLE001
                return _unjudged(base, f"executing: {type(error).__name__}: {error}", started,
                                 commands=[c.to_dict() for c in executor.log], **_decided(results, trail, multi))
        ran = executor.log[logged:]
        failed = any(c.exit != 0 for c in ran)
        trail.append({"step": done, "family": family, "verdict": result.verdict, "proposal": _action(result.proposal),
                      "action": _action(result.action), "reason": result.reason[:500],
                      "exits": [c.exit for c in ran]})
        if result.verdict != "execute":
            break  # a stop (or a crash) ends the task: the later steps are not attempted
        if not failed:
            done += 1
        # A step whose command failed is planned again while the budget lasts, as an agent
        # retries after an error (a deterministic planner proposes the same again).
    judge.commands = executor.log
    decided = _decided(results, trail, multi)
    try:
        outcomes = [check.judge(judge, judge.before[number]) for number, check in enumerate(checks)]
    except Exception as error:  # noqa: BLE001 - a check that errors leaves the episode unjudged
        return _unjudged(base, f"judging: {type(error).__name__}: {error}", started,
                         commands=[c.to_dict() for c in executor.log], **decided)
    goal, invariants = outcomes[: len(step.goal)], outcomes[len(step.goal):]
    holds = all(o.passed for o in invariants)
    truth = {rid for rid, key in context_keys.items() if key in step.critical}
    premises = tp = fp = fn = None
    marked = [r.premises for r in results if r.premises is not None]
    if marked:
        predicted = {rid for ids in marked for rid in ids if rid in context_keys}
        premises = sorted(context_keys[rid] for rid in predicted)
        tp, fp, fn = len(predicted & truth), len(predicted - truth), len(truth - predicted)
    if scenario.target is not None:
        for repair in decided["repairs"]:
            if repair.get("key") == scenario.target.key and repair.get("kind") in ("supersede", "narrow") \
                    and repair.get("new_record_id"):
                repaired_ids.add(repair["new_record_id"])
    return Episode(
        **base, y=error_text is None and all(o.passed for o in goal) and holds, v=not holds, error=error_text,
        goal=[o.to_dict() for o in goal], invariants=[o.to_dict() for o in invariants],
        commands=[c.to_dict() for c in executor.log], premises=premises,
        critical=sorted(context_keys[rid] for rid in truth), tp=tp, fp=fp, fn=fn,
        repaired_retrieved=repaired_retrieved, wall_seconds=round(time.perf_counter() - started, 4), **decided,
    )


def _decided(results: Sequence[MethodResult], trail: list[dict[str, Any]], multi: bool) -> dict[str, Any]:
    """What the method decided over a task's steps, as Episode fields: costs summed; for one
    step exactly that step's result; for several, the first proposal, the last action and
    verdict (execute only when every step executed), and every step in ``steps``."""
    if not results:
        return {}
    first, last = results[0], results[-1]
    seconds = [r.guard_seconds for r in results if r.guard_seconds is not None]
    out: dict[str, Any] = dict(
        model_calls=sum(r.model_calls for r in results), tokens=sum(r.tokens for r in results),
        verifier_calls=sum(r.verifier_calls for r in results), questions=sum(r.questions for r in results),
        approvals=sum(r.approvals for r in results), guard_seconds=round(sum(seconds), 6) if seconds else None,
        hook_latencies=[x for r in results for x in r.hook_latencies],
        repairs=[x for r in results for x in r.repairs], proposal=_action(first.proposal))
    if not multi:
        out.update(verdict=first.verdict, action=_action(first.action), reason=first.reason, report=first.report,
                   guard_seconds=first.guard_seconds)
        return out
    verdicts = [r.verdict for r in results]
    executed = [r.action for r in results if r.verdict == "execute" and r.action is not None]
    out.update(verdict="error" if "error" in verdicts else last.verdict,
               action=_action(executed[-1]) if executed else None, reason=last.reason,
               report={"steps": [r.report for r in results]}, steps=list(trail))
    return out


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
