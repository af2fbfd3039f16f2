"""Scenarios of expiry, cancel and recovery: exact expiry, cancels of live and expired attempts,
bounded recovery scans taking the earliest expiries, history pages.
"""

from __future__ import annotations

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..checks import Scenarios
from ..harness import Harness
from .calls import (
    SCOPE,
    acquire,
    confirm,
    failure,
    history,
    last_attempt,
    lease_expiry,
    on_own_store,
    open_ws,
    reads,
    renew,
    settle,
    submit_task,
    success,
)

SCENARIOS = Scenarios()
scenario = on_own_store(SCENARIOS)


@scenario()
def exact_expiry_rejects_renew_and_settle_and_expires_once(h: Harness, p: str) -> None:
    """At exact expiry renew and settle are refused, reads still show the attempt active, and
    recovery expires it once; 1 ms later the last renewal's replay is refused, and once
    recovered the attempt takes no settlement."""
    ws = open_ws(h)
    t = submit_task(h, f"{p}-a", retry_policy=spec.RetryPolicy(1, 0))
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    h.advance(lease_expiry(h, a) - h.now - 1)
    renew(h, a, 1)  # one ms before: renewed
    h.advance(lease_expiry(h, a) - h.now)
    renew(h, a, 2)
    settle(h, a, success(h, a))
    reads(h, t, a)  # still active: reads expire nothing
    h.advance(1)
    renew(h, a, 1)  # the last renewal replayed after the expiry: ownership lost
    h.apply("client", spec.Status(SCOPE, Ref(t)))
    h.apply("ops", spec.ExpireBatch(5))
    h.apply("ops", spec.ExpireBatch(5))
    settle(h, a, success(h, a))  # the attempt was lost to recovery
    reads(h, t, a)


@scenario()
def cancel_of_live_attempt_requests_it(h: Harness, p: str) -> None:
    """Cancelling a live attempt only requests it and cuts its authority; it then finishes
    cancelled whatever its report. A cancel 1 ms before a lease capped by a deadline already
    within 30 s leaves that deadline as it is."""
    ws = open_ws(h)
    t = submit_task(h, f"{p}-a")
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    h.advance(1_000)
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))  # already requested: unchanged
    renew(h, a, 1)
    reads(h, t, a)
    settle(h, a, success(h, a))  # cancel wins; confirmed: the attempt is cancelled
    reads(h, t, a)
    t2 = submit_task(h, f"{p}-b")
    acquire(h, ws, 1, 1)
    b = last_attempt(h)
    h.apply("client", spec.Cancel(SCOPE, Ref(t2)))
    settle(h, b, success(h, b), spec.UNCONFIRMED)
    h.advance(lease_expiry(h, b) - h.now)
    h.apply("ops", spec.ExpireBatch(1))  # cancelled, the attempt lost
    reads(h, t2, b)
    t3 = submit_task(h, f"{p}-c", attempt_timeout_ms=60_000)
    acquire(h, ws, 0, 2)
    c = last_attempt(h)
    h.advance(40_000)
    renew(h, c, 1)  # capped by the authority deadline, 50 s on
    h.advance(lease_expiry(h, c) - h.now - 1)
    h.apply("client", spec.Cancel(SCOPE, Ref(t3)))  # the deadline is already within 30 s
    reads(h, t3, c)


@scenario()
def cancel_of_expired_attempt_finalizes_it(h: Harness, p: str) -> None:
    """Cancelling an active task whose attempt has expired finalizes it at once."""
    ws = open_ws(h)
    t = submit_task(h, f"{p}-a")
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    h.advance(lease_expiry(h, a) - h.now + 1)
    h.apply("client", spec.Status(SCOPE, Ref(t)))  # still active
    settle(h, a, success(h, a))  # 1 ms late: ownership lost
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))
    h.apply("ops", spec.ExpireBatch(1))
    reads(h, t, a)
    t2 = submit_task(h, f"{p}-b")
    acquire(h, ws, 1, 1)
    b = last_attempt(h)
    settle(h, b, success(h, b), spec.UNCONFIRMED)
    h.advance(lease_expiry(h, b) - h.now)  # exactly at expiry
    h.apply("client", spec.Cancel(SCOPE, Ref(t2)))  # cancel wins over the accepted report
    reads(h, t2, b)


@scenario()
def expire_batch_is_bounded(h: Harness, p: str) -> None:
    """Limits 0 and 101 are invalid; expire_batch(2) over 3 due tasks answers (2, 2), (1, 1),
    (0, 0), earliest expiry first; a settled attempt is never finalized again."""
    ws = open_ws(h, concurrency=4)
    h.apply("ops", spec.ExpireBatch(0))
    h.apply("ops", spec.ExpireBatch(101))
    tasks, attempts = [], []
    for k in range(4):
        tasks.append(submit_task(h, f"{p}-{k}"))
        acquire(h, ws, k, 1)
        attempts.append(last_attempt(h))
        h.advance(1_000)
    settle(h, attempts[3], success(h, attempts[3]))
    h.apply("ops", spec.ExpireBatch(2))
    h.advance(spec.LEASE_MS)
    h.apply("ops", spec.ExpireBatch(2))
    h.apply("ops", spec.ExpireBatch(2))
    h.apply("ops", spec.ExpireBatch(2))
    for t, a in zip(tasks, attempts, strict=True):
        reads(h, t, a)


@scenario()
def recovery_takes_the_earliest_expiries(h: Harness, p: str) -> None:
    """Four due tasks whose lease expiries, set by renewals, run in an order unlike both their
    ids and their submission: expire_batch(1) takes the earliest expiry alone, then (2) the
    next two of three, then (1) the last."""
    ws = open_ws(h, concurrency=4)
    tasks = []
    for k in range(4):
        tasks.append(submit_task(h, f"{p}-{k}"))
        acquire(h, ws, k, 1)
        h.advance(1)
    real = {t: str(h.bindings[t][1]) for t in tasks}
    by_id = sorted(tasks, key=real.__getitem__)
    head = next(t for t in tasks if t not in (by_id[0], tasks[0]))
    order = [head] + [t for t in reversed(by_id) if t != head]
    for t in order:  # each renewal sets its lease to now + 60 000: expiry order is `order`
        renew(h, h.state.tasks[t].snapshot.current_attempt_id or "", 1)
        h.advance(1)
    h.advance(spec.LEASE_MS)
    h.apply("ops", spec.ExpireBatch(1))
    h.apply("ops", spec.ExpireBatch(2))
    h.apply("ops", spec.ExpireBatch(1))
    for t in tasks:
        reads(h, t)


@scenario()
def history_pages_hold_at_most_100(h: Harness, p: str) -> None:
    """One task retried 25 times (every retryable kind) writes 103 events: a page after 2
    holds 100 of the 101 left, a page after 3 exactly the 100 left, after 103 none."""
    ws = open_ws(h, concurrency=1)
    t = submit_task(h, f"{p}-a", retry_policy=spec.RetryPolicy(26, 0))
    for k in range(1, 26):
        acquire(h, ws, 0, k)
        a = last_attempt(h)
        renew(h, a, 1, spec.DISPATCH)
        report = failure(h, a, spec.RETRYABLE_FAILURE_KINDS[k % 6])
        if k <= 2:  # 5 events: claimed, dispatch_authorized, report_accepted,
            settle(h, a, report, spec.UNCONFIRMED)  # cleanup_confirmed, retry_scheduled
            confirm(h, a)
        else:
            settle(h, a, report)
    for after in (2, 3, 103):
        history(h, t, after)
