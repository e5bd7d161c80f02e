"""The compiled-contract cache and the contract module's start-up cost: lazy imports, keys that cover
the text and the code, damaged or foreign entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from statewise.contract import (
    Risk,
    cache_directory,
    load_contract_text,
    summarize,
)
from tests.contract.helpers import PROTECTED_CHECK, SMALL, contract_error, small_with

# --- start-up cost: lazy imports and the compiled cache -------------------------------------

HEAVY_MODULES = ("cel", "cel.cel", "cel.cli", "prompt_toolkit", "typer", "yaml", "regex")


def _fresh_process(code: str, env: dict[str, str]) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object."""
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_")}
    env.update(values)
    return env


LOADED = f"sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules)"


def test_importing_the_contract_module_imports_no_cel_yaml_or_regex(private_cache) -> None:
    found = _fresh_process(f"import json, sys, statewise.contract; print(json.dumps({LOADED}))", _env())
    assert found == []


def test_a_warm_builtin_contract_parses_nothing_and_the_engine_loads_without_its_cli(private_cache) -> None:
    env = _env(STATEWISE_CACHE_DIR=str(private_cache))
    code = (
        "import json, sys, statewise.contract as c\n"
        "contract = c.builtin_contract()\n"
        f"before = {LOADED}\n"
        "results = contract.check_invariants({'tool': 'git', 'operation': 'push',"
        " 'args': {'branch': 'main', 'force': True}}, {'repository.protected': True})\n"
        f"after = {LOADED}\n"
        "print(json.dumps({'before': before, 'after': after, 'summary': c.summarize(contract),"
        " 'held': sorted(r.name for r in results if r.applies and r.holds),"
        " 'failed': sorted(r.name for r in results if not r.holds)}))"
    )
    cold = _fresh_process(code, env)
    entries = list((private_cache / "contracts").glob("*.pickle"))
    assert len(entries) == 1
    assert "yaml" in cold["before"]  # the first process parsed the text and wrote the entry
    warm = _fresh_process(code, env)
    assert warm["before"] == []  # neither YAML, nor the CEL engine, nor regex
    assert warm["after"] == ["cel.cel"]  # the engine, at the first evaluation, without cel.cli
    assert warm["summary"] == cold["summary"]
    assert warm["failed"] == cold["failed"] and warm["held"] == cold["held"]
    assert warm["failed"]  # a force push to a protected main breaks an invariant


def test_the_cache_directory_follows_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("STATEWISE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_directory() == tmp_path / "xdg" / "statewise"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_directory() == tmp_path / "home" / ".cache" / "statewise"
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_directory() == tmp_path / "mine"
    monkeypatch.setenv("STATEWISE_NO_CACHE", "1")
    assert cache_directory() is None


def test_no_cache_writes_nothing(private_cache, monkeypatch) -> None:
    monkeypatch.setenv("STATEWISE_NO_CACHE", "1")
    assert load_contract_text(SMALL, "small.yaml").name == "small"
    assert not private_cache.exists()


def test_a_cache_entry_is_keyed_by_the_text_and_reused(private_cache) -> None:
    first = load_contract_text(SMALL, "small.yaml")
    entries = sorted((private_cache / "contracts").glob("*.pickle"))
    assert len(entries) == 1
    again = load_contract_text(SMALL, "other-name.yaml")  # from the entry, under its own source
    assert again.source == "other-name.yaml" and summarize(again)["keys"] == summarize(first)["keys"]
    changed = small_with("ttl: 1d", "ttl: 2d")
    assert load_contract_text(changed, "small.yaml").state["repository.protected"].ttl_seconds == 2 * 86400
    assert len(list((private_cache / "contracts").glob("*.pickle"))) == 2
    assert not list((private_cache / "contracts").glob(".tmp-*"))  # written atomically, nothing left over


def test_an_invalid_contract_is_never_cached(private_cache) -> None:
    contract_error(small_with(PROTECTED_CHECK, "check: 'state[\"repository.protected\"] =='"))
    assert not list((private_cache / "contracts").glob("*.pickle")) if (private_cache / "contracts").exists() else True


def _only_entry(private_cache: Path) -> Path:
    (entry,) = (private_cache / "contracts").glob("*.pickle")
    return entry


@pytest.mark.parametrize("damage", ["truncate", "flip_payload_byte", "garbage", "empty", "directory"])
def test_a_damaged_cache_entry_falls_back_to_parsing(private_cache, damage) -> None:
    expected = summarize(load_contract_text(SMALL, "small.yaml"))
    entry = _only_entry(private_cache)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flip_payload_byte":
        entry.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    elif damage == "garbage":
        entry.write_bytes(os.urandom(len(data)))
    elif damage == "empty":
        entry.write_bytes(b"")
    else:
        entry.unlink()
        entry.mkdir()
    assert summarize(load_contract_text(SMALL, "small.yaml")) == expected


def test_an_entry_for_another_text_is_never_used(private_cache) -> None:
    load_contract_text(SMALL, "small.yaml")
    small_entry = _only_entry(private_cache)
    changed = small_with("risk: high", "risk: critical")
    load_contract_text(changed, "changed.yaml")
    changed_entry = next(p for p in (private_cache / "contracts").glob("*.pickle") if p != small_entry)
    # Put SMALL's (valid, digest-correct) entry under the changed text's name.
    changed_entry.write_bytes(small_entry.read_bytes())
    assert load_contract_text(changed, "changed.yaml").operations["git.push"].risk is Risk.CRITICAL


def test_an_unwritable_cache_directory_only_costs_time(private_cache, tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(blocker / "cache"))
    assert load_contract_text(SMALL, "small.yaml").name == "small"


def test_a_cached_contract_still_checks_its_expressions_against_the_merged_keys(private_cache) -> None:
    extension = textwrap.dedent(
        """\
        extends: coding
        name: acme
        version: 1
        invariants:
          - name: reads_a_coding_key
            when: action.operation == "git.push"
            check: '!state["repository.protected"]'
            message: from the base contract
        """
    )
    load_contract_text(extension, "acme.yaml")
    again = load_contract_text(extension, "acme.yaml")  # from the cache: compiled lazily
    result = {r.name: r for r in again.check_invariants({"tool": "git", "operation": "push"},
                                                         {"repository.protected": True})}
    assert result["reads_a_coding_key"].holds is False and result["reads_a_coding_key"].error is None



def test_the_cache_key_covers_the_code_that_pickled_the_entry(monkeypatch):
    # A development checkout changes the models without changing __version__: an entry pickled
    # by other code must never be read back.
    from statewise.contract import cache

    before = cache.cache_key("name: x\n")
    monkeypatch.setattr(cache, "_code_identity", lambda: "other code")
    assert cache.cache_key("name: x\n") != before


def test_the_cache_key_hashes_every_module_of_the_contract_package():
    import pkgutil

    import statewise.contract
    from statewise.contract import cache

    hashed = {(path.parent.name, path.stem) for path in cache.code_files()}
    modules = {info.name for info in pkgutil.iter_modules(statewise.contract.__path__)}
    assert len(modules) > 10  # the walk itself found the package's modules
    assert {("contract", name) for name in modules} | {("contract", "__init__")} <= hashed
    assert {("statewise", name) for name in ("expressions", "records", "scopes", "values")} <= hashed


def test_changing_any_module_of_the_contract_package_invalidates_the_cache(tmp_path, private_cache):
    # A copy of the package, imported by fresh interpreters: the first writes an entry, the second
    # (same code) reads it, and after one of the modules changes the third must parse again.
    import shutil

    import statewise

    copy = tmp_path / "src" / "statewise"
    shutil.copytree(Path(statewise.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = _env(STATEWISE_CACHE_DIR=str(private_cache), PYTHONPATH=str(copy.parent), PYTHONDONTWRITEBYTECODE="1")
    code = (
        "import json, sys, statewise, statewise.contract as c\n"
        "c.builtin_contract()\n"
        "print(json.dumps({'file': statewise.__file__, 'parsed': 'yaml' in sys.modules}))"
    )
    entries = private_cache / "contracts"
    first = _fresh_process(code, env)
    assert first["file"] == str(copy / "__init__.py") and first["parsed"]
    assert len(list(entries.glob("*.pickle"))) == 1
    assert _fresh_process(code, env)["parsed"] is False  # the entry is used
    for module in ("bindings.py", "spec.py"):  # not the cache's own module, and a model module
        path = copy / "contract" / module
        path.write_text(path.read_text() + "\n# changed\n")
        assert _fresh_process(code, env)["parsed"] is True
    assert len(list(entries.glob("*.pickle"))) == 3


