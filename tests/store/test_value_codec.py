"""The SQLite backend's value decoder reads common shapes directly; it must agree with JSON."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from statewise.store.sqlite import SQLiteStore, _decode_value

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(_values)
def test_decoding_what_the_store_encodes_gives_the_value_back(value):
    encoded = SQLiteStore._encode_json(None, value)  # the encoder uses no instance state
    assert _decode_value(encoded) == value
    assert type(_decode_value(encoded)) is type(json.loads(encoded))


def test_strings_that_look_like_literals_stay_strings():
    for text in ("true", "false", "null", "1", 'a"b', "back\\slash", "é"):
        assert _decode_value(json.dumps(text)) == text
