"""Reference model of ``ledgence-tasks``: the whole lifecycle of the ``TaskStore`` and
``RecoveryStore`` traits, paginated listing (``list_tasks``) and targeted dispatch
(``claim_dispatch``, when the store declares ``dispatch``) included.

Identifiers are minted by the store; the model names them ``ws#1``, ``task#1``, ``run#1``,
``attempt#2``, ``lease#2``, ``event#2`` and answers with :class:`Opaque` around those names. The
harness binds each name to the real id on first sight and from then on expects exactly that id
back (``Ref("task#1")`` in later ops, also inside a :class:`~spec.LeaseOwner`).

Every step names the clause that decided its answer. Where the store may legitimately choose
(two candidates tied on every ordering key the model can see, since real ids are not the
model's names), the step is a :class:`OneOf` and the store's answer picks the option.

This module holds sessions, submissions, reads and listing, the step table and :data:`MODEL`;
the rest of the model sits beside it, by the clauses it serves:

- :mod:`.records`: the state, how answers are made, liveness and authority, the
  shared lookups and :func:`~.records.finish`;
- :mod:`.acquisition`: ``probe_acquisition``, ``acquire``, ``claim_dispatch``;
- :mod:`.attempts`: ``renew``, ``settle``, ``confirm_quiescence``, ``cancel``,
  ``expire_batch``;
- :mod:`.blame`: which clause a differing answer breaks (``answer_clause``);
- :mod:`.situations`: the situations each step covers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import MISSING, ByIdentity, Opaque, Ref
from fencepost.spec.ops import Op

from ..base import ContractModel, Ctx, OneOf, Step, reads_and_refusals
from . import acquisition, attempts
from .blame import answer_clause
from .records import (
    EMPTY,
    Draft,
    ForgedPosition,
    PagePosition,
    Refused,
    State,
    TaskRec,
    check_under,
    err_step,
    find_task,
    is_live,
    ok_step,
    refused_with,
    status_of,
)

__all__ = ["EMPTY", "MODEL", "State", "changed", "observer", "step"]


# --- sessions ----------------------------------------------------------------------------------


def _open_session(state: State, op: spec.OpenSession, ctx: Ctx) -> Step:
    def check() -> None:
        spec.validate_scope(op.scope)
        spec.validate_text(op.queue, "queue")
        if isinstance(op.concurrency, bool) or not isinstance(op.concurrency, int) or not (
                1 <= op.concurrency <= spec.U32_MAX):
            raise spec.InvalidInput("concurrency must be a u32 of at least 1")

    check_under("LDG-SESSION-002", check)
    d = Draft(state)
    d.minted += 1
    name = f"ws#{d.minted}"
    session = spec.WorkerSession(name, op.scope, op.queue, op.concurrency,
                                 ctx.now + spec.SESSION_MS)
    d.sessions[name] = session
    return ok_step(d.freeze(), session, "LDG-SESSION-001")


def _extend_session(state: State, op: spec.ExtendSession, ctx: Ctx) -> Step:
    check_under("LDG-SESSION-003", lambda: spec.validate_text(op.worker_session_id,
                                                          "worker_session_id"))
    session = state.sessions.get(op.worker_session_id)
    if session is None:
        raise refused_with(spec.UnknownSession(str(op.worker_session_id)), "LDG-SESSION-003")
    if ctx.now >= session.expires_at:
        raise refused_with(spec.SessionExpired(session.id), "LDG-SESSION-004")
    d = Draft(state)
    d.replaced[session.id] = session.expires_at
    session = attrs.evolve(session, expires_at=ctx.now + spec.SESSION_MS)
    d.sessions[session.id] = session
    return ok_step(d.freeze(), session, "LDG-SESSION-004")



# --- submissions -------------------------------------------------------------------------------


def _lookup(state: State, op: spec.LookupSubmission, ctx: Ctx) -> Step:
    def check() -> None:
        spec.validate_scope(op.scope)
        spec.validate_text(op.idempotency_key, "idempotency_key",
                           spec.MAX_IDEMPOTENCY_KEY_BYTES)

    check_under("LDG-LOOKUP-001", check)
    task_id = state.keys.get((op.scope, op.idempotency_key))
    found = state.tasks[task_id].snapshot if task_id is not None else None
    return ok_step(state, found, "LDG-LOOKUP-001")


def _accept(state: State, op: spec.AcceptResolvedSubmission, ctx: Ctx) -> Step:
    check_under("LDG-SUBMIT-004", lambda: spec.validate_submission(op.command, op.descriptor))
    task = op.command.input
    key = (task.scope, op.command.idempotency_key)
    winner = state.keys.get(key)
    if winner is not None:
        rec = state.tasks[winner]
        if not spec.same_submission(rec.snapshot.input, task):
            raise refused_with(spec.Conflict("another input under this key"), "LDG-SUBMIT-003")
        return ok_step(state, rec.snapshot, "LDG-SUBMIT-002")
    d = Draft(state)
    d.minted += 1
    task_id, run_id = f"task#{d.minted}", f"run#{d.minted}"
    snap = spec.TaskSnapshot(task_id, run_id, op.command.idempotency_key, task, op.descriptor,
                             "queued", ctx.now, ctx.now, None, None, 0, None)
    d.tasks[task_id] = TaskRec(snap, (spec.HistoryEvent(task_id, None, ctx.now, "submitted"),))
    d.keys[key] = task_id
    reused = any(k == key[1] for _, k in state.keys)
    return ok_step(d.freeze(), snap, "LDG-SUBMIT-005" if reused else "LDG-SUBMIT-001")


# --- reads -------------------------------------------------------------------------------------



def _read_clause(state: State, rec: TaskRec, now: int, clause: str) -> str:
    """READ-004 when the read shows an attempt that is past its expiry but not yet recovered."""
    current = rec.snapshot.current_attempt_id
    if current is not None and not is_live(rec, state.attempts[current], now):
        return "LDG-READ-004"
    return clause



def _status(state: State, op: spec.Status, ctx: Ctx) -> Step:
    rec = find_task(state, op.scope, op.task_id)
    return ok_step(state, status_of(rec), _read_clause(state, rec, ctx.now, "LDG-READ-001"))


def _result(state: State, op: spec.Result, ctx: Ctx) -> Step:
    rec = find_task(state, op.scope, op.task_id)
    return ok_step(state, spec.TaskResult(status_of(rec), rec.outcome),
               _read_clause(state, rec, ctx.now, "LDG-READ-001"))


def _inspect(state: State, op: spec.Inspect, ctx: Ctx) -> Step:
    rec = find_task(state, op.scope, op.task_id)
    return ok_step(state, rec.snapshot, _read_clause(state, rec, ctx.now, "LDG-READ-001"))


def _inspect_attempt(state: State, op: spec.InspectAttempt, ctx: Ctx) -> Step:
    check_under("LDG-READ-003", lambda: spec.validate_text(op.attempt_id, "attempt_id"))
    rec = find_task(state, op.scope, op.task_id)
    att = state.attempts.get(op.attempt_id)
    if att is None or att.task_id != op.task_id:
        raise refused_with(spec.NotFound(str(op.attempt_id)), "LDG-READ-003")
    return ok_step(state, att.snapshot, _read_clause(state, rec, ctx.now, "LDG-READ-003"))


def _history(state: State, op: spec.History, ctx: Ctx) -> Step:
    """The reference, then ``after`` (a u64 in the seed, so a negative or non-integer one is
    refused before any task is looked up), then the task; at most 100 events after it. seed:
    crates/ledgence-adapter-postgres/src/storage.rs:186-203 at 2b1bcd2."""
    check_under("LDG-READ-001", lambda: (spec.validate_scope(op.scope),
                                    spec.validate_text(op.task_id, "task_id")))
    after = op.after_sequence
    if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after <= spec.U64_MAX:
        raise refused_with(spec.InvalidInput("after_sequence must be a u64"), "LDG-HISTORY-001")
    rec = find_task(state, op.scope, op.task_id)
    page = list(_recorded(rec.history)[after:after + 100])
    # A page that agrees shows every transition wrote its events: HISTORY-002 held too.
    return ok_step(state, page, "LDG-HISTORY-001", also=("LDG-HISTORY-002",))


_RECORDED = ByIdentity(256)
""":func:`_recorded` of the histories it was asked of: a task's history is read back after
every step that touched it, the same tuple while the task did not change."""


def _recorded(history: tuple[spec.HistoryEvent, ...]) -> tuple[spec.RecordedHistoryEvent, ...]:
    """``history`` numbered from 1, the same objects for the same history (so that what is
    worked out from them, their view with minted names and what the harness fills in, is
    found again)."""
    found = _RECORDED.get(history)
    if found is MISSING:
        found = _RECORDED.put(history, tuple(
            spec.RecordedHistoryEvent(i, e) for i, e in enumerate(history, 1)))
    return found  # type: ignore[no-any-return]


# --- discovery ---------------------------------------------------------------------------------


def page_key(status: spec.TaskStatus, ctx: Ctx) -> tuple[int, bytes]:
    """A task's place in a listing: submitted_at, then the store's task id as bytes."""
    real = ctx.minted.get(status.task_id, status.task_id)
    return (status.submitted_at, str(real).encode("utf-8"))


def _list_tasks(state: State, op: spec.ListTasks, ctx: Ctx) -> Step | OneOf:
    check_under("LDG-LIST-004", lambda: spec.validate_list_query(op.scope, op.query))
    query, filters = op.query, op.query.filters
    cursor = query.cursor
    if (isinstance(cursor, ForgedPosition) and cursor.scope == op.scope
            and cursor.filters == filters):
        refused = err_step(state, spec.InvalidInput("a cursor no page issued"), "LDG-LIST-007")
        # read, the page continues strictly after the position it names
        read = attrs.evolve(_page(state, op, ctx, cursor), clause="LDG-LIST-006",
                            effect_clause="LDG-LIST-006")
        return OneOf((refused, read), "LDG-LIST-007",
                     f"{cursor.case}: refused, or read as the position it names")
    if cursor is not None and not (isinstance(cursor, PagePosition) and cursor.scope == op.scope
                                   and cursor.filters == filters):
        raise refused_with(spec.InvalidInput("the cursor does not match this scope and these "
                                        "filters"), "LDG-LIST-007")
    return _page(state, op, ctx, cursor)


def _page(state: State, op: spec.ListTasks, ctx: Ctx,
          cursor: PagePosition | ForgedPosition | None) -> Step:
    """The page after ``cursor``'s position (the first page for None)."""
    query, filters = op.query, op.query.filters
    rows = sorted((status_of(r) for r in state.tasks.values()
                   if r.snapshot.input.scope == op.scope),
                  key=lambda s: page_key(s, ctx), reverse=True)
    rows = [r for r in rows if spec.matches_filters(r, filters)]
    if cursor is not None:
        position = page_key(spec.TaskStatus(op.scope, cursor.task_id, "", "", None, "", 0, None,
                                            None, cursor.submitted_at, 0, None, None), ctx)
        rows = [r for r in rows if page_key(r, ctx) < position]
    page = rows[:query.limit]
    more = len(rows) > query.limit
    next_cursor = (Opaque(PagePosition(op.scope, filters, page[-1].submitted_at, page[-1].task_id))
                   if more else None)
    also = ["LDG-LIST-001"]
    if any(r.snapshot.input.scope != op.scope for r in state.tasks.values()):
        also.append("LDG-LIST-010")
    if cursor is not None:
        also.append("LDG-LIST-008")
    if cursor is not None and not page:
        clause = "LDG-LIST-008"
    elif page and len(page) == query.limit and not more:
        clause = "LDG-LIST-005"
    elif cursor is not None:
        clause = "LDG-LIST-006"
    elif filters.correlation_key == "":
        clause = "LDG-LIST-003"
    elif filters != spec.TaskFilters():
        clause = "LDG-LIST-002"
    else:
        clause = "LDG-LIST-001"
    return ok_step(state, spec.TaskPage(tuple(page), next_cursor), clause, also=tuple(also))


_STEPS: dict[type, Any] = {
    spec.ListTasks: _list_tasks,
    spec.OpenSession: _open_session,
    spec.ExtendSession: _extend_session,
    spec.LookupSubmission: _lookup,
    spec.AcceptResolvedSubmission: _accept,
    spec.Status: _status,
    spec.Result: _result,
    spec.Inspect: _inspect,
    spec.InspectAttempt: _inspect_attempt,
    spec.History: _history,
    **acquisition.STEPS,
    **attempts.STEPS,
}


def step(state: State, op: Op, ctx: Ctx) -> Step | OneOf:
    """Apply ``op``: the outcome, the next state and the clause that decided it."""
    try:
        return _STEPS[type(op)](state, op, ctx)  # type: ignore[no-any-return]
    except Refused as refused:
        return err_step(state, refused.error, refused.clause)


def observer(key: str, bindings: Mapping[str, Any], state: State) -> tuple[Op, ...] | None:
    """Read a task back in its own scope: inspect, its latest attempt, its history."""
    rec = state.tasks.get(key)
    if rec is None or key not in bindings:
        return None
    scope = rec.snapshot.input.scope
    reads: list[Op] = [spec.Inspect(scope, Ref(key))]
    if rec.latest_attempt is not None and rec.latest_attempt in bindings:
        reads.append(spec.InspectAttempt(scope, Ref(key), Ref(rec.latest_attempt)))
    reads.append(spec.History(scope, Ref(key), 0))
    return tuple(reads)


def changed(before: State, after: State) -> list[str]:
    """The tasks a step changed (their history included): the harness reads them back."""
    earlier = before.tasks
    return [k for k, rec in after.tasks.items()
            if (old := earlier.get(k)) is not rec and old != rec]


def _situations(before: State, op: Op, ctx: Ctx, step: Step) -> Any:
    from .situations import situations  # it builds on this module's records

    return situations(before, op, ctx, step)


MODEL = ContractModel(
    name=spec.CONTRACT,
    initial=EMPTY,
    step=step,
    observe=observer,
    field_clauses={
        "remaining_ms": "LDG-AUTH-001",
        "execution_remaining_ms": "LDG-AUTH-001",
        "renew_sequence": "LDG-AUTH-001",
        "cancel_requested": "LDG-AUTH-001",
        "dispatch_allowed": "LDG-AUTH-001",
        "execution_may_have_started": "LDG-RENEW-007",
        "accepted_at": "LDG-SETTLE-001",
        "latest_attempt_id": "LDG-READ-001",
    },
    choices=spec.CHOICES,
    durable_clause="LDG-DURABLE-001",
    pure=reads_and_refusals("lookup_submission", "status", "result", "inspect", "history",
                            "inspect_attempt", "list_tasks"),
    mint_clause="LDG-ID-001",
    changed=changed,
    answer_clause=answer_clause,
    situations=_situations,
)
