"""Named scripted scenarios for ledgence-tasks: the cases of the project's own tests.

Acquisition and recovery see a whole queue (``expire_batch`` the whole store), so every scenario
runs on a store of its own (:func:`scenario` forks the world and discards the fork afterwards).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Forged, Ref
from fencepost.spec.outcome import Outcome

from ..harness import Harness, blamed_on
from ..registry import Scenario, Scenarios

SCENARIOS = Scenarios()


def scenario(*requires: str) -> Callable[[Scenario], Scenario]:
    """Register ``fn(h, prefix)`` to run on a store of its own."""

    def add(fn: Scenario) -> Scenario:
        def isolated(h: Harness, p: str) -> None:
            world = h.world.fork(f"{p}{fn.__name__[:3]}")
            try:
                fn(Harness(world), p)
            finally:
                world.discard()

        isolated.__name__, isolated.__doc__ = fn.__name__, fn.__doc__
        SCENARIOS.register(*requires)(isolated)
        return fn

    return add

SCOPE = spec.Scope("acme", "prod")
OTHER = spec.Scope("umbrella", "prod")
PROGRAM = spec.Program("mailer", "1.2.0")
DESCRIPTOR = spec.ProgramDescriptor(PROGRAM, "sha256:" + "ab" * 32, 2048)


def task_input(scope: spec.Scope = SCOPE, **changes: Any) -> spec.TaskInput:
    base = spec.TaskInput(scope, "emails", PROGRAM, "order-7",
                          {"to": "a@example.com", "n": 1, "tags": ["x", "y"]})
    return attrs.evolve(base, **changes)


def submit(h: Harness, key: str, task: spec.TaskInput,
           descriptor: spec.ProgramDescriptor = DESCRIPTOR) -> None:
    h.apply("client", spec.AcceptResolvedSubmission(spec.SubmitCommand(key, task), descriptor))


def history(h: Harness, task: str, after: int = 0, scope: spec.Scope = SCOPE) -> None:
    h.apply("client", spec.History(scope, Ref(task), after))


@scenario()
def submission_replay_ignores_key_order(h: Harness, p: str) -> None:
    key = f"{p}-k"
    h.apply("client", spec.LookupSubmission(SCOPE, key))
    submit(h, key, task_input())  # mints task#n / run#n in the model
    first = _last_task(h)
    reordered = task_input(data={"tags": ["x", "y"], "n": 1, "to": "a@example.com"},
                           retry_policy=spec.RetryPolicy(3, 5000), attempt_timeout_ms=300_000)
    h.advance(5)
    other_digest = attrs.evolve(DESCRIPTOR, digest="sha256:" + "cd" * 32)
    submit(h, key, reordered, other_digest)
    h.apply("client", spec.LookupSubmission(SCOPE, key))
    history(h, first)
    submit(h, key, task_input(OTHER))  # another scope: another task
    h.apply("client", spec.LookupSubmission(OTHER, key))


@scenario()
def changed_submission_conflicts(h: Harness, p: str) -> None:
    key = f"{p}-k"
    submit(h, key, task_input(data={"n": 1, "z": 0.0}))
    first = _last_task(h)
    for changed in (
        task_input(data={"n": 1.0, "z": 0.0}),
        task_input(data={"n": 1, "z": -0.0}),
        task_input(data={"n": 1, "z": 0.0}, program=spec.Program("mailer", "1.2.1")),
        task_input(data={"n": 1, "z": 0.0}, retry_policy=spec.RetryPolicy(4, 5000)),
        task_input(data={"n": 1, "z": 0.0}, correlation_key=None),
    ):
        descriptor = attrs.evolve(DESCRIPTOR, program=changed.program)
        submit(h, key, changed, descriptor)
    submit(h, key, task_input(queue=""))
    submit(h, f"{p}-x", task_input(), attrs.evolve(DESCRIPTOR, program=spec.Program("o", "1")))
    submit(h, "k" * 256, task_input())
    history(h, first)


@scenario()
def queued_cancel_is_terminal_and_idempotent(h: Harness, p: str) -> None:
    submit(h, f"{p}-k", task_input())
    t = _last_task(h)
    for read in (spec.Status, spec.Result, spec.Inspect):
        h.apply("client", read(SCOPE, Ref(t)))
        h.apply("intruder", read(OTHER, Ref(t)))
    h.apply("client", spec.Status(SCOPE, "task_never_minted"))
    h.advance(3)
    h.apply("client", spec.Cancel(OTHER, Ref(t)))
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))
    h.advance(3)
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))
    h.apply("client", spec.Result(SCOPE, Ref(t)))
    h.apply("client", spec.LookupSubmission(SCOPE, f"{p}-k"))
    submit(h, f"{p}-k", task_input())  # the replay shows the task as it is now: cancelled
    history(h, t)
    history(h, t, 1)
    history(h, t, 3)
    history(h, t, 99)
    history(h, t, -1)


@scenario()
def sessions_expire_and_never_revive(h: Harness, p: str) -> None:
    h.apply("worker", spec.OpenSession(SCOPE, "emails", 2))
    ws = f"ws#{h.state.minted}"
    h.apply("worker", spec.OpenSession(SCOPE, "emails", 0))
    h.apply("worker", spec.OpenSession(SCOPE, "", 1))
    h.apply("worker", spec.OpenSession(spec.Scope("", "prod"), "emails", 1))
    h.apply("worker", spec.ExtendSession("ws_unknown"))
    h.apply("worker", spec.ExtendSession(""))
    h.advance(spec.SESSION_MS - 1)
    h.apply("worker", spec.ExtendSession(Ref(ws)))
    h.advance(spec.SESSION_MS)
    h.apply("worker", spec.ExtendSession(Ref(ws)))
    h.advance(5)
    h.apply("worker", spec.ExtendSession(Ref(ws)))


@scenario("durable")
def reopen_keeps_everything(h: Harness, p: str) -> None:
    """Sessions, bindings, tasks, attempts, cursors and history survive a reopen."""
    ws = open_ws(h, concurrency=2)
    a = submit_task(h, f"{p}-a")
    b = submit_task(h, f"{p}-b")
    h.apply("client", spec.Cancel(SCOPE, Ref(b)))
    c = submit_task(h, f"{p}-c")
    acquire(h, ws, 0, 1)
    first = last_attempt(h)
    renew(h, first, 1, spec.DISPATCH)
    acquire(h, ws, 1, 1)
    second = last_attempt(h)
    settle(h, second, success(h, second), spec.UNCONFIRMED)
    h.reopen()
    with blamed_on(h, "LDG-DURABLE-001"):  # what differs now is what did not survive
        h.apply("worker", spec.ExtendSession(Ref(ws)))
        submit(h, f"{p}-a", task_input())
        acquire(h, ws, 0, 1)  # the cursor survived: a replay
        renew(h, first, 1, spec.DISPATCH)
        settle(h, second, success(h, second), spec.UNCONFIRMED)
        for t in (a, b, c):
            history(h, t)


def _last_task(h: Harness) -> str:
    return f"task#{h.state.minted}"


# --- workers -----------------------------------------------------------------------------------

QUEUE = "emails"


def open_ws(h: Harness, concurrency: int = 2, scope: spec.Scope = SCOPE,
            queue: str = QUEUE) -> str:
    h.apply("worker", spec.OpenSession(scope, queue, concurrency))
    return f"ws#{h.state.minted}"


def command(ws: str, consumer: int, seq: int, scope: spec.Scope = SCOPE,
            queue: str = QUEUE) -> spec.AcquireCommand:
    return spec.AcquireCommand(scope, queue, Ref(ws) if "#" in ws else ws, consumer, seq)  # type: ignore[arg-type]


def acquire(h: Harness, ws: str, consumer: int, seq: int, **where: Any) -> Outcome:
    return h.apply(f"{ws}/{consumer}", spec.Acquire(command(ws, consumer, seq, **where)))


def probe(h: Harness, ws: str, consumer: int, seq: int, finish_empty: bool,
          deadline: int | None = None) -> Outcome:
    at = h.now + spec.CONTROL_REQUEST_TIMEOUT_MS if deadline is None else deadline
    return h.apply(f"{ws}/{consumer}", spec.ProbeAcquisition(command(ws, consumer, seq),
                                                             finish_empty, at))


def submit_task(h: Harness, key: str, **changes: Any) -> str:
    submit(h, key, task_input(**changes))
    return _last_task(h)


def last_attempt(h: Harness) -> str:
    return f"attempt#{h.state.minted}"


def owner(h: Harness, attempt: str, **changes: Any) -> spec.LeaseOwner:
    """The attempt's owner as references to the real ids (``changes`` forge a field)."""
    o = h.state.attempts[attempt].owner
    real = spec.LeaseOwner(o.scope, Ref(o.task_id), Ref(o.attempt_id), Ref(o.lease_id),  # type: ignore[arg-type]
                           o.generation, Ref(o.worker_session_id), o.consumer_id)  # type: ignore[arg-type]
    return attrs.evolve(real, **changes)


def context(h: Harness, attempt: str, **changes: Any) -> spec.ExecutionContext:
    task = h.state.attempts[attempt].task_id
    base = spec.ExecutionContext(Ref(task), Ref(attempt), PROGRAM, DESCRIPTOR.digest)  # type: ignore[arg-type]
    return attrs.evolve(base, **changes)


def success(h: Harness, attempt: str, output: Any = None) -> spec.ExecutionReport:
    return spec.ExecutionReport(context(h, attempt), "proc-1", False,
                                {"status": "success", "output": output or {"sent": 1}}, 20)


def app_failure(h: Harness, attempt: str) -> spec.ExecutionReport:
    return spec.ExecutionReport(context(h, attempt), "proc-1", False,
                                {"status": "failure", "kind": "runtime", "message": "bounced"},
                                20)


def failure(h: Harness, attempt: str, kind: str = "io") -> spec.ExecutionFailure:
    return spec.ExecutionFailure(context(h, attempt), kind, f"{kind} failed", "execution", True)


def settle(h: Harness, attempt: str, report: Any, quiescence: str = spec.CONFIRMED,
           operation_id: str = "op-1", who: spec.LeaseOwner | None = None) -> Outcome:
    cmd = spec.SettleCommand(who or owner(h, attempt), operation_id, report, quiescence)
    return h.apply("worker", spec.Settle(cmd))


def renew(h: Harness, attempt: str, seq: int, intent: str = spec.KEEP_ALIVE,
          who: spec.LeaseOwner | None = None) -> Outcome:
    return h.apply("worker", spec.Renew(spec.RenewCommand(who or owner(h, attempt), seq,
                                                          intent)))


def confirm(h: Harness, attempt: str, who: spec.LeaseOwner | None = None) -> Outcome:
    return h.apply("worker", spec.ConfirmQuiescence(who or owner(h, attempt)))


def reads(h: Harness, task: str, attempt: str | None = None) -> None:
    """Every read of the task (and of the attempt), in its scope."""
    for read in (spec.Status, spec.Result, spec.Inspect):
        h.apply("client", read(SCOPE, Ref(task)))
    if attempt is not None:
        h.apply("client", spec.InspectAttempt(SCOPE, Ref(task), Ref(attempt)))
    history(h, task)


def lease_expiry(h: Harness, attempt: str) -> int:
    expires_at: int = h.state.attempts[attempt].snapshot.lease.expires_at
    return expires_at



# --- acquisition -------------------------------------------------------------------------------


@scenario()
def acquisition_sequences(h: Harness, p: str) -> None:
    """Sequence 0 and first sequences other than 1 are out of order; an Empty replay stays
    Empty when work arrives; old sequences are obsolete and gaps out of order."""
    ws = open_ws(h)
    other = open_ws(h, scope=OTHER)
    acquire(h, ws, 0, 0)
    acquire(h, ws, 0, 2)
    acquire(h, ws, 2, 1)  # consumer >= concurrency
    acquire(h, ws, 0, 1, scope=OTHER)  # the session's scope is another
    acquire(h, ws, 0, 1, queue="reports")
    acquire(h, other, 0, 1, scope=OTHER)
    acquire(h, ws, 0, 1)  # nothing queued: Empty, the cursor moves to 1
    t = submit_task(h, f"{p}-a")
    acquire(h, ws, 0, 1)  # the Empty replay stays Empty
    probe(h, ws, 0, 1, finish_empty=False)  # a replay even without finish_empty
    acquire(h, ws, 0, 3)
    acquire(h, ws, 0, 2)  # claims t
    acquire(h, ws, 0, 1)
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


# --- renewal -----------------------------------------------------------------------------------


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


# --- settlement --------------------------------------------------------------------------------


@scenario()
def finish_rules(h: Harness, p: str) -> None:
    """Success, application failure (with attempts left and on the last), retryable and final
    failure kinds, the attempt budget; a finished attempt's re-send replays, its renewal and
    the task's cancel change nothing; a dispatched attempt stays marked started."""
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


# --- expiry, cancel, recovery ------------------------------------------------------------------


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


# --- discovery ---------------------------------------------------------------------------------


def page(h: Harness, limit: int = 50, cursor: Any = None, scope: spec.Scope = SCOPE,
         bind: str | None = None, **filters: Any) -> Outcome:
    query = spec.TaskListQuery(spec.TaskFilters(**filters), limit, cursor)
    return h.apply("reader", spec.ListTasks(scope, query), bind=bind)


@scenario()
def pagination_ties_and_cursors(h: Harness, p: str) -> None:
    """Seven tasks submitted in one ms page as 3, then 2 (the limit changes), then an exact
    last page of 2 without a cursor; cursors are bound to scope and filters."""
    for k in range(7):
        submit_task(h, f"{p}-{k}")
    h.advance(1)
    submit_task(h, f"{p}-other", scope=OTHER)
    page(h, 3, bind="c1")
    page(h, 2, Ref("c1"), bind="c2")
    page(h, 2, Ref("c2"))  # exactly the last two: no next cursor
    page(h, 3, Ref("c1"), queue=QUEUE)  # other filters: refused
    page(h, 3, Ref("c1"), scope=OTHER)  # another scope: refused
    page(h, 3, "not-a-cursor")
    page(h, 3, Forged("cursor"))
    page(h, 7)
    page(h, 6, bind="c3")
    page(h, 1, Ref("c3"))


@scenario()
def pagination_filters(h: Harness, p: str) -> None:
    """Filters by state, queue, time range (from inclusive, until exclusive) and correlation
    key ("" only matches ""); other scopes never listed; bad queries refused."""
    start = h.now
    a = submit_task(h, f"{p}-a", correlation_key="")
    h.advance(100)
    submit_task(h, f"{p}-b", correlation_key=None)
    h.advance(100)
    submit_task(h, f"{p}-c", queue="reports", correlation_key="k")
    submit_task(h, f"{p}-d", scope=OTHER, correlation_key="")
    h.apply("client", spec.Cancel(SCOPE, Ref(a)))
    page(h)
    page(h, state="cancelled")
    page(h, state="queued", queue=QUEUE)
    page(h, submitted_from=start + 100)
    page(h, submitted_until=start + 100)
    page(h, submitted_from=start, submitted_until=start + 200)
    page(h, correlation_key="")
    page(h, correlation_key="k")
    page(h, scope=OTHER, correlation_key="")
    page(h, 100)
    page(h, 0)
    page(h, 101)
    page(h, submitted_from=start + 5, submitted_until=start + 5)
    page(h, state="paused")
    page(h, queue="")
    page(h, correlation_key="x" * (spec.MAX_CORRELATION_KEY_BYTES + 1))


@scenario()
def pagination_under_writes(h: Harness, p: str) -> None:
    """Pages read between submissions and state changes: each page is its own snapshot, and
    a non-null cursor may lead to an empty page."""
    ws = open_ws(h, concurrency=1)
    tasks = []
    for k in range(6):
        tasks.append(submit_task(h, f"{p}-{k}"))
        h.advance(10)
    page(h, 2, bind="c1", state="queued")  # 5, 4
    submit_task(h, f"{p}-new")  # newer than the cursor: not on later pages
    h.apply("client", spec.Cancel(SCOPE, Ref(tasks[1])))  # leaves the filter
    page(h, 2, Ref("c1"), bind="c2", state="queued")  # 3, 2 (1 left), more: 0
    acquire(h, ws, 0, 1)  # the oldest leaves the queued filter
    page(h, 2, Ref("c2"), state="queued")  # empty, though the cursor was not null
    page(h, 4, bind="c3")
    h.apply("client", spec.Cancel(SCOPE, Ref(tasks[0])))
    page(h, 4, Ref("c3"))


# --- targeted dispatch -------------------------------------------------------------------------


def claim(h: Harness, ws: str, consumer: int, seq: int, task: str, generation: int,
          scope: spec.Scope = SCOPE, queue: str = QUEUE) -> Outcome:
    target = spec.DispatchRef(scope, queue, Ref(task) if "#" in task else task,  # type: ignore[arg-type]
                              generation)
    return h.apply(f"{ws}/{consumer}", spec.ClaimDispatch(spec.ClaimCommand(
        command(ws, consumer, seq), target)))


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
    claim(h, ws, 1, 2, second, 2)  # the next generation while active: conflict
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
