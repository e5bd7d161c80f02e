"""Bindings: which record keys an operation, or one of its slots, depends on (the paper's B(r, a, C_a))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statewise.contract.spec import OperationSpec, SlotSpec
from statewise.records import base_key


def entry_matches(entry: str, key: str) -> bool:
    """Whether a ``depends_on``/``links`` entry names record key ``key``.

    A base key (``python.package_version``) matches every qualifier of it; a qualified entry
    (``python.package_version[requests]``) matches that exact key only.
    """
    return entry == key or ("[" not in entry and base_key(key) == entry)


def slot_binds(name: str, slot: SlotSpec, key: str, args: Mapping[str, Any] | None) -> bool:
    """Whether slot ``name`` depends on ``key``; a ``qualifier`` slot also needs its value
    (when ``args`` are known) to be the key's qualifier, or one of them for a list."""
    if not any(entry_matches(entry, key) for entry in slot.depends_on):
        return False
    if not slot.qualifier or args is None or "[" not in key:
        return True
    qualifier = key[len(base_key(key)) + 1 : -1]
    value = args.get(name)
    if isinstance(value, (list, tuple)):
        return qualifier in [str(v) for v in value]
    return value is not None and str(value) == qualifier


def keys_of(operation: OperationSpec) -> tuple[str, ...]:
    """The state keys ``operation`` can depend on: its slots' ``depends_on``, then its ``links``."""
    keys: dict[str, None] = {}
    for slot in operation.slots.values():
        keys.update(dict.fromkeys(slot.depends_on))
    keys.update(dict.fromkeys(operation.links))
    return tuple(keys)


def slots_reading(operation: OperationSpec, key: str) -> tuple[str, ...]:
    """The slots of ``operation`` whose value may depend on record key ``key``."""
    return tuple(
        name for name, slot in operation.slots.items() if any(entry_matches(e, key) for e in slot.depends_on)
    )


def binds(operation: OperationSpec, key: str, slot: str | None, args: Mapping[str, Any] | None) -> bool:
    """Whether declared record key ``key`` binds to ``operation`` (only to ``slot``, if given).

    See :meth:`statewise.contract.Contract.binds`, which checks the key's declaration and type first.
    """
    if slot is not None:
        slot_spec = operation.slots.get(slot)
        return slot_spec is not None and slot_binds(slot, slot_spec, key, args)
    if any(slot_binds(n, s, key, args) for n, s in operation.slots.items()):
        return True
    return any(entry_matches(entry, key) for entry in operation.links)
