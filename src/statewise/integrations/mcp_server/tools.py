"""The MCP tools: their typed arguments, their bodies, and the server that serves them."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import InputRequiredResult, ToolAnnotations
from pydantic import Field

from statewise import __version__
from statewise.actions import Action
from statewise.clarify import ClarificationChannel
from statewise.contract import builtin_contract, load_contract
from statewise.errors import InputError, KeyNameError, StateWiseError
from statewise.integrations.mcp_server.clarification import (
    check_with_pushed_questions,
    check_with_returned_questions,
    elicitation_supported,
    returns_questions,
)
from statewise.integrations.mcp_server.results import (
    AskedAnswer,
    CheckActionResult,
    ForgetResult,
    HeldBack,
    HistoryResult,
    LineageResult,
    RecallResult,
    RememberResult,
    RevertResult,
    VerifyResult,
    check_action_result,
    record_view,
    record_views,
)
from statewise.integrations.mcp_server.service import (
    Service,
    StrictServer,
    one_line,
    parse_time,
    session_note,
    tool_call,
)
from statewise.pipeline import Decision, Guard, GuardConfig
from statewise.pipeline.calls import CostMeter
from statewise.pipeline.repair import apply_repair
from statewise.pipeline.resolution import Resolver, established_scope
from statewise.planners import make_planner
from statewise.planners.base import Task
from statewise.records import Authority, Evidence, Provenance, RecordDraft, SourceKind, check_key, utcnow
from statewise.scopes import Scope, TaskScope
from statewise.values import check_value, same_value

__all__ = ["INSTRUCTIONS", "build_server"]

INSTRUCTIONS = """\
StateWise keeps this project's persistent operational records (protected branches, the test
command, interpreter versions, ...) and checks side-effecting actions against them.
Before running a side-effecting action (git push, package install, test run, file deletion),
call check_action with the task and the action. Run only what it returns when verdict is
"execute" (its `action` may differ from yours); on "stop", do not run it: read `reason`, and
re-plan from the repaired records (recall). When it returns `questions`, ask the developer and
record the answer with remember(authority="developer"). Record what you observe with remember.
"""


# --- arguments -----------------------------------------------------------------------------

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
    service = Service(store_location=store_location, contract=contract, workspace=root, user=user)
    server: MCPServer[Any] = StrictServer(
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
    ) -> RememberResult:
        """Record an observation or a developer statement: KEY = VALUE in a scope, with provenance.

        The value is checked against the contract's declared type (no coercion). The same value
        as the active record in that scope confirms it (refreshes its verification time); a
        different value supersedes it and keeps the old one in lineage. Returns the stored
        record (with `stale`, `fresh_until`, `authority`) and what happened: stored, confirmed or
        superseded.
        """

        def run() -> RememberResult:
            spec = contract.state_spec(key)
            declared = contract.key_type(key)
            check_key(key)
            if spec is None or declared is None:
                raise KeyNameError(key, f"the {contract.name} contract does not declare this key")
            check_value(value, declared.value_type, choices=declared.choices, key=key)
            observed = parse_time(observed_at, "observed_at")
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
            outcome: Literal["stored", "confirmed", "superseded"]
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
            return RememberResult(outcome=outcome, record=record_view(record),
                                  superseded=existing.id if outcome == "superseded" and existing is not None else None)

        return tool_call(run)

    # --- recall -----------------------------------------------------------------------

    # Not read-only: with a workspace, the session note imports and checks the memory files
    # first, which writes their records and the check's repairs to the store. Idempotent: a
    # second call with the same files writes nothing new.
    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=False))
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
    ) -> RecallResult:
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

        def run() -> RecallResult:
            if task_scope is not None and workspace is not None:
                raise InputError("give workspace or task_scope, not both")
            context: str | None = None
            if task_scope is not None:
                task = TaskScope.parse(task_scope)
            else:
                place = service.workspace_for(workspace)
                task = service.task_scope(place)
                # The session context imports and checks the memory files first, so the
                # records retrieved below already hold what the check repaired.
                if workspace is not None:
                    context = session_note(service, place)
            retrieval = service.store.retrieve(task, keys=keys, text=text)
            return RecallResult(task_scope=str(task), records=record_views(retrieval.records),
                                stale=record_views(retrieval.stale), shadowed=record_views(retrieval.shadowed),
                                near_misses=record_views(retrieval.near_misses),
                                held_back=HeldBack(**retrieval.held_back), session_context=context)

        return tool_call(run)

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
    ) -> CheckActionResult | InputRequiredResult:
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
            raise ToolError(one_line(str(error))) from None

        def prepare() -> tuple[Any, TaskScope]:
            return service.store, service.task_scope(place)

        try:
            store, scope = await anyio.to_thread.run_sync(prepare)
        except StateWiseError as error:
            raise ToolError(one_line(str(error))) from None
        job = Task(text=task, scope=scope, workspace=str(place))

        def check(clarifier: ClarificationChannel | None, *, dry_run: bool = False) -> Decision:
            config = GuardConfig(disabled=frozenset({"repair"})) if dry_run else GuardConfig()
            guard = Guard(store, contract, chosen, clarifier=clarifier, config=config, workspace=place)
            return guard.check(job, action)

        asked: list[AskedAnswer] = []
        if not elicitation_supported(ctx):
            decision = await anyio.to_thread.run_sync(functools.partial(check, None))
        elif returns_questions(ctx):
            outcome = await check_with_returned_questions(ctx, service, job, check, planner)
            if isinstance(outcome, InputRequiredResult):
                return outcome
            decision, asked = outcome
        else:
            decision, asked = await check_with_pushed_questions(ctx, check)
        return check_action_result(decision, asked, full_report=full_report)

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
    ) -> VerifyResult:
        """Observe KEY in the live workspace with its read-only verifier, and compare with the store.

        Returns `observed` (the value, "absent", or null when it could not be observed),
        `status` (valid, defective or unresolved), `detail`, `missing`, `stored` (the record
        compared with), `evidence`, and `repair` (what was written, with write=true).
        """

        def run() -> VerifyResult:
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
            return VerifyResult(key=key, observed=observed, status=premise.status, route=premise.route,
                                detail=premise.detail, missing=premise.missing, question=premise.question,
                                stored=record_view(record) if record is not None else None,
                                evidence=premise.evidence, repair=repair)

        return tool_call(run)

    # --- history and lineage ----------------------------------------------------------

    @server.tool(annotations=read_only)
    def history(key: KeyArg, scope: ScopeArg) -> HistoryResult:
        """Every record ever stored for exactly (KEY, SCOPE), oldest first, whatever its status
        (active, superseded, expired, retracted)."""

        def run() -> HistoryResult:
            check_key(key)
            where = str(Scope.parse(scope))
            return HistoryResult(key=key, scope=where, records=record_views(service.store.history(key, where)))

        return tool_call(run)

    @server.tool(annotations=read_only)
    def lineage(record_id: RecordIdArg) -> LineageResult:
        """A record's lineage: every record connected to it by supersessions, narrowings and
        reverts (oldest first), and the links between them with their evidence and reason."""

        def run() -> LineageResult:
            found = service.store.lineage(record_id)
            return LineageResult(record_id=found.record_id, records=record_views(found.records), links=found.links)

        return tool_call(run)

    # --- revert_repair ----------------------------------------------------------------

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                             open_world_hint=False))
    def revert_repair(
        record_id: Annotated[str, Field(description="The record a repair produced (the new record of a "
                                                    "supersession or narrowing).")],
        reason: Annotated[str, Field(min_length=1, description="Why the repair is withdrawn (kept in lineage).")],
        actor: Annotated[str, Field(min_length=1, description="Who reverts it.")] = "agent",
    ) -> RevertResult:
        """Undo the repair that produced RECORD_ID: the value it replaced becomes active again as
        a new record (linked by a revert link). A narrowing that replaced nothing is withdrawn so
        the general record applies again (`restored` is then null)."""

        def run() -> RevertResult:
            store = service.store
            restored = store.revert(record_id, reason=reason, actor=actor)
            return RevertResult(reverted=record_view(store.get(record_id)),
                                restored=record_view(restored) if restored is not None else None)

        return tool_call(run)

    # --- forget -------------------------------------------------------------------------

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False))
    def forget(
        record_id: RecordIdArg,
        reason: Annotated[str, Field(min_length=1, description="Why the record no longer applies (kept in its "
                                                               "history).")],
        actor: Annotated[str, Field(min_length=1, description="Who retracts it.")] = "agent",
    ) -> ForgetResult:
        """Retract RECORD_ID: it stops applying to any task, and stays in history with the reason.
        Nothing replaces it; to correct a value instead, use remember (which supersedes)."""

        def run() -> ForgetResult:
            return ForgetResult(retracted=record_view(service.store.retract(record_id, reason=reason, actor=actor)))

        return tool_call(run)

    return server
