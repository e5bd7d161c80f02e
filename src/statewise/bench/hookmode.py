"""The ``hook`` method: StateWise as real agents use it, behind Claude Code's hooks.

The planner proposes; the action is rendered as the tool call an agent would make (a ``Bash``
command, or a ``Write`` of the whole file); StateWise sees only that call, through
:func:`statewise.integrations.hooks.run_hook` with Claude Code's ``PreToolUse`` JSON
(``cwd``, ``hook_event_name``, ``tool_name``, ``tool_input``). It has no access to the
planner, so it cannot probe counterfactuals: the hook's guard runs without a planner, as it
does inside Claude Code.

What comes back is read as Claude Code reads it:

* ``allow`` or ``{}`` (defer): the call runs in the sandbox (the bench executor runs the
  action the call renders; same effect, logged and judged), and the ``PostToolUse`` JSON (or
  ``PostToolUseFailure`` for a non-zero exit) goes through ``run_hook`` too, so the hook's
  observation capture sees the output.
* ``deny``: the reason goes back to the planner as feedback text, as a model reads a tool
  error. The planner reads it with its ``read_feedback`` (the rule planner's reads the
  corrections it is told about, :func:`statewise.planners.base.read_corrections`), and the agent
  also reads the values the reason says the check evaluated (its ``[KEY = VALUE (evidence); ...]``
  facts, :func:`statewise.planners.base.read_observed`: "node.package_manager = "pnpm"
  (pnpm-lock.yaml is present)"), as a model reading the text would; it plans again, up to
  :attr:`HookMethod.retries` times.
* ``ask``: Claude Code shows the developer a permission prompt with the reason. The simulated
  developer answers each question the reason asks (``record ID: KEY = VALUE in SCOPE``) from
  its intent: when every answer confirms, it approves and the call runs; a correction is
  declined with the right value, which the agent records as the hook's reason tells it to
  (what ``statewise record add KEY VALUE --scope S --replace --source developer`` does) and
  which enters the planner's context; a question it cannot answer leaves the decision to its
  approver, which reads the ask first (a target or fact it shows that contradicts the agent's
  action or the developer's intent is declined,
  :func:`statewise.bench.developer_reads.shown_contradiction`) and then its standing approvals
  (``developer.approves``).

Each task starts a session and submits the task as the developer's prompt: the ``SessionStart``
and ``UserPromptSubmit`` hooks' context (the records StateWise checked and repaired before the
model plans, and the corrections it made for this scope earlier) is read like any feedback
before the first proposal. A line that names an unverified value as the developer's to confirm
(``- UNVERIFIED ... KEY in SCOPE: on record as VALUE (...); the developer's to confirm: ask
them ...``) is put to the simulated developer before the first proposal, as a model asks in the
chat (a question, counted); the answer is recorded as the developer's and a correction is read
like any. A
deterministic planner that proposes exactly a call that was already refused, with nothing new
told since that refusal, gives up (it has learnt nothing that would change the answer); after a
correction or a developer's answer the same call may be tried again (the record it was refused
on has changed). Any planner gives up after the retry budget. Giving up is a stop.

A stop the planner proposes ends the turn as Claude Code ends it: the ``Stop`` hook gets the
stop's reason as ``last_assistant_message`` (:mod:`statewise.integrations.stop`); when it blocks
the stop with a correction of a fact the message cites, the correction is read like any feedback
and the planner plans once more (``stop_hook_active`` is then true, so a second stop ends the
turn).

Costs: ``model_calls`` are planner calls; ``questions``/``approvals`` the developer's
answers and prompts; ``verifier_calls`` are not visible through the hook (0);
``hook_latencies`` are the seconds of each ``PreToolUse`` hook call (the latency an agent waits,
verifiers included; ``guard_seconds`` stays None, it excludes verifier time and is not
comparable), and the report lists every call with its own latency.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from statewise.actions import Action
from statewise.bench.executor import UnsupportedByBench, edit_config
from statewise.bench.methods import METHODS, MethodInput, MethodResult, planning_context, register_method
from statewise.clarify import AnswerKind, ApprovalRequest, Question
from statewise.execute import UnsupportedAction, command_for
from statewise.planners.base import Statement, as_plan, read_corrections, read_observed
from statewise.records import Authority, Provenance, RecordDraft, SourceKind
from statewise.values import ValueType

__all__ = ["HookMethod", "render_tool_call"]

AGENT = "claude-code"
#: The source a statement read from the hook's feedback carries in the planner's context.
HOOK_SOURCE = "statewise-hook"

_PACKAGE_TOOLS = ("uv.add", "poetry.add", "npm.install", "pnpm.add", "yarn.add")


def render_tool_call(action: Action, workspace: Path) -> tuple[str, dict[str, Any]]:
    """The Claude Code tool call that performs ``action`` in ``workspace``: ``("Bash",
    {"command": ...})`` or ``("Write", {"file_path": ..., "content": ...})``.

    A ``config.edit`` is the ``Write`` of the edited file (the edit is applied to a copy).
    Raises UnsupportedByBench for an operation no agent command is known for."""
    op = action.operation
    args = action.args

    def path_of(name: str = "path") -> Path:
        value = args.get(name)
        if not isinstance(value, str) or not value:
            raise UnsupportedByBench(f"{op} needs a {name} argument")
        return Path(value) if os.path.isabs(value) else workspace / value

    if op == "fs.write":
        return "Write", {"file_path": str(path_of()), "content": str(args.get("content", ""))}
    if op == "config.edit":
        target = path_of()
        with tempfile.TemporaryDirectory(prefix="statewise-render-") as scratch:
            copy = Path(scratch) / target.name
            if target.is_file():
                shutil.copyfile(target, copy)
            try:
                edit_config(copy, str(args.get("setting", "")), str(args.get("value", "")))
            except (OSError, ValueError) as error:
                raise UnsupportedByBench(f"config.edit cannot be rendered: {error}") from None
            content = copy.read_text(encoding="utf-8")
        return "Write", {"file_path": str(target), "content": content}
    if op == "fs.delete":
        flags = ["-r"] if args.get("recursive") else []
        return "Bash", {"command": shlex.join(["rm", *flags, "--", str(args.get("path", ""))])}
    if op in ("pip.install", "uv.pip_install"):
        package = str(args.get("package", "")) + str(args.get("version") or "")
        interpreter = str(args.get("interpreter") or "python3")
        argv = ["uv", "pip", "install", "--python", interpreter, package] if op == "uv.pip_install" \
            else [interpreter, "-m", "pip", "install", package]
        return "Bash", {"command": shlex.join(argv)}
    if op in _PACKAGE_TOOLS:
        package, version = str(args.get("package", "")), str(args.get("version") or "")
        tool = op.split(".", 1)[0]
        if tool in ("npm", "pnpm", "yarn"):
            spec = f"{package}@{version.lstrip('@=')}" if version else package
            argv = [tool, "install" if tool == "npm" else "add", spec]
            if args.get("dev"):
                argv.append("--save-dev" if tool == "npm" else "--dev")
        else:
            argv = [tool, "add", package + version]
        return "Bash", {"command": shlex.join(argv)}
    if isinstance(args.get("command"), str) and (action.tool == "shell" or op == "test.run"):
        return "Bash", {"command": str(args["command"])}
    try:
        return "Bash", {"command": shlex.join(command_for(action))}
    except UnsupportedAction:
        raise UnsupportedByBench(f"no agent command is known for {op}") from None


@contextmanager
def _agent_environment(environ: Mapping[str, str], user: str | None) -> Iterator[None]:
    """The hook runs with the agent's environment (the sandbox's: its PATH, HOME, no store
    override), as the subprocess Claude Code starts would. In-process, so os.environ is
    swapped for the call and restored after; bench workers run one episode at a time."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environ)
    if user:
        os.environ["STATEWISE_USER"] = user
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _decision(stdout: str) -> tuple[str, str, str]:
    """(allow | deny | ask, the reason, additional context) from Claude Code's hook output."""
    try:
        data = json.loads(stdout or "{}")
    except json.JSONDecodeError:
        return "deny", f"the hook printed something that is not JSON: {stdout[:200]}", ""
    specific = data.get("hookSpecificOutput") or {} if isinstance(data, dict) else {}
    permission = specific.get("permissionDecision") or "allow"
    return str(permission), str(specific.get("permissionDecisionReason") or ""), \
        str(specific.get("additionalContext") or "")


def _continuation(stdout: str) -> str:
    """The reason a Stop hook blocks the stop with (Claude Code's ``{"decision": "block"}``), or ""."""
    try:
        data = json.loads(stdout or "{}")
    except json.JSONDecodeError:
        return ""
    if not isinstance(data, dict) or data.get("decision") != "block":
        return ""
    return str(data.get("reason") or "")


def _questions(reason: str) -> list[tuple[str, str, Any, str]]:
    """Every ``(record ID: KEY = VALUE in SCOPE)`` an ask's reason puts to the developer."""
    found = []
    decoder = json.JSONDecoder()
    marker = "(record "
    start = reason.find(marker)
    while start != -1:
        head = start + len(marker)
        colon = reason.find(": ", head)
        equals = reason.find(" = ", colon)
        if colon == -1 or equals == -1:
            break
        record_id, key = reason[head:colon], reason[colon + 2:equals]
        try:
            value, end = decoder.raw_decode(reason, equals + 3)
        except json.JSONDecodeError:
            start = reason.find(marker, head)
            continue
        if reason.startswith(" in ", end):
            scope_end = reason.find(")", end + 4)
            if scope_end != -1:
                found.append((record_id, key, value, reason[end + 4:scope_end]))
        start = reason.find(marker, end)
    return found


#: How the prompt-time block names a record only the developer can confirm
#: (:func:`statewise.integrations.prompt.render_state`).
_UNVERIFIED_LINE = "- UNVERIFIED (not a fact; check before relying on it) "
_DEVELOPERS = "; the developer's to confirm: ask them"


def _to_confirm(text: str) -> list[tuple[str, str, Any]]:
    """Every ``- UNVERIFIED (...) KEY in SCOPE: on record as VALUE (...); the developer's to
    confirm: ask them ...`` line of a block: (KEY, SCOPE, VALUE)."""
    found = []
    decoder = json.JSONDecoder()
    for line in text.splitlines():
        if not line.startswith(_UNVERIFIED_LINE) or _DEVELOPERS not in line:
            continue
        head = line[len(_UNVERIFIED_LINE):]
        named, sep, rest = head.partition(": on record as ")
        key, within, scope = named.partition(" in ")
        if not sep or not within or " " in key or " " in scope:
            continue
        try:
            value, _end = decoder.raw_decode(rest)
        except json.JSONDecodeError:
            continue
        found.append((key, scope, value))
    return found


class HookMethod:
    """StateWise through Claude Code's PreToolUse/PostToolUse hooks (see the module docstring)."""

    name = "hook"
    #: How many times the planner may try again after a deny or a declined prompt.
    retries = 2

    def run(self, inp: MethodInput) -> MethodResult:
        from statewise.integrations.hooks import run_hook

        work = Path(inp.workspace)
        user = inp.task.scope.user
        read = getattr(inp.planner, "read_feedback", None) or read_corrections
        calls: list[dict[str, Any]] = []
        told: list[Statement] = []
        # Tool calls the hook (or the developer) refused, with how much the agent had been told
        # when it made them: the same call after a correction is a new attempt, not a repeat.
        refused: dict[tuple[str, str], int] = {}
        model_calls = tokens = questions = approvals = 0
        latencies: list[float] = []
        repairs: list[dict[str, Any]] = []
        proposal: Action | None = None
        clarifier, approver = inp.clarifier(), inp.approver()

        def hook(payload: dict[str, Any], event: str) -> Any:
            started = time.perf_counter()
            with _agent_environment(inp.environ, user):
                outcome = run_hook(AGENT, json.dumps(payload), event=event, store_location=inp.store_location,
                                   contract_path=inp.contract_path)
            seconds = time.perf_counter() - started
            if event == "pre":
                latencies.append(round(seconds, 6))
            # For measurement only (the R metric of the sequences), never for a decision: the
            # repairs the hook's guard made, which an agent would not see.
            for decision in outcome.decisions:
                repairs.extend(r.model_dump(mode="json") for r in decision.report.repairs)
            calls.append({"event": payload.get("hook_event_name"), "tool": payload.get("tool_name"),
                          "input": payload.get("tool_input"), "stdout": outcome.stdout, "exit": outcome.exit_code,
                          "seconds": round(seconds, 4)})
            return outcome

        def learn(text: str, source: str = HOOK_SOURCE) -> None:
            # The corrections the planner reads, then the values a stop's reason states it
            # evaluated (``[KEY = VALUE (evidence); ...]``, read_observed): a model reads both.
            corrected = read(text, source)
            seen = {s.key for s in corrected}
            for statement in (*corrected, *(s for s in read_observed(text, source) if s.key not in seen)):
                # Told again is not news: only a new key or value counts as learning something.
                if not any(s.key == statement.key and s.value == statement.value for s in told):
                    told.append(statement)

        base = {"cwd": str(work), "session_id": f"bench-{inp.task.id}", "transcript_path": ""}
        session = hook({**base, "hook_event_name": "SessionStart", "source": "startup"}, "session")
        learn(_decision(session.stdout)[2])
        # The developer's prompt: the hook checks the records before the model plans
        # (statewise.integrations.prompt) and its block is read like any other text.
        prompted = hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": inp.task.text}, "prompt")
        learn(_decision(prompted.stdout)[2])
        # The block names records only the developer can confirm and tells the agent to ask them:
        # it does, before planning, as a model asks in the chat; the answer is recorded as the
        # block's record command says and read like any developer's correction.
        asked_before = self._confirm(inp, clarifier, _decision(session.stdout)[2] + "\n"
                                     + _decision(prompted.stdout)[2])
        questions += asked_before[0]
        if asked_before[1]:
            learn(asked_before[1], "developer")
        memory = planning_context(inp.store, inp.task)

        def result(verdict: str, action: Action | None, reason: str, *, executed: bool = False) -> MethodResult:
            return MethodResult(verdict=verdict, action=action, proposal=proposal, reason=reason,
                                model_calls=model_calls, tokens=tokens, questions=questions, approvals=approvals,
                                hook_latencies=list(latencies), executed=executed, repairs=list(repairs),
                                report={"mode": "hook", "agent": AGENT, "calls": calls,
                                        "told": [{"key": s.key, "value": s.value, "source": s.source}
                                                 for s in told]})

        attempts, attempt, continued = 1 + self.retries, -1, False
        while attempt + 1 < attempts:
            attempt += 1
            plan = as_plan(inp.planner.plan(inp.task, memory.told(told)))
            model_calls += 1
            if plan.usage:
                tokens += plan.usage.input_tokens + plan.usage.output_tokens
            action = plan.action
            proposal = proposal or action
            if action.is_stop:
                # The agent ends its turn with its reason as the last message: Claude Code's Stop
                # hook may continue the turn, once, with a correction of a fact the stop cites.
                stopped = hook({**base, "hook_event_name": "Stop", "stop_hook_active": continued,
                                "last_assistant_message": action.reason}, "stop")
                continuation = _continuation(stopped.stdout)
                if continuation and not continued:
                    continued = True
                    attempts += 1  # the continued turn is a new turn, not a retry of a refused call
                    learn(continuation)
                    continue
                return result("stop", None, action.reason)
            tool_name, tool_input = render_tool_call(action, work)
            fingerprint = (tool_name, json.dumps(tool_input, sort_keys=True))
            if attempt and refused.get(fingerprint) == len(told) and not getattr(inp.planner, "stochastic", False):
                return result("stop", None, "gave up: the planner proposed a tool call that was already refused")
            known = len(told)  # what the agent knew when it made this call
            outcome = hook({**base, "hook_event_name": "PreToolUse", "tool_name": tool_name,
                            "tool_input": tool_input, "tool_use_id": f"call-{attempt}"}, "pre")
            verdict, reason, context = _decision(outcome.stdout)
            learn(reason)
            learn(context)
            if verdict == "ask":
                approved, feedback = self._prompt(inp, action, reason, clarifier, approver, told)
                asked = len(_questions(reason))
                questions += asked
                approvals += 0 if asked else 1
                if not approved:
                    learn(feedback, "developer")
                    refused[fingerprint] = known
                    continue
            elif verdict != "allow":
                refused[fingerprint] = known
                continue
            record = inp.execute(action) if inp.execute is not None else None
            exit_code = record.exit if record is not None else 0
            output = {"stdout": record.stdout if record else "", "stderr": record.stderr if record else ""}
            if exit_code == 0:
                response: dict[str, Any] = ({**output, "interrupted": False, "isImage": False} if tool_name == "Bash"
                                            else {"filePath": tool_input.get("file_path"), "success": True})
                hook({**base, "hook_event_name": "PostToolUse", "tool_name": tool_name, "tool_input": tool_input,
                      "tool_response": response, "tool_use_id": f"call-{attempt}"}, "post")
            else:
                hook({**base, "hook_event_name": "PostToolUseFailure", "tool_name": tool_name,
                      "tool_input": tool_input, "tool_use_id": f"call-{attempt}",
                      "error": f"Exit code {exit_code}\n{output['stdout']}{output['stderr']}"}, "post")
            return result("execute", action, reason, executed=inp.execute is not None)
        return result("stop", None, f"gave up after {attempts} refused attempts")

    @staticmethod
    def _confirm(inp: MethodInput, clarifier: Any, text: str) -> tuple[int, str]:
        """The developer's answers to the block's "ask them" lines: (questions asked, the
        corrections as the text the agent reads). A confirmed value is recorded as the
        developer's too (what ``statewise record add ... --source developer`` does), so it is no
        longer unverified; an unknown answer leaves the note as it was."""
        asked, notes = 0, []
        for key, scope, value in _to_confirm(text):
            key_type = inp.contract.key_type(key)
            answer = clarifier.ask(Question(key=key, scope=scope, value=value, record_id=None,
                                            value_type=key_type.value_type if key_type is not None else ValueType.STRING,
                                            text=text))
            asked += 1
            if answer.kind is AnswerKind.UNKNOWN:
                continue
            new = answer.value if answer.kind is AnswerKind.CORRECT else value
            inp.store.put(RecordDraft(key=key, value=new, scope=scope,
                                      provenance=Provenance(source=SourceKind.DEVELOPER, authority=Authority.DEVELOPER,
                                                            actor=inp.task.scope.user or "developer")),
                          replace=True, reason="the developer answered the agent's question")
            if answer.kind is AnswerKind.CORRECT:
                notes.append(f"{key} in {scope} was {json.dumps(value)}, now {json.dumps(new)}")
        return asked, ("The developer answered: " + "; ".join(notes) + ".") if notes else ""

    @staticmethod
    def _prompt(inp: MethodInput, action: Action, reason: str, clarifier: Any, approver: Any,
                told: list[Statement]) -> tuple[bool, str]:
        """Claude Code's permission prompt, answered by the simulated developer: (approved,
        the feedback text the agent gets when declined)."""
        asked = _questions(reason)
        corrections = []
        unknown = False
        for record_id, key, value, scope in asked:
            key_type = inp.contract.key_type(key)
            answer = clarifier.ask(Question(key=key, scope=scope, value=value, record_id=record_id,
                                            value_type=key_type.value_type if key_type is not None else ValueType.STRING,
                                            text=reason))
            if answer.kind is AnswerKind.CORRECT:
                corrections.append((key, scope, value, answer.value))
            elif answer.kind is AnswerKind.UNKNOWN:
                unknown = True
        if corrections:
            notes = []
            for key, scope, old, new in corrections:
                # What the hook's reason tells the agent to run: statewise record add KEY VALUE
                # --scope SCOPE --replace --source developer --authority developer.
                inp.store.put(RecordDraft(key=key, value=new, scope=scope,
                                          provenance=Provenance(source=SourceKind.DEVELOPER, authority=Authority.DEVELOPER,
                                                                actor=inp.task.scope.user or "developer")),
                              replace=True, reason="the developer answered the hook's question")
                notes.append(f"{key} in {scope} was {json.dumps(old)}, now {json.dumps(new)}")
            return False, "The user declined this tool call and said: " + "; ".join(notes) + "."
        if asked and not unknown:
            return True, ""
        approved = approver.approve(ApprovalRequest(action, reason, inp.task.text))
        return approved, "" if approved else f"The user declined this tool call. {reason}"


# A bundled method (statewise.bench.methods.BUNDLED_METHODS): importing this module registers it,
# so the method table never imports the hook's modules itself.
if dict.get(METHODS, "hook") is not HookMethod:
    register_method("hook", HookMethod)
