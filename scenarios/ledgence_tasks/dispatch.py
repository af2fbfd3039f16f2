"""Scenarios of targeted dispatch: every disposition of a claim, and claim receipts.
"""

from __future__ import annotations

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..checks import Scenarios
from ..harness import Harness
from .calls import (
    SCOPE,
    acquire,
    claim,
    command,
    failure,
    last_attempt,
    lease_expiry,
    on_own_store,
    open_ws,
    reads,
    settle,
    submit_task,
    success,
)

SCENARIOS = Scenarios()
scenario = on_own_store(SCENARIOS)


ROUTED = spec.ROUTED_QUEUE


@scenario()
def dispatch_dispositions(h: Harness, p: str) -> None:
    """On the routed queue: claimed whatever the queue order, already_handed_off,
    terminal_or_superseded, deferred (each sent again: its receipt replayed), and the
    refusals; a store without targeted dispatch refuses every claim (and its queue of that
    name is a queue like another)."""
    ws = open_ws(h, concurrency=3, queue=ROUTED)
    first = submit_task(h, f"{p}-first", queue=ROUTED, retry_policy=spec.RetryPolicy(3, 10_000))
    h.advance(1)  # first is the queue's head by submitted_at, not by a random id
    second = submit_task(h, f"{p}-second", queue=ROUTED)
    if "dispatch" not in h.world.capabilities:
        claim(h, ws, 0, 1, second, 1, queue=ROUTED)  # refused: nothing claimed or moved
        claim(h, ws, 0, 1, first, 1, queue=ROUTED)
        acquire(h, ws, 0, 1, queue=ROUTED)  # the queue is intact: the first by queue order
        reads(h, second)
        return
    claim(h, ws, 0, 1, second, 1, queue=ROUTED)  # the second, though the first is older
    claim(h, ws, 1, 1, second, 1, queue=ROUTED)  # already handed off
    claim(h, ws, 1, 1, second, 1, queue=ROUTED)  # sent again: its receipt replayed
    claim(h, ws, 1, 2, second, 2, queue=ROUTED)  # the next generation while active: not issued
    claim(h, ws, 1, 2, second, 3, queue=ROUTED)  # never issued
    claim(h, ws, 1, 2, "task_never_minted", 1, queue=ROUTED)
    claim(h, ws, 1, 2, first, 1, queue="reports", by=ROUTED)
    claim(h, ws, 1, 2, first, 0, queue=ROUTED)
    claim(h, ws, 1, 0, first, 1, queue=ROUTED)
    claim(h, ws, 1, 2, first, 1, queue=ROUTED)  # claimed
    a = last_attempt(h)
    settle(h, a, failure(h, a, "io"))  # retry in 10 s
    claim(h, ws, 1, 3, first, 1, queue=ROUTED)  # the old generation: superseded
    claim(h, ws, 1, 3, first, 1, queue=ROUTED)  # sent again: its receipt replayed
    claim(h, ws, 1, 4, first, 2, queue=ROUTED)  # not yet available: deferred
    claim(h, ws, 1, 4, first, 2, queue=ROUTED)  # sent again: its receipt replayed
    h.advance(10_000)
    claim(h, ws, 2, 1, first, 2, queue=ROUTED)  # claimed
    a = last_attempt(h)
    settle(h, a, failure(h, a, "io"))  # two attempts, queued again
    claim(h, ws, 2, 2, first, 1, queue=ROUTED)  # a generation behind the last: superseded
    h.advance(10_000)
    claim(h, ws, 2, 3, first, 3, queue=ROUTED)  # claimed
    claim(h, ws, 1, 5, first, 2, queue=ROUTED)  # active at 3: an older generation, superseded
    h.apply("client", spec.Cancel(SCOPE, Ref(second)))
    claim(h, ws, 1, 6, second, 1, queue=ROUTED)  # cancel requested: superseded
    reads(h, first, last_attempt(h))
    done = last_attempt(h)
    settle(h, done, success(h, done))
    claim(h, ws, 1, 7, first, 3, queue=ROUTED)  # succeeded: superseded


@scenario("dispatch")
def dispatch_receipts(h: Harness, p: str) -> None:
    """A claim's receipt replays exactly; another command or an acquire at its sequence
    conflicts; claims share the consumer's sequence with acquire and recheck the session."""
    ws = open_ws(h, concurrency=2, queue=ROUTED)
    t = submit_task(h, f"{p}-a", queue=ROUTED)
    u = submit_task(h, f"{p}-b", queue=ROUTED)
    claim(h, ws, 0, 2, t, 1, queue=ROUTED)  # a first sequence other than 1
    claim(h, ws, 0, 1, t, 1, queue=ROUTED)
    a = last_attempt(h)
    h.advance(1_000)
    claim(h, ws, 0, 1, t, 1, queue=ROUTED)  # the replay: the same assignment, authority now
    claim(h, ws, 0, 1, u, 1, queue=ROUTED)  # another command at that sequence
    acquire(h, ws, 0, 1, queue=ROUTED)  # an acquire of a claimed sequence: conflict
    acquire(h, ws, 0, 2, queue=ROUTED)  # busy (before the route is looked at)
    claim(h, ws, 0, 2, u, 1, queue=ROUTED)  # busy too
    claim(h, ws, 1, 1, u, 1, queue=ROUTED)  # takes u
    claim(h, ws, 1, 2, u, 1, queue=ROUTED)  # busy
    h.advance(lease_expiry(h, a) - h.now)
    claim(h, ws, 0, 1, t, 1, queue=ROUTED)  # the replay of a lost claim: OwnershipLost
    claim(h, ws, 0, 3, t, 1, queue=ROUTED)  # out of order
    claim(h, ws, 0, 2, t, 1, queue=ROUTED)  # superseded? no: t is active at generation 1
    claim(h, ws, 0, 1, t, 1, queue=ROUTED)  # obsolete now? the receipt still answers
    claim(h, "ws_unknown", 0, 1, t, 1, queue=ROUTED)
    h.advance(spec.SESSION_MS)
    claim(h, ws, 0, 3, t, 1, queue=ROUTED)  # session expired
    claim(h, ws, 0, 1, t, 1, queue=ROUTED)  # a receipt replays even after the session expired
    reads(h, t, a)


@scenario("dispatch")
def dispatch_routes(h: Harness, p: str) -> None:
    """The routed queue is claimed from, never scanned: acquire and a probe on it answer
    external_dispatch_required once the sequence holds, writing nothing (the next sequence is
    still the first); a task of another queue is never claimed (invalid_input once found),
    and its own queue is acquired from as before."""
    routed = open_ws(h, concurrency=2, queue=ROUTED)
    plain = open_ws(h, concurrency=2)
    t = submit_task(h, f"{p}-routed", queue=ROUTED)
    u = submit_task(h, f"{p}-plain")
    acquire(h, routed, 0, 1, queue=ROUTED)  # external_dispatch_required
    h.apply(f"{routed}/0", spec.ProbeAcquisition(command(routed, 0, 1, queue=ROUTED), True,
                                                   h.now + 1_000))  # the same, no Empty kept
    acquire(h, routed, 0, 2, queue=ROUTED)  # nothing was written: 2 is out of order
    claim(h, plain, 0, 1, u, 1)  # a task of an unrouted queue: invalid_input
    claim(h, plain, 0, 1, "task_never_minted", 1)  # not found comes first
    acquire(h, plain, 0, 1)  # the unrouted queue as before: takes u
    claim(h, plain, 0, 1, u, 1)  # at an acquisition's sequence: conflict, before the task
    claim(h, routed, 1, 1, t, 1, queue=ROUTED)  # claimed
    acquire(h, routed, 1, 2, queue=ROUTED)  # busy: the claim is live
    b = last_attempt(h)
    settle(h, b, success(h, b))
    acquire(h, routed, 1, 2, queue=ROUTED)  # now the route answers
    reads(h, t, b)
    reads(h, u)
