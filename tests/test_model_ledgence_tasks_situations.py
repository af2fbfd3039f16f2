"""Unit tests of the ledgence-tasks situations: exactly the cases one agreed step reached."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.model.base import Ctx, OneOf
from fencepost.model.ledgence_tasks import EMPTY, State, step
from fencepost.model.ledgence_tasks.situations import situations
from fencepost.scenarios.ledgence_tasks.scripted import DESCRIPTOR, SCOPE, task_input
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.ledgence_tasks import situations as names

DISPATCH = frozenset({"dispatch"})
REAL = {"task#2": "task_z", "task#3": "task_m", "task#4": "task_a"}  # ids unlike submission


def apply(state: State, op: Any, now: int) -> tuple[State, set[tuple[str, str]]]:
    """The next state and what the step reached (the first option of a choice)."""
    ctx = Ctx(now=now, minted=REAL)
    answer = step(state, op, ctx)
    chosen = answer.options[0] if isinstance(answer, OneOf) else answer
    return chosen.state, set(situations(state, op, ctx, chosen))


def of(found: set[tuple[str, str]], clause: str) -> set[str]:
    return {s for c, s in found if c == clause}


def three_claimed() -> State:
    """ws#1 and task#2..4 submitted at 0, 1, 2, each claimed at once by its own consumer."""
    state, _ = apply(EMPTY, spec.OpenSession(SCOPE, "emails", 3), 0)
    for k in range(3):
        command = spec.SubmitCommand(f"k{k}", task_input())
        state, _ = apply(state, spec.AcceptResolvedSubmission(command, DESCRIPTOR), k)
    for k in range(3):
        command = spec.AcquireCommand(SCOPE, "emails", "ws#1", k, 1)
        state, _ = apply(state, spec.Acquire(command), 10 + k)
    return state


def renew(state: State, task: str, now: int) -> State:
    attempt = state.tasks[task].snapshot.current_attempt_id or ""
    owner = state.attempts[attempt].owner
    state, _ = apply(state, spec.Renew(spec.RenewCommand(owner, 1, spec.KEEP_ALIVE)), now)
    return state


def test_a_bounded_scan_whose_earliest_expiry_is_the_first_submitted_but_not_the_lowest_id(
) -> None:
    state = three_claimed()  # expiries in submission order; the lowest real id is task#4
    _, found = apply(state, spec.ExpireBatch(2), 100_000)
    assert of(found, "LDG-RECOVER-003") == {"one more due than the limit", names.BY_ID}
    assert of(found, "LDG-RECOVER-001") == {"without a report", "several due at once"}


def test_a_bounded_scan_whose_expiries_run_unlike_ids_and_submission() -> None:
    state = renew(three_claimed(), "task#2", 20)  # task#3 (task_m) now expires first
    state = renew(state, "task#4", 21)
    _, found = apply(state, spec.ExpireBatch(1), 100_000)
    assert of(found, "LDG-RECOVER-003") == {names.BY_ID, names.BY_SUBMISSION}


def test_a_scan_with_as_many_due_as_the_limit_orders_nothing() -> None:
    _, found = apply(three_claimed(), spec.ExpireBatch(3), 100_000)
    assert of(found, "LDG-RECOVER-003") == {"as many due as the limit"}
    assert of(found, "LDG-FINISH-003") == {"lost without a report"}


def test_renewals_around_the_lease_expiry() -> None:
    state = three_claimed()  # task#2's lease expires at 60 010
    owner = state.attempts["attempt#5"].owner
    op = spec.Renew(spec.RenewCommand(owner, 1, spec.KEEP_ALIVE))
    assert of(apply(state, op, 60_009)[1], "LDG-LIVE-001") == {names.BEFORE}
    assert of(apply(state, op, 60_010)[1], "LDG-LIVE-001") == {names.AT, "renew at the expiry"}
    assert of(apply(state, op, 60_011)[1], "LDG-LIVE-001") == {names.AFTER}
    assert of(apply(state, op, 60_011)[1], "LDG-RENEW-002") == {names.PAST}


def test_a_history_page_at_and_past_100_events() -> None:
    state = three_claimed()
    rec = state.tasks["task#2"]
    long = attrs.evolve(rec, history=rec.history * 101)  # 202 events
    state = attrs.evolve(state, tasks={**state.tasks, "task#2": long})
    page = {after: of(apply(state, spec.History(SCOPE, "task#2", after), 0)[1],
                      "LDG-HISTORY-001") for after in (0, 101, 102, 202)}
    assert page == {0: {"after 0"},
                    101: {"after inside the history", "101 events after"},
                    102: {"after inside the history", "exactly 100 events after"},
                    202: {"after the last event"}}


def test_a_replayed_claim_that_claimed_nothing_is_named_by_its_disposition() -> None:
    queue = spec.ROUTED_QUEUE

    def run(state: State, op: Any, now: int, clause: str | None = None) -> State:
        answer = step(state, op, Ctx(now=now, minted=REAL, capabilities=DISPATCH))
        assert not isinstance(answer, OneOf)
        assert clause is None or answer.clause == clause
        return answer.state  # type: ignore[no-any-return]

    def claim(consumer: int, task: str, generation: int) -> spec.ClaimDispatch:
        return spec.ClaimDispatch(spec.ClaimCommand(
            spec.AcquireCommand(SCOPE, queue, "ws#1", consumer, 1),
            spec.DispatchRef(SCOPE, queue, task, generation)))

    state = run(EMPTY, spec.OpenSession(SCOPE, queue, 4), 0)
    for k in range(2):
        command = spec.SubmitCommand(f"k{k}", task_input(queue=queue))
        state = run(state, spec.AcceptResolvedSubmission(command, DESCRIPTOR), 1 + k)
    state = run(state, claim(0, "task#2", 1), 10, "LDG-DISPATCH-001")
    handed = claim(3, "task#2", 1)  # task#2 is active in its first attempt
    state = run(state, handed, 11, "LDG-DISPATCH-002")
    state = run(state, spec.Cancel(SCOPE, "task#3"), 12)
    superseded = claim(2, "task#3", 1)  # task#3 is cancelled
    state = run(state, superseded, 13, "LDG-DISPATCH-003")
    later = 10 + spec.LEASE_MS + 1  # task#2's attempt expired: recovered, retried after a delay
    state = run(state, spec.ExpireBatch(10), later)
    deferred = claim(1, "task#2", 2)
    state = run(state, deferred, later + 1, "LDG-DISPATCH-004")
    for op, name in zip((handed, superseded, deferred), names.HANDLED_REPLAYS, strict=True):
        ctx = Ctx(now=later + 2, minted=REAL, capabilities=DISPATCH)
        answer = step(state, op, ctx)
        assert not isinstance(answer, OneOf) and answer.clause == "LDG-DISPATCH-005"
        assert of(set(situations(state, op, ctx, answer)), "LDG-DISPATCH-005") == {name}
