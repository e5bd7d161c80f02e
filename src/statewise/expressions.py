"""CEL expressions: the one place in StateWise that knows the CEL engine.

Contracts (invariants) and the rule planner (playbook conditions) write their conditions in
`CEL <https://github.com/google/cel-spec>`_. This module compiles and evaluates them with
``common-expression-language`` (import name ``cel``, a Rust core) behind a small facade:

* :func:`compile_expression` compiles once and checks names up front: a syntax error, a
  variable that is not one of ``variables`` (macro iteration variables such as ``p`` in
  ``list.exists(p, ...)`` are fine inside their macro), or a function that is neither a CEL
  standard function nor one of ``functions`` raises :class:`ExpressionError` (a
  :class:`ExpressionSyntaxError` or :class:`ExpressionNameError`). The engine itself would
  report unknown names only when the expression runs.
* :class:`Activation` holds the values of the variables (and the functions) for one round
  of evaluations. Building it converts the data into the engine once; evaluating many
  expressions against it is then cheap.
* :meth:`Expression.evaluate` returns a plain Python value or raises
  :class:`ExpressionError` for any evaluation failure (a missing key, a type error, a
  failing function), with a short message such as ``no such key 'git.current_branch'``.
  Evaluation is time-bounded: the engine has no cost limits and holds the GIL while it
  runs, so an expression whose estimated cost (from its comprehension nesting and the size
  of the data) is high runs in a forked child that is killed at the deadline, which raises
  :class:`ExpressionTimeout`. Cheap expressions (every built-in invariant on ordinary data)
  run in-process.

The engine is imported lazily, at the first compile or evaluation, and without the
package's ``__init__`` (which imports its command-line module and, through it,
prompt_toolkit, typer and rich: about half a second for a hook process).

Static helpers that read the expression text (through a small CEL tokenizer that knows
string literals, comments and brackets): :func:`state_keys_read` lists ``state["k"]``
reads, and :func:`equality_constraint` finds top-level conjuncts such as
``action.operation == "git.push"`` (used to skip invariants that cannot apply).
"""

from __future__ import annotations

import functools
import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statewise.errors import StateWiseError

__all__ = [
    "CEL_MACROS",
    "CEL_OPERATORS",
    "CEL_STANDARD_FUNCTIONS",
    "CEL_TYPE_NAMES",
    "DEFAULT_EVALUATION_SECONDS",
    "INLINE_COST_LIMIT",
    "Activation",
    "Expression",
    "ExpressionError",
    "ExpressionNameError",
    "ExpressionSyntaxError",
    "ExpressionTimeout",
    "compile_expression",
    "equality_constraint",
    "state_keys_read",
]

_ENGINE: Any = None
_ENGINE_LOCK = threading.Lock()


def _engine() -> Any:
    """The CEL extension module (``cel.cel``), imported on first use.

    ``import cel`` runs the package's ``__init__``, which imports ``cel.cli`` and with it
    prompt_toolkit, typer, pygments and rich. The compiled extension alone has everything
    this module uses (``compile``, ``Context``), so it is loaded directly and registered as
    ``cel.cel``; a later ``import cel`` elsewhere then reuses it (the extension cannot be
    initialized twice in one process).
    """
    global _ENGINE
    if _ENGINE is not None:
        return _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            import importlib.machinery  # noqa: PLC0415 - imports here stay off the import path
            import importlib.util  # noqa: PLC0415
            import logging  # noqa: PLC0415

            # The engine logs a warning on logger "cel" whenever a Python function raises.
            # Those errors reach the caller as ExpressionError anyway; without a handler,
            # logging's last resort would also print every one of them to stderr. An
            # application that configures logging still sees them (they propagate as usual).
            logging.getLogger("cel").addHandler(logging.NullHandler())
            module = sys.modules.get("cel.cel")
            if module is None:
                package = importlib.util.find_spec("cel")
                locations = list(package.submodule_search_locations or ()) if package else []
                spec = importlib.machinery.PathFinder.find_spec("cel.cel", locations) if locations else None
                if spec is None or spec.loader is None:
                    import cel as module  # noqa: PLC0415 - unusual layout: take the whole package
                else:
                    module = importlib.util.module_from_spec(spec)
                    sys.modules["cel.cel"] = module
                    try:
                        spec.loader.exec_module(module)
                    except BaseException:
                        sys.modules.pop("cel.cel", None)
                        raise
            _ENGINE = module
    return _ENGINE

# Functions the engine implements natively (the CEL standard library, as far as cel-rust
# provides it). A name outside this list, the caller's functions and the macros is a load
# error rather than an evaluation error on every run.
CEL_STANDARD_FUNCTIONS = frozenset(
    {
        "size", "int", "uint", "double", "string", "bytes", "type", "dyn", "duration", "timestamp",
        "matches", "contains", "startsWith", "endsWith",
        "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
        "getMilliseconds", "getMinutes", "getMonth", "getSeconds",
    }
)
# Macros are expanded by the parser; when one is used with the wrong arity the engine treats
# it as an (unknown) function call, which the name check reports.
CEL_MACROS = frozenset({"has", "all", "exists", "exists_one", "map", "filter"})
_BINDING_MACROS = CEL_MACROS - {"has"}
# The operator overloads Program.functions() reports (macro expansions add some of them).
CEL_OPERATORS = frozenset(
    {
        "!_", "-_", "_!=_", "_%_", "_&&_", "_*_", "_+_", "_-_", "_/_", "_<=_", "_<_", "_==_",
        "_>=_", "_>_", "_?_:_", "_[_]", "_||_", "@in", "@not_strictly_false",
    }
)
# Type names are identifiers in CEL (``type(x) == string``).
CEL_TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"})

_MAX_MESSAGE = 300


class ExpressionError(StateWiseError, ValueError):
    """A CEL expression could not be compiled or evaluated; the message says why."""


class ExpressionTimeout(ExpressionError):
    """Evaluation did not finish within its time bound (or could not be bounded).

    The value is unknown: callers must treat the expression as unresolved, never as true
    or false.
    """


class ExpressionSyntaxError(ExpressionError):
    """The text is not a CEL expression. ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


class ExpressionNameError(ExpressionError):
    """The expression names a variable or function the environment does not provide."""

    def __init__(self, message: str, *, name: str, kind: str) -> None:
        super().__init__(message)
        self.name = name
        self.kind = kind  # "variable", "function" or "method"


# --- tokenizer -----------------------------------------------------------------------------

_TOKEN_PATTERN = (
    r"""
      (?P<space>\s+|//[^\n]*)
    | (?P<string>
          # raw: a backslash is an ordinary character, so it cannot escape the quote
          (?P<raw>[rR][bB]?|[bB][rR])
          (?: \"\"\"(?P<rtdq>.*?)\"\"\" | '''(?P<rtsq>.*?)'''
            | "(?P<rdq>[^"\n\r]*)" | '(?P<rsq>[^'\n\r]*)' )
        | (?P<prefix>[bB])?
          (?: \"\"\"(?P<tdq>(?:[^\\]|\\.)*?)\"\"\" | '''(?P<tsq>(?:[^\\]|\\.)*?)'''
            | "(?P<dq>(?:[^"\\\n\r]|\\.)*)" | '(?P<sq>(?:[^'\\\n\r]|\\.)*)' )
      )
    | (?P<number>0[xX][0-9a-fA-F]+[uU]?|\d*\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+[uU]?)
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%<>!?:.,\[\](){}])
    | (?P<other>.)
    """
)


@functools.cache
def _token_regex() -> re.Pattern[str]:
    # Compiled at first use: a large verbose pattern, and a process that takes its contract
    # from the compiled cache may never tokenize an expression.
    return re.compile(_TOKEN_PATTERN, re.VERBOSE | re.DOTALL)

_LITERAL_WORDS = frozenset({"true", "false", "null"})


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "string", "number", "ident", "literal" (true/false/null), "op", "other"
    text: str
    value: str | None = None  # a string literal's value, when it has no escapes and is not bytes


def _tokens(text: str) -> list[_Token]:
    tokens = []
    for match in _token_regex().finditer(text):
        kind = match.lastgroup
        if kind == "space":
            continue
        if kind == "string":
            prefix = (match.group("raw") or match.group("prefix") or "").lower()
            groups = ("rtdq", "rtsq", "rdq", "rsq", "tdq", "tsq", "dq", "sq")
            body = next(match.group(g) for g in groups if match.group(g) is not None)
            simple = "b" not in prefix and ("r" in prefix or "\\" not in body)
            tokens.append(_Token("string", match.group(0), body if simple else None))
        elif kind == "ident":
            word = match.group(0)
            if word in _LITERAL_WORDS:
                tokens.append(_Token("literal", word))
            elif word == "in":
                tokens.append(_Token("op", word))
            else:
                tokens.append(_Token("ident", word))
        else:
            tokens.append(_Token(kind or "other", match.group(0)))
    return tokens


def _is(token: _Token | None, kind: str, text: str | None = None) -> bool:
    return token is not None and token.kind == kind and (text is None or token.text == text)


def _at(tokens: Sequence[_Token], index: int) -> _Token | None:
    return tokens[index] if 0 <= index < len(tokens) else None


def _opens_macro(tokens: Sequence[_Token], index: int) -> bool:
    """Whether ``tokens[index]`` is the ``(`` of ``.exists(p,`` (or all, exists_one, map, filter)."""
    return (
        _is(tokens[index], "op", "(")
        and _is(_at(tokens, index - 1), "ident")
        and tokens[index - 1].text in _BINDING_MACROS
        and _is(_at(tokens, index - 2), "op", ".")
        and _is(_at(tokens, index + 1), "ident")
        and _is(_at(tokens, index + 2), "op", ",")
    )


def _references(tokens: Sequence[_Token]) -> Iterable[tuple[str, frozenset[str]]]:
    """Each identifier used as a variable, with the macro variables bound where it occurs.

    An identifier after ``.`` is a field or method name and one before ``(`` a function
    name; neither is a variable. ``list.exists(p, ...)`` (and all, exists_one, map,
    filter) binds ``p`` inside its parentheses.
    """
    stack: list[str | None] = []  # per open bracket: the macro variable it binds, if any
    binder_positions: set[int] = set()
    for index, token in enumerate(tokens):
        if token.kind == "op" and token.text in "([{":
            binder = None
            if _opens_macro(tokens, index):
                binder = tokens[index + 1].text
                binder_positions.add(index + 1)
            stack.append(binder)
        elif token.kind == "op" and token.text in ")]}":
            if stack:
                stack.pop()
        elif token.kind == "ident" and index not in binder_positions:
            if _is(_at(tokens, index - 1), "op", ".") or _is(_at(tokens, index + 1), "op", "("):
                continue
            yield token.text, frozenset(b for b in stack if b is not None)


def _calls(tokens: Sequence[_Token], name: str) -> tuple[bool, bool]:
    """Whether ``name`` is called as a global function and whether as a method."""
    as_function = as_method = False
    for index, token in enumerate(tokens):
        if _is(token, "ident", name) and _is(_at(tokens, index + 1), "op", "("):
            if _is(_at(tokens, index - 1), "op", "."):
                as_method = True
            else:
                as_function = True
    return as_function, as_method


def state_keys_read(text: str, variable: str = "state") -> list[str]:
    """The keys an expression reads as ``state["literal"]`` (or ``state['literal']``), in order.

    Only string literals without escape sequences count; ``state`` inside other string
    literals or comments, and ``x.state[...]`` (a field), do not.
    """
    tokens = _tokens(text)
    keys: list[str] = []
    for index, token in enumerate(tokens):
        literal = _at(tokens, index + 2)
        if (
            _is(token, "ident", variable)
            and not _is(_at(tokens, index - 1), "op", ".")
            and _is(_at(tokens, index + 1), "op", "[")
            and literal is not None
            and literal.kind == "string"
            and literal.value is not None
            and _is(_at(tokens, index + 3), "op", "]")
        ):
            keys.append(literal.value)
    return keys


# --- top-level conjunctions ----------------------------------------------------------------


def _matching_close(tokens: Sequence[_Token], start: int) -> int | None:
    depth = 0
    for index in range(start, len(tokens)):
        token = tokens[index]
        if token.kind == "op" and token.text in "([{":
            depth += 1
        elif token.kind == "op" and token.text in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return None


def _unwrap(tokens: Sequence[_Token]) -> Sequence[_Token]:
    while (
        len(tokens) >= 2
        and _is(tokens[0], "op", "(")
        and _matching_close(tokens, 0) == len(tokens) - 1
    ):
        tokens = tokens[1:-1]
    return tokens


def _conjuncts(tokens: Sequence[_Token]) -> list[Sequence[_Token]] | None:
    """The operands of a top-level ``&&`` chain, or None if the top level has ``||`` or ``?:``.

    ``&&`` binds tighter than ``||`` and the conditional operator, so ``a && b || c`` and
    ``a && b ? c : d`` are not conjunctions of ``a``.
    """
    parts: list[Sequence[_Token]] = []
    depth = 0
    start = 0
    for index, token in enumerate(tokens):
        if token.kind == "op" and token.text in "([{":
            depth += 1
        elif token.kind == "op" and token.text in ")]}":
            depth -= 1
        elif depth == 0 and token.kind == "op" and token.text in ("||", "?", ":"):
            return None
        elif depth == 0 and token.kind == "op" and token.text == "&&":
            parts.append(tokens[start:index])
            start = index + 1
    if depth != 0:
        return None
    parts.append(tokens[start:])
    return parts if all(parts) else None


def _subject_length(tokens: Sequence[_Token], start: int, path: Sequence[str]) -> int | None:
    """How many tokens from ``start`` spell ``path`` (``a.b`` or ``a["b"]``), or None."""
    if not _is(_at(tokens, start), "ident", path[0]):
        return None
    index = start + 1
    for part in path[1:]:
        if _is(_at(tokens, index), "op", ".") and _is(_at(tokens, index + 1), "ident", part):
            index += 2
        elif (
            _is(_at(tokens, index), "op", "[")
            and _is(_at(tokens, index + 1), "string")
            and tokens[index + 1].value == part
            and _is(_at(tokens, index + 2), "op", "]")
        ):
            index += 3
        else:
            return None
    return index - start


def _string_list(tokens: Sequence[_Token]) -> frozenset[str] | None:
    """The values of ``["a", "b", ...]`` (every item a plain string literal), else None."""
    if len(tokens) < 2 or not _is(tokens[0], "op", "[") or not _is(tokens[-1], "op", "]"):
        return None
    items = tokens[1:-1]
    values = set()
    for index, token in enumerate(items):
        if index % 2 == 0:
            if token.kind != "string" or token.value is None:
                return None
            values.add(token.value)
        elif not _is(token, "op", ","):
            return None
    return frozenset(values)


def _comparison(tokens: Sequence[_Token], path: Sequence[str]) -> frozenset[str] | None:
    """Values for exactly ``path == "v"``, ``"v" == path`` or ``path in ["v", ...]``."""
    length = _subject_length(tokens, 0, path)
    if length is not None:
        operator = _at(tokens, length)
        rest = tokens[length + 1 :]
        if _is(operator, "op", "==") and len(rest) == 1 and _is(rest[0], "string") and rest[0].value is not None:
            return frozenset({rest[0].value})
        if _is(operator, "op", "in"):
            return _string_list(rest)
        return None
    if (
        len(tokens) >= 3
        and _is(tokens[0], "string")
        and tokens[0].value is not None
        and _is(tokens[1], "op", "==")
        and _subject_length(tokens, 2, path) == len(tokens) - 2
    ):
        return frozenset({tokens[0].value})
    return None


def _constraint(tokens: Sequence[_Token], path: Sequence[str]) -> frozenset[str] | None:
    tokens = _unwrap(tokens)
    parts = _conjuncts(tokens)
    if parts is None:
        return None
    if len(parts) == 1:
        return _comparison(tokens, path)
    found: frozenset[str] | None = None
    for part in parts:
        values = _constraint(part, path)
        if values is not None:
            found = values if found is None else found & values
    return found


def equality_constraint(text: str, path: Sequence[str]) -> frozenset[str] | None:
    """The strings ``path`` must equal for ``text`` to be true, read from its top level.

    ``text`` qualifies when it is a conjunction (``&&``, any parenthesization) one of whose
    operands is exactly ``path == "v"``, ``"v" == path`` or ``path in ["v", ...]``, with
    ``path`` such as ``("action", "operation")`` written ``action.operation`` or
    ``action["operation"]`` and plain string literals. Several such operands intersect.
    Anything else (``||`` or ``?:`` at the top level, a negation, escapes in the strings, a
    text that does not tokenize) gives None: unknown.

    Sound for a subject that evaluates to a string: if it is not in the returned set, that
    operand is false, and CEL's ``&&`` is false whenever one operand is false, even if
    another one errs. So the whole expression evaluates to false.
    """
    if not path:
        raise ValueError("equality_constraint needs a non-empty path")
    tokens = _tokens(text)
    if not tokens or any(token.kind == "other" for token in tokens):
        return None
    return _constraint(tokens, path)


# --- compiling -------------------------------------------------------------------------------

_PARSE_POSITION = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")


def _syntax_error(text: str, error: Exception) -> ExpressionSyntaxError:
    message = str(error)
    match = _PARSE_POSITION.search(message)
    if match is None:
        detail = message.removeprefix(f"Failed to parse expression {text!r}: ").strip()
        return ExpressionSyntaxError(f"syntax error: {detail}"[:_MAX_MESSAGE])
    line, column = int(match.group(1)), int(match.group(2))
    reason = match.group(3).removeprefix("Syntax error: ").split(" expecting {", 1)[0].strip()
    lines = text.splitlines() or [text]
    near = lines[line - 1].strip() if 0 < line <= len(lines) else text.strip()
    problem = f"syntax error at line {line}, column {column} of the expression, in {near!r}"
    if reason:
        problem += f": {reason}"
    return ExpressionSyntaxError(problem[:_MAX_MESSAGE], line=line, column=column)


def _describe_variables(variables: frozenset[str]) -> str:
    names = sorted(variables)
    if not names:
        return "no variables"
    if len(names) == 1:
        return f"only {names[0]}"
    return "only " + ", ".join(names[:-1]) + f" and {names[-1]}"


def _check_names(
    program: Any, tokens: Sequence[_Token], variables: frozenset[str], functions: Mapping[str, Callable[..., Any]]
) -> None:
    callable_names = CEL_STANDARD_FUNCTIONS | frozenset(functions)
    for name in program.functions():
        if name in CEL_OPERATORS or name in callable_names:
            continue
        as_function, as_method = _calls(tokens, name)
        if as_method and not as_function:
            if name in CEL_MACROS:
                problem = f"unknown method .{name}() (the {name} macro takes a variable name and an expression)"
            else:
                problem = f"unknown method .{name}()"
            raise ExpressionNameError(problem, name=name, kind="method")
        available = ", ".join(sorted(callable_names | CEL_MACROS))
        raise ExpressionNameError(
            f"unknown function {name}(); available: {available}", name=name, kind="function"
        )
    referenced = [name for name in program.variables() if name not in variables and name not in CEL_TYPE_NAMES]
    if not referenced:
        return
    # Program.variables() also lists macro iteration variables; such a name is fine only
    # where a macro binds it.
    free = {name for name, bound in _references(tokens) if name not in bound}
    binders = _macro_variables(tokens)
    for name in referenced:
        if name in free or name not in binders:
            raise ExpressionNameError(
                f"unknown variable {name!r}; expressions see {_describe_variables(variables)}",
                name=name,
                kind="variable",
            )


def _macro_variables(tokens: Sequence[_Token]) -> frozenset[str]:
    """Every name some macro binds (``p`` in ``list.exists(p, ...)``)."""
    return frozenset(
        tokens[index + 1].text for index in range(len(tokens)) if _opens_macro(tokens, index)
    )


def _check_constructs(tokens: Sequence[_Token]) -> None:
    for index, token in enumerate(tokens):
        if _is(token, "op", "{") and (_is(_at(tokens, index - 1), "ident") or _is(_at(tokens, index - 1), "literal")):
            name = tokens[index - 1].text
            raise ExpressionNameError(
                f"message construction {name}{{...}} is not supported; expressions build only lists and maps",
                name=name,
                kind="function",
            )


# --- cost and time bounds ------------------------------------------------------------------
# The engine (cel-rust through PyO3) has no cost limit, cannot be interrupted and holds the
# GIL while it runs, so neither a thread nor a signal can stop a runaway evaluation. Every
# expression therefore gets a static cost shape at compile time; with the size of the data
# at evaluation time it gives an upper estimate of the work. Cheap evaluations run in
# process; the others run in a forked child that is killed at the deadline.

#: Estimated work units (about 15-20 million a second on one core) above which an
#: evaluation runs in a forked, killable child instead of in process.
INLINE_COST_LIMIT = 1_000_000
#: The time bound of one evaluation when the caller gives no deadline.
DEFAULT_EVALUATION_SECONDS = 2.0
# Tokens whose work grows with the size of their operands (list equality, `in`, concatenation,
# conversions and function calls that walk their arguments).
_HEAVY_OPERATORS = frozenset({"==", "!=", "<", ">", "<=", ">=", "+", "in"})
# Memory a forked evaluation may add to the process before the kernel refuses it.
_CHILD_EXTRA_MEMORY = 1 << 30


@dataclass(frozen=True, slots=True)
class _CostShape:
    """Σ count · weight · literal · N^data · C^computed over the expression's tokens.

    Each token runs once per iteration of every comprehension around it. A comprehension
    over a list literal iterates its item count; over data (a variable, a field, an index)
    at most N, the largest collection in the data; over a computed list (a call, a
    concatenation, a nested map) at most C = (concatenations + 1) · max(N, longest literal).
    Heavy tokens weigh S, the size of the largest value in the data.
    """

    terms: tuple[tuple[int, bool, int, int, int], ...]  # (count, heavy, literal product, data, computed)
    concatenations: int
    longest_literal: int

    def estimate(self, largest_collection: int, largest_value: int) -> float:
        n = max(1, largest_collection)
        c = (self.concatenations + 1) * max(n, self.longest_literal, 1)
        if self.concatenations:
            n = c  # a macro variable may hold a concatenated list
        total = 0.0
        for count, heavy, literal, data, computed in self.terms:
            weight = max(1, largest_value) if heavy else 1
            total += count * weight * literal * float(n) ** data * float(c) ** computed
        return total


def _literal_items(tokens: Sequence[_Token], open_index: int, close_index: int) -> int:
    """Top-level items between a ``[``/``{`` and its matching close."""
    if close_index == open_index + 1:
        return 0
    depth = 0
    items = 1
    for token in tokens[open_index + 1 : close_index]:
        if token.kind == "op" and token.text in "([{":
            depth += 1
        elif token.kind == "op" and token.text in ")]}":
            depth -= 1
        elif depth == 0 and _is(token, "op", ","):
            items += 1
    return items


def _matching_open(tokens: Sequence[_Token], close_index: int) -> int | None:
    depth = 0
    for index in range(close_index, -1, -1):
        token = tokens[index]
        if token.kind == "op" and token.text in ")]}":
            depth += 1
        elif token.kind == "op" and token.text in "([{":
            depth -= 1
            if depth == 0:
                return index
    return None


def _receiver_range(tokens: Sequence[_Token], dot_index: int) -> tuple[str, int]:
    """What a comprehension iterates: ``("literal", n)``, ``("data", 0)`` or ``("computed", 0)``."""
    before = _at(tokens, dot_index - 1)
    if before is None:
        return "computed", 0
    if before.kind == "ident":
        return "data", 0
    if before.kind == "op" and before.text in "]}":
        opening = _matching_open(tokens, dot_index - 1)
        if opening is None:
            return "computed", 0
        previous = _at(tokens, opening - 1)
        indexed = previous is not None and (
            previous.kind in ("ident", "string") or (previous.kind == "op" and previous.text in ")]")
        )
        if before.text == "]" and indexed:
            return "data", 0  # x[...] is an element of data
        return "literal", _literal_items(tokens, opening, dot_index - 1)
    return "computed", 0


def _cost_shape(tokens: Sequence[_Token]) -> _CostShape:
    stack: list[tuple[str, int] | None] = []
    terms: dict[tuple[bool, int, int, int], int] = {}
    longest = 0
    concatenations = 0
    for index, token in enumerate(tokens):
        if token.kind == "op" and token.text in "([{":
            frame = None
            if _opens_macro(tokens, index):
                frame = _receiver_range(tokens, index - 2)
            if token.text in "[{" and not (
                token.text == "[" and _is(_at(tokens, index - 1), "ident")
            ):
                close = _matching_close(tokens, index)
                if close is not None:
                    longest = max(longest, _literal_items(tokens, index, close))
            stack.append(frame)
        elif token.kind == "op" and token.text in ")]}":
            if stack:
                stack.pop()
        if _is(token, "op", "+"):
            concatenations += 1
        literal, data, computed = 1, 0, 0
        for frame in stack:
            if frame is None:
                continue
            kind, items = frame
            if kind == "literal":
                literal *= max(1, items)
            elif kind == "data":
                data += 1
            else:
                computed += 1
        heavy = (token.kind == "op" and token.text in _HEAVY_OPERATORS) or (
            token.kind == "ident" and _is(_at(tokens, index + 1), "op", "(")
        )
        key = (heavy, literal, data, computed)
        terms[key] = terms.get(key, 0) + 1
    return _CostShape(
        terms=tuple((count, *key) for key, count in terms.items()),
        concatenations=concatenations,
        longest_literal=longest,
    )


def _data_size(values: Iterable[Any]) -> tuple[int, int]:
    """(largest collection length, size of the largest top-level value) of plain data.

    A value's size counts its nodes plus one per 64 characters of its strings and bytes.
    """
    largest_collection = 0
    largest_value = 0
    for value in values:
        size = 0
        pending = [value]
        while pending:
            item = pending.pop()
            size += 1
            if isinstance(item, (str, bytes)):
                size += len(item) // 64
            elif isinstance(item, Mapping):
                largest_collection = max(largest_collection, len(item))
                pending.extend(item.keys())
                pending.extend(item.values())
            elif isinstance(item, (list, tuple, set, frozenset)):
                largest_collection = max(largest_collection, len(item))
                pending.extend(item)
        largest_value = max(largest_value, size)
    return largest_collection, largest_value


def _limit_child_memory() -> None:
    try:
        import resource  # noqa: PLC0415 - POSIX only, and only in the forked child

        with open("/proc/self/statm", encoding="ascii") as handle:
            pages = int(handle.read().split()[0])
        limit = pages * os.sysconf("SC_PAGE_SIZE") + _CHILD_EXTRA_MEMORY
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError, ImportError):
        pass  # the deadline still bounds the child


def _run_in_child(program: Any, context: Any, seconds: float, estimate: float) -> Any:
    """Execute ``program`` in a forked child; kill it at ``seconds``. Raises ExpressionError."""
    import pickle  # noqa: PLC0415 - only evaluations too costly to run in process need these
    import select  # noqa: PLC0415
    import signal  # noqa: PLC0415
    import warnings  # noqa: PLC0415

    bound = f"{seconds:.2f}s"
    if not hasattr(os, "fork"):
        raise ExpressionTimeout(
            f"unresolved: estimated cost {estimate:.3g} is above the in-process limit and this "
            "platform cannot bound a separate evaluation"
        )
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (3.12+)
        pid = os.fork()
    if pid == 0:  # the child: evaluate, send the outcome, exit without cleanup handlers
        status = 0
        try:
            os.close(read_end)
            _limit_child_memory()
            try:
                outcome: tuple[str, Any] = ("value", program.execute(context))
            except Exception as error:  # noqa: BLE001 - reported to the parent
                outcome = ("error", _describe_evaluation_error(error))
            try:
                payload = pickle.dumps(outcome)
            except Exception:  # noqa: BLE001
                payload = pickle.dumps(("error", "the result cannot be returned from the evaluation"))
            view = memoryview(payload)
            while view:
                written = os.write(write_end, view)
                view = view[written:]
        except BaseException:  # noqa: BLE001 - never return into the parent's code
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + seconds
    finished = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _, _ = select.select([read_end], [], [], remaining)
            if not ready:
                break
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                finished = True
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        if not finished:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(pid, 0)
    if not finished:
        raise ExpressionTimeout(
            f"unresolved: evaluation stopped at its time bound ({bound}; estimated cost {estimate:.3g})"
        )
    try:
        kind, value = pickle.loads(b"".join(chunks))  # noqa: S301 - our own child's answer
    except Exception:  # noqa: BLE001 - the child died (memory limit, crash) before answering
        raise ExpressionError("the evaluation ended without an answer (out of memory or crashed)") from None
    if kind == "error":
        raise ExpressionError(value)
    return value


class Expression:
    """A compiled CEL expression. Immutable and safe to share between threads."""

    __slots__ = ("_cost", "_functions", "_program", "_source")

    def __init__(
        self, program: Any, source: str, functions: Mapping[str, Callable[..., Any]], cost: _CostShape | None = None
    ) -> None:
        self._program = program
        self._source = source
        self._functions = dict(functions)
        self._cost = cost if cost is not None else _cost_shape(_tokens(source))

    @property
    def source(self) -> str:
        """The expression's text."""
        return self._source

    def estimated_cost(self, activation: Activation | Mapping[str, Any]) -> float:
        """An upper estimate of the work of evaluating against ``activation`` (in work units)."""
        if not isinstance(activation, Activation):
            activation = Activation(activation, functions=self._functions)
        return self._cost.estimate(activation._largest_collection, activation._largest_value)

    def evaluate(
        self,
        activation: Activation | Mapping[str, Any],
        *,
        deadline: float | None = None,
        timeout: float | None = None,
    ) -> Any:
        """The value of the expression (a plain Python value) for these variables.

        ``activation`` is an :class:`Activation` (cheapest when several expressions are
        evaluated against the same values) or a mapping from variable name to value. Raises
        :class:`ExpressionError` if the expression cannot be evaluated.

        The evaluation is bounded by ``deadline`` (a :func:`time.monotonic` instant) or
        ``timeout`` seconds, whichever is sooner (default :data:`DEFAULT_EVALUATION_SECONDS`).
        An evaluation whose estimated cost is above :data:`INLINE_COST_LIMIT` runs in a
        forked child that is killed at the bound; then, or when the deadline has already
        passed, :class:`ExpressionTimeout` is raised and the value is unknown.
        """
        if not isinstance(activation, Activation):
            activation = Activation(activation, functions=self._functions)
        now = time.monotonic()
        limit = now + (DEFAULT_EVALUATION_SECONDS if timeout is None else timeout)
        if deadline is not None:
            limit = min(limit, deadline)
        seconds = limit - now
        if seconds <= 0:
            raise ExpressionTimeout("unresolved: the time bound was spent before this expression was evaluated")
        estimate = self._cost.estimate(activation._largest_collection, activation._largest_value)
        if estimate > INLINE_COST_LIMIT or not math.isfinite(estimate):
            return _run_in_child(self._program, activation._context, seconds, estimate)
        try:
            return self._program.execute(activation._context)
        except Exception as error:  # noqa: BLE001 - every engine failure becomes an ExpressionError
            raise ExpressionError(_describe_evaluation_error(error)) from None

    def __repr__(self) -> str:
        return f"Expression({self._source!r})"


#: Longest expression text accepted, so the static checks and the cost shape stay cheap.
MAX_EXPRESSION_LENGTH = 20_000


def compile_expression(
    text: str,
    *,
    variables: frozenset[str] | Iterable[str],
    functions: Mapping[str, Callable[..., Any]] | None = None,
) -> Expression:
    """Compile ``text`` once; raise :class:`ExpressionError` if it cannot work.

    ``variables`` are the names the expression may read and ``functions`` the extra
    functions it may call (Python callables that take and return plain values; raise an
    exception to signal an error). CEL's standard functions, operators, macros and type
    names are always available. Syntax errors raise :class:`ExpressionSyntaxError`; unknown
    variables, functions and methods raise :class:`ExpressionNameError`.
    """
    if not isinstance(text, str):
        raise ExpressionSyntaxError(f"an expression is a string, not a {type(text).__name__}")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise ExpressionSyntaxError(
            f"the expression is {len(text)} characters long; the limit is {MAX_EXPRESSION_LENGTH}"
        )
    allowed = frozenset(variables)
    extra = dict(functions or {})
    try:
        program = _engine().compile(text)
    except Exception as error:  # noqa: BLE001 - the engine raises ValueError; be robust to others
        raise _syntax_error(text, error) from None
    tokens = _tokens(text)
    _check_constructs(tokens)
    _check_names(program, tokens, allowed, extra)
    return Expression(program, text, extra, _cost_shape(tokens))


# --- evaluating ------------------------------------------------------------------------------

_function_failure = threading.local()


@functools.cache
def _guarded(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, remembering its last exception so the error message can quote it."""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except Exception as error:
            _function_failure.last = (name, error)
            raise

    return call


class Activation:
    """The variables (and functions) for evaluating expressions; build once, evaluate many.

    Values are plain Python data: None, bool, int, float, str, bytes, lists/tuples and
    mappings of them (also datetime and timedelta). Anything else raises
    :class:`ExpressionError`.
    """

    __slots__ = ("_context", "_largest_collection", "_largest_value")

    def __init__(
        self,
        variables: Mapping[str, Any],
        *,
        functions: Mapping[str, Callable[..., Any]] | None = None,
    ) -> None:
        context = _engine().Context()
        for name, function in (functions or {}).items():
            context.add_function(name, _guarded(name, function))
        for name, value in variables.items():
            try:
                context.add_variable(name, value)
            except Exception as error:  # noqa: BLE001 - conversion failures are ValueError today
                raise ExpressionError(f"{name} cannot be passed to CEL: {_first_sentence(str(error))}") from None
        self._context = context
        self._largest_collection, self._largest_value = _data_size(variables.values())


def _first_sentence(message: str) -> str:
    message = message.strip()
    head = message.split(". ", 1)[0].rstrip(".")
    return head[:1].lower() + head[1:] if head else message


_FUNCTION_ERROR = re.compile(r"^Function '([^']+)' error: (.*)$", re.DOTALL)


def _describe_evaluation_error(error: Exception) -> str:
    if isinstance(error, KeyError):
        key = error.args[0] if error.args else "?"
        return f"no such key {key!r}"[:_MAX_MESSAGE]
    message = str(error)
    match = _FUNCTION_ERROR.match(message)
    if match is not None:
        name, detail = match.groups()
        failure = getattr(_function_failure, "last", None)
        if failure is not None and failure[0] == name:
            _function_failure.last = None
            cause = failure[1]
            text = str(cause) or type(cause).__name__
            if not isinstance(cause, (ValueError, TypeError)):
                text = f"{type(cause).__name__}: {text}"
            return text[:_MAX_MESSAGE]
        detail = detail.removeprefix("Python function call failed: ")
        detail = detail.removesuffix(". Check function arguments and their types.")
        return f"{name}(): {detail}"[:_MAX_MESSAGE]
    text = _first_sentence(message) or type(error).__name__
    if not isinstance(error, (TypeError, IndexError, ZeroDivisionError, OverflowError, RuntimeError, ValueError)):
        text = f"{type(error).__name__}: {text}"
    return text[:_MAX_MESSAGE]
