"""Operational records, their provenance, and the evidence that corrects them.

A record is the paper's r = (k, v, tau, sigma, pi): a typed ``key``, a ``value``, its
``time`` (observed, recorded, verified, freshness TTL), its ``scope`` and its
``provenance`` (source, authority, actor). Records are never edited in place: a correction
supersedes a record with a new one and a :class:`Link` that carries the evidence, so the
old value is always kept.
"""

from __future__ import annotations

import enum
import os
import re
import time as _time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from statewise.errors import InputError, KeyNameError
from statewise.scopes import Scope, TaskScope
from statewise.values import ValueType, check_value

__all__ = [
    "Authority",
    "Evidence",
    "KeySchema",
    "KeyType",
    "Lineage",
    "Link",
    "LinkKind",
    "Provenance",
    "Record",
    "RecordDraft",
    "RecordStatus",
    "RecordTime",
    "Retrieval",
    "SourceKind",
    "Supersession",
    "base_key",
    "check_key",
    "new_id",
    "parse_time",
    "utcnow",
]

#: The form of a state key: dotted lower-case names, optionally qualified ``[...]``.
KEY_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+(\[[^\[\]\s]+\])?$")


def check_key(key: str) -> str:
    """Validate a key name such as ``repository.protected`` or ``python.package[requests]``."""
    if not isinstance(key, str) or not KEY_PATTERN.match(key):
        raise KeyNameError(
            str(key),
            "a key is dotted lower-case words (namespace.name), optionally with a "
            "[qualifier], e.g. repository.protected or python.package_version[requests]",
        )
    return key


def base_key(key: str) -> str:
    """``python.package_version[requests]`` -> ``python.package_version``."""
    return key.split("[", 1)[0]


def utcnow() -> datetime:
    return datetime.now(UTC)


def parse_time(text: str | None, name: str) -> datetime | None:
    """An ISO 8601 time with a zone given as ``name`` (a CLI option, an MCP argument), or
    None; anything else is an InputError naming ``name``."""
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"{name}: expected an ISO 8601 time such as 2026-11-29T10:00:00+00:00, got {text!r}") from None
    if value.tzinfo is None:
        raise InputError(f"{name}: the time needs a zone, e.g. {text}+00:00")
    return value


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(prefix: str) -> str:
    """A sortable unique id: 48 bits of milliseconds and 80 random bits, Crockford base32."""
    number = (int(_time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        number, digit = divmod(number, 32)
        chars.append(_CROCKFORD[digit])
    return f"{prefix}_{''.join(reversed(chars))}"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


@overload
def _aware(value: datetime) -> datetime: ...


@overload
def _aware(value: None) -> None: ...


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError("timestamps must carry a time zone (use UTC)")
    return value


class _KeyedModel(_Model):
    """A model with a ``key`` and a ``scope``: both validated, the scope made canonical."""

    @field_validator("key", check_fields=False)
    @classmethod
    def _check_key(cls, value: str) -> str:
        return check_key(value)

    @field_validator("scope", check_fields=False)
    @classmethod
    def _check_scope(cls, value: str) -> str:
        return str(Scope.parse(value))


class RecordStatus(str, enum.Enum):
    """Why a record is or is not in force. Lapsed, contradicted and forgotten stay distinct."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"  # replaced by a corrected record (see its link's evidence)
    EXPIRED = "expired"  # its freshness TTL lapsed without re-verification
    RETRACTED = "retracted"  # a person or a reverted repair withdrew it


class SourceKind(str, enum.Enum):
    OBSERVATION = "observation"  # a read-only verifier looked at the live environment
    TOOL_OUTPUT = "tool_output"  # parsed from what a tool printed
    DEVELOPER = "developer"  # a developer said so
    AGENT_INFERENCE = "agent_inference"  # the agent concluded it
    IMPORT = "import"  # brought in from elsewhere


class Authority(str, enum.Enum):
    """Who may establish a fact. Machine facts are observed; intent belongs to developers."""

    MACHINE = "machine"
    DEVELOPER = "developer"
    AGENT = "agent"


class Provenance(_Model):
    source: SourceKind
    authority: Authority
    actor: str = Field(min_length=1, description="who or what produced it: a verifier, a person, an agent")
    reference: str | None = Field(default=None, description="free reference: a tool call, a commit, a URL")


class RecordTime(_Model):
    observed_at: datetime  # when the fact was seen to hold in the world
    recorded_at: datetime  # when the store learned it
    verified_at: datetime | None = None  # last confirmed against its authority
    ttl_seconds: int | None = Field(default=None, ge=1)

    @field_validator("observed_at", "recorded_at", "verified_at")
    @classmethod
    def _check_tz(cls, value: datetime | None) -> datetime | None:
        return _aware(value)

    @property
    def confirmed_at(self) -> datetime:
        """The latest time the value was known to hold."""
        if self.verified_at is not None and self.verified_at > self.observed_at:
            return self.verified_at
        return self.observed_at

    def is_stale(self, now: datetime) -> bool:
        if self.ttl_seconds is None:
            return False
        return now - self.confirmed_at > timedelta(seconds=self.ttl_seconds)


class Record(_KeyedModel):
    """One stored record. Immutable: the store returns new instances when status changes."""

    id: str
    key: str
    value: Any
    value_type: ValueType
    scope: str
    status: RecordStatus = RecordStatus.ACTIVE
    time: RecordTime
    provenance: Provenance
    supersedes: str | None = None  # the record this one replaced in the same scope
    superseded_by: str | None = None
    version: int = Field(default=1, ge=1)
    status_reason: str | None = None
    status_changed_at: datetime | None = None


    @model_validator(mode="after")
    def _typed(self) -> Record:
        check_value(self.value, self.value_type, key=self.key)
        return self

    @property
    def scope_obj(self) -> Scope:
        return Scope.parse(self.scope)

    @property
    def is_active(self) -> bool:
        return self.status is RecordStatus.ACTIVE

    def applies_to(self, task: TaskScope) -> bool:
        return self.scope_obj.applies_to(task)

    def is_stale(self, now: datetime | None = None) -> bool:
        return self.time.is_stale(now or utcnow())


class RecordDraft(_KeyedModel):
    """What a caller hands to ``Store.put``: a record before the store gives it identity.

    ``value_type`` and ``ttl_seconds`` may be left out when the store has a key schema
    (the contract) that declares them.
    """

    key: str
    value: Any
    scope: str
    provenance: Provenance
    value_type: ValueType | None = None
    observed_at: datetime | None = None
    verified_at: datetime | None = None
    ttl_seconds: int | None = Field(default=None, ge=1)


    @field_validator("observed_at", "verified_at")
    @classmethod
    def _check_tz(cls, value: datetime | None) -> datetime | None:
        return _aware(value)


class Evidence(_KeyedModel):
    """What established a value, bound to one key, type and scope (typed evidence grounding)."""

    key: str
    value: Any
    value_type: ValueType
    scope: str
    source: SourceKind
    authority: Authority
    actor: str = Field(min_length=1, description="the verifier or the person")
    observed_at: datetime
    detail: str = ""
    reference: str | None = None


    @field_validator("observed_at")
    @classmethod
    def _check_tz(cls, value: datetime) -> datetime:
        return _aware(value)

    @model_validator(mode="after")
    def _typed(self) -> Evidence:
        check_value(self.value, self.value_type, key=self.key)
        return self

    def provenance(self) -> Provenance:
        return Provenance(source=self.source, authority=self.authority, actor=self.actor, reference=self.reference)


class LinkKind(str, enum.Enum):
    SUPERSEDE = "supersede"  # the old record was replaced in its own scope
    NARROW = "narrow"  # a correction in a narrower scope; the old record stays in force elsewhere
    REVERT = "revert"  # a repair was undone and the earlier value restored
    RETRACT = "retract"  # a record was withdrawn
    EXPIRE = "expire"  # a record's TTL lapsed
    VERIFY = "verify"  # a record was confirmed (verified_at refreshed)


class Link(_Model):
    """One lineage edge, with the evidence and reason that caused it."""

    id: str
    kind: LinkKind
    from_record: str  # the record acted on (the old one)
    to_record: str | None  # the record that resulted, if any
    scope: str  # the scope the evidence established
    evidence: Evidence | None = None
    reason: str = ""
    actor: str
    created_at: datetime


class Supersession(_Model):
    """The result of a supersession or narrowing: the record acted on, the new one, the link."""

    old: Record
    new: Record
    link: Link
    replaced: Record | None = None  # for a narrowing: the narrower record it replaced, if any


class Retrieval(_Model):
    """The records that apply to a task, kept apart from those that were held back."""

    task: str
    records: list[Record]  # active, in scope, fresh, most specific per key
    stale: list[Record] = []  # active and in scope but past their TTL
    shadowed: list[Record] = []  # in scope but overridden by a more specific record
    near_misses: list[Record] = []  # same key or nearby scope, but not applying to this task

    def get(self, key: str) -> Record | None:
        for record in self.records:
            if record.key == key:
                return record
        return None

    @property
    def held_back(self) -> dict[str, int]:
        return {"stale": len(self.stale), "shadowed": len(self.shadowed), "near_misses": len(self.near_misses)}


class Lineage(_Model):
    """A record's full lineage: every record on its chain, oldest first, and the links."""

    record_id: str
    records: list[Record]
    links: list[Link]


@dataclass(frozen=True, slots=True)
class KeyType:
    """What a key schema declares about one key's values."""

    value_type: ValueType
    choices: tuple[str, ...] | None = None
    ttl_seconds: int | None = None


@runtime_checkable
class KeySchema(Protocol):
    """Declares the keys a store accepts (a contract implements this)."""

    def key_type(self, key: str) -> KeyType | None:
        """The declared type of ``key``, or None if the schema does not declare it."""
        ...
