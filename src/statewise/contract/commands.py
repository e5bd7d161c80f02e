"""Declarative shell-command rules (``commands:``): a command line the normalizer maps to an operation."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictStr

from statewise.contract.fields import NonEmptyStr, Scalar, SpecModel, enum_parser, named
from statewise.contract.risk import Risk


class CommandFlag(SpecModel):
    """One option a declared command accepts (``commands.<rule>.flags``).

    ``value: true``: the option takes a value (``-var-file x`` or ``-var-file=x``). ``slot``:
    the operation slot it fills (the value, or ``true`` for a flag without one); ``repeat:
    true`` collects every occurrence into a list. An option with no slot is accepted and
    recorded nowhere.
    """

    value: StrictBool = False
    slot: StrictStr | None = None
    repeat: StrictBool = False


class CommandRule(SpecModel):
    """A declarative shell-command rule: a command line the normalizer maps to an operation.

    ``program`` is a bare program name (matched on the basename of what runs:
    ``terraform``, ``/usr/bin/terraform``) or a path with a ``/`` (``./deploy.sh``), which is
    relative to the workspace and matched on the resolved file. ``subcommand`` lists the words
    that must follow the program, in order. ``flags`` are the only options accepted (any
    other option leaves the command unresolved). ``positionals`` name the slots the remaining
    arguments fill, in order (more arguments than names: unresolved; ``rest`` names a list
    slot that takes the surplus instead). ``env`` maps environment variables the command sees
    to slots; ``slots`` gives fixed slot values. ``risk`` overrides the operation's risk.

    For tools whose options do not change what is affected (test runners, migration tools):
    ``options: any`` accepts options the rule does not declare (a declared one still fills its
    slot), and the subcommand is then matched on the words that are not options. A subcommand
    word may list alternatives (``upgrade|downgrade``) and end in ``*`` (``db:*``);
    ``anywhere: true`` matches a one-word subcommand at any such position (``goose postgres
    dsn up``). ``unless`` lists subcommands that make the rule not apply (``db:version``),
    ``when_any`` words of which one must be present. ``read_only: true`` (with no operation)
    declares the matched command read-only: it yields no action.

    A rule with ``reading`` instead of ``program`` maps what a built-in reader reports
    (:data:`statewise.contract.readings.READINGS`: ``git.push`` with ``remote``, ``branch``,
    ``force`` ...) to ``operation``; its facts become the action's slots, with ``slots`` added.
    ``when`` restricts it to readings whose facts match (a value, a list of values, or a string
    with ``|`` alternatives and a trailing ``*``). Every rule that matches a reading yields its
    action: a contract's rule adds an operation beside the built-in one, never replaces it.
    A rule for a program the normalizer reads itself (``git``, ``npm``) adds its operation
    beside that reading the same way.
    """

    program: NonEmptyStr | None = None
    reading: NonEmptyStr | None = None
    when: dict[NonEmptyStr, Scalar | tuple[Scalar, ...]] = Field(default_factory=dict)
    subcommand: tuple[NonEmptyStr, ...] = ()
    operation: Annotated[StrictStr, named("operation")] | None = None
    options: Literal["declared", "any"] = "declared"
    anywhere: StrictBool = False
    unless: tuple[tuple[NonEmptyStr, ...], ...] = ()
    when_any: tuple[NonEmptyStr, ...] = ()
    read_only: StrictBool = False
    flags: dict[NonEmptyStr, CommandFlag] = Field(default_factory=dict)
    positionals: tuple[StrictStr, ...] = ()
    rest: StrictStr | None = None
    env: dict[NonEmptyStr, StrictStr] = Field(default_factory=dict)
    slots: dict[StrictStr, Scalar] = Field(default_factory=dict)
    risk: Annotated[Risk, enum_parser(Risk)] | None = None
    description: StrictStr = ""

    def slot_names(self) -> list[tuple[str, str]]:
        """Every slot the rule fills, with where it is named (for the contract's checks)."""
        filled = [(f"flags.{flag}.slot", spec.slot) for flag, spec in self.flags.items() if spec.slot]
        filled += [(f"positionals[{i}]", slot) for i, slot in enumerate(self.positionals)]
        filled += [("rest", self.rest)] if self.rest else []
        filled += [(f"env.{var}", slot) for var, slot in self.env.items()]
        filled += [(f"slots.{slot}", slot) for slot in self.slots]
        return [(where, slot) for where, slot in filled if slot is not None]
