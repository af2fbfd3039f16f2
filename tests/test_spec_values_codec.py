"""fencepost.spec.values: the one exact codec, as the SQL stores use it (Codec) and as histories,
reports and the wire do (encode/decode)."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fencepost.spec.opaque import Forged, ForgedValue, Opaque, Ref
from fencepost.spec.outcome import Crash, Err, Ok, outcome_from_json, outcome_to_json
from fencepost.spec.values import Codec, decode, encode


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


leaves = (st.none() | st.booleans() | st.integers() | st.text() | st.binary()
          | st.floats(allow_nan=False))
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


def test_tuples_non_string_keys_bytes_and_classes_are_tagged() -> None:
    assert CODEC.dumps((1, 2.0)) == '{"__tuple__":[1,2.0]}'
    assert CODEC.dumps({3: None}) == '{"__dict__":[[3,null]]}'
    assert CODEC.dumps(b"\x00\xff") == '{"__bytes__":"00ff"}'
    assert CODEC.dumps(Point(1, "a")) == '{"__type__":"Point","x":1,"y":"a"}'
    assert CODEC.loads('{"__type__":"Point","x":1,"y":"a"}') == Point(1, "a")


@pytest.mark.parametrize("key", ["__tuple__", "__type__", "__bytes__", "__opaque__"])
def test_a_mapping_holding_a_reserved_key_is_tagged_and_comes_back(key: str) -> None:
    value = {key: [1]}
    assert CODEC.dump_value(value) == {"__dict__": [[key, [1]]]}
    assert exact(CODEC.loads(CODEC.dumps(value)), value)


def test_non_ascii_text_is_escaped_and_survives() -> None:
    text = CODEC.dumps("é\u2603\U0001f600\x00")
    assert text == '"\\u00e9\\u2603\\ud83d\\ude00\\u0000"'
    assert CODEC.loads(text) == "é\u2603\U0001f600\x00"


@pytest.mark.parametrize("value", [bytearray(b"x"), {1, 2}, frozenset(), object(), Ref("a"),
                                   Forged("f"), ForgedValue("f")])
def test_values_that_are_not_json_data_are_refused(value: Any) -> None:
    with pytest.raises(TypeError, match=f"cannot store a {type(value).__name__}; use JSON data"):
        CODEC.dumps({"inside": [value]})


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_are_tagged_and_come_back(number: float) -> None:
    text = CODEC.dumps([number])
    assert text == f'[{{"__float__":"{number!r}"}}]'
    assert repr(CODEC.loads(text)) == repr([number])


def test_only_the_classes_it_was_built_with_are_stored() -> None:
    @attrs.frozen
    class Point:  # same name, another class
        x: Any
        y: Any

    with pytest.raises(TypeError, match="cannot store a Point"):
        CODEC.dumps(Point(1, 2))
    with pytest.raises(TypeError, match="cannot store a Opaque"):
        CODEC.dumps(Opaque("access#1"))
    with pytest.raises(ValueError, match="unknown value class 'Point'"):
        Codec([]).loads('{"__type__":"Point","x":1,"y":2}')


def test_an_opaque_placeholder_round_trips_once_registered() -> None:
    codec = Codec([Opaque])
    value = (Opaque("access#1"), Opaque(("lease", 2)))
    assert exact(codec.loads(codec.dumps(value)), value)
    assert codec.dumps(Opaque("a")) == '{"__type__":"Opaque","meaning":"a"}'


def test_the_docstring_example() -> None:
    codec = Codec([])
    assert repr(codec.loads(codec.dumps({"t": (1, 2.0), 3: None}))) == "{'t': (1, 2.0), 3: None}"


@given(values)
def test_encode_is_the_same_codec_for_the_registered_classes(value: Any) -> None:
    # encode/decode know the registered value classes, not the test's: without them the two
    # write the same data
    plain = CODEC.dump_value(value) if not _has_class(value) else None
    if plain is not None:
        assert encode(value) == plain
        assert exact(decode(json.loads(json.dumps(encode(value)))), value)


def _has_class(value: Any) -> bool:
    if attrs.has(type(value)):
        return True
    if isinstance(value, dict):
        return any(_has_class(k) or _has_class(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_class(v) for v in value)
    return False


def test_encode_writes_stand_ins_and_unknown_values_it_cannot_read_back_as_text() -> None:
    value = [Ref("lease#1"), Forged("f"), ForgedValue("g"), Point(1, 2), {1, 2}]
    data = encode(value)
    assert data == [{"__ref__": "lease#1"}, {"__forged__": "f"}, {"__forged_value__": "g"},
                    {"__opaque__": "Point(x=1, y=2)"}, {"__opaque__": "{1, 2}"}]
    back = decode(data)
    assert back[:2] == [Ref("lease#1"), Forged("f")]
    assert isinstance(back[2], ForgedValue) and back[2].label == "g"
    assert back[3:] == ["Point(x=1, y=2)", "{1, 2}"]


@pytest.mark.parametrize(("data", "message"), [
    ({"__tuple__": 1}, "__tuple__ holds a list"),
    ({"__dict__": [[1]]}, "__dict__ holds \\[key, value\\] pairs"),
    ({"__dict__": [[[1], 2]]}, "unhashable dict key"),
    ({"__bytes__": "zz"}, "__bytes__ holds hex digits"),
    ({"__float__": "one"}, "__float__ holds nan, inf or -inf"),
    ({"__type__": "NoSuchClass"}, "unknown value class 'NoSuchClass'"),
])
def test_data_no_encode_writes_is_a_value_error(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode(data)
    with pytest.raises(ValueError, match=message):  # a store's column: the parser's hook
        CODEC.loads(json.dumps(data))


tags = st.sampled_from(["__type__", "__tuple__", "__dict__", "__ref__", "__bytes__",
                        "__float__", "__opaque__", "Point", "Pair", "x", "y", "left"])
documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | tags | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tags | st.text(), inner,
                                                                max_size=3),
    max_leaves=12,
)


@given(documents)
def test_a_column_read_through_the_parsers_hook_decodes_as_the_walk_does(document: Any) -> None:
    """``Codec.loads`` decodes each object as the parser makes it; any JSON text, tags used
    well or badly, gives what decoding the parsed document does: the same value, or a
    ValueError."""
    text = json.dumps(document)
    try:
        walked = CODEC.load_value(json.loads(text))
    except ValueError:
        with pytest.raises(ValueError):
            CODEC.loads(text)
        return
    assert exact(CODEC.loads(text), walked)


@pytest.mark.parametrize("outcome", [Ok({"n": 1}), Ok(None), Err("not_found", "gone", {"k": 1}),
                                     Crash("ValueError", "boom")])
def test_an_outcome_comes_back_from_its_json_as_it_was(outcome: Any) -> None:
    assert outcome_from_json(json.loads(json.dumps(outcome_to_json(outcome)))) == outcome


@pytest.mark.parametrize(("data", "said"), [
    ([], "an outcome is a JSON object, not []"),
    ({"err": 5}, "error code 5 is not a string"),
    ({"value": 1}, "an outcome has one of ok, err, crash: {'value': 1}"),
])
def test_json_that_no_outcome_writes_is_refused(data: Any, said: str) -> None:
    """A saved history or report edited by hand (or by a hostile store's text) loads as the
    outcome it holds, or not at all."""
    with pytest.raises(ValueError) as refused:
        outcome_from_json(data)
    assert str(refused.value) == said
