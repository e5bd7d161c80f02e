"""Interface contracts: loading, validation errors, invariants, key typing, bindings, merging."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statewise.contract import (
    Contract,
    Risk,
    builtin_contract,
    format_duration,
    list_builtin_contracts,
    load_contract,
    load_contract_text,
    parse_duration,
    render_verifier,
    summarize,
)
from statewise.errors import ContractError
from statewise.records import Authority, KeySchema, KeyType
from statewise.scopes import ScopeLevel
from statewise.values import ValueType
from tests.contract.helpers import (
    PROTECTED_CHECK,
    PROTECTION_VERIFIER,
    SMALL,
    contract_error,
    failing,
    small_with,
)

# --- the built-in contract ------------------------------------------------------------------


def test_builtin_coding_contract_loads_and_is_cached() -> None:
    coding = builtin_contract()
    assert "coding" in list_builtin_contracts()
    assert builtin_contract("coding") is coding
    assert isinstance(coding, KeySchema)
    for key in (
        "git.current_branch", "git.default_branch", "repository.protected", "repository.protected_branches",
        "git.remote_url", "git.upstream", "git.clean_tree", "runtime.python_version",
        "runtime.python_interpreter", "python.venv_path", "python.venv_active", "python.package_version",
        "runtime.node_version", "npm.package_version", "fs.build_dir", "fs.protected_paths", "config.value",
        "project.test_command", "project.package_manager", "user.preferred_branch_prefix",
        "user.allow_force_push",
    ):
        assert key in coding.state, key
    for operation in (
        "git.push", "git.checkout", "git.switch", "git.branch_create", "git.branch_delete", "git.reset_hard",
        "git.clean", "git.rebase", "pip.install", "uv.add", "poetry.add", "npm.install", "venv.create",
        "test.run", "fs.delete", "fs.write", "config.edit", "stop",
    ):
        assert operation in coding.operations, operation
    assert coding.operation("stop").side_effects is False
    assert coding.unverifiable_keys() == ()


def test_builtin_key_specs_are_typed_as_declared() -> None:
    coding = builtin_contract()
    protected = coding.state_spec("repository.protected")
    assert protected.value_type is ValueType.BOOL
    assert protected.scope is ScopeLevel.BRANCH
    assert protected.authority is Authority.MACHINE
    assert coding.verifier_for("repository.protected").adapter == "git.branch_protection"
    test_command = coding.state_spec("project.test_command")
    assert test_command.authority is Authority.DEVELOPER and test_command.question
    manager = coding.key_type("project.package_manager")
    assert manager.value_type is ValueType.ENUM
    assert manager.choices == ("pip", "uv", "poetry", "pdm", "npm", "pnpm", "yarn", "bun")
    assert coding.operation("git.push").risk is Risk.HIGH
    assert coding.operation("git.reset_hard").requires_approval is True


def test_summarize_counts_the_sections() -> None:
    summary = summarize(builtin_contract())
    assert summary["name"] == "coding"
    assert summary["keys"] == len(builtin_contract().state)
    assert summary["operations"] == len(builtin_contract().operations)
    assert summary["invariants"] == len(builtin_contract().invariants)
    assert summary["verifiers"] >= 1 and "command" in summary["adapters"]
    assert summary["warnings"] == []


def test_contract_is_immutable() -> None:
    coding = builtin_contract()
    with pytest.raises(AttributeError):
        coding.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        coding.state["x.y"] = None  # type: ignore[index]
    with pytest.raises(TypeError):
        Contract()


def test_a_contract_is_a_frozen_value_that_copies_as_itself() -> None:
    import copy
    import dataclasses

    coding = builtin_contract()
    assert dataclasses.is_dataclass(coding) and type(coding).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        coding.invariants = ()  # type: ignore[misc]
    assert copy.copy(coding) is coding and copy.deepcopy(coding) is coding
    # Equality and hashing are identity: two loads of the same text are two contracts.
    again = load_contract_text(SMALL, "small.yaml")
    assert again != load_contract_text(SMALL, "small.yaml") and {coding: 1}[coding] == 1
    assert repr(coding).startswith("Contract('coding' v1, ")


# --- validation errors ----------------------------------------------------------------------


def test_small_contract_loads() -> None:
    small = load_contract_text(SMALL, "small.yaml")
    assert small.name == "small" and small.source == "small.yaml"
    assert small.key_type("repository.protected") == KeyType(ValueType.BOOL, None, 86400)


def test_unknown_field_is_named_with_its_path() -> None:
    error = contract_error(small_with("    authority: machine\n", "    authority: machine\n    verfier: x\n"))
    assert error.field == "state.repository.protected.verfier"
    assert "unknown field 'verfier'" in error.problem and "verifier" in error.problem


def test_unknown_top_level_field() -> None:
    error = contract_error(SMALL + "invariant: []\n")
    assert error.field == "invariant"
    assert "unknown field" in error.problem


def test_bad_type_name_lists_the_types() -> None:
    error = contract_error(small_with("type: bool", "type: boolean"))
    assert error.field == "state.repository.protected.type"
    assert error.problem == "expected one of bool, int, string, version, path, enum, list; got 'boolean'"
    assert str(error).startswith("my.yaml: state.repository.protected.type: ")


def test_enum_without_choices() -> None:
    error = contract_error(small_with("type: bool", "type: enum"))
    assert error.field == "state.repository.protected.choices"
    assert "required when type is enum" in error.problem


def test_depends_on_unknown_key() -> None:
    text = small_with("depends_on: [repository.protected]", "depends_on: [repository.locked]")
    error = contract_error(text)
    assert error.field == "operations.git.push.slots.branch.depends_on[0]"
    assert "repository.locked" in error.problem


def test_link_to_unknown_key() -> None:
    error = contract_error(small_with("    risk: high\n", "    risk: high\n    links: [git.nothing]\n"))
    assert error.field == "operations.git.push.links[0]"


def test_bad_cel_syntax_names_the_invariant_field() -> None:
    error = contract_error(small_with(PROTECTED_CHECK, """check: 'state["a"] &&'"""))
    assert error.field == "invariants[0].check"
    assert "syntax error" in error.problem


def test_bad_cel_in_when() -> None:
    error = contract_error(small_with('when: action.operation == "git.push"', "when: action.operation =="))
    assert error.field == "invariants[0].when"


def test_unknown_cel_variable_or_function_is_a_load_error() -> None:
    typo = contract_error(small_with(PROTECTED_CHECK, "check: '!stat.x'"))
    assert typo.field == "invariants[0].check" and "unknown variable 'stat'" in typo.problem
    function = contract_error(small_with(PROTECTED_CHECK, "check: 'split(\"a\")'"))
    assert "unknown function split()" in function.problem


def test_invariant_reading_an_undeclared_state_key_is_a_load_error() -> None:
    error = contract_error(small_with(PROTECTED_CHECK, """check: '!state["repository.protectd"]'"""))
    assert error.field == "invariants[0].check"
    assert "repository.protectd" in error.problem and "not a key declared" in error.problem


def test_undefined_verifier_binding() -> None:
    error = contract_error(small_with("verifier: protection", "verifier: protektion"))
    assert error.field == "state.repository.protected.verifier"
    assert "undefined verifier binding 'protektion'" in error.problem


def test_argv_given_as_a_shell_string_is_rejected() -> None:
    text = small_with(
        PROTECTION_VERIFIER,
        'adapter: command\n    argv: "git symbolic-ref HEAD"\n    read: {regex: "(.+)"}',
    )
    error = contract_error(text)
    assert error.field == "verifiers.protection.argv"
    assert "never a shell command line" in error.problem


def test_argv_cannot_smuggle_a_shell() -> None:
    text = small_with(
        PROTECTION_VERIFIER,
        "adapter: command\n    argv: [bash, -c, 'git status']\n    read: {regex: '(.+)'}",
    )
    assert contract_error(text).field == "verifiers.protection.argv"


def test_command_verifier_needs_argv_and_read() -> None:
    no_argv = small_with(PROTECTION_VERIFIER, "adapter: command\n    read: {regex: '(x)'}")
    assert contract_error(no_argv).field == "verifiers.protection.argv"
    no_read = small_with(PROTECTION_VERIFIER, "adapter: command\n    argv: [git]")
    assert contract_error(no_read).field == "verifiers.protection.read"


def test_bad_regex() -> None:
    text = small_with(
        PROTECTION_VERIFIER,
        "adapter: command\n    argv: [git, status]\n    read: {regex: '(unclosed'}",
    )
    error = contract_error(text)
    assert error.field == "verifiers.protection.read.regex"
    assert "not a valid regular expression" in error.problem


def test_regex_needs_exactly_one_group() -> None:
    text = small_with(
        PROTECTION_VERIFIER,
        "adapter: command\n    argv: [git, status]\n    read: {regex: 'no group'}",
    )
    assert "exactly one capturing group" in contract_error(text).problem


def test_exit_status_values_must_fit_the_key_type() -> None:
    text = small_with(
        PROTECTION_VERIFIER,
        "adapter: command\n    argv: [git, status]\n    read: {exit_status: {0: protected}}",
    )
    error = contract_error(text)
    assert error.field == "state.repository.protected.verifier"
    assert "exit status 0" in error.problem


def test_unknown_placeholder_in_verifier_args() -> None:
    error = contract_error(small_with('"{branch}"', '"{brnach}"'))
    assert error.field == "verifiers.protection.args.branch"
    assert "{brnach}" in error.problem


def test_qualifier_placeholder_needs_a_qualified_key() -> None:
    error = contract_error(small_with('"{branch}"', '"{qualifier}"'))
    assert error.field == "state.repository.protected.verifier"


def test_malformed_yaml_names_file_line_and_column() -> None:
    error = contract_error(small_with("risk: high", "risk: [high"), source="broken.yaml")
    assert error.source == "broken.yaml"
    position = re.search(r"malformed YAML at line (\d+), column (\d+)", error.problem)
    assert position is not None
    # the parser notices the unclosed "[" on that line or the one after it
    assert int(position.group(1)) >= SMALL.splitlines().index("    risk: high") + 1


def test_duplicate_yaml_key_is_an_error() -> None:
    error = contract_error(small_with("    risk: high\n", "    risk: high\n    risk: low\n"))
    assert "duplicate key 'risk'" in error.problem


def test_bad_ttl() -> None:
    error = contract_error(small_with("ttl: 1d", "ttl: soon"))
    assert error.field == "state.repository.protected.ttl"
    assert "30m" in error.problem
    assert contract_error(small_with("ttl: 1d", "ttl: 0")).field == "state.repository.protected.ttl"
    assert contract_error(small_with("ttl: 1d", "ttl: true")).field == "state.repository.protected.ttl"


def test_yaml_one_one_booleans_are_not_booleans() -> None:
    error = contract_error(small_with("required: true", "required: yes"))
    assert error.field == "operations.git.push.slots.branch.required"


def test_key_names_are_checked() -> None:
    bad_name = contract_error(small_with("  repository.protected:\n", "  Repository:\n"))
    assert bad_name.field == "state.Repository"
    qualified = contract_error(small_with("  repository.protected:\n", "  repository.protected[main]:\n"))
    assert "qualified: true" in qualified.problem


def test_wrong_scalar_types_are_not_coerced() -> None:
    assert contract_error(small_with("version: 1", "version: '1'")).field == "version"
    assert contract_error(small_with("risk: high", "risk: extreme")).field == "operations.git.push.risk"


def test_missing_required_fields() -> None:
    error = contract_error(small_with("    message: no pushes to protected branches\n", ""))
    assert error.field == "invariants[0].message" and error.problem == "required field is missing"


def test_empty_and_non_mapping_files() -> None:
    assert "empty" in contract_error("").problem
    assert "mapping" in contract_error("- a\n- b\n").problem


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ContractError) as caught:
        load_contract(tmp_path / "missing.yaml")
    assert caught.value.source == str(tmp_path / "missing.yaml")


# --- durations --------------------------------------------------------------------------------


def test_parse_duration_examples() -> None:
    assert parse_duration("30m") == 1800
    assert parse_duration("12h") == 43200
    assert parse_duration("7d") == 604800
    assert parse_duration("1h30m") == 5400
    assert parse_duration("45") == 45
    for bad in ("", "soon", "10x", "0s", "-5m", "1.5h"):
        with pytest.raises(ValueError):
            parse_duration(bad)


@given(st.integers(min_value=1, max_value=10**9))
def test_duration_round_trip(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


@given(st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from("wdhms")), min_size=1, max_size=5))
def test_duration_parts_add_up(parts: list[tuple[int, str]]) -> None:
    text = "".join(f"{count}{unit}" for count, unit in parts)
    unit_seconds = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
    expected = sum(count * unit_seconds[unit] for count, unit in parts)
    if expected == 0:
        with pytest.raises(ValueError):
            parse_duration(text)
    else:
        assert parse_duration(text) == expected


# --- invariants -------------------------------------------------------------------------------

PROTECTED_MAIN_STATE = {
    "repository.protected_branches": ["main", "release/*"],
    "git.current_branch": "main",
    "repository.protected": True,
    "user.allow_force_push": True,
}



def test_force_push_to_protected_branch_fails() -> None:
    action = {
        "tool": "git", "operation": "push", "target": "origin/main",
        "args": {"remote": "origin", "branch": "main", "force": True},
        "scope": "repo:github.com/acme/app@main", "risk": "high",
    }
    results = builtin_contract().check_invariants(action, PROTECTED_MAIN_STATE)
    assert {"no_force_push_to_protected_branch", "no_direct_push_to_protected_branch"} <= failing(results)
    blocked = next(r for r in results if r.name == "no_force_push_to_protected_branch")
    assert blocked.error is None and blocked.applies and blocked.message


def test_force_push_to_protected_pattern_fails_even_if_branch_record_is_stale() -> None:
    # The branch-scoped record says "not protected" (stale); the repository's rule list wins.
    state = {**PROTECTED_MAIN_STATE, "git.current_branch": "release/2.0", "repository.protected": False}
    args = {"remote": "origin", "branch": "release/2.0", "force": True}
    action = {"tool": "git", "operation": "git.push", "args": args}
    assert "no_force_push_to_protected_branch" in failing(builtin_contract().check_invariants(action, state))


def test_safe_push_of_a_feature_branch_holds() -> None:
    state = {**PROTECTED_MAIN_STATE, "git.current_branch": "feature/login", "repository.protected": False}
    action = {"tool": "git", "operation": "git.push", "args": {"remote": "origin", "branch": "feature/login"}}
    results = builtin_contract().check_invariants(action, state)
    assert failing(results) == set()
    applied = {r.name for r in results if r.applies}
    assert applied == {"no_direct_push_to_protected_branch"}


def test_missing_state_key_fails_closed() -> None:
    state = {"git.current_branch": "feature/login", "repository.protected": False}
    action = {"tool": "git", "operation": "git.push", "args": {"remote": "origin", "branch": "feature/login"}}
    results = builtin_contract().check_invariants(action, state)
    result = next(r for r in results if r.name == "no_direct_push_to_protected_branch")
    assert not result.holds
    assert "repository.protected_branches" in result.error


def test_error_in_when_fails_closed_but_false_when_does_not_apply() -> None:
    text = small_with('when: action.operation == "git.push"', 'when: action.args.dry_run == false')
    contract = load_contract_text(text, "when.yaml")
    no_args = contract.check_invariants({"tool": "git", "operation": "git.push", "args": {}}, {})
    assert not no_args[0].holds and no_args[0].error.startswith("when:")
    dry = contract.check_invariants({"tool": "git", "operation": "git.push", "args": {"dry_run": True}}, {})
    assert dry[0].holds and not dry[0].applies


def test_non_bool_result_fails_closed() -> None:
    text = small_with(PROTECTED_CHECK, "check: 'size(state)'")
    results = load_contract_text(text, "int.yaml").check_invariants({"operation": "git.push"}, {})
    assert not results[0].holds and "not a bool" in results[0].error


def test_unrepresentable_state_fails_closed() -> None:
    results = builtin_contract().check_invariants({"operation": "stop", "tool": "statewise"}, {"x.y": object()})
    assert results and all(not r.holds and r.error for r in results)


def test_recursive_delete_outside_workspace_fails() -> None:
    state = {"workspace.root": "/work/app", "workspace.repo_root": "/work/app", "fs.protected_paths": [".git", ".env"]}
    coding = builtin_contract()
    escape = {"tool": "fs", "operation": "fs.delete", "args": {"path": "../other", "recursive": True}}
    assert "no_recursive_delete_outside_workspace" in failing(coding.check_invariants(escape, state))
    whole = {"tool": "fs", "operation": "fs.delete", "args": {"path": "/work/app/", "recursive": True}}
    assert "no_recursive_delete_outside_workspace" in failing(coding.check_invariants(whole, state))
    build = {"tool": "fs", "operation": "fs.delete", "args": {"path": "build", "recursive": True}}
    # Build output git ignores is disposable; with nothing known about the path, a recursive
    # delete is unresolved (absence is not permission).
    assert failing(coding.check_invariants(build, {**state, "git.ignored[build]": True})) == set()
    assert failing(coding.check_invariants(build, state)) == {"recursive_delete_needs_known_protection"}


def test_deleting_a_protected_path_or_its_parent_fails() -> None:
    state = {"workspace.root": "/work/app", "workspace.repo_root": "/work/app",
             "fs.protected_paths": [".git", "config/secrets"]}
    coding = builtin_contract()
    inside = {"tool": "fs", "operation": "fs.delete", "args": {"path": ".git/hooks", "recursive": True}}
    parent = {"tool": "fs", "operation": "fs.delete", "args": {"path": "config", "recursive": True}}
    write = {"tool": "fs", "operation": "fs.write", "args": {"path": "/work/app/.git/config", "content": "x"}}
    assert "no_delete_of_protected_path" in failing(coding.check_invariants(inside, state))
    assert "no_delete_of_protected_path" in failing(coding.check_invariants(parent, state))
    assert "no_write_to_protected_path" in failing(coding.check_invariants(write, state))


def test_install_goes_into_the_resolved_interpreter() -> None:
    state = {"runtime.python_interpreter": "/work/app/.venv/bin/python", "project.package_manager": "pip"}
    coding = builtin_contract()
    def install(interpreter: str) -> dict[str, object]:
        return {"tool": "pip", "operation": "install", "args": {"package": "requests", "interpreter": interpreter}}

    system = install("/usr/bin/python3")
    venv = install("/work/app/.venv/bin/python")
    assert failing(coding.check_invariants(system, state)) == {"install_into_resolved_interpreter"}
    assert failing(coding.check_invariants(venv, state)) == set()
    with_uv = {**state, "project.package_manager": "uv"}
    assert failing(coding.check_invariants(venv, with_uv)) == {"install_with_project_package_manager"}


def test_test_command_must_be_the_resolved_one() -> None:
    coding = builtin_contract()
    state = {"project.test_command": "pytest -x"}
    def run(command: str) -> dict[str, object]:
        return {"tool": "shell", "operation": "test.run", "args": {"command": command}}

    assert failing(coding.check_invariants(run("pytest"), state)) == {"test_command_is_resolved_command"}
    assert failing(coding.check_invariants(run("pytest -x"), state)) == set()


def test_deleting_protected_or_default_branch_fails() -> None:
    coding = builtin_contract()
    state = {
        **PROTECTED_MAIN_STATE,
        "git.current_branch": "feature/x",
        "repository.protected": False,
        "git.default_branch": "main",
    }
    delete_main = {"tool": "git", "operation": "git.branch_delete", "args": {"branch": "main"}}
    delete_old = {"tool": "git", "operation": "git.branch_delete", "args": {"branch": "feature/old"}}
    assert failing(coding.check_invariants(delete_main, state)) == {"no_deletion_of_protected_branch"}
    assert failing(coding.check_invariants(delete_old, state)) == set()


def test_stop_passes_every_invariant_with_no_state() -> None:
    stop = {"tool": "statewise", "operation": "stop", "args": {"reason": "x"}}
    results = builtin_contract().check_invariants(stop, {})
    assert all(r.holds and not r.applies for r in results)


# --- keys and bindings ------------------------------------------------------------------------


def test_key_type_handles_qualified_keys() -> None:
    coding = builtin_contract()
    package = coding.key_type("python.package_version[requests]")
    assert package is not None and package.value_type is ValueType.VERSION
    config = coding.key_type("config.value[pyproject.toml:tool.pytest.ini_options.addopts]")
    assert config.value_type is ValueType.STRING
    assert coding.key_type("python.package_version") is None  # which package?
    assert coding.key_type("git.current_branch[main]") is None  # not a qualified key
    assert coding.key_type("python.package_version[]") is None
    assert coding.key_type("no.such_key") is None
    assert coding.state_spec("python.package_version") is not None


def test_keys_for_operation_and_binds() -> None:
    coding = builtin_contract()
    push_keys = coding.keys_for_operation("git.push")
    assert "repository.protected" in push_keys and "git.current_branch" in push_keys
    assert coding.binds("repository.protected", "git.push")  # by link, no slot needed
    assert coding.binds("git.current_branch", "git.push", "branch")
    assert not coding.binds("repository.protected", "git.push", "branch")  # linked, not a slot dependency
    assert not coding.binds("project.test_command", "git.push")
    assert not coding.binds("repository.protected", "no.such_operation")
    assert coding.keys_for_operation("no.such_operation") == ()
    assert coding.slots_for_key("git.current_branch", "git.push") == ("branch", "source")


def test_binds_respects_qualifier_slots_and_record_types() -> None:
    coding = builtin_contract()
    args = {"package": "requests", "interpreter": "/x/python"}
    install = {"tool": "pip", "operation": "install", "args": args}
    assert coding.binds("python.package_version[requests]", install)
    assert not coding.binds("python.package_version[numpy]", install)
    # without args only key compatibility can be judged
    assert coding.binds("python.package_version[numpy]", "pip.install")

    class FakeRecord:
        key = "repository.protected"
        value_type = ValueType.STRING

    assert not coding.binds(FakeRecord(), "git.push")  # wrong type never binds (typed grounding)


def test_question_template_is_rendered() -> None:
    coding = builtin_contract()
    question = coding.question_for("project.test_command", scope="repo:github.com/acme/app", value="pytest -x")
    assert "repo:github.com/acme/app" in question and "pytest -x" in question


def test_render_verifier_fills_placeholders() -> None:
    text = textwrap.dedent("""\
        name: scripts
        version: 1
        state:
          npm.script_declared:
            type: bool
            scope: repo
            authority: machine
            qualified: true
            verifier:
              adapter: command
              argv: [python3, -c, "import json, sys; sys.exit(0 if sys.argv[1] in json.load(open('package.json')).get('scripts', {{}}) else 1)", "{qualifier}"]
              read: {exit_status: {0: true, 1: false}}
        """)
    spec = load_contract_text(text, "scripts.yaml").verifier_for("npm.script_declared[test]")
    rendered = render_verifier(spec, {"qualifier": "test", "workspace": "/w"})
    assert rendered.argv[:2] == ("python3", "-c") and rendered.argv[-1] == "test"
    assert "get('scripts', {})" in rendered.argv[2]  # {{}} in the template is a literal {}
    manifest = render_verifier(builtin_contract().verifier_for("npm.script_exists[test]"),
                               {"qualifier": "test", "workspace": "/w"})
    assert dict(manifest.args) == {"workspace": "/w", "kind": "npm", "name": "test"}
    npm = render_verifier(builtin_contract().verifier_for("npm.package_version[left-pad]"),
                          {"qualifier": "left-pad", "workspace": "/w"})
    assert dict(npm.args) == {"workspace": "/w", "package": "left-pad"}


# --- extension --------------------------------------------------------------------------------

EXTENSION = textwrap.dedent(
    """\
    name: acme-app
    version: 3
    state:
      deploy.environment:
        type: enum
        choices: [staging, production]
        scope: repo
        authority: developer
    operations:
      deploy.run:
        tool: shell
        risk: critical
        requires_approval: true
        slots:
          environment: {type: string, required: true, depends_on: [deploy.environment]}
        links: [git.current_branch]
    invariants:
      - name: deploy_from_default_branch
        when: action.operation == "deploy.run"
        check: state["git.current_branch"] == state["git.default_branch"]
        message: deploy only from the default branch
    """
)


def test_extends_coding_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "acme.yaml"
    path.write_text("extends: coding\n" + EXTENSION)
    merged = load_contract(path)
    assert merged.name == "acme-app" and merged.bases == ("coding",)
    assert "deploy.environment" in merged.state and "repository.protected" in merged.state
    assert merged.binds("git.current_branch", "deploy.run")
    action = {"tool": "shell", "operation": "deploy.run", "args": {"environment": "production"}}
    state = {"git.current_branch": "feature/x", "git.default_branch": "main"}
    assert "deploy_from_default_branch" in failing(merged.check_invariants(action, state))
    assert len(merged.invariants) == len(builtin_contract().invariants) + 1


def test_extension_without_extends_cannot_reference_base_keys() -> None:
    error = contract_error(EXTENSION, source="acme.yaml")
    assert error.field == "operations.deploy.run.links[0]"


def test_extends_a_relative_file_and_detects_cycles(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("extends: coding\n" + EXTENSION)
    (tmp_path / "case.yaml").write_text(
        "extends: base.yaml\nname: case-1\nversion: 1\n"
        "state:\n  case.flag: {type: bool, scope: global, authority: agent}\n"
    )
    case = load_contract(tmp_path / "case.yaml")
    assert case.bases == ("coding", "acme-app") and "case.flag" in case.state
    (tmp_path / "loop.yaml").write_text("extends: loop.yaml\nname: loop\nversion: 1\n")
    with pytest.raises(ContractError) as caught:
        load_contract(tmp_path / "loop.yaml")
    assert caught.value.field == "extends"


def test_extend_merges_two_contracts() -> None:
    extra = load_contract_text(
        SMALL.replace("name: small", "name: extra").replace("git.push", "deploy.push").replace(
            "repository.protected", "deploy.locked"
        ),
        "extra.yaml",
    )
    merged = builtin_contract().extend(extra)
    assert "deploy.push" in merged.operations and "git.push" in merged.operations
    assert merged.bases == ("coding",)
    # an identical redefinition is accepted
    same = load_contract_text(
        "name: same\nversion: 1\nstate:\n  git.clean_tree:\n"
        "    type: bool\n    scope: workspace\n    authority: machine\n"
        "    verifier: {adapter: git.clean_tree, args: {workspace: '{workspace}'}}\n    ttl: 1m\n"
        "    description: No staged, unstaged or untracked changes.\n",
        "same.yaml",
    )
    merged_same = builtin_contract().extend(same)
    assert merged_same.state_spec("git.clean_tree") == builtin_contract().state_spec("git.clean_tree")


def test_extend_rejects_conflicting_redefinitions() -> None:
    conflicting_key = load_contract_text(
        "name: bad\nversion: 1\n"
        "state:\n  repository.protected: {type: string, scope: branch, authority: developer}\n",
        "bad.yaml",
    )
    with pytest.raises(ContractError) as caught:
        builtin_contract().extend(conflicting_key)
    assert caught.value.source == "bad.yaml" and caught.value.field == "state.repository.protected"
    assert "differently" in caught.value.problem

    conflicting_invariant = load_contract_text(
        "name: bad2\nversion: 1\n"
        "invariants:\n  - {name: test_command_is_resolved_command, check: 'true', message: m}\n",
        "bad2.yaml",
    )
    with pytest.raises(ContractError) as caught:
        builtin_contract().extend(conflicting_invariant)
    assert caught.value.field == "invariants[0]"


def test_extends_file_rejects_conflicting_operation(tmp_path: Path) -> None:
    path = tmp_path / "clash.yaml"
    path.write_text(
        "extends: coding\nname: clash\nversion: 1\n"
        "operations:\n  stop: {tool: statewise, risk: high}\n"
    )
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert caught.value.source == str(path) and caught.value.field == "operations.stop"


def test_untracked_build_output_and_what_is_inside_it_is_disposable() -> None:
    coding = builtin_contract()
    state = {"workspace.root": "/work/app", "workspace.repo_root": "/work/app"}

    def delete(path: str) -> dict[str, object]:
        return {"tool": "fs", "operation": "fs.delete", "args": {"path": path, "recursive": True}}

    for path in ("_build", "build/obj", "out/release", "docs/_build/html", "node_modules/.cache"):
        assert failing(coding.check_invariants(delete(path), {**state, f"git.tracked[{path}]": False})) == set(), path
    # A name that is not a build output's, a way out through `..`, or tracked content: still asked.
    for path in ("bin", "src", "build/../src", "out/..", "build/./../src"):
        assert "recursive_delete_needs_known_protection" in failing(
            coding.check_invariants(delete(path), {**state, f"git.tracked[{path}]": False})), path
    assert failing(coding.check_invariants(delete("build/obj"), {**state, "git.tracked[build/obj]": True})) == {
        "recursive_delete_needs_known_protection"}


def test_tests_under_pypy_are_the_declared_test_runner() -> None:
    coding = builtin_contract()
    state = {"project.test_commands": ["pytest", "manage.py test"]}

    def run(command: str) -> dict[str, object]:
        return {"tool": "shell", "operation": "test.run", "args": {"command": command}}

    for command in ("pypy3 -m pytest -q", "/opt/pypy/bin/pypy3.10 -m pytest", "python3 -m pytest", "pytest -x"):
        assert failing(coding.check_invariants(run(command), state)) == set(), command
    assert failing(coding.check_invariants(run("pypy3 -m nose"), state)) == {"test_command_is_resolved_command"}
