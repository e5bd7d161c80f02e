"""Hostile contracts: YAML bombs, deep nesting, huge files, shells smuggled into verifier argvs,
slow patterns and invariants whose evaluation must stay bounded."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from statewise.contract import (
    MAX_CONTRACT_BYTES,
    Contract,
    RegexTimeout,
    builtin_contract,
    contract_regex,
    load_contract,
    load_contract_text,
)
from statewise.errors import ContractError
from tests.contract.helpers import PROTECTION_VERIFIER, contract_error, small_with

# --- hostile contracts -----------------------------------------------------------------------

BILLION_LAUGHS = textwrap.dedent(
    """\
    name: laughs
    version: 1
    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
    i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
    """
)


def _refused_quickly(path: Path) -> ContractError:
    # CPU time, not the wall clock: what the bound is about is the work the loader does (a bomb
    # expands exponentially), which a loaded machine's waiting does not change.
    start = time.process_time()
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert time.process_time() - start < 1.0
    assert caught.value.source == str(path)
    return caught.value


def test_billion_laughs_is_refused_at_once_naming_the_file(tmp_path, private_cache) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(BILLION_LAUGHS)
    assert len(BILLION_LAUGHS.encode()) < 600
    error = _refused_quickly(path)
    assert "expands to more than" in error.problem and "aliases included" in error.problem
    assert not (private_cache / "contracts").exists()  # nothing half-written


def test_too_many_aliases_are_refused(tmp_path) -> None:
    path = tmp_path / "aliases.yaml"
    path.write_text("name: many\nversion: 1\nx: &x 1\ny: [" + ", ".join(["*x"] * 500) + "]\n")
    error = _refused_quickly(path)
    assert error.field == "y[200]" and "alias uses" in error.problem


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("name: loop\nversion: 1\nstate: &s\n  k.x: *s\n")
    error = _refused_quickly(path)
    assert "inside its own anchor" in error.problem and error.field == "state.k.x"


@pytest.mark.parametrize("levels", [40, 5_000, 200_000])
def test_deep_nesting_names_the_field(tmp_path, levels) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(
        "name: deep\nversion: 1\nstate:\n  k.x:\n    type: string\n    description: "
        + "[" * levels + "]" * levels + "\n"
    )
    error = _refused_quickly(path)
    assert error.field.startswith("state.k.x.description[0][0]")
    assert "nested more than 32 levels" in error.problem


def test_deep_block_nesting_names_the_field(tmp_path) -> None:
    lines = ["name: deep", "version: 1", "operations:"]
    lines += [("  " * (depth + 1)) + f"level{depth}:" for depth in range(60)]
    path = tmp_path / "block.yaml"
    path.write_text("\n".join(lines) + " 1\n")
    error = _refused_quickly(path)
    assert error.field.startswith("operations.level0.level1.level2")


def test_a_huge_contract_file_is_refused_before_it_is_read(tmp_path) -> None:
    path = tmp_path / "huge.yaml"
    with open(path, "w") as handle:
        handle.write("name: huge\nversion: 1\ndescription: '")
        handle.write("x" * (10 * 1024 * 1024))
        handle.write("'\n")
    error = _refused_quickly(path)
    size = path.stat().st_size
    assert error.problem == f"the contract is {size:,} bytes, over the limit of {MAX_CONTRACT_BYTES:,} bytes " \
                            "for a contract"
    text_error = contract_error("name: huge\nversion: 1\ndescription: '" + "x" * MAX_CONTRACT_BYTES + "'\n")
    assert "limit" in text_error.problem


def test_a_huge_contract_through_extends_names_the_extends_field(tmp_path) -> None:
    (tmp_path / "base.yaml").write_text("name: base\nversion: 1\ndescription: '" + "x" * (MAX_CONTRACT_BYTES + 10) + "'\n")
    (tmp_path / "top.yaml").write_text("extends: base.yaml\nname: top\nversion: 1\n")
    error = _refused_quickly(tmp_path / "top.yaml")
    assert error.field == "extends" and "over the limit" in error.problem and str(tmp_path / "base.yaml") in error.problem


def test_the_pure_python_loader_refuses_the_same_shapes(tmp_path) -> None:
    from statewise.contract.safe_yaml import loaders, parse_yaml

    _fast, pure = loaders()
    with pytest.raises(ContractError, match="expands to more than"):
        parse_yaml(BILLION_LAUGHS, "laughs.yaml", pure)
    with pytest.raises(ContractError, match="nested more than"):
        parse_yaml("a: " + "[" * 100 + "]" * 100 + "\n", "deep.yaml", pure)
    with pytest.raises(ContractError, match="duplicate key"):
        parse_yaml("a: 1\na: 2\n", "dup.yaml", pure)
    assert parse_yaml("a: no\nb: true\n", "bools.yaml", pure) == {"a": "no", "b": True}


def test_the_builtin_contract_uses_libyaml_when_available() -> None:
    import yaml

    from statewise.contract.safe_yaml import loaders

    fast, pure = loaders()
    assert issubclass(fast, yaml.CSafeLoader) == bool(yaml.__with_libyaml__)
    assert issubclass(pure, yaml.SafeLoader)


SHELL_ARGVS = [
    "[env, sh, -c, 'git status']",
    "[/usr/bin/env, FOO=1, bash, -c, 'git status']",
    "[env, -u, HOME, -i, bash, -lc, 'git status']",
    "[env, -S, 'sh -c true']",
    "[sudo, -u, root, sh, -c, 'id']",
    "[sudo, -s, id]",
    "[nice, -n, '5', timeout, '10', zsh, -c, 'id']",
    "[nice, '-5', dash, -ec, 'id']",
    "[timeout, -s, KILL, '5', sh, -c, 'id']",
    "[command, -p, sh, -c, 'id']",
    "[exec, -a, x, bash, -c, 'id']",
    "[xargs, '-0', -n, '1', sh, -c, 'id']",
    "[busybox, sh, -c, 'id']",
    "[stdbuf, -o, L, fish, --command, 'id']",
    "[nohup, setsid, ksh, -c, 'id']",
    "[flock, /tmp/lock, -c, 'id']",
    "[su, -c, 'id']",
    "[watch, git, status]",
    "[cmd.exe, /c, dir]",
    "[pwsh, -Command, Get-Item]",
    "[powershell, -EncodedCommand, ZABpAHIA]",
    "[bash]",
    "[env, sh, -s]",
]


@pytest.mark.parametrize("argv", SHELL_ARGVS)
def test_wrapped_shells_are_refused_in_a_verifier_argv(argv) -> None:
    text = small_with(PROTECTION_VERIFIER, f"adapter: command\n    argv: {argv}\n    read: {{regex: '(.+)'}}")
    error = contract_error(text)
    assert error.field == "verifiers.protection.argv"
    assert "string" in error.problem or "reads commands from its input" in error.problem


@pytest.mark.parametrize("argv", [
    "[env, GIT_PAGER=cat, git, status]",
    "[timeout, '5', git, ls-remote, origin]",
    "[nice, -n, '5', git, log, '-1']",
    "[git, config, --get, 'branch.{branch}.remote']",
    "[python3, -c, 'import sys; print(sys.version)']",
    "[bash, ./scripts/check.sh]",
])
def test_ordinary_verifier_argvs_are_accepted(argv) -> None:
    text = small_with(PROTECTION_VERIFIER, f"adapter: command\n    argv: {argv}\n    read: {{regex: '(.+)'}}")
    assert load_contract_text(text, "ok.yaml").verifiers["protection"].argv[0]


def test_contract_patterns_are_time_bounded() -> None:
    pattern = contract_regex(r"^(a|aa)+$")
    start = time.monotonic()
    with pytest.raises(RegexTimeout, match="did not finish matching"):
        pattern.search("a" * 5000 + "!", timeout=0.2)
    assert time.monotonic() - start < 1.0
    assert contract_regex(r"v(\d+)").search("node v20").group(1) == "20"
    with pytest.raises(ValueError, match="not a valid regular expression"):
        contract_regex("(unclosed")


# --- bounded invariant evaluation --------------------------------------------------------------

NESTED = "[" + ", ".join(str(n) for n in range(60)) + "]"
EXPENSIVE = f"{NESTED}.all(a, {NESTED}.all(b, {NESTED}.all(c, {NESTED}.all(d, {NESTED}.all(e, a + b + c + d + e >= 0)))))"


def _with_invariant(check: str, when: str = 'action.operation == "git.push"') -> Contract:
    text = small_with(
        "  - name: no_push_to_protected",
        f"  - name: expensive\n    when: '{when}'\n    check: '{check}'\n    message: costly\n"
        "  - name: no_push_to_protected",
    )
    return load_contract_text(text, "costly.yaml")


def test_an_expensive_invariant_is_unresolved_at_its_deadline_and_never_holds() -> None:
    contract = _with_invariant(EXPENSIVE)
    start = time.monotonic()
    results = {r.name: r for r in contract.check_invariants(
        {"tool": "git", "operation": "push"}, {"repository.protected": False}, deadline=time.monotonic() + 0.5)}
    elapsed = time.monotonic() - start
    assert elapsed < 1.5
    expensive = results["expensive"]
    assert expensive.holds is False and expensive.timed_out and expensive.unresolved
    assert "time bound" in expensive.error
    # The deadline is shared: what comes after the expensive one is unresolved too, never holds.
    cheap = results["no_push_to_protected"]
    assert cheap.holds is False and cheap.timed_out
    assert [r.name for r in contract.violations({"tool": "git", "operation": "push"},
                                                {"repository.protected": False},
                                                deadline=time.monotonic() + 0.3)] == ["expensive",
                                                                                      "no_push_to_protected"]


def test_without_a_deadline_an_invariant_check_is_still_bounded() -> None:
    from statewise import contract as contract_module

    contract = _with_invariant(EXPENSIVE)
    start = time.monotonic()
    results = contract.check_invariants({"tool": "git", "operation": "push"}, {"repository.protected": False})
    assert time.monotonic() - start < contract_module.INVARIANT_TIME_BUDGET + 1.0
    assert not next(r for r in results if r.name == "expensive").holds


def test_a_costly_but_finishing_invariant_gives_its_real_answer() -> None:
    # 90**3 evaluations: about 0.6 s at load 2, a fifth of the 3 s bound, so a loaded machine
    # does not cut it (120**3 took 1.3 s at load 2 and hit the bound at load 5-7).
    small = "[" + ", ".join(str(n) for n in range(90)) + "]"
    contract = _with_invariant(f"{small}.all(a, {small}.all(b, {small}.all(c, a + b + c >= 0)))")
    results = {r.name: r for r in contract.check_invariants(
        {"tool": "git", "operation": "push"}, {"repository.protected": False}, deadline=time.monotonic() + 20)}
    assert results["expensive"].holds is True and results["expensive"].error is None
    failing = _with_invariant(f"{small}.all(a, {small}.all(b, {small}.all(c, a + b + c < 200)))")
    result = next(r for r in failing.check_invariants({"tool": "git", "operation": "push"},
                                                      {"repository.protected": False},
                                                      deadline=time.monotonic() + 20) if r.name == "expensive")
    assert result.holds is False and result.error is None


def test_ordinary_invariants_are_unaffected_by_the_bound() -> None:
    results = builtin_contract().check_invariants(
        {"tool": "git", "operation": "push", "args": {"branch": "main", "force": True}},
        {"repository.protected": True, "user.allow_force_push": False, "git.current_branch": "main",
         "git.remote_moved": False})
    assert all(r.error is None and not r.timed_out for r in results)
    assert any(r.applies and not r.holds for r in results)


def test_a_shell_running_a_script_file_is_not_a_shell_string() -> None:
    for argv in ("[bash, -o, pipefail, ./check.sh, -s]", "[sh, --, ./check.sh]"):
        text = small_with(PROTECTION_VERIFIER, f"adapter: command\n    argv: {argv}\n    read: {{regex: '(.+)'}}")
        assert load_contract_text(text, "ok.yaml").verifiers["protection"].argv[0] in ("bash", "sh")
    for argv in ("[bash, -o, pipefail, -c, id]", "[bash, -e]", "[sh, --]"):
        text = small_with(PROTECTION_VERIFIER, f"adapter: command\n    argv: {argv}\n    read: {{regex: '(.+)'}}")
        assert contract_error(text).field == "verifiers.protection.argv"


