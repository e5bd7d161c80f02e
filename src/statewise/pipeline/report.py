"""The guard's decision and its JSON-serializable report."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from statewise.actions import Action
from statewise.records import Evidence

__all__ = [
    "CandidateReport",
    "Costs",
    "Decision",
    "GateCheck",
    "GuardReport",
    "PremiseReport",
    "PremiseStatus",
    "ProbeReport",
    "RepairReport",
    "Verdict",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Verdict(str, enum.Enum):
    EXECUTE = "execute"
    STOP = "stop"


class PremiseStatus(str, enum.Enum):
    VALID = "valid"
    DEFECTIVE = "defective"
    UNRESOLVED = "unresolved"


class ProbeReport(_Model):
    """One counterfactual probe: how the context was changed and what the planner did."""

    kind: str  # remove | mask | alternative
    alternative: Any = None
    actions: list[Action] = []  # one per sample
    distance: float | None = None  # the largest distance from the proposal across samples
    changed: list[str] = []
    error: str | None = None


class CandidateReport(_Model):
    """A retrieved record considered as a premise of the proposal."""

    record_id: str
    key: str
    scope: str
    value: Any
    link: str  # binding | text | conflict | stop (probed as a possible cause of a stop)
    bound: bool
    dependent: bool = False
    inconclusive: bool = False
    premise: bool = False
    note: str = ""
    probes: list[ProbeReport] = []


class PremiseReport(_Model):
    """How one premise was resolved: valid, defective (with evidence) or unresolved."""

    record_id: str | None  # None for a state key the gate needed and the store did not have
    key: str
    scope: str | None
    value: Any
    status: PremiseStatus
    route: str  # reliability | verifier | clarification | none
    findings: list[str] = []  # what the reliability checks found
    evidence: Evidence | None = None
    absent: bool = False  # the verifier observed that the thing does not exist
    missing: str | None = None  # for unresolved: what is missing
    detail: str = ""
    question: str | None = None


class RepairReport(_Model):
    """One write to the store made by the guard."""

    kind: str  # supersede | narrow | relocate | confirm | retract | learn | transient
    record_id: str | None
    new_record_id: str | None = None
    key: str
    scope: str
    old_value: Any = None
    new_value: Any = None
    link_id: str | None = None


class GateCheck(_Model):
    name: str
    passed: bool
    detail: str = ""
    # A failure for want of a fact (an unresolved premise, an invariant that could not be
    # evaluated), which the developer may settle; False for a failure on the evidence itself.
    unresolved: bool = False


class Costs(_Model):
    planner_calls: int = 0
    planner_cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    verifier_calls: int = 0
    clarification_questions: int = 0
    approvals_asked: int = 0
    wall_seconds: float = 0.0
    guard_seconds: float = 0.0  # wall time minus the planner's and verifiers' own time


class GuardReport(_Model):
    """Everything the guard did for one proposal."""

    task: str
    task_scope: str
    proposal: Action
    verdict: Verdict
    reason: str
    action: Action | None = None  # the checked action, when the verdict is execute
    blocked_by: list[str] = []
    candidates: list[CandidateReport] = []
    premises: list[PremiseReport] = []
    repairs: list[RepairReport] = []
    replanned: Action | None = None
    rounds: int = 0
    gate: list[GateCheck] = []
    costs: Costs = Field(default_factory=Costs)
    disabled_stages: list[str] = []
    failed_stage: str | None = None
    planner: str | None = None


class Decision(_Model):
    """The guard's answer: execute the checked action, or stop and say why."""

    verdict: Verdict
    action: Action | None
    reason: str
    report: GuardReport

    @property
    def execute(self) -> bool:
        return self.verdict is Verdict.EXECUTE
