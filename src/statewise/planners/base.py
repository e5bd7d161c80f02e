"""The planner protocol: plan(task, context) -> Action (the paper's P(T, S)).

A planner sees a task and the planning context: the records retrieved for it, each possibly
*masked* (present, value unknown) by an attribution probe. It returns a normalized Action,
or a :class:`Plan` when it can also report its token usage. It may raise PlannerError; the
guard turns any failure into an unresolved premise or a safe stop, never into an action.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from operator import attrgetter
from typing import Any, Protocol, cast, runtime_checkable

from statewise.actions import Action
from statewise.records import Record
from statewise.scopes import TaskScope

__all__ = [
    "MASKED",
    "CallablePlanner",
    "ContextRecord",
    "Plan",
    "Planner",
    "PlanningContext",
    "Statement",
    "Task",
    "Usage",
    "read_corrections",
    "read_observed",
    "samples_stochastically",
    "seeded_draw",
]


class _Masked:
    """The value of a masked record: present in the context, value unknown."""

    _instance: _Masked | None = None

    def __new__(cls) -> _Masked:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MASKED"

    def __reduce__(self) -> str:
        return "MASKED"


MASKED: Any = _Masked()


@dataclass(frozen=True, slots=True)
class Task:
    """A task the agent was given: its text, where it runs, and (optionally) its family."""

    text: str
    scope: TaskScope
    family: str | None = None
    workspace: str | None = None
    id: str = ""
    #: Task parameters a playbook may use, e.g. {"package": "requests"}.
    params: Mapping[str, str] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """A stable identity of the task for caches."""
        return json.dumps([self.id, self.text, self.family, str(self.scope), self.workspace,
                           sorted(self.params.items())])


@dataclass(frozen=True, slots=True)
class ContextRecord:
    """One record as a planner sees it."""

    id: str
    key: str
    value: Any
    scope: str
    source: str
    authority: str
    observed_at: datetime | None = None
    stale: bool = False
    #: What distinguishes this record between the probes of one check (see cache_key).
    entry: tuple[Any, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        value = "<masked>" if self.value is MASKED else _hashable(self.value)
        object.__setattr__(self, "entry", (self.id, value, self.stale))

    @property
    def masked(self) -> bool:
        return self.value is MASKED

    @classmethod
    def from_record(cls, record: Record, *, stale: bool = False) -> ContextRecord:
        return cls(
            id=record.id, key=record.key, value=record.value, scope=record.scope,
            source=record.provenance.source.value, authority=record.provenance.authority.value,
            observed_at=record.time.observed_at, stale=stale,
        )


@dataclass(frozen=True, slots=True)
class PlanningContext:
    """The retrieved context S: an ordered tuple of records (most specific first per key)."""

    records: tuple[ContextRecord, ...] = ()
    #: Which sample this is, for stochastic planners asked several times about one context
    #: (a deterministic planner ignores it). Not part of the fingerprint.
    sample: int = 0

    @classmethod
    def of(cls, records: Iterable[ContextRecord]) -> PlanningContext:
        return cls(tuple(records))

    def for_sample(self, sample: int) -> PlanningContext:
        return self if sample == self.sample else replace(self, sample=sample)

    def state(self) -> dict[str, Any]:
        """key -> value as the planner should read it: the first record per key wins, and a
        masked record hides the key's value (MASKED) rather than revealing a shadowed one."""
        state: dict[str, Any] = {}
        for record in self.records:
            state.setdefault(record.key, record.value)
        return state

    def without(self, record_id: str) -> PlanningContext:
        """The remove probe: the record is gone from the context."""
        return PlanningContext(tuple(r for r in self.records if r.id != record_id))

    def with_value(self, record_id: str, value: Any) -> PlanningContext:
        """The mask (value=MASKED) and alternative probes: only that record's value changes."""
        return PlanningContext(tuple(replace(r, value=value) if r.id == record_id else r for r in self.records))

    def told(self, statements: Iterable[Statement]) -> PlanningContext:
        """The context with what the planner was told since it was built (tool feedback, a
        hook's reason, a developer's answer): each statement enters as a record from its
        ``source``, ahead of the records of the same key (so it is the value the planner
        reads); a statement whose value is None (a retraction) removes the key. The latest
        statement about a key wins."""
        latest: dict[str, Statement] = {}
        for statement in statements:
            latest.pop(statement.key, None)
            latest[statement.key] = statement
        if not latest:
            return self
        told = tuple(ContextRecord(id=f"told:{n}", key=s.key, value=s.value, scope="told", source=s.source,
                                   authority=s.source) for n, s in enumerate(latest.values()) if s.value is not None)
        kept = tuple(r for r in self.records if r.key not in latest)
        return PlanningContext(told + kept, sample=self.sample)

    def cache_key(self) -> tuple[Any, ...]:
        """A cheap exact identity of what changes between the probes of one check: which
        records are present, their values (or masking) and staleness. Within one check a
        record id always carries the same key, scope and provenance."""
        return tuple(map(_ENTRY, self.records))

    def fingerprint(self) -> str:
        """A stable digest of everything a planner sees, for the probe cache."""
        digest = hashlib.sha256()
        for record in self.records:
            value = "<masked>" if record.masked else json.dumps(record.value, sort_keys=True)
            seen = record.observed_at.isoformat() if record.observed_at else ""
            digest.update(
                f"{record.id}\x00{record.key}\x00{record.scope}\x00{value}\x00{record.source}\x00"
                f"{record.authority}\x00{seen}\x00{record.stale}\x01".encode()
            )
        return digest.hexdigest()


def _hashable(value: Any) -> Any:
    return (type(value).__name__, tuple(value) if isinstance(value, list) else value)


_ENTRY = attrgetter("entry")


@dataclass(frozen=True, slots=True)
class Statement:
    """A fact a planner was told after its context was built: ``key`` is ``value``, says
    ``source`` (e.g. ``statewise-hook``, ``developer``); ``text`` is the sentence it came from."""

    key: str
    value: Any
    source: str
    text: str = ""


_KEY = re.compile(r"[A-Za-z_][\w\-]*(?:\.[\w\-]+)+(?:\[[^\]\s]*\])?")
_DECODER = json.JSONDecoder()


def read_corrections(text: str, source: str) -> tuple[Statement, ...]:
    """The corrections a feedback text states, as statements from ``source``.

    The general way a planner reads what it is told: a correction is written either
    ``KEY [in SCOPE] was OLD, now NEW`` (a hook's deny reason, a post-tool note) or
    ``KEY = NEW (was OLD`` (a session-start note), where KEY is a dotted state key and OLD/NEW
    are JSON values; NEW is what the planner now takes KEY to be. Nothing else in the text is
    read: no per-case or per-message logic, and a text without such a sentence states nothing.
    """
    found: list[Statement] = []
    for match in _KEY.finditer(text or ""):
        key, end = match.group(0), match.end()
        if match.start() > 0 and (text[match.start() - 1].isalnum() or text[match.start() - 1] in "._-"):
            continue
        rest = text[end:]
        if rest.startswith(" = "):  # KEY = NEW (was OLD
            try:
                value, stop = _DECODER.raw_decode(text, end + 3)
            except json.JSONDecodeError:
                continue
            if text.startswith(" (was ", stop):
                found.append(Statement(key, value, source, text[match.start():stop]))
            continue
        position = end
        scoped = re.match(r" in \S+", rest)
        if scoped:
            position += scoped.end()
        if not text.startswith(" was ", position):
            continue
        try:
            _old, stop = _DECODER.raw_decode(text, position + 5)
        except json.JSONDecodeError:
            continue
        if not text.startswith(", now ", stop):
            continue
        try:
            new, stop = _DECODER.raw_decode(text, stop + 6)
        except json.JSONDecodeError:
            continue
        found.append(Statement(key, new, source, text[match.start():stop]))
    return tuple(found)


def read_observed(text: str, source: str) -> tuple[Statement, ...]:
    """The values a stop's reason states it evaluated, as statements from ``source``.

    A deny or ask explains each failed invariant with the facts it read, in a bracketed list
    after the message: ``[KEY = VALUE (EVIDENCE); KEY: none (...); ...]``
    (:func:`statewise.pipeline.gate`'s explanation, docs/results-hook.md's model of the agent). A
    fact ``KEY = VALUE (`` there is the value StateWise holds for KEY after its check (observed,
    repaired or on record), which a model reading the reason takes as the value to plan with:
    "node.package_manager = "pnpm" (pnpm-lock.yaml is present)". Only facts at the head of such
    a list or after its ``; `` separator are read, VALUE a JSON value followed by its source in
    parentheses or by the list's next ``; `` or end; a correction's ``KEY = NEW (was OLD`` is
    :func:`read_corrections`'s. Nothing else in the text is read: no per-case logic, and a text
    without such a list states nothing."""
    found: list[Statement] = []
    for match in _KEY.finditer(text or ""):
        key, start, end = match.group(0), match.start(), match.end()
        if not (text.endswith("[", 0, start) or text.endswith("; ", 0, start)) or not text.startswith(" = ", end):
            continue
        try:
            value, stop = _DECODER.raw_decode(text, end + 3)
        except json.JSONDecodeError:
            continue
        if text.startswith(" (was ", stop) or not text.startswith((" (", "; ", "]"), stop):
            continue
        found.append(Statement(key, value, source, text[start:stop]))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Usage:
    """What one planner call cost, where the planner knows."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Plan:
    """A planner's answer: the action, and its usage if known."""

    action: Action
    usage: Usage | None = None
    raw: str | None = field(default=None, repr=False)


@runtime_checkable
class Planner(Protocol):
    """Anything with a name that turns (task, context) into an Action or a Plan.

    A planner declares how it samples with a ``stochastic`` attribute: True when two calls on
    one input may answer differently (a model at a temperature above 0, the noise wrapper),
    and the guard then asks several samples per probe; False or absent: deterministic, one
    sample (:func:`samples_stochastically`).
    """

    name: str

    def plan(self, task: Task, context: PlanningContext) -> Action | Plan: ...


def samples_stochastically(planner: Any) -> bool:
    """The planner's declared sampling: its ``stochastic`` attribute (absent: deterministic)."""
    return bool(getattr(planner, "stochastic", False))


def as_plan(result: Action | Plan) -> Plan:
    """Normalize a planner's return value."""
    if isinstance(result, Plan):
        return result
    if isinstance(result, Action):
        return Plan(action=result)
    raise TypeError(f"a planner must return an Action or a Plan, not {type(result).__name__}")


class CallablePlanner:
    """Wrap any function ``(task, state) -> Action | dict`` as a planner.

    ``state`` is ``context.state()`` (key -> value, MASKED for masked records); a dict is
    validated as an Action. This is the adapter for an existing agent loop.
    """

    def __init__(self, function: Callable[[Task, Mapping[str, Any]], Any], *, name: str = "callable") -> None:
        self.function = function
        self.name = name

    def plan(self, task: Task, context: PlanningContext) -> Action | Plan:
        result = self.function(task, context.state())
        if isinstance(result, dict):
            return Action.model_validate(result)
        return cast("Action | Plan", result)  # the callable's contract: an action, a plan or its dict


def seeded_draw(label: str, seed: int, task: Task, context: PlanningContext) -> random.Random:
    """The random stream a seeded planner (noisy, wayward) draws from for one call: a pure
    function of (label, seed, task, context, sample) that is the same in every run of a case.

    It reads what the planner sees and a case fixes: the task's id, family, text and
    parameters, and each record's key, value, source, authority and staleness. Not the task's
    workspace and scope, nor the records' ids, scopes and times, and in every path under the
    temporary directory the words of eight characters or more are masked (the random part of a
    temp directory's name, ``ep-...-ac1a0daf``): a fresh sandbox changes those in every run (a
    temp directory, a ULID, a clock), and two runs of one command must give the same numbers."""
    material: list[Any] = [label, seed, task.id, task.family, task.text, sorted(task.params.items()),
                           context.sample]
    for record in context.records:
        value = "<masked>" if record.masked else record.value
        material.append([record.key, value, record.source, record.authority, record.stale])
    text = _TEMPORARY.sub(lambda path: _LONG_WORD.sub("<r>", path.group(0)),
                          json.dumps(material, sort_keys=True, default=str))
    digest = hashlib.sha256(text.encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# A path under the temporary directory, and the words in it that may be random.
_TEMPORARY = re.compile(re.escape(tempfile.gettempdir().rstrip("/")) + r"/[^\s\"]*")
_LONG_WORD = re.compile(r"[A-Za-z0-9_]{8,}")

