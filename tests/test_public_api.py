"""The package's front door: what ``import statewise`` offers, and what it costs."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import statewise
from statewise import errors


def test_exported_members() -> None:
    # The public surface, pinned: adding or removing a name is a decision, so it changes this list.
    assert statewise.__all__ == [
        "Action",
        "ActiveRecordExistsError",
        "Authority",
        "ConflictError",
        "Contract",
        "ContractError",
        "Decision",
        "Evidence",
        "GroundingError",
        "Guard",
        "GuardConfig",
        "ImportFormatError",
        "InputError",
        "InputTooLargeError",
        "KeyNameError",
        "MissingExtraError",
        "PlannerError",
        "Provenance",
        "Record",
        "RecordDraft",
        "RecordNotFoundError",
        "RecordStatus",
        "Retrieval",
        "SchemaVersionError",
        "Scope",
        "ScopeError",
        "ScopeLevel",
        "SourceKind",
        "StaleVersionError",
        "StateWise",
        "StateWiseError",
        "Store",
        "StoreCorruptError",
        "StoreError",
        "StoreLockedError",
        "StoreUnavailableError",
        "Task",
        "TaskScope",
        "TransitionError",
        "UnknownPluginError",
        "ValueType",
        "ValueTypeError",
        "Verdict",
        "load_contract",
        "open_store",
        "__version__",
    ]


def test_every_export_resolves_to_the_object_its_module_defines() -> None:
    # Same as httpx's test: each public name is the real object, and says it belongs to statewise.
    for name in statewise.__all__:
        value = getattr(statewise, name)
        if name == "__version__":
            assert isinstance(value, str)
            continue
        module = importlib.import_module(statewise._EXPORTS[name])
        assert getattr(module, name) is value
        assert value.__module__.startswith("statewise.")


def test_the_front_door_names_the_facade_the_guard_and_the_store() -> None:
    from statewise.api import StateWise
    from statewise.contract import load_contract
    from statewise.pipeline.guard import Guard, GuardConfig
    from statewise.store import open_store

    assert statewise.StateWise is StateWise
    assert statewise.Guard is Guard
    assert statewise.GuardConfig is GuardConfig
    assert statewise.open_store is open_store
    assert statewise.load_contract is load_contract


def test_every_error_of_the_errors_module_is_exported() -> None:
    exported = {name for name in statewise.__all__ if name.endswith("Error")}
    assert exported == set(errors.__all__)
    for name in exported:
        assert issubclass(getattr(statewise, name), errors.StateWiseError)


def test_star_import_and_dir_offer_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from statewise import *", namespace)
    assert {name for name in namespace if name != "__builtins__"} == set(statewise.__all__)
    assert set(statewise.__all__) <= set(dir(statewise))


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    try:
        statewise.NoSuchThing  # noqa: B018 - the look-up itself is under test
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("statewise.NoSuchThing did not raise")


def test_the_type_checking_imports_match_the_lazy_table() -> None:
    # Type checkers and IDEs read the TYPE_CHECKING block; the runtime reads _EXPORTS. They must agree.
    tree = ast.parse(Path(inspect.getfile(statewise)).read_text())
    block = next(node for node in tree.body
                 if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    imported = {alias.name: node.module for node in block.body if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert imported == statewise._EXPORTS


def test_import_statewise_imports_nothing_heavy() -> None:
    # The hook's front door imports the package; pydantic and the rest must wait until a name is used.
    code = ("import sys, statewise\n"
            "heavy = sorted(m for m in sys.modules if m.partition('.')[0] in "
            "{'pydantic', 'yaml', 'click', 'rich', 'mcp', 'tree_sitter', 'celpy', 'cel', 'regex'} "
            "or (m.startswith('statewise.') and m != 'statewise'))\n"
            "print(','.join(heavy))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == ""


def test_using_a_name_imports_its_module_then() -> None:
    code = ("import sys, statewise\n"
            "assert 'pydantic' not in sys.modules\n"
            "statewise.Record\n"
            "print('pydantic' in sys.modules, 'statewise.records' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split() == ["True", "True"]


def test_import_time_lists_no_pydantic() -> None:
    # The same promise, read from the interpreter's own import log (-X importtime goes to stderr).
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import statewise"],
                            capture_output=True, text=True, timeout=60, check=True)
    imported = [line.rpartition("|")[2].strip() for line in result.stderr.splitlines() if "|" in line]
    assert "statewise" in imported
    assert not [name for name in imported if name.startswith("pydantic")]
