"""Verifier bindings: which adapter observes a key, with which arguments (``verifiers:``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Discriminator,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    Tag,
    field_validator,
    model_validator,
)

from statewise.contract.argv import shell_string_problem
from statewise.contract.fields import ArgValue, NonEmptyStr, Scalar, SpecModel, _FieldProblem, named
from statewise.contract.patterns import contract_regex
from statewise.contract.templates import ARG_PLACEHOLDERS, render_template, template_fields

#: The generic declarative verifier: runs an argv and reads the value from its result.
COMMAND_ADAPTER = "command"
#: The longest timeout a binding may give (seconds).
MAX_TIMEOUT_SECONDS = 600


_JSON_PATH = re.compile(r'^\$(\.[A-Za-z_][A-Za-z0-9_-]*|\[\d+\]|\["[^"]*"\])+$')


class ReadSpec(SpecModel):
    """How the ``command`` adapter turns a finished command into a value. Exactly one is set.

    ``exit_status`` maps exit codes to values; ``regex`` is searched in the output (multi-line
    mode) and its single group is the value; ``json_path`` (``$.a.b``, ``$.a[0]``,
    ``$.a["@types/node"]``) selects a value from the output parsed as JSON.
    """

    exit_status: dict[StrictInt, Scalar] | None = None
    regex: NonEmptyStr | None = None
    json_path: NonEmptyStr | None = None

    @field_validator("exit_status")
    @classmethod
    def _some_codes(cls, value: dict[int, Any] | None) -> dict[int, Any] | None:
        if value is not None and not value:
            raise ValueError("map at least one exit code to a value")
        return value

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is None:
            return None
        compiled = contract_regex(value, multiline=True)
        if compiled.groups != 1:
            raise ValueError(
                f"the pattern must have exactly one capturing group (the value); it has {compiled.groups}"
            )
        return value

    @field_validator("json_path")
    @classmethod
    def _simple_path(cls, value: str | None) -> str | None:
        if value is None:
            return None
        template_fields(value, ARG_PLACEHOLDERS)
        opaque = re.sub(r"\{[a-z]+\}", "x", value)
        if not _JSON_PATH.match(opaque):
            raise ValueError(
                f"{value!r} is not a simple JSON path; expected $ followed by .name, [index] "
                'or ["key"] steps, e.g. $.engines.node'
            )
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> ReadSpec:
        given = [name for name in ("exit_status", "regex", "json_path") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of exit_status, regex or json_path"
                + (f" (got {', '.join(given)})" if given else "")
            )
        return self

    @property
    def kind(self) -> str:
        return next(name for name in ("exit_status", "regex", "json_path") if getattr(self, name) is not None)


def _reject_shell_string(value: Any) -> Any:
    if isinstance(value, str):
        raise ValueError(
            f"argv must be a list of strings, never a shell command line; write e.g. "
            f"{value.split()!r} instead of {value!r}"
        )
    return value


class VerifierSpec(SpecModel):
    """A verifier binding: which adapter observes a key, with which arguments.

    The ``command`` adapter is the generic declarative verifier: it runs ``argv`` (a list,
    never a shell string) in ``cwd`` with a timeout and reads the value as ``read`` says.
    Every other adapter takes ``args``; argument strings may contain the placeholders in
    :data:`ARG_PLACEHOLDERS`.
    """

    adapter: Annotated[StrictStr, named("adapter")]
    args: dict[StrictStr, ArgValue] = Field(default_factory=dict)
    timeout: Annotated[StrictInt | StrictFloat, Field(gt=0, le=MAX_TIMEOUT_SECONDS)] = 10
    argv: Annotated[tuple[StrictStr, ...] | None, BeforeValidator(_reject_shell_string)] = None
    cwd: StrictStr | None = None
    stream: Literal["stdout", "stderr"] | None = None
    read: ReadSpec | None = None

    @field_validator("args")
    @classmethod
    def _arg_placeholders(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name, argument in value.items():
            for item in argument if isinstance(argument, tuple) else (argument,):
                if isinstance(item, str):
                    try:
                        template_fields(item, ARG_PLACEHOLDERS)
                    except ValueError as error:
                        raise _FieldProblem(name, str(error)) from None
        return value

    @field_validator("argv")
    @classmethod
    def _argv_is_a_program(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value or not value[0].strip():
            raise ValueError("argv needs at least the program name")
        program = value[0]
        if any(ch.isspace() for ch in program):
            raise ValueError(
                f"argv[0] {program!r} contains whitespace: that is a shell command line, not a program; "
                "split it into a list"
            )
        if "{" in program:
            raise ValueError("argv[0] must be a fixed program name, not a placeholder")
        problem = shell_string_problem(value)
        if problem is not None:
            raise ValueError(problem)
        for item in value[1:]:
            template_fields(item, ARG_PLACEHOLDERS)
        return value

    @field_validator("cwd")
    @classmethod
    def _cwd(cls, value: str | None) -> str | None:
        if value is None or value == "workspace":
            return value
        template_fields(value, ARG_PLACEHOLDERS)
        if not (value.startswith("/") or value.startswith("{workspace}")):
            raise ValueError(
                f"cwd must be 'workspace', an absolute path, or a path under {{workspace}}; got {value!r}"
            )
        return value

    @model_validator(mode="after")
    def _command_rules(self) -> VerifierSpec:
        if self.adapter == COMMAND_ADAPTER:
            if self.argv is None:
                raise _FieldProblem("argv", "required for adapter command (a non-empty list of strings)")
            if self.read is None:
                raise _FieldProblem(
                    "read", "required for adapter command: one of exit_status, regex, json_path"
                )
            if self.args:
                raise _FieldProblem("args", "adapter command takes argv, not args")
        else:
            for field in ("argv", "cwd", "stream", "read"):
                if getattr(self, field) is not None:
                    raise _FieldProblem(
                        field, f"only adapter command takes {field}; adapter {self.adapter} takes args"
                    )
        return self

    @property
    def working_directory(self) -> str | None:
        """For the command adapter: where it runs (``workspace`` unless ``cwd`` says otherwise)."""
        if self.adapter != COMMAND_ADAPTER:
            return None
        return self.cwd or "workspace"

    def placeholders(self) -> set[str]:
        """Every placeholder this binding uses."""
        texts: list[str] = []
        for argument in self.args.values():
            items = argument if isinstance(argument, tuple) else (argument,)
            texts.extend(item for item in items if isinstance(item, str))
        texts.extend(self.argv or ())
        texts.extend(t for t in (self.cwd, self.read.json_path if self.read else None) if t)
        return {name for text in texts for name in template_fields(text, ARG_PLACEHOLDERS)}


def _verifier_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "<binding name>"
    if isinstance(value, (Mapping, VerifierSpec)):
        return "<inline verifier>"
    return None


VerifierRef = Annotated[
    Annotated[Annotated[StrictStr, named("binding")], Tag("<binding name>")]
    | Annotated[VerifierSpec, Tag("<inline verifier>")],
    Discriminator(
        _verifier_tag,
        custom_error_type="verifier_reference",
        custom_error_message="expected the name of a verifier binding or an inline {adapter: ..., args: ...}",
    ),
]
DISCRIMINATOR_TAGS = frozenset({"<binding name>", "<inline verifier>"})


def render_verifier(spec: VerifierSpec, values: Mapping[str, str]) -> VerifierSpec:
    """``spec`` with every placeholder in args, argv, cwd and json_path filled from ``values``.

    Raises KeyError if a placeholder the spec uses has no value. The verifier registry calls
    this with the task's ``branch``, ``repo``, ``workspace``, ``user`` and the key's
    ``qualifier``; values are substituted as whole strings, never re-parsed by a shell.
    """

    def fill(item: Any) -> Any:
        return render_template(item, values) if isinstance(item, str) else item

    updates: dict[str, Any] = {
        "args": {
            name: tuple(fill(i) for i in value) if isinstance(value, tuple) else fill(value)
            for name, value in spec.args.items()
        }
    }
    if spec.argv is not None:
        updates["argv"] = (spec.argv[0],) + tuple(fill(item) for item in spec.argv[1:])
    if spec.cwd is not None and spec.cwd != "workspace":
        updates["cwd"] = fill(spec.cwd)
    if spec.read is not None and spec.read.json_path is not None:
        updates["read"] = spec.read.model_copy(update={"json_path": fill(spec.read.json_path)})
    return spec.model_copy(update=updates)
