"""Cross-reference checks that need the whole (merged) contract.

Each model validates its own fields; what one section says about another (a verifier
binding a key names, the keys a slot depends on, the operation a command rule maps to, the
type of an observation's value) is checked here, after ``extends:`` is merged.
"""

from __future__ import annotations

from statewise.contract.commands import CommandRule
from statewise.contract.merge import ContractParts
from statewise.contract.observations import MemorySpec
from statewise.contract.readings import READINGS
from statewise.errors import ContractError
from statewise.records import base_key, check_key
from statewise.values import ValueType, check_value


def check_references(parts: ContractParts, source: str) -> None:
    """Cross-reference checks that need the whole (merged) contract."""
    if parts.memory is not None:
        _check_memory_references(parts, parts.memory, source)
    for index, rule in enumerate(parts.observations):
        spec = parts.state.get(base_key(rule.key))
        if spec is None:
            raise ContractError(source, f"observations[{index}].key",
                                f"{rule.key!r} is not a key declared under state")
        if rule.value is not None:
            try:
                check_value(rule.value, spec.value_type, choices=spec.choices, key=rule.key)
            except ValueError as error:
                raise ContractError(source, f"observations[{index}].value", str(error)) from None
    for key, spec in parts.state.items():
        where = f"state.{key}"
        _check_choices(spec.value_type, spec.choices, source, where)
        verifier = spec.verifier
        if isinstance(verifier, str):
            if verifier not in parts.verifiers:
                defined = ", ".join(sorted(parts.verifiers)) or "none"
                raise ContractError(
                    source,
                    f"{where}.verifier",
                    f"refers to undefined verifier binding {verifier!r} (defined: {defined}); "
                    "define it under verifiers, or write an inline {adapter: ..., args: ...}",
                )
            verifier = parts.verifiers[verifier]
        if verifier is not None:
            if "qualifier" in verifier.placeholders() and not spec.qualified:
                raise ContractError(
                    source, f"{where}.verifier", "uses {qualifier} but the key is not qualified: true"
                )
            if verifier.read is not None and verifier.read.exit_status is not None:
                for code, value in verifier.read.exit_status.items():
                    try:
                        check_value(value, spec.value_type, choices=spec.choices, key=key)
                    except ValueError as error:
                        raise ContractError(
                            source, f"{where}.verifier", f"exit status {code} maps to a bad value: {error}"
                        ) from None
    for op_name, op in parts.operations.items():
        for slot_name, slot in op.slots.items():
            where = f"operations.{op_name}.slots.{slot_name}"
            _check_choices(slot.value_type, slot.choices, source, where)
            for index, entry in enumerate(slot.depends_on):
                _check_key_reference(parts, entry, source, f"{where}.depends_on[{index}]")
            if slot.qualifier:
                qualified = [e for e in slot.depends_on if "[" not in e and parts.state[e].qualified]
                if not qualified:
                    raise ContractError(
                        source,
                        f"{where}.qualifier",
                        "true, but the slot depends on no qualified key to qualify",
                    )
        for index, entry in enumerate(op.links):
            _check_key_reference(parts, entry, source, f"operations.{op_name}.links[{index}]")
    for rule_name, command in parts.commands.items():
        where = f"commands.{rule_name}"
        _check_command_kind(command, source, where)
        if command.read_only:
            if command.operation is not None or command.slot_names():
                raise ContractError(source, f"{where}.read_only", "a read-only rule names no operation and no slots")
            continue
        if command.operation is None:
            raise ContractError(source, f"{where}.operation", "required (unless read_only is true)")
        target = parts.operations.get(command.operation)
        if target is None:
            raise ContractError(source, f"{where}.operation",
                                f"{command.operation!r} is not an operation declared under operations")
        for field_name, filled in command.slot_names():
            if filled not in target.slots:
                declared = ", ".join(sorted(target.slots)) or "none"
                raise ContractError(source, f"{where}.{field_name}",
                                    f"{filled!r} is not a slot of {command.operation} (declared: {declared})")
        for flag in command.flags:
            if not flag.startswith("-") or flag in ("-", "--") or "=" in flag:
                raise ContractError(source, f"{where}.flags.{flag}", "a flag starts with - and holds no =")


_PROGRAM_FIELDS = ("subcommand", "options", "anywhere", "unless", "when_any", "read_only", "flags", "positionals",
                   "rest", "env")


def _check_command_kind(command: CommandRule, source: str, where: str) -> None:
    """A rule names a program or a reading, not both; a reading rule reads only its reading's facts."""
    if (command.program is None) == (command.reading is None):
        raise ContractError(source, where, "a command rule names either a program or a reading")
    if command.program is not None:
        if command.when:
            raise ContractError(source, f"{where}.when", "only a reading rule has when (a program rule: when_any)")
        return
    reading = READINGS.get(command.reading or "")
    if reading is None:
        known = ", ".join(sorted(READINGS))
        raise ContractError(source, f"{where}.reading", f"{command.reading!r} is not a reading (readings: {known})")
    for name in _PROGRAM_FIELDS:
        if name in command.model_fields_set:
            raise ContractError(source, f"{where}.{name}", "a reading rule matches facts, not words: use when")
    for fact in command.when:
        if fact not in reading.facts:
            raise ContractError(source, f"{where}.when.{fact}",
                                f"{command.reading} has no fact {fact!r} (facts: {', '.join(reading.facts)})")
    if command.operation is None:
        raise ContractError(source, f"{where}.operation", "required for a reading rule")


def _check_memory_references(parts: ContractParts, memory: MemorySpec, source: str) -> None:
    entries = [(f"memory.rules[{i}]", r.key, r.value) for i, r in enumerate(memory.rules)]
    entries += [(f"memory.implies[{i}]", r.key, r.value) for i, r in enumerate(memory.implies)]
    if memory.note_key is not None:
        entries.append(("memory.note_key", memory.note_key, None))
    entries += [(f"memory.corrections.{key}", key, None) for key in memory.corrections]
    for where, key, value in entries:
        spec = parts.state.get(base_key(key))
        if spec is None:
            raise ContractError(source, f"{where}.key", f"{key!r} is not a key declared under state")
        if value is not None:
            try:
                check_value(value, spec.value_type, choices=spec.choices, key=key)
            except ValueError as error:
                raise ContractError(source, f"{where}.value", str(error)) from None


def _check_choices(value_type: ValueType, choices: tuple[str, ...] | None, source: str, where: str) -> None:
    field = f"{where}.choices"
    if value_type is ValueType.ENUM and not choices:
        raise ContractError(source, field, "required when type is enum (a non-empty list of strings)")
    if value_type is not ValueType.ENUM and choices is not None:
        raise ContractError(source, field, f"only allowed when type is enum (type is {value_type})")
    if choices is not None and len(set(choices)) != len(choices):
        raise ContractError(source, field, "choices must be unique")


def _check_key_reference(parts: ContractParts, entry: str, source: str, field: str) -> None:
    spec = parts.state.get(base_key(entry))
    if spec is None:
        raise ContractError(source, field, f"{entry!r} is not a key declared under state")
    if "[" in entry:
        try:
            check_key(entry)
        except ValueError:
            raise ContractError(source, field, f"{entry!r} is not a valid key") from None
        if not spec.qualified:
            raise ContractError(
                source, field, f"{entry!r} has a qualifier but {base_key(entry)} is not qualified: true"
            )
