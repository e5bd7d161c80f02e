"""The deterministic rule planner: declarative playbooks, an agent that trusts its memory.

A playbook maps task families to ordered rules. Each rule has a ``when`` condition in CEL
over the retrieved ``state`` (key -> value; masked and removed keys are absent), the list of
``masked`` keys and the ``task`` (text, family, user, workspace, repo, branch, slug), and
either an action template or a ``stop`` reason. The first rule whose condition holds and
whose template can be filled wins. It is the offline default planner and the benchmark's
stand-in for an agent that acts on whatever its memory says.

Templates fill ``{task:branch}``, ``{param:package}`` and ``{state:project.test_command}``;
a string that is exactly one placeholder keeps the value's type (a bool stays a bool). A
placeholder with no value makes the rule inapplicable, as does a condition that cannot be
evaluated (it reads a key the context does not have). Conditions are compiled once, through
:mod:`statewise.expressions`; one naming anything but ``state``, ``masked``, ``task`` and
``param`` (or an unknown function) is a load error. Conditions may call the contract's pure
functions (``glob_match``, ``path_within``, ``path_resolve``): a record such as
``repository.protected_branches = [main, release/*]`` lists patterns, and a rule reads
``release/*`` as protecting ``release/2.4`` the way the contract's invariants do, not as a
branch literally named ``release/*``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from statewise.actions import Action
from statewise.contract.invariants import CEL_FUNCTIONS
from statewise.errors import ContractError, PlannerError
from statewise.expressions import (
    Activation,
    Expression,
    ExpressionError,
    compile_expression,
)
from statewise.planners.base import MASKED, PlanningContext, Statement, Task, read_corrections

if TYPE_CHECKING:
    from statewise.actions import Risk

__all__ = ["Playbook", "RulePlanner", "builtin_playbook", "load_playbook"]

_PLACEHOLDER = re.compile(r"\{(task|param|state):([^{}]+)\}")
# What a rule's `when` sees.
_VARIABLES = frozenset({"state", "masked", "task", "param"})


class _Missing(Exception):
    """A template placeholder without a value: the rule does not apply."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ActionTemplate(_Model):
    tool: str
    operation: str
    target: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    risk: str | None = None
    reason: str = ""


class Rule(_Model):
    when: str = "true"
    action: ActionTemplate | None = None
    stop: str | None = None

    @model_validator(mode="after")
    def _one_outcome(self) -> Rule:
        if (self.action is None) == (self.stop is None):
            raise ValueError("a rule has exactly one of 'action' or 'stop'")
        return self


class Family(_Model):
    description: str = ""
    match: tuple[str, ...] = ()
    rules: tuple[Rule, ...] = Field(min_length=1)


class Playbook(_Model):
    name: str
    families: dict[str, Family]

    def extend(self, other: Playbook) -> Playbook:
        """Add another playbook's families; a family defined in both is an error."""
        clash = sorted(set(self.families) & set(other.families))
        if clash:
            raise ContractError(other.name, f"families.{clash[0]}", f"already defined by playbook {self.name}")
        return Playbook(name=f"{self.name}+{other.name}", families={**self.families, **other.families})


def load_playbook_text(text: str, source: str) -> Playbook:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        raise ContractError(source, where, f"not valid YAML: {getattr(error, 'problem', error)}") from None
    try:
        playbook = Playbook.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise ContractError(source, ".".join(str(p) for p in first["loc"]), first["msg"]) from None
    for family_name, family in playbook.families.items():
        for index, rule in enumerate(family.rules):
            try:
                _program(rule.when)
            except ExpressionError as error:
                raise ContractError(source, f"families.{family_name}.rules[{index}].when",
                                    f"not a valid CEL expression: {error}") from None
    return playbook


def load_playbook(path: str | Path) -> Playbook:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ContractError(str(path), "", f"cannot read: {error.strerror}") from None
    return load_playbook_text(text, str(path))


@cache
def builtin_playbook(name: str = "coding") -> Playbook:
    text = resources.files("statewise.playbooks").joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    return load_playbook_text(text, f"<builtin playbook {name}>")


@cache
def _program(expression: str) -> Expression:
    """The compiled condition (compiled once per distinct text); ExpressionError if invalid."""
    return compile_expression(expression, variables=_VARIABLES, functions=CEL_FUNCTIONS)


def _slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words[:5]) or "task"


class RulePlanner:
    """Plans from playbook rules over the retrieved records. Deterministic."""

    stochastic = False

    def __init__(self, playbook: Playbook | None = None, *, name: str = "rules") -> None:
        self.playbook = playbook or builtin_playbook()
        self.name = name

    def read_feedback(self, text: str, source: str) -> tuple[Statement, ...]:
        """What the planner takes from feedback it is given (a hook's deny reason, a declined
        prompt, a session-start note): the corrections it states (``KEY was A, now B``;
        :func:`~statewise.planners.base.read_corrections`), each a statement from ``source``.
        The caller puts them in the context with :meth:`PlanningContext.told`, where they
        come before the records of the same key; the rules then read them like any record.
        General, not per case: a text that states no correction changes nothing."""
        return read_corrections(text, source)

    def family_for(self, task: Task) -> str:
        if task.family:
            if task.family not in self.playbook.families:
                raise PlannerError(self.name, f"no playbook family {task.family!r}")
            return task.family
        text = task.text.lower()
        for name, family in self.playbook.families.items():
            if any(re.search(rf"\b{re.escape(word.lower())}\b", text) for word in family.match):
                return name
        raise PlannerError(self.name, f"no playbook family matches the task {task.text!r}")

    def plan(self, task: Task, context: PlanningContext) -> Action:
        family = self.playbook.families[self.family_for(task)]
        full_state = context.state()
        state = {key: value for key, value in full_state.items() if value is not MASKED}
        masked = sorted(key for key, value in full_state.items() if value is MASKED)
        task_vars = {
            "text": task.text, "family": task.family or "", "user": task.scope.user or "",
            "workspace": task.scope.workspace or task.workspace or "", "repo": task.scope.repo or "",
            "branch": task.scope.branch or "", "slug": _slug(task.text),
        }
        activation = Activation(
            {"state": state, "masked": masked, "task": task_vars, "param": dict(task.params)},
            functions=CEL_FUNCTIONS,
        )
        read: dict[str, None] = {}  # the state keys the conditions looked at (present or not)
        for rule in family.rules:
            read.update(dict.fromkeys(_keys_named(rule.when)))
            try:
                holds = _program(rule.when).evaluate(activation)
            except ExpressionError:  # a condition over an absent key does not hold
                continue
            if holds is not True:
                continue
            if rule.stop is not None:
                try:
                    reason = _fill(rule.stop, task_vars, task.params, state)
                except _Missing:
                    continue
                read.update(dict.fromkeys(_keys_named(rule.stop)))
                return Action.stop(str(reason), scope=str(task.scope.most_specific), basis=read)
            if rule.action is None:  # the playbook model requires stop or action
                continue
            try:
                return _instantiate(rule.action, task, task_vars, state)
            except _Missing:
                continue
        raise PlannerError(self.name, f"no rule of family {self.family_for(task)!r} applies")


_KEY_LITERAL = re.compile(r"""["'{:]([A-Za-z_][\w.\-]*(?:\[[^\]"']*\])?)["'}]""")


@cache
def _keys_named(text: str) -> tuple[str, ...]:
    """Candidate state keys a condition or template names (quoted, or as ``{state:key}``).
    Dotted names only; a consumer keeps those its contract declares."""
    return tuple(name for name in _KEY_LITERAL.findall(text) if "." in name)


def _fill(template: Any, task_vars: Mapping[str, str], params: Mapping[str, str], state: Mapping[str, Any]) -> Any:
    if isinstance(template, list):
        return [_fill(item, task_vars, params, state) for item in template]
    if not isinstance(template, str):
        return template

    def value_of(kind: str, name: str) -> Any:
        source: Mapping[str, Any] = {"task": task_vars, "param": params, "state": state}[kind]
        value = source.get(name)
        if value is None or value == "":
            raise _Missing(f"{kind}:{name}")
        return value

    whole = _PLACEHOLDER.fullmatch(template)
    if whole:
        return value_of(*whole.groups())
    return _PLACEHOLDER.sub(lambda m: str(value_of(*m.groups())), template)


def _instantiate(template: ActionTemplate, task: Task, task_vars: Mapping[str, str],
                 state: Mapping[str, Any]) -> Action:
    args = {name: _fill(value, task_vars, task.params, state) for name, value in template.args.items()}
    return Action(
        tool=template.tool, operation=template.operation,
        target=_fill(template.target, task_vars, task.params, state) if template.target else None,
        args=args, scope=str(task.scope.most_specific), risk=cast("Risk | None", template.risk),
        reason=str(_fill(template.reason, task_vars, task.params, state)) if template.reason else "",
    )
