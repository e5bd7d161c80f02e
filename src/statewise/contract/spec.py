"""The contract document's models: state keys, operations, invariants, scopes, one file."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StrictBool, StrictInt, StrictStr, field_validator

from statewise.contract.commands import CommandRule
from statewise.contract.durations import parse_ttl
from statewise.contract.fields import NonEmptyStr, SpecModel, TypeField, enum_parser, named
from statewise.contract.observations import MemorySpec, ObservationRule
from statewise.contract.questions import QUESTION_PLACEHOLDERS
from statewise.contract.risk import Risk
from statewise.contract.templates import template_fields
from statewise.contract.verifier_spec import VerifierRef, VerifierSpec
from statewise.records import Authority, KeyType, base_key, check_key
from statewise.scopes import ScopeLevel


def _check_state_key_name(value: str) -> str:
    try:
        check_key(value)
    except ValueError:
        raise ValueError(
            f"{value!r} is not a valid key name; expected dotted lower-case words such as "
            "repository.protected"
        ) from None
    if "[" in value:
        raise ValueError(
            f"{value!r}: declare the base key ({base_key(value)}) with qualified: true; "
            "records then use key[qualifier]"
        )
    return value


class StateSpec(SpecModel):
    """What a contract declares about one state key."""

    value_type: TypeField = Field(alias="type")
    choices: tuple[NonEmptyStr, ...] | None = None
    scope: Annotated[ScopeLevel, enum_parser(ScopeLevel, by_label=True)]
    authority: Annotated[Authority, enum_parser(Authority)]
    verifier: VerifierRef | None = None
    ttl_seconds: Annotated[int | None, BeforeValidator(parse_ttl)] = Field(default=None, alias="ttl")
    single_valued: StrictBool = True
    qualified: StrictBool = False
    description: StrictStr = ""
    question: NonEmptyStr | None = None

    @field_validator("question")
    @classmethod
    def _question_placeholders(cls, value: str | None) -> str | None:
        if value is not None:
            template_fields(value, QUESTION_PLACEHOLDERS)
        return value

    @property
    def key_type(self) -> KeyType:
        return KeyType(value_type=self.value_type, choices=self.choices, ttl_seconds=self.ttl_seconds)


class SlotSpec(SpecModel):
    """One typed argument of an operation, and the state keys its value may depend on.

    ``qualifier: true`` says the slot's value is the qualifier of the qualified keys it
    depends on (``pip.install``'s ``package`` slot qualifies ``python.package_version``), so
    ``python.package_version[requests]`` binds to an install of ``requests`` only.
    """

    value_type: TypeField = Field(alias="type")
    choices: tuple[NonEmptyStr, ...] | None = None
    required: StrictBool = False
    depends_on: tuple[StrictStr, ...] = ()
    qualifier: StrictBool = False
    description: StrictStr = ""


class OperationSpec(SpecModel):
    """A side-effecting (or, for ``stop``, harmless) tool operation."""

    tool: Annotated[StrictStr, named("tool")]
    description: StrictStr = ""
    slots: dict[Annotated[StrictStr, named("slot")], SlotSpec] = Field(default_factory=dict)
    risk: Annotated[Risk, enum_parser(Risk)]
    requires_approval: StrictBool = False
    side_effects: StrictBool = True
    links: tuple[StrictStr, ...] = ()
    # The commands that perform this operation, each as its argv shape: the program, then the
    # subcommand words (patterns as in a command rule: ``upgrade|downgrade``, ``db:*``). A shell
    # command of that shape yields this operation beside what the command rules (the built-in
    # catalogue's) read, with their slots (docs/contracts.md, "Operations that name their
    # command").
    argv: tuple[Annotated[tuple[NonEmptyStr, ...], Field(min_length=1)], ...] = ()


class RemedySpec(SpecModel):
    """A way on when an invariant stops an action: the action with these slots changed. The hook
    tells it only when the changed action passes every invariant under the repaired state
    (:mod:`statewise.pipeline.guidance`). A slot value ``state:KEY`` is that key's resolved value;
    ``say`` may name the changed slots as ``{slot}``."""

    say: NonEmptyStr
    args: dict[StrictStr, Any] = Field(default_factory=dict)


class InvariantSpec(SpecModel):
    """A hard safety rule: whenever ``when`` holds, ``check`` must hold. Both are CEL."""

    name: Annotated[StrictStr, named("invariant")]
    when: NonEmptyStr = "true"
    check: NonEmptyStr
    message: NonEmptyStr
    instead: tuple[RemedySpec, ...] = ()  # how to go on, tried in order


_SCOPE_SOURCE_FORMS = {
    "user": (re.compile(r"^env:[A-Za-z_][A-Za-z0-9_]*$"), "env:<VARIABLE>"),
    "workspace": (
        re.compile(r"^(cwd|git:toplevel|env:[A-Za-z_][A-Za-z0-9_]*)$"),
        "cwd, git:toplevel or env:<VARIABLE>",
    ),
    "repo": (
        re.compile(r"^(git:toplevel|git:remote\.[A-Za-z0-9._-]+\.url|env:[A-Za-z_][A-Za-z0-9_]*)$"),
        "git:remote.<name>.url, git:toplevel or env:<VARIABLE>",
    ),
    "branch": (re.compile(r"^(git:branch|env:[A-Za-z_][A-Za-z0-9_]*)$"), "git:branch or env:<VARIABLE>"),
}


def _sources(level: str) -> Any:
    pattern, expected = _SCOPE_SOURCE_FORMS[level]

    def parse(value: Any) -> Any:
        items = (value,) if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not items:
            raise ValueError(f"expected a source or a non-empty list of sources ({expected})")
        for item in items:
            if not isinstance(item, str) or not pattern.match(item):
                raise ValueError(f"expected {expected}; got {item!r}")
        return tuple(items)

    return BeforeValidator(parse)


class ScopeSources(SpecModel):
    """Where each part of a task's scope comes from; a list is tried in order.

    The levels nest as ``global < user < workspace < repo < branch`` (see
    :mod:`statewise.scopes`); this section only says how to observe each one.
    """

    user: Annotated[tuple[str, ...], _sources("user")] = ("env:USER",)
    workspace: Annotated[tuple[str, ...], _sources("workspace")] = ("cwd",)
    repo: Annotated[tuple[str, ...], _sources("repo")] = ("git:remote.origin.url", "git:toplevel")
    branch: Annotated[tuple[str, ...], _sources("branch")] = ("git:branch",)


class SecretsSpec(SpecModel):
    """What the agent may do with secrets (``.env`` files, private keys, cloud credential files:
    :mod:`statewise.protection`), which are protected without any record. ``names``: more file
    name globs that are secrets; ``exempt``: names that are not (templates such as
    ``.env.example`` already are)."""

    read: Literal["allow", "ask", "deny"] = "ask"
    write: Literal["allow", "ask", "deny"] = "deny"
    delete: Literal["allow", "ask", "deny"] = "deny"
    names: tuple[NonEmptyStr, ...] = ()
    exempt: tuple[NonEmptyStr, ...] = ()


class ContractDocument(SpecModel):
    """One contract file as written (before merging with what it extends)."""

    name: Annotated[StrictStr, named("contract")]
    version: Annotated[StrictInt, Field(ge=1)]
    description: StrictStr = ""
    extends: NonEmptyStr | None = None
    state: dict[Annotated[StrictStr, AfterValidator(_check_state_key_name)], StateSpec] = Field(default_factory=dict)
    operations: dict[Annotated[StrictStr, named("operation")], OperationSpec] = Field(default_factory=dict)
    invariants: tuple[InvariantSpec, ...] = ()
    verifiers: dict[Annotated[StrictStr, named("binding")], VerifierSpec] = Field(default_factory=dict)
    scopes: ScopeSources | None = None
    observations: tuple[ObservationRule, ...] = ()
    memory: MemorySpec | None = None
    commands: dict[Annotated[StrictStr, named("binding")], CommandRule] = Field(default_factory=dict)
    secrets: SecretsSpec | None = None
