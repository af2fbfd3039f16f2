"""fencepost.adapters.codec: the exact JSON text the SQL stores keep values in."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fencepost.adapters.codec import TAG, Codec
from fencepost.spec.opaque import Opaque


@attrs.frozen
class Point:
    x: Any
    y: Any


@attrs.frozen
class Pair:
    left: Any
    right: Any = None


CODEC = Codec([Point, Pair])


def exact(a: Any, b: Any) -> bool:
    """Equal with equal types all the way down (1 is not 1.0, -0.0 is not 0.0, a tuple is no
    list, keys keep their order)."""
    return a == b and repr(a) == repr(b) and type(a) is type(b)


leaves = st.none() | st.booleans() | st.integers() | st.text() | st.floats(
    allow_nan=False, allow_infinity=False)
keys = st.integers() | st.text() | st.booleans() | st.none() | st.tuples(st.integers(), st.text())
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(), inner, max_size=4)
        | st.dictionaries(keys, inner, max_size=4)
        | st.builds(Point, inner, inner)
        | st.builds(Pair, inner, inner)
    ),
    max_leaves=20,
)


@given(values)
def test_every_value_comes_back_exactly(value: Any) -> None:
    text = CODEC.dumps(value)
    assert exact(CODEC.loads(text), value)
    assert text.isascii()
    assert CODEC.dumps(CODEC.loads(text)) == text  # one value, one text


@given(values)
def test_dump_value_is_plain_json_data(value: Any) -> None:
    data = CODEC.dump_value(value)
    assert json.loads(json.dumps(data)) == data
    assert exact(CODEC.load_value(data), value)


@pytest.mark.parametrize("number", [0, 1, -1, 2**70, 0.0, -0.0, 1.0, 1e300, 5e-324, -2.5])
def test_numbers_keep_their_type_and_sign(number: float) -> None:
    back = CODEC.loads(CODEC.dumps({"n": number, "t": (number,)}))
    assert exact(back, {"n": number, "t": (number,)})


def test_minus_zero_is_written_as_minus_zero() -> None:
    assert CODEC.dumps(-0.0) == "-0.0"
    assert repr(CODEC.loads("-0.0")) == "-0.0"
    assert CODEC.dumps([0, 0.0, True]) == "[0,0.0,true]"


def test_json_is_written_plainly_where_it_is_exact() -> None:
    assert CODEC.dumps({"a": [1, "b", None, False]}) == '{"a":[1,"b",null,false]}'


def test_tuples_non_string_keys_and_classes_are_tagged() -> None:
    assert CODEC.dumps((1, 2.0)) == '{"__t__":"tuple","v":[1,2.0]}'
    assert CODEC.dumps({3: None}) == '{"__t__":"dict","v":[[3,null]]}'
    assert CODEC.dumps(Point(1, "a")) == '{"__t__":"Point","v":{"x":1,"y":"a"}}'
    assert CODEC.loads('{"__t__":"Point","v":{"x":1,"y":"a"}}') == Point(1, "a")


def test_a_mapping_holding_the_tag_key_is_tagged_and_comes_back() -> None:
    value = {TAG: "tuple", "v": [1]}
    assert CODEC.dump_value(value) == {TAG: "dict", "v": [[TAG, "tuple"], ["v", [1]]]}
    assert exact(CODEC.loads(CODEC.dumps(value)), value)


def test_non_ascii_text_is_escaped_and_survives() -> None:
    text = CODEC.dumps("é\u2603\U0001f600\x00")
    assert text == '"\\u00e9\\u2603\\ud83d\\ude00\\u0000"'
    assert CODEC.loads(text) == "é\u2603\U0001f600\x00"


@pytest.mark.parametrize("value", [b"raw", bytearray(b"x"), {1, 2}, frozenset(), object()])
def test_values_that_are_not_json_data_are_refused(value: Any) -> None:
    with pytest.raises(TypeError, match=f"cannot store a {type(value).__name__}; use JSON data"):
        CODEC.dumps({"inside": [value]})


def test_bytes_are_refused_even_inside_a_class() -> None:
    with pytest.raises(TypeError, match="cannot store a bytes"):
        CODEC.dumps(Point(b"\x00", 1))


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_are_refused(number: float) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        CODEC.dumps([number])


def test_only_the_classes_it_was_built_with_are_stored() -> None:
    @attrs.frozen
    class Point:  # same name, another class
        x: Any
        y: Any

    with pytest.raises(TypeError, match="cannot store a Point"):
        CODEC.dumps(Point(1, 2))
    with pytest.raises(TypeError, match="cannot store a Opaque"):
        CODEC.dumps(Opaque("access#1"))
    with pytest.raises(KeyError):
        Codec([]).loads('{"__t__":"Point","v":{"x":1,"y":2}}')


def test_an_opaque_placeholder_round_trips_once_registered() -> None:
    codec = Codec([Opaque])
    value = (Opaque("access#1"), Opaque(("lease", 2)))
    assert exact(codec.loads(codec.dumps(value)), value)
    assert codec.dumps(Opaque("a")) == '{"__t__":"Opaque","v":{"meaning":"a"}}'


def test_the_docstring_example() -> None:
    codec = Codec([])
    assert repr(codec.loads(codec.dumps({"t": (1, 2.0), 3: None}))) == "{'t': (1, 2.0), 3: None}"
