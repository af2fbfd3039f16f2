"""The situations of the ledgence-tasks clauses that one agreed step puts to the test.

:func:`situations` looks at the store before the step, at the op and at the step's answer and
next state, and names the cases of ``spec.ledgence_tasks.CLAUSES`` it reached (the names are
declared in ``spec/ledgence_situations.py``): a lease expiry met 1 ms before, exactly or 1 ms
after; which of now + 60 000, the authority deadline and the session expiry capped a lease; the
cursor an acquisition met; how an attempt finished; a history page holding exactly 100 events
or one more left behind; a bounded scan whose earliest expiries are neither the lowest ids nor
the first submitted. A run that never reaches one of a clause's situations passes it weakly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from fencepost.spec import ledgence_situations as names
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import ContractError
from fencepost.spec.ops import Op

from .base import Ctx, Step
from .ledgence_tasks import AttemptRec, State, TaskRec, expired_candidates, is_live, page_key

Found = Iterator[tuple[str, str]]
BEFORE, AT, AFTER, PAST = names.BEFORE, names.AT, names.AFTER, names.PAST
LIVE = "LDG-LIVE-001"


def situations(before: State, op: Op, ctx: Ctx, step: Step) -> Found:
    """The (clause, situation) pairs the agreed ``step`` of ``op`` on ``before`` reached."""
    found = _BY_OP.get(type(op))
    if found is not None:
        yield from found(before, op, ctx, step)
    yield from _written(before, step)
    yield from _finished(before, op, step)


def _code(step: Step) -> str:
    return step.outcome.code


# --- what every step wrote and finished --------------------------------------------------------


def _written(before: State, step: Step) -> Found:
    for task_id, rec in step.state.tasks.items():
        old = before.tasks.get(task_id)
        for event in rec.history[len(old.history) if old is not None else 0:]:
            yield "LDG-HISTORY-002", f"`{event.reason}` written"


def _finished(before: State, op: Op, step: Step) -> Found:
    """How each attempt this step finished finished: the rule and the route."""
    for name, after in step.state.attempts.items():
        old = before.attempts.get(name)
        if old is None or old.snapshot.finished_at is not None or (
                after.snapshot.finished_at is None):
            continue
        rec, task = before.tasks[old.task_id], step.state.tasks[old.task_id]
        settlement = after.snapshot.settlement
        report = settlement.report if settlement is not None else None
        if task.snapshot.cancel_requested_at is not None:
            yield "LDG-FINISH-006", ("quiescence confirmed" if after.snapshot.state == "cancelled"
                                     else "quiescence unconfirmed")
        elif isinstance(report, spec.ExecutionReport):
            if report.outcome["status"] == "success":
                yield "LDG-FINISH-001", _ROUTE.get(type(op), "by a scan")
            else:
                left = rec.snapshot.attempt_count < rec.snapshot.input.retry_policy.max_attempts
                yield "LDG-FINISH-002", "attempts left" if left else "the last attempt"
        elif isinstance(report, spec.ExecutionFailure) and (
                report.kind not in spec.RETRYABLE_FAILURE_KINDS):
            yield "LDG-FINISH-005", ("in execution" if report.phase == "execution"
                                     else "before execution")
        elif task.snapshot.state == "queued":
            yield "LDG-FINISH-003", report.kind if report is not None else "lost without a report"
        else:
            yield "LDG-FINISH-004", ("a retryable failure" if report is not None
                                     else "a lost attempt")
        if isinstance(op, spec.ConfirmQuiescence) and isinstance(report, spec.ExecutionReport):
            yield "LDG-QUIESCE-001", "a success report"
        elif isinstance(op, spec.ConfirmQuiescence) and task.snapshot.state == "queued":
            yield "LDG-QUIESCE-001", "a retryable failure"


_ROUTE = {spec.Settle: "by settle", spec.ConfirmQuiescence: "by confirm_quiescence"}


# --- liveness ----------------------------------------------------------------------------------


def _current(before: State, rec: TaskRec | None) -> AttemptRec | None:
    name = rec.snapshot.current_attempt_id if rec is not None else None
    return before.attempts.get(name) if name is not None else None


def _boundary(rec: TaskRec, att: AttemptRec, now: int, exact: str) -> Found:
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


def _owned(before: State, owner: Any) -> tuple[TaskRec, AttemptRec] | None:
    """The owner's task and attempt when the owner is exactly the attempt's."""
    att = before.attempts.get(getattr(owner, "attempt_id", None))  # type: ignore[arg-type]
    if att is None or att.owner != owner:
        return None
    return before.tasks[att.task_id], att


def _authority(rec: TaskRec, att: AttemptRec, now: int) -> Found:
    if not is_live(rec, att, now):
        return
    snap = att.snapshot
    if rec.snapshot.cancel_requested_at is not None:
        yield "LDG-AUTH-001", "after a cancel request"
    elif now >= snap.deadline:
        yield "LDG-AUTH-001", "past the deadline, the lease still live"
    else:
        yield "LDG-AUTH-001", "while live"


def _cap(now: int, rec: TaskRec, att: AttemptRec, session: spec.WorkerSession,
         what: str) -> Found:
    """Which of the three bounds is the lease's expiry (alone the least)."""
    bounds = {"now + 60 000": now + spec.LEASE_MS,
              "the authority deadline": att.snapshot.authority_deadline,
              "the session expiry": session.expires_at}
    least = min(bounds.values())
    lowest = [k for k, v in bounds.items() if v == least]
    if len(lowest) == 1:
        yield "LDG-ACQ-003", f"{what} capped by {lowest[0]}"


# --- sessions, submissions, reads --------------------------------------------------------------


def _open_session(before: State, op: spec.OpenSession, ctx: Ctx, step: Step) -> Found:
    if step.clause == "LDG-SESSION-002":
        scope_ok = _valid(lambda: spec.validate_scope(op.scope))
        yield step.clause, ("a bad scope" if not scope_ok else "concurrency 0"
                            if op.concurrency == 0 else "a bad queue")


def _valid(check: Callable[[], Any]) -> bool:
    try:
        check()
    except ContractError:
        return False
    return True


def _extend_session(before: State, op: spec.ExtendSession, ctx: Ctx, step: Step) -> Found:
    session = before.sessions.get(op.worker_session_id)
    if step.clause == "LDG-SESSION-003":
        yield step.clause, "a malformed id" if step.outcome.code == "invalid_input" \
            else "an unknown id"
    elif session is not None:
        gap = session.expires_at - ctx.now
        if gap <= 1:
            yield "LDG-SESSION-004", ("1 ms before expires_at" if gap == 1 else
                                      "at expires_at exactly" if gap == 0 else "after expires_at")


def _lookup(before: State, op: spec.LookupSubmission, ctx: Ctx, step: Step) -> Found:
    if _code(step) == "ok":
        bound = (op.scope, op.idempotency_key) in before.keys
        yield "LDG-LOOKUP-001", "a bound key" if bound else "an unbound key"


def _accept(before: State, op: spec.AcceptResolvedSubmission, ctx: Ctx, step: Step) -> Found:
    clause = step.clause
    if clause == "LDG-SUBMIT-004":
        yield clause, ("another program's descriptor" if _code(step) == "conflict"
                       else "a malformed command")
    elif clause == "LDG-SUBMIT-003":
        winner = before.tasks[before.keys[(op.command.input.scope,
                                           op.command.idempotency_key)]]
        same_data = winner.snapshot.input.data == op.command.input.data
        rest = attrs.evolve(op.command.input, data=winner.snapshot.input.data)
        yield clause, ("data equal as Python values" if same_data and spec.same_submission(
            winner.snapshot.input, rest) else "another field")
    elif clause == "LDG-SUBMIT-002":
        winner = before.tasks[before.keys[(op.command.input.scope,
                                           op.command.idempotency_key)]]
        if winner.snapshot.descriptor != op.descriptor:
            yield clause, "another descriptor given"
        if len(winner.history) > 1:
            yield clause, "a task changed since"


def _read(before: State, op: Any, ctx: Ctx, step: Step) -> Found:
    if step.clause == "LDG-READ-002":
        rec = before.tasks.get(op.task_id)
        yield step.clause, ("a missing task" if rec is None
                            else "inspect_attempt in another scope"
                            if isinstance(op, spec.InspectAttempt) else "another scope's task")
        return
    if _code(step) != "ok":
        if step.clause == "LDG-READ-003":
            yield step.clause, "another task's attempt"
        return
    rec = before.tasks[op.task_id]
    if isinstance(op, spec.Result):
        state = rec.snapshot.state
        yield "LDG-READ-001", f"an {state} task" if state == "active" else f"a {state} task"
    if isinstance(op, spec.InspectAttempt):
        yield "LDG-READ-003", ("the current attempt" if op.attempt_id == rec.latest_attempt
                               else "an earlier attempt")
    att = _current(before, rec)
    if att is not None and not is_live(rec, att, ctx.now):
        yield "LDG-READ-004", AT if ctx.now == att.snapshot.lease.expires_at else PAST


def _history(before: State, op: spec.History, ctx: Ctx, step: Step) -> Found:
    clause = "LDG-HISTORY-001"
    if step.clause == clause and _code(step) != "ok":
        yield clause, "a negative after"
        return
    if _code(step) != "ok":
        return
    total, after = len(before.tasks[op.task_id].history), op.after_sequence
    left = total - after
    if after == 0:
        yield clause, "after 0"
    elif left > 0:
        yield clause, "after inside the history"
    else:
        yield clause, "after the last event"
    if left in (100, 101):
        yield clause, "exactly 100 events after" if left == 100 else "101 events after"


# --- cancel ------------------------------------------------------------------------------------


def _cancel(before: State, op: spec.Cancel, ctx: Ctx, step: Step) -> Found:
    if step.clause == "LDG-READ-002":
        yield step.clause, ("a missing task" if op.task_id not in before.tasks
                            else "cancel in another scope")
        return
    if _code(step) != "ok":
        return
    rec = before.tasks[op.task_id]
    snap = rec.snapshot
    if step.clause == "LDG-CANCEL-002":
        yield step.clause, (f"a {snap.state} task" if snap.state in spec.TERMINAL_TASK_STATES
                            else "a cancel-requested task")
        return
    att = _current(before, rec)
    if att is None:
        return
    yield from _boundary(rec, att, ctx.now, "cancel at the expiry")
    if is_live(rec, att, ctx.now):
        cut = ctx.now + spec.CLEANUP_GRACE_MS
        yield "LDG-CANCEL-003", ("the deadline cut to now + 30 000"
                                 if cut < att.snapshot.authority_deadline
                                 else "a deadline already within 30 000")
        if ctx.now == att.snapshot.lease.expires_at - 1:
            yield "LDG-CANCEL-003", BEFORE
        return
    if ctx.now > att.snapshot.lease.expires_at:
        yield "LDG-CANCEL-004", PAST
    if att.snapshot.settlement is not None:
        yield "LDG-CANCEL-004", "with an accepted report"


# --- acquisition -------------------------------------------------------------------------------


def _acquisition(before: State, op: Any, ctx: Ctx, step: Step) -> Found:
    command, clause, now = op.command, step.clause, ctx.now
    probe = isinstance(op, spec.ProbeAcquisition)
    by = "by probe_acquisition" if probe else "by acquire"
    session = before.sessions.get(getattr(command, "worker_session_id", ""))
    cursor = before.cursors.get((getattr(command, "worker_session_id", ""),
                                 getattr(command, "consumer_id", -1)))
    if clause == "LDG-DISPATCH-005":
        yield clause, "an acquire at a claimed sequence"
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
        yield clause, "sequence 0" if command.sequence == 0 else "a first sequence other than 1"
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
            command.sequence == cursor.sequence and _code(step) == "ok"):
        yield from _replay(before, cursor.attempt, by, ctx, step)
    elif _code(step) == "ok":
        yield from _claimed(before, command, session, ctx, step)


def _session_refused(clause: str, session: spec.WorkerSession | None, now: int) -> Found:
    if session is None:
        yield clause, "an unknown session"
    else:
        yield clause, names.AT_SESSION if now == session.expires_at else names.PAST_SESSION


def _replay(before: State, attempt: str, by: str, ctx: Ctx, step: Step) -> Found:
    att = before.attempts[attempt]
    rec = before.tasks[att.task_id]
    yield from _boundary(rec, att, ctx.now, "an acquisition replay at the expiry")
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
    if _code(step) == "invalid_input":
        yield clause, "a malformed owner"
        return
    rec = before.tasks.get(owner.task_id)
    if rec is None and isinstance(op, spec.Renew):
        reading = "task_first" if _code(step) == "not_found" else "cursor_first"
        yield clause, f"renew: a task never minted ({reading})"
    elif rec is None:
        yield clause, "a task never minted"
    elif rec.snapshot.input.scope != owner.scope:
        yield clause, "a task of another scope"
    else:
        yield clause, "an attempt never minted"


def _lost(before: State, owner: Any, clause: str, now: int) -> str | None:
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


def _renew(before: State, op: spec.Renew, ctx: Ctx, step: Step) -> Found:
    command, clause, now = op.command, step.clause, ctx.now
    owner = command.owner
    yield from _owner_refused(before, op, owner, step)
    if clause == "LDG-RENEW-008":
        yield clause, ("a negative sequence" if isinstance(command.sequence, int)
                       and command.sequence < 0 else "another intent")
    elif clause == "LDG-RENEW-003":
        yield from _session_refused(clause, before.sessions.get(owner.worker_session_id), now)
    elif clause == "LDG-RENEW-004":
        att = before.attempts[owner.attempt_id]
        last = att.snapshot.last_renewal.sequence if att.snapshot.last_renewal else 0
        yield clause, ("sequence 0" if command.sequence == 0 else "one below the last"
                       if command.sequence < last else "a gap")
    owned = _owned(before, owner)
    if owned is None:
        if clause == "LDG-RENEW-002":
            yield clause, "an owner that differs"
        return
    rec, att = owned
    last = att.snapshot.last_renewal
    if clause == "LDG-RENEW-002":
        why = _lost(before, owner, clause, now)
        if why is not None:
            yield clause, why
        if last is not None and (last.sequence, last.intent) == (command.sequence,
                                                                  command.intent):
            yield clause, ("a replay after a retry" if rec.latest_attempt != owner.attempt_id
                           else "a replay after the expiry")
        if rec.latest_attempt != owner.attempt_id:
            yield "LDG-FINISH-007", "the old owner refused"
    if clause in ("LDG-RENEW-002", "LDG-LIVE-001") or _code(step) == "ok":
        yield from _boundary(rec, att, now, "renew at the expiry")
    if _code(step) != "ok":
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


def _dispatch_renewal(rec: TaskRec, att: AttemptRec, now: int, step: Step) -> Found:
    clause, snap = "LDG-RENEW-007", att.snapshot
    if step.clause == clause:
        yield clause, "the first"
    elif now >= snap.deadline:
        yield clause, "at the deadline"
    elif rec.snapshot.cancel_requested_at is not None:
        yield clause, "after a cancel request"
    elif snap.settlement is not None:
        yield clause, "after a settlement"
    else:
        yield clause, "once already authorized"
    if step.clause != "LDG-ACQ-003" and not snap.settlement and (
            rec.snapshot.cancel_requested_at is None and now < snap.deadline):
        yield "LDG-AUTH-001", "dispatch allowed"


def _settle(before: State, op: spec.Settle, ctx: Ctx, step: Step) -> Found:
    command, clause, now = op.command, step.clause, ctx.now
    owner = command.owner
    yield from _owner_refused(before, op, owner, step)
    if clause == "LDG-SETTLE-006":
        yield clause, _malformed(command)
        return
    owned = _owned(before, owner)
    if clause == "LDG-SETTLE-002":
        why = _lost(before, owner, clause, now) if owned is not None else "an owner that differs"
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
        yield clause, ("another attempt" if context.attempt_id != owner.attempt_id
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
        yield from _boundary(rec, att, now, "settle at the expiry")
    if _code(step) == "ok" and stored is None:
        yield from _accepted(att, command)


def _malformed(command: Any) -> str:
    report = getattr(command, "report", None)
    if getattr(command, "quiescence", None) not in (spec.CONFIRMED, spec.UNCONFIRMED):
        return "a bad quiescence"
    if isinstance(report, spec.ExecutionFailure) and report.kind not in spec.FAILURE_KINDS:
        return "an unknown failure kind"
    try:
        size = len(spec.canonical_settlement(command).encode())
    except (TypeError, ValueError):
        return "a malformed report"
    return "over 8 MiB" if size > spec.SETTLEMENT_MAX_BYTES else "a malformed report"


def _accepted(att: AttemptRec, command: spec.SettleCommand) -> Found:
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


def _confirm(before: State, op: spec.ConfirmQuiescence, ctx: Ctx, step: Step) -> Found:
    owner, clause = op.owner, step.clause
    yield from _owner_refused(before, op, owner, step)
    owned = _owned(before, owner)
    if clause == "LDG-QUIESCE-004":
        why = _lost(before, owner, clause, ctx.now) if owned is not None else None
        yield clause, "an owner that differs" if owned is None else PAST
        if why == "a superseded attempt":
            yield "LDG-FINISH-007", "the old owner refused"
    if owned is not None and owned[1].snapshot.quiescence != spec.CONFIRMED:
        yield from _boundary(*owned, ctx.now, "confirm_quiescence at the expiry")


# --- recovery ----------------------------------------------------------------------------------


def _expire_batch(before: State, op: spec.ExpireBatch, ctx: Ctx, step: Step) -> Found:
    if step.clause == "LDG-RECOVER-002":
        if op.limit in (0, 101):
            yield step.clause, f"limit {op.limit}"
        return
    now, limit = ctx.now, op.limit
    due = expired_candidates(before, now)
    for rec in before.tasks.values():
        att = _current(before, rec)
        if att is not None and rec.snapshot.state == "active":
            yield from _boundary(rec, att, now, "a scan at the expiry")
    if not due:
        yield from _nothing_due(before, now)
        return
    taken = due[:limit]
    for rec in taken:
        att = _current(before, rec)
        assert att is not None
        yield "LDG-RECOVER-001", ("a cancel-requested task" if rec.snapshot.cancel_requested_at
                                  is not None else "with an unconfirmed report"
                                  if att.snapshot.settlement is not None else "without a report")
    if len(due) > 1 and limit > 1:
        yield "LDG-RECOVER-001", "several due at once"
    if len(due) == limit:
        yield "LDG-RECOVER-003", "as many due as the limit"
    elif len(due) == limit + 1:
        yield "LDG-RECOVER-003", "one more due than the limit"
    if len(due) > limit:
        yield from _earliest(before, due, limit, ctx)


def _earliest(before: State, due: list[TaskRec], limit: int, ctx: Ctx) -> Found:
    """The earliest expiries (unique at the cut) against the lowest real ids and against the
    first submitted: a store scanning in either order takes other tasks."""
    def expiry(rec: TaskRec) -> int:
        att = _current(before, rec)
        assert att is not None
        return att.snapshot.lease.expires_at

    if expiry(due[limit - 1]) == expiry(due[limit]):
        return
    chosen = {r.snapshot.task_id for r in due[:limit]}
    by_id = sorted(due, key=lambda r: str(ctx.minted.get(r.snapshot.task_id, "")))
    by_submission = sorted(due, key=lambda r: (r.snapshot.submitted_at,
                                               int(r.snapshot.task_id.split("#")[1])))
    if chosen != {r.snapshot.task_id for r in by_id[:limit]}:
        yield "LDG-RECOVER-003", names.BY_ID
    if chosen != {r.snapshot.task_id for r in by_submission[:limit]}:
        yield "LDG-RECOVER-003", names.BY_SUBMISSION


def _nothing_due(before: State, now: int) -> Found:
    """A scan with nothing due, beside attempts past their lease that already ended: by a
    recovery, a settlement, or a cancel of the expired attempt."""
    for att in before.attempts.values():
        snap = att.snapshot
        if snap.finished_at is None or now < snap.lease.expires_at:
            continue
        mine = [e for e in before.tasks[att.task_id].history
                if e.attempt_id == snap.event.attempt_id]
        expired = [e.at for e in mine if e.reason == "lease_expired"]
        cancels = [e.at for e in mine if e.reason == "cancel_requested"]
        yield "LDG-RECOVER-004", ("after a settlement" if not expired else "after a cancel"
                                  if expired[0] in cancels else "after a recovery")


# --- discovery and dispatch --------------------------------------------------------------------


def _list_tasks(before: State, op: spec.ListTasks, ctx: Ctx, step: Step) -> Found:
    query, clause = op.query, step.clause
    if clause == "LDG-LIST-004":
        limit = getattr(query, "limit", None)
        filters = getattr(query, "filters", None)
        yield clause, (f"limit {limit}" if limit in (0, 101) else
                       "submitted_from >= submitted_until"
                       if getattr(filters, "submitted_from", None) is not None
                       and getattr(filters, "submitted_until", None) is not None
                       and filters.submitted_from >= filters.submitted_until
                       else "a bad filter")
        return
    if clause == "LDG-LIST-007":
        cursor = query.cursor
        yield clause, ("a value no page issued" if not hasattr(cursor, "scope")
                       else "another scope" if cursor.scope != op.scope else "other filters")
        return
    if _code(step) != "ok":
        return
    yield from _page(before, op, ctx, step)


def _page(before: State, op: spec.ListTasks, ctx: Ctx, step: Step) -> Found:
    query, filters = op.query, op.query.filters
    page = step.outcome.value  # type: ignore[attr-defined]
    mine = [r.snapshot for r in before.tasks.values() if r.snapshot.input.scope == op.scope]
    times = [s.submitted_at for s in mine]
    if len(times) != len(set(times)):
        yield "LDG-LIST-001", "ties on submitted_at"
    if query.limit in (1, 100):
        yield "LDG-LIST-001", f"limit {query.limit}"
    elif query.limit == spec.DEFAULT_LIST_LIMIT:
        yield "LDG-LIST-001", "the default limit"
    if filters.state is not None:
        yield "LDG-LIST-002", "state"
    if filters.queue is not None:
        yield "LDG-LIST-002", "queue"
    for bound in ("submitted_from", "submitted_until"):
        if getattr(filters, bound) in times:
            yield "LDG-LIST-002", f"{bound} met exactly"
    rows = _matching(before, op, ctx)
    if page.items and len(rows) in (query.limit, query.limit + 1):
        yield "LDG-LIST-005", ("an exact last page" if len(rows) == query.limit
                               else "one row beyond the page")
    cursor = query.cursor
    if cursor is not None:
        yield "LDG-LIST-006", "a new limit"
        if any(s.submitted_at == cursor.submitted_at for s in mine if s.task_id != cursor.task_id):
            yield "LDG-LIST-006", "ties across the cursor"


def _matching(before: State, op: spec.ListTasks, ctx: Ctx) -> list[Any]:
    """The rows the page was cut from (after the cursor's position, within the filters)."""
    from .ledgence_tasks import status_of

    rows = [status_of(r) for r in before.tasks.values() if r.snapshot.input.scope == op.scope]
    rows = [r for r in rows if spec.matches_filters(r, op.query.filters)]
    cursor = op.query.cursor
    if cursor is not None:
        position = (cursor.submitted_at,
                    str(ctx.minted.get(cursor.task_id, cursor.task_id)).encode("utf-8"))
        rows = [r for r in rows if page_key(r, ctx) < position]
    return rows


def _claim_dispatch(before: State, op: spec.ClaimDispatch, ctx: Ctx, step: Step) -> Found:
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
    elif clause == "LDG-DISPATCH-006":
        yield clause, ("an unknown session" if session is None else "an expired session"
                       if now >= session.expires_at else "busy" if _code(step) == "busy"
                       else "out of order")
    elif clause == "LDG-DISPATCH-007":
        why = _invalid_claim(acq, target, rec, step)
        if why is not None:
            yield clause, why
    elif clause == "LDG-DISPATCH-003" and rec is not None:
        snap = rec.snapshot
        yield clause, ("a terminal task" if snap.state in spec.TERMINAL_TASK_STATES
                       else "a cancel-requested task" if snap.cancel_requested_at is not None
                       else "an older generation")
    if _code(step) == "ok" and clause == "LDG-DISPATCH-001":
        yield from _claimed(before, acq, session, ctx, step)


def _invalid_claim(acq: Any, target: Any, rec: TaskRec | None, step: Step) -> str | None:
    if acq.sequence == 0:
        return "sequence 0"
    if not 1 <= target.generation <= spec.MAX_GENERATION:
        return "a generation out of range"
    if (target.scope, target.queue) != (acq.scope, acq.queue):
        return "a dispatch in another queue than the consumer's"
    if _code(step) == "not_found":
        return "a missing task"
    if _code(step) == "conflict":
        return "the next generation of an active task"
    if rec is not None and target.generation > rec.snapshot.attempt_count + 1:
        return "a generation never issued"
    return None


_BY_OP: dict[type, Any] = {
    spec.OpenSession: _open_session,
    spec.ExtendSession: _extend_session,
    spec.LookupSubmission: _lookup,
    spec.AcceptResolvedSubmission: _accept,
    spec.Status: _read,
    spec.Result: _read,
    spec.Inspect: _read,
    spec.InspectAttempt: _read,
    spec.History: _history,
    spec.Cancel: _cancel,
    spec.Acquire: _acquisition,
    spec.ProbeAcquisition: _acquisition,
    spec.Renew: _renew,
    spec.Settle: _settle,
    spec.ConfirmQuiescence: _confirm,
    spec.ExpireBatch: _expire_batch,
    spec.ListTasks: _list_tasks,
    spec.ClaimDispatch: _claim_dispatch,
}
