"""The records of the ``ledgence-tasks`` model and the rules every operation shares.

The state (:class:`State`: tasks, attempts, sessions, consumers' cursors, dispatch receipts)
and the :class:`Draft` a step edits; how an answer is made (:func:`ok_step` hides the model's names
in :class:`~fencepost.spec.opaque.Opaque`, :class:`Refused` carries a refusal and its clause);
liveness, authority and lease expiry (``LDG-LIVE-*``, ``LDG-AUTH-*``); the lookups of a session
or a task that most operations start with; and :func:`finish`, which every way an attempt ends
(settlement, quiescence, cancel, recovery) goes through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import ContractError
from fencepost.spec.ledgence_tasks import StoredAttempt as StoredAttempt  # the schema, shared
from fencepost.spec.opaque import (
    MISSING,
    ByIdentity,
    Opaque,
    evolved,
    init_call,
    init_fields,
    written,
)
from fencepost.spec.outcome import Err, Ok

from ..base import Step


@attrs.frozen
class TaskRec:
    snapshot: spec.TaskSnapshot  # ids hold the model's names
    history: tuple[spec.HistoryEvent, ...]
    latest_attempt: str | None = None
    outcome: Mapping[str, Any] | None = None


@attrs.frozen
class ConsumerCursor:
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
class PagePosition:
    """What a page's next_cursor stands for: scope, filters and the last item's position."""

    scope: spec.Scope
    filters: spec.TaskFilters
    submitted_at: int
    task_id: str


@attrs.frozen
class ForgedPosition:
    """What a forged cursor stands for when its position is one a page could have ended at
    (``case`` names it): well-formed, never issued. The seed reads it as that position (its
    cursor carries no proof of issue); a store that keeps the cursors it issued refuses it
    (LDG-LIST-007). Either answer is the contract's."""

    scope: spec.Scope
    filters: spec.TaskFilters
    submitted_at: int
    task_id: str
    case: str


@attrs.frozen
class UnissuedCursor:
    """What a forged cursor stands for: an issued cursor's own encoding changed so that no
    page could have issued it (``case`` names how: a position no page ends at, a key, a
    version or a value of the wrong kind, uppercase hex), and still refused (LDG-LIST-007)."""

    case: str


@attrs.frozen
class State:
    sessions: Mapping[str, spec.WorkerSession] = attrs.field(factory=dict)
    tasks: Mapping[str, TaskRec] = attrs.field(factory=dict)
    attempts: Mapping[str, StoredAttempt] = attrs.field(factory=dict)
    cursors: Mapping[tuple[str, int], ConsumerCursor] = attrs.field(factory=dict)
    keys: Mapping[tuple[spec.Scope, str], str] = attrs.field(factory=dict)
    minted: int = 0
    receipts: Mapping[tuple[str, int, int], Receipt] = attrs.field(factory=dict)
    # session id -> the expires_at its last extension replaced (what a store that answers an
    # extension without storing it still holds; the situations look for a call past it)
    replaced: Mapping[str, int] = attrs.field(factory=dict)


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
        self.replaced = dict(state.replaced)

    def freeze(self) -> State:
        return State(self.sessions, self.tasks, self.attempts, self.cursors, self.keys,
                     self.minted, self.receipts, self.replaced)

    def record(self, task_id: str, reason: str, at: int, attempt: str | None = None) -> None:
        rec = self.tasks[task_id]
        event = spec.HistoryEvent(task_id, attempt, at, reason)
        self.tasks[task_id] = evolved(rec, {"history": rec.history + (event,)})

    def evolve_task(self, task_id: str, **changes: Any) -> None:
        rec = self.tasks[task_id]
        self.tasks[task_id] = evolved(rec, {"snapshot": evolved(rec.snapshot, changes)})

    def evolve_attempt(self, name: str, **changes: Any) -> None:
        rec = self.attempts[name]
        self.attempts[name] = evolved(rec, {"snapshot": evolved(rec.snapshot, changes)})


# --- answers -----------------------------------------------------------------------------------

_NAME = re.compile(r"(ws|task|run|attempt|lease|event)#\d+")


_PLAIN = frozenset({int, float, bool, type(None)})
_VIEWED = ByIdentity(256)
""":func:`_opaque_ids` of the records it was asked of: the model answers with the same
unchanged records step after step, and the same view object lets the harness's walks of it (its
memos by identity) be skipped. Few: the records read again are the last steps' (4,096 kept
thousands of records alive, and the model alone in a long process, the bench's, fell from
57,000 to 44,000 steps/s)."""


def _opaque_ids(value: Any) -> Any:
    """The model's view of a value: every minted name wrapped as :class:`Opaque` (parts with
    no name inside are returned as they are, not copied: the model's values are never changed
    in place). A record asked of again is answered from :data:`_VIEWED`; a record met the
    first time is viewed by its class's :func:`_viewer`."""
    kind = type(value)
    if kind in _PLAIN or kind is Opaque:
        return value
    if kind is str:
        return _name_view(value)
    viewer = _VIEWERS.get(kind, MISSING)
    if viewer is MISSING:
        viewer = _VIEWERS[kind] = _viewer(kind)
    if viewer is not None:
        viewed = _VIEWED.get(value)
        if viewed is MISSING:
            viewed = _VIEWED.put(value, viewer(value))
        return viewed
    return _view_inside(value)


def _name_view(text: str) -> Any:
    """``text`` as an :class:`Opaque` if it is a minted name (one has a '#': a cheap test
    before the pattern)."""
    return Opaque(text) if "#" in text and _NAME.fullmatch(text) else text


def _view_inside(value: Any) -> Any:
    """The view of a value that is not a record: a container viewed item by item (kept as it
    is when no item changed), a ``str`` of a subclass tested as any text, anything else as it
    is."""
    if isinstance(value, str):
        return _name_view(value)
    if isinstance(value, tuple):
        items = tuple([_opaque_ids(v) for v in value])
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, list):
        return [_opaque_ids(v) for v in value]
    if isinstance(value, dict):
        pairs = {k: _opaque_ids(v) for k, v in value.items()}
        return value if all(pairs[k] is v for k, v in value.items()) else pairs
    return value


_VIEWERS: dict[type, Callable[[Any], Any] | None] = {}
"""Each record class's viewer (:func:`_viewer`), made the first time a value of it is viewed;
None for a class that is not a record."""


def _viewer(cls: type) -> Callable[[Any], Any] | None:
    """A function viewing a value of the attrs class ``cls`` (None: ``cls`` is not one): it
    reads each init field once, keeps a number, a bool or None, tests a ``str`` for a name in
    line and views anything else with :func:`_opaque_ids`, then answers the value itself when
    no field changed, else a new one built from the new fields (by position, or by keyword where
    the class takes some by keyword only). Written out for the class once: the model views
    every answer it makes, and the view was over a third of the model's time. On the answers of
    the bench's ledgence tapes, each viewed afresh, a loop over the names with a call per field
    took 10.4 µs an answer, this 7.2 µs."""
    names = init_fields(cls)
    if names is None:
        return None
    lines = ["def view(value):"]
    for i, name in enumerate(names):
        lines += [f"    f{i} = value.{name}",
                  f"    t = type(f{i})",
                  "    if t is str:",
                  f"        g{i} = opaque(f{i}) if '#' in f{i} and is_name(f{i}) else f{i}",
                  "    else:",
                  f"        g{i} = f{i} if t in plain else inner(f{i})"]
    same = " and ".join(f"g{i} is f{i}" for i in range(len(names))) or "True"
    built = init_call(cls, [f"g{i}" for i in range(len(names))])
    lines.append(f"    return value if {same} else {built}")
    return written(lines, {"opaque": Opaque, "is_name": _NAME.fullmatch, "plain": _PLAIN,
                           "inner": _opaque_ids, "cls": cls})


def err_step(state: State, error: ContractError, clause: str) -> Step:
    return Step(Err(error.code, error.detail), state, clause, clause)


def ok_step(state: State, value: Any, clause: str, effect: str | None = None,
        also: tuple[str, ...] = ()) -> Step:
    return Step(Ok(_opaque_ids(value)), state, clause, effect or clause, also)


class Refused(Exception):
    """Raised inside a step: answer ``error`` under ``clause`` and change nothing."""

    def __init__(self, error: ContractError, clause: str) -> None:
        self.error, self.clause = error, clause


def check_under(clause: str, check: Callable[[], Any]) -> None:
    try:
        check()
    except ContractError as e:
        raise Refused(e, clause) from None


def refused_with(error: ContractError, clause: str) -> Refused:
    return Refused(error, clause)


# --- liveness, authority, leases ---------------------------------------------------------------


def is_live(task: TaskRec, att: StoredAttempt, now: int) -> bool:
    """Active and current, and now strictly before both the lease expiry and the authority
    deadline (equality is expired)."""
    snap = att.snapshot
    return (task.snapshot.state == "active"
            and task.snapshot.current_attempt_id == snap.event.attempt_id
            and snap.state == "active"
            and now < snap.lease.expires_at and now < snap.authority_deadline)


def at_boundary(task: TaskRec, att: StoredAttempt, now: int) -> bool:
    """A current active attempt exactly at its lease expiry or authority deadline: the
    equality rule alone makes it expired."""
    snap = att.snapshot
    return (task.snapshot.current_attempt_id == snap.event.attempt_id and snap.state == "active"
            and now in (snap.lease.expires_at, snap.authority_deadline))


def authority(task: TaskRec, att: StoredAttempt, now: int) -> spec.Authority:
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


def live_failure(task: TaskRec, att: StoredAttempt, now: int, clause: str) -> str:
    """The clause a not-live answer rests on: the equality rule at the exact boundary."""
    return "LDG-LIVE-001" if at_boundary(task, att, now) else clause


# --- lookups every operation shares ----------------------------------------------------------


def live_session(state: State, session_id: str, clause: str, now: int) -> spec.WorkerSession:
    session = state.sessions.get(session_id)
    if session is None:
        raise refused_with(spec.UnknownSession(session_id), clause)
    if now >= session.expires_at:
        raise refused_with(spec.SessionExpired(session_id), clause)
    return session


def find_task(state: State, scope: Any, task_id: Any) -> TaskRec:
    """The task in ``scope``: malformed references answer invalid_input (READ-001), a missing
    task or one of another scope not_found (READ-002)."""
    def check() -> None:
        spec.validate_scope(scope)
        spec.validate_text(task_id, "task_id")

    check_under("LDG-READ-001", check)
    rec = state.tasks.get(task_id)
    if rec is None or rec.snapshot.input.scope != scope:
        raise refused_with(spec.NotFound(str(task_id)), "LDG-READ-002")
    return rec



def status_of(rec: TaskRec) -> spec.TaskStatus:
    snap = rec.snapshot
    return spec.TaskStatus(snap.input.scope, snap.task_id, snap.run_id, snap.input.queue,
                           snap.input.correlation_key, snap.state, snap.attempt_count,
                           snap.current_attempt_id, rec.latest_attempt, snap.submitted_at,
                           snap.available_at, snap.terminal_at, snap.cancel_requested_at)



# --- finishing an attempt ----------------------------------------------------------------------


def _failure(report: spec.ExecutionReport | spec.ExecutionFailure | None) -> dict[str, Any]:
    """The outcome's failure as the seed's API gives it (``TaskFailure``: the application's
    error, the execution's error, phase and cleanup error, or a lost attempt, no message:
    crates/ledgence-orchestration-core/src/observation.rs:120-157 at 3abb9ee)."""
    if isinstance(report, spec.ExecutionReport):
        return {"kind": "application", "error": {"kind": report.outcome["kind"],
                                                 "message": report.outcome["message"]}}
    if isinstance(report, spec.ExecutionFailure):
        cleanup = report.cleanup_error
        return {"kind": "execution", "error": {"kind": report.kind, "message": report.message},
                "phase": report.phase,
                "cleanup_error": None if cleanup is None else dict(cleanup)}
    return {"kind": "attempt_lost"}


def _ended(name: str, att: spec.AttemptSnapshot, kind: str, **rest: Any) -> dict[str, Any]:
    """A finished outcome: the last attempt, its quiescence and execution_may_have_started as
    it ended (observation.rs:96-99 at 3abb9ee), then the output or the failure."""
    return {"kind": kind, "attempt_id": name, "quiescence": att.quiescence,
            "execution_may_have_started": att.execution_may_have_started, **rest}


def finish(d: Draft, task_id: str, attempt: str, now: int) -> str:
    """Finish ``attempt`` of ``task_id`` at ``now`` by the rules; answer the rule's clause."""
    rec, att = d.tasks[task_id], d.attempts[attempt]
    snap = rec.snapshot
    settlement = att.snapshot.settlement
    report = settlement.report if settlement is not None else None
    confirmed = att.snapshot.quiescence == spec.CONFIRMED
    if snap.cancel_requested_at is not None:
        task_state, att_state, clause = "cancelled", "cancelled" if confirmed else "lost", \
            "LDG-FINISH-006"
        outcome: Mapping[str, Any] | None = {"kind": "cancelled"}
    elif isinstance(report, spec.ExecutionReport) and report.outcome["status"] == "success":
        task_state, att_state, clause = "succeeded", "succeeded", "LDG-FINISH-001"
        outcome = _ended(attempt, att.snapshot, "succeeded", output=report.outcome["output"])
    elif isinstance(report, spec.ExecutionReport):
        task_state, att_state, clause = "failed", "failed", "LDG-FINISH-002"
        outcome = _ended(attempt, att.snapshot, "failed", failure=_failure(report))
    elif isinstance(report, spec.ExecutionFailure) and (
            report.kind not in spec.RETRYABLE_FAILURE_KINDS):
        task_state, att_state, clause = "failed", "failed", "LDG-FINISH-005"
        outcome = _ended(attempt, att.snapshot, "failed", failure=_failure(report))
    else:
        att_state = "failed" if report is not None else "lost"
        if snap.attempt_count < snap.input.retry_policy.max_attempts:
            task_state, clause, outcome = "queued", "LDG-FINISH-003", None
        else:
            task_state, clause = "failed", "LDG-FINISH-004"
            outcome = _ended(attempt, att.snapshot, "failed", failure=_failure(report))
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


