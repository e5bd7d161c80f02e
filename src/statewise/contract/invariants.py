"""Invariants: CEL rules over ``action`` and ``state``, compiled lazily and evaluated fail-closed.

Expressions are compiled and evaluated by :mod:`statewise.expressions` (the only module that
knows the CEL engine). This module supplies the contract's variables and functions, the
static analysis the gate uses (which keys an invariant reads, which operations it applies
to), and the evaluation of every invariant of a contract under one shared deadline.
"""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
import os
import posixpath
import threading
import time
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel

from statewise.contract.spec import InvariantSpec, StateSpec
from statewise.errors import ContractError
from statewise.expressions import (
    Activation,
    Expression,
    ExpressionError,
    ExpressionTimeout,
    compile_expression,
    equality_constraint,
    state_keys_read,
)
from statewise.records import base_key

#: Seconds all invariant evaluations of one check_invariants call may take together, when
#: the caller gives no deadline of its own.
INVARIANT_TIME_BUDGET = 3.0


def _cel_path_within(path: Any, root: Any) -> bool:
    """path_within(path, root): both absolute; true when path is root or below it (lexically)."""
    if not isinstance(path, str) or not isinstance(root, str):
        raise TypeError("path_within(path, root) needs two strings")
    if not path.startswith("/") or not root.startswith("/"):
        raise ValueError(f"path_within needs absolute paths; got {path!r} and {root!r}")
    inner, outer = posixpath.normpath(path), posixpath.normpath(root)
    return outer == "/" or inner == outer or inner.startswith(outer + "/")


def _cel_path_resolve(base: Any, path: Any) -> str:
    """path_resolve(base, path): ``path`` made absolute against ``base`` and normalized."""
    if not isinstance(base, str) or not isinstance(path, str):
        raise TypeError("path_resolve(base, path) needs two strings")
    if not base.startswith("/"):
        raise ValueError(f"path_resolve needs an absolute base; got {base!r}")
    if not path:
        raise ValueError("path_resolve got an empty path")
    joined = path if path.startswith("/") else posixpath.join(base, path)
    return posixpath.normpath(joined)


def _cel_glob_match(text: Any, pattern: Any) -> bool:
    """glob_match(text, pattern): shell-style match (``*``, ``?``, ``[...]``; ``*`` crosses ``/``)."""
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise TypeError("glob_match(text, pattern) needs two strings")
    return fnmatch.fnmatchcase(text, pattern)


CEL_FUNCTIONS = types.MappingProxyType(
    {
        "path_within": _cel_path_within,
        "path_resolve": _cel_path_resolve,
        "glob_match": _cel_glob_match,
    }
)
CEL_VARIABLES = frozenset({"action", "state"})
# The path the operation pre-filter looks for in an invariant's `when`.
_OPERATION_PATH = ("action", "operation")


class LazyExpression:
    """A CEL expression compiled at its first use.

    A contract read from the compiled cache was validated (every expression compiled) when
    the cache entry was written, so its expressions are compiled only when an invariant is
    first evaluated: a hook that never evaluates one never imports the CEL engine. A
    compile failure then (a different engine build) is an evaluation error: the invariant
    does not hold.
    """

    __slots__ = ("_expression", "_lock", "text")

    def __init__(self, text: str, expression: Expression | None = None) -> None:
        self.text = text
        self._expression = expression
        self._lock = threading.Lock()

    def get(self) -> Expression:
        if self._expression is None:
            with self._lock:
                if self._expression is None:
                    self._expression = compile_expression(
                        self.text, variables=CEL_VARIABLES, functions=CEL_FUNCTIONS
                    )
        return self._expression


@dataclass(frozen=True, slots=True)
class CompiledInvariant:
    """An invariant with its expressions (compiled at first use) and what static analysis found."""

    spec: InvariantSpec
    when: LazyExpression
    check: LazyExpression
    # The operations `when` requires at its top level (`action.operation == "x" && ...`), or
    # None if it requires none: for any other operation `when` is false without evaluating.
    operations: frozenset[str] | None
    keys: tuple[str, ...]  # the state keys read as state["k"] in when and check


# What the static readers found in an expression's text, memoized: filled from the compiled
# cache so that a process that loads from it never runs the tokenizer.
TEXT_ANALYSIS: dict[str, tuple[tuple[str, ...], frozenset[str] | None]] = {}


def analysis(text: str) -> tuple[tuple[str, ...], frozenset[str] | None]:
    """(the state keys ``text`` reads, the operations it requires at its top level)."""
    found = TEXT_ANALYSIS.get(text)
    if found is None:
        found = (tuple(state_keys_read(text)), equality_constraint(text, _OPERATION_PATH))
        TEXT_ANALYSIS[text] = found
    return found


def _compile_cel(
    text: str, source: str, field: str, declared: Mapping[str, StateSpec], *, validated: bool = False
) -> LazyExpression:
    expression = None
    if not validated:
        try:
            expression = compile_expression(text, variables=CEL_VARIABLES, functions=CEL_FUNCTIONS)
        except ExpressionError as error:
            raise ContractError(source, field, f"not a valid CEL expression: {error}") from None
    # A misspelt key would be missing at every evaluation, so the rule would block every
    # action it applies to; say so now instead.
    for key in analysis(text)[0]:
        spec = declared.get(base_key(key))
        if spec is None:
            raise ContractError(
                source, field, f"reads state[{key!r}], which is not a key declared under state"
            )
        if spec.qualified != ("[" in key):
            need = "needs a [qualifier]" if spec.qualified else "is not qualified: true"
            raise ContractError(source, field, f"reads state[{key!r}], but {base_key(key)} {need}")
    return LazyExpression(text, expression)


def compile_invariant(
    invariant: InvariantSpec,
    source: str,
    index: int,
    declared: Mapping[str, StateSpec],
    validated: frozenset[str] = frozenset(),
) -> CompiledInvariant:
    """``invariant`` (the ``index``-th of ``source``) compiled; ContractError naming the field if an
    expression does not compile or reads a key ``declared`` lacks. Texts in ``validated`` compiled
    before (the cache) and compile at first use instead."""
    when = _compile_cel(invariant.when, source, f"invariants[{index}].when", declared,
                        validated=invariant.when in validated)
    check = _compile_cel(invariant.check, source, f"invariants[{index}].check", declared,
                         validated=invariant.check in validated)
    keys = analysis(invariant.when)[0] + analysis(invariant.check)[0]
    return CompiledInvariant(
        spec=invariant,
        when=when,
        check=check,
        operations=analysis(invariant.when)[1],
        keys=tuple(dict.fromkeys(keys)),
    )


class _NotRepresentable(TypeError):
    pass


_INT64 = (-(2**63), 2**63 - 1)


def to_cel_data(value: Any, where: str) -> Any:
    """Plain JSON-like data for CEL; enums, paths, tuples and sets are unwrapped."""
    if value is None or isinstance(value, (bool, str, float)):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, int):
        number = value.value if isinstance(value, enum.Enum) else value
        if not _INT64[0] <= number <= _INT64[1]:
            raise _NotRepresentable(f"{where} is an int outside CEL's 64-bit range")
        return number
    if isinstance(value, enum.Enum):
        return to_cel_data(value.value, where)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): to_cel_data(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_cel_data(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        return sorted(to_cel_data(v, where) for v in value)
    raise _NotRepresentable(f"{where} is a {type(value).__name__}, which invariants cannot read")


def action_data(action: Any) -> Mapping[str, Any]:
    """The action as a mapping (a mapping as is, a pydantic model or a dataclass dumped)."""
    if isinstance(action, Mapping):
        return action
    if isinstance(action, BaseModel):
        return action.model_dump(mode="json")
    if dataclasses.is_dataclass(action) and not isinstance(action, type):
        return dataclasses.asdict(action)
    raise TypeError(f"action must be a mapping or an Action model, not {type(action).__name__}")


@dataclass(frozen=True, slots=True)
class InvariantResult:
    """The outcome of one invariant for one action.

    ``holds`` is False when the check evaluated to false *or* could not be evaluated (fail
    closed); ``error`` then carries the evaluation error and the result is *unresolved*.
    That includes an evaluation stopped at its time bound (``timed_out``): its value is
    unknown, so the invariant never holds. ``applies`` is False when ``when`` evaluated to
    false, in which case ``holds`` is True.
    """

    name: str
    holds: bool
    message: str
    error: str | None = None
    applies: bool = True
    timed_out: bool = False

    @property
    def unresolved(self) -> bool:
        """True when the invariant could not be evaluated (an error or the time bound)."""
        return self.error is not None


def check_all(
    invariants: tuple[InvariantSpec, ...],
    compiled: Mapping[str, CompiledInvariant],
    action: Any,
    state: Mapping[str, Any],
    *,
    operation_name: Callable[[str | None, str], str | None],
    deadline: float | None = None,
) -> list[InvariantResult]:
    """Evaluate ``invariants`` (compiled as ``compiled``) against one action and the state.

    ``operation_name`` maps the action's tool and operation to the contract's name for it,
    which is what invariants see. The semantics are those of :meth:`Contract.check_invariants`.
    """
    if deadline is None:
        deadline = time.monotonic() + INVARIANT_TIME_BUDGET
    try:
        action_map = dict(action_data(action))
        name = operation_name(action_map.get("tool"), str(action_map.get("operation", "")))
        if name is not None:
            action_map["operation"] = name
        action_map.setdefault("args", {})
        action_cel = to_cel_data(action_map, "action")
        state_cel = to_cel_data(dict(state), "state")
    except (TypeError, ValueError) as error:
        # Nothing can be evaluated, so nothing holds.
        return _input_failures(invariants, str(error))
    operation = action_cel.get("operation")
    known_operation = isinstance(operation, str)
    activation: Activation | None = None
    results: list[InvariantResult] = []
    for invariant in invariants:
        program = compiled[invariant.name]
        if known_operation and program.operations is not None and operation not in program.operations:
            results.append(
                InvariantResult(name=invariant.name, holds=True, message=invariant.message, applies=False)
            )
            continue
        if activation is None:
            try:
                activation = Activation({"action": action_cel, "state": state_cel}, functions=CEL_FUNCTIONS)
            except ExpressionError as error:
                return _input_failures(invariants, str(error))
        results.append(_evaluate(program, activation, deadline))
    return results


def _input_failures(invariants: tuple[InvariantSpec, ...], problem: str) -> list[InvariantResult]:
    return [
        InvariantResult(name=inv.name, holds=False, message=inv.message, error=f"input: {problem}")
        for inv in invariants
    ]


def _evaluate(compiled: CompiledInvariant, activation: Activation, deadline: float) -> InvariantResult:
    spec = compiled.spec

    def run(expression: LazyExpression, part: str) -> tuple[bool | None, str | None, bool]:
        try:
            result = expression.get().evaluate(activation, deadline=deadline, timeout=INVARIANT_TIME_BUDGET)
        except ExpressionTimeout as error:
            return None, f"{part}: {error}", True
        except ExpressionError as error:
            return None, f"{part}: {error}", False
        if isinstance(result, bool):
            return result, None, False
        return None, f"{part}: evaluated to {result!r}, not a bool"[:300], False

    applies, error, timed_out = run(compiled.when, "when")
    if error is not None:
        return InvariantResult(name=spec.name, holds=False, message=spec.message, error=error,
                               timed_out=timed_out)
    if not applies:
        return InvariantResult(name=spec.name, holds=True, message=spec.message, applies=False)
    holds, error, timed_out = run(compiled.check, "check")
    return InvariantResult(
        name=spec.name, holds=bool(holds) and error is None, message=spec.message, error=error,
        timed_out=timed_out,
    )
