"""fencepost.scenarios.races: racers released together, and a race judged against the model."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from fencepost.registry import contract_named
from fencepost.scenarios.harness import ClauseViolation, Harness, NotRunnable
from fencepost.scenarios.races import release_together, settle_race
from fencepost.scenarios.runner import new_world
from fencepost.spec import adk_ledger as adk
from fencepost.spec import snodo_tasks as snodo
from fencepost.spec.opaque import Ref
from fencepost.spec.outcome import Err, Ok

ADK = contract_named("adk-ledger")
SNODO = contract_named("snodo-tasks")
META = {"workflow_id": "wf", "workflow_version": 1, "kind": "k"}


@pytest.fixture
def h() -> Iterator[Harness]:
    world = new_world(ADK.suite, ADK.memory_factory(), namespace=f"rc{uuid.uuid4().hex[:8]}")
    harness = Harness(world)
    harness.apply("c1", adk.Create("a", META, {}))
    yield harness
    world.discard()


def _claims(h: Harness) -> list[adk.Claim]:
    return [adk.Claim("a", f"node{k}", f"t{k}", h.now, 100) for k in (1, 2)]


def _one_after_another(h: Harness, ops: list[Any]) -> list[Any]:
    """What the store answers ``ops`` one after another (as a race may order them)."""
    return [h.run(h.world.open(), op) for op in ops]


def test_racers_are_released_together_and_answered_in_op_order(h: Harness) -> None:
    inside = threading.Barrier(3, timeout=60)  # each call waits for the other two inside

    class Meeting:
        def get(self, invocation_id: str) -> Any:
            inside.wait()
            return invocation_id

    outcomes = release_together(Meeting(), [adk.Get("x"), adk.Get("y"), adk.Get("z")])
    assert outcomes == [Ok("x"), Ok("y"), Ok("z")]


def test_what_the_kit_raises_in_a_racer_is_raised_as_on_one_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A racer whose reference was never minted ends the check not runnable, as one call
    would: not as a stopped run, and nothing printed by a dying thread."""
    died: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", died.append)
    world = new_world(SNODO.suite, SNODO.memory_factory(), namespace=f"rc{uuid.uuid4().hex[:8]}")
    s = Harness(world)
    try:
        ops = [snodo.Get("a", Ref("never")), snodo.Get("b", Ref("never"))]
        with pytest.raises(NotRunnable) as caught:
            release_together(world.open(), ops, run=s.run)
        assert str(caught.value).startswith("cannot go on: 'never' was never minted")
        assert died == []
    finally:
        world.discard()


def test_a_race_one_claim_won_is_settled_in_either_order(h: Harness) -> None:
    ops = _claims(h)
    outcomes = list(reversed(_one_after_another(h, list(reversed(ops)))))  # node2 won
    assert [o.code for o in outcomes] == ["invocation_owned", "ok"]
    settle_race(h, "ADK-CLAIM-008", ["c1", "c2"], ops, outcomes)
    assert h.state["a"].owner is not None and h.state["a"].lease_until == h.now + 100
    assert [s.actor for s in h.trace[-2:]] == ["c2", "c1"]  # the winner first
    assert h.world.evidence.exercised["ADK-CLAIM-008"] == 1


def test_two_winners_where_one_must_win_break_the_races_clause(h: Harness) -> None:
    ops = _claims(h)
    won = _one_after_another(h, ops[:1])[0]
    with pytest.raises(ClauseViolation) as caught:
        settle_race(h, "ADK-CLAIM-008", ["c1", "c2"], ops, [won, won])
    assert (caught.value.clause, caught.value.message) == (
        "ADK-CLAIM-008", "2 of 2 concurrent claim calls succeeded; exactly 1 must")


def test_any_number_of_winners_may_win_when_the_race_says_so(h: Harness) -> None:
    h.apply("c1", adk.Claim("a", "node1", "t1", h.now, 100))
    ops = [adk.Renew("a", "t1", h.now, 100), adk.Renew("a", "t1", h.now, 100)]
    outcomes = _one_after_another(h, ops)
    assert [o.code for o in outcomes] == ["ok", "ok"]
    settle_race(h, "ADK-RENEW-002", ["c1", "c2"], ops, outcomes, winners_expected=None)
    assert h.world.evidence.exercised["ADK-RENEW-002"] == 1


def test_an_answer_no_order_of_the_racers_gives_breaks_the_races_clause(h: Harness) -> None:
    ops = _claims(h)
    won = _one_after_another(h, ops[:1])[0]
    with pytest.raises(ClauseViolation) as caught:
        settle_race(h, "ADK-CLAIM-008", ["c1", "c2"], ops, [won, Err("not_found")])
    assert (caught.value.clause, caught.value.message) == (
        "ADK-CLAIM-008", "c2's claim answered error not_found; in no order of the racing calls "
        "can it answer that (expected error invocation_owned)")
