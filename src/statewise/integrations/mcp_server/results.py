"""What each MCP tool returns, as typed models.

The SDK derives each tool's ``outputSchema`` from its return annotation and validates the
returned value against it before sending ``structuredContent``; with these models a client
sees the real shape of every result (records with their freshness, the guard's report,
the questions for the developer) instead of a generic object, and a result that does not fit
its schema is a server error, never a silently different payload.

The views extend the stored models (``Record``, ``GuardReport``) so they follow them: a field
added to a record is published without touching this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from statewise.actions import Action
from statewise.clarify import Answer, AnswerKind, Question
from statewise.pipeline import Decision, GuardReport, PremiseStatus
from statewise.pipeline.report import CandidateReport, RepairReport
from statewise.records import Authority, Evidence, Link, Record, SourceKind, utcnow

__all__ = [
    "AskedAnswer",
    "CheckActionResult",
    "CheckReport",
    "ForgetResult",
    "HeldBack",
    "HistoryResult",
    "LineageResult",
    "PendingQuestion",
    "RecallResult",
    "RecordView",
    "RememberResult",
    "RevertResult",
    "StateValue",
    "VerifyResult",
    "asked_answer",
    "check_action_result",
    "pending_questions",
    "record_view",
    "record_views",
]

#: A state key's value as JSON, by its declared type: bool, int, a string (string, version,
#: path, enum) or a list of strings.
StateValue = bool | int | str | list[str]


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RecordView(Record):
    """A record as stored, with its freshness and provenance spelled out."""

    value: StateValue
    stale: bool = Field(description="past its TTL: re-verify before relying on it")
    fresh_until: datetime | None = Field(description="when it goes stale; null without a TTL")
    authority: Authority = Field(description="who establishes it (provenance.authority)")
    source: SourceKind = Field(description="where it came from (provenance.source)")


def record_view(record: Record, now: datetime | None = None) -> RecordView:
    """``record`` with its freshness at ``now`` (default: the current time)."""
    now = now or utcnow()
    ttl = record.time.ttl_seconds
    return RecordView(
        **{name: getattr(record, name) for name in Record.model_fields},
        stale=record.is_stale(now),
        fresh_until=record.time.confirmed_at + timedelta(seconds=ttl) if ttl else None,
        authority=record.provenance.authority,
        source=record.provenance.source,
    )


def record_views(records: Iterable[Record]) -> list[RecordView]:
    """Several records, their freshness all judged at the same instant."""
    now = utcnow()
    return [record_view(record, now) for record in records]


class RememberResult(_Result):
    """What ``remember`` did."""

    outcome: Literal["stored", "confirmed", "superseded"] = Field(
        description="stored (new), confirmed (the active record already said so; verification time refreshed) "
                    "or superseded (it said otherwise; the old record stays in lineage)")
    record: RecordView
    superseded: str | None = Field(description="the id of the record it replaced, when superseded")


class HeldBack(_Result):
    """How many records apply but were held back from ``records``, by reason."""

    stale: int
    shadowed: int
    near_misses: int


class RecallResult(_Result):
    """The records that apply to a task, and those held back."""

    task_scope: str
    records: list[RecordView] = Field(description="fresh and in force, the most specific per key")
    stale: list[RecordView] = Field(description="apply but past their TTL")
    shadowed: list[RecordView] = Field(description="overridden by a more specific record")
    near_misses: list[RecordView] = Field(description="look related but do not apply here")
    held_back: HeldBack
    session_context: str | None = Field(
        description="with a workspace: the SessionStart note for a session starting there (\"\" when there is "
                    "nothing to say); null without a workspace")


class PendingQuestion(_Result):
    """A premise still waiting for the developer, as a question to relay."""

    key: str
    scope: str | None
    value: StateValue | None = Field(description="the value on record in doubt; null when there is none")
    text: str
    record_id: str | None
    missing: str | None


class AskedAnswer(_Result):
    """A question elicited during the check, and the developer's answer."""

    key: str
    scope: str
    value: StateValue | None
    text: str
    answer: AnswerKind = Field(description="confirm, correct or unknown")
    new_value: StateValue | None = Field(description="the corrected value, for answer=correct")
    note: str | None


class CheckReport(GuardReport):
    """The guard's report. ``candidates`` (the counterfactual probes, the bulk of a report) is
    null unless the call asked for ``full_report``."""

    candidates: list[CandidateReport] | None = None  # type: ignore[assignment]


class CheckActionResult(_Result):
    """The guard's decision on a proposed action."""

    verdict: Literal["execute", "stop"]
    execute: bool
    action: Action | None = Field(description="the checked action to run, on execute (it may differ from yours)")
    reason: str
    blocked_by: list[str] = Field(description="the gate checks that failed")
    questions: list[PendingQuestion] = Field(description="for the developer, when they could not be asked")
    asked: list[AskedAnswer] = Field(description="questions elicited during the check, with their answers")
    next_step: str
    report: CheckReport


class VerifyResult(_Result):
    """A key observed in the live workspace, compared with the store."""

    key: str
    observed: StateValue | None = Field(description='the observed value, "absent", or null when it could not '
                                                    "be observed")
    status: PremiseStatus
    route: str
    detail: str
    missing: str | None
    question: str | None
    stored: RecordView | None = Field(description="the record compared with")
    evidence: Evidence | None
    repair: RepairReport | None = Field(description="what was written, with write=true")


class HistoryResult(_Result):
    """Every record stored for one (key, scope), oldest first."""

    key: str
    scope: str
    records: list[RecordView]


class LineageResult(_Result):
    """A record's chain of supersessions, narrowings and reverts."""

    record_id: str
    records: list[RecordView]
    links: list[Link]


class RevertResult(_Result):
    """An undone repair."""

    reverted: RecordView = Field(description="the record the repair produced, no longer active")
    restored: RecordView | None = Field(description="the value the repair replaced, active again; null for a "
                                                    "narrowing that replaced nothing")


class ForgetResult(_Result):
    """A retracted record."""

    retracted: RecordView


# --- building the check_action result ------------------------------------------------------


def pending_questions(report: GuardReport) -> list[PendingQuestion]:
    """The premises still waiting for the developer, as questions."""
    return [
        PendingQuestion(key=p.key, scope=p.scope, value=p.value, text=p.question, record_id=p.record_id,
                        missing=p.missing)
        for p in report.premises
        if p.status is PremiseStatus.UNRESOLVED and p.route == "clarification" and p.question
    ]


def asked_answer(question: Question, answer: Answer) -> AskedAnswer:
    """One elicited question and its answer, for ``asked``."""
    return AskedAnswer(key=question.key, scope=question.scope, value=question.value, text=question.text,
                       answer=answer.kind, new_value=answer.value if answer.kind is AnswerKind.CORRECT else None,
                       note=answer.note or None)


def _next_step(decision: Decision, questions: list[PendingQuestion]) -> str:
    if decision.execute:
        return "Run `action` exactly as returned (it may differ from the proposal)."
    if questions:
        first = questions[0]
        return ("Do not run the action. Ask the developer each question in `questions`, then record the answer "
                f"with remember(key={first.key!r}, value=<the answer>, scope={first.scope!r}, "
                "authority='developer') and call check_action again.")
    return ("Do not run the action. Read `reason`; re-plan from the records as they are now (recall) "
            "and check the new action.")


def check_action_result(decision: Decision, asked: list[AskedAnswer], *, full_report: bool) -> CheckActionResult:
    """The decision as check_action returns it."""
    report = decision.report
    fields = {name: getattr(report, name) for name in GuardReport.model_fields}
    if not full_report:
        fields["candidates"] = None
    questions = pending_questions(report)
    return CheckActionResult(
        verdict=decision.verdict.value,
        execute=decision.execute,
        action=decision.action,
        reason=decision.reason,
        blocked_by=report.blocked_by,
        questions=questions,
        asked=asked,
        next_step=_next_step(decision, questions),
        report=CheckReport(**fields),
    )
