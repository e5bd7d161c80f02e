"""The built-in contract assembled from its part files is the contract it was as one file.

The expectation below was printed by :func:`_fingerprint` from the single-file contract
(coding.yaml, 1,879 lines, and the command catalogue) before it was split into part files, so
the split cannot have changed a rule, a name or an order. An intended change to the contract
changes these figures too: the failure prints the new ones (the memory sections changed so
once since, each change named beside its figure).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from statewise.contract import ContractError, loading
from statewise.contract.model import Contract

#: section -> (how many entries, SHA-256 of the entries as JSON, in the contract's order).
EXPECTED = {
    "header": (5, "9b53bf74621082fc666fc156c22c68a2a0b9fcb9ceec3055ef429f1d450337dc"),
    "state": (54, "4dbc259b90f648171149b26a76bb6ec90991d5a0ae60c78af4108e31def98731"),
    "operations": (45, "d616a71dfe0013cdbcc106a24b01772a76f0c3377d2fdba916312cf3cf9f44ed"),
    "invariants": (30, "3135dc92e9f33b5f59c8b456d0e57358fff3905001d7ca817cec85bd455bd5fa"),
    "verifiers": (9, "0781b95bf4bd70125300a20df2c9529ee8d7e6deceb39dfe377618b609cac240"),
    "scopes": (1, "b068ea7b86624e7a91aec4f508ca6cff0cd5ced26105b452aee8f584f7a8a4ea"),
    "observations": (9, "0acff1aad3d81f137b2893c0587b59f7333b205a1299300f5818f2005d6ca559"),
    # 19 since the memory rule module_listed_in_the_layout (issue 24, merged after the split).
    "memory rules": (19, "8686a2147cd32172c1e3c0af02042b0fc55397ae638637d8a5d14b6b3a1e88ee"),
    "memory implies": (9, "008c5f01742bf34c53a7d00ae621c6fa64f4e3b430df34d3912d8c32d095f536"),
    "memory": (1, "068e74bf96cafd9a377ea026797feb969d3e77b42e580e16512425fb596a7688"),
    "commands": (245, "e5154a10783bab478a9db037f0bb764f7ad09453d81723461fdcba8c57cad0e7"),
    "secrets": (1, "e2fd35cb719c47eb6c1b352f3b96dc35886edc20a301040697ec2bdb068a5033"),
}


def _entries(contract: Contract) -> dict[str, list[Any]]:
    def named(mapping: Any) -> list[Any]:
        return [[name, spec.model_dump(mode="json", by_alias=True)] for name, spec in mapping.items()]

    return {
        "header": [contract.name, contract.version, contract.description, contract.source, list(contract.bases)],
        "state": named(contract.state),
        "operations": named(contract.operations),
        "invariants": [invariant.model_dump(mode="json", by_alias=True) for invariant in contract.invariants],
        "verifiers": named(contract.verifiers),
        "scopes": [contract.scopes.model_dump(mode="json", by_alias=True)],
        "observations": [rule.model_dump(mode="json", by_alias=True) for rule in contract.observations],
        "memory rules": [rule.model_dump(mode="json", by_alias=True) for rule in contract.memory.rules],
        "memory implies": [rule.model_dump(mode="json", by_alias=True) for rule in contract.memory.implies],
        "memory": [contract.memory.model_dump(mode="json", by_alias=True)],
        "commands": named(contract.commands),
        "secrets": [dataclasses.asdict(contract.secrets)],
    }


def _fingerprint(contract: Contract) -> dict[str, tuple[int, str]]:
    return {
        section: (len(entries), hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest())
        for section, entries in _entries(contract).items()
    }


def test_the_built_in_contract_is_unchanged_by_its_split_into_part_files():
    parsed = loading._builtin_contract.__wrapped__("coding")  # parsed from the files (the cache is empty)
    assert _fingerprint(parsed) == EXPECTED, f"the built-in contract is now {_fingerprint(parsed)}"


def test_the_built_in_contract_from_the_cache_is_the_one_parsed_from_its_files(private_cache):
    parsed = loading._builtin_contract.__wrapped__("coding")
    assert list((private_cache / "contracts").glob("*.pickle"))  # the merged document was cached
    cached = loading._builtin_contract.__wrapped__("coding")
    assert _fingerprint(cached) == _fingerprint(parsed)
    # Every section as merged, the secrets section too (what a contract extending it inherits).
    assert cached._parts == parsed._parts


def _copy_of_the_contracts(tmp_path, monkeypatch) -> Path:
    """A copy of the built-in contracts' folder, which the loader reads instead (no cache)."""
    folder = tmp_path / "contracts"
    shutil.copytree(Path(loading.__file__).parent.parent / "contracts", folder,
                    ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    monkeypatch.setattr(loading, "_builtin_folder", lambda: folder)
    monkeypatch.setenv("STATEWISE_NO_CACHE", "1")
    loading._builtin_contract.cache_clear()
    return folder


@pytest.fixture
def contracts_copy(tmp_path, monkeypatch):
    yield _copy_of_the_contracts(tmp_path, monkeypatch)
    loading._builtin_contract.cache_clear()  # the next test loads the real files again


def test_the_built_in_contract_is_its_file_and_the_part_folders_in_order():
    assert loading.BUILTIN_PARTS == {"coding": ("coding", "catalogue")}
    files = [path for path, _ in loading.builtin_part_texts("coding")]
    assert files[:6] == ["coding/10-state.yaml", "coding/20-operations.yaml", "coding/30-commands.yaml",
                         "coding/40-invariants.yaml", "coding/50-memory.yaml", "coding/60-observations.yaml"]
    assert files[6:] == sorted(files[6:]) and len(files) == 15 and all(f.startswith("catalogue/") for f in files[6:])
    assert loading.builtin_part_texts("no-such-contract") == []


def test_a_part_that_redefines_what_another_part_declares_is_a_load_error(contracts_copy):
    (contracts_copy / "coding" / "70-clash.yaml").write_text(
        "name: clash\nversion: 1\nstate:\n  git.current_branch: {type: int, scope: workspace, authority: machine}\n")
    with pytest.raises(ContractError, match=r"coding/70-clash.yaml: state.git.current_branch: redefines state key"):
        loading._builtin_contract("coding")
    (contracts_copy / "coding" / "70-clash.yaml").write_text(
        "name: clash\nversion: 1\ninvariants:\n  - {name: no_direct_push_to_protected_branch, check: 'true', message: x}\n")
    with pytest.raises(ContractError, match=r"coding/70-clash.yaml: invariants\[0\]: redefines invariant"):
        loading._builtin_contract("coding")


def test_a_part_that_repeats_a_declaration_unchanged_adds_nothing(contracts_copy):
    state = (contracts_copy / "coding" / "10-state.yaml").read_text(encoding="utf-8")
    (contracts_copy / "coding" / "70-again.yaml").write_text(state.replace("name: coding-state", "name: again"))
    assert _fingerprint(loading._builtin_contract("coding")) == EXPECTED


def test_a_missing_part_folder_is_a_load_error_not_a_smaller_contract(contracts_copy):
    shutil.rmtree(contracts_copy / "coding")
    with pytest.raises(ContractError, match=r"statewise/contracts/coding/: cannot read the built-in contract's part"):
        loading._builtin_contract("coding")
