"""Composition: a contract's sections, and a base merged with what ``extends:`` it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from statewise.contract.commands import CommandRule
from statewise.contract.observations import MemorySpec, ObservationRule
from statewise.contract.spec import (
    ContractDocument,
    InvariantSpec,
    OperationSpec,
    ScopeSources,
    SecretsSpec,
    StateSpec,
)
from statewise.contract.verifier_spec import VerifierSpec
from statewise.errors import ContractError


def _spec_difference(old: BaseModel, new: BaseModel) -> str:
    old_data, new_data = old.model_dump(by_alias=True), new.model_dump(by_alias=True)
    fields = [name for name in old_data if old_data[name] != new_data.get(name)]
    return ", ".join(f"{name}: {old_data[name]!r} -> {new_data[name]!r}" for name in fields)[:400]


@dataclass(frozen=True)
class ContractParts:
    """The sections of a contract: one file's, or the merge of a base and what extends it."""

    state: dict[str, StateSpec]
    operations: dict[str, OperationSpec]
    invariants: list[InvariantSpec]
    verifiers: dict[str, VerifierSpec]
    scopes: ScopeSources | None
    observations: list[ObservationRule] = dataclasses.field(default_factory=list)
    memory: MemorySpec | None = None
    commands: dict[str, CommandRule] = dataclasses.field(default_factory=dict)
    secrets: SecretsSpec | None = None


def _merge_memory(base: MemorySpec | None, addition: MemorySpec | None, base_source: str,
                  source: str) -> MemorySpec | None:
    """The base's memory rules plus the addition's; a rule redefined differently is an error."""
    if base is None or addition is None:
        return addition if base is None else base
    merged: dict[str, dict[str, Any]] = {"rules": {}, "implies": {}}
    for section in ("rules", "implies"):
        for rule in (*getattr(base, section), *getattr(addition, section)):
            known = merged[section].get(rule.name)
            if known is not None and known != rule:
                raise ContractError(source, f"memory.{section}",
                                    f"redefines {rule.name!r} differently from {base_source}")
            merged[section][rule.name] = rule
    return MemorySpec(rules=tuple(merged["rules"].values()), implies=tuple(merged["implies"].values()),
                      note_key=addition.note_key or base.note_key,
                      corrections={**base.corrections, **addition.corrections})


def merge_parts(base: ContractParts, base_source: str, addition: ContractParts, source: str) -> ContractParts:
    """``base`` plus ``addition``; redefining anything differently is a ContractError in ``source``."""
    merged = ContractParts(
        state=dict(base.state),
        operations=dict(base.operations),
        invariants=list(base.invariants),
        verifiers=dict(base.verifiers),
        scopes=base.scopes,
        observations=list(base.observations),
        memory=_merge_memory(base.memory, addition.memory, base_source, source),
        commands=dict(base.commands),
        # A contract that extends another decides its own secrets policy (the developer's choice).
        secrets=addition.secrets if addition.secrets is not None else base.secrets,
    )
    known_rules = {rule.name: rule for rule in merged.observations}
    for index, rule in enumerate(addition.observations):
        if rule.name not in known_rules:
            merged.observations.append(rule)
            known_rules[rule.name] = rule
        elif known_rules[rule.name] != rule:
            raise ContractError(source, f"observations[{index}]",
                                f"redefines observation {rule.name!r} differently from {base_source}")
    sections: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
        ("state", "state key", merged.state, addition.state),
        ("operations", "operation", merged.operations, addition.operations),
        ("verifiers", "verifier binding", merged.verifiers, addition.verifiers),
        ("commands", "command rule", merged.commands, addition.commands),
    ]
    for section, noun, target, extra in sections:
        for name, spec in extra.items():
            existing = target.get(name)
            if existing is not None and existing != spec:
                raise ContractError(
                    source,
                    f"{section}.{name}",
                    f"redefines {noun} {name!r} differently from {base_source} "
                    f"({_spec_difference(existing, spec)}); choose a new name instead",
                )
            target[name] = spec
    by_name = {invariant.name: invariant for invariant in merged.invariants}
    for index, invariant in enumerate(addition.invariants):
        existing_invariant = by_name.get(invariant.name)
        if existing_invariant is None:
            merged.invariants.append(invariant)
            by_name[invariant.name] = invariant
        elif existing_invariant != invariant:
            raise ContractError(
                source,
                f"invariants[{index}]",
                f"redefines invariant {invariant.name!r} differently from {base_source}; "
                "choose a new name instead",
            )
    if addition.scopes is not None:
        if merged.scopes is not None and merged.scopes != addition.scopes:
            raise ContractError(
                source,
                "scopes",
                f"redefines scopes differently from {base_source} "
                f"({_spec_difference(merged.scopes, addition.scopes)})",
            )
        return dataclasses.replace(merged, scopes=addition.scopes)
    return merged


def document_parts(document: ContractDocument) -> ContractParts:
    """The sections of one contract file as written."""
    return ContractParts(
        state=dict(document.state),
        operations=dict(document.operations),
        invariants=list(document.invariants),
        verifiers=dict(document.verifiers),
        scopes=document.scopes,
        observations=list(document.observations),
        memory=document.memory,
        commands=dict(document.commands),
        secrets=document.secrets,
    )
