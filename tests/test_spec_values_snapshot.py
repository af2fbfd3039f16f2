"""Answers as values: :func:`snapshot` copies a store's answer into the kit's own values,
:func:`handed` gives a store copies of the kit's arguments, and the guard's calls use both."""

from __future__ import annotations

import enum
import itertools
import pickle
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import pytest

from fencepost.scenarios.guard import call
from fencepost.spec import adk_ledger as spec
from fencepost.spec import values
from fencepost.spec.opaque import Foreign, NotAValue, Unshipped, agree
from fencepost.spec.outcome import NOT_A_VALUE, Crash, Err, Ok
from fencepost.spec.values import (
    CUT_BYTES,
    INT_BITS,
    MAX_DEPTH,
    MAX_ITEMS,
    Cut,
    encode,
    handed,
    snapshot,
    value_class,
)


class Liar(str):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return "lie"


class Phase(enum.StrEnum):
    READY = "ready"


class Number(enum.IntEnum):
    THREE = 3


class Token:
    """A store's own value, equal by its text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Token) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Token({self.text!r})"


class EqualToAll:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class OneWay:
    """Says it equals any Token; a Token does not say it back."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Token)

    __hash__ = object.__hash__


def record(**changes: Any) -> spec.Invocation:
    fields: dict[str, Any] = dict(
        invocation_id="i1", workflow_id="wf", workflow_version=1, kind="k",
        checkpoint={"step": [1, {"a": (2, b"x")}]}, phase="ready", outcome=None, owned=False,
        owner=None, lease_until=0, revision=0, created_at=1, updated_at=1)
    fields.update(changes)
    return spec.Invocation(**fields)


def test_plain_values_come_back_exactly_and_unshared() -> None:
    answer = record()
    copy = snapshot(answer)
    assert copy == answer and type(copy) is spec.Invocation
    assert copy is not answer and copy.checkpoint is not answer.checkpoint
    answer.checkpoint["step"][1]["a"] = "changed later"
    assert copy.checkpoint == {"step": [1, {"a": (2, b"x")}]}


def test_every_field_of_a_record_is_read_as_a_value_of_the_kits_own() -> None:
    """Each kind of field a registered record holds: plain text, a number, a bool and None as
    they are; a ``str`` or ``int`` subclass as its plain value; text and a number too long for
    a report cut; anything else snapshot."""
    huge_text, huge_number = "x" * (CUT_BYTES + 1), 1 << INT_BITS
    answer = record(invocation_id=Liar("i9"), workflow_version=Number.THREE, kind=huge_text,
                    revision=huge_number, outcome=2.5, owned=True, phase=Phase.READY)
    copy = snapshot(answer)
    assert type(copy) is spec.Invocation and copy.checkpoint is not answer.checkpoint
    assert (type(copy.invocation_id), copy.invocation_id) == (str, "i9")
    assert (type(copy.workflow_version), copy.workflow_version) == (int, 3)
    assert (type(copy.phase), copy.phase) == (str, "ready")
    assert copy.kind == Cut.of(huge_text) and copy.revision == Cut.of_int(huge_number)
    assert (copy.outcome, copy.owned, copy.owner, copy.lease_until) == (2.5, True, None, 0)
    assert copy.checkpoint == {"step": [1, {"a": (2, b"x")}]}
    assert snapshot(record(revision=huge_number - 1)).revision == huge_number - 1
    assert snapshot(record(kind=huge_text[1:])).kind == huge_text[1:]
    assert snapshot(record(revision=-huge_number)).revision == Cut.of_int(-huge_number)


@attrs.frozen
class SnapshotByKeyword:
    """A class taking its fields by keyword, one of them under another name (registered as a
    value class by the test that needs it, for that test only)."""

    name: str
    _items: Any = attrs.field(kw_only=True, alias="items",
                              validator=attrs.validators.instance_of(tuple))


def test_a_record_taking_keywords_is_rebuilt_by_keyword_and_its_validators_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(values, "_TYPES", dict(values._TYPES))  # the registration ends here
    value_class(SnapshotByKeyword)
    answer = SnapshotByKeyword(Liar("n"), items=([1], Liar("t")))
    copy = snapshot(answer)
    assert type(copy) is SnapshotByKeyword and copy == SnapshotByKeyword("n", items=([1], "t"))
    assert type(copy.name) is str and copy._items[0] is not answer._items[0]
    object.__setattr__(answer, "_items", [1])  # a store that broke its own record
    with pytest.raises(NotAValue, match="^a SnapshotByKeyword that does not rebuild "
                                        r"\(TypeError\)$"):
        snapshot(answer)


@pytest.mark.parametrize(("value", "plain"), [
    (Liar("bogus"), "bogus"), (Phase.READY, "ready"), (Number.THREE, 3),
    (OrderedDict(a=Liar("b")), {"a": "b"}),
])
def test_subclasses_of_plain_types_are_read_as_their_plain_value(value: Any, plain: Any) -> None:
    copy = snapshot(value)
    assert copy == plain and type(copy) is type(plain)
    assert all(type(k) is str and type(v) is str for k, v in getattr(copy, "items", dict)())


def test_a_lying_str_cannot_make_a_wrong_answer_agree() -> None:
    expected = Ok(record(phase="ready"))
    lying = record(phase=Liar("bogus"))
    assert agree(expected, Ok(lying))  # compared as the object it is, it passes
    assert not agree(expected, Ok(snapshot(lying)))  # as the value it holds, it does not


def test_a_stores_own_object_is_wrapped_and_compared_both_ways() -> None:
    a, b = snapshot(Token("t")), snapshot(Token("t"))
    assert type(a) is Foreign and a.obj.text == "t" and repr(a) == "Token('t')"
    assert a == b and hash(a) == hash(b) and a != snapshot(Token("u"))
    assert snapshot(OneWay("x")) != a  # the Token does not say it equals the OneWay
    assert a != "t" and "t" != a and encode(a) == {"__opaque__": "Token('t')"}
    assert handed({"k": [a]}) == {"k": [a.obj]} and handed({"k": [a]})["k"][0] is a.obj


class Touchy:
    """Equal to no stranger; against one of its kind its ``__eq__`` answers ``answer`` (the
    default raises)."""

    def __init__(self, answer: Any = RuntimeError) -> None:
        self.answer = answer

    def __eq__(self, other: object) -> Any:
        if not isinstance(other, Touchy):
            return False
        if self.answer is RuntimeError:
            raise RuntimeError("no comparing")
        return self.answer

    __hash__ = object.__hash__


def test_store_objects_are_equal_only_when_each_says_true_itself() -> None:
    assert snapshot(Touchy()) != snapshot(Touchy())  # its __eq__ raised: not equal
    assert snapshot(Touchy(1)) != snapshot(Touchy(1))  # 1 is not True
    assert snapshot(Touchy(True)) != snapshot(Touchy(1))  # True one way only
    assert snapshot(Touchy(True)) == snapshot(Touchy(True))


def test_a_store_object_that_cannot_leave_the_process_ships_one_stand_in() -> None:
    """Two wraps of one generator, sent to another process (pickled), stay equal: both hold
    the same stand-in, which shows the generator's text."""
    made = (n for n in range(2))
    first, second = snapshot(made), snapshot([made])[0]
    assert first is not second
    back = pickle.loads(pickle.dumps((first, second)))
    assert type(back[0].obj) is Unshipped and back[0].obj is back[1].obj
    assert back[0] == back[1] and repr(back[0]) == repr(first)
    again = pickle.loads(pickle.dumps(first))
    assert again.obj is not back[0].obj and repr(again.obj) == repr(first)


def test_a_long_repr_is_cut_to_its_head_and_a_digest() -> None:
    long = snapshot(Token("x" * 10_000))
    assert len(repr(long)) < 250 and "10009 characters, sha256 " in repr(long)
    assert repr(snapshot(Token("x" * 9_999 + "y"))) != repr(long)


@pytest.mark.parametrize(("value", "why"), [
    (EqualToAll(), "a EqualToAll that says it equals an object it has never seen"),
    (record(outcome=[EqualToAll()]),
     "a EqualToAll that says it equals an object it has never seen"),
    (bytearray(b"no"), "a bytearray whose __hash__ raised TypeError"),
])
def test_values_that_cannot_be_values_say_why(value: Any, why: str) -> None:
    with pytest.raises(NotAValue, match=f"^{why}$"):
        snapshot(value)


def test_nesting_is_bounded() -> None:
    value: Any = "bottom"
    for _ in range(MAX_DEPTH - 1):
        value = [value]
    assert snapshot(value) == value
    with pytest.raises(NotAValue, match=f"^a value nested more than {MAX_DEPTH} deep$"):
        snapshot([value, [[value]]])
    assert snapshot([value]) == [value]  # MAX_DEPTH containers: the last allowed
    with pytest.raises(NotAValue, match=f"^a value nested more than {MAX_DEPTH} deep$"):
        snapshot([[value]])
    for _ in range(10_000):
        value = [value]
    with pytest.raises(NotAValue, match="nested more than"):
        snapshot(value)


class Endless(Mapping[int, int]):
    """A mapping whose items never end (its ``len`` says 1)."""

    def __init__(self) -> None:
        self.read = 0

    def __getitem__(self, key: int) -> int:
        return key

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[int]:
        for n in itertools.count():
            self.read += 1
            yield n


class LongList(list[int]):
    """A list subclass whose ``len`` and ``iter`` lie short."""

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[int]:
        return iter([0])


class Listed(list[int]):
    """A list subclass that tells the truth."""


class Mapped(dict[int, int]):
    """A dict subclass that tells the truth."""


def test_text_and_numbers_too_long_are_cut_wherever_they_are() -> None:
    """At the top, in a dict (key or value), a list or a tuple: text or bytes longer than
    CUT_BYTES and an integer past INT_BITS are kept cut; at the limit they are kept whole."""
    long, limit = "x" * (CUT_BYTES + 1), "x" * CUT_BYTES
    big = 1 << INT_BITS
    assert snapshot(long) == Cut.of(long) and snapshot(long.encode()) == Cut.of(long.encode())
    assert snapshot(limit) is limit and snapshot(big - 1) == big - 1
    assert snapshot({long: long}) == {Cut.of(long): Cut.of(long)}
    assert snapshot([long, -big, big]) == [Cut.of(long), Cut.of_int(-big), Cut.of_int(big)]
    assert snapshot((long, big, -big)) == (Cut.of(long), Cut.of_int(big), Cut.of_int(-big))
    assert snapshot({big: big, -big: -big}) == {Cut.of_int(big): Cut.of_int(big),
                                                Cut.of_int(-big): Cut.of_int(-big)}
    assert snapshot({big - 1: (1 - big,)}) == {big - 1: (1 - big,)}


def test_the_store_is_handed_copies_of_every_container_inside_an_argument() -> None:
    inner = [1]
    for argument, found in (({"a": inner}, lambda h: h["a"]), ([inner], lambda h: h[0]),
                            ((inner,), lambda h: h[0]),
                            (SnapshotByKeyword("n", items=(inner,)), lambda h: h._items[0])):
        given = handed(argument)
        assert given == argument and found(given) == inner and found(given) is not inner


def test_a_container_holds_at_most_max_items() -> None:
    full = list(range(MAX_ITEMS))
    assert snapshot(full) == full and snapshot(tuple(full)) == tuple(full)
    assert snapshot(dict.fromkeys(full, 0)) == dict.fromkeys(full, 0)
    assert snapshot(Listed(full)) == full and snapshot(Mapped.fromkeys(full, 0)) == dict.fromkeys(
        full, 0)  # subclasses too, at the limit
    for kind, value in (("list", [*full, 0]), ("tuple", (*full, 0)),
                        ("dict", dict.fromkeys(range(MAX_ITEMS + 1), 0)),
                        ("LongList", LongList([*full, 0]))):
        with pytest.raises(NotAValue, match=f"^a {kind} of more than {MAX_ITEMS:,} items$"):
            snapshot(value)
    endless = Endless()
    with pytest.raises(NotAValue, match=f"^a Endless of more than {MAX_ITEMS:,} items$"):
        snapshot(endless)
    assert endless.read == MAX_ITEMS + 1  # read no further


class RaisesOn:
    def __init__(self, method: str) -> None:
        self.method = method

    def __eq__(self, other: object) -> bool:
        if self.method == "__eq__":
            raise RuntimeError("no")
        return self is other

    def __hash__(self) -> int:
        if self.method == "__hash__":
            raise RuntimeError("no")
        return 1

    def __repr__(self) -> str:
        if self.method == "__repr__":
            raise RuntimeError("no")
        return "RaisesOn()"


@pytest.mark.parametrize("method", ["__eq__", "__hash__", "__repr__"])
def test_an_object_whose_methods_raise_is_no_value(method: str) -> None:
    with pytest.raises(NotAValue, match=f"^a RaisesOn whose {method} raised RuntimeError$"):
        snapshot({"x": RaisesOn(method)})


class Store:
    """A store that keeps what it is given and answers shared objects."""

    def __init__(self, answer: Any = None, refuse: BaseException | None = None) -> None:
        self.answer, self.refuse = answer, refuse
        self.given: list[Any] = []

    def get(self, invocation_id: Any) -> Any:
        return self.answer

    def create(self, invocation_id: Any, metadata: Any, checkpoint: Any) -> Any:
        self.given.append(checkpoint)
        if self.refuse is not None:
            raise self.refuse
        return self.answer


def test_a_call_hands_copies_and_keeps_a_snapshot() -> None:
    shared = {"a": [1]}
    store = Store(answer=shared)
    op = spec.Create("i1", {}, {"step": [0]})
    outcome = call(store, op)
    store.given[0]["step"].append("scribbled")
    shared["a"].append("repaired")
    assert op.checkpoint == {"step": [0]} and outcome == Ok({"a": [1]})


def test_an_answer_that_is_no_value_is_that_calls_crash() -> None:
    outcome = call(Store(answer=EqualToAll()), spec.Get("i1"))
    assert outcome == Crash(NOT_A_VALUE, "")
    assert str(outcome) == ("answered something that is not a contract value: a EqualToAll "
                            "that says it equals an object it has never seen")


def test_a_refusal_is_read_as_values() -> None:
    refusal = spec.NotFound("gone", payload={"p": Liar("v")})
    refusal.code = Liar("not_found")  # type: ignore[misc]
    outcome = call(Store(refuse=refusal), spec.Create("i1", {}, {}))
    assert outcome == Err("not_found", "gone", {"p": "v"})
    assert type(outcome.code) is str and type(outcome.payload["p"]) is str  # type: ignore[union-attr]
    bad = spec.NotFound("gone", payload=EqualToAll())
    assert str(call(Store(refuse=bad), spec.Create("i1", {}, {}))).startswith(
        "answered a refusal whose payload is not a contract value: a EqualToAll")
