"""The question stage on its own: a developer-owned premise in doubt becomes one targeted
question (key, scope, value in doubt), and the answer becomes typed developer evidence, over
records in a real SQLite store and the scope of a real git repository."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from statewise.clarify import Answer, CallbackClarifier, Question, ScriptedClarifier
from statewise.contract import builtin_contract
from statewise.pipeline import PremiseStatus
from statewise.pipeline.calls import CostMeter
from statewise.pipeline.resolution import Resolver
from statewise.records import Authority, Provenance, RecordDraft, SourceKind
from statewise.values import ValueType
from statewise.workspace import derive_task_scope

DEVELOPER = Provenance(source="developer", authority="developer", actor="dev")


def _stale_test_command(store, sandbox, value: str = "pytest"):
    """A developer said long ago (past the key's 30-day TTL) that the tests run with ``value``."""
    return store.put(RecordDraft(key="project.test_command", value=value, scope=f"repo:{sandbox.repo_identity}",
                                 provenance=DEVELOPER, observed_at=datetime.now(UTC) - timedelta(days=90)))


def _resolver(sandbox, clarifier) -> Resolver:
    return Resolver(builtin_contract(), derive_task_scope(sandbox.work, user="dev"), sandbox.work, CostMeter(),
                    clarifier=clarifier)


def test_the_question_names_the_key_the_scope_and_the_value_in_doubt(store, sandbox):
    record = _stale_test_command(store, sandbox)
    developer = ScriptedClarifier({"project.test_command": "tox"})
    resolver = _resolver(sandbox, developer)
    premise = resolver.resolve(record)

    [question] = developer.asked
    assert question == Question(key="project.test_command", scope=f"repo:{sandbox.repo_identity}", value="pytest",
                                value_type=ValueType.STRING, text=question.text, record_id=record.id)
    assert "`pytest`" in question.text and sandbox.repo_identity in question.text
    assert resolver.meter.clarification_questions == 1 and resolver.meter.verifier_calls == 0
    # The correction is developer evidence, typed and scoped like the record.
    assert premise.status is PremiseStatus.DEFECTIVE and premise.route == "clarification"
    evidence = premise.evidence
    assert evidence is not None and evidence.value == "tox" and evidence.scope == record.scope
    assert evidence.authority is Authority.DEVELOPER and evidence.source is SourceKind.DEVELOPER
    assert evidence.actor == "simulated-developer"


def test_a_confirmation_settles_the_premise_and_dont_know_leaves_it_open(store, sandbox):
    record = _stale_test_command(store, sandbox)
    confirmed = _resolver(sandbox, ScriptedClarifier({"project.test_command": "pytest"})).resolve(record)
    assert confirmed.status is PremiseStatus.VALID and confirmed.evidence is not None
    assert confirmed.evidence.value == "pytest"
    unsure = _resolver(sandbox, CallbackClarifier(lambda q: Answer.unknown(note="no idea"))).resolve(record)
    assert unsure.status is PremiseStatus.UNRESOLVED and "no idea" in (unsure.missing or "")


def test_without_a_developer_to_ask_the_question_is_returned_unasked(store, sandbox):
    record = _stale_test_command(store, sandbox)
    resolver = _resolver(sandbox, None)
    premise = resolver.resolve(record)
    assert premise.status is PremiseStatus.UNRESOLVED and premise.route == "clarification"
    assert premise.question and "`pytest`" in premise.question
    assert premise.missing == f"needs the developer: {premise.question}"
    assert resolver.meter.clarification_questions == 0


def test_an_answer_of_the_wrong_type_is_not_evidence(store, sandbox):
    record = _stale_test_command(store, sandbox)
    premise = _resolver(sandbox, CallbackClarifier(lambda q: Answer.correct(3))).resolve(record)
    assert premise.status is PremiseStatus.UNRESOLVED and premise.evidence is None
    assert "does not fit the key's type" in (premise.missing or "")


def test_a_value_nobody_stated_is_asked_only_when_the_gate_needs_it(sandbox):
    asked: list[Question] = []

    def developer(question: Question) -> Answer:
        asked.append(question)
        return Answer.correct("make test")

    resolver = _resolver(sandbox, CallbackClarifier(developer))
    silent = resolver.resolve_missing("project.test_command")
    assert silent.status is PremiseStatus.UNRESOLVED and asked == []
    assert "the developer's to state" in (silent.missing or "")
    needed = resolver.resolve_missing("project.test_command", ask_developer=True, because="the rule test_command")
    [question] = asked
    assert question.value is None and question.record_id is None
    assert "Nothing is on record" in question.text and "the rule test_command" in question.text
    assert needed.status is PremiseStatus.VALID and needed.value == "make test"
