"""Questions for the developer over MCP: the elicitation form, reading the answer, and the two
ways of asking, by protocol era.

On a handshake-era connection (protocol 2025-11-25 and earlier) the guard runs in a worker
thread and each question is an ``elicitation/create`` request sent mid-call through the event
loop. On a 2026-07-28 connection, which has no server-to-client requests, the guard first runs
as a dry run that writes nothing (the ``no_repair`` ablation) to learn the questions, returns
them as an ``InputRequiredResult``, and runs the real check when the client retries with the
answers.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.elicitation import AcceptedElicitation, render_elicitation_schema
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field, ValidationError, create_model

from statewise.clarify import Answer, AnswerKind, CallbackClarifier, Question
from statewise.errors import ValueTypeError
from statewise.integrations.mcp_server.results import AskedAnswer, asked_answer
from statewise.integrations.mcp_server.service import Service, one_line, validation_line
from statewise.pipeline import Decision
from statewise.planners.base import Task
from statewise.records import Authority
from statewise.values import ValueType, check_value, parse_value_text, render_value, same_value

__all__ = ["check_with_pushed_questions", "check_with_returned_questions", "elicit_request", "elicitation_supported",
           "elicited_answer", "returns_questions"]

#: The first protocol revision without server-to-client requests (elicitation returns instead).
_INPUT_REQUIRED_VERSION = "2026-07-28"
#: How many rounds of questions check_action asks on a 2026-07-28 connection before deciding.
_MAX_QUESTION_ROUNDS = 3
#: The actor recorded on evidence from an elicited answer.
_ELICITED_BY = "developer"

_CHOICE_HELP = ("set: the value field is the answer (leave it unchanged to confirm the value on record); "
                "keep: the value on record is right; dont_know: leave it unsettled")


def _form_value(question: Question) -> tuple[Any, Any]:
    """The elicitation field's type and default (pre-filled with the value in doubt)."""
    value, value_type = question.value, question.value_type
    if value_type is ValueType.BOOL:
        return bool, value if isinstance(value, bool) else False
    if value_type is ValueType.INT:
        return int, value if isinstance(value, int) and not isinstance(value, bool) else 0
    if value_type is ValueType.ENUM and question.choices:
        default = value if value in question.choices else question.choices[0]
        return Literal[tuple(question.choices)], default
    if value_type is ValueType.LIST:
        return str, ", ".join(value) if isinstance(value, list) else ""
    return str, "" if value is None else str(value)


def _question_form(question: Question) -> type[BaseModel]:
    """The elicitation schema: the typed value, and keep / don't know."""
    annotation, default = _form_value(question)
    hint = " (comma separated)" if question.value_type is ValueType.LIST else ""
    choice: Any = Literal["set", "keep", "dont_know"]  # a type used as a value: create_model's field spec
    return create_model(
        "StateWiseClarification",
        value=(annotation, Field(default=default, title=question.key,
                                 description=f"The right value of {question.key} in {question.scope}{hint}")),
        choice=(choice, Field(default="set", title="Answer", description=_CHOICE_HELP)),
    )


def _question_message(question: Question) -> str:
    return (f"{question.text}\n\nOn record: {question.key} = {render_value(question.value)} in {question.scope}. "
            "Leave the value to confirm it, change it to correct it, or answer dont_know.")


def elicited_answer(question: Question, action: str, content: Any) -> Answer:
    """The developer's elicited response as a clarification Answer."""
    if action == "decline":
        return Answer.unknown(by=_ELICITED_BY, note="the developer declined to answer")
    if action != "accept":
        return Answer.unknown(by=_ELICITED_BY, note="the developer dismissed the question")
    form = _question_form(question)
    if isinstance(content, BaseModel):
        content = content.model_dump()
    try:
        data = form.model_validate(content or {}).model_dump()
    except ValidationError as error:
        return Answer.unknown(by=_ELICITED_BY, note=f"the answer did not fit the form: {validation_line(error)}")
    if data["choice"] == "dont_know":
        return Answer.unknown(by=_ELICITED_BY, note="the developer does not know")
    if data["choice"] == "keep":
        return Answer.confirm(by=_ELICITED_BY)
    value: Any = data["value"]
    try:
        if question.value_type is ValueType.LIST:
            value = parse_value_text(value, ValueType.LIST, key=question.key)
        check_value(value, question.value_type, choices=question.choices, key=question.key)
    except ValueTypeError as error:
        return Answer.unknown(by=_ELICITED_BY, note=f"the answer does not fit the key's type: {error}")
    if same_value(value, question.value, question.value_type):
        return Answer.confirm(by=_ELICITED_BY)
    return Answer.correct(value, by=_ELICITED_BY)


def elicit_request(question: Question) -> ElicitRequest:
    return ElicitRequest(params=ElicitRequestFormParams(
        message=_question_message(question), requested_schema=render_elicitation_schema(_question_form(question))))


def _question_json(question: Question) -> dict[str, Any]:
    return {"key": question.key, "scope": question.scope, "value": question.value,
            "value_type": question.value_type.value, "text": question.text, "record_id": question.record_id,
            "choices": list(question.choices) if question.choices else None}


def _question_from_json(data: Mapping[str, Any]) -> Question:
    return Question(key=data["key"], scope=data["scope"], value=data["value"], value_type=ValueType(data["value_type"]),
                    text=data["text"], record_id=data.get("record_id"),
                    choices=tuple(data["choices"]) if data.get("choices") else None)


class _Answers:
    """Answers gathered so far (by key and scope), and the questions that had none."""

    def __init__(self, known: Mapping[tuple[str, str], Answer] | None = None) -> None:
        self.known: dict[tuple[str, str], Answer] = dict(known or {})
        self.unanswered: dict[tuple[str, str], Question] = {}
        self.log: list[AskedAnswer] = []

    def lookup(self, question: Question) -> Answer:
        answer = self.known.get((question.key, question.scope))
        if answer is None:
            self.unanswered.setdefault((question.key, question.scope), question)
            return Answer.unknown(by=_ELICITED_BY, note="not answered")
        self.log.append(asked_answer(question, answer))
        return answer


def elicitation_supported(ctx: Context) -> bool:
    try:
        capabilities = ctx.client_capabilities
    except ValueError:  # no request (a direct MCPServer.call_tool)
        return False
    elicitation = capabilities.elicitation if capabilities is not None else None
    # A bare `elicitation: {}` (before modes existed) means form support; url-only does not.
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def returns_questions(ctx: Context) -> bool:
    """Whether this connection asks by returning an InputRequiredResult (2026-07-28 and later)."""
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, _INPUT_REQUIRED_VERSION)


def _encode_state(round_number: int, asked: Mapping[str, Question], answered: Mapping[tuple[str, str], Answer],
                  questions: Mapping[tuple[str, str], Question]) -> str:
    """The plaintext request_state (the SDK seals it and binds it to this tool and its arguments)."""
    return json.dumps({
        "v": 1, "round": round_number,
        "asked": {wire: _question_json(q) for wire, q in asked.items()},
        "answered": [{"question": _question_json(questions[k]), "kind": a.kind.value, "value": a.value, "by": a.by,
                      "note": a.note} for k, a in answered.items()],
    })


def _decode_state(text: str | None) -> tuple[int, dict[str, Question], dict[tuple[str, str], Answer],
                                             dict[tuple[str, str], Question]]:
    if not text:
        return 0, {}, {}, {}
    try:
        data = json.loads(text)
        asked = {wire: _question_from_json(q) for wire, q in data["asked"].items()}
        answered: dict[tuple[str, str], Answer] = {}
        questions: dict[tuple[str, str], Question] = {}
        for item in data["answered"]:
            question = _question_from_json(item["question"])
            key = (question.key, question.scope)
            answered[key] = Answer(AnswerKind(item["kind"]), item["value"], by=item["by"], note=item["note"])
            questions[key] = question
        return int(data["round"]), asked, answered, questions
    except (ValueError, KeyError, TypeError) as error:
        raise ToolError(f"check_action: the retry carried a request_state this server cannot read ({error})") from None



# --- the two ways of asking ----------------------------------------------------------------


async def check_with_pushed_questions(
    ctx: Context, check: Callable[..., Decision]
) -> tuple[Decision, list[AskedAnswer]]:
    """Handshake-era connections: the guard runs in a worker thread; each question is an
    elicitation/create request sent from the event loop while the guard waits for the answer."""
    log: list[AskedAnswer] = []

    def ask(question: Question) -> Answer:
        try:
            result = anyio.from_thread.run(ctx.elicit, _question_message(question), _question_form(question))
        except Exception as error:  # noqa: BLE001 - a failed question is an unanswered one
            answer = Answer.unknown(by=_ELICITED_BY, note=one_line(f"the question could not be asked: {error}"))
        else:
            data = result.data if isinstance(result, AcceptedElicitation) else None
            answer = elicited_answer(question, result.action, data)
        log.append(asked_answer(question, answer))
        return answer

    decision = await anyio.to_thread.run_sync(functools.partial(check, CallbackClarifier(ask)))
    return decision, log


async def check_with_returned_questions(
    ctx: Context, service: Service, job: Task, check: Callable[..., Decision], planner: str
) -> tuple[Decision, list[AskedAnswer]] | InputRequiredResult:
    """2026-07-28 connections: learn the questions from a dry run that writes nothing, return
    them as an InputRequiredResult, and run the real check once the retry brings the answers."""
    round_number, asked, answered, questions = _decode_state(ctx.request_state)
    responses = ctx.input_responses or {}
    for wire, question in asked.items():
        response = responses.get(wire)
        if isinstance(response, ElicitResult):
            answer = elicited_answer(question, response.action, response.content)
        else:
            answer = Answer.unknown(by=_ELICITED_BY, note="no answer came back")
        answered[(question.key, question.scope)] = answer
        questions[(question.key, question.scope)] = question

    def developer_records_apply() -> bool:
        retrieval = service.store.retrieve(job.scope)
        for record in retrieval.records + retrieval.stale:
            spec = service.contract.state_spec(record.key)
            if spec is not None and spec.authority is Authority.DEVELOPER:
                return True
        return False

    # A question is only ever asked about a developer-owned record that applies; without a
    # planner the premises cannot change between rounds, so one round of questions suffices.
    if round_number < _MAX_QUESTION_ROUNDS and not (round_number > 0 and planner == "none") \
            and await anyio.to_thread.run_sync(developer_records_apply):
        rehearsal = _Answers(answered)
        await anyio.to_thread.run_sync(functools.partial(check, CallbackClarifier(rehearsal.lookup), dry_run=True))
        if rehearsal.unanswered:
            pending = {f"statewise-q{round_number}-{i}": q for i, q in enumerate(rehearsal.unanswered.values())}
            return InputRequiredResult(
                input_requests={wire: elicit_request(q) for wire, q in pending.items()},
                request_state=_encode_state(round_number + 1, pending, answered, questions),
            )
    final = _Answers(answered)
    decision = await anyio.to_thread.run_sync(functools.partial(check, CallbackClarifier(final.lookup)))
    return decision, final.log
