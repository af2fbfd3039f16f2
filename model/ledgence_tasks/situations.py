"""The situations of the ledgence-tasks clauses that one agreed step puts to the test.

:func:`situations` looks at the store before the step, at the op and at the step's answer and
next state, and names the cases of ``spec.ledgence_tasks.CLAUSES`` it reached (the names are
declared in ``spec/ledgence_tasks/situations.py``): a lease expiry met 1 ms before, exactly or 1 ms
after; which of now + 60 000, the authority deadline and the session expiry capped a lease; the
cursor an acquisition met; how an attempt finished; a history page holding exactly 100 events
or one more left behind; a bounded scan whose earliest expiries are neither the lowest ids nor
the first submitted. A run that never reaches one of a clause's situations passes it weakly.
The worker calls' cases (acquisition, renewal, settlement, quiescence, targeted dispatch) are
in :mod:`.worker_situations`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.ledgence_tasks import situations as names
from fencepost.spec.ops import Op

from ..base import Ctx, Step
from .attempts import expired_candidates
from .records import ForgedPosition, State, TaskRec, UnissuedCursor, is_live, status_of
from .steps import page_key
from .worker_situations import (
    acquisition,
    boundary,
    claim_dispatch,
    code,
    confirm,
    current,
    renew,
    settle,
    valid,
)

Found = Iterator[tuple[str, str]]
BEFORE, AT, PAST = names.BEFORE, names.AT, names.PAST
_ISSUED_AT_AN_END = dict(zip((0, spec.MAX_TIMESTAMP_MS), names.ISSUED_AT_THE_ENDS, strict=True))


def situations(before: State, op: Op, ctx: Ctx, step: Step) -> Found:
    """The (clause, situation) pairs the agreed ``step`` of ``op`` on ``before`` reached."""
    found = _BY_OP.get(type(op))
    if found is not None:
        yield from found(before, op, ctx, step)
    yield from _written(before, step)
    yield from _finished(before, op, step)


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


# --- sessions, submissions, reads --------------------------------------------------------------


def _open_session(before: State, op: spec.OpenSession, ctx: Ctx, step: Step) -> Found:
    if step.clause == "LDG-SESSION-002":
        scope_ok = valid(lambda: spec.validate_scope(op.scope))
        yield step.clause, ("a bad scope" if not scope_ok else "concurrency 0"
                            if op.concurrency == 0 else "a bad queue")


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
        replaced = before.replaced.get(session.id)
        if code(step) == "ok" and replaced is not None and ctx.now >= replaced:
            yield "LDG-SESSION-004", names.EXTENSION_READ_BACK


def _lookup(before: State, op: spec.LookupSubmission, ctx: Ctx, step: Step) -> Found:
    if code(step) == "ok":
        bound = (op.scope, op.idempotency_key) in before.keys
        yield "LDG-LOOKUP-001", "a bound key" if bound else "an unbound key"


def _accept(before: State, op: spec.AcceptResolvedSubmission, ctx: Ctx, step: Step) -> Found:
    clause = step.clause
    if clause == "LDG-SUBMIT-004":
        yield clause, ("another program's descriptor" if code(step) == "conflict"
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
    if code(step) != "ok":
        if step.clause == "LDG-READ-003":
            yield step.clause, "another task's attempt"
        return
    rec = before.tasks[op.task_id]
    if isinstance(op, spec.Result):
        state = rec.snapshot.state
        yield "LDG-READ-001", f"an {state} task" if state == "active" else f"a {state} task"
        yield from _result_read_back(rec.outcome)
        yield from _outcome_read_back(before, rec.outcome)
    if isinstance(op, spec.Inspect):
        for case in exact_cases(rec.snapshot.input.data):
            yield "LDG-READ-005", f"task input: {case}"
    if isinstance(op, spec.InspectAttempt):
        yield "LDG-READ-003", ("the current attempt" if op.attempt_id == rec.latest_attempt
                               else "an earlier attempt")
        settlement = before.attempts[op.attempt_id].snapshot.settlement
        if getattr(getattr(settlement, "report", None), "elapsed_ms", 0) >= 2**63:
            yield "LDG-READ-005", "a report's elapsed_ms past the i64s"
    att = current(before, rec)
    if att is not None and not is_live(rec, att, ctx.now):
        yield "LDG-READ-004", AT if ctx.now == att.snapshot.lease.expires_at else PAST


def _result_read_back(outcome: Any) -> Found:
    """A result whose output, or failure message, only an exact store gives back."""
    if not isinstance(outcome, Mapping):
        return
    if outcome.get("kind") == "succeeded" and any(exact_cases(outcome.get("output"))):
        yield "LDG-READ-005", "a success output read back"
    failure = outcome.get("failure") if outcome.get("kind") == "failed" else None
    error = failure.get("error") if isinstance(failure, Mapping) else None
    message = error.get("message", "") if isinstance(error, Mapping) else ""
    if any(exact_cases(message)):
        yield "LDG-READ-005", "a failure message read back"


def _outcome_read_back(before: State, outcome: Any) -> Found:
    """A finished outcome whose attempt fields, or failure, a store that derives them from the
    report alone (or takes a finished attempt for quiescent) gives wrong."""
    if not isinstance(outcome, Mapping) or "attempt_id" not in outcome:
        return
    unconfirmed, started, cleanup, lost = names.OUTCOME_READ_BACKS
    failure = outcome.get("failure") or {}
    if failure.get("kind") == "attempt_lost":
        yield "LDG-READ-001", lost
    elif outcome["quiescence"] == spec.UNCONFIRMED:
        yield "LDG-READ-001", unconfirmed
    if failure.get("kind") == "execution" and failure.get("cleanup_error") is not None:
        yield "LDG-READ-001", cleanup
    settlement = before.attempts[outcome["attempt_id"]].snapshot.settlement
    report = settlement.report if settlement is not None else None
    if outcome["execution_may_have_started"] and (report is None or (
            isinstance(report, spec.ExecutionFailure) and not report.execution_may_have_started)):
        yield "LDG-READ-001", started


def exact_cases(value: Any, depth: int = 0) -> Iterator[str]:
    """Which of :data:`names.EXACT_VALUES` the JSON ``value`` holds (each once per container
    it is met in; callers ask ``any`` or collect them)."""
    one, zero, ints, text, deep = names.EXACT_VALUES
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int) and value in spec.JSON_INTEGERS:
        yield ints
    elif isinstance(value, float) and value == 0.0 and str(value).startswith("-"):
        yield zero
    elif isinstance(value, str) and (not value or "\x00" in value or not value.isascii()):
        yield text
    elif isinstance(value, Mapping | list | tuple):
        items = list(value.values()) if isinstance(value, Mapping) else list(value)
        if depth + 1 >= spec.MAX_DATA_DEPTH:
            yield deep
        kinds = {type(v) for v in items if v == 1 and not isinstance(v, bool)}
        if {int, float} <= kinds:
            yield one
        for item in items:
            yield from exact_cases(item, depth + 1)


def _history(before: State, op: spec.History, ctx: Ctx, step: Step) -> Found:
    clause = "LDG-HISTORY-001"
    if step.clause == clause and code(step) != "ok":
        yield clause, "a negative after"
        return
    if code(step) != "ok":
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
    if code(step) != "ok":
        return
    rec = before.tasks[op.task_id]
    snap = rec.snapshot
    if step.clause == "LDG-CANCEL-002":
        yield step.clause, (f"a {snap.state} task" if snap.state in spec.TERMINAL_TASK_STATES
                            else "a cancel-requested task")
        return
    att = current(before, rec)
    if att is None:
        return
    yield from boundary(rec, att, ctx.now, "cancel at the expiry")
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


# --- recovery ----------------------------------------------------------------------------------


def _expire_batch(before: State, op: spec.ExpireBatch, ctx: Ctx, step: Step) -> Found:
    if step.clause == "LDG-RECOVER-002":
        if op.limit in (0, 101):
            yield step.clause, f"limit {op.limit}"
        return
    now, limit = ctx.now, op.limit
    due = expired_candidates(before, now)
    for rec in before.tasks.values():
        att = current(before, rec)
        if att is not None and rec.snapshot.state == "active":
            yield from boundary(rec, att, now, "a scan at the expiry")
    if not due:
        yield from _nothing_due(before, now)
        return
    taken = due[:limit]
    for rec in taken:
        att = current(before, rec)
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
        att = current(before, rec)
        assert att is not None
        return int(att.snapshot.lease.expires_at)

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
    if isinstance(query.cursor, ForgedPosition):  # refused or read: either is the contract's
        yield "LDG-LIST-007", query.cursor.case
    if clause == "LDG-LIST-004":
        limit = getattr(query, "limit", None)
        start = getattr(getattr(query, "filters", None), "submitted_from", None)
        end = getattr(getattr(query, "filters", None), "submitted_until", None)
        yield clause, (f"limit {limit}" if limit in (0, 101) else
                       "submitted_from >= submitted_until"
                       if isinstance(start, int) and isinstance(end, int) and start >= end
                       else "a bad filter")
        return
    if clause == "LDG-LIST-007":
        cursor = query.cursor
        if isinstance(cursor, UnissuedCursor):
            yield clause, cursor.case
            return
        yield clause, ("a value no page issued" if not hasattr(cursor, "scope")
                       else "another scope" if cursor.scope != op.scope else "other filters")
        return
    if code(step) != "ok":
        return
    yield from _page(before, op, ctx, step)


def _page(before: State, op: spec.ListTasks, ctx: Ctx, step: Step) -> Found:
    query, filters = op.query, op.query.filters
    page = getattr(step.outcome, "value", None)
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
    if getattr(page, "items", ()) and len(rows) in (query.limit, query.limit + 1):
        yield "LDG-LIST-005", ("an exact last page" if len(rows) == query.limit
                               else "one row beyond the page")
    cursor = query.cursor
    if cursor is not None:
        yield "LDG-LIST-006", "a new limit"
        if any(s.submitted_at == cursor.submitted_at for s in mine if s.task_id != cursor.task_id):
            yield "LDG-LIST-006", "ties across the cursor"
        if cursor.submitted_at == filters.submitted_from:
            yield "LDG-LIST-006", "a cursor at submitted_from"
        end = _ISSUED_AT_AN_END.get(cursor.submitted_at)
        if end is not None:
            yield "LDG-LIST-006", end


def _matching(before: State, op: spec.ListTasks, ctx: Ctx) -> list[Any]:
    """The rows the page was cut from (after the cursor's position, within the filters)."""
    rows = [status_of(r) for r in before.tasks.values() if r.snapshot.input.scope == op.scope]
    rows = [r for r in rows if spec.matches_filters(r, op.query.filters)]
    cursor = op.query.cursor
    if cursor is not None:
        position = (cursor.submitted_at,
                    str(ctx.minted.get(cursor.task_id, cursor.task_id)).encode("utf-8"))
        rows = [r for r in rows if page_key(r, ctx) < position]
    return rows


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
    spec.Acquire: acquisition,
    spec.ProbeAcquisition: acquisition,
    spec.Renew: renew,
    spec.Settle: settle,
    spec.ConfirmQuiescence: confirm,
    spec.ExpireBatch: _expire_batch,
    spec.ListTasks: _list_tasks,
    spec.ClaimDispatch: claim_dispatch,
}
