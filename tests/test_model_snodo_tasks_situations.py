"""Unit tests of the snodo-tasks situations: exactly the cases one agreed step reached."""

from __future__ import annotations

from typing import Any

import pytest

from fencepost.model.base import Ctx, OneOf
from fencepost.model.snodo_tasks import step
from fencepost.model.snodo_tasks.records import EMPTY, MAIN, AccessM
from fencepost.model.snodo_tasks.situations import situations
from fencepost.spec import snodo_tasks as spec

NOW = 1_000


def ctx(now: int, **options: str) -> Ctx:
    return Ctx(now=now, options=options)


def after(state: Any, op: Any, now: int = NOW, **options: str) -> Any:
    answer = step(state, op, ctx(now, **options))
    return (answer.options[0] if isinstance(answer, OneOf) else answer).state


def found(state: Any, op: Any, now: int = NOW, **options: str) -> set[tuple[str, str]]:
    """What the model's step of ``op`` reached (the first option of a choice)."""
    answer = step(state, op, ctx(now, **options))
    chosen = answer.options[0] if isinstance(answer, OneOf) else answer
    return set(situations(state, op, ctx(now, **options), chosen))


def create_op(tid: str, at: int = NOW, ttl: int | None = None) -> spec.Create:
    task = spec.Task(tid, "working", None, at, at, ttl, 250, {}, None, None)
    return spec.Create(task, spec.Work("idem", "job", {}, ()), AccessM(MAIN, "t1", "create", tid))


def create(state: Any, tid: str, at: int = NOW, ttl: int | None = None,
           **options: str) -> Any:
    return after(state, create_op(tid, at, ttl), at, **options)


def test_a_claim_around_a_live_claims_expiry() -> None:
    state = after(create(EMPTY, "a"), spec.Claim("a", "w1", 100))  # expires at 1_100
    assert found(state, spec.Claim("a", "w1", 10), 1_099) == {
        ("SNODO-CLAIM-004", "1 ms before expiry"), ("SNODO-CLAIM-004", "by the same owner")}
    assert found(state, spec.Claim("a", "w2", 10), 1_100) == {
        ("SNODO-CLAIM-005", "at the expiry exactly")}
    assert found(state, spec.Claim("a", "w2", 10), 1_101) == {
        ("SNODO-CLAIM-005", "after the expiry")}


@pytest.mark.parametrize(("order", "expected"), [
    ("task_id", {"expiry order differs from id order (task_id)"}),
    ("expiry", {"expiry order differs from id order (expiry)",
                "an expiry tie broken by id (expiry)"}),
])
def test_a_reap_whose_expiry_order_differs_from_id_order(order: str,
                                                          expected: set[str]) -> None:
    state = create(create(EMPTY, "c", ttl=500), "b", ttl=1_000)
    state = create(state, "a", at=NOW + 1, ttl=499)  # expires with c
    assert found(state, spec.Reap(), NOW + 1_000, reap_order=order) == {
        ("SNODO-TTL-002", name) for name in {"at the TTL exactly", *expected}}


@pytest.mark.parametrize(("first", "second", "differs"), [("b", "a", True), ("a", "b", False)])
def test_claim_next_among_tasks_created_out_of_id_order(first: str, second: str,
                                                        differs: bool) -> None:
    state = create(create(EMPTY, first), second)
    several = ("SNODO-CLAIM-007", "several recoverable, id order not creation order")
    assert (several in found(state, spec.ClaimNext("w1", 10))) is differs


def test_the_create_that_fills_the_store_and_the_one_refused_at_it() -> None:
    state = create(EMPTY, "a", max_tasks="2")
    assert found(state, create_op("b"), max_tasks="2") == {
        ("SNODO-CAP-001", "the create that fills the store")}
    assert found(create(state, "b", max_tasks="2"), create_op("c"), max_tasks="2") == {
        ("SNODO-CAP-001", "a create into a full store")}


@pytest.mark.parametrize(("step_", "name"), [("millisecond", "a still clock (millisecond)"),
                                             ("microsecond", "a still clock (microsecond)")])
def test_an_event_on_a_still_clock_names_the_reading_in_force(step_: str, name: str) -> None:
    grant = step(create(EMPTY, "a"), spec.Claim("a", "w1", 100), ctx(NOW))
    authority = spec.WorkerAuthority(grant.outcome.value.lease.meaning)
    ask = spec.Event("e1", "input_requested", {"key": "k", "request": {"method": "m"}})
    op = spec.TransitionOp("a", 0, ask, authority)
    assert found(grant.state, op, NOW, committed_at_step=step_) == {("SNODO-TX-005", name)}
