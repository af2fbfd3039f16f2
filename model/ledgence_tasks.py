"""Reference model of ``ledgence-tasks``, first slice: sessions, submissions, reads, history and
the cancel of queued or terminal tasks.

Identifiers are minted by the store; the model names them ``ws#1``, ``task#1``, ``run#1`` and
answers with :class:`Opaque` around those names. The harness binds each name to the real id on
first sight and from then on expects exactly that id back (``Ref("task#1")`` in later ops).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import ContractError
from fencepost.spec.opaque import Opaque, Ref
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Err, Ok

from .base import ContractModel, Ctx, Step


@attrs.frozen
class TaskRec:
    snapshot: spec.TaskSnapshot  # task_id / run_id hold the model's names
    history: tuple[spec.HistoryEvent, ...]


@attrs.frozen
class State:
    sessions: Mapping[str, spec.WorkerSession] = attrs.field(factory=dict)
    tasks: Mapping[str, TaskRec] = attrs.field(factory=dict)
    keys: Mapping[tuple[spec.Scope, str], str] = attrs.field(factory=dict)
    minted: int = 0

    def get(self, task_id: str) -> TaskRec | None:
        return self.tasks.get(task_id)


EMPTY = State()


def _err(state: State, error: ContractError, clause: str) -> Step:
    return Step(Err(error.code, error.detail), state, clause, clause)


def _ok(state: State, value: Any, clause: str) -> Step:
    return Step(Ok(value), state, clause, clause)


def _minted(name: str) -> Any:
    """A store-minted identifier in an answer: the model knows only its name (typed ``Any``
    because it stands where the real value's ``str`` goes)."""
    return Opaque(name)


def _opaque_ids(value: Any) -> Any:
    """The model's view of a value: every minted name wrapped as :class:`Opaque`."""
    if isinstance(value, spec.TaskSnapshot):
        return attrs.evolve(value, task_id=_minted(value.task_id), run_id=_minted(value.run_id))
    if isinstance(value, spec.WorkerSession):
        return attrs.evolve(value, id=_minted(value.id))
    if isinstance(value, spec.TaskStatus):
        return attrs.evolve(value, task_id=_minted(value.task_id), run_id=_minted(value.run_id))
    if isinstance(value, spec.TaskResult):
        return attrs.evolve(value, task=_opaque_ids(value.task))
    if isinstance(value, spec.RecordedHistoryEvent):
        return attrs.evolve(value, event=attrs.evolve(value.event,
                                                      task_id=_minted(value.event.task_id)))
    return value


def _validated(state: State, check: Any, clause: str) -> Step | None:
    try:
        check()
    except ContractError as e:
        return _err(state, e, clause)
    return None


# --- sessions ----------------------------------------------------------------------------------


def _open_session(state: State, op: spec.OpenSession, ctx: Ctx) -> Step:
    def check() -> None:
        spec.validate_scope(op.scope)
        spec.validate_text(op.queue, "queue")
        if isinstance(op.concurrency, bool) or not isinstance(op.concurrency, int) or (
                op.concurrency < 1):
            raise spec.InvalidInput("concurrency must be at least 1")

    refused = _validated(state, check, "LDG-SESSION-002")
    if refused:
        return refused
    name = f"ws#{state.minted + 1}"
    session = spec.WorkerSession(name, op.scope, op.queue, op.concurrency,
                                 ctx.now + spec.SESSION_MS)
    new = attrs.evolve(state, sessions={**state.sessions, name: session}, minted=state.minted + 1)
    return _ok(new, _opaque_ids(session), "LDG-SESSION-001")


def _extend_session(state: State, op: spec.ExtendSession, ctx: Ctx) -> Step:
    refused = _validated(state, lambda: spec.validate_text(op.worker_session_id,
                                                           "worker_session_id"),
                         "LDG-SESSION-003")
    if refused:
        return refused
    session = state.sessions.get(op.worker_session_id)
    if session is None:
        return _err(state, spec.UnknownSession(str(op.worker_session_id)), "LDG-SESSION-003")
    if ctx.now >= session.expires_at:
        return _err(state, spec.SessionExpired(session.id), "LDG-SESSION-004")
    session = attrs.evolve(session, expires_at=ctx.now + spec.SESSION_MS)
    new = attrs.evolve(state, sessions={**state.sessions, session.id: session})
    return _ok(new, _opaque_ids(session), "LDG-SESSION-004")


# --- submissions -------------------------------------------------------------------------------


def _lookup(state: State, op: spec.LookupSubmission, ctx: Ctx) -> Step:
    def check() -> None:
        spec.validate_scope(op.scope)
        spec.validate_text(op.idempotency_key, "idempotency_key",
                           spec.MAX_IDEMPOTENCY_KEY_BYTES)

    refused = _validated(state, check, "LDG-LOOKUP-001")
    if refused:
        return refused
    task_id = state.keys.get((op.scope, op.idempotency_key))
    found = state.tasks[task_id].snapshot if task_id is not None else None
    return _ok(state, _opaque_ids(found), "LDG-LOOKUP-001")


def _accept(state: State, op: spec.AcceptResolvedSubmission, ctx: Ctx) -> Step:
    refused = _validated(state, lambda: spec.validate_submission(op.command, op.descriptor),
                         "LDG-SUBMIT-004")
    if refused:
        return refused
    task = op.command.input
    key = (task.scope, op.command.idempotency_key)
    winner = state.keys.get(key)
    if winner is not None:
        rec = state.tasks[winner]
        if not spec.same_submission(rec.snapshot.input, task):
            return _err(state, spec.Conflict("another input under this key"), "LDG-SUBMIT-003")
        return _ok(state, _opaque_ids(rec.snapshot), "LDG-SUBMIT-002")
    n = state.minted + 1
    task_id, run_id = f"task#{n}", f"run#{n}"
    snap = spec.TaskSnapshot(task_id, run_id, op.command.idempotency_key, task, op.descriptor,
                             "queued", ctx.now, ctx.now, None, None, 0, None)
    rec = TaskRec(snap, (spec.HistoryEvent(task_id, None, ctx.now, "submitted"),))
    reused = any(k == key[1] for _, k in state.keys)
    clause = "LDG-SUBMIT-005" if reused else "LDG-SUBMIT-001"
    new = attrs.evolve(state, tasks={**state.tasks, task_id: rec},
                       keys={**state.keys, key: task_id}, minted=n)
    return _ok(new, _opaque_ids(snap), clause)


# --- reads -------------------------------------------------------------------------------------


def _find(state: State, scope: Any, task_id: Any) -> TaskRec | Step:
    def check() -> None:
        spec.validate_scope(scope)
        spec.validate_text(task_id, "task_id")

    refused = _validated(state, check, "LDG-READ-001")
    if refused:
        return refused
    rec = state.tasks.get(task_id)
    if rec is None or rec.snapshot.input.scope != scope:
        return _err(state, spec.NotFound(str(task_id)), "LDG-READ-002")
    return rec


def status_of(snap: spec.TaskSnapshot) -> spec.TaskStatus:
    latest = None  # attempts arrive with acquisition (issue 4, next slice)
    return spec.TaskStatus(snap.input.scope, snap.task_id, snap.run_id, snap.input.queue,
                           snap.input.correlation_key, snap.state, snap.attempt_count,
                           snap.current_attempt_id, latest, snap.submitted_at,
                           snap.available_at, snap.terminal_at, snap.cancel_requested_at)


def _status(state: State, op: spec.Status, ctx: Ctx) -> Step:
    rec = _find(state, op.scope, op.task_id)
    if isinstance(rec, Step):
        return rec
    return _ok(state, _opaque_ids(status_of(rec.snapshot)), "LDG-READ-001")


def _result(state: State, op: spec.Result, ctx: Ctx) -> Step:
    rec = _find(state, op.scope, op.task_id)
    if isinstance(rec, Step):
        return rec
    outcome = {"kind": "cancelled"} if rec.snapshot.state == "cancelled" else None
    return _ok(state, _opaque_ids(spec.TaskResult(status_of(rec.snapshot), outcome)),
               "LDG-READ-001")


def _inspect(state: State, op: spec.Inspect, ctx: Ctx) -> Step:
    rec = _find(state, op.scope, op.task_id)
    if isinstance(rec, Step):
        return rec
    return _ok(state, _opaque_ids(rec.snapshot), "LDG-READ-001")


def _history(state: State, op: spec.History, ctx: Ctx) -> Step:
    rec = _find(state, op.scope, op.task_id)
    if isinstance(rec, Step):
        return rec
    after = op.after_sequence
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        return _err(state, spec.InvalidInput("after_sequence must be >= 0"), "LDG-HISTORY-001")
    page = [spec.RecordedHistoryEvent(i, e) for i, e in enumerate(rec.history, 1) if i > after]
    return _ok(state, [_opaque_ids(r) for r in page[:100]], "LDG-HISTORY-001")


# --- cancel ------------------------------------------------------------------------------------


def _cancel(state: State, op: spec.Cancel, ctx: Ctx) -> Step:
    rec = _find(state, op.scope, op.task_id)
    if isinstance(rec, Step):
        return rec
    snap = rec.snapshot
    if snap.state in spec.TERMINAL_TASK_STATES or snap.cancel_requested_at is not None:
        return _ok(state, snap.state, "LDG-CANCEL-002")
    snap = attrs.evolve(snap, state="cancelled", cancel_requested_at=ctx.now,
                        terminal_at=ctx.now)
    events = (spec.HistoryEvent(snap.task_id, None, ctx.now, "cancel_requested"),
              spec.HistoryEvent(snap.task_id, None, ctx.now, "cancelled"))
    new_rec = TaskRec(snap, rec.history + events)
    new = attrs.evolve(state, tasks={**state.tasks, snap.task_id: new_rec})
    return _ok(new, "cancelled", "LDG-CANCEL-001")


_STEPS: dict[type, Any] = {
    spec.OpenSession: _open_session,
    spec.ExtendSession: _extend_session,
    spec.LookupSubmission: _lookup,
    spec.AcceptResolvedSubmission: _accept,
    spec.Status: _status,
    spec.Result: _result,
    spec.Inspect: _inspect,
    spec.History: _history,
    spec.Cancel: _cancel,
}


def step(state: State, op: Op, ctx: Ctx) -> Step:
    """Apply ``op``: the outcome, the next state and the clause that decided it."""
    return _STEPS[type(op)](state, op, ctx)  # type: ignore[no-any-return]


def observer(key: str, bindings: Mapping[str, Any], state: State) -> Op | None:
    """Read a task back with ``inspect`` in its own scope (once its id is bound)."""
    rec = state.tasks.get(key)
    if rec is None or key not in bindings:
        return None
    return spec.Inspect(rec.snapshot.input.scope, Ref(key))


MODEL = ContractModel(
    name=spec.CONTRACT,
    initial=EMPTY,
    step=step,
    observe=observer,
    field_clauses={},
    choices=(),
    durable_clause="LDG-DURABLE-001",
    mint_clause="LDG-ID-001",
)
