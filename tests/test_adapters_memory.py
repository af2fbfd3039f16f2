"""The memory stores' shelves and the copy they make of every record going in and out."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from fencepost.adapters.memory import CopiedOut, detached
from fencepost.scenarios.guard import call
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Ok


@attrs.frozen
class Frozen:
    data: Any
    n: int = 0


@attrs.define
class Mutable:
    data: Any
    n: int = 0


def test_a_detached_value_shares_nothing_mutable() -> None:
    original = Frozen({"a": [1, {"b": 2}]}, 3)
    copy = detached(original)
    assert copy == original and copy is not original
    copy.data["a"][1]["b"] = 99
    copy.data["a"].append(4)
    assert original == Frozen({"a": [1, {"b": 2}]}, 3)


def test_frozen_values_with_nothing_mutable_inside_are_not_copied() -> None:
    inner = Frozen("text", 1)
    outer = Frozen((inner, "x", 2.5, None, b"raw"))
    assert detached(outer) is outer


def test_a_mutable_attrs_value_is_always_copied() -> None:
    original = Mutable({"k": [1]}, 2)
    copy = detached(original)
    assert copy == original and copy is not original and copy.data is not original.data
    copy.n = 5
    copy.data["k"].append(2)
    assert original == Mutable({"k": [1]}, 2)


def test_a_tuple_is_rebuilt_only_when_something_inside_was() -> None:
    plain = (1, "a", Frozen(None))
    assert detached(plain) is plain
    holding = (1, [2])
    copy = detached(holding)
    assert copy == holding and copy is not holding and copy[1] is not holding[1]


class _Held(CopiedOut):
    """A store whose protocol method hands out what it holds."""

    PROTOCOL_METHODS = ("get",)

    def __init__(self) -> None:
        self.held = {"data": {"n": 1}}

    def get(self) -> dict[str, Any]:
        return self.held

    def peek(self) -> dict[str, Any]:  # not a protocol method: not copied
        return self.held


class _Overriding(_Held):
    """A subclass (as a mutant is) overriding the protocol method."""

    def get(self) -> dict[str, Any]:
        answer = super().get()
        answer["seen"] = True  # changes the copy it was given, not what is held
        return self.held


def test_a_protocol_methods_answer_is_a_copy_in_subclasses_too() -> None:
    for store in (_Held(), _Overriding()):
        answer = store.get()
        assert answer == {"data": {"n": 1}}
        answer["data"]["n"] = 2
        assert store.held == {"data": {"n": 1}}
    store = _Held()
    assert store.peek() is store.held  # what is not a protocol method is not copied


@attrs.frozen
class _Get(Op):
    """The kit's call of ``_Held.get``."""

    name: ClassVar[str] = "get"


class _Counted(_Held):
    """A store that counts the copies made of its answers."""

    copies: ClassVar[int] = 0

    def get(self) -> dict[str, Any]:
        return _CountedAnswer(self.held)


class _CountedAnswer(dict[str, Any]):
    def __deepcopy__(self, memo: Any) -> Any:
        _Counted.copies += 1
        return dict(self)


def test_the_guards_call_is_answered_without_a_copy_and_its_snapshot_shares_nothing() -> None:
    for store in (_Held(), _Overriding()):
        outcome = call(store, _Get())
        assert outcome == Ok({"data": {"n": 1}})
        outcome.value["data"]["n"] = 2  # the snapshot is the kit's own
        assert store.held == {"data": {"n": 1}}  # and the mutant's super() got a copy
        assert store.get() is not store.held  # a call of its own again copies
    _Counted.copies = 0
    counted = _Counted()
    call(counted, _Get())
    assert _Counted.copies == 0
    counted.get()
    assert _Counted.copies == 1


class _Wrapping:
    """A store of its own wrapping a kit memory store (as a user's adapter may), changing
    what it gets."""

    def __init__(self) -> None:
        self.base = _Held()

    def get(self) -> dict[str, Any]:
        answer = self.base.get()
        answer["data"]["n"] = 3
        return answer


def test_a_store_wrapping_a_memory_store_gets_a_copy_under_the_guard_too() -> None:
    store = _Wrapping()
    assert call(store, _Get()) == Ok({"data": {"n": 3}})
    assert store.base.held == {"data": {"n": 1}}
