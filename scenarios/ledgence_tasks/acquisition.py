"""Scenarios of acquisition: consumer sequences and their replays, busy consumers, pending
probes, claim order and eligibility, leases capped by their session.
"""

from __future__ import annotations

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..checks import Scenarios
from ..harness import Harness
from .calls import (
    OTHER,
    QUEUE,
    SCOPE,
    acquire,
    failure,
    last_attempt,
    lease_expiry,
    on_own_store,
    open_ws,
    owner,
    probe,
    reads,
    renew,
    settle,
    submit_task,
    success,
)

SCENARIOS = Scenarios()
scenario = on_own_store(SCENARIOS)


@scenario()
def acquisition_sequences(h: Harness, p: str) -> None:
    """Sequence 0 (before the consumer's cursor and beside it) and first sequences other than
    1 are out of order; an Empty replay stays Empty when work arrives; old sequences are
    obsolete and gaps out of order."""
    ws = open_ws(h)
    other = open_ws(h, scope=OTHER)
    acquire(h, ws, 0, 0)
    acquire(h, ws, 0, 2)
    acquire(h, ws, 2, 1)  # consumer >= concurrency
    acquire(h, ws, 0, 1, scope=OTHER)  # the session's scope is another
    acquire(h, ws, 0, 1, queue="reports")
    acquire(h, ws, 0, 1, queue=QUEUE[:-1])  # a prefix of the session's queue is another
    acquire(h, other, 0, 1, scope=OTHER)
    acquire(h, ws, 0, 1)  # nothing queued: Empty, the cursor moves to 1
    t = submit_task(h, f"{p}-a")
    acquire(h, ws, 0, 1)  # the Empty replay stays Empty
    probe(h, ws, 0, 1, finish_empty=False)  # a replay even without finish_empty
    acquire(h, ws, 0, 3)
    acquire(h, ws, 0, 2)  # claims t
    acquire(h, ws, 0, 1)
    acquire(h, ws, 0, 0)  # 0 beside a cursor: out of order still, not obsolete
    acquire(h, ws, 0, 4)  # a gap after an assignment
    acquire(h, ws, 1, 2)  # a first sequence other than 1 beside consumer 0's cursor
    acquire(h, ws, 1, 1)  # Empty: t is taken
    acquire(h, ws, 1, 2)
    acquire(h, ws, 1, 1)  # obsolete after an Empty
    reads(h, t, last_attempt(h))


@scenario()
def overtaking_a_live_assignment_is_busy(h: Harness, p: str) -> None:
    """The next sequence while the previous assignment is live is busy; the replay returns
    it with fresh authority, and once it is lost the replay is the OwnershipLost reply."""
    ws = open_ws(h)
    submit_task(h, f"{p}-a")
    t2 = submit_task(h, f"{p}-b")
    acquire(h, ws, 0, 1)
    a1 = last_attempt(h)
    h.advance(10_000)
    acquire(h, ws, 0, 2)  # busy
    acquire(h, ws, 0, 1)  # replay: same assignment, authority now
    settle(h, a1, success(h, a1), spec.UNCONFIRMED)
    acquire(h, ws, 0, 2)  # an unconfirmed settlement keeps the consumer busy
    renew(h, a1, 1)
    h.advance(lease_expiry(h, a1) - h.now - 1)
    acquire(h, ws, 0, 1)  # the renewed lease, 1 ms before it expires: still the assignment
    h.advance(1)  # exactly at expiry: lost
    acquire(h, ws, 0, 1)
    h.advance(1)
    acquire(h, ws, 0, 1)
    acquire(h, ws, 0, 2)  # the consumer is free: claims t2
    a2 = last_attempt(h)
    settle(h, a2, success(h, a2))
    acquire(h, ws, 0, 2)  # the replay of a finished assignment: OwnershipLost
    reads(h, t2, a2)


@scenario()
def pending_changes_nothing(h: Harness, p: str) -> None:
    """Pending commits nothing (the cursor stays); a passed deadline is unavailable."""
    ws = open_ws(h)
    probe(h, ws, 0, 1, finish_empty=False)
    probe(h, ws, 0, 1, finish_empty=False)
    submit_task(h, f"{p}-a")
    probe(h, ws, 0, 1, finish_empty=True, deadline=h.now)  # unavailable, never Empty
    probe(h, ws, 0, 1, finish_empty=True, deadline=h.now - 1)
    probe(h, ws, 0, 1, finish_empty=False)  # claims: the cursor never moved
    probe(h, ws, 0, 1, finish_empty=False)  # its replay: the live assignment
    probe(h, ws, 1, 1, finish_empty=True)  # the other consumer: nothing left, Empty
    probe(h, ws, 1, 1, finish_empty=False)  # its replay


@scenario()
def claim_order_and_eligibility(h: Harness, p: str) -> None:
    """Claims go by (available_at, submitted_at); other scopes and queues, cancelled tasks and
    retries before their available_at are not claimed; consumers have their own cursors. A
    newer task available before an older retry is claimed first."""
    ws = open_ws(h, concurrency=3)
    submit_task(h, f"{p}-other-scope", scope=OTHER)
    submit_task(h, f"{p}-other-queue", queue="reports")
    h.advance(1)
    first = submit_task(h, f"{p}-first", retry_policy=spec.RetryPolicy(2, 10_000))
    h.advance(1)
    cancelled = submit_task(h, f"{p}-cancelled")
    h.apply("client", spec.Cancel(SCOPE, Ref(cancelled)))
    h.advance(1)
    second = submit_task(h, f"{p}-second")
    acquire(h, ws, 0, 1)  # first
    a1 = last_attempt(h)
    settle(h, a1, failure(h, a1, "io"))  # retry at now + 10 000
    acquire(h, ws, 1, 1)  # second, not the retry
    acquire(h, ws, 2, 1)  # nothing eligible yet: Empty
    h.advance(10_000 - 1)
    acquire(h, ws, 2, 2)
    h.advance(1)
    acquire(h, ws, 2, 3)  # the retry, exactly at its available_at: attempt 2
    reads(h, first, last_attempt(h))
    reads(h, second)
    early = submit_task(h, f"{p}-early", retry_policy=spec.RetryPolicy(2, 100))
    acquire(h, ws, 0, 2)  # early: the only one left
    a3 = last_attempt(h)
    settle(h, a3, failure(h, a3, "io"))  # available again in 100 ms
    h.advance(50)
    late = submit_task(h, f"{p}-late")
    h.advance(50)
    acquire(h, ws, 0, 3)  # late: available 50 ms before early, though submitted after it
    reads(h, late, last_attempt(h))
    reads(h, early)


@scenario()
def lease_capped_by_session_expiry(h: Harness, p: str) -> None:
    """A lease never outlives its session; an expired session is refused before any replay."""
    ws = open_ws(h)
    submit_task(h, f"{p}-a", attempt_timeout_ms=spec.ATTEMPT_TIMEOUT_MS[1])
    submit_task(h, f"{p}-b")
    h.advance(spec.SESSION_MS - 20_000)
    acquire(h, ws, 0, 1)  # lease capped at the session's expiry
    a1 = last_attempt(h)
    h.advance(5_000)
    renew(h, a1, 1)  # still capped
    acquire(h, "ws_unknown", 0, 1)
    renew(h, a1, 2, who=owner(h, a1, worker_session_id="ws_unknown"))
    h.advance(15_000)  # exactly the session's expiry
    acquire(h, ws, 0, 1)
    acquire(h, ws, 1, 1)
    renew(h, a1, 2)
    h.apply("worker", spec.ExtendSession(Ref(ws)))
    h.advance(1)
    acquire(h, ws, 1, 1)
    renew(h, a1, 2)
    reads(h, h.state.attempts[a1].task_id, a1)
