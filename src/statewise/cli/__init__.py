"""The ``statewise`` command line: parse, call the library, render. Nothing else lives here.

Every command imports what it uses in its own body: at start-up this module imports only click
and the standard library, so that ``statewise --help`` and a usage error cost little more than
the interpreter (``tests/cli/test_startup.py`` holds each command to it).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from statewise import __version__
from statewise.cli.context import (
    Context,
    SentenceGroup,
    console,
    emit_json,
    errors,
    handled,
    project_option,
    task_scope_of,
    unknown_key,
    validation_message,
)
from statewise.cli.memory import memory
from statewise.errors import InputError, InputTooLargeError, MissingExtraError
from statewise.values import ValueType

if TYPE_CHECKING:
    from statewise.scopes import Scope

#: The choices of ``record add --source`` and ``--authority``: statewise.records' SourceKind and
#: Authority, written out because that module imports pydantic (a test checks they match).
SOURCE_KINDS = ("observation", "tool_output", "developer", "agent_inference", "import")
AUTHORITIES = ("machine", "developer", "agent")


@click.group(cls=SentenceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--store", "store_location", metavar="LOCATION",
              help="SQLite file path or postgresql:// URL (env STATEWISE_STORE; default: config.toml's store, "
                   "else .statewise/store.db at the project's git root).")
@click.option("--contract", "contract_path", metavar="FILE",
              help="Contract file declaring the state keys (env STATEWISE_CONTRACT; default: config.toml's "
                   "contract, else the built-in coding contract).")
@click.option("-v", "--verbose", "verbose", count=True, help="Say more on stderr (where each setting came from).")
@click.option("-q", "--quiet", is_flag=True, help="Say nothing on stderr but errors (no progress bar).")
@click.version_option(__version__, "-V", "--version", prog_name="statewise")
@click.pass_context
def main(ctx: click.Context, store_location: str | None, contract_path: str | None, verbose: int,
         quiet: bool) -> None:
    """StateWise: check and repair an agent's persistent records before it acts on them."""
    state = Context(store_location, contract_path, verbosity=-1 if quiet else verbose)
    ctx.obj = state
    ctx.call_on_close(state.close)


#: What ``init`` writes into ``.statewise/.gitignore``: everything in the folder stays out of git,
#: without an edit of the user's own .gitignore.
GITIGNORE = ("# Written by `statewise init`: the store stays out of git; config.toml may be committed.\n"
             "*\n!.gitignore\n!config.toml\n")


@main.command()
@project_option(help="The project to set up (default: here; its git root).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handled
def init(obj: Context, project: str | None, as_json: bool) -> None:
    """Create the store (and its schema) if it does not exist yet, and keep .statewise/ out of git."""
    obj.at(project)
    store = obj.store
    folder = obj.settings.root / ".statewise"
    ignore = folder / ".gitignore"
    location = Path(store.location) if not obj.location.partition("://")[1] else None
    if (folder.is_dir() or (location is not None and folder in location.resolve().parents)) and not ignore.exists():
        folder.mkdir(parents=True, exist_ok=True)
        ignore.write_text(GITIGNORE, encoding="utf-8")
    info = {"store": store.location, "schema_version": store.schema_version(),  # type: ignore[attr-defined]
            "records": store.count(), "gitignore": str(ignore) if ignore.exists() else None,
            "config": str(obj.settings.config_path) if obj.settings.config_path else None}
    if as_json:
        emit_json(info)
    else:
        console.print(f"store ready at {info['store']} (schema version {info['schema_version']}, "
                      f"{info['records']} records)", highlight=False)


# --- records ----------------------------------------------------------------------------


@main.group()
def record() -> None:
    """Add, read, correct and move records."""


@record.command("add")
@click.argument("key")
@click.argument("value")
@click.option("--scope", help="Where it applies: global, user:NAME, workspace:PATH, repo:ID[@BRANCH] (default: the "
                               "current folder's scope at the level the contract declares for KEY).")
@click.option("--type", "value_type", type=click.Choice([t.value for t in ValueType]),
              help="Value type (default: as the contract declares the key).")
@click.option("--source", type=click.Choice(SOURCE_KINDS), default="developer", show_default=True)
@click.option("--authority", type=click.Choice(AUTHORITIES), default="developer", show_default=True)
@click.option("--actor", default=lambda: os.environ.get("STATEWISE_USER") or os.environ.get("USER") or "developer",
              help="Who says so (default: $STATEWISE_USER, else $USER).")
@click.option("--ref", "reference", help="A free reference: a tool call, a commit, a URL.")
@click.option("--observed-at", help="When the fact was seen to hold (ISO 8601 with zone; default now).")
@click.option("--ttl", type=click.IntRange(min=1), help="Freshness in seconds (default: the contract's).")
@click.option("--replace", is_flag=True, help="Supersede the active record for this key and scope.")
@click.option("--reason", default="", help="Why (kept in lineage when replacing).")
@click.option("--json", "as_json", is_flag=True, help="Print the stored record as JSON.")
@click.pass_obj
@handled
def record_add(obj: Context, key: str, value: str, scope: str | None, value_type: str | None, source: str,
               authority: str, actor: str, reference: str | None, observed_at: str | None, ttl: int | None,
               replace: bool, reason: str, as_json: bool) -> None:
    """Store KEY = VALUE in a scope. VALUE is parsed by the key's type (true/false, 3.11, a,b)."""
    from statewise.records import Authority, Provenance, RecordDraft, SourceKind, parse_time
    from statewise.values import parse_value_text, render_value

    declared = obj.contract.key_type(key)
    if declared is None:
        raise unknown_key(obj.contract, key)
    typed_value = parse_value_text(value, value_type or declared.value_type, choices=declared.choices, key=key)
    if scope is None:
        scope = str(derived_scope(obj, key))
    from statewise.protection import agent_running

    client = agent_running(os.environ)
    if client is not None and (authority != Authority.AGENT.value or source != SourceKind.AGENT_INFERENCE.value):
        # Run by the agent (its client marks its tool subprocesses): whatever the flags say, the
        # record is the agent's word, and the guard weighs it as such (issue 25).
        obj.info(f"run by {client}'s agent: the record is stored with agent authority (source agent_inference), "
                 f"not --authority {authority} --source {source}")
        source, authority, actor = SourceKind.AGENT_INFERENCE.value, Authority.AGENT.value, f"{client} agent"
    draft = RecordDraft(
        key=key, value=typed_value, scope=scope,
        value_type=ValueType(value_type) if value_type else None,
        provenance=Provenance(source=SourceKind(source), authority=Authority(authority), actor=actor,
                              reference=reference),
        observed_at=parse_time(observed_at, "--observed-at"), ttl_seconds=ttl,
    )
    from statewise.errors import ActiveRecordExistsError

    try:
        stored = obj.store.put(draft, replace=replace, reason=reason)
    except ActiveRecordExistsError as error:
        # Name the flag, not the library's keyword argument.
        error.args = (f"{error.key} already has an active record in {error.scope} ({error.record_id}); "
                      "add --replace to supersede it (the old record stays in lineage)",)
        raise
    if as_json:
        emit_json(stored)
    else:
        verb = f"superseded {stored.supersedes} with" if stored.supersedes else "stored"
        console.print(f"{verb} {stored.id}: {key} = {render_value(stored.value)} in {stored.scope}",
                      highlight=False)


def derived_scope(obj: Context, key: str) -> Scope:
    """KEY's scope for the current folder, at the level the contract declares for it (as `record
    list` derives the task from the folder); InputError naming --scope when the folder cannot say."""
    from statewise.scopes import ScopeLevel

    spec = obj.contract.state_spec(key)
    level = spec.scope if spec is not None else ScopeLevel.GLOBAL
    here = os.getcwd()
    found = task_scope_of(None, here).most_specific_at(level)
    name = level.name.lower()  # the level's word (repo), not its rank
    if found is None:
        raise InputError(f"--scope: {key} is kept per {name}, and {here} does not say which "
                         f"{name} (not a git checkout with that information); give --scope")
    obj.info(f"scope {found} (derived from {here} at {key}'s level, {name})")
    return found


@record.command("get")
@click.argument("key")
@click.option("--scope", required=True, help="The exact scope of the record.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handled
def record_get(obj: Context, key: str, scope: str, as_json: bool) -> None:
    """Show the active record for KEY in exactly this scope."""
    from statewise.render import record_table
    from statewise.scopes import Scope

    found = obj.existing_store().get_active(key, scope)
    if found is None and obj.contract.key_type(key) is None:
        raise unknown_key(obj.contract, key)
    if as_json:
        emit_json(found)
    elif found is None:
        console.print(f"no active record for {key} in {Scope.parse(scope)}", highlight=False)
    else:
        console.print(record_table([found]))
    if found is None:
        sys.exit(1)


@record.command("list")
@click.option("--task", help="Task scope, e.g. user:alice,workspace:/src/app,repo:github.com/acme/app@main "
              "(default: derived from --project).")
@project_option("cwd", help="Derive the task scope from this directory, and use its project's store.")
@click.option("--key", "keys", multiple=True, help="Only this key (repeatable; a base key matches its [qualified] forms).")
@click.option("--text", help="Only records whose key or value contains this text.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handled
def record_list(obj: Context, task: str | None, cwd: str | None, keys: tuple[str, ...], text: str | None,
                as_json: bool) -> None:
    """Show the records that apply to a task, and what was held back (stale, shadowed, near misses)."""
    from statewise.front import print_retrieval, retrieve_for_list

    for key in keys:
        if obj.at(cwd).contract.state_spec(key) is None:
            raise unknown_key(obj.contract, key)
    # The front door (statewise.__main__) answers the text view without click through the same
    # two functions (docs/performance-cli.md); the JSON is the model's own serialisation.
    result = retrieve_for_list(obj, task, cwd, keys, text)
    if as_json:
        emit_json(result.to_retrieval())
    else:
        print_retrieval(result)


@record.command("history")
@click.argument("key")
@click.option("--scope", required=True, help="The exact scope.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handled
def record_history(obj: Context, key: str, scope: str, as_json: bool) -> None:
    """Every record ever stored for KEY in a scope, oldest first."""
    from statewise.render import record_table
    from statewise.scopes import Scope

    records = obj.existing_store().history(key, scope)
    if not records and obj.contract.key_type(key) is None:
        raise unknown_key(obj.contract, key)
    if as_json:
        emit_json(records)
    else:
        console.print(record_table(records, title=f"History of {key} in {Scope.parse(scope)}"))


@record.command("lineage")
@click.argument("record_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handled
def record_lineage(obj: Context, record_id: str, as_json: bool) -> None:
    """The chain of records and repairs (with their evidence) around RECORD_ID."""
    from statewise.render import lineage_view

    lineage = obj.existing_store().lineage(record_id)
    if as_json:
        emit_json(lineage)
    else:
        console.print(lineage_view(lineage))


@record.command("retract")
@click.argument("record_id")
@click.option("--reason", required=True, help="Why it is withdrawn.")
@click.option("--actor", default=lambda: os.environ.get("STATEWISE_USER") or os.environ.get("USER") or "developer",
              help="Who withdraws it (default: $STATEWISE_USER, else $USER).")
@click.option("--json", "as_json", is_flag=True, help="Print the retracted record as JSON.")
@click.pass_obj
@handled
def record_retract(obj: Context, record_id: str, reason: str, actor: str, as_json: bool) -> None:
    """Withdraw a record ("forget this"); it is kept, marked retracted."""
    retracted = obj.existing_store().retract(record_id, reason=reason, actor=actor)
    if as_json:
        emit_json(retracted)
    else:
        console.print(f"retracted {retracted.id} ({retracted.key} in {retracted.scope})", highlight=False)


@record.command("revert")
@click.argument("record_id")
@click.option("--reason", required=True, help="Why the repair's evidence no longer holds.")
@click.option("--actor", default=lambda: os.environ.get("STATEWISE_USER") or os.environ.get("USER") or "developer",
              help="Who withdraws it (default: $STATEWISE_USER, else $USER).")
@click.option("--json", "as_json", is_flag=True, help="Print the restored record as JSON.")
@click.pass_obj
@handled
def record_revert(obj: Context, record_id: str, reason: str, actor: str, as_json: bool) -> None:
    """Undo the repair that produced RECORD_ID, restoring the value it replaced."""
    from statewise.values import render_value

    restored = obj.existing_store().revert(record_id, reason=reason, actor=actor)
    if as_json:
        emit_json({"reverted": record_id, "restored": restored})
    elif restored is None:
        console.print(f"reverted {record_id}: the narrowed correction is withdrawn; the general record applies again",
                      highlight=False)
    else:
        console.print(f"reverted {record_id}: restored {restored.key} = {render_value(restored.value)} as {restored.id}",
                      highlight=False)


@record.command("export")
@click.argument("output", type=click.Path(dir_okay=False, allow_dash=True), default="-")
@click.pass_obj
@handled
def record_export(obj: Context, output: str) -> None:
    """Write every record and link as JSON Lines to OUTPUT (default: stdout)."""
    store = obj.existing_store()
    if output == "-":
        store.export_jsonl(sys.stdout)
        return
    target = Path(output)
    partial = target.with_name(target.name + ".partial")
    with open(partial, "w", encoding="utf-8") as out:
        lines = store.export_jsonl(out)
    partial.replace(target)  # never leave a half-written export under the real name
    obj.info(f"exported {lines} lines to {target}")


@record.command("import")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Draw the progress bar on stderr (default: only when stderr is a terminal).")
@click.pass_obj
@handled
def record_import(obj: Context, source: str, show_progress: bool | None) -> None:
    """Import JSON Lines written by `record export`; all or nothing.

    The file is streamed in batches (memory stays bounded at any size) and a progress bar
    goes to stderr when it is a terminal."""
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    from statewise.protection import agent_running

    client = agent_running(os.environ)
    if client is not None:
        # An export names each record's provenance; imported by the agent, a file could claim
        # the developer's authority for anything. The developer imports.
        raise click.UsageError(f"run by {client}'s agent: `statewise record import` writes records with the "
                               "provenance the file claims, so only the developer runs it (outside the agent)")
    handle = sys.stdin if source == "-" else open(source, encoding="utf-8")  # noqa: SIM115
    try:
        total = None if source == "-" else max(1, Path(source).stat().st_size)
        columns = [TextColumn("importing"), BarColumn(), TaskProgressColumn(), TextColumn("{task.fields[lines]:,} lines"),
                   TimeRemainingColumn()]
        draw = errors.is_terminal if show_progress is None else show_progress
        with Progress(*columns, console=errors.real(), transient=errors.is_terminal, disable=not draw) as bar:
            task = bar.add_task("import", total=total, lines=0)

            def advance(lines: int, chars: int) -> None:
                bar.update(task, completed=chars if total else None, lines=lines)

            count = obj.store.import_jsonl(handle, source="<stdin>" if source == "-" else source, progress=advance)
    finally:
        if handle is not sys.stdin:
            handle.close()
    console.print(f"imported {count} lines", highlight=False)


# --- the guard --------------------------------------------------------------------------


def _read_action(source: str) -> Any:
    from pydantic import ValidationError

    from statewise.actions import Action
    from statewise.limits import MAX_ACTION_BYTES, read_capped

    if source == "-":
        text = sys.stdin.read(MAX_ACTION_BYTES + 1)
        if len(text) > MAX_ACTION_BYTES:
            raise InputTooLargeError("<stdin>", len(text), MAX_ACTION_BYTES, "action", unread=False)
    else:
        text = read_capped(source, MAX_ACTION_BYTES, "action").decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{source}: not JSON ({error.msg} at line {error.lineno}, column {error.colno})") from None
    try:
        return Action.model_validate(data)
    except ValidationError as error:
        raise InputError(validation_message(error, f"{source}: action")) from None


def _params(pairs: tuple[str, ...]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise InputError(f"--param {pair!r}: expected NAME=VALUE")
        params[name] = value
    return params


@main.command()
@click.option("--task", "task_text", required=True, help="What the agent was asked to do.")
@click.option("--action", "action_source", type=click.Path(dir_okay=False, allow_dash=True),
              help="The proposed action as JSON (a file, or - for stdin). Default: the planner proposes.")
@click.option("--family", help="The playbook family of the task (default: matched from the task text).")
@click.option("--param", "params", multiple=True, help="A task parameter NAME=VALUE (repeatable).")
@project_option("cwd", help="The workspace (default: here; its project's store is used).")
@click.option("--planner", "planner_spec", default="rules", show_default=True,
              help="rules, none (no planner), openai:MODEL, anthropic:MODEL, or a registered planner.")
@click.option("--base-url", help="The model endpoint's base URL (OpenAI-compatible servers, proxies).")
@click.option("--noise", type=click.FloatRange(0, 1), default=0.0, help="Wrap the planner in the seeded noisy wrapper.")
@click.option("--seed", type=int, default=0, help="Seed of the noisy wrapper.")
@click.option("--ablation", default="full", show_default=True, help="full, or no_<stage> to switch a stage off.")
@click.option("--interactive", is_flag=True, help="Ask clarifications and approvals on this terminal.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write the full report (JSON) here.")
@click.option("--json", "as_json", is_flag=True, help="Print the decision and its report as JSON.")
@click.pass_obj
@handled
def guard(obj: Context, task_text: str, action_source: str | None, family: str | None, params: tuple[str, ...],
          cwd: str | None, planner_spec: str, base_url: str | None, noise: float, seed: int, ablation: str,
          interactive: bool, report_path: str | None, as_json: bool) -> None:
    """Check a proposed action before it runs. Exit 0: execute; 3: stop (the reason is printed)."""
    from statewise.clarify import TerminalApprover, TerminalClarifier
    from statewise.pipeline import Guard, GuardConfig
    from statewise.planners import make_planner
    from statewise.planners.base import Task
    from statewise.workspace import derive_task_scope

    workspace = Path(cwd or os.getcwd()).resolve()
    try:
        config = GuardConfig.ablation(ablation)
    except ValueError as error:
        raise InputError(f"--ablation: {error}") from None
    planner = make_planner(planner_spec, base_url=base_url, noise=noise, seed=seed)
    proposal = _read_action(action_source) if action_source else None
    if proposal is None and planner is None:
        raise InputError("--action is required with --planner none (nothing else would propose one)")
    task = Task(text=task_text, scope=derive_task_scope(workspace), family=family, workspace=str(workspace),
                params=_params(params))
    guard_ = Guard(obj.at(workspace).existing_store(), obj.contract, planner, config=config, workspace=workspace,
                   clarifier=TerminalClarifier() if interactive else None,
                   approver=TerminalApprover() if interactive else None)
    decision = guard_.check(task, proposal)
    if report_path:
        Path(report_path).write_text(decision.report.model_dump_json(indent=2), encoding="utf-8")
        obj.info(f"report: {report_path}")
    if as_json:
        emit_json({"verdict": decision.verdict.value, "action": decision.action, "reason": decision.reason,
                    "report": decision.report})
    else:
        report = decision.report
        console.print(f"proposal: {report.proposal.describe()}", highlight=False)
        for repair in report.repairs:
            if repair.kind in ("supersede", "narrow", "retract", "transient"):
                console.print(f"repaired: {repair.key} {json.dumps(repair.old_value)} -> "
                              f"{json.dumps(repair.new_value)} in {repair.scope} ({repair.kind})", highlight=False)
        if report.replanned is not None:
            console.print(f"replanned: {report.replanned.describe()}", highlight=False)
        from rich.markup import escape

        from statewise.cli.reasons import reason_lines

        style = "green" if decision.execute else "red"
        # The sentence after the verdict, then each fact it rests on, and each distinct error, on a
        # line of its own (a reason can hold many facts that failed for one network error).
        first, *facts = reason_lines(decision.reason)
        console.print(f"[{style}]{decision.verdict.value}[/{style}]: {escape(first)}", highlight=False)
        for fact in facts:
            console.print(f"  {fact}", highlight=False, markup=False)
    if not decision.execute:
        sys.exit(3)


@main.command()
@click.argument("key")
@click.option("--scope", help="Compare with the active record of KEY in this exact scope.")
@project_option("cwd", help="The workspace to observe (default: here).")
@click.option("--write", is_flag=True, help="Write the result: confirm the record, or supersede it with lineage.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handled
def verify(obj: Context, key: str, scope: str | None, cwd: str | None, write: bool, as_json: bool) -> None:
    """Observe KEY in the live workspace with its read-only verifier (and compare with the store)."""
    from statewise.pipeline.calls import CostMeter
    from statewise.pipeline.repair import apply_repair
    from statewise.pipeline.resolution import Resolver
    from statewise.records import base_key
    from statewise.scopes import Scope
    from statewise.workspace import derive_task_scope

    workspace = Path(cwd or os.getcwd()).resolve()
    obj.at(workspace)
    if base_key(key) not in obj.contract.state:
        raise unknown_key(obj.contract, key)
    task_scope = derive_task_scope(workspace)
    record = obj.existing_store().get_active(key, scope) if scope else None
    if scope and record is None:
        raise InputError(f"no active record for {key} in {Scope.parse(scope)}")
    resolver = Resolver(obj.contract, task_scope, workspace, CostMeter(), use_reliability=False)
    premise = resolver.resolve(record) if record is not None else resolver.resolve_missing(key)
    repair = None
    if write and record is not None:
        repair, premise = apply_repair(obj.store, record, premise)
    if as_json:
        emit_json({"premise": premise, "repair": repair})
    else:
        observed = premise.evidence.value if premise.evidence else ("absent" if premise.absent else None)
        console.print(f"{key}: observed {json.dumps(observed)} ({premise.detail or premise.missing})", highlight=False)
        if record is not None:
            console.print(f"stored {json.dumps(record.value)} in {record.scope}: {premise.status.value}", highlight=False)
        if repair is not None:
            console.print(f"wrote: {repair.kind} {repair.record_id} -> {repair.new_record_id}", highlight=False)
    if premise.status.value == "unresolved":
        sys.exit(1)


# --- the benchmark --------------------------------------------------------------------------


def _csv(text: str | None) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


def _installed_cases() -> str:
    """The case sets installed with StateWise, as statewise.bench.runner.default_cases_dir finds
    them after the environment and the working directory: the wheel's statewise/bench/cases,
    else a source checkout's benchmarks/cases (a test checks the two agree)."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "bench" / "cases"
    return str(shipped if shipped.is_dir() else package.parents[1] / "benchmarks" / "cases")


@main.command()
@click.option("--cases", "cases_dir", type=click.Path(exists=True, file_okay=False),
              help="A directory of case sets (default: $STATEWISE_BENCH_CASES, else ./benchmarks/cases when it "
                   f"exists, else the sets installed with StateWise: {_installed_cases()}).")
@click.option("--sets", help="Comma-separated case set folders to run (default: primary; with --only: every set).")
@click.option("--methods", help="Comma-separated methods: agent, statewise, hook, paper, statewise_basis, statewise_core, "
                                "no_<stage>, or registered baselines (default: agent,statewise).")
@click.option("--all", "everything", is_flag=True,
              help="Every set with agent, statewise, hook, paper, statewise_basis and statewise_core, plus every baseline and "
                   "ablation on the primary set and the sequences. Not with --sets or --methods.")
@click.option("--conditions", default="correct,corrupted,removed", show_default=True,
              help="Comma-separated target-record conditions.")
@click.option("--planner", "planner_spec", default="rules", show_default=True,
              help="rules, noisy:P, wayward:P (overrules a relied-on record with probability P), or a model spec.")
@click.option("--only", help="Comma-separated case or sequence ids.")
@click.option("--quick", is_flag=True, help="One case per category and expectation, and the first sequence, per set.")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True, help="Worker processes.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--output", "-o", "output_path", type=click.Path(dir_okay=False),
              help="Write every episode and metric as JSON to this file.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="The same as --output FILE (kept for older scripts).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write an offline HTML report with plots.")
@click.pass_obj
@handled
def bench(obj: Context, cases_dir: str | None, sets: str | None, methods: str | None, everything: bool,
          conditions: str, planner_spec: str, only: str | None, quick: bool, jobs: int, seed: int,
          output_path: str | None, json_path: str | None, html_path: str | None) -> None:
    """Run the executable benchmark in real sandboxes and print the paper's metrics."""
    from statewise.bench import run_bench

    if output_path and json_path and Path(output_path) != Path(json_path):
        raise InputError("--output and --json are the same option and name different files; give one of them")
    json_path = output_path or json_path
    if html_path:
        from statewise.bench.html import require_matplotlib

        require_matplotlib()  # before a run of minutes, not after it
    try:
        result = run_bench(cases_dir, sets=_csv(sets), methods=_csv(methods), conditions=_csv(conditions) or [],
                           planner_spec=planner_spec, quick=quick, jobs=jobs, out=json_path, progress=True, seed=seed,
                           cases=_csv(only), console=console.real(), everything=everything,
                           progress_console=errors.real() if obj.verbosity >= 0 else False)
    except ValueError as error:
        raise InputError(str(error)) from None
    if json_path:
        obj.info(f"results: {json_path}")
    if html_path:
        from statewise.bench.html import write_html_report

        obj.info(f"report: {write_html_report(result, html_path)}")


# --- agent integrations -------------------------------------------------------------------

_AGENTS = click.Choice(["claude-code", "codex", "gemini"])


# Hidden from the listing: the installed wrapper runs it, a developer never needs to.
@main.command(hidden=True)
@click.argument("agent", type=_AGENTS)
@click.option("--event", type=click.Choice(["pre", "post", "session", "prompt", "stop", "pre-tool-use", "post-tool-use"]),
              default="pre", show_default=True,
              help="Before the tool runs (guard), after it ran (observation capture), as a session starts, or "
                   "before the model plans a prompt (the repaired state), or as the agent stops (a stop on a "
                   "corrected fact is continued once); "
                   "the JSON's hook_event_name decides when present.")
@click.option("--on-pass", type=click.Choice(["defer", "allow"]), default=None,
              help="When every check passes: leave the decision to the agent's own permissions, or allow (default: the project's config.toml, else defer).")
@click.option("--deadline", type=click.FloatRange(min=0.5), default=20.0, show_default=True,
              help="Seconds after which the hook answers for itself (a block, before a tool runs).")
@click.pass_obj
def hook(obj: Context, agent: str, event: str, on_pass: str, deadline: float) -> None:
    """Read the agent's hook JSON on stdin and print its decision (never fails open).

    The wrapper that `statewise install` writes runs the same code through the faster
    `python -m statewise.integrations.hook_entry`."""
    from statewise.integrations.hook_entry import main as hook_main

    argv = [agent, {"pre-tool-use": "pre", "post-tool-use": "post"}.get(event, event), "--deadline", str(deadline)]
    if on_pass:
        argv += ["--on-pass", on_pass]
    if obj.store_location:
        argv += ["--store", obj.store_location]
    if obj.contract_path:
        argv += ["--contract", obj.contract_path]
    hook_main(argv)


@main.command()
@click.argument("agent", type=_AGENTS)
@click.option("--user", is_flag=True, help="Install into the user's settings instead of this project's.")
@click.option("--project", type=click.Path(file_okay=False), help="The project (default: here; its git root is used).")
@click.option("--timeout", type=click.IntRange(min=10), default=30, show_default=True,
              help="Seconds the client gives the hook (written in the client's unit: milliseconds for Gemini).")
@click.option("--executable", type=click.Path(dir_okay=False),
              help="A program the wrapper runs instead of this StateWise (same arguments); for testing.")
@click.pass_obj
@handled
def install(obj: Context, agent: str, user: bool, project: str | None, timeout: int, executable: str | None) -> None:
    """Write the fail-closed hook wrapper and add StateWise's hooks to the agent's settings (idempotent)."""
    from statewise.integrations.install import install_hooks, wrapper_path

    path, changed = install_hooks(agent, project=project, user=user, timeout=timeout, executable=executable,
                                  store=obj.store_location, contract=obj.contract_path)
    if executable is None:
        from statewise.integrations.warm import prepare

        prepare()  # a warm worker for the first session's first guarded call (it ends when idle)
    console.print(f"{'installed into' if changed else 'already installed in'} {path} "
                  f"(wrapper {wrapper_path(project=project, user=user)})", highlight=False)
    if not user:
        console.print(f"{path.name} holds portable commands a team can commit; the wrapper is this machine's own "
                      f"(kept out of git): each teammate runs `statewise install {agent}` once", highlight=False)
    console.print(f"check it with: statewise doctor --agent {agent}", highlight=False)


@main.command()
@click.argument("agent", type=_AGENTS)
@click.option("--user", is_flag=True, help="Remove from the user's settings instead of this project's.")
@click.option("--project", type=click.Path(file_okay=False), help="The project (default: here; its git root is used).")
@handled
def uninstall(agent: str, user: bool, project: str | None) -> None:
    """Remove StateWise's hooks from the agent's settings, leaving every other hook."""
    from statewise.integrations.install import uninstall_hooks

    path, removed = uninstall_hooks(agent, project=project, user=user)
    console.print(f"removed {removed} StateWise hook(s) from {path}", highlight=False)


@main.command()
@click.option("--agent", "agents", type=_AGENTS, multiple=True,
              help="The agent to check (repeatable; default: every agent installed here).")
@click.option("--user", is_flag=True, help="Check the user's settings instead of this project's.")
@click.option("--project", type=click.Path(file_okay=False), help="The project (default: here; its git root is used).")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@handled
def doctor(agents: tuple[str, ...], user: bool, project: str | None, as_json: bool) -> None:
    """Check that the installed hooks cannot fail open, and print the effect and fix of each problem.

    Exits 1 when a problem blocks every guarded call or lets a tool run unchecked."""
    from statewise.integrations.doctor import diagnose, doctor_summary
    from statewise.integrations.install import AGENTS, settings_path

    chosen = list(agents) or [name for name in AGENTS if settings_path(name, project=project, user=user).exists()]
    if not chosen:
        chosen = list(AGENTS)
    checks = [check for name in chosen for check in diagnose(name, project=project, user=user)]
    failed = [check for check in checks if not check.ok and check.fatal]
    if as_json:
        emit_json({"ok": not failed, "checks": [check.as_json() for check in checks]})
    else:
        for check in checks:
            mark = "ok  " if check.ok else ("FAIL" if check.fatal else "WARN")
            # markup=False: a fix can hold TOML section headers such as [projects."/src/app"]
            console.print(f"{mark} {check.agent} {check.name}: {check.detail}", highlight=False, soft_wrap=True,
                          markup=False)
            if not check.ok and check.fatal:
                console.print(f"     effect: {check.effect}", highlight=False, soft_wrap=True, markup=False)
            if not check.ok and check.fix:
                console.print(f"     fix: {check.fix}", highlight=False, soft_wrap=True, markup=False)
        console.print(doctor_summary(failed), highlight=False, soft_wrap=True, markup=False)
    sys.exit(1 if failed else 0)


@main.command()
@project_option("workspace", aliases=("--workspace", "--cwd"), exists=False,
                help="The default project the tools act on (default: here).")
@click.pass_obj
@handled
def mcp(obj: Context, workspace: str | None) -> None:
    """Serve the StateWise tools over MCP on stdio (needs the mcp extra: pip install 'statewise[mcp]')."""
    from importlib.util import find_spec

    try:
        sdk = find_spec("mcp") is not None
    except ValueError:  # sys.modules holds None for it: Python's own way of saying it is absent
        sdk = False
    if not sdk:
        # Asked first: without the extra, its other packages (anyio...) are missing too, and
        # whichever the server imports first would be named instead of the extra.
        raise MissingExtraError("statewise mcp", "mcp")
    try:
        from statewise.integrations.mcp_server import serve_stdio
    except ModuleNotFoundError as error:
        raise MissingExtraError.of("statewise mcp", error) or error from None

    obj.at(workspace)
    serve_stdio(store_location=obj.settings.store.value, contract_path=obj.settings.contract.value,
                workspace=workspace)


# --- contracts --------------------------------------------------------------------------


@main.group()
def contract() -> None:
    """Validate interface contracts."""


@contract.command("check")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@handled
def contract_check(path: str, as_json: bool) -> None:
    """Load and validate a contract file; report what it declares or the first error."""
    from statewise.contract import load_contract, summarize

    summary = summarize(load_contract(path))
    if as_json:
        emit_json(summary)
    else:
        details = ", ".join(f"{value} {name}" for name, value in summary.items() if isinstance(value, int))
        console.print(f"{path}: ok ({details})", highlight=False)


def _duration(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("pattern", required=False)
@click.pass_obj
@handled
def keys(obj: Context, pattern: str | None, as_json: bool) -> None:
    """List the state keys the contract declares: type, scope, authority, freshness, verifier.

    PATTERN keeps the keys containing it (e.g. `statewise keys python`)."""
    contract = obj.contract
    rows = []
    for key, spec in sorted(contract.state.items()):
        if pattern and pattern not in key:
            continue
        verifier = spec.verifier if isinstance(spec.verifier, str) or spec.verifier is None else spec.verifier.adapter
        rows.append({"key": key, "qualified": spec.qualified, "type": spec.value_type.value,
                     "choices": list(spec.choices) if spec.choices else None, "scope": spec.scope.name.lower(),
                     "authority": spec.authority.value, "ttl_seconds": spec.ttl_seconds, "verifier": verifier,
                     "description": spec.description})
    if as_json:
        emit_json({"contract": contract.name, "version": contract.version, "keys": rows})
        return
    if not rows:
        import re

        from statewise.settings import suggest

        # A pattern is usually a word of a key (python, branch): suggest the nearest word, or key.
        words = sorted({word for name in contract.state for word in re.split(r"[._]", name)} | set(contract.state))
        hint = suggest(pattern or "", words)
        raise InputError(f"no key contains {pattern!r}" + (f"; did you mean {hint}?" if hint else ""))
    # On a terminal the rows fit its width (a row too wide puts its choices and verifier on an
    # indented second line); piped, each key stays one line for grep and cut.
    fit = console.width if console.is_terminal else None
    for line in key_lines(rows, fit):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    obj.info(f"{len(rows)} keys in contract {contract.name} v{contract.version}")


def key_lines(rows: list[dict[str, Any]], width: int | None) -> list[str]:
    """The lines `statewise keys` prints for ``rows``, each at most ``width`` columns when one is given.

    A key's line holds its name, type, scope, authority and freshness; its choices and verifier
    follow on the same line when it fits, else on an indented line of their own."""
    names = [row["key"] + ("[QUALIFIER]" if row["qualified"] else "") for row in rows]
    name_width = max(len(name) for name in names)
    lines = []
    for name, row in zip(names, rows, strict=True):
        ttl = f"ttl {_duration(row['ttl_seconds'])}" if row["ttl_seconds"] else "no ttl"
        head = f"{name:<{name_width}}  {row['type']:<7}  {row['scope']:<9}  {row['authority']:<9}  {ttl:<8}"
        choices = f"({'|'.join(row['choices'])})  " if row["choices"] else ""
        tail = f"{choices}{row['verifier'] or '-'}"
        if width is None or len(head) + 2 + len(tail) <= width:
            lines.append(f"{head}  {tail}")
        else:
            one_of = f"one of {'|'.join(row['choices'])}, " if row["choices"] else ""
            lines += [head.rstrip(), f"    {one_of}verifier {row['verifier'] or '-'}"]
    return lines


# --- demo -------------------------------------------------------------------------------


@main.command()
@click.argument("scenario", type=click.Choice(["figure1", "store"]), default="figure1")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Also write the figure1 scenario's two guard reports (JSON) to this file (default: nothing written).")
@click.option("--keep", is_flag=True, help="Keep the temporary sandbox and store, and print where they are.")
@handled
def demo(scenario: str, report_path: str | None, keep: bool) -> None:
    """The paper's Figure 1 for real (default), or a walk through the store (store)."""
    from rich.console import Console

    from statewise.demo import run_figure1_demo, run_store_demo

    # Read by a person, piped or not: wrapped at the width (rich's 80 columns when piped), so
    # its aligned layout holds; the record commands' piped output is never wrapped instead.
    out = Console(no_color=not sys.stdout.isatty() or None)
    if scenario == "store":
        run_store_demo(out, keep=keep)
    else:
        run_figure1_demo(out, report_path=Path(report_path) if report_path else None, keep=keep)



# --- store (maintenance) ---------------------------------------------------------------
# A block of its own: `statewise store check` verifies the store's invariants (an fsck).

#: The exit status of `store check` when it found violations (1 means it could not check).
STORE_CHECK_VIOLATIONS = 3


@main.group("store")
def store_group() -> None:
    """Maintain the record store."""


@store_group.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
@handled
def store_check(obj: Context, as_json: bool) -> None:
    """Verify the store's invariants; exit 0 when sound, 3 listing each violation otherwise."""
    from statewise.store import open_store
    from statewise.store.check import check_store

    # The store the project's settings name (flag, environment, config.toml, default), which
    # must exist. Opened without the integrity refusal and without a contract, so that a
    # tampered store (or one holding keys another contract declared) can still be reported on.
    with open_store(obj.existing_location(), check_integrity=False) as opened:
        report = check_store(opened)
    if as_json:
        emit_json({**report.model_dump(mode="json"), "ok": report.ok})
    else:
        summary = f"{report.records} records ({report.active} active), {report.links} links"
        if report.ok:
            console.print(f"{report.location}: ok ({summary})", highlight=False)
        else:
            console.print(f"{report.location}: {len(report.violations)} violation(s) in {summary}", highlight=False)
            for violation in report.violations:
                console.print(f"  {violation.code}: {violation.message}", highlight=False, markup=False,
                              soft_wrap=True)
    if not report.ok:
        sys.exit(STORE_CHECK_VIOLATIONS)

@main.group("config")
def config_group() -> None:
    """The project's settings file (.statewise/config.toml)."""


@config_group.command("approve")
@project_option()
@click.pass_obj
@handled
def config_approve(obj: Context, project: str | None) -> None:
    """Approve the project's config.toml as it is now, so the hook honours its weakening settings."""
    from statewise.protection import agent_running
    from statewise.settings import WEAKENING, approvals_path, approve_config, read_config
    from statewise.settings import project_root as settings_root

    client = agent_running(os.environ)
    if client is not None:
        raise click.UsageError(f"run by {client}'s agent: only the developer approves the project's settings "
                               "(run it outside the agent)")
    root = settings_root(project)
    config, path = read_config(root)  # a malformed file is refused before it is approved
    if path is None:
        raise InputError(f"{root}: no .statewise/config.toml to approve")
    digest = approve_config(path)
    weakening = [name.replace("_", "-") for name, value in WEAKENING.items()
                 if getattr(config, name) is not None and value in ("*", getattr(config, name))]
    console.print(f"approved {path} (sha256 {digest[:12]}) in {approvals_path()}"
                  + (f"; the hook honours {', '.join(weakening)} from it until it changes" if weakening else ""),
                  highlight=False)




# The memory commands live in their own module (statewise.cli.memory).
main.add_command(memory)
