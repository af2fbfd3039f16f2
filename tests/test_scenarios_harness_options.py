"""fencepost.scenarios.harness: choosing among the answers a model allows, how far an answer
is from one, binding what a store minted, and how a lost store is told."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from fencepost.adapters.adk_ledger.memory import MemoryLedger
from fencepost.model.base import OneOf, Step
from fencepost.registry import contract_named
from fencepost.scenarios.harness import (
    _FAR,
    ClauseViolation,
    Harness,
    StoreLost,
    _distance,
    differing_fields,
)
from fencepost.scenarios.runner import CLOCK_START, new_world
from fencepost.spec import adk_ledger as adk
from fencepost.spec.errors import BackendUnavailable
from fencepost.spec.opaque import ForgedValue, Opaque, Shown
from fencepost.spec.outcome import Crash, Err, Ok

ADK = contract_named("adk-ledger")
META = {"workflow_id": "wf", "workflow_version": 1, "kind": "k"}
INV = adk.Invocation("a", "wf", 1, "k", {}, "ready", None, False, None, 0, 0, CLOCK_START,
                     CLOCK_START)
"""A record the tests' answers are made of (adk's fields of their own: ``owner``,
``revision``, ...)."""


class _Scripted(MemoryLedger):
    """Answers ``create`` with nothing and ``get`` with :attr:`answers` in turn (the last one
    again once they run out)."""

    answers: tuple[Any, ...] = ()

    def create(self, *args: Any, **kwargs: Any) -> Any:
        return None

    def get(self, invocation_id: str) -> Any:
        self.asked = getattr(self, "asked", 0) + 1
        return self.answers[min(self.asked, len(self.answers)) - 1]


def _harness(answers: tuple[Any, ...], step: Callable[[Any, Any, Any], Any],
             **model: Any) -> Harness:
    """A harness on a store answering ``answers`` and a model answering ``step`` (reading
    nothing back unless ``model`` says how)."""
    store = type("Answers", (_Scripted,), {"answers": answers})
    world = new_world(ADK.suite, ADK.memory_factory(store),
                      namespace=f"ho{uuid.uuid4().hex[:8]}")
    h = Harness(world)
    h.model = attrs.evolve(h.model, **{"step": step, "observe": lambda *_: None,
                                       "situations": None, "answer_clause": None, **model})
    h.state = {}
    return h


@pytest.fixture
def made() -> Iterator[list[Harness]]:
    """The harnesses a test made, each world discarded after it."""
    harnesses: list[Harness] = []
    yield harnesses
    for h in harnesses:
        h.world.discard()


def _options(*values: Any) -> OneOf:
    """The model allows any of ``values``, each leaving the state ``{"a": value}``."""
    return OneOf(tuple(Step(v if isinstance(v, Ok | Err) else Ok(v), {"a": v}, "X-OPT",
                            "X-OPT-EFFECT") for v in values), "X-CHOICE", "one of the two")


# --- how far an answer is from another ------------------------------------------------------


def test_the_distance_counts_the_innermost_fields_two_ok_answers_differ_in() -> None:
    moved = attrs.evolve(INV, owner="n1", revision=3)
    assert _distance(Ok(INV), Ok(moved)) == 2
    assert _distance(Step(Ok(INV), {}, "X", "X"), Ok(moved)) == 2  # a step: its outcome
    assert (_distance(Ok(INV), Ok(INV)), _distance(Ok(1), Ok(2)), _distance(Ok(1), Ok(1))) == (
        0, 1, 0)
    assert _distance(Ok(INV), Ok(("a",))) == _FAR  # another class: not comparable
    for far in ((Ok(INV), Err("not_found")), (Err("not_found"), Ok(INV)),
                (Err("conflict", payload=INV), Err("conflict", payload=moved))):
        assert _distance(*far) == _FAR, far


def test_differing_fields_are_told_only_within_one_decision_and_one_class() -> None:
    moved = attrs.evolve(INV, owner="n1", revision=3)
    assert differing_fields(Ok(INV), Ok(moved)) == ("owner", "revision")
    assert differing_fields(Err("conflict", payload=INV), Err("conflict", payload=moved)) == (
        "owner", "revision")
    assert differing_fields(Ok(INV), Ok(INV)) == ()
    for other in ((Err("conflict", payload=INV), Err("stale", payload=moved)),
                  (Ok(INV), Err("ok", payload=moved)), (Ok(INV), Ok(("a",))),
                  (Ok(1), Ok(2)), (Ok(INV), Crash("ValueError", "m"))):
        assert differing_fields(*other) == (), other


# --- choosing among the answers the model allows -------------------------------------------


def _chooser(made: list[Harness], actual: Any) -> Harness:
    h = _harness((actual,), lambda state, op, ctx: _options(INV, attrs.evolve(INV, kind="k2")))
    made.append(h)
    return h


def test_an_answer_far_from_every_option_breaks_the_choices_own_clause(
        made: list[Harness]) -> None:
    h = _chooser(made, None)
    with pytest.raises(ClauseViolation) as caught:
        h._choose("w", adk.Get("a"), h.expect(adk.Get("a")), Err("not_found"))
    assert (caught.value.clause, caught.value.message) == (
        "X-CHOICE", "get answered error not_found; the contract allows one of the two")


def test_an_answer_close_to_an_option_breaks_the_rule_that_option_says_is_broken(
        made: list[Harness]) -> None:
    h = _chooser(made, None)
    close = Ok(attrs.evolve(INV, checkpoint={"n": 1}))  # a field of no clause of its own
    with pytest.raises(ClauseViolation) as caught:
        h._choose("w", adk.Get("a"), h.expect(adk.Get("a")), close)
    assert caught.value.clause == "X-OPT-EFFECT"
    assert caught.value.message == (f"get answered {close}; the contract allows one of the two")
    assert h.trace[-1].expected == Ok(INV)


def test_going_on_takes_the_closest_option_only_for_an_ok_answer_differing_in_fields(
        made: list[Harness]) -> None:
    h = _chooser(made, None)
    h.go_on = True
    close = Ok(attrs.evolve(INV, owner="n1"))
    assert h._choose("w", adk.Get("a"), h.expect(adk.Get("a")), close).outcome == Ok(INV)
    h = _harness((None,), lambda state, op, ctx: _options(Err("conflict", payload=INV)))
    made.append(h)
    h.go_on = True
    refused = Err("conflict", payload=attrs.evolve(INV, owner="n1"))  # fields, but no ok
    with pytest.raises(ClauseViolation) as caught:
        h._choose("w", adk.Get("a"), h.expect(adk.Get("a")), refused)
    assert caught.value.clause == "X-CHOICE"


def test_options_answering_alike_are_told_apart_by_what_the_store_reads_back(
        made: list[Harness]) -> None:
    """Two options answer the same but leave different records: the one whose records the
    store shows is taken, whichever comes first."""
    def step(state: Any, op: Any, ctx: Any) -> Any:
        if isinstance(op, adk.Create):
            return OneOf((Step(Ok(None), {"a": "A"}, "X-OPT", "X-OPT"),
                          Step(Ok(None), {"a": "B"}, "X-OPT", "X-OPT")), "X-CHOICE", "a or b")
        return Step(Ok(state.get(op.invocation_id)), state, "X-GET", "X-GET")

    h = _harness(("B",), step, observe=lambda key, _b, _s: adk.Get(key),
                 changed=lambda before, after: [k for k in after if before.get(k) != after[k]])
    made.append(h)
    h.apply("c1", adk.Create("a", META, {}))
    assert h.state == {"a": "B"}


def test_a_concurrent_answer_follows_the_option_it_matches_or_else_the_first(
        made: list[Harness]) -> None:
    h = _harness((None,), lambda state, op, ctx: _options("A", "B"))
    made.append(h)
    assert h.linearize("w", adk.Get("a"), Ok("B")).outcome == Ok("B")
    assert h.state == {"a": "B"}
    assert h.linearize("w", adk.Get("a"), Ok("C")).outcome == Ok("A")  # checked later
    assert h.state == {"a": "A"} and (h.trace[-1].expected, h.trace[-1].actual) == (
        Ok("A"), Ok("C"))


# --- values the store minted -----------------------------------------------------------------


def _minting(made: list[Harness], answers: tuple[Any, ...]) -> Harness:
    """A model whose every read answers a new identifier (``run#1``, ``run#2``, ...)."""
    def step(state: Any, op: Any, ctx: Any) -> Step:
        n = state.get("n", 0)
        return Step(Ok(Opaque(f"run#{n + 1}")), {"n": n + 1}, "X-RUN", "X-RUN")

    h = _harness(answers, step)
    made.append(h)
    return h


def test_an_identifier_bound_already_must_come_back_as_it_was_minted(
        made: list[Harness]) -> None:
    h = _minting(made, ("R1", "R2"))
    h.model = attrs.evolve(h.model, step=lambda state, op, ctx: Step(
        Ok(Opaque("run#1")), state, "X-RUN", "X-RUN"))
    h.apply("w", adk.Get("a"))
    assert h.bindings == {"run#1": ("run#1", "R1")}
    with pytest.raises(ClauseViolation) as caught:
        h.apply("w", adk.Get("a"))
    assert (caught.value.clause, caught.value.message) == (
        "X-RUN", "get answered ok('R2'); the contract requires ok('R1')")


def test_a_name_bound_again_to_an_answer_is_filled_in_with_its_new_value(
        made: list[Harness]) -> None:
    h = _minting(made, ("R1", "R2"))
    expected = Ok((Opaque("x"),))
    h.apply("w", adk.Get("a"), bind="x")
    assert h._known(expected) == Ok(("R1",))
    h.apply("w", adk.Get("a"), bind="x")
    assert h.bindings["x"] == ("run#2", "R2") and h._known(expected) == Ok(("R2",))


def test_a_field_that_differed_or_a_forged_value_binds_nothing(made: list[Harness]) -> None:
    h = _minting(made, ())
    h.bind_minted(Ok((Opaque("run#1"), Opaque("run#2"))), Ok((None, ForgedValue("guess"))))
    assert h.bindings == {}


def test_a_shown_value_equal_to_a_minted_one_is_no_second_mint(made: list[Harness]) -> None:
    """A value the store shows (adk's owner node) may equal an identifier it minted: only two
    minted names for one value break the mint clause."""
    h = _minting(made, ())
    h.model = attrs.evolve(h.model, mint_clause="X-ID-001")
    h.bind_minted(Ok((Opaque("run#1"), Opaque(Shown("node#1")))), Ok(("N1", "N1")))
    assert h.bindings == {"run#1": ("run#1", "N1"), "node#1": ("node#1", "N1")}


# --- a store that is away --------------------------------------------------------------------


@pytest.mark.parametrize(("error", "told"), [
    (BackendUnavailable("backend away"), "error backend_unavailable: backend away"),
    (BackendUnavailable(), "error backend_unavailable"),
    (BackendUnavailable("backend_unavailable"), "error backend_unavailable"),
    (ConnectionError("reset by peer"), "raised ConnectionError: reset by peer"),
    (ConnectionError(), "raised ConnectionError"),
])
def test_a_store_that_is_away_is_told_once_in_its_own_words(
        made: list[Harness], error: BaseException, told: str) -> None:
    class Away(MemoryLedger):
        def get(self, invocation_id: str) -> Any:
            raise error

    h = Harness(new_world(ADK.suite, ADK.memory_factory(Away),
                          namespace=f"ho{uuid.uuid4().hex[:8]}"))
    made.append(h)
    with pytest.raises(StoreLost) as caught:
        h.apply("c1", adk.Get("a"))
    assert str(caught.value) == f"get: store unavailable ({told})"
