"""Pre- and post-tool hooks for Claude Code, Codex and Gemini CLI.

Each agent runs the wrapper that ``statewise install`` writes (which runs
:mod:`statewise.integrations.hook_entry`, the fast front door, or ``statewise hook <agent>``) as
a subprocess, writes the tool call as JSON on stdin, and reads a decision as JSON on stdout. Before a tool runs, the command or file edit is
normalized into actions and each goes through the guard (no planner: the agent is the
planner). After a tool ran, what it printed is matched against the contract's observation
rules, and the facts it reveals are written to the store with provenance pointing at the call.

Fail closed: any problem before a tool runs — unreadable input, a command that cannot be
parsed, a store that is locked, a bug — is an explicit deny with the reason, never a silent
pass (an agent treats a crashed hook as "go ahead"). The reason is the only thing written for
the agent: Codex shows a hook's stderr to the model, so internal details go to the log file
(:func:`log_path`), never to stderr.

Events: ``pre`` (Claude Code and Codex ``PreToolUse``, Gemini ``BeforeTool``), ``post``
(``PostToolUse``, Claude Code's ``PostToolUseFailure`` whose output is in ``error``, Gemini's
``AfterTool``) and ``session`` (``SessionStart``). The JSON's ``hook_event_name``, when present,
decides over the event named on the command line.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.actions import Action
from statewise.contract import Contract, builtin_contract, load_contract
from statewise.errors import InputError, InputTooLargeError
from statewise.integrations.hook_files import AGENT_TOOLS, EVENTS, cache_dir, contract_digest, write_observation_index
from statewise.limits import MAX_HOOK_INPUT_BYTES
from statewise.pipeline import Decision, Guard, PremiseStatus
from statewise.pipeline.gate import NO_APPROVAL_CHANNEL
from statewise.planners.base import Task
from statewise.protection import Places
from statewise.records import SourceKind
from statewise.store import default_location, open_store
from statewise.workspace import derive_task_scope, find_repository_root, git_answers_kept

if TYPE_CHECKING:  # the command model is imported when a call needs it
    from statewise.commands.named import Named

__all__ = ["AGENT_TOOLS", "HookOutcome", "HookRequest", "log_path", "parse_hook_input", "run_hook"]

#: What a client sets in its shell tool's environment on top of its own (the hook sees the
#: client's environment, not the tool's). Claude Code 2.1 spawns its Bash tool with
#: GIT_EDITOR=true (read from its bundle; tests/e2e/test_client_shell_env.py): a `git commit`
#: without -m or a `git rebase -i` opens no editor there. Codex and Gemini CLI set none.
SHELL_TOOL_ENV: dict[str, dict[str, str]] = {"claude-code": {"GIT_EDITOR": "true"}}


def log_path() -> Path:
    """Where the hook writes internal errors (the agent sees only the one-line reason)."""
    return cache_dir() / "hook.log"


def _log(line: str) -> None:
    try:
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write(f"{datetime.now(UTC).isoformat()} {line}\n")
    except OSError:
        pass  # a log that cannot be written must not turn a decision into a crash

_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class HookRequest:
    """One tool call as an agent reports it."""

    agent: str
    event: str  # "pre", "post" or "session"
    cwd: Path
    tool_name: str
    tool_input: Mapping[str, Any]
    tool_response: Any = None
    session_id: str = ""
    tool_use_id: str = ""
    event_name: str = ""  # as the client named it, e.g. PostToolUseFailure
    prompt: str = ""  # the developer's prompt, on the prompt event


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """What the hook prints and its exit status."""

    stdout: str
    exit_code: int = 0
    stderr: str = ""
    decisions: tuple[Decision, ...] = field(default=(), repr=False)


def parse_hook_input(agent: str, event: str, raw: str) -> HookRequest:
    """Validate the agent's JSON; InputError names what is wrong."""
    if agent not in AGENT_TOOLS:
        raise InputError(f"unknown agent {agent!r}; expected one of {', '.join(AGENT_TOOLS)}")
    size = len(raw) if raw.isascii() else len(raw.encode("utf-8", "surrogatepass"))
    if size > MAX_HOOK_INPUT_BYTES:
        raise InputTooLargeError("the hook input", size, MAX_HOOK_INPUT_BYTES, "the JSON a client sends a hook",
                                 unread=False)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise InputError(f"hook input is not JSON ({error.msg} at line {error.lineno}, column {error.colno})") from None
    if not isinstance(data, dict):
        raise InputError("hook input must be a JSON object")
    event_name = data.get("hook_event_name")
    if isinstance(event_name, str) and event_name in EVENTS:
        event = EVENTS[event_name]
    cwd, tool_name, tool_input = data.get("cwd"), data.get("tool_name"), data.get("tool_input", {})
    if not isinstance(cwd, str) or not cwd:
        raise InputError("hook input: field 'cwd' must be a non-empty string")
    if "\0" in cwd or not cwd.startswith("/"):
        raise InputError("hook input: field 'cwd' must be an absolute path without NUL bytes")
    if event in ("session", "prompt", "stop"):
        tool_name, tool_input = tool_name or "", tool_input or {}
    elif not isinstance(tool_name, str) or not tool_name:
        raise InputError("hook input: field 'tool_name' must be a non-empty string")
    if not isinstance(tool_input, dict):
        raise InputError("hook input: field 'tool_input' must be an object")
    # Claude Code sends a failed call to PostToolUseFailure with the output in 'error'.
    response = data.get("tool_response", data.get("tool_output", data.get("error")))
    return HookRequest(
        agent=agent, event=event, cwd=Path(cwd), tool_name=str(tool_name), tool_input=tool_input,
        tool_response=response, session_id=str(data.get("session_id", "")),
        tool_use_id=str(data.get("tool_use_id", "")), event_name=event_name if isinstance(event_name, str) else "",
        prompt=str(data.get("prompt") or "")[:4000],
    )


# --- turning tool calls into actions -----------------------------------------------------


def _patch_actions(tool_input: Mapping[str, Any], cwd: Path, workspace: Path,
                   contract: Contract | None = None) -> list[Action]:
    from statewise.commands import file_actions

    texts = [v for v in tool_input.values() if isinstance(v, str)]
    texts += [item for v in tool_input.values() if isinstance(v, list) for item in v if isinstance(item, str)]
    actions = []
    for text in texts:
        for kind, path in _PATCH_FILE.findall(text):
            deleting = kind == "Delete"
            actions += file_actions("Delete" if deleting else "Write", {"file_path": path.strip()}, cwd=cwd,
                                    workspace=workspace, contract=contract,
                                    reading="fs.delete" if deleting else "fs.write")
    if not actions:
        actions.append(Action(tool="shell", operation="shell.unresolved", args={"command": json.dumps(dict(tool_input))},
                              reason="a patch whose target files could not be read"))
    return actions


def actions_for(request: HookRequest, workspace: Path, contract: Contract | None = None, *,
                unguarded: list[str] | None = None, sessions: list[str] | None = None,
                named: list[Named] | None = None) -> tuple[list[Action], str]:
    """The actions a tool call would perform, and a short description of the call (``contract``'s
    ``commands:`` rules classify programs the shell normalizer has no built-in handling for).
    ``unguarded``, when given, receives the simple commands no reader or rule understands;
    ``sessions``, for a client that can type into a running command later (Codex), the programs
    the command starts that read and run what is typed into their terminal; ``named``, the
    strings the programs the command runs name and may do more than read (for the
    self-protection)."""
    from statewise.commands import analyze_command, file_actions

    tools = AGENT_TOOLS[request.agent]
    if request.tool_name in tools["session_input"]:
        # Typed into a terminal session opened earlier: what it reaches (a shell, a REPL, ssh)
        # is not visible from here, so it cannot be checked.
        typed = str(request.tool_input.get("chars", request.tool_input.get("input", "")))
        return [Action(tool="shell", operation="shell.unresolved", args={"command": typed[:2000]},
                       reason="input typed into an open terminal session, whose program StateWise cannot see; "
                              "run the command as its own shell call instead")], "input to a terminal session"
    if request.tool_name in tools["shell"]:
        command = request.tool_input.get("command")
        if isinstance(command, list):
            command = shlex.join(str(part) for part in command)
        if not isinstance(command, str):
            return [Action(tool="shell", operation="shell.unresolved", args={"command": str(command)},
                           reason="the shell tool's input has no command string")], "a shell call"
        env = {**os.environ, **SHELL_TOOL_ENV.get(request.agent, {})}
        can_type = bool(tools["session_input"]) and sessions is not None
        analysis = analyze_command(command, cwd=request.cwd, workspace=workspace, env=env, contract=contract,
                                   typed_input=can_type)
        if unguarded is not None:
            unguarded.extend(analysis.unguarded)
        if sessions is not None:
            sessions.extend(analysis.sessions)
        if named is not None:
            named.extend(analysis.named)
        return list(analysis.actions), command
    if request.tool_name in tools["read"]:
        return [], f"{request.tool_name} (a read: only secrets are checked)"
    if request.tool_name in tools["file"]:
        if request.tool_name == "apply_patch":
            return _patch_actions(request.tool_input, request.cwd, workspace, contract), "a patch"
        actions = file_actions(request.tool_name, request.tool_input, cwd=request.cwd, workspace=workspace,
                               contract=contract)
        return actions, f"{request.tool_name} {actions[0].args.get('path', '')}"
    return [], request.tool_name


# --- deciding ------------------------------------------------------------------------------


def _keys_read(contract: Contract, invariant_name: str) -> list[str]:
    from statewise.expressions import state_keys_read

    return [key for invariant in contract.invariants if invariant.name == invariant_name
            for text in (invariant.when, invariant.check) for key in state_keys_read(text)]


def _developer_question(decision: Decision, contract: Contract) -> str | None:
    """If the stop is only because the developer must settle a premise, the question and the
    exact command that records the answer.

    Never when a check failed on the evidence itself (an invariant that evaluated to false, an
    action planned from a record found wrong): that is a deny, and an "ask" there would let a
    "yes" run what the evidence forbids."""
    premises = decision.report.premises
    unresolved = [p for p in premises if p.status is PremiseStatus.UNRESOLVED]
    if not unresolved or any(p.question is None for p in unresolved):
        return None
    asked = {p.key for p in unresolved}
    for check in decision.report.gate:
        if check.passed or check.unresolved or (check.name == "approval"
                                                 and check.detail.endswith(NO_APPROVAL_CHANNEL)):
            continue  # an approval the client's prompt asks for once the question is answered
        # An invariant that failed only because a developer value is missing (the guard asks
        # for a key only when its answer could make every failing invariant hold) can be
        # settled; any other failure on the evidence is a deny.
        if not (check.name.startswith("invariant:") and asked & set(_keys_read(contract, check.name[10:]))):
            return None
    lines = []
    for premise in unresolved:
        lines.append(
            f"{premise.question} (record {premise.record_id}: {premise.key} = {json.dumps(premise.value)} "
            f"in {premise.scope}). Record the answer with: statewise record add {premise.key} "
            f"{shlex.quote('<value>')} --scope {premise.scope} --replace --source developer --authority developer "
            "(or the MCP tool remember)."
        )
    return " ".join(lines)


def _repair_note(decision: Decision) -> str:
    from statewise.pipeline.guidance import corrections

    return corrections(decision)


def _protected(request: HookRequest, actions: list[Action], workspace: Path, places: Places | None,
               named: Sequence[Named] = ()) -> tuple[str | None, str | None]:
    """What the built-in protection says (:mod:`statewise.integrations.protect`): a deny reason
    for a write, delete or move of a protected target, else a question for a secret read."""
    if places is None:
        return None, None
    from statewise.integrations.protect import findings_for

    command = request.tool_input.get("command") if request.tool_name in AGENT_TOOLS[request.agent]["shell"] else None
    if isinstance(command, list):
        command = shlex.join(str(part) for part in command)
    findings = findings_for(actions, command if isinstance(command, str) else None, workspace, places, named=named)
    if request.tool_name in AGENT_TOOLS[request.agent]["read"]:
        from statewise.integrations.protect import read_findings

        findings += read_findings(request.tool_input, workspace, places)
    denied = [finding for finding in findings if finding.effect == "deny"]
    if denied:
        reasons = list(dict.fromkeys(f.reason() for f in denied))
        more = f" (and {len(reasons) - 3} more protected targets)" if len(reasons) > 3 else ""
        return "StateWise stopped this call: " + "; ".join(reasons[:3]) + more + ".", None
    asked = [finding for finding in findings if finding.effect == "ask"]
    if asked:
        return None, ("StateWise asks the developer: " + "; ".join(dict.fromkeys(f.reason() for f in asked))
                      + ". Where the client cannot ask (Codex, Gemini CLI, claude -p), the developer runs it "
                        "themself.")
    return None, None


def _pre(request: HookRequest, *, store_location: str | None, contract: Contract, on_pass: str,
         places: Places | None = None) -> HookOutcome:
    workspace = request.cwd.resolve()
    unguarded: list[str] = []
    sessions: list[str] = []
    named: list[Named] = []
    actions, description = actions_for(request, workspace, contract, unguarded=unguarded, sessions=sessions,
                                       named=named)
    denied, question = _protected(request, actions, workspace, places, named)
    if denied:
        return _render(request.agent, "deny", denied, on_pass)
    if sessions:
        typed = _typed_input_question(request.agent, sessions)
        question = typed if question is None else f"{question} {typed}"
    outcome = _checked(request, actions, description, workspace, unguarded, store_location=store_location,
                       contract=contract, on_pass=on_pass)
    if question is None:
        return outcome
    verdict = _verdict(outcome)
    if verdict == "deny":
        return outcome  # a question never masks a deny
    if verdict == "ask":
        question = f"{question} {_reason(outcome)}"
    return _render(request.agent, "ask", question, on_pass, list(outcome.decisions))


def _typed_input_question(agent: str, sessions: list[str]) -> str:
    """The question for a command that starts a program reading its terminal, in a client that
    can type into it later without a hook call (Codex's ``write_stdin``): the last point to ask."""
    tools = ", ".join(sorted(AGENT_TOOLS[agent]["session_input"]))
    return (f"StateWise asks the developer: {'; '.join(dict.fromkeys(sessions))}. The agent can type into it "
            f"later ({tools}), which runs no hook: nothing typed into it is checked by StateWise. Where the client "
            "cannot ask (Codex), the developer runs it themself, or the agent runs each command as its own "
            "shell call.")


def _verdict(outcome: HookOutcome) -> str:
    if outcome.exit_code == 2:
        return "deny"
    data = json.loads(outcome.stdout or "{}")
    if "decision" in data:
        return "deny" if data["decision"] == "deny" else "pass"
    return {"deny": "deny", "ask": "ask"}.get(data.get("hookSpecificOutput", {}).get("permissionDecision"), "pass")


def _reason(outcome: HookOutcome) -> str:
    data = json.loads(outcome.stdout or "{}")
    return str(data.get("reason") or data.get("hookSpecificOutput", {}).get("permissionDecisionReason") or "")


def _checked(request: HookRequest, actions: list[Action], description: str, workspace: Path, unguarded: list[str],
             *, store_location: str | None, contract: Contract, on_pass: str) -> HookOutcome:
    """The guard's answer for ``actions`` (and for ``unguarded``, the programs no rule reads,
    checked only for the protected targets they name)."""
    if not actions and not unguarded:
        return _render(request.agent, "pass", "no guarded action", on_pass)
    from statewise.commands import UNRESOLVED

    unresolved = [action for action in actions if action.operation == UNRESOLVED]
    if unresolved:
        # The normalizer could not tell what the command does: nothing to check it against, so
        # say what could not be seen, and how to get it through (no guard run, no store opened).
        whys = "; ".join(dict.fromkeys(str(a.args.get("why") or a.reason or "it could not be read with confidence")
                                       for a in unresolved))
        parts = ", ".join(dict.fromkeys(f"`{a.args.get('part') or a.args.get('command', '')}`"[:200]
                                        for a in unresolved))
        named = _protected_named(unresolved, workspace, store_location, contract)
        return _render(request.agent, "deny", f"StateWise cannot check {parts}: {whys}.{named} Run it in a form whose "
                                              "effects can be read from the command itself (see docs/shell.md).",
                       on_pass)
    location = store_location or default_location(workspace)
    if not actions and "://" not in location and not Path(location).exists():
        # Only programs StateWise does not read, and no store (StateWise is not set up here):
        # the project's .statewise/protected file is all that can protect a target.
        from statewise.integrations.targets import protected_target_actions

        actions = protected_target_actions(unguarded, workspace=workspace, store=None, scope=None,
                                           contract=contract)
        if not actions:
            return _render(request.agent, "pass", "no guarded action", on_pass)
        unguarded = []
    store = open_store(location, key_schema=contract)
    decisions: list[Decision] = []
    stops: list[tuple[Decision, str | None]] = []  # each stop, with its approval request if that is all it waits for
    try:
        if unguarded:
            # Programs StateWise does not read run, unless they name a protected target (issue 22).
            from statewise.integrations.targets import protected_target_actions

            actions += protected_target_actions(unguarded, workspace=workspace, store=store, scope=None,
                                                contract=contract)
            if not actions:
                return _render(request.agent, "pass", "no guarded action", on_pass)
        scope = derive_task_scope(workspace)
        if scope.repo is None and find_repository_root(workspace) is not None:
            # In a repository git did not answer for (it hangs, is missing, refuses the folder):
            # the records scoped to the repository cannot be found, and absence is no permission.
            return _render(request.agent, "deny", "StateWise cannot tell which repository this call is in (`git "
                                                  "rev-parse --show-toplevel` gave no answer), so the records scoped "
                                                  "to it (protected paths and branches) cannot be applied; denied to "
                                                  "be safe. Run `statewise doctor`.", on_pass)
        guard = Guard(store, contract, workspace=workspace)
        text = str(request.tool_input.get("description") or description)[:500]
        for action in actions:
            decision = guard.check(Task(text=text, scope=scope, workspace=str(workspace), id=request.tool_use_id),
                                   action)
            decisions.append(decision)
            if not decision.execute:
                stops.append((decision, _approval_request(decision, contract, workspace, store, scope)))
                # A stop that only waits for approval is asked only if every other action of the
                # call passes too: an approved `git reset --hard && <denied>` must not run the rest.
                if stops[-1][1] is None:
                    break
    finally:
        store.close()
    if not stops:
        note = "".join(_repair_note(d) for d in decisions)
        return _render(request.agent, "pass", note or "StateWise checked the premises of this call",
                       on_pass, decisions)
    stopped, approval = next((stop for stop in stops if stop[1] is None), stops[0])
    question = _developer_question(stopped, contract)
    if question:
        reason = f"StateWise needs the developer: {question}"
    elif approval:
        reason = approval
    else:
        from statewise.pipeline.guidance import deny_reason, way_on

        reason = (f"StateWise stopped {stopped.report.proposal.describe()}: {deny_reason(stopped)}"
                  f"{'. ' + way_on(stopped, contract).rstrip() if way_on(stopped, contract) else ''}")
    return _render(request.agent, "ask" if question or approval else "deny", _repair_note(stopped) + reason,
                   on_pass, decisions)


def _protected_named(unresolved: list[Action], workspace: Path, store_location: str | None,
                     contract: Contract) -> str:
    """For a command StateWise cannot check: the protected targets its words name, each with the
    record that protects it (issue 22, item 5), as a sentence; "" when it names none."""
    from statewise.integrations.targets import protected_target_actions

    parts = list(dict.fromkeys(str(a.args.get("part") or a.args.get("command") or "") for a in unresolved))
    location = store_location or default_location(workspace)
    store = open_store(location, key_schema=contract) if "://" in location or Path(location).exists() else None
    try:
        named = protected_target_actions([p for p in parts if p], workspace=workspace, store=store, scope=None,
                                         contract=contract, nested=True)
    finally:
        if store is not None:
            store.close()
    if not named:
        return ""
    return " " + "; ".join(dict.fromkeys(
        f"It names {a.target}, which "
        f"{'record ' + str(a.args['record_id']) + ' (' + str(a.args['record']) + ')' if a.args.get('record_id') else a.args.get('record')}"
        " marks protected" for a in named)) + "."


def _approval_request(decision: Decision, contract: Contract, workspace: Path, store: Any = None,
                      scope: Any = None) -> str | None:
    """If every other check passed and the stop is only the contract's ``requires_approval``
    with no approval channel configured: the request the client's permission prompt puts to
    the developer (that prompt is the approval channel). Clients without one deny with it."""
    failed = [check for check in decision.report.gate if not check.passed]
    if not failed or any(check.name != "approval" or not check.detail.endswith(NO_APPROVAL_CHANNEL)
                         for check in failed):
        return None
    proposal = decision.report.proposal
    spec = contract.operations.get(proposal.operation)
    what = f" ({spec.description.rstrip('.')})" if spec is not None and spec.description else ""
    what += _protected_note(decision, workspace)
    what += _target_records_note(decision, store, scope)
    return (f"StateWise asks for the developer's approval: {proposal.describe()}{what}. Every check passed; "
            f"the contract requires a developer to approve {proposal.operation}. Where the client cannot ask "
            "(Codex, Gemini CLI, claude -p), the developer runs it themself.")


#: Keys whose values are the workspace's own folders, named by most commands.
_PLACE_KEYS = ("workspace.",)


def _target_records_note(decision: Decision, store: Any, scope: Any) -> str:
    """For an approval ask: the stored records whose value is a word of the command (the
    repository deleted, the registry or host it goes to), so the developer sees where the target
    came from and can tell a wrong one (issue 22, item 5). Read only on this path (an ask)."""
    proposal = decision.report.proposal
    command = proposal.args.get("command") or proposal.args.get("part")
    if store is None or scope is None or not isinstance(command, str):
        return ""
    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    try:
        records = store.retrieve(scope, near_miss_limit=0).records
    except Exception:  # noqa: BLE001 - a note, never a reason to fail the ask
        return ""
    notes = []
    for record in records:
        if record.key.startswith(_PLACE_KEYS):
            continue
        values = record.value if isinstance(record.value, list) else [record.value]
        for value in (v for v in values if isinstance(v, str) and len(v) >= 4):
            stem = value.rstrip("/")
            if any(w.rstrip("/") == stem or w.startswith(stem + ":") or w.endswith("@" + stem) for w in words):
                notes.append(f"{value} is the value of {record.key} in {record.scope}, record {record.id} "
                             f"({record.provenance.source.value}, {record.provenance.authority.value})")
                break
    return ("; " + "; ".join(notes[:3])) if notes else ""


def _protected_note(decision: Decision, workspace: Path) -> str:
    """For a restore (or a clean) of paths the developer protects: which, so the question says
    protected paths are involved (`git checkout old -- migrations` overwrites them)."""
    from statewise.integrations.protect import listed, protected_paths_touched

    proposal = decision.report.proposal
    paths = listed(proposal.args.get("paths"))
    if not paths:
        return ""
    protected = [str(entry) for premise in decision.report.premises
                 if premise.key in ("fs.protected_paths", "fs.declared_protected_paths")
                 and isinstance(premise.value, list) for entry in premise.value]
    if not protected:
        return ""
    from statewise.workspace import find_repository_root

    touched = protected_paths_touched(paths, protected, workspace, find_repository_root(workspace))
    if not touched:
        return ""
    source = proposal.args.get("source")
    return (f"; it overwrites protected paths ({', '.join(touched)}, fs.protected_paths) with their content "
            f"{'at ' + str(source) if source else 'in the index'}")


def _render(agent: str, verdict: str, reason: str, on_pass: str, decisions: list[Decision] | None = None
            ) -> HookOutcome:
    """The agent-specific JSON. ``verdict`` is pass, deny or ask."""
    kept = tuple(decisions or ())
    if verdict == "pass" and on_pass == "defer":
        # Leave the permission decision to the agent's own rules; StateWise found nothing wrong.
        if agent == "claude-code" and reason.startswith("StateWise corrected"):
            return HookOutcome(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                                  "additionalContext": reason}}), decisions=kept)
        return HookOutcome("{}", decisions=kept)
    if agent == "gemini":
        decision = "allow" if verdict == "pass" else "deny"  # Gemini has no "ask"
        return HookOutcome(json.dumps({"decision": decision, "reason": reason}), decisions=kept)
    if agent == "codex" and verdict == "ask":
        verdict = "deny"  # Codex treats "ask" as a failed hook and runs the tool
    permission = {"pass": "allow", "deny": "deny", "ask": "ask"}[verdict]
    output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": permission,
                                     "permissionDecisionReason": reason}}
    if agent == "codex" and permission == "deny":
        # Exit status 2 with the reason on stderr is the block every Codex release honours.
        return HookOutcome(json.dumps(output), exit_code=2, stderr=reason, decisions=kept)
    return HookOutcome(json.dumps(output), decisions=kept)


def _context_output(agent: str, event_name: str, text: str, *, warning: str = "") -> HookOutcome:
    """Text for the model after a tool ran or as a session starts, in the client's shape.
    ``warning`` (at SessionStart) is for the developer: all three clients show ``systemMessage``
    to them (Codex's SessionStart output schema and Gemini CLI's hook output have it), and the
    model gets it too, to pass on in a headless run."""
    if warning:
        text = f"{text}\n{warning}" if text else warning
        return HookOutcome(json.dumps({"systemMessage": warning,
                                       "hookSpecificOutput": {"hookEventName": event_name,
                                                              "additionalContext": text}}))
    if not text:
        return HookOutcome("{}")
    if agent in ("claude-code", "gemini"):
        return HookOutcome(json.dumps({"hookSpecificOutput": {"hookEventName": event_name,
                                                              "additionalContext": text}}))
    if event_name in ("SessionStart", "UserPromptSubmit"):  # Codex reads these additionalContexts the same way
        return HookOutcome(json.dumps({"hookSpecificOutput": {"hookEventName": event_name,
                                                              "additionalContext": text}}))
    return HookOutcome("{}")


def _deny_everything(agent: str, event: str, reason: str) -> HookOutcome:
    if event != "pre":
        _log(reason)
        return HookOutcome("{}")  # nothing is left to block after a tool ran or as a session starts
    if agent == "codex":
        # Codex uses the hook's stderr as the reason the model reads: the reason, nothing else.
        return HookOutcome("", exit_code=2, stderr=reason)
    return _render(agent, "deny", reason, "defer")


# --- session start -------------------------------------------------------------------------

#: The post-tool event name each client uses for a call that finished normally.
_POST_EVENT = {"claude-code": "PostToolUse", "codex": "PostToolUse", "gemini": "AfterTool"}
#: The event each client fires before its model plans a turn.
_PROMPT_EVENT = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}

#: The session-start note's budget: the memory part in estimated tokens (docs/memory.md), the
#: whole note in characters.
SESSION_CONTEXT_TOKENS = 400
SESSION_CONTEXT_CHARS = 2000


def _session_context(request: HookRequest, *, store_location: str | None, contract: Contract) -> str:
    """What the agent should know as a session begins, so that it plans from the repaired state
    and not from its stale notes: the memory-file lines known to be wrong with their corrections,
    the facts verified in this check and the others on record with their source and age, named
    as not re-checked (:func:`statewise.memory.context.session_context`), then the other
    corrections StateWise made in this scope, with the value each replaced.

    Nothing is created where StateWise is not set up: without a store, and without the
    project's ``.statewise/`` folder that a project install makes, the note is empty."""
    from statewise.memory.context import session_context

    workspace = request.cwd.resolve()
    location = store_location or default_location(workspace)
    if "://" not in location and not Path(location).exists() and not Path(location).parent.is_dir():
        return ""
    from statewise.integrations.prompt import prompt_context

    # The prompt check first, so that the note names what it verified as verified in this check
    # and never lists, as on record, a value it has just corrected.
    started = datetime.now(UTC)
    checked = prompt_context(workspace, store_location=location, contract=contract, agent=request.agent,
                             session_id=request.session_id, facts=False, unverified=False)
    text = session_context(workspace, location, token_budget=SESSION_CONTEXT_TOKENS, contract=contract,
                           checked_since=started)
    if checked:  # the records checked and repaired now, earlier corrections included
        return f"{text}\n{checked}" if text else checked
    store = open_store(location, key_schema=contract)
    try:
        corrected = []
        for record in store.retrieve(derive_task_scope(workspace), near_miss_limit=0).records:
            if record.supersedes and record.provenance.source is not SourceKind.DEVELOPER:
                old = store.get(record.supersedes)
                corrected.append(f"{record.key} = {json.dumps(record.value)} (was {json.dumps(old.value)}; "
                                 f"{record.provenance.actor})")
    finally:
        store.close()
    if corrected:
        line = "StateWise corrected: " + "; ".join(corrected) + "."
        if len(text) + len(line) + 1 <= SESSION_CONTEXT_CHARS:
            text = f"{text}\n{line}" if text else line
    return text


#: How each client is named in a message to the developer.
_CLIENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}


def _capture_filter_warning(agent: str, request: HookRequest, contract: Contract) -> tuple[list[Path], str]:
    """The settings files holding StateWise's post-tool hooks, and a warning when their filters
    (Claude Code's ``if`` rules, the other clients' shell pre-filter, written by ``statewise
    install`` from the contract of that day) no longer let a hook run for every observation
    rule of the contract in effect, whose captures would otherwise be lost without a word until
    the next ``statewise install``."""
    if agent not in _CLIENT_NAMES:
        return [], ""
    from statewise.integrations.install import installed_capture_gaps, project_root

    files, gaps = installed_capture_gaps(agent, project_root(request.cwd), contract)
    if not gaps:
        return files, ""
    return files, (f"StateWise: its post-tool hooks in {_CLIENT_NAMES[agent]}'s settings are filtered for commands "
                   f"that miss the observation rules {', '.join(gaps)} of the contract in effect (changed since "
                   f"install), so what those commands reveal is not recorded; run `statewise install {agent}` "
                   "again.")


def _remember_session_note(request: HookRequest, store_location: str | None, stdout: str, digest: str | None,
                           also_watched: list[Path] | tuple[Path, ...] = ()) -> None:
    """Let the front door answer the next SessionStart for this workspace without the heavy
    path until something the answer was made from changes: the records in force in the task's
    scopes (not any write to the store: a guarded call's own bookkeeping does not count), the
    memory files and the names in their folders, the work tree's HEAD and configuration (the
    branch and repository the scopes name), ``also_watched`` (the client's settings files,
    whose hooks the answer checked; by content), the contract; or until a record it read goes
    stale. A PostgreSQL store is not watched, so its note is never reused. The live
    workspace is not watched: the session's first prompt checks the records against it
    (statewise.integrations.prompt), and the guard checks every action."""
    from statewise.integrations.hook_files import write_session_note
    from statewise.memory.discovery import discover_memory_files

    workspace = request.cwd.resolve()
    location = store_location or default_location(workspace)
    if "://" in location:
        return
    watched = [str(workspace / ".git" / "HEAD"), str(workspace / ".git" / "config")]
    listed = [str(workspace)]
    for memory_file in discover_memory_files(workspace):
        watched.append(str(memory_file.path))
        listed.append(str(memory_file.path.parent))
    records: tuple[str, list[str]] | None = None
    valid_until: float | None = None
    if Path(location).exists():
        task = derive_task_scope(workspace)
        store = open_store(location)
        try:
            # When the first record the answer read as fresh goes stale by its TTL.
            now = datetime.now(UTC)
            for record in store.retrieve(task, near_miss_limit=0).records:
                ttl = record.time.ttl_seconds
                if ttl is not None:
                    ends = (record.time.confirmed_at + timedelta(seconds=ttl)).timestamp()
                    valid_until = ends if valid_until is None else min(valid_until, ends)
        finally:
            store.close()
        records = (location, [str(scope) for scope in task.applicable_scopes()])
        if valid_until is not None and valid_until <= now.timestamp():
            return
    else:
        # No store yet: its creation, or its folder's (a project install), is a change.
        watched += [location, str(Path(location).parent)]
    write_session_note(str(workspace), request.agent, watched, stdout, digest,
                       by_content=list(map(str, also_watched)), listed=listed, records=records,
                       valid_until=valid_until, max_age=None)


# --- the entry point -----------------------------------------------------------------------


def run_hook(agent: str, stdin_text: str, *, event: str = "pre", store_location: str | None = None,
             contract_path: str | None = None, on_pass: str | None = None) -> HookOutcome:
    """Handle one hook call. Never raises: before a tool runs, any failure is a deny.

    The store, contract and on-pass come from the arguments (the wrapper's flags), else the
    environment, else the project's ``.statewise/config.toml`` (:mod:`statewise.settings`);
    a malformed config.toml is a deny. Within the call, each git question about the workspace
    is asked once (:func:`~statewise.workspace.git_answers_kept`)."""
    with git_answers_kept():
        return _run_hook(agent, stdin_text, event=event, store_location=store_location,
                         contract_path=contract_path, on_pass=on_pass)


def _run_hook(agent: str, stdin_text: str, *, event: str, store_location: str | None, contract_path: str | None,
              on_pass: str | None) -> HookOutcome:
    try:
        request = parse_hook_input(agent, event, stdin_text)
        event = request.event
        from statewise.settings import hook_settings

        settings = hook_settings(request.cwd, store=store_location, contract=contract_path, on_pass=on_pass)
        store_location, contract_path = settings.store.value, settings.contract.value
        on_pass = settings.on_pass.value or "defer"
        contract = load_contract(contract_path) if contract_path else builtin_contract()
        digest = contract_digest(contract_path)
        if digest is not None:
            # Lets the front door skip finished commands no observation rule can match.
            write_observation_index(digest, [rule.command for rule in contract.observations])
        if event == "post":
            from statewise.integrations.observe import capture

            note = capture(request, store_location=store_location, contract=contract)
            return _context_output(agent, request.event_name or _POST_EVENT[agent], note)
        if event == "session":
            # Found once: both the note and its cache record need the store's location (a git call).
            store_location = store_location or default_location(request.cwd.resolve())
            settings_files, warning = _capture_filter_warning(agent, request, contract)
            warning = " ".join(part for part in (*settings.warnings, warning) if part)
            outcome = _context_output(agent, "SessionStart",
                                      _session_context(request, store_location=store_location, contract=contract),
                                      warning=warning)
            try:
                _remember_session_note(request, store_location, outcome.stdout, digest, also_watched=settings_files)
            except Exception as error:  # noqa: BLE001 - a note not kept costs the next start time, not this answer
                _log(f"session note not kept ({agent}): {type(error).__name__}: {error}")
            return outcome
        if event == "prompt":
            from statewise.integrations.prompt import prompt_context

            location = store_location or default_location(request.cwd)
            text = prompt_context(request.cwd.resolve(), store_location=location, contract=contract, agent=agent,
                                  session_id=request.session_id, prompt=request.prompt)
            if not text:
                from statewise.integrations.prompt import remember_quiet_prompt

                remember_quiet_prompt(request.cwd.resolve(), agent, request.session_id, location, digest)
            return _context_output(agent, request.event_name or _PROMPT_EVENT[agent], text)
        if event == "stop":
            from statewise.integrations.stop import continue_reason

            reason = continue_reason(request.cwd.resolve(), json.loads(stdin_text), contract=contract, agent=agent,
                                     store_location=store_location or default_location(request.cwd))
            # The client's block-the-stop answer: the turn goes on with the reason as its prompt.
            return HookOutcome(json.dumps({"decision": "deny" if agent == "gemini" else "block", "reason": reason})
                               if reason else "{}")
        from statewise.integrations.protect import places_for
        from statewise.protection import SecretRules

        secrets = contract.secrets if isinstance(getattr(contract, "secrets", None), SecretRules) else None
        places = places_for(request.cwd.resolve(), store=store_location or default_location(request.cwd.resolve()),
                            contract_path=contract_path, config_path=settings.config_path, secrets=secrets)
        return _pre(request, store_location=store_location, contract=contract, on_pass=on_pass, places=places)
    except InputError as error:
        return _deny_everything(agent if agent in AGENT_TOOLS else "claude-code", event,
                                f"StateWise could not check this call: {error}")
    except Exception as error:  # noqa: BLE001 - a hook that crashes would let the tool run
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        _log(f"internal error ({agent}, {event}): {detail}\n{traceback.format_exc()}")
        return _deny_everything(agent if agent in AGENT_TOOLS else "claude-code", event,
                                f"StateWise failed while checking this call ({detail.splitlines()[0][:300]}); "
                                "denied to be safe")
