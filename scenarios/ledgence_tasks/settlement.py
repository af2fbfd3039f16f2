"""Scenarios of renewal and settlement: sequenced renewals, dispatch authorization, the finish
rules, settlement conflicts and replays, unconfirmed settlements.
"""

from __future__ import annotations

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..checks import Scenarios
from ..harness import Harness, blamed_on
from .calls import (
    OTHER,
    SCOPE,
    acquire,
    app_failure,
    confirm,
    context,
    failure,
    last_attempt,
    lease_expiry,
    on_own_store,
    open_ws,
    owner,
    reads,
    renew,
    settle,
    submit_task,
    success,
)

SCENARIOS = Scenarios()
scenario = on_own_store(SCENARIOS)


@scenario()
def renewal_replay_does_not_extend(h: Harness, p: str) -> None:
    """Renewals are sequenced: a replay does not extend, another intent conflicts."""
    ws = open_ws(h)
    t = submit_task(h, f"{p}-a")
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    renew(h, a, 0)
    renew(h, a, 2)
    renew(h, a, -1)
    h.apply("worker", spec.Renew(spec.RenewCommand(owner(h, a), 1, "sprint")))
    h.advance(10_000)
    renew(h, a, 1)
    h.advance(10_000)
    renew(h, a, 1)  # the replay: the lease stays
    renew(h, a, 1, spec.DISPATCH)  # another intent: conflict
    renew(h, a, 3)
    renew(h, a, 2)
    renew(h, a, 1)  # obsolete
    h.advance(30_000)
    renew(h, a, 2)
    reads(h, t, a)


@scenario()
def dispatch_renewal_authorizes_once(h: Harness, p: str) -> None:
    """The first dispatch renewal authorizes dispatch and writes `dispatch_authorized` once;
    authority reports the deadline, the cancel and the dispatch permission."""
    ws = open_ws(h)
    t = submit_task(h, f"{p}-a", attempt_timeout_ms=60_000)
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    renew(h, a, 1, spec.DISPATCH)
    renew(h, a, 1, spec.DISPATCH)  # the replay
    renew(h, a, 1)  # a keep_alive at the dispatch's sequence: conflict
    h.advance(20_000)
    renew(h, a, 2, spec.DISPATCH)
    renew(h, a, 3)
    h.advance(20_000)
    renew(h, a, 4, spec.DISPATCH)
    h.advance(20_000)  # at the deadline: cancel_requested, no dispatch
    renew(h, a, 5, spec.DISPATCH)
    reads(h, t, a)
    t2 = submit_task(h, f"{p}-b", attempt_timeout_ms=60_000)
    acquire(h, ws, 1, 1)
    b = last_attempt(h)
    h.apply("client", spec.Cancel(SCOPE, Ref(t2)))
    renew(h, b, 1, spec.DISPATCH)  # cancel requested: no authorization
    reads(h, t2, b)


@scenario()
def dispatch_renewal_at_the_deadline(h: Harness, p: str) -> None:
    """Three attempts claimed together, kept alive, then each renewed with dispatch for the
    first time 1 ms before, exactly at and 1 ms after its deadline: only the first is
    authorized (the deadline itself is past, as for execution_remaining_ms)."""
    ws = open_ws(h, concurrency=3)
    tasks = [submit_task(h, f"{p}-{k}", attempt_timeout_ms=60_000) for k in range(3)]
    attempts = []
    for consumer in range(3):
        acquire(h, ws, consumer, 1)
        attempts.append(last_attempt(h))
    h.advance(50_000)
    for a in attempts:
        renew(h, a, 1)  # the lease now runs to the authority deadline
    h.advance(9_999)
    for t, a in zip(tasks, attempts, strict=True):
        renew(h, a, 2, spec.DISPATCH)
        reads(h, t, a)
        h.advance(1)



@scenario()
def finish_rules(h: Harness, p: str) -> None:
    """Success, application failure (with attempts left and on the last), retryable and final
    failure kinds, the attempt budget; a finished attempt's re-send replays, its renewal and
    the task's cancel change nothing; a dispatched attempt stays marked started, and its
    outcome says so; a failure's phase and cleanup error read back."""
    ws = open_ws(h, concurrency=1)
    seq = iter(range(1, 100))
    t = submit_task(h, f"{p}-ok")
    acquire(h, ws, 0, next(seq))
    a = last_attempt(h)
    settle(h, a, success(h, a, {"sent": 1.0}))
    reads(h, t, a)
    settle(h, a, success(h, a, {"sent": 1.0}))  # the re-send after it finished
    renew(h, a, 1)  # a finished attempt: ownership lost
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))  # succeeded: unchanged
    done = a
    t = submit_task(h, f"{p}-app")
    acquire(h, ws, 0, next(seq))
    a = last_attempt(h)
    h.apply("client", spec.InspectAttempt(SCOPE, Ref(t), Ref(done)))  # another task's attempt
    settle(h, a, app_failure(h, a))
    reads(h, t, a)
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))  # failed: unchanged
    t = submit_task(h, f"{p}-app-last", retry_policy=spec.RetryPolicy(1, 0))
    acquire(h, ws, 0, next(seq))
    a = last_attempt(h)
    settle(h, a, app_failure(h, a))  # the last attempt: failed all the same
    reads(h, t, a)
    t = submit_task(h, f"{p}-final")
    acquire(h, ws, 0, next(seq))
    a = last_attempt(h)
    settle(h, a, failure(h, a, "integrity"))
    reads(h, t, a)
    t = submit_task(h, f"{p}-cleanup")
    acquire(h, ws, 0, next(seq))
    a = last_attempt(h)
    settle(h, a, attrs.evolve(failure(h, a, "integrity"), phase="cleanup", cleanup_error={
        "kind": "io", "message": "scratch directory left behind"}))  # both read back
    reads(h, t, a)
    t = submit_task(h, f"{p}-unstarted")
    acquire(h, ws, 0, next(seq))
    a = last_attempt(h)
    settle(h, a, attrs.evolve(failure(h, a, "integrity"), phase="admission",
                              execution_may_have_started=False))  # the flag stays false
    reads(h, t, a)
    t = submit_task(h, f"{p}-dispatched")
    acquire(h, ws, 0, next(seq))
    a = last_attempt(h)
    renew(h, a, 1, spec.DISPATCH)
    settle(h, a, attrs.evolve(failure(h, a, "integrity"), phase="admission",
                              execution_may_have_started=False))  # marked: stays marked
    reads(h, t, a)
    t = submit_task(h, f"{p}-retry", retry_policy=spec.RetryPolicy(2, 0))
    acquire(h, ws, 0, next(seq))
    a = last_attempt(h)
    settle(h, a, failure(h, a, "unavailable"))  # requeued at once
    acquire(h, ws, 0, next(seq))
    b = last_attempt(h)
    h.apply("client", spec.InspectAttempt(SCOPE, Ref(t), Ref(a)))
    h.apply("client", spec.InspectAttempt(OTHER, Ref(t), Ref(b)))
    settle(h, b, failure(h, b, "timed_out"))  # the budget is spent: failed
    reads(h, t, b)


@scenario()
def settle_conflicts(h: Harness, p: str) -> None:
    """Owner calls validate and find their task; a report names its attempt and program; a
    settled attempt takes only the identical re-send."""
    ws = open_ws(h)
    t = submit_task(h, f"{p}-a")
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    ok = success(h, a)
    settle(h, a, ok, who=owner(h, a, generation=0))
    settle(h, a, ok, who=owner(h, a, scope=OTHER))
    settle(h, a, ok, who=owner(h, a, generation=2))
    settle(h, a, ok, who=owner(h, a, consumer_id=1))
    settle(h, a, attrs.evolve(ok, context=context(h, a, digest="sha256:" + "00" * 32)))
    settle(h, a, attrs.evolve(ok, context=context(h, a, program=spec.Program("other", "1"))))
    settle(h, a, attrs.evolve(ok, outcome={"status": "done"}))
    settle(h, a, failure(h, a, "weird"))
    settle(h, a, attrs.evolve(failure(h, a),  # text, not the seed's Error: invalid_input
                              cleanup_error="rm failed"))  # type: ignore[arg-type]
    settle(h, a, ok, quiescence="maybe")
    settle(h, a, attrs.evolve(ok, outcome={"status": "success",
                                            "output": "x" * (spec.SETTLEMENT_MAX_BYTES + 1)}))
    confirm(h, a, who=owner(h, a, task_id="task_never_minted"))
    renew(h, a, 1, who=owner(h, a, task_id="task_never_minted"))  # the option renew_lookup
    settle(h, a, ok, who=owner(h, a, attempt_id="attempt_never_minted"))  # not_found
    confirm(h, a, who=owner(h, a, attempt_id="attempt_never_minted"))
    renew(h, a, 1, who=owner(h, a, attempt_id="attempt_never_minted"))  # ownership_lost
    settle(h, a, ok, spec.UNCONFIRMED)
    settle(h, a, ok, spec.UNCONFIRMED, operation_id="op-2")  # another operation id
    settle(h, a, ok, spec.CONFIRMED)  # another quiescence
    settle(h, a, success(h, a, {"sent": 1.0}), spec.UNCONFIRMED)  # 1 is not 1.0
    settle(h, a, ok, spec.UNCONFIRMED)  # the identical re-send
    reads(h, t, a)


@scenario()
def application_failure_kinds(h: Harness, p: str) -> None:
    """An application failure's kind is the program's own, not a worker error kind: a kind
    of its own (any text, the empty one included) is accepted, ends the task failed without
    a retry, and comes back in its result exactly."""
    ws = open_ws(h, concurrency=2)
    for k, kind in enumerate(("carte_refus\u00e9e \u2717", "")):
        t = submit_task(h, f"{p}-{k}")
        acquire(h, ws, k, 1)
        a = last_attempt(h)
        with blamed_on(h, "LDG-SETTLE-006"):
            settle(h, a, app_failure(h, a, kind, message=""))
        reads(h, t, a)


@scenario()
def unconfirmed_settlements(h: Harness, p: str) -> None:
    """Unconfirmed settlements wait for confirm_quiescence or expiry; an accepted report still
    decides the outcome at expiry."""
    ws = open_ws(h)
    t = submit_task(h, f"{p}-a")
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    confirm(h, a)  # nothing to confirm yet
    settle(h, a, success(h, a), spec.UNCONFIRMED)
    renew(h, a, 1, spec.DISPATCH)  # settled: dispatch is not authorized
    reads(h, t, a)
    confirm(h, a, who=owner(h, a, lease_id="lease_forged"))
    h.advance(1_000)
    confirm(h, a)
    confirm(h, a)  # already confirmed: unchanged
    reads(h, t, a)
    t2 = submit_task(h, f"{p}-b")
    acquire(h, ws, 1, 1)
    b = last_attempt(h)
    settle(h, b, success(h, b), spec.UNCONFIRMED)
    h.advance(lease_expiry(h, b) - h.now)
    confirm(h, b)  # at expiry: ownership lost
    h.advance(1)
    confirm(h, b)
    h.apply("ops", spec.ExpireBatch(10))  # the report decides: succeeded
    settle(h, b, success(h, b), spec.UNCONFIRMED)  # the re-send after the expiry
    reads(h, t2, b)


@scenario()
def settle_replay_after_retry_leaves_new_attempt(h: Harness, p: str) -> None:
    """A settlement re-sent after the task was retried replays and touches nothing; the old
    owner is fenced from the new attempt."""
    ws = open_ws(h)
    t = submit_task(h, f"{p}-a", retry_policy=spec.RetryPolicy(3, 0))
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    renew(h, a, 1)
    first = failure(h, a, "capacity")
    settle(h, a, first)
    acquire(h, ws, 1, 1)
    b = last_attempt(h)
    settle(h, a, first)  # the identical re-send: replay
    settle(h, a, first, operation_id="op-2")  # conflict
    renew(h, a, 1)  # the old owner: ownership lost
    confirm(h, a)
    settle(h, b, success(h, b), who=owner(h, a))
    renew(h, b, 1)
    reads(h, t, b)
    h.apply("client", spec.InspectAttempt(SCOPE, Ref(t), Ref(a)))
