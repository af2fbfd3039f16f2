"""Reference model of ``ledgence-tasks``: the whole lifecycle of the ``TaskStore`` and
``RecoveryStore`` traits but paginated listing and targeted dispatch.

Identifiers are minted by the store; the model names them ``ws#1``, ``task#1``, ``run#1``,
``attempt#2``, ``lease#2``, ``event#2`` and answers with :class:`Opaque` around those names. The
harness binds each name to the real id on first sight and from then on expects exactly that id
back (``Ref("task#1")`` in later ops, also inside a :class:`~spec.LeaseOwner`).

Every step names the clause that decided its answer. Where the store may legitimately choose
(two candidates tied on every ordering key the model can see, since real ids are not the
model's names), the step is a :class:`OneOf` and the store's answer picks the option.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import ContractError
from fencepost.spec.opaque import Opaque, Ref, evolve_fields, init_fields
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Err, Ok, Outcome

from .base import ContractModel, Ctx, OneOf, Step, field_diff, reads_and_refusals


@attrs.frozen
class TaskRec:
    snapshot: spec.TaskSnapshot  # ids hold the model's names
    history: tuple[spec.HistoryEvent, ...]
    latest_attempt: str | None = None
    outcome: Mapping[str, Any] | None = None


@attrs.frozen
class AttemptRec:
    snapshot: spec.AttemptSnapshot
    receipt: spec.SettleReceipt | None = None

    @property
    def task_id(self) -> str:
        return self.snapshot.event.task_id

    @property
    def owner(self) -> spec.LeaseOwner:
        return self.snapshot.lease.owner


@attrs.frozen
class Cursor:
    """A consumer's last acquisition: its sequence and the attempt it assigned (None: Empty)."""

    sequence: int
    attempt: str | None


@attrs.frozen
class Receipt:
    """A claim_dispatch's durable receipt: the command and the disposition it got."""

    command: spec.ClaimCommand
    disposition: Any
    attempt: str | None = None  # the attempt a Claimed disposition assigned


@attrs.frozen
class CursorM:
    """What a page's next_cursor stands for: scope, filters and the last item's position."""

    scope: spec.Scope
    filters: spec.TaskFilters
    submitted_at: int
    task_id: str


@attrs.frozen
class State:
    sessions: Mapping[str, spec.WorkerSession] = attrs.field(factory=dict)
    tasks: Mapping[str, TaskRec] = attrs.field(factory=dict)
    attempts: Mapping[str, AttemptRec] = attrs.field(factory=dict)
    cursors: Mapping[tuple[str, int], Cursor] = attrs.field(factory=dict)
    keys: Mapping[tuple[spec.Scope, str], str] = attrs.field(factory=dict)
    minted: int = 0
    receipts: Mapping[tuple[str, int, int], Receipt] = attrs.field(factory=dict)


EMPTY = State()


class Draft:
    """A mutable copy of a :class:`State` for one step; :meth:`freeze` makes the next state."""

    def __init__(self, state: State) -> None:
        self.sessions = dict(state.sessions)
        self.tasks = dict(state.tasks)
        self.attempts = dict(state.attempts)
        self.cursors = dict(state.cursors)
        self.keys = dict(state.keys)
        self.minted = state.minted
        self.receipts = dict(state.receipts)

    def freeze(self) -> State:
        return State(self.sessions, self.tasks, self.attempts, self.cursors, self.keys,
                     self.minted, self.receipts)

    def record(self, task_id: str, reason: str, at: int, attempt: str | None = None) -> None:
        rec = self.tasks[task_id]
        event = spec.HistoryEvent(task_id, attempt, at, reason)
        self.tasks[task_id] = attrs.evolve(rec, history=rec.history + (event,))

    def evolve_task(self, task_id: str, **changes: Any) -> None:
        rec = self.tasks[task_id]
        self.tasks[task_id] = attrs.evolve(rec, snapshot=attrs.evolve(rec.snapshot, **changes))

    def evolve_attempt(self, name: str, **changes: Any) -> None:
        rec = self.attempts[name]
        self.attempts[name] = attrs.evolve(rec, snapshot=attrs.evolve(rec.snapshot, **changes))


# --- answers -----------------------------------------------------------------------------------

_NAME = re.compile(r"(ws|task|run|attempt|lease|event)#\d+")


_PLAIN = frozenset({int, float, bool, type(None)})


def _opaque_ids(value: Any) -> Any:
    """The model's view of a value: every minted name wrapped as :class:`Opaque` (parts with
    no name inside are returned as they are; frozen values need no copy)."""
    kind = type(value)
    if kind in _PLAIN or kind is Opaque:
        return value
    if isinstance(value, str):
        return Opaque(value) if _NAME.fullmatch(value) else value
    names = init_fields(kind)
    if names is not None:
        return evolve_fields(value, names, _opaque_ids)
    if isinstance(value, tuple):
        return tuple(_opaque_ids(v) for v in value)
    if isinstance(value, list):
        return [_opaque_ids(v) for v in value]
    if isinstance(value, dict):
        return {k: _opaque_ids(v) for k, v in value.items()}
    return value


def _err(state: State, error: ContractError, clause: str) -> Step:
    return Step(Err(error.code, error.detail), state, clause, clause)


def _ok(state: State, value: Any, clause: str, effect: str | None = None,
        also: tuple[str, ...] = ()) -> Step:
    return Step(Ok(_opaque_ids(value)), state, clause, effect or clause, also)


class Refused(Exception):
    """Raised inside a step: answer ``error`` under ``clause`` and change nothing."""

    def __init__(self, error: ContractError, clause: str) -> None:
        self.error, self.clause = error, clause


def _check(clause: str, check: Callable[[], Any]) -> None:
    try:
        check()
    except ContractError as e:
        raise Refused(e, clause) from None


def _refuse(error: ContractError, clause: str) -> Refused:
    return Refused(error, clause)


# --- liveness, authority, leases ---------------------------------------------------------------


def is_live(task: TaskRec, att: AttemptRec, now: int) -> bool:
    """Active and current, and now strictly before both the lease expiry and the authority
    deadline (equality is expired)."""
    snap = att.snapshot
    return (task.snapshot.state == "active"
            and task.snapshot.current_attempt_id == snap.event.attempt_id
            and snap.state == "active"
            and now < snap.lease.expires_at and now < snap.authority_deadline)


def at_boundary(task: TaskRec, att: AttemptRec, now: int) -> bool:
    """A current active attempt exactly at its lease expiry or authority deadline: the
    equality rule alone makes it expired."""
    snap = att.snapshot
    return (task.snapshot.current_attempt_id == snap.event.attempt_id and snap.state == "active"
            and now in (snap.lease.expires_at, snap.authority_deadline))


def authority(task: TaskRec, att: AttemptRec, now: int) -> spec.Authority:
    """The attempt's authority at ``now`` (LDG-AUTH-001). Execution time ends with the cancel
    flag: 0 once a cancel is requested or the deadline is reached, even while the lease (and
    remaining_ms) lasts for cleanup. seed: crates/ledgence-orchestration-core/src/lib.rs:252-281
    (execution_remaining_ms 263-267) at 220b133."""
    snap = att.snapshot
    live = is_live(task, att, now)
    cancel = task.snapshot.cancel_requested_at is not None or now >= snap.deadline
    last = snap.last_renewal
    return spec.Authority(
        expires_at=snap.lease.expires_at,
        remaining_ms=snap.lease.expires_at - now if live else 0,
        execution_remaining_ms=snap.deadline - now if live and not cancel else 0,
        renew_sequence=last.sequence if last is not None else 0,
        cancel_requested=cancel,
        dispatch_allowed=(live and not cancel and snap.settlement is None
                          and last is not None and last.intent == spec.DISPATCH),
    )


def lease_expiry(now: int, authority_deadline: int, session: spec.WorkerSession) -> int:
    return min(now + spec.LEASE_MS, authority_deadline, session.expires_at)


def _live_failure(task: TaskRec, att: AttemptRec, now: int, clause: str) -> str:
    """The clause a not-live answer rests on: the equality rule at the exact boundary."""
    return "LDG-LIVE-001" if at_boundary(task, att, now) else clause


# --- sessions ----------------------------------------------------------------------------------


def _open_session(state: State, op: spec.OpenSession, ctx: Ctx) -> Step:
    def check() -> None:
        spec.validate_scope(op.scope)
        spec.validate_text(op.queue, "queue")
        if isinstance(op.concurrency, bool) or not isinstance(op.concurrency, int) or (
                op.concurrency < 1):
            raise spec.InvalidInput("concurrency must be at least 1")

    _check("LDG-SESSION-002", check)
    d = Draft(state)
    d.minted += 1
    name = f"ws#{d.minted}"
    session = spec.WorkerSession(name, op.scope, op.queue, op.concurrency,
                                 ctx.now + spec.SESSION_MS)
    d.sessions[name] = session
    return _ok(d.freeze(), session, "LDG-SESSION-001")


def _extend_session(state: State, op: spec.ExtendSession, ctx: Ctx) -> Step:
    _check("LDG-SESSION-003", lambda: spec.validate_text(op.worker_session_id,
                                                          "worker_session_id"))
    session = state.sessions.get(op.worker_session_id)
    if session is None:
        raise _refuse(spec.UnknownSession(str(op.worker_session_id)), "LDG-SESSION-003")
    if ctx.now >= session.expires_at:
        raise _refuse(spec.SessionExpired(session.id), "LDG-SESSION-004")
    d = Draft(state)
    session = attrs.evolve(session, expires_at=ctx.now + spec.SESSION_MS)
    d.sessions[session.id] = session
    return _ok(d.freeze(), session, "LDG-SESSION-004")


def _session(state: State, session_id: str, clause: str, now: int) -> spec.WorkerSession:
    session = state.sessions.get(session_id)
    if session is None:
        raise _refuse(spec.UnknownSession(session_id), clause)
    if now >= session.expires_at:
        raise _refuse(spec.SessionExpired(session_id), clause)
    return session


# --- submissions -------------------------------------------------------------------------------


def _lookup(state: State, op: spec.LookupSubmission, ctx: Ctx) -> Step:
    def check() -> None:
        spec.validate_scope(op.scope)
        spec.validate_text(op.idempotency_key, "idempotency_key",
                           spec.MAX_IDEMPOTENCY_KEY_BYTES)

    _check("LDG-LOOKUP-001", check)
    task_id = state.keys.get((op.scope, op.idempotency_key))
    found = state.tasks[task_id].snapshot if task_id is not None else None
    return _ok(state, found, "LDG-LOOKUP-001")


def _accept(state: State, op: spec.AcceptResolvedSubmission, ctx: Ctx) -> Step:
    _check("LDG-SUBMIT-004", lambda: spec.validate_submission(op.command, op.descriptor))
    task = op.command.input
    key = (task.scope, op.command.idempotency_key)
    winner = state.keys.get(key)
    if winner is not None:
        rec = state.tasks[winner]
        if not spec.same_submission(rec.snapshot.input, task):
            raise _refuse(spec.Conflict("another input under this key"), "LDG-SUBMIT-003")
        return _ok(state, rec.snapshot, "LDG-SUBMIT-002")
    d = Draft(state)
    d.minted += 1
    task_id, run_id = f"task#{d.minted}", f"run#{d.minted}"
    snap = spec.TaskSnapshot(task_id, run_id, op.command.idempotency_key, task, op.descriptor,
                             "queued", ctx.now, ctx.now, None, None, 0, None)
    d.tasks[task_id] = TaskRec(snap, (spec.HistoryEvent(task_id, None, ctx.now, "submitted"),))
    d.keys[key] = task_id
    reused = any(k == key[1] for _, k in state.keys)
    return _ok(d.freeze(), snap, "LDG-SUBMIT-005" if reused else "LDG-SUBMIT-001")


# --- reads -------------------------------------------------------------------------------------


def _find(state: State, scope: Any, task_id: Any) -> TaskRec:
    """The task in ``scope``: malformed references answer invalid_input (READ-001), a missing
    task or one of another scope not_found (READ-002)."""
    def check() -> None:
        spec.validate_scope(scope)
        spec.validate_text(task_id, "task_id")

    _check("LDG-READ-001", check)
    rec = state.tasks.get(task_id)
    if rec is None or rec.snapshot.input.scope != scope:
        raise _refuse(spec.NotFound(str(task_id)), "LDG-READ-002")
    return rec


def _read_clause(state: State, rec: TaskRec, now: int, clause: str) -> str:
    """READ-004 when the read shows an attempt that is past its expiry but not yet recovered."""
    current = rec.snapshot.current_attempt_id
    if current is not None and not is_live(rec, state.attempts[current], now):
        return "LDG-READ-004"
    return clause


def status_of(rec: TaskRec) -> spec.TaskStatus:
    snap = rec.snapshot
    return spec.TaskStatus(snap.input.scope, snap.task_id, snap.run_id, snap.input.queue,
                           snap.input.correlation_key, snap.state, snap.attempt_count,
                           snap.current_attempt_id, rec.latest_attempt, snap.submitted_at,
                           snap.available_at, snap.terminal_at, snap.cancel_requested_at)


def _status(state: State, op: spec.Status, ctx: Ctx) -> Step:
    rec = _find(state, op.scope, op.task_id)
    return _ok(state, status_of(rec), _read_clause(state, rec, ctx.now, "LDG-READ-001"))


def _result(state: State, op: spec.Result, ctx: Ctx) -> Step:
    rec = _find(state, op.scope, op.task_id)
    return _ok(state, spec.TaskResult(status_of(rec), rec.outcome),
               _read_clause(state, rec, ctx.now, "LDG-READ-001"))


def _inspect(state: State, op: spec.Inspect, ctx: Ctx) -> Step:
    rec = _find(state, op.scope, op.task_id)
    return _ok(state, rec.snapshot, _read_clause(state, rec, ctx.now, "LDG-READ-001"))


def _inspect_attempt(state: State, op: spec.InspectAttempt, ctx: Ctx) -> Step:
    _check("LDG-READ-003", lambda: spec.validate_text(op.attempt_id, "attempt_id"))
    rec = _find(state, op.scope, op.task_id)
    att = state.attempts.get(op.attempt_id)
    if att is None or att.task_id != op.task_id:
        raise _refuse(spec.NotFound(str(op.attempt_id)), "LDG-READ-003")
    return _ok(state, att.snapshot, _read_clause(state, rec, ctx.now, "LDG-READ-003"))


def _history(state: State, op: spec.History, ctx: Ctx) -> Step:
    """The reference, then ``after`` (a u64 in the seed, so a negative or non-integer one is
    refused before any task is looked up), then the task; at most 100 events after it. seed:
    crates/ledgence-adapter-postgres/src/storage.rs:186-203 at 2b1bcd2."""
    _check("LDG-READ-001", lambda: (spec.validate_scope(op.scope),
                                    spec.validate_text(op.task_id, "task_id")))
    after = op.after_sequence
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise _refuse(spec.InvalidInput("after_sequence must be >= 0"), "LDG-HISTORY-001")
    rec = _find(state, op.scope, op.task_id)
    page = [spec.RecordedHistoryEvent(i, e) for i, e in enumerate(rec.history, 1) if i > after]
    # A page that agrees shows every transition wrote its events: HISTORY-002 held too.
    return _ok(state, page[:100], "LDG-HISTORY-001", also=("LDG-HISTORY-002",))


# --- finishing an attempt ----------------------------------------------------------------------


def finish(d: Draft, task_id: str, attempt: str, now: int) -> str:
    """Finish ``attempt`` of ``task_id`` at ``now`` by the rules; answer the rule's clause."""
    rec, att = d.tasks[task_id], d.attempts[attempt]
    snap = rec.snapshot
    settlement = att.snapshot.settlement
    report = settlement.report if settlement is not None else None
    confirmed = att.snapshot.quiescence == spec.CONFIRMED
    failure: Mapping[str, Any] | None = None
    if snap.cancel_requested_at is not None:
        task_state, att_state, clause = "cancelled", "cancelled" if confirmed else "lost", \
            "LDG-FINISH-006"
        outcome: Mapping[str, Any] | None = {"kind": "cancelled"}
    elif isinstance(report, spec.ExecutionReport) and report.outcome["status"] == "success":
        task_state, att_state, clause = "succeeded", "succeeded", "LDG-FINISH-001"
        outcome = {"kind": "succeeded", "output": report.outcome["output"]}
    elif isinstance(report, spec.ExecutionReport):
        task_state, att_state, clause = "failed", "failed", "LDG-FINISH-002"
        outcome = {"kind": "failed", "failure": {"kind": report.outcome["kind"],
                                                 "message": report.outcome["message"]}}
    elif isinstance(report, spec.ExecutionFailure) and (
            report.kind not in spec.RETRYABLE_FAILURE_KINDS):
        task_state, att_state, clause = "failed", "failed", "LDG-FINISH-005"
        outcome = {"kind": "failed", "failure": {"kind": report.kind,
                                                 "message": report.message}}
    else:
        att_state = "failed" if report is not None else "lost"
        failure = ({"kind": report.kind, "message": report.message} if report is not None
                   else {"kind": "lost", "message": ""})
        if snap.attempt_count < snap.input.retry_policy.max_attempts:
            task_state, clause, outcome = "queued", "LDG-FINISH-003", None
        else:
            task_state, clause = "failed", "LDG-FINISH-004"
            outcome = {"kind": "failed", "failure": failure}
    d.evolve_attempt(attempt, state=att_state, finished_at=now)
    if task_state == "queued":
        d.evolve_task(task_id, state="queued", current_attempt_id=None,
                      available_at=now + snap.input.retry_policy.retry_delay_ms)
        d.record(task_id, "retry_scheduled", now, attempt)
    else:
        d.evolve_task(task_id, state=task_state, current_attempt_id=None, terminal_at=now)
        d.tasks[task_id] = attrs.evolve(d.tasks[task_id], outcome=outcome)
        d.record(task_id, task_state, now, attempt)
    return clause


# --- acquisition -------------------------------------------------------------------------------


def _eligible(rec: TaskRec, scope: spec.Scope, queue: str, now: int) -> bool:
    snap = rec.snapshot
    return (snap.input.scope == scope and snap.input.queue == queue and snap.state == "queued"
            and snap.cancel_requested_at is None and snap.available_at <= now
            and snap.attempt_count < snap.input.retry_policy.max_attempts)


def _assignment(rec: TaskRec, att: AttemptRec, now: int) -> spec.Assignment:
    snap = att.snapshot
    return spec.Assignment(snap.descriptor, snap.event, snap.lease, authority(rec, att, now),
                           snap.deadline)


def _acquisition(state: State, command: Any, finish_empty: bool, deadline: int | None,
                 ctx: Ctx) -> Step | OneOf:
    """probe_acquisition (``deadline`` given) or acquire (None): replies as ProbeCompleted /
    ProbePending for the probe; the bare reply for acquire."""
    now = ctx.now
    _check("LDG-ACQ-005", lambda: spec.validate_acquire(command))
    if deadline is not None:
        if not isinstance(finish_empty, bool) or isinstance(deadline, bool) or not isinstance(
                deadline, int):
            raise _refuse(spec.InvalidInput("finish_empty must be a bool and deadline_ms an "
                                            "integer"), "LDG-ACQ-005")
        if deadline <= now:
            raise _refuse(spec.Unavailable("the acquisition deadline has passed"),
                          "LDG-ACQ-015")
    session = _session(state, command.worker_session_id, "LDG-ACQ-004", now)
    if (session.scope != command.scope or session.queue != command.queue
            or command.consumer_id >= session.concurrency):
        raise _refuse(spec.InvalidInput("the command does not match its session"),
                      "LDG-ACQ-005")
    seq = command.sequence
    if seq == 0:
        raise _refuse(spec.OutOfOrder("sequences start at 1"), "LDG-ACQ-006")
    cursor = state.cursors.get((session.id, command.consumer_id))
    others = any(s == session.id and c != command.consumer_id for s, c in state.cursors)

    def done(reply: Any, kind: str) -> Any:
        return spec.ProbeCompleted(reply, kind) if deadline is not None else reply

    if cursor is None and seq != 1:
        raise _refuse(spec.OutOfOrder("a consumer's first sequence is 1"),
                      "LDG-ACQ-016" if others else "LDG-ACQ-006")
    if cursor is not None:
        if seq == cursor.sequence and (session.id, command.consumer_id, seq) in state.receipts:
            raise _refuse(spec.Conflict(f"sequence {seq} holds a dispatch claim"),
                          "LDG-DISPATCH-005")
        if seq < cursor.sequence:
            raise _refuse(spec.ObsoleteOperation(f"sequence {seq}"), "LDG-ACQ-007")
        if seq > cursor.sequence + 1:
            raise _refuse(spec.OutOfOrder(f"sequence {seq}"), "LDG-ACQ-008")
        previous = state.attempts[cursor.attempt] if cursor.attempt is not None else None
        if seq == cursor.sequence:
            if previous is None:
                return _ok(state, done(spec.AcquireEmpty(seq), "replayed"), "LDG-ACQ-009")
            rec = state.tasks[previous.task_id]
            if is_live(rec, previous, now):
                return _ok(state, done(spec.AcquireAssigned(seq, _assignment(rec, previous, now)),
                                       "replayed"), "LDG-ACQ-010")
            lost = spec.AcquireOwnershipLost(seq, spec.AttemptRef(previous.task_id,
                                                                  cursor.attempt or ""))
            return _ok(state, done(lost, "replayed"),
                       _live_failure(rec, previous, now, "LDG-ACQ-011"))
        if previous is not None and is_live(state.tasks[previous.task_id], previous, now):
            raise _refuse(spec.Busy("the previous assignment is still live"), "LDG-ACQ-012")
    queued = [r for r in state.tasks.values() if r.snapshot.state == "queued"]
    eligible = sorted((r for r in queued if _eligible(r, command.scope, command.queue, now)),
                      key=lambda r: (r.snapshot.available_at, r.snapshot.submitted_at))
    # The eligibility and order rule is at stake whenever another queued task was passed over.
    passed_over = ("LDG-ACQ-001",) if len(queued) > len(eligible[:1]) else ()
    if not eligible:
        if not finish_empty:
            return _ok(state, spec.ProbePending(session.expires_at - now), "LDG-ACQ-013",
                       also=passed_over)
        d = Draft(state)
        d.cursors[(session.id, command.consumer_id)] = Cursor(seq, None)
        return _ok(d.freeze(), done(spec.AcquireEmpty(seq), "finalized_empty"), "LDG-ACQ-014",
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
    d.attempts[attempt] = AttemptRec(spec.AttemptSnapshot(
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
    d.cursors[(session.id, command.consumer_id)] = Cursor(command.sequence, attempt)
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
    return _ok(new, done(reply, "claimed"), clause)


def _probe(state: State, op: spec.ProbeAcquisition, ctx: Ctx) -> Step | OneOf:
    return _acquisition(state, op.command, op.finish_empty, op.deadline_ms, ctx)


def _acquire(state: State, op: spec.Acquire, ctx: Ctx) -> Step | OneOf:
    return _acquisition(state, op.command, True, None, ctx)


# --- owner calls -------------------------------------------------------------------------------


def _owned(state: State, owner: Any, clause: str,
           missing_attempt: str = "not_found") -> tuple[TaskRec, AttemptRec]:
    """The task (not_found when missing or of another scope), the attempt of that task
    (``missing_attempt``: not_found, or ownership_lost under ``clause``), whose stored owner is
    exactly ``owner`` (else ownership_lost under ``clause``). The ids are not checked as text:
    an empty task or attempt id finds nothing, an empty lease or session id or generation 0
    matches no owner. seed: settle and confirm_quiescence load the task, then the attempt by
    (task, attempt id), either missing not_found: crates/ledgence-adapter-postgres/src/
    persistence.rs:21-53 at 3abb9ee, delivery.rs:229-235 at 50df11a, storage.rs:231-237 at
    2b1bcd2; then compare the whole owner (check_owner:
    crates/ledgence-orchestration-core/src/lib.rs:245-251 at 220b133)."""
    rec = state.tasks.get(owner.task_id)
    if rec is None or rec.snapshot.input.scope != owner.scope:
        raise _refuse(spec.NotFound(str(owner.task_id)), "LDG-OWNER-001")
    att = state.attempts.get(owner.attempt_id)
    if att is None or att.task_id != owner.task_id:
        if missing_attempt == "not_found":
            raise _refuse(spec.NotFound(str(owner.attempt_id)), "LDG-OWNER-001")
        raise _refuse(spec.OwnershipLost("the owner does not hold this attempt"), clause)
    if att.owner != owner:
        raise _refuse(spec.OwnershipLost("the owner does not hold this attempt"), clause)
    return rec, att


def _cursor_holds(state: State, owner: Any) -> None:
    """renew under ``renew_lookup=cursor_first``: the owner's consumer cursor must have
    assigned exactly the owner's task and attempt, else ownership_lost (LDG-OWNER-001 when
    the owner's task is missing in its scope, a task never minted included; else
    LDG-RENEW-002). seed: crates/ledgence-adapter-postgres/src/delivery.rs:204-214 at
    50df11a (before the task is loaded at 215)."""
    cursor = state.cursors.get((owner.worker_session_id, owner.consumer_id))
    named = cursor.attempt if cursor is not None else None
    if named is not None and named == owner.attempt_id and (
            state.attempts[named].task_id == owner.task_id):
        return
    rec = state.tasks.get(owner.task_id)
    missing = rec is None or rec.snapshot.input.scope != owner.scope
    raise _refuse(spec.OwnershipLost("the consumer's cursor does not name this attempt"),
                  "LDG-OWNER-001" if missing else "LDG-RENEW-002")


def _renewing_owner(command: Any) -> None:
    """renew's owner checks: the owner's shape and scope, then its session id as text (the
    seed checks it before it locks the session: crates/ledgence-adapter-postgres/src/
    delivery.rs:199-200 at 50df11a); its other ids are only compared (ownership_lost)."""
    owner = spec.validate_owner(getattr(command, "owner", None))
    spec.validate_text(owner.worker_session_id, "worker_session_id")


def _renew(state: State, op: spec.Renew, ctx: Ctx) -> Step:
    now, command = ctx.now, op.command
    _check("LDG-OWNER-001", lambda: _renewing_owner(command))
    _check("LDG-RENEW-008", lambda: spec.validate_renew(command))
    owner = command.owner
    session = _session(state, owner.worker_session_id, "LDG-RENEW-003", now)
    cursor_first = ctx.options.get(spec.RENEW_LOOKUP, spec.CURSOR_FIRST) == spec.CURSOR_FIRST
    if cursor_first:
        _cursor_holds(state, owner)
    rec, att = _owned(state, owner, "LDG-RENEW-002", missing_attempt="ownership_lost")
    if not is_live(rec, att, now):
        raise _refuse(spec.OwnershipLost("the attempt is no longer live"),
                      _live_failure(rec, att, now, "LDG-RENEW-002"))
    last = att.snapshot.last_renewal
    last_seq = last.sequence if last is not None else 0
    seq = command.sequence
    if seq == 0:
        raise _refuse(spec.OutOfOrder("renewal sequences start at 1"), "LDG-RENEW-004")
    if seq < last_seq:
        raise _refuse(spec.ObsoleteOperation(f"renewal {seq}"), "LDG-RENEW-004")
    if seq == last_seq and last is not None:
        if last.intent != command.intent:
            raise _refuse(spec.Conflict("this renewal sequence had another intent"),
                          "LDG-RENEW-006")
        return _ok(state, authority(rec, att, now), "LDG-RENEW-005")
    if seq > last_seq + 1:
        raise _refuse(spec.OutOfOrder(f"renewal {seq}"), "LDG-RENEW-004")
    d = Draft(state)
    name = owner.attempt_id
    expiry = lease_expiry(now, att.snapshot.authority_deadline, session)
    d.evolve_attempt(name, lease=attrs.evolve(att.snapshot.lease, expires_at=expiry),
                     last_renewal=command)
    clause = "LDG-RENEW-001" if expiry == now + spec.LEASE_MS else "LDG-ACQ-003"
    if (command.intent == spec.DISPATCH and not att.snapshot.execution_may_have_started
            and now < att.snapshot.deadline and rec.snapshot.cancel_requested_at is None
            and att.snapshot.settlement is None):
        d.evolve_attempt(name, execution_may_have_started=True)
        d.record(owner.task_id, "dispatch_authorized", now, name)
        clause = "LDG-RENEW-007"
    new = d.freeze()
    return _ok(new, authority(new.tasks[owner.task_id], new.attempts[name], now), clause)


def started_after(snap: spec.AttemptSnapshot, report: Any) -> bool:
    """execution_may_have_started once ``report`` is accepted: a completed report proves the
    work ran; a failure report carries its own flag; an attempt already marked stays marked.
    seed: crates/ledgence-orchestration-core/src/lifecycle.rs:116-119 at 3abb9ee (observation.rs
    task_status treats a completed report without the flag as corrupt)."""
    return snap.execution_may_have_started or isinstance(report, spec.ExecutionReport) or bool(
        getattr(report, "execution_may_have_started", False))


def _settle(state: State, op: spec.Settle, ctx: Ctx) -> Step:
    now, command = ctx.now, op.command
    _check("LDG-OWNER-001", lambda: spec.validate_owner(getattr(command, "owner", None)))
    _check("LDG-SETTLE-006", lambda: spec.validate_settle(command))
    owner = command.owner
    rec, att = _owned(state, owner, "LDG-SETTLE-002")
    # Once the owner matched, the seed's order: the operation id, the report's identity, the
    # size. seed: crates/ledgence-orchestration-core/src/lifecycle.rs:80-81, 283-306 at 3abb9ee.
    _check("LDG-SETTLE-006", lambda: spec.check_operation_id(command))
    _check("LDG-SETTLE-005", lambda: spec.check_report_identity(command,
                                                                 rec.snapshot.descriptor))
    _check("LDG-SETTLE-006", lambda: spec.check_settlement_size(command))
    stored = att.snapshot.settlement
    if stored is not None:
        if not spec.same_settlement(stored, command):
            raise _refuse(spec.Conflict("this attempt was settled differently"),
                          "LDG-SETTLE-004")
        assert att.receipt is not None
        return _ok(state, spec.SettleReply(att.receipt, True, rec.snapshot.state),
                   "LDG-SETTLE-003")
    if not is_live(rec, att, now):
        raise _refuse(spec.OwnershipLost("the attempt is no longer live"),
                      _live_failure(rec, att, now, "LDG-SETTLE-002"))
    d = Draft(state)
    name = owner.attempt_id
    receipt = spec.SettleReceipt(command.operation_id, owner.task_id, name, now)
    d.evolve_attempt(name, settlement=command, quiescence=command.quiescence,
                     execution_may_have_started=started_after(att.snapshot, command.report))
    d.attempts[name] = attrs.evolve(d.attempts[name], receipt=receipt)
    d.record(owner.task_id, "report_accepted", now, name)
    clause = "LDG-SETTLE-007"
    if command.quiescence == spec.CONFIRMED:
        clause = finish(d, owner.task_id, name, now)
    new = d.freeze()
    return _ok(new, spec.SettleReply(receipt, False, new.tasks[owner.task_id].snapshot.state),
               clause)


def _confirm(state: State, op: spec.ConfirmQuiescence, ctx: Ctx) -> Step:
    now, owner = ctx.now, op.owner
    _check("LDG-OWNER-001", lambda: spec.validate_owner(owner))
    rec, att = _owned(state, owner, "LDG-QUIESCE-004")
    if att.snapshot.quiescence == spec.CONFIRMED:
        return _ok(state, rec.snapshot.state, "LDG-QUIESCE-002")
    if not is_live(rec, att, now):
        raise _refuse(spec.OwnershipLost("the attempt is no longer live"),
                      _live_failure(rec, att, now, "LDG-QUIESCE-004"))
    if att.snapshot.settlement is None:
        raise _refuse(spec.InvalidInput("no accepted report to confirm"), "LDG-QUIESCE-003")
    d = Draft(state)
    d.evolve_attempt(owner.attempt_id, quiescence=spec.CONFIRMED)
    d.record(owner.task_id, "cleanup_confirmed", now, owner.attempt_id)
    effect = finish(d, owner.task_id, owner.attempt_id, now)
    new = d.freeze()
    return _ok(new, new.tasks[owner.task_id].snapshot.state, "LDG-QUIESCE-001", effect)


# --- cancel and recovery -----------------------------------------------------------------------


def _cancel(state: State, op: spec.Cancel, ctx: Ctx) -> Step:
    now = ctx.now
    rec = _find(state, op.scope, op.task_id)
    snap = rec.snapshot
    if snap.state in spec.TERMINAL_TASK_STATES or snap.cancel_requested_at is not None:
        return _ok(state, snap.state, "LDG-CANCEL-002")
    d = Draft(state)
    task_id = snap.task_id
    if snap.state == "queued":
        d.evolve_task(task_id, state="cancelled", cancel_requested_at=now, terminal_at=now)
        d.tasks[task_id] = attrs.evolve(d.tasks[task_id], outcome={"kind": "cancelled"})
        d.record(task_id, "cancel_requested", now)
        d.record(task_id, "cancelled", now)
        return _ok(d.freeze(), "cancelled", "LDG-CANCEL-001")
    name = snap.current_attempt_id
    assert name is not None
    att = state.attempts[name]
    d.evolve_task(task_id, cancel_requested_at=now)
    d.record(task_id, "cancel_requested", now, name)
    if is_live(rec, att, now):
        cut = min(att.snapshot.authority_deadline, now + spec.CLEANUP_GRACE_MS)
        lease = attrs.evolve(att.snapshot.lease,
                             expires_at=min(att.snapshot.lease.expires_at, cut))
        d.evolve_attempt(name, authority_deadline=cut, lease=lease)
        return _ok(d.freeze(), "active", "LDG-CANCEL-003")
    d.record(task_id, "lease_expired", now, name)
    finish(d, task_id, name, now)
    return _ok(d.freeze(), "cancelled", _live_failure(rec, att, now, "LDG-CANCEL-004"))


def expired_candidates(state: State, now: int) -> list[TaskRec]:
    """Active tasks whose current attempt is past its lease expiry, earliest first."""
    due = []
    for rec in state.tasks.values():
        current = rec.snapshot.current_attempt_id
        if rec.snapshot.state == "active" and current is not None:
            att = state.attempts[current]
            if now >= att.snapshot.lease.expires_at:
                due.append(rec)
    return sorted(due, key=lambda r: _expiry_of(state, r))


def _expiry_of(state: State, rec: TaskRec) -> int:
    current = rec.snapshot.current_attempt_id
    assert current is not None
    return state.attempts[current].snapshot.lease.expires_at


def _expire_batch(state: State, op: spec.ExpireBatch, ctx: Ctx) -> Step | OneOf:
    now, limit = ctx.now, op.limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not (
            1 <= limit <= spec.MAX_RECOVERY_BATCH):
        raise _refuse(spec.InvalidInput("limit must be in 1..=100"), "LDG-RECOVER-002")
    due = expired_candidates(state, now)
    if not due:
        return _ok(state, spec.RecoveryProgress(0, 0), "LDG-RECOVER-004")
    if len(due) <= limit:
        return _expire(state, due, now, "LDG-RECOVER-001")
    # The shortlist is the `limit` earliest; tasks tied with the last one may be either.
    cut = _expiry_of(state, due[limit - 1])
    sure = [r for r in due if _expiry_of(state, r) < cut]
    tied = [r for r in due if _expiry_of(state, r) == cut]
    picks = itertools.combinations(tied, limit - len(sure))
    steps = tuple(_expire(state, sure + list(p), now, "LDG-RECOVER-003") for p in picks)
    if len(steps) == 1:
        return steps[0]
    return OneOf(steps, "LDG-RECOVER-003", "the earliest expiries, any of those tied")


def _expire(state: State, shortlist: list[TaskRec], now: int, clause: str) -> Step:
    d = Draft(state)
    effects = set()
    boundary = False
    for rec in shortlist:
        task_id = rec.snapshot.task_id
        name = rec.snapshot.current_attempt_id
        assert name is not None
        boundary |= now == state.attempts[name].snapshot.lease.expires_at
        d.record(task_id, "lease_expired", now, name)
        effects.add(finish(d, task_id, name, now))
    if boundary and clause == "LDG-RECOVER-001":
        clause = "LDG-LIVE-001"
    # A bounded scan's read-backs show which tasks it took: the earliest-first rule's.
    effect = ("LDG-RECOVER-003" if clause == "LDG-RECOVER-003" else effects.pop()
              if len(effects) == 1 else "LDG-RECOVER-001")
    progress = spec.RecoveryProgress(len(shortlist), len(shortlist))
    return _ok(d.freeze(), progress, clause, effect)


# --- discovery ---------------------------------------------------------------------------------


def page_key(status: spec.TaskStatus, ctx: Ctx) -> tuple[int, bytes]:
    """A task's place in a listing: submitted_at, then the store's task id as bytes."""
    real = ctx.minted.get(status.task_id, status.task_id)
    return (status.submitted_at, str(real).encode("utf-8"))


def _list_tasks(state: State, op: spec.ListTasks, ctx: Ctx) -> Step:
    _check("LDG-LIST-004", lambda: spec.validate_list_query(op.scope, op.query))
    query, filters = op.query, op.query.filters
    cursor = query.cursor
    if cursor is not None and not (isinstance(cursor, CursorM) and cursor.scope == op.scope
                                   and cursor.filters == filters):
        raise _refuse(spec.InvalidInput("the cursor does not match this scope and these "
                                        "filters"), "LDG-LIST-007")
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
    next_cursor = (Opaque(CursorM(op.scope, filters, page[-1].submitted_at, page[-1].task_id))
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
    return _ok(state, spec.TaskPage(tuple(page), next_cursor), clause, also=tuple(also))


# --- targeted dispatch -------------------------------------------------------------------------


def _claim_dispatch(state: State, op: spec.ClaimDispatch, ctx: Ctx) -> Step:
    now, command = ctx.now, op.command
    if "dispatch" not in ctx.capabilities:
        raise _refuse(spec.InvalidInput(spec.UNSUPPORTED_DISPATCH), "LDG-DISPATCH-008")
    _check("LDG-DISPATCH-007", lambda: spec.validate_claim(command))
    acq, target = command.acquisition, command.dispatch
    seq = acq.sequence
    key = (acq.worker_session_id, acq.consumer_id, seq)
    receipt = state.receipts.get(key)
    if receipt is not None:
        if receipt.command != command:
            raise _refuse(spec.Conflict(f"sequence {seq} was claimed with another command"),
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
        return _ok(state, spec.ClaimReply(command, replayed), "LDG-DISPATCH-005")
    session = _session(state, acq.worker_session_id, "LDG-DISPATCH-006", now)
    if (session.scope != acq.scope or session.queue != acq.queue
            or acq.consumer_id >= session.concurrency):
        raise _refuse(spec.InvalidInput("the claim does not match its session"),
                      "LDG-DISPATCH-007")
    cursor = state.cursors.get((session.id, acq.consumer_id))
    if cursor is None and seq != 1:
        raise _refuse(spec.OutOfOrder("a consumer's first sequence is 1"), "LDG-DISPATCH-006")
    if cursor is not None:
        if seq < cursor.sequence:
            raise _refuse(spec.ObsoleteOperation(f"sequence {seq}"), "LDG-DISPATCH-006")
        if seq == cursor.sequence:
            raise _refuse(spec.Conflict(f"sequence {seq} was used by an acquisition"),
                          "LDG-DISPATCH-005")
        if seq > cursor.sequence + 1:
            raise _refuse(spec.OutOfOrder(f"sequence {seq}"), "LDG-DISPATCH-006")
        previous = state.attempts[cursor.attempt] if cursor.attempt is not None else None
        if previous is not None and is_live(state.tasks[previous.task_id], previous, now):
            raise _refuse(spec.Busy("the previous assignment is still live"),
                          "LDG-DISPATCH-006")
    rec = state.tasks.get(target.task_id)
    if rec is None or rec.snapshot.input.scope != target.scope:
        raise _refuse(spec.NotFound(str(target.task_id)), "LDG-DISPATCH-007")
    snap = rec.snapshot
    if snap.input.queue != target.queue:
        raise _refuse(spec.Conflict("the task is in another queue"), "LDG-DISPATCH-007")
    g, n = target.generation, snap.attempt_count
    if g > n + 1:
        raise _refuse(spec.InvalidInput("dispatch generation has never been issued"),
                      "LDG-DISPATCH-007")
    disposition: Any
    if snap.state in spec.TERMINAL_TASK_STATES or snap.cancel_requested_at is not None:
        disposition, clause = spec.ClaimTerminalOrSuperseded(), "LDG-DISPATCH-003"
    elif snap.state == "active":
        if g == n + 1:
            raise _refuse(spec.Conflict("the task's current attempt is still active"),
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
        return _ok(d.freeze(), spec.ClaimReply(command, spec.ClaimClaimed(assigned)),
                   "LDG-DISPATCH-001", also=("LDG-DISPATCH-008",))
    d = Draft(state)
    d.cursors[(session.id, acq.consumer_id)] = Cursor(seq, None)
    d.receipts[key] = Receipt(command, disposition)
    return _ok(d.freeze(), spec.ClaimReply(command, disposition), clause,
               also=("LDG-DISPATCH-008",))


_STEPS: dict[type, Any] = {
    spec.ListTasks: _list_tasks,
    spec.ClaimDispatch: _claim_dispatch,
    spec.OpenSession: _open_session,
    spec.ExtendSession: _extend_session,
    spec.LookupSubmission: _lookup,
    spec.AcceptResolvedSubmission: _accept,
    spec.Status: _status,
    spec.Result: _result,
    spec.Inspect: _inspect,
    spec.InspectAttempt: _inspect_attempt,
    spec.History: _history,
    spec.Cancel: _cancel,
    spec.ProbeAcquisition: _probe,
    spec.Acquire: _acquire,
    spec.Renew: _renew,
    spec.Settle: _settle,
    spec.ConfirmQuiescence: _confirm,
    spec.ExpireBatch: _expire_batch,
}


def step(state: State, op: Op, ctx: Ctx) -> Step | OneOf:
    """Apply ``op``: the outcome, the next state and the clause that decided it."""
    try:
        return _STEPS[type(op)](state, op, ctx)  # type: ignore[no-any-return]
    except Refused as refused:
        return _err(state, refused.error, refused.clause)


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
    return [k for k, rec in after.tasks.items() if before.tasks.get(k) != rec]


def _claimed_task(outcome: Outcome) -> Any:
    """The task id an acquisition answer assigns, or None."""
    reply = getattr(outcome, "value", None)
    reply = getattr(reply, "reply", reply)
    assignment = getattr(reply, "assignment", None)
    return getattr(getattr(assignment, "event", None), "task_id", None)


_FRESH_ACQUISITION = frozenset({"LDG-ACQ-002", "LDG-ACQ-003", "LDG-ACQ-013", "LDG-ACQ-014",
                                "LDG-ACQ-016", "LDG-FINISH-007"})
# What each operation answers when it judges an attempt not live (the equality rule is at
# stake only when the store judged it live at the exact boundary).
_NOT_LIVE_CLAUSE = {spec.Acquire: "LDG-ACQ-011", spec.ProbeAcquisition: "LDG-ACQ-011",
                    spec.Renew: "LDG-RENEW-002", spec.Settle: "LDG-SETTLE-002",
                    spec.ConfirmQuiescence: "LDG-QUIESCE-004", spec.Cancel: "LDG-CANCEL-004",
                    spec.ExpireBatch: "LDG-RECOVER-001"}


def _reply(outcome: Outcome) -> Any:
    value = getattr(outcome, "value", None)
    return getattr(value, "reply", value) if isinstance(value, spec.ProbeCompleted) else value


def _judged_live(op: Op, expected: Outcome, actual: Outcome) -> bool:
    """Did the store treat the attempt at the boundary as still live?"""
    if isinstance(op, spec.Acquire | spec.ProbeAcquisition):
        return isinstance(_reply(actual), spec.AcquireAssigned)
    if isinstance(op, spec.Cancel):
        return isinstance(actual, Ok) and actual.value == "active"
    if isinstance(op, spec.ExpireBatch):
        mine, theirs = getattr(expected, "value", None), getattr(actual, "value", None)
        return isinstance(theirs, spec.RecoveryProgress) and isinstance(
            mine, spec.RecoveryProgress) and theirs.expired < mine.expired
    return isinstance(actual, Ok)


def _fresh_claim_for(op: Any, outcome: Outcome) -> bool:
    """Is ``outcome`` a new claim for the op's own consumer (not a replay of another
    consumer's assignment, not an OwnershipLost reply)?"""
    reply = _reply(outcome)
    if not isinstance(reply, spec.AcquireAssigned):
        return False
    kind = getattr(getattr(outcome, "value", None), "kind", "claimed")
    owner = reply.assignment.lease.owner
    command = op.command
    return kind == "claimed" and owner.consumer_id == command.consumer_id and (
        owner.worker_session_id == command.worker_session_id)


def _page_clause(op: spec.ListTasks, expected: Outcome, actual: Outcome) -> str | None:
    """What a differing page shows: a task of another scope (LIST-010), an item outside the
    filters (LIST-002, LIST-003 for the empty key), the right tasks in the wrong order
    (LIST-001), the right items with a wrong next_cursor presence (LIST-005)."""
    mine, theirs = getattr(expected, "value", None), getattr(actual, "value", None)
    if not isinstance(theirs, spec.TaskPage) or not isinstance(mine, spec.TaskPage):
        return None
    items = [i for i in theirs.items if isinstance(i, spec.TaskStatus)]
    if any(i.scope != op.scope for i in items):
        return "LDG-LIST-010"
    filters = getattr(op.query, "filters", spec.TaskFilters())
    if any(not spec.matches_filters(i, filters) for i in items):
        return "LDG-LIST-003" if filters.correlation_key == "" else "LDG-LIST-002"
    ids = [getattr(i, "task_id", None) for i in theirs.items]
    expected_ids = [getattr(i, "task_id", None) for i in mine.items]
    if ids != expected_ids and sorted(map(str, ids)) == sorted(map(str, expected_ids)):
        return "LDG-LIST-001"
    if ids == expected_ids and (mine.next_cursor is None) != (theirs.next_cursor is None):
        return "LDG-LIST-005"
    return None


def _attempt_clause(expected: Outcome, actual: Outcome) -> str | None:
    """What an attempt read back with one wrong field shows: a quiescence other than
    unconfirmed before any settlement breaks the claim's rule (LDG-ACQ-002); a missing
    execution_may_have_started that the accepted settlement owes breaks LDG-SETTLE-001."""
    mine, theirs = getattr(expected, "value", None), getattr(actual, "value", None)
    if not isinstance(mine, spec.AttemptSnapshot) or not isinstance(theirs,
                                                                     spec.AttemptSnapshot):
        return None
    fields = field_diff(mine, theirs)
    if fields == ("quiescence",) and mine.settlement is None:
        return "LDG-ACQ-002"
    if fields == ("execution_may_have_started",) and mine.settlement is not None and (
            mine.execution_may_have_started and not theirs.execution_may_have_started):
        report = mine.settlement.report
        if isinstance(report, spec.ExecutionReport) or getattr(
                report, "execution_may_have_started", False):
            return "LDG-SETTLE-001"
    return None


def answer_clause(op: Op, clause: str, expected: Outcome, actual: Outcome) -> str | None:
    """The rule a differing answer breaks, where the difference itself tells (``clause`` is
    the model's step clause; empty for a read-back).

    - A recovery scan answering other counts breaks the scan's rule the model named.
    - At an exact expiry boundary the equality rule (LIVE-001) is broken only if the store
      treated the attempt as live; a store that saw it expired but answered in the wrong form
      breaks the operation's own rule for a lost attempt.
    - A new acquisition (not a replay, not busy) that claims another task than the model, or
      claims where the model finds none eligible, or none where one is: the eligibility and
      order rule, LDG-ACQ-001.
    - A history read with gaps or repeats in its sequences: HISTORY-001; a repeated
      `dispatch_authorized`: RENEW-007 (dispatch is authorized once); another repeated event:
      HISTORY-001; any other wrong history: HISTORY-002 (the events a transition writes).
    - An attempt read back wrong in its quiescence alone before any settlement: ACQ-002; in
      an execution_may_have_started its accepted settlement owes: SETTLE-001."""
    if isinstance(op, spec.ListTasks):
        return _page_clause(op, expected, actual)
    if clause == "LDG-LIVE-001" and not _judged_live(op, expected, actual):
        return _NOT_LIVE_CLAUSE.get(type(op))
    if isinstance(op, spec.ExpireBatch) and isinstance(actual, Ok) and isinstance(
            actual.value, spec.RecoveryProgress):
        return clause  # other counts: the scan's own rule (due, bounded, once, boundary)
    if isinstance(op, spec.Acquire | spec.ProbeAcquisition):
        if clause not in _FRESH_ACQUISITION or not isinstance(actual, Ok):
            return None
        mine, theirs = _claimed_task(expected), _claimed_task(actual)
        if isinstance(mine, Opaque) or mine == theirs:
            return None
        if theirs is None and not isinstance(_reply(actual), spec.AcquireOwnershipLost):
            return "LDG-ACQ-001"  # Empty or Pending where a task was eligible
        return "LDG-ACQ-001" if _fresh_claim_for(op, actual) else None
    if isinstance(op, spec.InspectAttempt):
        return _attempt_clause(expected, actual)
    if not isinstance(op, spec.History) or not isinstance(actual, Ok):
        return None
    records = actual.value if isinstance(actual.value, list) else []
    if len(records) > 100:
        return "LDG-HISTORY-001"  # a page holds at most 100 events
    sequences = [getattr(r, "sequence", None) for r in records]
    if sequences != list(range(1, len(sequences) + 1)):
        return "LDG-HISTORY-001"
    reasons = [getattr(getattr(r, "event", None), "reason", None) for r in records]
    if len(records) > len(getattr(expected, "value", [])):
        if reasons.count("dispatch_authorized") > 1:
            return "LDG-RENEW-007"
        for a, b in zip(reasons, reasons[1:], strict=False):
            if a == b:
                return "LDG-HISTORY-001"
    return "LDG-HISTORY-002"


def _situations(before: State, op: Op, ctx: Ctx, step: Step) -> Any:
    from .ledgence_tasks_situations import situations  # it builds on this module's records

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
