"""The methods the benchmark compares, behind one small interface.

A method gets a :class:`MethodInput` (the task, the episode's store, the contract, the
planner, the sandbox's workspace and environment, the simulated developer) and returns a
:class:`MethodResult`: the action to execute (or a stop), the planner's original proposal,
which records it marked as decision-critical premises (None when the method does not
attribute), and its costs. The runner executes the action, judges the sandbox and computes
the metrics; it knows nothing else about the method.

Register a new method (a baseline such as bare approval, risk routing or live refresh) with
:func:`register_method`; the runner then accepts its name::

    class BareApproval:
        name = "bare_approval"
        def run(self, inp: MethodInput) -> MethodResult:
            proposal = propose(inp)                      # the agent's own proposal
            ok = inp.approver().approve(ApprovalRequest(proposal, "approve this action?", inp.task.text))
            return MethodResult.from_proposal(proposal, execute=ok, approvals=1, reason="...")

    register_method("bare_approval", BareApproval)

Built in: ``agent`` (no guard: the planner's proposal executes), ``statewise`` (the full
guard), ``no_<stage>`` for every stage of :data:`statewise.pipeline.guard.STAGES`, ``paper``
(the guard with the paper's settings, :data:`PAPER_SETTINGS`), ``statewise_basis`` (the full
guard reading the rule planner's ``Action.basis``: the white-box setting), ``statewise_core``
(the full guard with only the built-in coding contract's invariants) and ``hook``
(StateWise behind Claude Code's hooks, :mod:`statewise.bench.hookmode`). Every method but a
``white_box`` one gets the planner without ``basis`` (:func:`planner_for`).

Methods registered by other modules are found by name on first use, so the CLI knows them
too: :data:`BUNDLED_METHODS` names the bundled ones, ``hook`` and the RQ2 baselines (their
modules, :mod:`statewise.bench.hookmode` and ``statewise.bench.baselines``, register them with
:func:`register_method` when imported; this module never imports them), and the entry-point group
``statewise.bench_methods`` names a third party's (a factory, or a module that registers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from statewise.actions import Action
from statewise.bench.case import DeveloperSpec
from statewise.clarify import ScriptedApprover, ScriptedClarifier
from statewise.contract import Contract
from statewise.errors import UnknownPluginError
from statewise.pipeline.guard import STAGES, Guard, GuardConfig
from statewise.planners.base import (
    ContextRecord,
    Plan,
    Planner,
    PlanningContext,
    Statement,
    Task,
    as_plan,
    read_corrections,
    samples_stochastically,
)
from statewise.store.base import Store

__all__ = [
    "BUNDLED_METHODS",
    "METHODS",
    "PAPER_SETTINGS",
    "Method",
    "MethodInput",
    "MethodResult",
    "WithoutBasis",
    "core_invariants_contract",
    "get_method",
    "load_method_plugins",
    "method_names",
    "planner_for",
    "planning_context",
    "propose",
    "register_method",
]


@dataclass
class MethodInput:
    """Everything a method may use for one task of one episode.

    It holds no ground truth: not the case's ``expected`` outcome, its ``critical`` keys, its
    ``goal`` or ``invariants`` checks, nor the step or scenario they come from (the runner
    keeps those to judge the episode; tests/bench/test_ground_truth.py proves a method cannot
    reach them). The simulated developer answers questions and approvals from the case's
    intent, as a developer who knows their own project would; that is the only case-specific
    knowledge a method can reach, and only by asking.
    """

    task: Task
    store: Store
    contract: Contract
    planner: Planner
    workspace: Path
    environ: Mapping[str, str]
    developer: DeveloperSpec  # placeholders already filled
    seed: int = 0
    #: Run an action now, in the episode's sandbox, through the bench executor: it is logged and
    #: judged like the final action, and the command record (exit status, output excerpts) is
    #: returned. For methods that learn from tool output (e.g. the tool_feedback baseline).
    #: None outside the runner.
    execute: Callable[[Action], Any] | None = None
    #: Where the episode's store lives (a SQLite file) and the set's contract file (None: the
    #: built-in coding contract): what a hook needs to open the same store with the same keys.
    store_location: str | None = None
    contract_path: str | None = None

    def clarifier(self) -> ScriptedClarifier:
        """A fresh simulated developer answering from the case's intent."""
        return ScriptedClarifier(dict(self.developer.intent))

    def approver(self) -> ScriptedApprover:
        """A fresh simulated developer answering approval requests: it reads the prompt first
        (:class:`statewise.bench.developer_reads.ReadingApprover`), then its standing approvals."""
        from statewise.bench.developer_reads import ReadingApprover

        allow = self.developer.approves
        return ReadingApprover(None if allow == "all" else frozenset(allow), intent=dict(self.developer.intent))


@dataclass
class MethodResult:
    verdict: str  # execute | stop
    action: Action | None  # what to execute (None for a stop)
    proposal: Action | None = None  # the planner's first proposal
    reason: str = ""
    premises: tuple[str, ...] | None = None  # record ids marked decision-critical; None: not attributed
    model_calls: int = 0
    tokens: int = 0
    verifier_calls: int = 0
    questions: int = 0
    approvals: int = 0
    guard_seconds: float | None = None
    repairs: list[dict[str, Any]] = field(default_factory=list)
    report: dict[str, Any] | None = None
    #: The method already ran ``action`` through ``MethodInput.execute``; the runner does not run it again.
    executed: bool = False
    #: Seconds of each PreToolUse hook call (the ``hook`` method): the latency an agent waits.
    hook_latencies: list[float] = field(default_factory=list)

    @classmethod
    def from_proposal(cls, proposal: Action, *, execute: bool = True, reason: str = "", **costs: Any) -> MethodResult:
        go = execute and not proposal.is_stop
        return cls(verdict="execute" if go else "stop", action=proposal if go else None, proposal=proposal,
                   reason=reason or (proposal.reason if proposal.is_stop else ""), **costs)


@runtime_checkable
class Method(Protocol):
    name: str

    def run(self, inp: MethodInput) -> MethodResult: ...


def planning_context(store: Store, task: Task) -> PlanningContext:
    """What a planner sees for ``task``: the applying records, fresh ones first, stale ones
    flagged (the same context the guard builds for its first proposal)."""
    retrieval = store.retrieve(task.scope)
    stale = {r.id for r in retrieval.stale}
    return PlanningContext.of(ContextRecord.from_record(r, stale=r.id in stale)
                              for r in retrieval.records + retrieval.stale)


def propose(inp: MethodInput) -> tuple[Action, int, int]:
    """The agent's own proposal: (action, model calls, tokens)."""
    plan = as_plan(inp.planner.plan(inp.task, planning_context(inp.store, inp.task)))
    tokens = plan.usage.input_tokens + plan.usage.output_tokens if plan.usage else 0
    return plan.action, 1, tokens


class AgentMethod:
    """No intervention: whatever the planner proposes from its memory is executed."""

    name = "agent"

    def run(self, inp: MethodInput) -> MethodResult:
        action, calls, tokens = propose(inp)
        return MethodResult.from_proposal(action, model_calls=calls, tokens=tokens)


class WithoutBasis:
    """A planner's answers without ``Action.basis`` (the state keys a stop was decided from).

    Only the rule planner fills ``basis``; the model planners' prompt and schema have no such
    field, so a guard that used it would get a white-box hint no real planner gives. The bench
    therefore hands every method the planner wrapped in this, unless the method declares
    ``white_box = True`` (``statewise_basis``, to show what the hint is worth). Sampling
    (``stochastic``) and feedback reading (``read_feedback``) are the wrapped planner's."""

    def __init__(self, inner: Planner) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)

    @property
    def stochastic(self) -> bool:
        return samples_stochastically(self.inner)

    def read_feedback(self, text: str, source: str) -> tuple[Statement, ...]:
        reader = getattr(self.inner, "read_feedback", None)
        return reader(text, source) if reader is not None else read_corrections(text, source)

    def plan(self, task: Task, context: PlanningContext) -> Action | Plan:
        result = self.inner.plan(task, context)
        plan = as_plan(result)
        if plan.action.basis is None:
            return result
        return Plan(action=plan.action.model_copy(update={"basis": None}), usage=plan.usage, raw=plan.raw)


def planner_for(method: Method, planner: Planner) -> Planner:
    """The planner ``method`` is given: ``planner`` itself for a ``white_box`` method, else
    :class:`WithoutBasis` around it (the default: no method sees a hint no model planner gives)."""
    return planner if getattr(method, "white_box", False) else WithoutBasis(planner)


#: The pipeline as the paper describes it: the reliability checks alone settle a premise
#: (no observation before medium-risk actions because of the risk) and a stop stands (it is
#: not examined). Per-user authority and relocation cannot be switched off.
PAPER_SETTINGS: dict[str, Any] = {"verify_from_risk": None, "examine_stops": False}


_CORE_CONTRACTS: dict[str, Contract] = {}


def core_invariants_contract(contract_path: str | None, contract: Contract) -> Contract:
    """The set's contract with only the built-in coding contract's invariants: the file at
    ``contract_path`` loaded again without its own ``invariants:`` section, so its keys,
    verifiers, operations and command rules stay (``contract`` itself when the set has no
    contract file: it is the built-in one). Cached per file."""
    if contract_path is None:
        return contract
    found = _CORE_CONTRACTS.get(contract_path)
    if found is None:
        import yaml  # type: ignore[import-untyped,unused-ignore]  # no stubs in the project's environment

        from statewise.contract import load_contract_text

        path = Path(contract_path)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data.pop("invariants", None)
        found = load_contract_text(yaml.safe_dump(data, sort_keys=False), f"{path} (core invariants only)",
                                   base_dir=path.parent)
        _CORE_CONTRACTS[contract_path] = found
    return found


class GuardMethod:
    """StateWise's guard, in full (``statewise``), with one stage off (``no_<stage>``), with
    the paper's settings (``paper``), reading the rule planner's ``basis``
    (``statewise_basis``, ``white_box``), or with only the built-in coding contract's
    invariants (``statewise_core``: the set contract's keys and operations stay, its own
    invariants do not; it shows how much the set-level invariants carry)."""

    def __init__(self, name: str = "statewise", *, settings: Mapping[str, Any] | None = None,
                 white_box: bool = False, core_invariants: bool = False) -> None:
        self.name = name
        self.white_box = white_box
        self.core_invariants = core_invariants
        base = "statewise" if name in ("paper", "statewise_basis", "statewise_core") else name
        self.config = GuardConfig.ablation(base, **dict(settings or {}))

    def run(self, inp: MethodInput) -> MethodResult:
        contract = core_invariants_contract(inp.contract_path, inp.contract) if self.core_invariants else inp.contract
        guard = Guard(inp.store, contract, inp.planner, clarifier=inp.clarifier(), approver=inp.approver(),
                      config=self.config, workspace=inp.workspace, environ=inp.environ)
        decision = guard.check(inp.task)
        report = decision.report
        costs = report.costs
        # A stop the guard did not examine (no planner, examine_stops off, an ablation) has no
        # premises to score, so it is left out of AP/AR rather than counted as missed.
        unexamined = report.proposal.is_stop and not report.candidates
        premises = None if unexamined else tuple(
            dict.fromkeys(c.record_id for c in report.candidates if c.premise))
        return MethodResult(
            verdict=decision.verdict.value, action=decision.action if decision.execute else None,
            proposal=report.proposal, reason=decision.reason, premises=premises,
            model_calls=costs.planner_calls, tokens=costs.input_tokens + costs.output_tokens,
            verifier_calls=costs.verifier_calls, questions=costs.clarification_questions,
            approvals=costs.approvals_asked, guard_seconds=costs.guard_seconds,
            repairs=[r.model_dump(mode="json") for r in report.repairs],
            report=report.model_dump(mode="json"),
        )


#: Methods that a module registers when it is imported, by name -> module: the bundled RQ2
#: baselines. Like an entry point, the module is imported on the first use of one of its names.
BUNDLED_METHODS: dict[str, str] = {
    "hook": "statewise.bench.hookmode",
    **dict.fromkeys(("bare_approval", "approval_with_rationale", "clarification", "provenance_screening",
                     "risk_routed", "uncertainty_triggered", "tool_feedback", "live_refresh"),
                    "statewise.bench.baselines"),
}
#: Entry-point group of third-party methods: a factory (registered under the entry point's
#: name) or a module that registers its methods when imported.
METHOD_ENTRY_POINTS = "statewise.bench_methods"


def _load(name: str) -> bool:
    """Register ``name`` if a bundled module or an entry point provides it; is it registered?"""
    import importlib
    from importlib.metadata import entry_points

    module = BUNDLED_METHODS.get(name)
    if module is not None:
        importlib.import_module(module)
    else:
        for entry in entry_points(group=METHOD_ENTRY_POINTS, name=name):
            loaded = entry.load()
            if callable(loaded) and not dict.__contains__(METHODS, name):
                register_method(name, loaded)
    return dict.__contains__(METHODS, name)


def load_method_plugins() -> None:
    """Import every bundled method module and load every ``statewise.bench_methods`` entry point."""
    from importlib.metadata import entry_points

    for name in [*BUNDLED_METHODS, *(entry.name for entry in entry_points(group=METHOD_ENTRY_POINTS))]:
        if not dict.__contains__(METHODS, name):
            _load(name)


class _MethodTable(dict[str, Callable[[], Method]]):
    """Method factories by name; a name not registered yet is looked up in
    :data:`BUNDLED_METHODS` and the entry points before it counts as unknown."""

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or (isinstance(name, str) and _load(name))

    def __missing__(self, name: str) -> Callable[[], Method]:
        if isinstance(name, str) and _load(name):
            factory: Callable[[], Method] = dict.__getitem__(self, name)
            return factory
        raise KeyError(name)


def _ablation(stage: str) -> Callable[[], Method]:
    """The factory of the guard with ``stage`` off."""
    return lambda: GuardMethod(f"no_{stage}")


#: Method factories by name.
METHODS: dict[str, Callable[[], Method]] = _MethodTable({
    "agent": AgentMethod,
    "statewise": GuardMethod,
    "paper": lambda: GuardMethod("paper", settings=PAPER_SETTINGS),
    "statewise_basis": lambda: GuardMethod("statewise_basis", white_box=True),
    "statewise_core": lambda: GuardMethod("statewise_core", core_invariants=True),
    **{f"no_{stage}": _ablation(stage) for stage in STAGES},
})


def register_method(name: str, factory: Callable[[], Method], *, replace: bool = False) -> None:
    """Make ``name`` available to the runner. ``factory()`` returns a fresh method."""
    if dict.__contains__(METHODS, name) and not replace:
        raise ValueError(f"method {name!r} is already registered")
    METHODS[name] = factory


def get_method(name: str) -> Method:
    try:
        factory = METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(method_names())}") from None
    return factory()


def method_names() -> list[str]:
    load_method_plugins()
    return list(METHODS)


_MethodFactory = TypeVar("_MethodFactory", bound=Callable[[], Method])


class MethodPlugins:
    """The bench's method table (:data:`METHODS`) behind the registry's common interface
    (:class:`statewise.registry.PluginTable`). The bench keeps its own table because a method
    may be a module that registers several names when imported; this adapter only reads and
    writes it."""

    kind = "bench method"
    group = "statewise.bench_methods"

    def get(self, name: str) -> Callable[[], Any]:
        try:
            return METHODS[name]
        except KeyError:
            raise UnknownPluginError(self.kind, name, self.names()) from None

    def names(self) -> list[str]:
        return sorted(method_names())

    def register(self, name: str, *, replace: bool = False) -> Callable[[_MethodFactory], _MethodFactory]:
        """Decorator: make the method factory ``obj`` available to the runner as ``name``."""

        def decorate(obj: _MethodFactory) -> _MethodFactory:
            register_method(name, obj, replace=replace)
            return obj

        return decorate


#: The bench's methods through the registry's interface (group ``statewise.bench_methods``).
METHOD_PLUGINS = MethodPlugins()
