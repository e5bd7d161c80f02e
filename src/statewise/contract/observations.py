"""What finished shell commands (``observations:``) and memory files (``memory:``) reveal."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, StrictBool, StrictInt, StrictStr, model_validator

from statewise.contract.fields import NonEmptyStr, SpecModel, named
from statewise.contract.patterns import compiles
from statewise.contract.verifier_spec import VerifierSpec


class ObservationRule(SpecModel):
    """A fact a finished shell command reveals: when the command matches ``command`` and its
    output matches ``output``, ``key`` takes ``value`` (or the ``value`` group of ``output``).

    Named groups of both patterns fill ``{name}`` placeholders in ``key`` (a qualifier); a
    ``branch`` group places a branch-level fact on that branch.
    """

    name: Annotated[StrictStr, named("invariant")]
    description: StrictStr = ""
    command: Annotated[NonEmptyStr, AfterValidator(compiles)]
    output: Annotated[NonEmptyStr, AfterValidator(compiles)]
    key: NonEmptyStr
    value: StrictBool | StrictInt | StrictStr | list[StrictStr] | None = None


class MemoryRule(SpecModel):
    """One extraction rule of the ``memory:`` section: a pattern bound to a record key.

    ``line`` matches a whole line of a memory file; ``code`` matches each code span and each
    line of a fenced block; ``heading`` (optional) limits the rule to lines under a heading
    that matches it. The ``value`` named group (or the fixed ``value``) is the record's
    value; other named groups fill ``{placeholders}`` in ``key`` (a ``branch`` group places
    a branch-level fact on that branch). ``unless`` (optional) vetoes the rule on a line it
    matches: a negated or example sentence states no fact. See docs/memory.md.
    """

    name: Annotated[StrictStr, named("invariant")]
    description: StrictStr = ""
    heading: Annotated[NonEmptyStr, AfterValidator(compiles)] | None = None
    line: Annotated[NonEmptyStr, AfterValidator(compiles)] | None = None
    code: Annotated[NonEmptyStr, AfterValidator(compiles)] | None = None
    unless: Annotated[NonEmptyStr, AfterValidator(compiles)] | None = None
    key: NonEmptyStr
    value: StrictBool | StrictInt | StrictStr | list[StrictStr] | None = None

    @model_validator(mode="after")
    def _one_pattern(self) -> MemoryRule:
        if (self.line is None) == (self.code is None):
            raise ValueError("a memory rule needs exactly one of line or code")
        return self


class MemoryImplication(SpecModel):
    """What a command in a memory file claims about the workspace: when the command matches
    ``command``, ``key`` (its named groups filled in) should have ``value``.

    ``may_be_binary``: the command may also run a dependency's binary (``pnpm tsc`` runs the
    script ``tsc`` if there is one, else the binary), so a name the manifest lacks is wrong
    only with evidence: the manifest declared it when the memory file was added."""

    name: Annotated[StrictStr, named("invariant")]
    description: StrictStr = ""
    command: Annotated[NonEmptyStr, AfterValidator(compiles)]
    key: NonEmptyStr
    value: StrictBool | StrictInt | StrictStr | list[StrictStr]
    may_be_binary: StrictBool = False


class MemorySpec(SpecModel):
    """How agents' memory files (CLAUDE.md, AGENTS.md, GEMINI.md, ...) become records."""

    rules: tuple[MemoryRule, ...] = ()
    implies: tuple[MemoryImplication, ...] = ()
    note_key: NonEmptyStr | None = None  # where a line that no rule types is kept, as text
    # A verifier that proposes the correct value when a memory fact of that key is found
    # defective (e.g. the test command the repository itself declares).
    corrections: dict[StrictStr, VerifierSpec] = Field(default_factory=dict)
