"""The check before the agent plans: the repaired state, injected on the prompt event.

Inside a client the planner is the client's model, and an agent that gives up on a wrong
record ("main is protected, so I stop") never calls a tool, so no pre-tool hook ever sees it.
On the prompt event (Claude Code and Codex ``UserPromptSubmit``, Gemini CLI ``BeforeAgent``)
and at ``SessionStart`` this module therefore does the resolution and repair the guard does
for a proposal, for every record that applies to the workspace:

1. retrieve the records of the workspace's task scope (the stale ones too);
2. settle each with the reliability checks; those that fail them (stale, never confirmed by
   their authority, contradicted by a newer record) go to the key's read-only verifier, in a
   worker thread, under a deadline well below the client's hook timeout;
3. write what a verifier found wrong back to the store with lineage
   (:func:`statewise.pipeline.repair.apply_repair`: supersede, narrow, relocate, retract);
4. render a compact block: each corrected record (``KEY in SCOPE was OLD, now NEW: evidence``),
   each record that could not be verified (named as unverified, never as fact), and, the
   first time in a session, the facts: those verified now as such, and those the reliability
   checks passed without a look (fresh, or the developer's) as on record, with their source
   and age and named as not re-checked; within a token budget.

A block the agent was already given in this session is not repeated: what was told is kept per
session in the cache folder, so a prompt after which nothing changed costs no tokens.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from statewise.contract import Contract
from statewise.integrations.hook_files import cache_dir, sha256_hex
from statewise.memory.context import DEFAULT_TOKEN_BUDGET, estimate_tokens, on_record_text
from statewise.memory.edits import EDIT_KEY
from statewise.pipeline.calls import CostMeter
from statewise.pipeline.repair import apply_repair
from statewise.pipeline.report import PremiseReport, PremiseStatus, RepairReport
from statewise.pipeline.resolution import Resolver, reliability_findings
from statewise.records import Authority, Record, SourceKind, base_key
from statewise.store import open_store
from statewise.store.base import Store
from statewise.workspace import derive_task_scope

__all__ = ["PROMPT_DEADLINE_SECONDS", "StateLine", "check_state", "prompt_context", "quiet_note_name",
           "remember_quiet_prompt", "render_state"]

#: Seconds the prompt-time verification may take (``$STATEWISE_PROMPT_DEADLINE`` overrides):
#: far below the 30 s hook timeout ``statewise install`` gives every client, and short enough
#: that a developer does not wait on a prompt. What is not verified by then is named unverified.
PROMPT_DEADLINE_SECONDS = 5.0

_CORRECTED, _UNVERIFIED, _VERIFIED = "corrected", "unverified", "verified"
_MAX_DETAIL = 160


@dataclass(frozen=True, slots=True)
class StateLine:
    """One item of the block: a record as it stands after the check, and why."""

    kind: str  # corrected | unverified | verified
    key: str
    scope: str
    value: object
    old_value: object = None
    old_scope: str = ""
    why: str = ""  # the evidence (corrected, verified) or what is missing (unverified)
    record_id: str = ""
    relevance: int = 0  # how many words of the prompt the key names
    #: An unverified value only the developer can settle (the key's authority is the developer's):
    #: the line tells the agent to ask them rather than rely on it or stop on it.
    developer: bool = False
    #: A verified line whose verifier looked now; otherwise the record passed the reliability
    #: checks on its own data (fresh, or its authority's word) and ``why`` says its source and age.
    checked_now: bool = False

    @property
    def identity(self) -> str:
        """What the agent was told, for not telling it twice."""
        return f"{self.kind}|{self.key}|{self.scope}|{json.dumps(self.value, sort_keys=True, default=str)}"


def _deadline() -> float:
    try:
        return max(0.1, float(os.environ.get("STATEWISE_PROMPT_DEADLINE", PROMPT_DEADLINE_SECONDS)))
    except ValueError:
        return PROMPT_DEADLINE_SECONDS


def _clip(text: str, limit: int = _MAX_DETAIL) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_WORD = re.compile(r"[a-z][a-z0-9]+")


def _relevance(key: str, prompt_words: set[str]) -> int:
    """How many of the key's words the prompt uses (``repository.protected`` and "push to the
    protected branch"): the prompt's task ranks the records it touches first."""
    return len(set(_WORD.findall(base_key(key).lower().replace("_", " "))) & prompt_words)


def check_state(workspace: Path, store: Store, contract: Contract, *, prompt: str = "",
                deadline: float | None = None, environ: Mapping[str, str] | None = None) -> list[StateLine]:
    """Resolve and repair the records that apply to ``workspace`` (see the module docstring);
    returns one line per record worth telling, corrections first."""
    started = time.monotonic()
    budget = _deadline() if deadline is None else deadline
    task = derive_task_scope(workspace)
    retrieval = store.retrieve(task, near_miss_limit=0)
    # StateWise's own bookkeeping about memory files (a line kept as text, an edit it wrote) is
    # no fact about the workspace.
    internal = {contract.memory.note_key, EDIT_KEY}
    records = [r for r in [*retrieval.records, *retrieval.stale] if base_key(r.key) not in internal]
    words = set(_WORD.findall(prompt.lower()))
    now = datetime.now(UTC)
    lines: list[StateLine] = []
    to_verify: list[Record] = []
    for record in records:
        spec = contract.state_spec(record.key)
        if spec is None:
            continue
        findings = reliability_findings(record, spec, task, records, now)
        if not findings:
            lines += _earlier_correction(store, record) or [_line(_VERIFIED, record, on_record_text(record, now))]
            continue
        if spec.authority is Authority.MACHINE and contract.verifier_for(record.key) is not None:
            to_verify.append(record)
        else:
            lines.append(replace(_line(_UNVERIFIED, record, "; ".join(findings)),
                                 developer=spec.authority is Authority.DEVELOPER))
    reports = _verify_all(to_verify, records, Resolver(contract, task, workspace, CostMeter(), environ=environ),
                          started + budget)
    for record in to_verify:
        report = reports.get(record.id)
        if report is None:
            lines.append(_line(_UNVERIFIED, record, f"not verified within {budget:g} s"))
            continue
        repair, report = apply_repair(store, record, report)
        lines.append(_after_resolution(record, report, repair))
    ranked = [replace(line, relevance=_relevance(line.key, words)) for line in lines]
    order = {_CORRECTED: 0, _UNVERIFIED: 1, _VERIFIED: 2}
    return sorted(ranked, key=lambda line: (order[line.kind], -line.relevance, line.key))


def _line(kind: str, record: Record, why: str) -> StateLine:
    return StateLine(kind=kind, key=record.key, scope=record.scope, value=record.value, why=_clip(why),
                     record_id=record.id)


def _earlier_correction(store: Store, record: Record) -> list[StateLine]:
    """A record that replaced another on evidence (not the developer's own edit): a correction
    the agent may not have been told in this session."""
    if not record.supersedes or record.provenance.source is SourceKind.DEVELOPER:
        return []
    old = store.get(record.supersedes)
    if old.value == record.value and old.scope == record.scope:
        return []  # a confirmation, not a correction
    link = next((link for link in store.links(record.id) if link.to_record == record.id), None)
    evidence = link.evidence if link is not None else None
    why = record.provenance.actor or record.provenance.source.value
    if link is not None and link.reason:
        why = link.reason
    if evidence is not None and evidence.detail:
        why = evidence.detail
    return [StateLine(kind=_CORRECTED, key=record.key, scope=record.scope, value=record.value, old_value=old.value,
                      old_scope=old.scope if old.scope != record.scope else "", why=_clip(why), record_id=record.id)]


def _verify_all(records: list[Record], others: list[Record], resolver: Resolver,
                until: float) -> dict[str, PremiseReport]:
    """Each record's verification, as far as it got by ``until`` (monotonic seconds). The
    verifiers run in one worker thread, since a verifier waits on its own timeout and only the
    deadline decides when the client gets its answer; the store is written only by the caller."""
    done: dict[str, PremiseReport] = {}
    if not records:
        return done

    def work() -> None:
        for record in records:
            if time.monotonic() >= until:
                return
            try:
                done[record.id] = resolver.resolve(record, others, observe=True)
            except Exception:  # noqa: BLE001 - a verifier that fails leaves its record unverified
                continue

    worker = threading.Thread(target=work, name="statewise-prompt-check", daemon=True)
    worker.start()
    worker.join(max(0.0, until - time.monotonic()))
    return dict(done)


def _after_resolution(record: Record, report: PremiseReport, repair: RepairReport | None) -> StateLine:
    evidence = report.evidence
    detail = (evidence.detail or evidence.actor) if evidence is not None else report.detail
    if report.status is PremiseStatus.DEFECTIVE and repair is not None:
        if repair.kind == "retract":
            return StateLine(kind=_CORRECTED, key=record.key, scope=record.scope, value=None, old_value=record.value,
                             why=_clip(f"observed absent: {report.detail}"), record_id=record.id)
        moved = record.scope if repair.scope != record.scope else ""
        return StateLine(kind=_CORRECTED, key=record.key, scope=repair.scope, value=repair.new_value,
                         old_value=record.value, old_scope=moved, why=_clip(detail or ""),
                         record_id=repair.new_record_id or record.id)
    if report.status is PremiseStatus.VALID:
        return replace(_line(_VERIFIED, record, f"verified now: {detail}" if detail else "verified now"),
                       checked_now=True)
    return _line(_UNVERIFIED, record, report.missing or report.detail or "the verifier could not decide")


def render_state(lines: list[StateLine], token_budget: int = DEFAULT_TOKEN_BUDGET) -> str:
    """The block the agent reads, at most ``token_budget`` estimated tokens, or "" for none.

    A correction is written ``KEY in SCOPE was OLD, now NEW: evidence`` (the form
    :func:`statewise.planners.base.read_corrections` and a model both read); an unverified
    record says so before its value; a fact says whether it was verified now or is only on
    record (with its source and age)."""
    if not lines:
        return ""
    rendered: list[str] = []
    for line in lines:
        value = json.dumps(line.value, default=str)
        if line.kind == _CORRECTED:
            moved = f" (moved from {line.old_scope}, where it does not apply)" if line.old_scope else ""
            rendered.append(f"- CORRECTED {line.key} in {line.scope} was {json.dumps(line.old_value, default=str)}, "
                            f"now {value}{moved}: {line.why}")
        elif line.kind == _UNVERIFIED:
            ask = "; the developer's to confirm: ask them before relying on it or stopping on it" \
                if line.developer else ""
            rendered.append(f"- UNVERIFIED (not a fact; check before relying on it) {line.key} in {line.scope}: "
                            f"on record as {value} ({line.why}){ask}")
        elif line.checked_now:
            rendered.append(f"- verified now {line.key} in {line.scope}: {value}")
        else:
            rendered.append(f"- on record, not re-checked now, {line.key} in {line.scope}: {value} ({line.why})")
    header = "StateWise checked the records for this workspace before you plan (use these, not older notes):"
    out = [header]
    for index, text in enumerate(rendered):
        left = len(rendered) - index - 1
        trailer = [f"(+{left} more: run `statewise record list`)"] if left else []
        if estimate_tokens("\n".join([*out, text, *trailer])) <= token_budget:
            out.append(text)
            continue
        tail = f"(+{len(rendered) - index} more: run `statewise record list`)"
        if estimate_tokens("\n".join([*out, tail])) <= token_budget:
            out.append(tail)
        break
    return "\n".join(out) if len(out) > 1 else ""


# --- what this session was told ------------------------------------------------------------


def _told_path(workspace: Path, agent: str, session_id: str) -> Path:
    name = sha256_hex(f"{workspace}\0{agent}\0{session_id}".encode())[:32]
    return cache_dir() / "told" / f"{name}.json"


def _told(path: Path) -> set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {str(item) for item in data} if isinstance(data, list) else set()


def _remember_told(path: Path, told: set[str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps(sorted(told)), encoding="utf-8")
        scratch.replace(path)
    except OSError:
        pass  # at worst the agent is told the same block again


def prompt_context(workspace: Path, *, store_location: str, contract: Contract, agent: str, session_id: str = "",
                   prompt: str = "", token_budget: int = DEFAULT_TOKEN_BUDGET,
                   environ: Mapping[str, str] | None = None, facts: bool = True, unverified: bool = True) -> str:
    """The block for a prompt (or a session start) in ``workspace``: what changed since the
    agent was last told in session ``session_id``, or "" when nothing did. Verified facts are
    told once per session; corrections and unverified records whenever they are new to it.
    ``facts=False`` (at SessionStart, whose memory note lists the verified facts already) leaves
    the verified facts out of the text but counts them as told. ``unverified=False`` (also at
    SessionStart) leaves the unverified records out and does not count them as told: the memory
    note speaks for the memory files' keys there, and the prompt event that every client sends
    right after names what is unverified. Nothing is created where StateWise is not set up (no
    store)."""
    if "://" not in store_location and not Path(store_location).exists():
        return ""
    store = open_store(store_location, key_schema=contract)
    try:
        lines = check_state(workspace, store, contract, prompt=prompt, environ=environ)
    finally:
        store.close()
    path = _told_path(workspace, agent, session_id) if session_id else None
    told = _told(path) if path is not None else set()
    fresh = [line for line in lines if line.identity not in told]
    if not any(line.kind != _VERIFIED for line in fresh) and told:
        return ""  # only facts it was given earlier in the session, or nothing new
    shown = [line for line in fresh if (facts or line.kind != _VERIFIED) and (unverified or line.kind != _UNVERIFIED)]
    text = render_state(shown, token_budget)
    if path is not None:
        said = {line.identity for line in shown if f" {line.key} in {line.scope}" in text}
        if not facts:
            said |= {line.identity for line in fresh if line.kind == _VERIFIED}
        _remember_told(path, told | said)
    return text


def quiet_note_name(agent: str, session_id: str) -> str:
    """The name under which a quiet prompt answer is remembered (the front door reads it)."""
    return f"{agent}\0prompt\0{session_id}"


def remember_quiet_prompt(workspace: Path, agent: str, session_id: str, store_location: str,
                          digest: str | None) -> None:
    """Let the front door answer the session's next prompts with nothing, without the guard,
    while the store, the work tree's HEAD and the workspace folder are unchanged (for at most
    :data:`~statewise.integrations.hook_files.SESSION_NOTE_SECONDS`): the agent was told
    everything this check found, and nothing it reads has moved since."""
    from statewise.integrations.hook_files import write_session_note

    if not session_id or "://" in store_location:
        return
    watched = [store_location, f"{store_location}-wal", str(workspace), str(workspace / ".git" / "HEAD")]
    write_session_note(str(workspace), quiet_note_name(agent, session_id), watched, "{}", digest)
