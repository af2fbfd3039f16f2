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


@scenario()
def dispatch_dispositions(h: Harness, p: str) -> None:
    """claimed whatever the queue order, already_handed_off, terminal_or_superseded, deferred,
    and the refusals; a store without targeted dispatch refuses every claim."""
    ws = open_ws(h, concurrency=3)
    first = submit_task(h, f"{p}-first", retry_policy=spec.RetryPolicy(3, 10_000))
    h.advance(1)  # first is the queue's head by submitted_at, not by a random id
    second = submit_task(h, f"{p}-second")
    if "dispatch" not in h.world.capabilities:
        claim(h, ws, 0, 1, second, 1)  # refused: nothing claimed, no cursor moved
        claim(h, ws, 0, 1, first, 1)
        acquire(h, ws, 0, 1)  # the queue is intact: the first by queue order
        reads(h, second)
        return
    claim(h, ws, 0, 1, second, 1)  # the second, though the first is older
    claim(h, ws, 1, 1, second, 1)  # already handed off
    claim(h, ws, 1, 2, second, 2)  # the next generation while active: not issued yet
    claim(h, ws, 1, 2, second, 3)  # never issued
    claim(h, ws, 1, 2, "task_never_minted", 1)
    claim(h, ws, 1, 2, first, 1, queue="reports")
    claim(h, ws, 1, 2, first, 0)
    claim(h, ws, 1, 0, first, 1)
    acquire(h, ws, 1, 2)  # takes first by queue order
    a = last_attempt(h)
    settle(h, a, failure(h, a, "io"))  # retry in 10 s
    claim(h, ws, 1, 3, first, 1)  # the old generation: superseded
    claim(h, ws, 1, 4, first, 2)  # not yet available: deferred
    h.advance(10_000)
    claim(h, ws, 2, 1, first, 2)  # claimed
    h.apply("client", spec.Cancel(SCOPE, Ref(second)))
    claim(h, ws, 1, 5, second, 1)  # cancel requested: superseded
    reads(h, first, last_attempt(h))
    done = last_attempt(h)
    settle(h, done, success(h, done))
    claim(h, ws, 1, 6, first, 2)  # succeeded: superseded


@scenario("dispatch")
def dispatch_receipts(h: Harness, p: str) -> None:
    """A claim's receipt replays exactly; another command or an acquire at its sequence
    conflicts; claims share the consumer's sequence with acquire and recheck the session."""
    ws = open_ws(h, concurrency=2)
    t = submit_task(h, f"{p}-a")
    u = submit_task(h, f"{p}-b")
    claim(h, ws, 0, 2, t, 1)  # a first sequence other than 1
    claim(h, ws, 0, 1, t, 1)
    a = last_attempt(h)
    h.advance(1_000)
    claim(h, ws, 0, 1, t, 1)  # the replay: the same assignment, authority now
    claim(h, ws, 0, 1, u, 1)  # another command at that sequence
    acquire(h, ws, 0, 1)  # an acquire of a claimed sequence
    acquire(h, ws, 0, 2)  # busy
    claim(h, ws, 0, 2, u, 1)  # busy too
    acquire(h, ws, 1, 1)  # takes u
    claim(h, ws, 1, 1, u, 1)  # that sequence was an acquisition: conflict
    claim(h, ws, 1, 2, u, 1)  # busy
    h.advance(lease_expiry(h, a) - h.now)
    claim(h, ws, 0, 1, t, 1)  # the replay of a lost claim: OwnershipLost
    claim(h, ws, 0, 3, t, 1)  # out of order
    claim(h, ws, 0, 2, t, 1)  # superseded? no: the task is active at generation 1
    claim(h, ws, 0, 1, t, 1)  # obsolete now? the receipt still answers
    claim(h, "ws_unknown", 0, 1, t, 1)
    h.advance(spec.SESSION_MS)
    claim(h, ws, 0, 3, t, 1)  # session expired
    claim(h, ws, 0, 1, t, 1)  # a receipt replays even after the session expired
    reads(h, t, a)
