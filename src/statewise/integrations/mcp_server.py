"""StateWise as an MCP server: the store and the guard as tools for any MCP-speaking agent.

``statewise mcp`` (or ``python -m statewise.integrations.mcp_server``) serves over stdio with
the official ``mcp`` Python SDK (2.x, ``mcp.server.mcpserver.MCPServer``). The tools:

* ``remember`` — record an observation or a developer statement, typed, scoped, with provenance;
* ``recall`` — the records that apply to a task, with freshness and authority, held-back counts
  and near misses;
* ``check_action`` — run the guard on a proposed action: verdict, checked action, reason, report;
* ``verify`` — observe a key with its read-only verifier and compare with the store;
* ``history``, ``lineage`` — a (key, scope)'s records, and a record's chain of repairs;
* ``revert_repair`` — undo a repair (``Store.revert``);
* ``forget`` — retract a record that should no longer apply, with the reason (kept in history).

Arguments are checked strictly: an argument the tool does not declare is refused, and every
validation error (from the SDK's own argument checking as from StateWise) comes back as one
line naming the argument.

When a premise of a checked action needs the developer (a developer-owned record whose
validity is in doubt), the question goes to the developer through MCP elicitation if the
client declared that capability, and the answer becomes a persistent correction through the
guard's normal path. The protocol era decides how: on a handshake-era connection
(protocol 2025-11-25 and earlier) the guard runs in a worker thread and each question is an
``elicitation/create`` request sent mid-call through the event loop; on a 2026-07-28
connection, which has no server-to-client requests, ``check_action`` first runs the guard as a
dry run that writes nothing (the ``no_repair`` ablation) to learn the questions, returns them
as an ``InputRequiredResult``, and runs the real check when the client retries with the
answers. A client without elicitation gets the unresolved questions back as data
(``questions``) and is told to call ``remember`` with the developer's answer.

One store is opened per server and closed on shutdown. Calls are served concurrently; the
store's connection is used by one call at a time.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.elicitation import AcceptedElicitation, render_elicitation_schema
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ToolAnnotations,
)
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field, ValidationError, create_model

from statewise import __version__
from statewise.actions import Action
from statewise.clarify import (
    Answer,
    AnswerKind,
    CallbackClarifier,
    ClarificationChannel,
    Question,
)
from statewise.contract import Contract, builtin_contract, load_contract
from statewise.errors import InputError, KeyNameError, StateWiseError, ValueTypeError
from statewise.pipeline import Decision, Guard, GuardConfig, GuardReport, PremiseStatus
from statewise.pipeline.calls import CostMeter
from statewise.pipeline.repair import apply_repair
from statewise.pipeline.resolution import Resolver, established_scope
from statewise.planners import make_planner
from statewise.planners.base import Task
from statewise.records import (
    Authority,
    Evidence,
    Provenance,
    Record,
    RecordDraft,
    SourceKind,
    check_key,
    utcnow,
)
from statewise.scopes import Scope, TaskScope
from statewise.store import default_location, open_store
from statewise.store.base import Store
from statewise.values import (
    ValueType,
    check_value,
    parse_value_text,
    render_value,
    same_value,
)
from statewise.workspace import derive_task_scope

__all__ = ["build_server", "main", "serve_stdio"]

T = TypeVar("T")

#: The first protocol revision without server-to-client requests (elicitation returns instead).
_INPUT_REQUIRED_VERSION = "2026-07-28"
#: How many rounds of questions check_action asks on a 2026-07-28 connection before deciding.
_MAX_QUESTION_ROUNDS = 3
#: The actor recorded on evidence from an elicited answer.
_ELICITED_BY = "developer"

INSTRUCTIONS = """\
StateWise keeps this project's persistent operational records (protected branches, the test
command, interpreter versions, ...) and checks side-effecting actions against them.
Before running a side-effecting action (git push, package install, test run, file deletion),
call check_action with the task and the action. Run only what it returns when verdict is
"execute" (its `action` may differ from yours); on "stop", do not run it: read `reason`, and
re-plan from the repaired records (recall). When it returns `questions`, ask the developer and
record the answer with remember(authority="developer"). Record what you observe with remember.
"""


# --- strict arguments ----------------------------------------------------------------------


class _StrictServer(MCPServer[Any]):
    """The SDK's server, with arguments checked the way StateWise's docs promise: an argument
    the tool does not declare is an error (the SDK ignores it), and the SDK's multi-line
    pydantic dump for a missing or malformed argument becomes one line naming the argument."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            declared = set(tool.parameters.get("properties", {}))
            extra = sorted(set(arguments) - declared)
            if extra:
                raise ToolError(f"{name}: unexpected argument{'s' if len(extra) > 1 else ''} "
                                f"{', '.join(extra)}; it takes {', '.join(sorted(declared)) or 'none'}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError) and not isinstance(error, UnexpectedToolError):
                raise ToolError(f"{name}: {_validation_line(error.__cause__)}") from None
            raise


# --- the service: one contract, one store, one workspace ----------------------------------


class _SerializedStore:
    """The store, used by one thread at a time (tool calls run concurrently in worker threads).

    The lock is held for one store operation, never across a whole check, so a check that is
    waiting for the developer's answer does not hold up other calls.
    """

    def __init__(self, store: Store, lock: threading.RLock) -> None:
        self._store = store
        self._lock = lock

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if not callable(attribute):
            return attribute

        @functools.wraps(attribute)
        def serialized(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attribute(*args, **kwargs)

        return serialized


class _Service:
    """What the tools share: the contract, the store (opened once) and the default workspace."""

    def __init__(self, *, store_location: str | None, contract: Contract, workspace: Path, user: str | None) -> None:
        self.contract = contract
        self.workspace = workspace
        self.user = user
        self.store_location = store_location or default_location(workspace)
        self._lock = threading.RLock()
        self._store: Store | None = None
        self._serialized: _SerializedStore | None = None
        self._sessions = 0

    @property
    def store(self) -> Any:
        """The store (opened on first use), serialized across worker threads."""
        with self._lock:
            if self._store is None:
                self._store = open_store(self.store_location, key_schema=self.contract, long_lived=True)
                self._serialized = _SerializedStore(self._store, self._lock)
            assert self._serialized is not None
            return self._serialized

    def open(self) -> None:
        self.store  # noqa: B018 - opens it, so a bad location fails at start-up

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
                self._serialized = None

    @asynccontextmanager
    async def lifespan(self, _server: Any) -> AsyncIterator[_Service]:
        """Shared by every session of this server; the store is closed when the last one ends."""
        self._sessions += 1
        try:
            yield self
        finally:
            self._sessions -= 1
            if self._sessions == 0:
                await anyio.to_thread.run_sync(self.close)

    # --- where a call runs ----------------------------------------------------------------

    def workspace_for(self, workspace: str | None) -> Path:
        if workspace is None:
            return self.workspace
        path = Path(workspace).expanduser()
        if not path.is_absolute():
            path = self.workspace / path
        if not path.is_dir():
            raise InputError(f"workspace {workspace!r}: not a directory")
        return path.resolve()

    def task_scope(self, workspace: Path) -> TaskScope:
        return derive_task_scope(workspace, user=self.user)


def _session_note(service: _Service, workspace: Path) -> str:
    """The SessionStart hook's note for ``workspace`` (the same function, hence the same text
    and budget), computed against the server's store."""
    # Lazy: the hook module is only needed here. Its note builder takes a hook request; only
    # the cwd is read from it.
    from statewise.integrations.hooks import HookRequest, _session_context

    request = HookRequest(agent="claude-code", event="session", cwd=workspace, tool_name="", tool_input={})
    # The note opens its own connection and writes (import, check verdicts): hold the service's
    # lock so no other tool call is half-way through a transaction on the shared connection.
    with service._lock:
        return _session_context(request, store_location=service.store_location, contract=service.contract)


def _tool_call(function: Callable[[], T]) -> T:
    """Run a tool body; a StateWise error or bad input becomes a tool error with one line."""
    try:
        return function()
    except ToolError:
        raise
    except ValidationError as error:
        raise ToolError(_validation_line(error)) from None
    except (StateWiseError, ValueError, OSError) as error:
        raise ToolError(_one_line(str(error))) from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _validation_line(error: ValidationError) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return _one_line(f"{field}: {message}" if field else message)


def _parse_time(text: str | None, name: str) -> datetime | None:
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"{name}: expected an ISO 8601 time such as 2026-11-29T10:00:00+00:00, got {text!r}") from None
    if value.tzinfo is None:
        raise InputError(f"{name}: the time needs a zone, e.g. {text}+00:00")
    return value


# --- rendering -----------------------------------------------------------------------------


def _record_json(record: Record, now: datetime | None = None) -> dict[str, Any]:
    """A record as JSON, with its freshness spelled out."""
    now = now or utcnow()
    data = record.model_dump(mode="json")
    ttl = record.time.ttl_seconds
    data["stale"] = record.is_stale(now)
    data["fresh_until"] = (record.time.confirmed_at + timedelta(seconds=ttl)).isoformat() if ttl else None
    data["authority"] = record.provenance.authority.value
    data["source"] = record.provenance.source.value
    return data


def _records_json(records: Iterable[Record]) -> list[dict[str, Any]]:
    now = utcnow()
    return [_record_json(record, now) for record in records]


def _report_json(report: GuardReport, *, full: bool) -> dict[str, Any]:
    data = report.model_dump(mode="json")
    if not full:
        # The counterfactual probes are the bulk of a report; premises, repairs, the gate and
        # the costs are what an agent acts on.
        data.pop("candidates", None)
    return data


def _questions(report: GuardReport) -> list[dict[str, Any]]:
    """The premises still waiting for the developer, as questions."""
    return [
        {"key": p.key, "scope": p.scope, "value": p.value, "text": p.question, "record_id": p.record_id,
         "missing": p.missing}
        for p in report.premises
        if p.status is PremiseStatus.UNRESOLVED and p.route == "clarification" and p.question
    ]


def _next_step(decision: Decision, questions: list[dict[str, Any]]) -> str:
    if decision.execute:
        return "Run `action` exactly as returned (it may differ from the proposal)."
    if questions:
        first = questions[0]
        return ("Do not run the action. Ask the developer each question in `questions`, then record the answer "
                f"with remember(key={first['key']!r}, value=<the answer>, scope={first['scope']!r}, "
                "authority='developer') and call check_action again.")
    return ("Do not run the action. Read `reason`; re-plan from the records as they are now (recall) "
            "and check the new action.")


# --- clarification over MCP ----------------------------------------------------------------

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
        return Literal[tuple(question.choices)], default  # type: ignore[valid-type]
    if value_type is ValueType.LIST:
        return str, ", ".join(value) if isinstance(value, list) else ""
    return str, "" if value is None else str(value)


def _question_form(question: Question) -> type[BaseModel]:
    """The elicitation schema: the typed value, and keep / don't know."""
    annotation, default = _form_value(question)
    hint = " (comma separated)" if question.value_type is ValueType.LIST else ""
    return create_model(
        "StateWiseClarification",
        value=(annotation, Field(default=default, title=question.key,
                                 description=f"The right value of {question.key} in {question.scope}{hint}")),
        choice=(Literal["set", "keep", "dont_know"], Field(default="set", title="Answer", description=_CHOICE_HELP)),
    )


def _question_message(question: Question) -> str:
    return (f"{question.text}\n\nOn record: {question.key} = {render_value(question.value)} in {question.scope}. "
            "Leave the value to confirm it, change it to correct it, or answer dont_know.")


def _answer(question: Question, action: str, content: Any) -> Answer:
    """The developer's elicited response as a clarification Answer."""
    if action == "decline":
        return Answer.unknown(by=_ELICITED_BY, note="the developer declined to answer")
    if action != "accept":
        return Answer.unknown(by=_ELICITED_BY, note="the developer dismissed the question")
    form = _question_form(question)
    if isinstance(content, BaseModel):
        content = content.model_dump()
    try:
        data = form.model_validate(content or {})
    except ValidationError as error:
        return Answer.unknown(by=_ELICITED_BY, note=f"the answer did not fit the form: {_validation_line(error)}")
    if data.choice == "dont_know":
        return Answer.unknown(by=_ELICITED_BY, note="the developer does not know")
    if data.choice == "keep":
        return Answer.confirm(by=_ELICITED_BY)
    value: Any = data.value
    try:
        if question.value_type is ValueType.LIST:
            value = parse_value_text(value, ValueType.LIST, key=question.key)
        check_value(value, question.value_type, choices=question.choices, key=question.key)
    except ValueTypeError as error:
        return Answer.unknown(by=_ELICITED_BY, note=f"the answer does not fit the key's type: {error}")
    if same_value(value, question.value, question.value_type):
        return Answer.confirm(by=_ELICITED_BY)
    return Answer.correct(value, by=_ELICITED_BY)


def _elicit_request(question: Question) -> ElicitRequest:
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


def _answer_json(question: Question, answer: Answer) -> dict[str, Any]:
    return {"key": question.key, "scope": question.scope, "value": question.value, "text": question.text,
            "answer": answer.kind.value, "new_value": answer.value if answer.kind is AnswerKind.CORRECT else None,
            "note": answer.note or None}


class _Answers:
    """Answers gathered so far (by key and scope), and the questions that had none."""

    def __init__(self, known: Mapping[tuple[str, str], Answer] | None = None) -> None:
        self.known: dict[tuple[str, str], Answer] = dict(known or {})
        self.unanswered: dict[tuple[str, str], Question] = {}
        self.log: list[dict[str, Any]] = []

    def lookup(self, question: Question) -> Answer:
        answer = self.known.get((question.key, question.scope))
        if answer is None:
            self.unanswered.setdefault((question.key, question.scope), question)
            return Answer.unknown(by=_ELICITED_BY, note="not answered")
        self.log.append(_answer_json(question, answer))
        return answer


def _elicitation_supported(ctx: Context) -> bool:
    try:
        capabilities = ctx.client_capabilities
    except ValueError:  # no request (a direct MCPServer.call_tool)
        return False
    elicitation = capabilities.elicitation if capabilities is not None else None
    # A bare `elicitation: {}` (before modes existed) means form support; url-only does not.
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _returns_questions(ctx: Context) -> bool:
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


# --- the server ----------------------------------------------------------------------------

KeyArg = Annotated[str, Field(description="A state key the contract declares, e.g. repository.protected, "
                                          "project.test_command or python.package_version[requests].")]
ScopeArg = Annotated[str, Field(description="A record scope: global, user:NAME, workspace:/ABS/PATH, repo:ID or "
                                            "repo:ID@BRANCH (ID as recall reports it, e.g. github.com/acme/app).")]
OptionalScopeArg = Annotated[str | None, Field(description="A record scope (global, user:NAME, workspace:/ABS/PATH, "
                                                           "repo:ID, repo:ID@BRANCH). Default: the workspace's own "
                                                           "scope at the key's declared level.")]
WorkspaceArg = Annotated[str | None, Field(description="The directory the task runs in (its git repository and "
                                                       "branch give the scope). Default: the server's workspace.")]
ValueArg = Annotated[bool | int | str | list[str], Field(
    description="The value as JSON, of the key's declared type: true/false for bool, a number for int, a string "
                "for string/version/path/enum, a list of strings for list. Never coerced: \"false\" is not a bool.")]
RecordIdArg = Annotated[str, Field(description="A record id (rec_...), as other tools report it.")]


def build_server(
    *,
    store_location: str | None = None,
    contract_path: str | None = None,
    workspace: str | None = None,
    user: str | None = None,
) -> MCPServer[Any]:
    """The StateWise MCP server (not running). ``store_location``: a SQLite path or a
    ``postgresql://`` URL (default ``$STATEWISE_STORE``, else the project's
    ``.statewise/store.db``); ``contract_path``: a contract file (default the built-in coding
    contract); ``workspace``: the default directory tasks run in (default: the current one).

    The store opens on first use and closes when the last session ends (or with
    ``server.statewise.close()``); ``server.statewise`` is the shared state, for tests.
    """
    contract = load_contract(contract_path) if contract_path else builtin_contract()
    root = Path(workspace or os.getcwd()).expanduser().resolve()
    if not root.is_dir():
        raise InputError(f"workspace {workspace!r}: not a directory")
    service = _Service(store_location=store_location, contract=contract, workspace=root, user=user)
    server: MCPServer[Any] = _StrictServer(
        "statewise", title="StateWise", version=__version__, instructions=INSTRUCTIONS,
        description="Persistent operational records for coding agents, and a guard for side-effecting actions.",
        lifespan=service.lifespan, log_level="WARNING",
    )
    server.statewise = service  # type: ignore[attr-defined]
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

    # --- remember ---------------------------------------------------------------------

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=False))
    def remember(
        key: KeyArg,
        value: ValueArg,
        scope: OptionalScopeArg = None,
        authority: Annotated[Literal["machine", "developer", "agent"], Field(
            description="Who establishes it: machine (observed in the environment), developer (the developer "
                        "said so; use this to record a developer's answer) or agent (your own inference).")]
        = "machine",
        source: Annotated[Literal["observation", "tool_output", "developer", "agent_inference", "import"] | None,
                          Field(description="Where it came from. Default: observation for machine, developer for "
                                            "developer, agent_inference for agent.")] = None,
        actor: Annotated[str, Field(min_length=1, description="Who or what says so (a person, a tool).")] = "agent",
        reference: Annotated[str | None, Field(description="A free reference: a tool call, a commit, a URL.")]
        = None,
        observed_at: Annotated[str | None, Field(description="When it was seen to hold, ISO 8601 with a zone "
                                                             "(default: now).")] = None,
        workspace: WorkspaceArg = None,
    ) -> dict[str, Any]:
        """Record an observation or a developer statement: KEY = VALUE in a scope, with provenance.

        The value is checked against the contract's declared type (no coercion). The same value
        as the active record in that scope confirms it (refreshes its verification time); a
        different value supersedes it and keeps the old one in lineage. Returns the stored
        record (with `stale`, `fresh_until`, `authority`) and what happened: stored, confirmed or
        superseded.
        """

        def run() -> dict[str, Any]:
            spec = contract.state_spec(key)
            declared = contract.key_type(key)
            check_key(key)
            if spec is None or declared is None:
                raise KeyNameError(key, f"the {contract.name} contract does not declare this key")
            check_value(value, declared.value_type, choices=declared.choices, key=key)
            observed = _parse_time(observed_at, "observed_at")
            if scope is None:
                place = service.workspace_for(workspace)
                where = established_scope(service.task_scope(place), spec, None)
            else:
                where = str(Scope.parse(scope))
            default_source = {"machine": "observation", "developer": "developer", "agent": "agent_inference"}
            provenance = Provenance(source=SourceKind(source or default_source[authority]),
                                    authority=Authority(authority), actor=actor, reference=reference)
            store = service.store
            existing = store.get_active(key, where)
            if existing is not None and same_value(existing.value, value, declared.value_type):
                evidence = Evidence(key=key, value=existing.value, value_type=existing.value_type, scope=where,
                                    source=provenance.source, authority=provenance.authority, actor=actor,
                                    observed_at=observed or utcnow(), reference=reference,
                                    detail="remembered again")
                record = store.confirm(existing.id, evidence, expected_version=existing.version)
                outcome = "confirmed"
            else:
                record = store.put(RecordDraft(key=key, value=value, scope=where, provenance=provenance,
                                               observed_at=observed), replace=True, reason="remembered")
                outcome = "superseded" if existing is not None else "stored"
            return {"outcome": outcome, "record": _record_json(record),
                    "superseded": existing.id if outcome == "superseded" and existing is not None else None}

        return _tool_call(run)

    # --- recall -----------------------------------------------------------------------

    @server.tool(annotations=read_only)
    def recall(
        workspace: WorkspaceArg = None,
        task_scope: Annotated[str | None, Field(
            description="Instead of a workspace: the task's scope as comma-separated parts, e.g. "
                        "'user:alice,workspace:/src/app,repo:github.com/acme/app@main'.")] = None,
        keys: Annotated[list[str] | None, Field(description="Only these keys (a base key such as "
                                                            "python.package_version matches its qualified forms).")]
        = None,
        text: Annotated[str | None, Field(description="Only records whose key or value contains this text.")]
        = None,
    ) -> dict[str, Any]:
        """The records that apply to a task, most specific per key, with freshness and authority.

        `records` are fresh and in force; `stale` apply but are past their TTL (re-verify before
        relying on them); `shadowed` are overridden by a more specific record; `near_misses`
        look related but do not apply here (another branch, a subdirectory, another scope).
        Each record has `value`, `scope`, `authority`, `source`, `stale`, `fresh_until` and its
        `time` (observed_at, recorded_at, verified_at, ttl_seconds).

        Called with a `workspace`, it also returns `session_context`: what a session starting
        there should know, the same text the SessionStart hook gives Claude Code, Codex and
        Gemini CLI (the memory-file lines known wrong with their corrections, the verified
        facts, StateWise's other corrections), within the same budget; "" when there is
        nothing to say, null without a workspace. Call it first when a session begins.
        """

        def run() -> dict[str, Any]:
            if task_scope is not None and workspace is not None:
                raise InputError("give workspace or task_scope, not both")
            place = service.workspace_for(workspace) if task_scope is None else None
            task = TaskScope.parse(task_scope) if place is None else service.task_scope(place)
            # The session context imports and checks the memory files first, so the records
            # retrieved below already hold what the check repaired.
            context = _session_note(service, place) if workspace is not None and place is not None else None
            retrieval = service.store.retrieve(task, keys=keys, text=text)
            return {"task_scope": str(task), "records": _records_json(retrieval.records),
                    "stale": _records_json(retrieval.stale), "shadowed": _records_json(retrieval.shadowed),
                    "near_misses": _records_json(retrieval.near_misses), "held_back": retrieval.held_back,
                    "session_context": context}

        return _tool_call(run)

    # --- check_action -----------------------------------------------------------------

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                             open_world_hint=True))
    async def check_action(
        task: Annotated[str, Field(min_length=1, description="What you were asked to do, in a sentence.")],
        action: Annotated[Action, Field(description=(
            "The side-effecting action you propose: tool (git, pip, shell, fs...), operation (a contract "
            "operation such as git.push, pip.install, test.run, fs.delete), target, args (e.g. "
            "{\"remote\": \"origin\", \"branch\": \"main\", \"force\": true} or {\"command\": \"pytest\"})."))],
        ctx: Context,
        workspace: WorkspaceArg = None,
        planner: Annotated[Literal["none", "rules"], Field(description=(
            "none (default): you are the planner; a proposal that relied on a wrong record is stopped with the "
            "correction so you can re-plan. rules: StateWise's offline playbooks probe and replan the action."))]
        = "none",
        full_report: Annotated[bool, Field(description="Include the counterfactual probes in the report.")] = False,
    ) -> dict[str, Any] | InputRequiredResult:
        """Run the guard on a proposed action before you execute it.

        Finds the records the action depends on, checks each (freshness, authority, scope,
        conflicts), verifies machine facts with read-only verifiers, asks the developer about
        developer-owned facts in doubt (through MCP elicitation when the client supports it),
        repairs wrong records with lineage, and gates the action on the contract's invariants.
        Returns `verdict` (execute or stop), `action` (the checked action to run, on execute),
        `reason`, `blocked_by`, `questions` (for the developer, when they could not be asked:
        answer them with remember(authority="developer")), `asked` (questions elicited and
        their answers), `next_step`, and `report` (premises, repairs, replanned action, gate
        checks, costs).
        """
        try:
            place = service.workspace_for(workspace)
            chosen = make_planner(planner)
        except StateWiseError as error:
            raise ToolError(_one_line(str(error))) from None

        def prepare() -> tuple[Any, TaskScope]:
            return service.store, service.task_scope(place)

        try:
            store, scope = await anyio.to_thread.run_sync(prepare)
        except StateWiseError as error:
            raise ToolError(_one_line(str(error))) from None
        job = Task(text=task, scope=scope, workspace=str(place))

        def check(clarifier: ClarificationChannel | None, *, dry_run: bool = False) -> Decision:
            config = GuardConfig(disabled=frozenset({"repair"})) if dry_run else GuardConfig()
            guard = Guard(store, contract, chosen, clarifier=clarifier, config=config, workspace=place)
            return guard.check(job, action)

        asked: list[dict[str, Any]] = []
        if not _elicitation_supported(ctx):
            decision = await anyio.to_thread.run_sync(functools.partial(check, None))
        elif _returns_questions(ctx):
            outcome = await _check_with_returned_questions(ctx, service, job, check, planner)
            if isinstance(outcome, InputRequiredResult):
                return outcome
            decision, asked = outcome
        else:
            decision, asked = await _check_with_pushed_questions(ctx, check)
        questions = _questions(decision.report)
        return {
            "verdict": decision.verdict.value,
            "execute": decision.execute,
            "action": decision.action.model_dump(mode="json") if decision.action is not None else None,
            "reason": decision.reason,
            "blocked_by": decision.report.blocked_by,
            "questions": questions,
            "asked": asked,
            "next_step": _next_step(decision, questions),
            "report": _report_json(decision.report, full=full_report),
        }

    # --- verify -----------------------------------------------------------------------

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=True))
    def verify(
        key: KeyArg,
        scope: Annotated[str | None, Field(description="Compare with the active record of KEY in exactly this "
                                                       "scope. Default: just observe.")] = None,
        workspace: WorkspaceArg = None,
        write: Annotated[bool, Field(description="Write the result: confirm the record, or supersede it with "
                                                 "lineage. Needs scope.")] = False,
    ) -> dict[str, Any]:
        """Observe KEY in the live workspace with its read-only verifier, and compare with the store.

        Returns `observed` (the value, "absent", or null when it could not be observed),
        `status` (valid, defective or unresolved), `detail`, `missing`, `stored` (the record
        compared with), `evidence`, and `repair` (what was written, with write=true).
        """

        def run() -> dict[str, Any]:
            check_key(key)
            if contract.key_type(key) is None:
                raise KeyNameError(key, f"the {contract.name} contract does not declare this key")
            if write and scope is None:
                raise InputError("write needs scope: the record to confirm or correct")
            place = service.workspace_for(workspace)
            store = service.store
            record = store.get_active(key, str(Scope.parse(scope))) if scope is not None else None
            if scope is not None and record is None:
                raise InputError(f"no active record for {key} in {Scope.parse(scope)}")
            resolver = Resolver(contract, service.task_scope(place), place, CostMeter(), use_reliability=False)
            premise = resolver.resolve(record) if record is not None else resolver.resolve_missing(key)
            repair = None
            if write and record is not None:
                repair, premise = apply_repair(store, record, premise)
            observed = premise.evidence.value if premise.evidence else ("absent" if premise.absent else None)
            return {"key": key, "observed": observed, "status": premise.status.value, "route": premise.route,
                    "detail": premise.detail, "missing": premise.missing, "question": premise.question,
                    "stored": _record_json(record) if record is not None else None,
                    "evidence": premise.evidence.model_dump(mode="json") if premise.evidence else None,
                    "repair": repair.model_dump(mode="json") if repair is not None else None}

        return _tool_call(run)

    # --- history and lineage ----------------------------------------------------------

    @server.tool(annotations=read_only)
    def history(key: KeyArg, scope: ScopeArg) -> dict[str, Any]:
        """Every record ever stored for exactly (KEY, SCOPE), oldest first, whatever its status
        (active, superseded, expired, retracted)."""

        def run() -> dict[str, Any]:
            check_key(key)
            where = str(Scope.parse(scope))
            return {"key": key, "scope": where, "records": _records_json(service.store.history(key, where))}

        return _tool_call(run)

    @server.tool(annotations=read_only)
    def lineage(record_id: RecordIdArg) -> dict[str, Any]:
        """A record's lineage: every record connected to it by supersessions, narrowings and
        reverts (oldest first), and the links between them with their evidence and reason."""

        def run() -> dict[str, Any]:
            found = service.store.lineage(record_id)
            return {"record_id": found.record_id, "records": _records_json(found.records),
                    "links": [link.model_dump(mode="json") for link in found.links]}

        return _tool_call(run)

    # --- revert_repair ----------------------------------------------------------------

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                             open_world_hint=False))
    def revert_repair(
        record_id: Annotated[str, Field(description="The record a repair produced (the new record of a "
                                                    "supersession or narrowing).")],
        reason: Annotated[str, Field(min_length=1, description="Why the repair is withdrawn (kept in lineage).")],
        actor: Annotated[str, Field(min_length=1, description="Who reverts it.")] = "agent",
    ) -> dict[str, Any]:
        """Undo the repair that produced RECORD_ID: the value it replaced becomes active again as
        a new record (linked by a revert link). A narrowing that replaced nothing is withdrawn so
        the general record applies again (`restored` is then null)."""

        def run() -> dict[str, Any]:
            store = service.store
            restored = store.revert(record_id, reason=reason, actor=actor)
            return {"reverted": _record_json(store.get(record_id)),
                    "restored": _record_json(restored) if restored is not None else None}

        return _tool_call(run)

    # --- forget -------------------------------------------------------------------------

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False))
    def forget(
        record_id: RecordIdArg,
        reason: Annotated[str, Field(min_length=1, description="Why the record no longer applies (kept in its "
                                                               "history).")],
        actor: Annotated[str, Field(min_length=1, description="Who retracts it.")] = "agent",
    ) -> dict[str, Any]:
        """Retract RECORD_ID: it stops applying to any task, and stays in history with the reason.
        Nothing replaces it; to correct a value instead, use remember (which supersedes)."""

        def run() -> dict[str, Any]:
            return {"retracted": _record_json(service.store.retract(record_id, reason=reason, actor=actor))}

        return _tool_call(run)

    return server


# --- the two ways of asking ----------------------------------------------------------------


async def _check_with_pushed_questions(
    ctx: Context, check: Callable[..., Decision]
) -> tuple[Decision, list[dict[str, Any]]]:
    """Handshake-era connections: the guard runs in a worker thread; each question is an
    elicitation/create request sent from the event loop while the guard waits for the answer."""
    log: list[dict[str, Any]] = []

    def ask(question: Question) -> Answer:
        try:
            result = anyio.from_thread.run(ctx.elicit, _question_message(question), _question_form(question))
        except Exception as error:  # noqa: BLE001 - a failed question is an unanswered one
            answer = Answer.unknown(by=_ELICITED_BY, note=_one_line(f"the question could not be asked: {error}"))
        else:
            data = result.data if isinstance(result, AcceptedElicitation) else None
            answer = _answer(question, result.action, data)
        log.append(_answer_json(question, answer))
        return answer

    decision = await anyio.to_thread.run_sync(functools.partial(check, CallbackClarifier(ask)))
    return decision, log


async def _check_with_returned_questions(
    ctx: Context, service: _Service, job: Task, check: Callable[..., Decision], planner: str
) -> tuple[Decision, list[dict[str, Any]]] | InputRequiredResult:
    """2026-07-28 connections: learn the questions from a dry run that writes nothing, return
    them as an InputRequiredResult, and run the real check once the retry brings the answers."""
    round_number, asked, answered, questions = _decode_state(ctx.request_state)
    responses = ctx.input_responses or {}
    for wire, question in asked.items():
        response = responses.get(wire)
        if isinstance(response, ElicitResult):
            answer = _answer(question, response.action, response.content)
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
                input_requests={wire: _elicit_request(q) for wire, q in pending.items()},
                request_state=_encode_state(round_number + 1, pending, answered, questions),
            )
    final = _Answers(answered)
    decision = await anyio.to_thread.run_sync(functools.partial(check, CallbackClarifier(final.lookup)))
    return decision, final.log


# --- running it ----------------------------------------------------------------------------


def serve_stdio(*, store_location: str | None, contract_path: str | None, workspace: str | None) -> None:
    """Serve StateWise over stdio until the client closes the connection (blocking).

    The store is opened before serving, so a bad location or contract fails here with a
    StateWise error instead of on the first call; it is closed when serving ends.
    """
    server = build_server(store_location=store_location, contract_path=contract_path, workspace=workspace)
    service: _Service = server.statewise  # type: ignore[attr-defined]
    service.open()

    def stop(signum: int, _frame: object) -> None:
        # The SDK reads stdin in a worker thread, so Ctrl-C in a terminal would otherwise wait
        # for input that never comes: close the store (a write in flight is one transaction,
        # rolled back if unfinished) and leave.
        service.close()
        print(f"statewise mcp: stopped by {signal.Signals(signum).name}", file=sys.stderr, flush=True)
        os._exit(130 if signum == signal.SIGINT else 143)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run("stdio")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        service.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m statewise.integrations.mcp_server",
                                     description="Serve StateWise's store and guard over MCP (stdio).")
    parser.add_argument("--store", default=os.environ.get("STATEWISE_STORE"), metavar="LOCATION",
                        help="SQLite file or postgresql:// URL (default: $STATEWISE_STORE, else "
                             ".statewise/store.db in the project)")
    parser.add_argument("--contract", default=os.environ.get("STATEWISE_CONTRACT"), metavar="FILE",
                        help="contract file (default: $STATEWISE_CONTRACT, else the built-in coding contract)")
    parser.add_argument("--workspace", metavar="DIR", help="the directory tasks run in (default: here)")
    args = parser.parse_args(argv)
    try:
        serve_stdio(store_location=args.store, contract_path=args.contract, workspace=args.workspace)
    except StateWiseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2 if isinstance(error, InputError) else 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
