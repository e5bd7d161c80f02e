"""The CEL facade (statewise.expressions) and the contract's operation pre-filter."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import statewise.contract.invariants as invariants_module
from statewise.contract import builtin_contract, load_contract_text
from statewise.errors import ContractError
from statewise.expressions import (
    CEL_STANDARD_FUNCTIONS,
    INLINE_COST_LIMIT,
    Activation,
    ExpressionError,
    ExpressionNameError,
    ExpressionSyntaxError,
    ExpressionTimeout,
    compile_expression,
    equality_constraint,
    state_keys_read,
)
from statewise.planners.rules import load_playbook_text

VARIABLES = frozenset({"action", "state"})


def glob_match(text: str, pattern: str) -> bool:
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise TypeError("glob_match(text, pattern) needs two strings")
    return fnmatch.fnmatchcase(text, pattern)


FUNCTIONS = {"glob_match": glob_match}


def compile_(text: str, functions=None):
    return compile_expression(text, variables=VARIABLES, functions=FUNCTIONS if functions is None else functions)


def evaluate(text: str, action=None, state=None):
    activation = Activation({"action": action or {}, "state": state or {}}, functions=FUNCTIONS)
    return compile_(text).evaluate(activation)


# --- compiling ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ['state["a"] &&', "action.operation ==", "(", '"unterminated', "", "a b"])
def test_syntax_errors_are_expression_syntax_errors(text: str) -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_(text)
    assert "syntax error" in str(caught.value)
    assert isinstance(caught.value, ExpressionError)


def test_syntax_error_names_line_and_column() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_('action.operation == "x" &&\n  state["a"] +')
    error = caught.value
    assert (error.line, error.column) == (2, 15)
    assert "line 2, column 15" in str(error) and "'state[\"a\"] +'" in str(error)


def test_unknown_variable() -> None:
    with pytest.raises(ExpressionNameError) as caught:
        compile_("!stat.x")
    assert caught.value.name == "stat" and caught.value.kind == "variable"
    assert str(caught.value) == "unknown variable 'stat'; expressions see only action and state"


def test_unknown_function_and_method() -> None:
    with pytest.raises(ExpressionNameError) as caught:
        compile_('split("a")')
    assert caught.value.kind == "function" and "unknown function split()" in str(caught.value)
    assert "glob_match" in str(caught.value) and "size" in str(caught.value)  # lists what is available
    with pytest.raises(ExpressionNameError) as caught:
        compile_('action.args.path.split("/")')
    assert str(caught.value) == "unknown method .split()"
    with pytest.raises(ExpressionNameError):
        compile_('glob_match("a", "b")', functions={})  # custom functions exist only when given


def test_macro_used_with_the_wrong_arity_is_an_unknown_method() -> None:
    with pytest.raises(ExpressionNameError) as caught:
        compile_("state.x.exists(p)")
    assert caught.value.name == "exists"


@pytest.mark.parametrize(
    "text",
    [
        'state["l"].exists(p, glob_match(action.args.branch, p))',
        'state["l"].all(x, x != "") && state["l"].exists_one(x, x == "a")',
        'state["l"].map(x, x + "!").filter(y, y != "a!").size() == 1',
        'state["l"].map(x, x != "", x + "!") == []',
        'state["l"].exists(p, state["l"].exists(q, p == q))',
        'state["l"].exists(state, state == "a")',  # a macro variable may shadow a variable
        "type(action) == map && type(1) == int",  # type names are identifiers
    ],
)
def test_macro_variables_and_type_names_are_allowed(text: str) -> None:
    compile_(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("p && state.l.exists(p, p)", "p"),  # the same name outside its macro is unknown
        ("state.l.exists(p, true) && p", "p"),
        ("state.l.all(x, true).exists(y, x)", "x"),
        ("state.l.exists(p, q)", "q"),
    ],
)
def test_macro_variables_are_scoped_to_their_macro(text: str, name: str) -> None:
    with pytest.raises(ExpressionNameError) as caught:
        compile_(text)
    assert caught.value.name == name and caught.value.kind == "variable"


def test_every_allowed_standard_function_exists_in_the_engine() -> None:
    samples = {
        "size": 'size("ab") == 2', "int": 'int("3") == 3', "uint": "uint(3) == 3u",
        "double": "double(1) == 1.0", "string": 'string(1) == "1"', "bytes": 'bytes("a") == b"a"',
        "type": "type(1) == int", "dyn": "dyn(1) == 1", "duration": 'duration("1m") == duration("60s")',
        "timestamp": 'timestamp("2024-01-02T03:04:05Z") > timestamp("2024-01-01T00:00:00Z")',
        "matches": '"abc".matches("^a")', "contains": '"abc".contains("b")',
        "startsWith": '"abc".startsWith("a")', "endsWith": '"abc".endsWith("c")',
    }
    moment = 'timestamp("2024-01-02T03:04:05.006Z")'
    for getter in sorted(name for name in CEL_STANDARD_FUNCTIONS if name.startswith("get")):
        samples[getter] = f"{moment}.{getter}() >= 0"
    assert set(samples) == CEL_STANDARD_FUNCTIONS
    for name, text in samples.items():
        assert evaluate(text) is True, name


def test_every_operator_compiles() -> None:
    compile_(
        '!(1 + 2 - 3 * 4 / 5 % 6 < 7) || -1 <= 2 && 3 > 4 || 5 >= 6 || 1 != 2 || 1 == 2 '
        '|| ("a" in ["a"] ? [1][0] : 2) == 1 || state.l.exists(x, x) || state.l.all(x, x) '
        "|| state.l.exists_one(x, x) || size(state.l.map(x, x).filter(x, x)) == 0 || has(state.l)"
    )


def test_message_construction_is_rejected_at_compile_time() -> None:
    with pytest.raises(ExpressionError, match="not supported"):
        compile_("Foo{a: 1} == state")


# --- evaluating --------------------------------------------------------------------------------


def test_missing_key_is_an_expression_error() -> None:
    with pytest.raises(ExpressionError, match="no such key 'git.current_branch'"):
        evaluate('state["git.current_branch"] == "main"')
    with pytest.raises(ExpressionError, match="no such key 'branch'"):
        evaluate("action.args.branch == 'main'", action={"args": {}})


def test_type_error_is_an_expression_error() -> None:
    with pytest.raises(ExpressionError, match="no such overload"):
        evaluate('state["n"] + "x"', state={"n": 1})
    with pytest.raises(ExpressionError):
        evaluate('!state["s"]', state={"s": "text"})
    with pytest.raises(ExpressionError):
        evaluate("1 / 0 == 1")
    with pytest.raises(ExpressionError):
        evaluate("state.l[5]", state={"l": [1]})


def test_and_or_absorb_errors_when_the_other_side_decides() -> None:
    assert evaluate('state["missing"] && false') is False
    assert evaluate('false && state["missing"]') is False
    assert evaluate('state["missing"] || true') is True
    with pytest.raises(ExpressionError):
        evaluate('state["missing"] && true')
    assert evaluate('true ? 1 : state["missing"]') == 1


def test_has_in_and_null() -> None:
    action = {"args": {"force": True, "none": None}}
    assert evaluate("has(action.args.force) && action.args.force", action=action) is True
    assert evaluate("has(action.args.missing)", action=action) is False
    assert evaluate("has(action.args.none) && action.args.none == null", action=action) is True
    assert evaluate('"k" in state && !("j" in state)', state={"k": 1}) is True
    with pytest.raises(ExpressionError):  # has() on a missing intermediate field is an error
        evaluate("has(action.nothing.x)", action=action)


def test_custom_functions_are_called_and_their_errors_are_reported(capfd: pytest.CaptureFixture[str]) -> None:
    state = {"l": ["main", "release/*"]}
    assert evaluate('state.l.exists(p, glob_match("release/2", p))', state=state) is True
    assert evaluate('"release/2".glob_match("release/*")') is True  # method syntax works too
    with pytest.raises(ExpressionError) as caught:
        evaluate("state.l.exists(p, glob_match(1, p))", state=state)
    assert str(caught.value) == "glob_match(text, pattern) needs two strings"

    def fails(value: object) -> object:
        raise RuntimeError("out of order")

    expression = compile_expression("fails(1)", variables=frozenset(), functions={"fails": fails})
    with pytest.raises(ExpressionError, match="RuntimeError: out of order"):
        expression.evaluate({})
    assert capfd.readouterr().err == ""  # the engine's warning log does not reach stderr


def test_results_are_plain_python_values() -> None:
    assert evaluate("[1, 2.5, 'a', true, null, {'k': [1]}]") == [1, 2.5, "a", True, None, {"k": [1]}]
    assert evaluate("size(state)", state={"a": 1}) == 1


def test_one_activation_serves_many_expressions_and_a_mapping_works_too() -> None:
    activation = Activation({"action": {"operation": "git.push"}, "state": {"k": 2}}, functions=FUNCTIONS)
    texts = ['action.operation == "git.push"', 'state["k"] * 2', 'glob_match(action.operation, "git.*")']
    assert [compile_(text).evaluate(activation) for text in texts] == [True, 4, True]
    assert compile_('state["k"] == 2').evaluate({"action": {}, "state": {"k": 2}}) is True
    assert compile_("action.x").source == "action.x"


def test_unconvertible_values_are_expression_errors() -> None:
    with pytest.raises(ExpressionError, match="state cannot be passed to CEL"):
        Activation({"state": {"x": object()}})


# --- static reading of the text ------------------------------------------------------------------


def test_state_keys_read_ignores_strings_comments_and_fields() -> None:
    text = textwrap.dedent(
        """\
        state["a.b"] == 'state["not.a"]' // state["comment"]
        && state['c.d[x]'] && action.state["field"] && "k" in state && state[r"raw.key"]
        """
    )
    assert state_keys_read(text) == ["a.b", "c.d[x]", "raw.key"]
    assert state_keys_read('state["with\\"escape"]') == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('action.operation == "git.push"', {"git.push"}),
        ('"git.push" == action.operation && has(action.args.force)', {"git.push"}),
        ('action["operation"] == "a"', {"a"}),
        ('action.operation in ["a", "b",] && x', {"a", "b"}),
        ('(action.operation in ["a", "b"] && y) && (z && action.operation == "b")', {"b"}),
        ('((action.operation == "a"))', {"a"}),
        ('action.operation in [] && x', set()),
        ('action.operation == "a" && (x || y)', {"a"}),
    ],
)
def test_equality_constraint_reads_top_level_conjunctions(text: str, expected: set[str]) -> None:
    assert equality_constraint(text, ("action", "operation")) == frozenset(expected)


@pytest.mark.parametrize(
    "text",
    [
        'action.operation == "a" || x',
        'action.operation == "a" && x || y',
        'action.operation == "a" && x ? y : z',
        '!(action.operation == "a") && x',
        'action.operation != "a"',
        'action.operation == "a\\x62"',
        'action.operation == b"a"',
        'action.operation == "a" == true',
        'action.operation.size() == 1 && action.operation == "a".x',
        'action.operation in ["a", x]',
        'action.operation in ["a"] + ["b"]',
        'other.operation == "a"',
        'action.op == "a"',
        "true",
        'has(action.operation) && [1].exists(x, action.operation == "a")',
    ],
)
def test_equality_constraint_is_unknown_for_anything_else(text: str) -> None:
    assert equality_constraint(text, ("action", "operation")) is None


# --- the operation pre-filter is sound --------------------------------------------------------------

NAMES = ["git.push", "git.pull", "fs.delete", "stop", "a", "a.b", "x_y"]
name = st.sampled_from(NAMES)
lit = st.sampled_from(["true", "false", "null", "1", "'main'", '"git.push"', "[]", "1.5"])
arg = st.sampled_from(["force", "branch", "path", "missing"])
key = st.sampled_from(["k.a", "k.b", "k.missing"])


operation_tests = st.one_of(
    name.map(lambda n: f'action.operation == "{n}"'),
    name.map(lambda n: f'"{n}" == action.operation'),
    name.map(lambda n: f'action["operation"] == "{n}"'),
    st.lists(name, max_size=3).map(lambda ns: "action.operation in [" + ", ".join(f'"{n}"' for n in ns) + "]"),
)


def _atoms() -> st.SearchStrategy[str]:
    return st.one_of(
        operation_tests,
        name.map(lambda n: f'action.operation != "{n}"'),
        name.map(lambda n: 'action.operation == "' + n.replace(".", "\\x2e") + '"'),
        arg.map(lambda a: f"has(action.args.{a})"),
        arg.map(lambda a: f"action.args.{a}"),
        st.tuples(arg, lit).map(lambda t: f"action.args.{t[0]} == {t[1]}"),
        st.tuples(key, lit).map(lambda t: f'state["{t[0]}"] == {t[1]}'),
        key.map(lambda k: f'"{k}" in state'),
        key.map(lambda k: f'state["{k}"]'),
        st.sampled_from(["true", "false", "1 / 0 == 1", "action.operation.startsWith('git.')"]),
    )


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, inner).map(lambda t: f"{t[0]} && {t[1]}"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]} || {t[1]}"),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"!({e})"),
        # CEL's grammar wants the middle operand of ?: to be a ||-expression: parenthesize it.
        st.tuples(inner, inner, inner).map(lambda t: f"{t[0]} ? ({t[1]}) : {t[2]}"),
    )


anything = st.recursive(_atoms(), _extend, max_leaves=8)
# Top-level conjunctions that mention the operation, the case the pre-filter acts on.
conjunctions = st.recursive(
    st.lists(st.one_of(operation_tests, anything), min_size=2, max_size=4).map(" && ".join),
    lambda inner: st.tuples(inner, st.one_of(inner, anything)).map(lambda t: f"({t[0]}) && {t[1]}"),
    max_leaves=3,
)
conditions = st.one_of(anything, conjunctions)
values = st.one_of(st.booleans(), st.none(), st.integers(-2, 2), st.sampled_from(["main", "git.push", "", "x"]))
operations = st.one_of(name, st.text(max_size=12))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    condition=conditions,
    operation=operations,
    args=st.dictionaries(arg, values, max_size=3),
    state=st.dictionaries(key, values, max_size=2),
)
def test_a_skipped_when_really_evaluates_to_false(condition, operation, args, state) -> None:
    expression = compile_(condition)
    required = equality_constraint(condition, ("action", "operation"))
    if required is None or operation in required:
        return
    activation = Activation({"action": {"operation": operation, "args": args}, "state": state})
    assert expression.evaluate(activation) is False


SMALL = textwrap.dedent(
    """\
    name: filtered
    version: 1
    state:
      k.a: {type: bool, scope: global, authority: agent}
      k.b: {type: string, scope: global, authority: agent}
      k.missing: {type: string, scope: global, authority: agent}
    operations:
      git.push: {tool: git, risk: high}
    invariants:
      - name: generated
        when: WHEN
        check: 'true'
        message: m
    """
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    condition=conditions,
    operation=operations,
    args=st.dictionaries(arg, values, max_size=3),
    state=st.dictionaries(key, values, max_size=2),
)
def test_check_invariants_agrees_with_full_evaluation(condition, operation, args, state) -> None:
    contract = load_contract_text(SMALL.replace("WHEN", json.dumps(condition)), "filtered.yaml")
    action = {"tool": "t", "operation": operation, "args": args}
    [result] = contract.check_invariants(action, state)
    try:
        applies = compile_(condition).evaluate(Activation({"action": action, "state": state}))
    except ExpressionError:
        assert not result.holds and result.error.startswith("when:")
        return
    if applies is False:
        assert result.holds and not result.applies
    elif applies is True:
        assert result.holds and result.applies and result.error is None
    else:
        assert not result.holds and "not a bool" in result.error


def test_prefiltered_invariants_are_never_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    coding = builtin_contract()

    def no_activation(*args: object, **kwargs: object) -> None:
        raise AssertionError("an expression was evaluated")

    monkeypatch.setattr(invariants_module, "Activation", no_activation)
    stop = {"tool": "statewise", "operation": "stop", "args": {"reason": "x"}}
    assert all(r.holds and not r.applies for r in coding.check_invariants(stop, {}))
    assert coding.invariant_keys(stop) == ()
    assert coding.invariant_keys({"tool": "git", "operation": "checkout", "args": {}}) == ()


def test_invariant_keys_reads_only_invariants_that_may_apply() -> None:
    coding = builtin_contract()
    push = {"tool": "git", "operation": "push", "args": {"branch": "main", "force": True}}
    assert coding.invariant_keys(push) == (
        "repository.protected_branches", "git.current_branch", "repository.protected", "git.remote_moved",
        "user.allow_force_push", "git.default_branch",  # a push naming main or master: is it the default?
    )
    install = {"tool": "pip", "operation": "install", "args": {"package": "requests"}}
    # One invariant checks an install against its own ecosystem's manager (a repository can be
    # Python and Node at once, issue 22): it reads both sides' keys and the repository-wide one.
    assert set(coding.invariant_keys(install)) == {"runtime.python_interpreter", "python.venv_path",
                                                    "python.package_index", "project.package_manager",
                                                    "python.package_manager", "node.package_manager"}


def test_action_without_args_has_an_empty_args_map() -> None:
    results = builtin_contract().check_invariants(
        {"tool": "git", "operation": "git.push"},
        {"repository.protected_branches": [], "git.current_branch": "main", "repository.protected": False},
    )
    force = next(r for r in results if r.name == "no_force_push_to_protected_branch")
    assert force.holds and not force.applies  # has(action.args.force) is false, not an error


# --- the rule planner's conditions -----------------------------------------------------------------


def test_playbook_conditions_are_checked_for_names_at_load_time() -> None:
    text = "name: x\nfamilies: {f: {rules: [{when: 'stat.x', action: {tool: a, operation: b}}]}}"
    with pytest.raises(ContractError) as caught:
        load_playbook_text(text, "book.yaml")
    assert "unknown variable 'stat'" in str(caught.value) and "rules[0].when" in str(caught.value)
    ok = "name: x\nfamilies: {f: {rules: [{when: 'masked.exists(k, k == task.branch) && size(param) == 0', " \
         "action: {tool: a, operation: b}}]}}"
    load_playbook_text(ok, "book.yaml")


# --- the engine import ---------------------------------------------------------------------


def test_the_engine_is_imported_at_first_use_and_without_its_command_line_module():
    code = textwrap.dedent(
        """\
        import json, sys
        import statewise.expressions as e
        seen = {"import": sorted(m for m in sys.modules if m.split(".")[0] in ("cel", "prompt_toolkit", "typer"))}
        value = e.compile_expression("1 + 2 == 3", variables=()).evaluate({})
        seen["use"] = sorted(m for m in sys.modules if m.split(".")[0] in ("cel", "prompt_toolkit", "typer"))
        import cel  # a later full import elsewhere in the process still works
        seen["same"] = cel.compile is e._engine().compile and cel.compile("2 > 1").execute({}) is True
        seen["value"] = value
        print(json.dumps(seen))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["import"] == []
    assert seen["use"] == ["cel.cel"]
    assert seen["same"] is True and seen["value"] is True


# --- cost estimates and time bounds --------------------------------------------------------

RANGE = "[" + ", ".join(str(n) for n in range(50)) + "]"


def test_the_cost_estimate_grows_with_nesting_and_with_the_data():
    flat = compile_(f"{RANGE}.all(a, a >= 0)")
    nested = compile_(f"{RANGE}.all(a, {RANGE}.all(b, {RANGE}.all(c, a + b + c >= 0)))")
    over_data = compile_("action.args.paths.all(p, state[\"fs.protected_paths\"].all(q, p != q))")
    assert flat.estimated_cost({}) < 1_000 < nested.estimated_cost({})
    assert nested.estimated_cost({}) > 50 ** 3
    small = {"action": {"args": {"paths": ["a"] * 3}}, "state": {"fs.protected_paths": ["b"] * 3}}
    large = {"action": {"args": {"paths": ["a"] * 3000}}, "state": {"fs.protected_paths": ["b"] * 3000}}
    assert over_data.estimated_cost(small) < 1_000 < INLINE_COST_LIMIT < over_data.estimated_cost(large)


def test_a_costly_expression_is_stopped_at_its_bound():
    runaway = compile_(f"{RANGE}.all(a, {RANGE}.all(b, {RANGE}.all(c, {RANGE}.all(d, {RANGE}.all(e, a+b+c+d+e >= 0)))))")
    start = time.monotonic()
    with pytest.raises(ExpressionTimeout, match="time bound"):
        runaway.evaluate({}, timeout=0.3)
    assert time.monotonic() - start < 1.0
    with pytest.raises(ExpressionTimeout, match="spent before"):
        runaway.evaluate({}, deadline=time.monotonic() - 1)


def test_a_costly_expression_that_finishes_in_time_gives_its_value_and_its_errors():
    medium = "[" + ", ".join(str(n) for n in range(110)) + "]"
    expression = compile_(f"{medium}.all(a, {medium}.all(b, {medium}.all(c, a + b + c >= 0)))")
    assert expression.estimated_cost({}) > INLINE_COST_LIMIT  # so it runs in a child process
    assert expression.evaluate({}, timeout=30) is True
    counted = compile_(f"{medium}.filter(a, {medium}.all(b, {medium}.exists(c, a + b + c == 300))).size()")
    assert counted.evaluate({}, timeout=30) == 0
    missing = compile_(f'{medium}.all(a, {medium}.all(b, {medium}.all(c, state["nope"] == a)))')
    with pytest.raises(ExpressionError, match="no such key 'nope'") as caught:
        missing.evaluate({"state": {}}, timeout=30)
    assert not isinstance(caught.value, ExpressionTimeout)


def test_an_expression_longer_than_the_limit_is_refused():
    with pytest.raises(ExpressionSyntaxError, match="characters long"):
        compile_(" || ".join(["true"] * 6000))
