"""Typed values: strict checks, no silent coercion."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statewise.errors import ValueTypeError
from statewise.values import ValueType, check_value, parse_value_text, render_value


@pytest.mark.parametrize(
    ("value_type", "good", "bad"),
    [
        ("bool", [True, False], ["true", 1, 0, None]),
        ("int", [0, -3, 10**12], [True, "3", 3.0]),
        ("string", ["", "pytest -x"], [3, None, ["a"]]),
        ("version", ["3.11.7", "3", "v20.1.0", "1.0.0rc1", "2.3.0-beta.1"], ["three", "3..1", 3.11, "", "v"]),
        ("path", ["/usr/bin/python3", "build", "C:/x"], ["", 3, "a\x00b"]),
        ("list", [[], ["a", "b"]], ["a,b", [1], None]),
    ],
)
def test_values_are_checked_strictly(value_type, good, bad):
    for value in good:
        assert check_value(value, value_type) == value
    for value in bad:
        with pytest.raises(ValueTypeError):
            check_value(value, value_type)


def test_enum_values_must_be_among_the_choices():
    assert check_value("uv", "enum", choices=["pip", "uv"]) == "uv"
    with pytest.raises(ValueTypeError) as info:
        check_value("conda", "enum", choices=["pip", "uv"], key="project.package_manager")
    assert "project.package_manager" in str(info.value) and "pip, uv" in str(info.value)


def test_command_line_text_parses_strictly():
    assert parse_value_text("true", "bool") is True
    assert parse_value_text("FALSE", "bool") is False
    assert parse_value_text("42", "int") == 42
    assert parse_value_text("a, b,,c", "list") == ["a", "b", "c"]
    assert parse_value_text("3.11", "version") == "3.11"
    for text, value_type in [("yes", "bool"), ("4.2", "int"), ("x", "version")]:
        with pytest.raises(ValueTypeError):
            parse_value_text(text, value_type)


@given(st.booleans() | st.integers() | st.lists(st.text(alphabet="abc", min_size=1)))
def test_render_then_parse_round_trips(value):
    value_type = ValueType.BOOL if isinstance(value, bool) else ValueType.INT if isinstance(value, int) else ValueType.LIST
    assert parse_value_text(render_value(value).strip("[]"), value_type) == value


def test_same_value_ignores_a_leading_v_on_versions_only():
    from statewise.values import same_value

    assert same_value("v20.1.0", "20.1.0", "version")
    assert not same_value("v20.1.0", "20.1.0", "string")
    assert not same_value(1, True, "int") and same_value(["a"], ["a"], "list")
