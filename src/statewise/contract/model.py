"""The loaded contract: a frozen value over the merged, cross-checked sections."""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statewise.contract import bindings
from statewise.contract.commands import CommandRule
from statewise.contract.invariants import CompiledInvariant, InvariantResult, check_all, compile_invariant
from statewise.contract.merge import ContractParts, merge_parts
from statewise.contract.observations import MemorySpec, ObservationRule
from statewise.contract.questions import question_text
from statewise.contract.references import check_references
from statewise.contract.spec import InvariantSpec, OperationSpec, ScopeSources, StateSpec
from statewise.contract.verifier_spec import VerifierSpec
from statewise.errors import ContractError
from statewise.protection import SecretRules
from statewise.records import Authority, KeyType, base_key, check_key


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Contract:
    """A loaded, fully validated contract. Immutable; build one with :func:`load_contract`.

    Implements :class:`statewise.records.KeySchema`, so a store can use it to type records.
    A frozen value whose mappings are read-only views: ``name``, ``version``, ``description``,
    ``source`` (the file or label it was loaded from), ``bases`` (names of the contracts
    merged underneath it, innermost first) and the sections: ``state``, ``operations``,
    ``invariants``, ``verifiers`` (the named bindings; inline verifiers live on their state
    keys), ``scopes``, ``observations`` (what finished shell commands reveal),
    ``memory`` (how agents' memory files become records), ``commands`` (the declarative
    shell-command rules, docs/shell.md) and ``secrets`` (what the agent may do with secrets,
    :mod:`statewise.protection`). Equality is identity, as for any loaded resource.
    """

    name: str
    version: int
    description: str
    source: str
    bases: tuple[str, ...]
    state: Mapping[str, StateSpec]
    operations: Mapping[str, OperationSpec]
    invariants: tuple[InvariantSpec, ...]
    verifiers: Mapping[str, VerifierSpec]
    scopes: ScopeSources
    observations: tuple[ObservationRule, ...]
    memory: MemorySpec
    commands: Mapping[str, CommandRule]
    secrets: SecretRules
    # What extend() and extends: merge onto, and the invariants compiled once for reuse.
    _parts: ContractParts
    _compiled: Mapping[str, CompiledInvariant]

    # Immutable, so copies are the object itself (and the compiled programs hold a lock,
    # which cannot be copied).
    def __copy__(self) -> Contract:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Contract:
        return self

    def __repr__(self) -> str:
        return (
            f"Contract({self.name!r} v{self.version}, {len(self.state)} keys, "
            f"{len(self.operations)} operations, {len(self.invariants)} invariants)"
        )

    # --- keys --------------------------------------------------------------------------------

    def state_spec(self, key: str) -> StateSpec | None:
        """The spec for a declared base key (``python.package_version``) or a record key.

        A record key with a qualifier (``python.package_version[requests]``) resolves only if
        its base key is declared ``qualified: true``; otherwise None.
        """
        if not isinstance(key, str):
            return None
        if "[" not in key:
            return self.state.get(key)
        try:
            check_key(key)
        except ValueError:
            return None
        spec = self.state.get(base_key(key))
        return spec if spec is not None and spec.qualified else None

    def key_type(self, key: str) -> KeyType | None:
        """The declared type of a record key, or None if records may not use that key.

        ``python.package_version[requests]`` gets the type of ``python.package_version`` when
        that key is ``qualified: true``. A qualified key without its qualifier is *not* a
        valid record key (which package?), and neither is a qualifier on an unqualified key.
        """
        spec = self.state_spec(key)
        if spec is None or (spec.qualified and "[" not in key):
            return None
        return spec.key_type

    def verifier_for(self, key: str) -> VerifierSpec | None:
        """The verifier that observes ``key`` (a named binding resolved, or the inline one)."""
        spec = self.state_spec(key)
        if spec is None or spec.verifier is None:
            return None
        if isinstance(spec.verifier, str):
            return self.verifiers[spec.verifier]
        return spec.verifier

    def unverifiable_keys(self) -> tuple[str, ...]:
        """Machine-authority keys without a verifier: allowed, but they can never be confirmed."""
        return tuple(
            key
            for key, spec in self.state.items()
            if spec.authority is Authority.MACHINE and spec.verifier is None
        )

    def adapter_names(self) -> frozenset[str]:
        """Every verifier adapter this contract refers to (for a registry to check at start-up)."""
        names = {spec.adapter for spec in self.verifiers.values()}
        names |= {
            spec.verifier.adapter for spec in self.state.values() if isinstance(spec.verifier, VerifierSpec)
        }
        return frozenset(names)

    def question_for(self, key: str, *, scope: str, value: Any) -> str:
        """The clarification question for a developer-owned key, from its template."""
        spec = self.state_spec(key)
        return question_text(spec.question if spec is not None else None, key, scope=scope, value=value)

    # --- operations ----------------------------------------------------------------------------

    def operation(self, name: str) -> OperationSpec | None:
        """The operation called ``name`` (e.g. ``git.push``), or None."""
        return self.operations.get(name)

    def operation_name(self, tool: str | None, operation: str) -> str | None:
        """The contract's name for an operation given as ``push`` + tool ``git`` or ``git.push``."""
        if operation in self.operations:
            return operation
        if tool:
            qualified = f"{tool}.{operation}"
            if qualified in self.operations:
                return qualified
        return None

    def keys_for_operation(self, name: str) -> tuple[str, ...]:
        """The state keys an operation can depend on: its slots' ``depends_on``, then its ``links``.

        Empty for an unknown operation.
        """
        spec = self.operations.get(name)
        return () if spec is None else bindings.keys_of(spec)

    def slots_for_key(self, key: str, operation: str) -> tuple[str, ...]:
        """The slots of ``operation`` whose value may depend on record key ``key``."""
        spec = self.operations.get(operation)
        return () if spec is None else bindings.slots_reading(spec, key)

    def binds(
        self,
        key: Any,
        operation: Any,
        slot: str | None = None,
        *,
        args: Mapping[str, Any] | None = None,
    ) -> bool:
        """The paper's B(r, a, C_a): can this record support this operation (or this slot)?

        ``key`` is a record key or a record (anything with ``key`` and ``value_type``; a record
        whose type differs from the declared one does not bind: typed grounding). ``operation``
        is an operation name or an action (anything with ``tool``, ``operation`` and ``args``,
        as attributes or mapping entries), whose args are then used as ``args``.

        A key binds when it is declared and appears in a slot's ``depends_on`` (only that
        slot's, if ``slot`` is given) or in the operation's ``links``. An entry names a base
        key (matching every qualifier) or one exact qualified key. When ``args`` are known and
        the binding slot is a ``qualifier`` slot, the record's qualifier must be the slot's
        value (or one of them, for a list). Scope applicability to the task is the store's
        business, not the binding's. Unknown operations and slots bind nothing.
        """
        record_key = getattr(key, "key", key)
        if not isinstance(record_key, str):
            return False
        declared = self.key_type(record_key)
        if declared is None:
            return False
        record_type = getattr(key, "value_type", None)
        if record_type is not None and record_type != declared.value_type:
            return False  # ValueType is a str enum, so "bool" == ValueType.BOOL
        name, args = self._operation_and_args(operation, args)
        spec = self.operations.get(name) if name else None
        if spec is None:
            return False
        return bindings.binds(spec, record_key, slot, args)

    def _operation_and_args(self, operation: Any, args: Mapping[str, Any] | None) -> tuple[str | None, Any]:
        if isinstance(operation, str):
            return operation, args

        def get(field: str) -> Any:
            if isinstance(operation, Mapping):
                return operation.get(field)
            return getattr(operation, field, None)

        op_name = get("operation")
        if not isinstance(op_name, str):
            return None, args
        return self.operation_name(get("tool"), op_name), args if args is not None else get("args")

    # --- invariants ---------------------------------------------------------------------------

    def check_invariants(
        self, action: Any, state: Mapping[str, Any], *, deadline: float | None = None
    ) -> list[InvariantResult]:
        """Evaluate every invariant against one action and the resolved state.

        ``action`` is a mapping (or an Action model) with ``tool``, ``operation``, ``target``,
        ``args`` (a mapping; an empty one if absent), ``scope`` and ``risk``; ``operation`` may
        be the contract's name (``git.push``) or the tool's own (``push`` with tool ``git``),
        and invariants always see the contract's name. ``state`` maps record keys to values.

        Fail closed: if ``when`` or ``check`` cannot be evaluated (a missing key, a type error)
        or is not a bool, the invariant does not hold and ``error`` says why. Only a ``when``
        that evaluates to false makes an invariant not apply. An invariant whose ``when``
        requires other operations at its top level (``action.operation == "git.push" && ...``)
        is not evaluated at all: its ``when`` is false for this action whatever the state.

        Time bound: all evaluations of this call share ``deadline`` (a :func:`time.monotonic`
        instant; default :data:`INVARIANT_TIME_BUDGET` seconds from now). An evaluation that
        reaches it is stopped, and every invariant not evaluated by then is *unresolved*:
        ``holds`` False, ``timed_out`` True, ``error`` saying so. It never holds.
        """
        return check_all(
            self.invariants, self._compiled, action, state, operation_name=self.operation_name, deadline=deadline
        )

    def invariant_keys(self, action: Any, *, deadline: float | None = None) -> tuple[str, ...]:
        """The state keys read by the invariants that may apply to ``action``.

        An invariant may apply unless its ``when`` is false for this action whatever the state
        (evaluated with an empty state: a ``when`` that needs state counts as applying; one
        that requires another operation is not evaluated). The gate resolves exactly these
        keys before it evaluates the invariants.
        """
        keys: dict[str, None] = {}
        results = self.check_invariants(action, {}, deadline=deadline)
        for inv, result in zip(self.invariants, results, strict=True):
            if result.applies:
                keys.update(dict.fromkeys(self._compiled[inv.name].keys))
        return tuple(keys)

    def violations(
        self, action: Any, state: Mapping[str, Any], *, deadline: float | None = None
    ) -> list[InvariantResult]:
        """The invariants that do not hold (including those that could not be evaluated)."""
        return [result for result in self.check_invariants(action, state, deadline=deadline) if not result.holds]

    # --- composition -------------------------------------------------------------------------

    def extend(self, other: Contract) -> Contract:
        """A new contract: this one plus ``other``'s keys, operations, invariants and verifiers.

        Identical redefinitions are accepted; a different redefinition of a key, operation,
        verifier binding, invariant or the scopes is a ContractError in ``other``'s source.
        The result takes ``other``'s name, version and description.
        """
        parts = merge_parts(self._parts, self.source, other._parts, other.source)
        return assemble(
            name=other.name,
            version=other.version,
            description=other.description,
            source=other.source,
            bases=tuple(dict.fromkeys((*self.bases, self.name, *other.bases))),
            parts=parts,
            compiled={**self._compiled, **other._compiled},
        )


def assemble(
    *,
    name: str,
    version: int,
    description: str,
    source: str,
    bases: tuple[str, ...],
    parts: ContractParts,
    compiled: Mapping[str, CompiledInvariant] | None = None,
    validated: frozenset[str] = frozenset(),
) -> Contract:
    """The Contract of merged ``parts``, after the cross-reference checks; ContractError if one fails.

    Invariants in ``compiled`` whose spec is unchanged are reused; the others are compiled
    (lazily for the expression texts in ``validated``, which compiled when they were cached).
    """
    check_references(parts, source)
    programs: dict[str, CompiledInvariant] = {}
    seen: set[str] = set()
    for index, invariant in enumerate(parts.invariants):
        if invariant.name in seen:
            raise ContractError(
                source, f"invariants[{index}].name", f"duplicate invariant name {invariant.name!r}"
            )
        seen.add(invariant.name)
        reusable = (compiled or {}).get(invariant.name)
        if reusable is not None and reusable.spec == invariant:
            programs[invariant.name] = reusable
            continue
        programs[invariant.name] = compile_invariant(invariant, source, index, parts.state, validated)
    return Contract(
        name=name,
        version=version,
        description=description,
        source=source,
        bases=bases,
        state=types.MappingProxyType(dict(parts.state)),
        operations=types.MappingProxyType(dict(parts.operations)),
        invariants=tuple(parts.invariants),
        verifiers=types.MappingProxyType(dict(parts.verifiers)),
        scopes=parts.scopes or ScopeSources(),
        observations=tuple(parts.observations),
        memory=parts.memory or MemorySpec(),
        commands=types.MappingProxyType(dict(parts.commands)),
        secrets=_secret_rules(parts),
        _parts=parts,
        _compiled=types.MappingProxyType(programs),
    )


def _secret_rules(parts: ContractParts) -> SecretRules:
    """The contract's ``secrets:`` section as :mod:`statewise.protection` applies it."""
    spec = parts.secrets
    if spec is None:
        return SecretRules()
    return SecretRules(read=spec.read, write=spec.write, delete=spec.delete, names=tuple(spec.names),
                       exempt=tuple(spec.exempt))


def summarize(contract: Contract) -> dict[str, Any]:
    """A JSON-ready summary for ``statewise contract check FILE``."""
    inline = sum(1 for spec in contract.state.values() if isinstance(spec.verifier, VerifierSpec))
    warnings = [
        f"{key}: machine-authority key without a verifier; it can never be verified"
        for key in contract.unverifiable_keys()
    ]
    return {
        "name": contract.name,
        "version": contract.version,
        "source": contract.source,
        "extends": list(contract.bases),
        "keys": len(contract.state),
        "operations": len(contract.operations),
        "invariants": len(contract.invariants),
        "verifiers": len(contract.verifiers),
        "inline_verifiers": inline,
        "adapters": sorted(contract.adapter_names()),
        "warnings": warnings,
    }
