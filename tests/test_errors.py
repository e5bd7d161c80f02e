"""Every public exception is in the StateWiseError tree, and the tree in errors.py draws it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from functools import cache

import pytest

import statewise
from statewise import errors
from statewise.errors import InputError, StateWiseError

#: Public exceptions allowed outside the tree, with the reason. Empty: add one only with a
#: reason a reviewer would accept (e.g. a class that must derive from a third party's base).
ALLOWED_OUTSIDE: dict[str, str] = {}

#: Modules that cannot be imported for the walk, with the reason.
SKIPPED_MODULES = {
    "statewise.__main__": "runs the CLI when imported",
    "statewise.cli.__main__": "runs the CLI when imported",
}


@cache  # importing every module once is enough for every test here
def _public_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(statewise.__path__, "statewise."):
        if info.name in SKIPPED_MODULES:
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__
                    and not name.startswith("_")):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_the_walk_finds_exceptions_in_every_layer() -> None:
    # Guards the walk itself: if it stopped descending into subpackages it would pass vacuously.
    modules = {name.rpartition(".")[0] for name in _public_exceptions()}
    assert {"statewise.errors", "statewise.contract.patterns", "statewise.expressions", "statewise.verifiers.runner",
            "statewise.bench.sandbox"} <= modules


def test_every_public_exception_derives_from_statewise_error() -> None:
    outside = sorted(name for name, cls in _public_exceptions().items()
                     if not issubclass(cls, StateWiseError) and name not in ALLOWED_OUTSIDE)
    assert outside == []


def test_every_allowed_exception_has_a_reason_and_still_exists() -> None:
    found = _public_exceptions()
    for name, reason in ALLOWED_OUTSIDE.items():
        assert name in found, f"{name} is allowed outside the tree but no longer exists"
        assert len(reason) > 20


def test_the_docstring_draws_every_exception_in_the_tree() -> None:
    tree = errors.__doc__ or ""
    drawn = set(re.findall(r"[├└]── (\w+)", tree)) | {"StateWiseError"}
    public = {cls.__name__ for cls in _public_exceptions().values() if issubclass(cls, StateWiseError)}
    assert public - drawn == set(), "exceptions missing from the tree in errors.py"
    assert drawn - public == set(), "the tree in errors.py names exceptions that do not exist"


def test_the_docstring_draws_each_class_under_its_real_parent() -> None:
    # Each drawn line's indentation says its parent; the class's first StateWiseError base must match.
    tree = (errors.__doc__ or "").split("::", 1)[1]
    classes = {cls.__name__: cls for cls in _public_exceptions().values()}
    stack: list[tuple[int, str]] = [(-1, "StateWiseError")]
    checked = 0
    for line in tree.splitlines():
        match = re.search(r"[├└]── (\w+)", line)
        if not match:
            continue
        depth = match.start()
        while stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1]
        cls = classes[match.group(1)]
        tree_bases = [b.__name__ for b in cls.__bases__ if issubclass(b, StateWiseError)]
        assert tree_bases == [parent], f"{cls.__name__} is drawn under {parent} but derives from {tree_bases}"
        stack.append((depth, match.group(1)))
        checked += 1
    assert checked == len(classes) - 1


@pytest.mark.parametrize(("dotted", "builtin"), [
    ("statewise.contract.RegexTimeout", TimeoutError),
    ("statewise.execute.UnsupportedAction", ValueError),
    ("statewise.expressions.ExpressionError", ValueError),
    ("statewise.expressions.ExpressionTimeout", ValueError),
    ("statewise.verifiers.base.VerifierArgumentError", ValueError),
    ("statewise.verifiers.local_protection.ConfigGarbage", ValueError),
    ("statewise.verifiers.runner.PlaceholderError", ValueError),
    ("statewise.verifiers.runner.UnsafeValueError", ValueError),
    ("statewise.bench.executor.UnsupportedByBench", RuntimeError),
    ("statewise.bench.sandbox.SandboxError", RuntimeError),
    ("statewise.errors.RecordNotFoundError", LookupError),
    ("statewise.errors.InputError", ValueError),
])
def test_moved_exceptions_keep_the_builtin_base_their_callers_catch(dotted: str, builtin: type) -> None:
    module, _, name = dotted.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, StateWiseError)
    assert issubclass(cls, builtin)


def test_a_placeholder_error_is_caught_as_a_statewise_error_and_as_a_value_error() -> None:
    from statewise.verifiers.runner import PlaceholderError

    error = PlaceholderError("branch", "git.upstream")
    for catcher in (StateWiseError, ValueError):
        with pytest.raises(catcher):
            raise error
    assert "branch" in str(error)


def test_an_unknown_plugin_is_an_input_error_naming_the_known_ones() -> None:
    from statewise.registry import UnknownPluginError  # re-exported where plugins are looked up

    error = UnknownPluginError("planner", "nope", ["anthropic", "rules"])
    assert isinstance(error, InputError)
    assert str(error) == "unknown planner 'nope'; known: anthropic, rules"
