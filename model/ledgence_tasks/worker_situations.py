"""The situations of the ledgence-tasks worker calls: acquisition, renewal, settlement,
quiescence and targeted dispatch (see :mod:`.situations`, which dispatches to
these and holds the rest).

Also the liveness helpers both modules use: :func:`boundary` names where now stands against a
current attempt's lease (1 ms before, exactly, 1 ms after; the authority deadline when the lease
is capped by it), :func:`current` the task's current attempt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import ContractError
from fencepost.spec.ledgence_tasks import situations as names

from ..base import Ctx, Step
from .records import State, StoredAttempt, TaskRec, is_live

Found = Iterator[tuple[str, str]]
BEFORE, AT, AFTER, PAST = names.BEFORE, names.AT, names.AFTER, names.PAST
LIVE = "LDG-LIVE-001"


def code(step: Step) -> str:
    return str(step.outcome.code)


def valid(check: Callable[[], Any]) -> bool:
    try:
        check()
    except ContractError:
        return False
    return True


# --- liveness ----------------------------------------------------------------------------------


def current(before: State, rec: TaskRec | None) -> StoredAttempt | None:
    name = rec.snapshot.current_attempt_id if rec is not None else None
    return before.attempts.get(name) if name is not None else None


def boundary(rec: TaskRec, att: StoredAttempt, now: int, exact: str) -> Found:
    """Where ``now`` stands against the attempt's lease: 1 ms before, exactly, 1 ms after."""
    snap = att.snapshot
    if rec.snapshot.current_attempt_id != snap.event.attempt_id or snap.state != "active":
        return
    expiry = snap.lease.expires_at
    if now == expiry - 1:
        yield LIVE, BEFORE
    elif now == expiry:
        yield LIVE, AT
        yield LIVE, exact
        if expiry == snap.authority_deadline:
            yield LIVE, "at the authority deadline exactly"
    elif now == expiry + 1:
        yield LIVE, AFTER


def _owned(before: State, owner: Any) -> tuple[TaskRec, StoredAttempt] | None:
    """The owner's task and attempt when the owner is exactly the attempt's."""
    att = before.attempts.get(getattr(owner, "attempt_id", None))  # type: ignore[arg-type]
    if att is None or att.owner != owner:
        return None
    return before.tasks[att.task_id], att


def _authority(rec: TaskRec, att: StoredAttempt, now: int) -> Found:
    if not is_live(rec, att, now):
        return
    snap = att.snapshot
    if rec.snapshot.cancel_requested_at is not None:
        yield "LDG-AUTH-001", "after a cancel request"
    elif now >= snap.deadline:
        yield "LDG-AUTH-001", "past the deadline, the lease still live"
    else:
        yield "LDG-AUTH-001", "while live"


def _cap(now: int, rec: TaskRec, att: StoredAttempt, session: spec.WorkerSession,
         what: str) -> Found:
    """Which of the three bounds is the lease's expiry (alone the least)."""
    bounds = {"now + 60 000": now + spec.LEASE_MS,
              "the authority deadline": att.snapshot.authority_deadline,
              "the session expiry": session.expires_at}
    least = min(bounds.values())
    lowest = [k for k, v in bounds.items() if v == least]
    if len(lowest) == 1:
        yield "LDG-ACQ-003", f"{what} capped by {lowest[0]}"


# --- acquisition -------------------------------------------------------------------------------


def acquisition(before: State, op: Any, ctx: Ctx, step: Step) -> Found:
    command, clause, now = op.command, step.clause, ctx.now
    probe = isinstance(op, spec.ProbeAcquisition)
    by = "by probe_acquisition" if probe else "by acquire"
    session = before.sessions.get(getattr(command, "worker_session_id", ""))
    cursor = before.cursors.get((getattr(command, "worker_session_id", ""),
                                 getattr(command, "consumer_id", -1)))
    if clause == "LDG-DISPATCH-005":
        yield clause, "an acquire at a claimed sequence"
    elif clause == "LDG-DISPATCH-009":
        yield clause, f"{'a probe' if probe else 'an acquire'} on the routed queue"
    elif clause == "LDG-ACQ-015":
        yield clause, "a deadline at now" if op.deadline_ms == now else "a deadline before now"
    elif clause == "LDG-ACQ-004":
        yield from _session_refused(clause, session, now)
        if session is not None and cursor is not None and cursor.sequence == command.sequence:
            yield clause, "a replay refused"
    elif clause == "LDG-ACQ-005" and session is not None:
        yield clause, ("another scope than the session's" if command.scope != session.scope
                       else "another queue than the session's"
                       if command.queue != session.queue else "a consumer id at the concurrency")
    elif clause == "LDG-ACQ-006":
        yield clause, ("a first sequence other than 1" if command.sequence
                       else "sequence 0" if cursor is None else "sequence 0 beside a cursor")
    elif clause in ("LDG-ACQ-007", "LDG-ACQ-008") and cursor is not None:
        yield clause, names.EMPTY if cursor.attempt is None else names.ASSIGNED
    elif clause == "LDG-ACQ-009":
        if any(r.snapshot.state == "queued" for r in before.tasks.values()):
            yield clause, "work arrived since"
        if probe and not op.finish_empty:
            yield clause, "a probe without finish_empty"
    elif clause == "LDG-ACQ-014":
        yield clause, by
    elif clause == "LDG-ACQ-016" and cursor is None and command.sequence != 1:
        yield clause, "a first sequence other than 1 beside another cursor"
    elif clause == "LDG-ACQ-012" and cursor is not None and cursor.attempt is not None:
        settled = before.attempts[cursor.attempt].snapshot.settlement is not None
        yield clause, "an unconfirmed settlement" if settled else "a live assignment"
    if cursor is not None and cursor.attempt is not None and session is not None and (
            command.sequence == cursor.sequence and code(step) == "ok"):
        yield from _replay(before, cursor.attempt, by, ctx, step)
    elif code(step) == "ok":
        yield from _claimed(before, command, session, ctx, step)


def _session_refused(clause: str, session: spec.WorkerSession | None, now: int) -> Found:
    if session is None:
        yield clause, "an unknown session"
    else:
        yield clause, names.AT_SESSION if now == session.expires_at else names.PAST_SESSION


def _replay(before: State, attempt: str, by: str, ctx: Ctx, step: Step) -> Found:
    att = before.attempts[attempt]
    rec = before.tasks[att.task_id]
    yield from boundary(rec, att, ctx.now, "an acquisition replay at the expiry")
    if step.clause == "LDG-ACQ-010":
        yield step.clause, by
        if att.snapshot.last_renewal is not None:
            yield step.clause, "after a renewal"
        if ctx.now == att.snapshot.lease.expires_at - 1:
            yield step.clause, BEFORE
        yield from _authority(rec, att, ctx.now)
    elif step.clause == "LDG-ACQ-011":
        yield step.clause, "a finished attempt" if att.snapshot.state != "active" else PAST


def _claimed(before: State, command: Any, session: spec.WorkerSession | None, ctx: Ctx,
             step: Step) -> Found:
    """A new attempt: what the queue held beside it, the lease's cap, a retry's new attempt."""
    new = [n for n in step.state.attempts if n not in before.attempts]
    if not new or session is None:
        return
    att = step.state.attempts[new[0]]
    rec = before.tasks[att.task_id]
    yield from _cap(ctx.now, rec, att, session, "a claim")
    if att.snapshot.event.attempt_no > 1:
        yield "LDG-FINISH-007", ("a retry claimed by claim_dispatch"
                                 if step.clause.startswith("LDG-DISPATCH")
                                 else "a retry claimed by acquire")
    if step.clause.startswith("LDG-DISPATCH"):
        return
    if any(_busy(before, s, c, ctx.now) for (s, c) in before.cursors
           if s == session.id and c != command.consumer_id):
        yield "LDG-ACQ-016", "beside another consumer's live assignment"
    yield from _passed_over(before, rec, command, ctx.now)


def _busy(before: State, session: str, consumer: int, now: int) -> bool:
    attempt = before.cursors[(session, consumer)].attempt
    if attempt is None:
        return False
    att = before.attempts[attempt]
    return is_live(before.tasks[att.task_id], att, now)


def _passed_over(before: State, taken: TaskRec, command: Any, now: int) -> Found:
    clause = "LDG-ACQ-001"
    for rec in before.tasks.values():
        snap = rec.snapshot
        if snap.state != "queued" or rec is taken:
            continue
        if snap.input.scope != command.scope or snap.input.queue != command.queue:
            yield clause, "another queue's or scope's task passed over"
        elif snap.available_at > now:
            yield clause, "a retry not yet due passed over"
        elif snap.submitted_at < taken.snapshot.submitted_at:
            yield clause, "available_at order unlike submission order"


# --- owner calls -------------------------------------------------------------------------------


def _owner_refused(before: State, op: Any, owner: Any, step: Step) -> Found:
    """OWNER-001's cases: malformed, a task never minted or of another scope, an attempt
    never minted; renew's reading of renew_lookup for a task never minted."""
    if step.clause != "LDG-OWNER-001":
        return
    clause = step.clause
    if code(step) == "invalid_input":
        yield clause, "a malformed owner"
        return
    rec = before.tasks.get(owner.task_id)
    if rec is None and isinstance(op, spec.Renew):
        reading = "task_first" if code(step) == "not_found" else "cursor_first"
        yield clause, f"renew: a task never minted ({reading})"
    elif rec is None:
        yield clause, "a task never minted"
    elif rec.snapshot.input.scope != owner.scope:
        yield clause, "a task of another scope"
    else:
        yield clause, "an attempt never minted"


def _lost(before: State, owner: Any, now: int) -> str | None:
    """Why an owner call was refused ownership_lost: a forged owner, a superseded or finished
    attempt, or past the expiry."""
    att = before.attempts.get(owner.attempt_id)
    if att is None or att.owner != owner:
        return "an owner that differs"
    rec = before.tasks[att.task_id]
    if rec.latest_attempt != owner.attempt_id:
        return "a superseded attempt"
    if att.snapshot.state != "active":
        return "a finished attempt"
    return PAST if now > att.snapshot.lease.expires_at else None


def renew(before: State, op: spec.Renew, ctx: Ctx, step: Step) -> Found:
    command, clause, now = op.command, step.clause, ctx.now
    owner = command.owner
    yield from _owner_refused(before, op, owner, step)
    if clause == "LDG-RENEW-008":
        yield clause, ("a negative sequence" if isinstance(command.sequence, int)
                       and command.sequence < 0 else "another intent")
    elif clause == "LDG-RENEW-006":
        resent = RESENT_AS.get(command.intent)
        if resent is not None:
            yield clause, resent
    elif clause == "LDG-RENEW-003":
        yield from _session_refused(clause, before.sessions.get(owner.worker_session_id), now)
    elif clause == "LDG-RENEW-004":
        att = before.attempts[owner.attempt_id]
        last_seq = att.snapshot.last_renewal.sequence if att.snapshot.last_renewal else 0
        yield clause, ("sequence 0" if command.sequence == 0 else "one below the last"
                       if command.sequence < last_seq else "a gap")
    owned = _owned(before, owner)
    if owned is None:
        if clause == "LDG-RENEW-002":
            yield clause, "an owner that differs"
        return
    rec, att = owned
    last = att.snapshot.last_renewal
    if clause == "LDG-RENEW-002":
        why = _lost(before, owner, now)
        if why is not None:
            yield clause, why
        if last is not None and (last.sequence, last.intent) == (command.sequence,
                                                                  command.intent):
            yield clause, ("a replay after a retry" if rec.latest_attempt != owner.attempt_id
                           else "a replay after the expiry")
        if rec.latest_attempt != owner.attempt_id:
            yield "LDG-FINISH-007", "the old owner refused"
    if clause in ("LDG-RENEW-002", "LDG-LIVE-001") or code(step) == "ok":
        yield from boundary(rec, att, now, "renew at the expiry")
    if code(step) != "ok":
        return
    yield from _authority(rec, att, now)
    if clause == "LDG-RENEW-005":
        yield clause, "dispatch" if command.intent == spec.DISPATCH else "keep_alive"
        return
    session = before.sessions[owner.worker_session_id]
    yield from _cap(now, rec, att, session, "a renewal")
    after = step.state.attempts[owner.attempt_id]
    if after.snapshot.lease.expires_at == now + spec.LEASE_MS:
        if command.intent == spec.KEEP_ALIVE:
            yield "LDG-RENEW-001", "keep_alive"
        elif att.snapshot.execution_may_have_started:
            yield "LDG-RENEW-001", "a later dispatch renewal"
        if now == att.snapshot.lease.expires_at - 1:
            yield "LDG-RENEW-001", BEFORE
    if command.intent == spec.DISPATCH:
        yield from _dispatch_renewal(rec, att, now, step)


def _dispatch_renewal(rec: TaskRec, att: StoredAttempt, now: int, step: Step) -> Found:
    clause, snap = "LDG-RENEW-007", att.snapshot
    first = not snap.execution_may_have_started and rec.snapshot.cancel_requested_at is None \
        and snap.settlement is None
    if first and snap.deadline - now in (1, 0, -1):
        yield clause, names.DISPATCH_AT_DEADLINE[1 - (snap.deadline - now)]
    if step.clause == clause:
        yield clause, "the first"
    elif first:
        pass  # past the deadline: nothing to authorize
    elif rec.snapshot.cancel_requested_at is not None:
        yield clause, "after a cancel request"
    elif snap.settlement is not None:
        yield clause, "after a settlement"
    else:
        yield clause, "once already authorized"
    if step.clause != "LDG-ACQ-003" and not snap.settlement and (
            rec.snapshot.cancel_requested_at is None and now < snap.deadline):
        yield "LDG-AUTH-001", "dispatch allowed"


def settle(before: State, op: spec.Settle, ctx: Ctx, step: Step) -> Found:
    command, clause, now = op.command, step.clause, ctx.now
    owner = command.owner
    yield from _owner_refused(before, op, owner, step)
    if clause == "LDG-SETTLE-006":
        yield clause, _malformed(command)
        return
    owned = _owned(before, owner)
    if clause == "LDG-SETTLE-002":
        why = _lost(before, owner, now) if owned is not None else "an owner that differs"
        if owned is not None and owned[1].snapshot.state == "lost" and why == "a finished attempt":
            why = "an attempt lost to recovery"
        if why is not None:
            yield clause, why
        if owned is not None and owned[0].latest_attempt != owner.attempt_id:
            yield "LDG-FINISH-007", "the old owner refused"
    if owned is None:
        return
    rec, att = owned
    stored = att.snapshot.settlement
    if clause == "LDG-SETTLE-005":
        context = command.report.context
        named = (context.task_id, context.attempt_id)
        yield clause, ("another attempt" if named != (owner.task_id, owner.attempt_id)
                       else "another program"
                       if context.program != rec.snapshot.descriptor.program
                       else "another digest")
    elif clause == "LDG-SETTLE-004" and stored is not None:
        yield clause, ("another operation id" if stored.operation_id != command.operation_id
                       else "another quiescence" if stored.quiescence != command.quiescence
                       else "another report")
    elif clause == "LDG-SETTLE-003":
        yield clause, ("after a retry" if rec.latest_attempt != owner.attempt_id
                       else PAST if now >= att.snapshot.lease.expires_at
                       else "after it finished" if att.snapshot.state != "active"
                       else "while live")
    if stored is None:
        yield from boundary(rec, att, now, "settle at the expiry")
    if code(step) == "ok" and stored is None:
        yield from _accepted(att, command)


def _malformed(command: Any) -> str:
    report = getattr(command, "report", None)
    if getattr(command, "quiescence", None) not in (spec.CONFIRMED, spec.UNCONFIRMED):
        return "a bad quiescence"
    if isinstance(report, spec.ExecutionFailure) and report.kind not in spec.FAILURE_KINDS:
        return "an unknown failure kind"
    if isinstance(report, spec.ExecutionReport) and not valid(
            lambda: spec.check_report_output(command)):
        deep: str = names.DEEP_OUTPUT
        return deep
    try:
        size = len(spec.canonical_settlement(command).encode())
    except (TypeError, ValueError, spec.InvalidInput):
        return "a malformed report"
    return "over 8 MiB" if size > spec.SETTLEMENT_MAX_BYTES else "a malformed report"


def _accepted(att: StoredAttempt, command: spec.SettleCommand) -> Found:
    clause, report = "LDG-SETTLE-001", command.report
    if isinstance(report, spec.ExecutionReport):
        yield clause, "a success report"
    elif report.execution_may_have_started:
        yield clause, "a failure that started"
    elif att.snapshot.execution_may_have_started:
        yield clause, "a never-started failure after a dispatch renewal"
    else:
        yield clause, "a failure that never started"
    if command.quiescence == spec.UNCONFIRMED:
        yield clause, "unconfirmed"
    if isinstance(report, spec.ExecutionReport) and report.outcome.get("status") == "failure" \
            and report.outcome.get("kind") not in spec.FAILURE_KINDS:
        yield "LDG-SETTLE-006", "an application failure of the program's own kind"


def confirm(before: State, op: spec.ConfirmQuiescence, ctx: Ctx, step: Step) -> Found:
    owner, clause = op.owner, step.clause
    yield from _owner_refused(before, op, owner, step)
    owned = _owned(before, owner)
    if clause == "LDG-QUIESCE-004":
        why = _lost(before, owner, ctx.now) if owned is not None else None
        yield clause, "an owner that differs" if owned is None else PAST
        if why == "a superseded attempt":
            yield "LDG-FINISH-007", "the old owner refused"
    if owned is not None and owned[1].snapshot.quiescence != spec.CONFIRMED:
        yield from boundary(*owned, ctx.now, "confirm_quiescence at the expiry")


# --- targeted dispatch -----------------------------------------------------------------------


_HANDLED_REPLAY = dict(zip((spec.ClaimAlreadyHandedOff, spec.ClaimTerminalOrSuperseded,
                            spec.ClaimDeferred), names.HANDLED_REPLAYS, strict=True))
"""The situation of a replayed claim whose receipt holds no attempt, by its disposition's
class: every disposition but Claimed is one of these three (a new one is a KeyError here, not
a situation named after another)."""


def claim_dispatch(before: State, op: spec.ClaimDispatch, ctx: Ctx, step: Step) -> Found:
    command, clause, now = op.command, step.clause, ctx.now
    acq, target = command.acquisition, command.dispatch
    key = (acq.worker_session_id, acq.consumer_id, acq.sequence)
    session = before.sessions.get(acq.worker_session_id)
    rec = before.tasks.get(target.task_id)
    if clause == "LDG-DISPATCH-005":
        receipt = before.receipts.get(key)
        if receipt is None or receipt.command != command:
            yield clause, "another command at the sequence"
        elif receipt.attempt is not None:
            att = before.attempts[receipt.attempt]
            live = is_live(before.tasks[att.task_id], att, now)
            yield clause, "a live claim replayed" if live else "a lost claim replayed"
        else:
            yield clause, _HANDLED_REPLAY[type(receipt.disposition)]
    elif clause == "LDG-DISPATCH-006":
        yield clause, ("an unknown session" if session is None else "an expired session"
                       if now >= session.expires_at else "busy" if code(step) == "busy"
                       else "out of order")
    elif clause == "LDG-DISPATCH-007":
        why = _invalid_claim(acq, target, rec, step)
        if why is not None:
            yield clause, why
    elif clause == "LDG-DISPATCH-009":
        yield clause, "a claim of a task of another queue"
    elif clause == "LDG-DISPATCH-003" and rec is not None:
        snap = rec.snapshot
        yield clause, ("a terminal task" if snap.state in spec.TERMINAL_TASK_STATES
                       else "a cancel-requested task" if snap.cancel_requested_at is not None
                       else "an older generation")
        behind = _BEHIND.get(snap.state)
        if behind and snap.cancel_requested_at is None and target.generation < snap.attempt_count:
            yield clause, behind
    if code(step) == "ok" and clause == "LDG-DISPATCH-001":
        yield from _claimed(before, acq, session, ctx, step)


RESENT_AS = {spec.DISPATCH: "a dispatch at a keep_alive's sequence",
             spec.KEEP_ALIVE: "a keep_alive at a dispatch's sequence"}
"""LDG-RENEW-006 by the intent the last renewal's sequence is sent again with."""


_BEHIND = {"queued": "a generation behind the last handed off",
           "active": "an older generation of an active task"}
"""LDG-DISPATCH-003 at a generation below the task's attempt count, by the task's state."""


def _invalid_claim(acq: Any, target: Any, rec: TaskRec | None, step: Step) -> str | None:
    if acq.sequence == 0:
        return "sequence 0"
    if not 1 <= target.generation <= spec.MAX_GENERATION:
        return "a generation out of range"
    if (target.scope, target.queue) != (acq.scope, acq.queue):
        return "a dispatch in another queue than the consumer's"
    if code(step) == "not_found":
        return "a missing task"
    if rec is not None and rec.snapshot.state == "active" and (
            target.generation == rec.snapshot.attempt_count + 1):
        return "the next generation of an active task"
    if rec is not None and target.generation > rec.snapshot.attempt_count + 1:
        return "a generation never issued"
    return None
