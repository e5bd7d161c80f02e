"""run_verifier / verify_key: the registry, placeholders, and never failing open."""

from __future__ import annotations

import json
import time
import tomllib
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from statewise.contract import VerifierSpec, builtin_contract
from statewise.scopes import TaskScope
from statewise.values import ValueType
from statewise.verifiers import (
    VERIFIERS,
    Observation,
    ObservationStatus,
    PlaceholderError,
    VerifierRequest,
    fill_placeholders,
    install_branch_protection,
    run_verifier,
    verify_key,
)
from statewise.verifiers.base import Verifier
from statewise.workspace import derive_task_scope
from tests.verifiers.helpers import Repo, observe, private_env, shim

OBSERVED, ABSENT, UNAVAILABLE = ObservationStatus.OBSERVED, ObservationStatus.ABSENT, ObservationStatus.UNAVAILABLE
ROOT = Path(__file__).resolve().parents[2]


def _declared_entry_points() -> dict[str, str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return pyproject["project"]["entry-points"]["statewise.verifiers"]


# --- the registry ---------------------------------------------------------------------------------


def test_builtins_are_registered_through_entry_points_like_a_plugin():
    declared = _declared_entry_points()
    installed = {ep.name: ep.value for ep in entry_points(group="statewise.verifiers")}
    stale = {name: value for name, value in declared.items() if installed.get(name) != value}
    assert stale == {}, "the installed metadata is stale: run pip install -e ."
    for name in declared:
        adapter = VERIFIERS.get(name)
        assert isinstance(adapter, type)
        instance = adapter()
        assert isinstance(instance, Verifier)
        assert instance.name == name


def test_every_adapter_the_coding_contract_uses_is_registered():
    contract = builtin_contract("coding")
    missing = sorted(set(contract.adapter_names()) - set(VERIFIERS.names()))
    assert missing == []
    assert len(contract.adapter_names()) >= 15


@pytest.fixture
def plugin_names() -> Iterator[list[str]]:
    """Names registered by a test through VERIFIERS.register; removed afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        VERIFIERS._loaded.pop(name, None)


def _request(tmp_path: Path, value_type: str = "string", timeout: float = 5, **args) -> VerifierRequest:
    return VerifierRequest(
        key="test.key",
        qualifier=None,
        value_type=ValueType(value_type),
        choices=None,
        args=args,
        workspace=tmp_path,
        task=TaskScope(workspace=str(tmp_path)),
        timeout=timeout,
    )


def test_a_third_party_adapter_registered_in_code(tmp_path: Path, plugin_names: list[str]):
    @VERIFIERS.register("acme.answer")
    class Answer:
        name = "acme.answer"

        def observe(self, request: VerifierRequest) -> Observation:
            return Observation.of(int(request.args["n"]) * 2, "doubled")

    plugin_names.append("acme.answer")
    seen = run_verifier(VerifierSpec(adapter="acme.answer"), _request(tmp_path, "int", n=21))
    assert seen.status is OBSERVED
    assert seen.value == 42
    assert seen.elapsed > 0


def test_unknown_adapter_is_unavailable(tmp_path: Path):
    seen = run_verifier(VerifierSpec(adapter="acme.nothing"), _request(tmp_path))
    assert seen.status is UNAVAILABLE
    assert "unknown verifier 'acme.nothing'" in seen.detail


def test_exceptions_bad_answers_and_bad_types_are_unavailable(tmp_path: Path, plugin_names: list[str]):
    class Raises:
        name = "acme.raises"

        def observe(self, request: VerifierRequest) -> Observation:
            raise RuntimeError("kaboom")

    class Lies:
        name = "acme.lies"

        def observe(self, request: VerifierRequest) -> object:
            return "true"

    class WrongType:
        name = "acme.wrong"

        def observe(self, request: VerifierRequest) -> Observation:
            return Observation.of("Python 3.11.7", "unparsed")

    class Exits:
        name = "acme.exits"

        def observe(self, request: VerifierRequest) -> Observation:
            raise SystemExit(3)

    for cls in (Raises, Lies, WrongType, Exits):
        VERIFIERS.register(cls.name)(cls)
        plugin_names.append(cls.name)
    raised = run_verifier(VerifierSpec(adapter="acme.raises"), _request(tmp_path))
    assert raised.status is UNAVAILABLE
    assert "RuntimeError: kaboom" in raised.detail
    lied = run_verifier(VerifierSpec(adapter="acme.lies"), _request(tmp_path, "bool"))
    assert lied.status is UNAVAILABLE
    assert "not an Observation" in lied.detail
    wrong = run_verifier(VerifierSpec(adapter="acme.wrong"), _request(tmp_path, "version"))
    assert wrong.status is UNAVAILABLE
    assert wrong.value is None
    assert "wrong type" in wrong.detail
    exited = run_verifier(VerifierSpec(adapter="acme.exits"), _request(tmp_path))
    assert exited.status is UNAVAILABLE


def test_an_adapter_that_never_answers_is_unavailable(tmp_path: Path, plugin_names: list[str]):
    class Sleeps:
        name = "acme.sleeps"

        def observe(self, request: VerifierRequest) -> Observation:
            time.sleep(10)
            return Observation.of("late", "too late")

    VERIFIERS.register("acme.sleeps")(Sleeps)
    plugin_names.append("acme.sleeps")
    started = time.monotonic()
    seen = run_verifier(VerifierSpec(adapter="acme.sleeps"), _request(tmp_path, timeout=0.2))
    assert seen.status is UNAVAILABLE
    assert "did not answer within 0.2s" in seen.detail
    assert time.monotonic() - started < 3.0


def test_bad_requests_are_unavailable(tmp_path: Path):
    assert (
        run_verifier(VerifierSpec(adapter="env.var"), _request(tmp_path, timeout=0, name="HOME")).status is UNAVAILABLE
    )
    unknown_arg = observe("env.var", tmp_path, value_type="string", args={"name": "HOME", "nmae": "x"})
    assert unknown_arg.status is UNAVAILABLE
    assert "unknown argument(s) nmae" in unknown_arg.detail
    missing_arg = run_verifier(VerifierSpec(adapter="env.var"), _request(tmp_path))
    assert missing_arg.status is UNAVAILABLE
    # A command spec whose args were not built with fill_placeholders.
    spec = VerifierSpec.model_validate({"adapter": "command", "argv": ["true"], "read": {"exit_status": {0: True}}})
    assert run_verifier(spec, _request(tmp_path, "bool")).status is UNAVAILABLE


def test_observation_values_of_the_wrong_type_are_never_observed(tmp_path: Path):
    env = private_env(COUNT="many")
    seen = observe("env.var", tmp_path, value_type="int", args={"name": "COUNT"}, env=env)
    assert seen.status is UNAVAILABLE
    assert "wrong type" in seen.detail
    enum = observe("env.var", tmp_path, value_type="enum", choices=("a", "b"), args={"name": "COUNT"}, env=env)
    assert enum.status is UNAVAILABLE


def test_fill_placeholders_requires_every_used_value():
    spec = VerifierSpec(adapter="git.branch_protection", args={"workspace": "{workspace}", "branch": "{branch}"})
    assert fill_placeholders(spec, workspace="/ws", branch="main", repo=None, user=None, qualifier=None) == {
        "workspace": "/ws",
        "branch": "main",
    }
    with pytest.raises(PlaceholderError, match="task has no branch"):
        fill_placeholders(spec, workspace="/ws", branch=None, repo=None, user=None, qualifier=None)


# --- verify_key with the built-in contract ------------------------------------------------------------


def test_verify_key_observes_contract_keys(repo: Repo, tmp_path: Path):
    contract = builtin_contract("coding")
    (repo.work / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    (repo.work / "requirements.txt").write_text("requests\n", encoding="utf-8")  # a bare pyproject names no manager
    task = derive_task_scope(repo.work)
    shims = tmp_path / "shims"
    listing = {"dependencies": {"left-pad": {"version": "1.3.0"}}}
    shim(shims, "npm", f"cat <<'EOF'\n{json.dumps(listing)}\nEOF")
    env = private_env(shims, DEPLOY_ENV="staging")
    expected = {
        "git.current_branch": "main",
        "git.default_branch": "main",
        "git.remotes": ["origin"],
        "git.remote_url[origin]": str(repo.origin),
        "git.upstream": "origin/main",
        "git.branch_exists[feature]": True,
        "git.merge_in_progress": False,
        "repository.protected": False,
        "repository.protected_branches": [],
        "config.value[pyproject.toml:project.name]": "demo",
        "fs.exists[README.md]": True,
        "env.var[DEPLOY_ENV]": "staging",
        "npm.package_version[left-pad]": "1.3.0",
        "workspace.root": str(repo.work.resolve()),
        "project.package_manager": "pip",
    }
    for key, value in expected.items():
        seen = verify_key(contract, key, task, repo.work, environ=env)
        assert (key, seen.status, seen.value) == (key, OBSERVED, value), seen.detail
    install_branch_protection(repo.origin, ["main"])
    assert verify_key(contract, "repository.protected", task, repo.work).value is True
    assert verify_key(contract, "repository.protected_branches", task, repo.work).value == ["main"]


def test_verify_key_explains_what_it_cannot_do(repo: Repo):
    contract = builtin_contract("coding")
    task = derive_task_scope(repo.work)
    reasons = {
        "no.such_key": "not a key the coding contract declares",
        "python.package_version": "is qualified",
        "project.test_command": "no verifier (authority developer)",
    }
    for key, reason in reasons.items():
        seen = verify_key(contract, key, task, repo.work)
        assert seen.status is UNAVAILABLE, key
        assert reason in seen.detail, seen.detail
    detached = TaskScope(workspace=task.workspace, repo=task.repo, branch=None)
    seen = verify_key(contract, "repository.protected", detached, repo.work)
    assert seen.status is UNAVAILABLE
    assert "task has no branch" in seen.detail
