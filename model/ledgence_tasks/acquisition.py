"""Acquisition in the ``ledgence-tasks`` model: ``probe_acquisition``, ``acquire`` (the
``LDG-ACQ-*`` clauses: eligibility and order, the consumer's cursor, replays, sessions) and
targeted dispatch, ``claim_dispatch`` (``LDG-DISPATCH-*``), which claims through the same
:func:`_claim`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec

from ..base import Ctx, OneOf, Step
from .records import (
    ConsumerCursor,
    Draft,
    Receipt,
    State,
    StoredAttempt,
    TaskRec,
    authority,
    check_under,
    is_live,
    lease_expiry,
    live_failure,
    live_session,
    ok_step,
    refused_with,
)

# --- acquisition -------------------------------------------------------------------------------


def _eligible(rec: TaskRec, scope: spec.Scope, queue: str, now: int) -> bool:
    snap = rec.snapshot
    return (snap.input.scope == scope and snap.input.queue == queue and snap.state == "queued"
            and snap.cancel_requested_at is None and snap.available_at <= now
            and snap.attempt_count < snap.input.retry_policy.max_attempts)


def _assignment(rec: TaskRec, att: StoredAttempt, now: int) -> spec.Assignment:
    snap = att.snapshot
    return spec.Assignment(snap.descriptor, snap.event, snap.lease, authority(rec, att, now),
                           snap.deadline)


def _acquisition(state: State, command: Any, finish_empty: bool, deadline: int | None,
                 ctx: Ctx) -> Step | OneOf:
    """probe_acquisition (``deadline`` given) or acquire (None): replies as ProbeCompleted /
    ProbePending for the probe; the bare reply for acquire."""
    now = ctx.now
    # The seed's types first, then a passed deadline, then the values the call validates.
    # seed: crates/ledgence-adapter-postgres/src/storage.rs (probe_acquisition: run_until)
    # at ea82c32; delivery.rs:11-13 at 50df11a.
    check_under("LDG-ACQ-005", lambda: spec.validate_acquire_types(command))
    if deadline is not None:
        if not isinstance(finish_empty, bool) or isinstance(deadline, bool) or not isinstance(
                deadline, int):
            raise refused_with(spec.InvalidInput("finish_empty must be a bool and deadline_ms an "
                                            "integer"), "LDG-ACQ-005")
        if deadline <= now:
            raise refused_with(spec.Unavailable("the acquisition deadline has passed"),
                          "LDG-ACQ-015")
    check_under("LDG-ACQ-005", lambda: spec.validate_acquire(command))
    session = live_session(state, command.worker_session_id, "LDG-ACQ-004", now)
    if (session.scope != command.scope or session.queue != command.queue
            or command.consumer_id >= session.concurrency):
        raise refused_with(spec.InvalidInput("the command does not match its session"),
                      "LDG-ACQ-005")
    seq = command.sequence
    if seq == 0:
        raise refused_with(spec.OutOfOrder("sequences start at 1"), "LDG-ACQ-006")
    cursor = state.cursors.get((session.id, command.consumer_id))
    others = any(s == session.id and c != command.consumer_id for s, c in state.cursors)

    def done(reply: Any, kind: str) -> Any:
        return spec.ProbeCompleted(reply, kind) if deadline is not None else reply

    if cursor is None and seq != 1:
        raise refused_with(spec.OutOfOrder("a consumer's first sequence is 1"),
                      "LDG-ACQ-016" if others else "LDG-ACQ-006")
    if cursor is not None:
        if seq == cursor.sequence and (session.id, command.consumer_id, seq) in state.receipts:
            raise refused_with(spec.Conflict(f"sequence {seq} holds a dispatch claim"),
                          "LDG-DISPATCH-005")
        if seq < cursor.sequence:
            raise refused_with(spec.ObsoleteOperation(f"sequence {seq}"), "LDG-ACQ-007")
        if seq > cursor.sequence + 1:
            raise refused_with(spec.OutOfOrder(f"sequence {seq}"), "LDG-ACQ-008")
        previous = state.attempts[cursor.attempt] if cursor.attempt is not None else None
        if seq == cursor.sequence:
            if previous is None:
                return ok_step(state, done(spec.AcquireEmpty(seq), "replayed"), "LDG-ACQ-009")
            rec = state.tasks[previous.task_id]
            if is_live(rec, previous, now):
                assigned = spec.AcquireAssigned(seq, _assignment(rec, previous, now))
                return ok_step(state, done(assigned, "replayed"), "LDG-ACQ-010")
            lost = spec.AcquireOwnershipLost(seq, spec.AttemptRef(previous.task_id,
                                                                  cursor.attempt or ""))
            return ok_step(state, done(lost, "replayed"),
                       live_failure(rec, previous, now, "LDG-ACQ-011"))
        if previous is not None and is_live(state.tasks[previous.task_id], previous, now):
            raise refused_with(spec.Busy("the previous assignment is still live"), "LDG-ACQ-012")
    if routed(command.queue, ctx):  # once the sequence holds, before any scan, writing nothing
        raise refused_with(spec.ExternalDispatchRequired(f"queue {command.queue!r} is routed"),
                           "LDG-DISPATCH-009")
    queued = [r for r in state.tasks.values() if r.snapshot.state == "queued"]
    eligible = sorted((r for r in queued if _eligible(r, command.scope, command.queue, now)),
                      key=lambda r: (r.snapshot.available_at, r.snapshot.submitted_at))
    # The eligibility and order rule is at stake whenever another queued task was passed over.
    passed_over = ("LDG-ACQ-001",) if len(queued) > len(eligible[:1]) else ()
    if not eligible:
        if not finish_empty:
            return ok_step(state, spec.ProbePending(session.expires_at - now), "LDG-ACQ-013",
                       also=passed_over)
        d = Draft(state)
        d.cursors[(session.id, command.consumer_id)] = ConsumerCursor(seq, None)
        return ok_step(d.freeze(), done(spec.AcquireEmpty(seq), "finalized_empty"), "LDG-ACQ-014",
                   also=passed_over)
    first = (eligible[0].snapshot.available_at, eligible[0].snapshot.submitted_at)
    tied = [r for r in eligible
            if (r.snapshot.available_at, r.snapshot.submitted_at) == first]
    steps = tuple(attrs.evolve(_claim(state, rec, session, command, now, done, others),
                               also=passed_over) for rec in tied)
    if len(steps) == 1:
        return steps[0]
    return OneOf(steps, "LDG-ACQ-001", "a claim of any task tied first on (available_at, "
                 "submitted_at), the real ids deciding")


def _claim(state: State, rec: TaskRec, session: spec.WorkerSession, command: Any, now: int,
           done: Callable[[Any, str], Any], others: bool) -> Step:
    d = Draft(state)
    d.minted += 1
    n = d.minted
    snap = rec.snapshot
    task_id, attempt, lease_id, event_id = snap.task_id, f"attempt#{n}", f"lease#{n}", \
        f"event#{n}"
    generation = snap.attempt_count + 1
    deadline = now + snap.input.attempt_timeout_ms
    authority_deadline = deadline + spec.CLEANUP_GRACE_MS
    expiry = lease_expiry(now, authority_deadline, session)
    owner = spec.LeaseOwner(snap.input.scope, task_id, attempt, lease_id, generation,
                            session.id, command.consumer_id)
    event = spec.AssignmentEvent(event_id, task_id, snap.run_id, attempt, generation,
                                 snap.input.scope, snap.input.data)
    d.attempts[attempt] = StoredAttempt(spec.AttemptSnapshot(
        event=event, descriptor=snap.descriptor, lease=spec.Lease(owner, expiry),
        deadline=deadline, authority_deadline=authority_deadline, state="active",
        # A new attempt's quiescence is unconfirmed until a settlement or confirmation says
        # otherwise. seed: crates/ledgence-orchestration-core/src/acquisition.rs:193 at 9f0c292;
        # crates/ledgence-adapter-postgres/src/persistence.rs:93 at 3abb9ee.
        execution_may_have_started=False, last_renewal=None, quiescence=spec.UNCONFIRMED,
        settlement=None, finished_at=None))
    d.evolve_task(task_id, state="active", attempt_count=generation, current_attempt_id=attempt)
    d.tasks[task_id] = attrs.evolve(d.tasks[task_id], latest_attempt=attempt)
    d.record(task_id, "claimed", now, attempt)
    d.cursors[(session.id, command.consumer_id)] = ConsumerCursor(command.sequence, attempt)
    new = d.freeze()
    reply = spec.AcquireAssigned(command.sequence,
                                 _assignment(new.tasks[task_id], new.attempts[attempt], now))
    if expiry != now + spec.LEASE_MS:
        clause = "LDG-ACQ-003"
    elif generation > 1:
        clause = "LDG-FINISH-007"
    elif others:
        clause = "LDG-ACQ-016"
    else:
        clause = "LDG-ACQ-002"
    return ok_step(new, done(reply, "claimed"), clause)


def _probe(state: State, op: spec.ProbeAcquisition, ctx: Ctx) -> Step | OneOf:
    return _acquisition(state, op.command, op.finish_empty, op.deadline_ms, ctx)


def _acquire(state: State, op: spec.Acquire, ctx: Ctx) -> Step | OneOf:
    return _acquisition(state, op.command, True, None, ctx)


# --- targeted dispatch -------------------------------------------------------------------------


def routed(queue: str, ctx: Ctx) -> bool:
    """Is ``queue`` routed to external dispatch (:data:`spec.ROUTED_QUEUE`, in a store that
    declares ``dispatch``)?"""
    return queue == spec.ROUTED_QUEUE and "dispatch" in ctx.capabilities


def _claim_dispatch(state: State, op: spec.ClaimDispatch, ctx: Ctx) -> Step:
    now, command = ctx.now, op.command
    if "dispatch" not in ctx.capabilities:
        raise refused_with(spec.InvalidInput(spec.UNSUPPORTED_DISPATCH), "LDG-DISPATCH-008")
    check_under("LDG-DISPATCH-007", lambda: spec.validate_claim(command))
    acq, target = command.acquisition, command.dispatch
    seq = acq.sequence
    key = (acq.worker_session_id, acq.consumer_id, seq)
    receipt = state.receipts.get(key)
    if receipt is not None:
        if receipt.command != command:
            raise refused_with(spec.Conflict(f"sequence {seq} was claimed with another command"),
                          "LDG-DISPATCH-005")
        replayed = receipt.disposition
        if receipt.attempt is not None:
            att = state.attempts[receipt.attempt]
            holder = state.tasks[att.task_id]
            again: Any = (spec.AcquireAssigned(seq, _assignment(holder, att, now))
                          if is_live(holder, att, now) else
                          spec.AcquireOwnershipLost(seq, spec.AttemptRef(att.task_id,
                                                                         receipt.attempt)))
            replayed = spec.ClaimClaimed(again)
        return ok_step(state, spec.ClaimReply(command, replayed), "LDG-DISPATCH-005")
    session = live_session(state, acq.worker_session_id, "LDG-DISPATCH-006", now)
    if (session.scope != acq.scope or session.queue != acq.queue
            or acq.consumer_id >= session.concurrency):
        raise refused_with(spec.InvalidInput("the claim does not match its session"),
                      "LDG-DISPATCH-007")
    cursor = state.cursors.get((session.id, acq.consumer_id))
    if cursor is None and seq != 1:
        raise refused_with(spec.OutOfOrder("a consumer's first sequence is 1"), "LDG-DISPATCH-006")
    if cursor is not None:
        if seq < cursor.sequence:
            raise refused_with(spec.ObsoleteOperation(f"sequence {seq}"), "LDG-DISPATCH-006")
        if seq == cursor.sequence:
            raise refused_with(spec.Conflict(f"sequence {seq} was used by an acquisition"),
                          "LDG-DISPATCH-005")
        if seq > cursor.sequence + 1:
            raise refused_with(spec.OutOfOrder(f"sequence {seq}"), "LDG-DISPATCH-006")
        previous = state.attempts[cursor.attempt] if cursor.attempt is not None else None
        if previous is not None and is_live(state.tasks[previous.task_id], previous, now):
            raise refused_with(spec.Busy("the previous assignment is still live"),
                          "LDG-DISPATCH-006")
    rec = state.tasks.get(target.task_id)
    if rec is None or rec.snapshot.input.scope != target.scope:
        raise refused_with(spec.NotFound(str(target.task_id)), "LDG-DISPATCH-007")
    snap = rec.snapshot
    if not routed(snap.input.queue, ctx):
        raise refused_with(spec.InvalidInput(spec.UNROUTED_CLAIM), "LDG-DISPATCH-009")
    if snap.input.queue != target.queue:
        raise refused_with(spec.Conflict("the task is in another queue"), "LDG-DISPATCH-007")
    g, n = target.generation, snap.attempt_count
    if g > n + 1:
        raise refused_with(spec.InvalidInput("dispatch generation has never been issued"),
                      "LDG-DISPATCH-007")
    disposition: Any
    if snap.state in spec.TERMINAL_TASK_STATES or snap.cancel_requested_at is not None:
        disposition, clause = spec.ClaimTerminalOrSuperseded(), "LDG-DISPATCH-003"
    elif snap.state == "active":
        if g == n + 1:  # seed: crates/ledgence-orchestration-core/src/dispatch.rs:36-39
            raise refused_with(spec.InvalidInput("dispatch generation has never been issued"),
                          "LDG-DISPATCH-007")
        if g == n:
            disposition = spec.ClaimAlreadyHandedOff(
                spec.AttemptRef(snap.task_id, snap.current_attempt_id or ""))
            clause = "LDG-DISPATCH-002"
        else:
            disposition, clause = spec.ClaimTerminalOrSuperseded(), "LDG-DISPATCH-003"
    elif g <= n:
        disposition, clause = spec.ClaimTerminalOrSuperseded(), "LDG-DISPATCH-003"
    elif snap.available_at > now:
        disposition, clause = spec.ClaimDeferred(snap.available_at), "LDG-DISPATCH-004"
    else:
        claimed = _claim(state, rec, session, acq, now, lambda reply, _kind: reply, False)
        d = Draft(claimed.state)
        attempt = f"attempt#{d.minted}"
        after = d.freeze()
        assigned = spec.AcquireAssigned(seq, _assignment(after.tasks[snap.task_id],
                                                         after.attempts[attempt], now))
        d.receipts[key] = Receipt(command, spec.ClaimClaimed(assigned), attempt)
        return ok_step(d.freeze(), spec.ClaimReply(command, spec.ClaimClaimed(assigned)),
                   "LDG-DISPATCH-001", also=("LDG-DISPATCH-008",))
    d = Draft(state)
    d.cursors[(session.id, acq.consumer_id)] = ConsumerCursor(seq, None)
    d.receipts[key] = Receipt(command, disposition)
    return ok_step(d.freeze(), spec.ClaimReply(command, disposition), clause,
               also=("LDG-DISPATCH-008",))


STEPS: dict[type, Any] = {
    spec.ProbeAcquisition: _probe,
    spec.Acquire: _acquire,
    spec.ClaimDispatch: _claim_dispatch,
}
"""The step of each operation of this module, by op type."""
