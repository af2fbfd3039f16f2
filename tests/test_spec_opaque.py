"""fencepost.spec.opaque: how answers with store-minted values agree, and how refs resolve."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType
from typing import Any, NamedTuple

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fencepost.spec.opaque import (
    MISSING,
    ByIdentity,
    Forged,
    ForgedMeaning,
    ForgedValue,
    Opaque,
    Ref,
    agree,
    evolved,
    fields_walk,
    harvest,
    init_fields,
    known,
    names_opaque,
    resolve,
)


@attrs.frozen
class Lease:
    task: Any
    token: Any
    note: Any = attrs.field(default="", eq=False)


@attrs.frozen
class Other:
    task: Any
    token: Any


@attrs.frozen
class Derived:
    base: Any
    cached: Any = attrs.field(init=False, default=0)


# --- agree -----------------------------------------------------------------------------------


@pytest.mark.parametrize("real", ["token", 0, b"\x00", ("a",), object(), False])
def test_an_opaque_value_agrees_with_any_real_value(real: Any) -> None:
    assert agree(Opaque("access#1"), real)


@pytest.mark.parametrize("real", [None, ForgedValue("guess")])
def test_an_opaque_value_never_agrees_with_none_or_a_forged_value(real: Any) -> None:
    assert not agree(Opaque("access#1"), real)


@pytest.mark.parametrize(("expected", "actual"), [
    (1, 1.0), (1.0, 1), (0.0, -0.0), (-0.0, 0.0), (1, True), (True, 1), (0, False),
    (False, 0), (None, 0), (None, ""), ("1", 1), (1, "1"), (True, 1.0),
])
def test_numbers_agree_only_with_their_own_type_and_sign(expected: Any, actual: Any) -> None:
    assert not agree(expected, actual)


@pytest.mark.parametrize(("expected", "actual"), [
    (1, 1.0), (1.0, 1), (0.0, -0.0), (-0.0, 0.0), (1, True), (True, 1), (0, False),
    (False, 0), (None, 0), (None, ""), ("1", 1), (1, "1"), (True, 1.0), (1, 2), ("a", "b"),
])
def test_a_value_class_field_agrees_as_the_leaf_alone_does(expected: Any, actual: Any) -> None:
    # str, None and int fields and dict values are compared inline: the same answers as the
    # leaf branch
    assert not agree(Lease(expected, 0), Lease(actual, 0))
    assert agree(Lease(expected, 0), Lease(expected, 0))
    assert agree(Lease(actual, 0), Lease(actual, 0))
    assert not agree({"k": expected}, {"k": actual})
    assert agree({"k": expected, "o": Opaque("m")}, {"o": "x", "k": expected})


@pytest.mark.parametrize("value", [0, 1, -7, 2**70, 0.0, -0.0, 1.5, True, False, None, "", "x"])
def test_a_leaf_agrees_with_itself(value: Any) -> None:
    assert agree(value, value)


def test_a_nan_agrees_with_a_nan() -> None:
    assert agree(float("nan"), float("nan"))  # the same JSON text, unlike ==


def test_a_value_class_agrees_field_by_field_on_its_compared_fields() -> None:
    assert agree(Lease(Opaque("t"), 3, note="a"), Lease("real", 3, note="b"))
    assert not agree(Lease(Opaque("t"), 3), Lease("real", 4))
    assert not agree(Lease(Opaque("t"), 3), Lease(None, 3))
    assert not agree(Lease("t", 3), Other("t", 3))  # same fields, another class
    assert not agree(Lease("t", 3), {"task": "t", "token": 3})


def test_sequences_agree_item_by_item_whether_tuple_or_list() -> None:
    assert agree((Opaque("a"), 1), ["x", 1])
    assert agree([1, 2], (1, 2))
    assert not agree((1, 2), (1, 2, 3))
    assert not agree((1, 2), (2, 1))
    assert not agree((1,), "1")


def test_mappings_agree_on_the_same_keys_and_agreeing_values() -> None:
    assert agree({"a": Opaque("m"), "b": 1}, {"b": 1, "a": "minted"})
    assert not agree({"a": 1}, {"a": 1, "b": 2})
    assert not agree({"a": 1, "b": 2}, {"a": 1})
    assert not agree({"a": 1}, {"b": 1})
    assert not agree({"a": Opaque("m")}, {"a": None})
    assert agree({1: "x"}, {1.0: "x"})  # keys compare as a set of keys does
    assert not agree({"a": 1}, {"a": 1.0})
    assert not agree({"a": 1}, [("a", 1)])


class _Count(int):
    pass


def test_a_number_of_another_class_agrees_only_with_one_of_its_class_and_text() -> None:
    assert agree(_Count(1), _Count(1))
    assert not agree(_Count(1), 1.0)
    assert not agree(_Count(1), _Count(2))
    assert not agree(_Count(1), True) and not agree(_Count(0), False)  # a bool is no number


def test_a_sequence_never_agrees_with_a_mapping() -> None:
    assert not agree([("a", 1)], {"a": 1}) and not agree({"a": 1}, [("a", 1)])
    assert not agree({"a": 1}, ["a"]) and not agree({0: 1}, [1])


def test_bytes_and_values_of_no_other_kind_agree_when_equal() -> None:
    assert agree(b"x", b"x") and agree((b"x",), [b"x"])
    assert not agree(b"x", b"y") and not agree(b"x", "x")


def test_a_mapping_that_is_no_plain_dict_agrees_key_by_key_as_a_dict_does() -> None:
    """The model may hold another mapping (an ordered or a read-only one): every key must
    agree, not some."""
    assert agree(OrderedDict(a=Opaque("m"), b=2), {"b": 2, "a": "minted"})
    assert agree(MappingProxyType({"a": 1, "b": 2}), MappingProxyType({"b": 2, "a": 1}))
    assert not agree(OrderedDict(a=1, b=2), OrderedDict(a=1, b=3))
    assert not agree(MappingProxyType({"a": 1, "b": 2}), {"a": 2, "b": 2})
    assert not agree(OrderedDict(a=1), {"a": 1, "b": 2})


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)
    | st.builds(Other, inner, inner),
    max_leaves=12,
))
def test_every_plain_value_agrees_with_itself(value: Any) -> None:
    assert agree(value, value)


# --- harvest ---------------------------------------------------------------------------------


def test_harvest_pairs_each_meaning_with_the_real_value_in_order() -> None:
    expected = (Lease(Opaque("task#1"), Opaque("lease#1")), [Opaque(("access", 2))])
    actual = [Lease("T1", "L1", note="n"), ("A2",)]
    assert harvest(expected, actual) == [("task#1", "T1"), ("lease#1", "L1"),
                                         (("access", 2), "A2")]


def test_harvest_finds_nothing_outside_opaque_places_or_across_classes() -> None:
    assert harvest(Lease("t", 1), Lease("t", 1)) == []
    assert harvest(Lease(Opaque("t"), 1), Other("T", 1)) == []
    assert harvest("abc", "abc") == []
    assert harvest(None, None) == []
    assert harvest({"a": Opaque("m")}, {"a": "x"}) == []  # mappings hold no minted values


def test_harvest_of_answers_of_another_shape_pairs_only_what_both_hold() -> None:
    """A read-back that went on past a difference still binds what it can: a sequence against
    no sequence finds nothing, a shorter one pairs what is there (never an exception)."""
    assert harvest([Opaque("a")], None) == [] and harvest((Opaque("a"),), "xy") == []
    assert harvest([Opaque("a"), Opaque("b")], ["x"]) == [("a", "x")]
    assert harvest((Lease(Opaque("t"), 1),), [Lease("T", 1), "extra"]) == [("t", "T")]


@attrs.frozen
class _NamedOpaque(Opaque):
    """A subclass: the walks take it as an :class:`Opaque`."""


def test_a_subclass_of_opaque_names_what_it_means() -> None:
    memo = ByIdentity(8)
    assert names_opaque(_NamedOpaque("task#1"), memo)
    assert names_opaque(Lease(_NamedOpaque("task#1"), 1), memo)
    assert not names_opaque(_NamedOpaque(("access", 1)), memo)
    assert known(_NamedOpaque("task#1"), {"task#1": "T1"}.__getitem__) == "T1"


def test_names_opaque_is_whether_a_harvest_can_find_a_name() -> None:
    memo = ByIdentity(8)
    named = Lease(Opaque("task#1"), 1)
    assert names_opaque(named, memo) and names_opaque([("x", named)], memo)
    assert names_opaque(Opaque("lease#1"), memo)
    for none in (Lease("t", 1), Lease(Opaque(("access", 2)), 1), {"a": Opaque("m")}, "abc",
                 None, [Other(1, (2, "3"))]):
        assert not names_opaque(none, memo)
        assert not [m for m, _ in harvest(none, none) if isinstance(m, str)]
    assert memo.get(named) is True and memo.get(Lease("t", 1)) is MISSING  # kept by identity


@attrs.frozen
class Aliased:
    _private: Any
    shown: Any = 0
    later: Any = attrs.field(default=1, kw_only=True)
    derived: Any = attrs.field(init=False, default=2)


def test_evolved_is_attrs_evolve_by_position_or_by_keyword() -> None:
    assert evolved(Lease("t", 1, note="n"), {"token": 2}) == Lease("t", 2, note="n")
    assert evolved(Lease("t", 1, note="n"), {"note": "m"}).note == "m"  # eq=False fields too
    value = Aliased("p", 3, later=4)
    for changes in ({}, {"_private": "q"}, {"later": 5, "shown": 6}):
        assert evolved(value, changes) == attrs.evolve(
            value, **{k.lstrip("_"): v for k, v in changes.items()})
    assert evolved(Derived(1), {"base": 7}) == Derived(7)


def test_a_fields_walk_rebuilds_only_what_changed_and_only_what_is_not_kept() -> None:
    seen: list[tuple[Any, ...]] = []

    def rebuild(field: Any, *extra: Any) -> Any:
        seen.append((field, *extra))
        return field.upper() if isinstance(field, str) else field

    walk = fields_walk(Lease, frozenset({int}), 2)
    assert walk is not None and fields_walk(Lease, frozenset({int}), 2) is walk
    same = Lease(1, 2, note=(3,))
    assert walk(same, rebuild, "a", "b") is same and seen == [((3,), "a", "b")]
    changed = walk(Lease("t", 2, note="n"), rebuild, "a", "b")
    assert (changed.task, changed.token, changed.note) == ("T", 2, "N")
    assert fields_walk(dict, frozenset()) is None and fields_walk(Lease, frozenset()) is not walk


def test_a_fields_walk_builds_a_class_taking_keywords_by_keyword_and_skips_fields_outside_init(
) -> None:
    walk = fields_walk(Aliased, frozenset())
    assert walk is not None
    value = Aliased("p", "s", later="l")
    built = walk(value, str.upper)
    assert built == Aliased("P", "S", later="L") and built.derived == 2
    walk = fields_walk(Derived, frozenset())
    assert walk is not None and walk(Derived("b"), str.upper) == Derived("B")


def test_a_class_taking_keywords_is_compared_filled_in_and_resolved_by_its_fields() -> None:
    value = Aliased(Opaque("task#1"), Ref("task#1"), later=[Opaque("task#1")])
    assert known(value, {"task#1": "T1"}.__getitem__) == Aliased("T1", Ref("task#1"),
                                                                 later=["T1"])
    assert resolve(value, lambda r: "R") == Aliased(Opaque("task#1"), "R",
                                                    later=[Opaque("task#1")])
    assert agree(value, Aliased("x", Ref("task#1"), later=["y"]))
    assert not agree(value, Aliased("x", Ref("task#1"), later=["y", "z"]))
    assert not agree(Aliased(1, 2, later=3), Aliased(1, 2, later=4))


# --- known -----------------------------------------------------------------------------------


def test_known_fills_in_the_values_already_minted() -> None:
    minted = {"task#1": "T1"}
    value = (Lease(Opaque("task#1"), Opaque("lease#1")), [Opaque("task#1")],
             {"k": Opaque("task#1")})
    assert known(value, minted.__getitem__) == (
        Lease("T1", Opaque("lease#1")), ["T1"], {"k": "T1"})


class _Pair(NamedTuple):
    left: Any
    right: Any


class _Items(list[Any]):
    pass


class _Fields(dict[str, Any]):
    pass


def test_known_fills_in_inside_tuples_lists_and_dicts_of_other_classes_too() -> None:
    minted = {"task#1": "T1"}
    filled = known((_Pair(Opaque("task#1"), 1), _Items([Opaque("task#1")]),
                    _Fields(k=Opaque("task#1"))), minted.__getitem__)
    assert filled == (("T1", 1), ["T1"], {"k": "T1"})


def test_known_returns_the_same_object_when_nothing_is_minted() -> None:
    value = (Lease(Opaque("lease#9"), 1), [Opaque("x")], {"k": 1})
    assert known(value, {}.__getitem__) is value


def test_known_keeps_no_value_naming_what_is_not_minted_yet() -> None:
    """What is kept stays right as names are minted: a value that named one not minted yet
    (and every value around it) is walked again, and fills it in once it is minted."""
    memo, minted = ByIdentity(8), {"lease#1": "L1"}
    inner, plain = Lease(Opaque("task#1"), Opaque("lease#1")), Other(1, "x")
    outer = Other(inner, plain)
    assert known(outer, minted.__getitem__, memo) == Other(Lease(Opaque("task#1"), "L1"), plain)
    assert memo.misses == 1
    assert memo.get(outer) is MISSING and memo.get(inner) is MISSING
    assert memo.get(plain) is plain  # it names nothing: kept
    minted["task#1"] = "T1"
    assert known(outer, minted.__getitem__, memo) == Other(Lease("T1", "L1"), plain)
    assert memo.get(outer) == Other(Lease("T1", "L1"), plain) and memo.misses == 1


def test_known_leaves_meanings_that_are_not_names() -> None:
    value = Opaque(("access", 1))
    assert known(value, lambda _name: pytest.fail("a non-name meaning was looked up")) is value


# --- resolve ---------------------------------------------------------------------------------


def _replace(ref: Ref | Forged) -> Any:
    return f"real:{ref.name}" if isinstance(ref, Ref) else ForgedValue(ref.label)


def test_resolve_replaces_refs_and_forgeries_everywhere() -> None:
    op = Lease(Ref("a"), (Ref("b"), [Forged("guess")], {"k": Ref("c")}))
    out = resolve(op, _replace)
    assert out.task == "real:a"
    assert out.token[0] == "real:b"
    assert isinstance(out.token[1][0], ForgedValue)
    assert out.token[1][0].label == "guess"
    assert out.token[2] == {"k": "real:c"}


def test_resolve_copies_lists_and_dicts_but_keeps_frozen_values_unchanged() -> None:
    items, mapping = [1, 2], {"a": 1}
    frozen = Lease("t", (1, 2))
    out = resolve((items, mapping, frozen), _replace)
    assert out == ([1, 2], {"a": 1}, frozen)
    assert out[0] is not items and out[1] is not mapping
    assert out[2] is frozen
    assert resolve(frozen, _replace) is frozen


def test_resolve_for_the_model_passes_lists_and_dicts_with_nothing_to_replace_as_they_are(
) -> None:
    items, mapping = [1, (2,)], {"a": [1]}
    assert resolve(items, _replace, copy=False) is items
    assert resolve(mapping, _replace, copy=False) is mapping
    assert resolve([1, Ref("task#1")], _replace, copy=False) == [1, _replace(Ref("task#1"))]
    replaced = {"a": Ref("task#1")}
    assert resolve(replaced, _replace, copy=False) == {"a": _replace(Ref("task#1"))}


def test_resolve_skips_fields_outside_init() -> None:
    assert init_fields(Derived) == ("base",)
    assert init_fields(dict) is None
    assert resolve(Derived(Ref("x")), _replace) == Derived("real:x")


def test_the_model_side_of_a_forgery_is_a_meaning_that_names_its_label() -> None:
    def model_side(ref: Ref | Forged) -> Any:
        return ForgedMeaning(ref.label) if isinstance(ref, Forged) else ref.name

    out = resolve((Forged("f1"), Ref("n")), model_side)
    assert out == (ForgedMeaning("f1"), "n")


# --- how they show -----------------------------------------------------------------------------


def test_reprs_say_what_a_counterexample_reader_needs() -> None:
    assert repr(Opaque("access#1")) == "<store's value: access#1>"
    assert repr(ForgedValue("guess")) == "<forged guess>"
    assert Opaque("a") == Opaque("a") and Opaque("a") != Opaque("b")
    assert Ref("a") == Ref("a") and Forged("a") != Ref("a")


def test_by_identity_keeps_a_result_for_that_very_value_and_starts_over_when_full() -> None:
    memo = ByIdentity(2)
    a, a_twin, b, c = Opaque("a"), Opaque("a"), Opaque("b"), Opaque("c")
    assert memo.get(a) is MISSING
    assert memo.put(a, "A") == "A" and memo.get(a) == "A"
    assert memo.get(a_twin) is MISSING  # equal is not the same value
    memo.put(b, "B")
    assert len(memo) == 2
    memo.put(c, "C")  # full: it starts over
    assert (memo.get(a), memo.get(b), memo.get(c), len(memo)) == (MISSING, MISSING, "C", 1)
    memo.clear()
    assert memo.get(c) is MISSING and len(memo) == 0


def test_known_with_a_memo_fills_in_as_without_one_and_reuses_what_it_filled() -> None:
    @attrs.frozen
    class Held:
        task: Any
        n: int

    value = (Held(Opaque("task#1"), 1), Held(Opaque("task#2"), 2))
    minted = {"task#1": "T1"}.__getitem__
    memo = ByIdentity(16)
    filled = known(value, minted, memo)
    assert filled == known(value, minted) == (Held("T1", 1), Held(Opaque("task#2"), 2))
    assert known(value[0], minted, memo) is filled[0]  # the same record: not walked again
