"""The ledgence-tasks rules written once over a small storage interface.

``LedgenceCore`` implements the operations on top of ``_transaction()``, a context manager that
yields a :class:`Txn`: one atomic unit of work that loads and writes sessions, tasks and history.
Storage classes only provide that; the known-faulty adapters override one small helper each
(``_same_submission``, ``_session_expired``, ``_history_page``, ``_cancel_queued``...). This is
an implementation of the contract independent of any reference model: the model is the oracle
it is checked against.

First slice (issue 4): sessions, submission, the reads, history and cancelling a queued task.
Acquisition, renewal, settlement and recovery arrive later, so no task is ever active here.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

import attrs

from fencepost.env import AdapterEnv
from fencepost.spec import ledgence_tasks as spec

HISTORY_PAGE = 100
"""At most this many records per ``history`` call (the seed's page size)."""

QUEUED, ACTIVE, CANCELLED = "queued", "active", "cancelled"
CANCELLED_OUTCOME: Mapping[str, Any] = {"kind": CANCELLED}


@attrs.frozen
class TaskRecord:
    """Everything stored for one task besides its history.

    ``latest_attempt_id`` outlives ``snapshot.current_attempt_id`` (which a finished attempt
    clears); ``outcome`` is the logical outcome ``result`` reports, set when the task finishes.
    """

    snapshot: spec.TaskSnapshot
    latest_attempt_id: str | None = None
    outcome: Mapping[str, Any] | None = None

    @property
    def task_id(self) -> str:
        return self.snapshot.task_id

    @property
    def scope(self) -> spec.Scope:
        return self.snapshot.input.scope


class Txn(Protocol):
    """One atomic unit of work on the store; every read holds its lock until the end."""

    def load_session(self, worker_session_id: str) -> spec.WorkerSession | None: ...

    def save_session(self, session: spec.WorkerSession) -> None: ...

    def find_submission(self, scope: spec.Scope, idempotency_key: str) -> str | None:
        """The id of the task accepted under ``(scope, idempotency_key)``, if any."""

    def load_task(self, task_id: str) -> TaskRecord | None: ...

    def insert_task(self, record: TaskRecord) -> None:
        """Store a new task and bind its ``(scope, idempotency_key)`` to it."""

    def save_task(self, record: TaskRecord) -> None: ...

    def last_sequence(self, task_id: str) -> int:
        """The highest history sequence of the task, 0 when it has none."""

    def append_history(self, recorded: spec.RecordedHistoryEvent) -> None: ...

    def history(self, task_id: str, after_sequence: int,
                limit: int) -> list[spec.RecordedHistoryEvent]:
        """Up to ``limit`` records with ``sequence > after_sequence``, ascending."""


def _require_count(value: Any, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise spec.InvalidInput(f"{what} must be an integer >= {minimum}, not {value!r}")
    return value


class LedgenceCore:
    """The ledgence-tasks rules, in the seed's order of checks: validate, then read or write."""

    capabilities: frozenset[str] = frozenset({"durable", "concurrency"})

    def __init__(self, env: AdapterEnv) -> None:
        self.env = env

    # -- storage, provided by subclasses --------------------------------------------------------

    def _transaction(self) -> AbstractContextManager[Txn]:
        raise NotImplementedError

    def close(self) -> None:
        """Release connections; the data stays (see the ``durable`` capability)."""

    # -- helpers the faulty adapters bend -------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_{uuid.uuid4().hex}"

    def _session_expired(self, session: spec.WorkerSession, now: int) -> bool:
        return now >= session.expires_at

    def _same_submission(self, a: spec.TaskInput, b: spec.TaskInput) -> bool:
        return spec.same_submission(a, b)

    def _visible(self, record: TaskRecord, scope: spec.Scope) -> bool:
        return record.scope == scope

    def _cancel_unchanged(self, snapshot: spec.TaskSnapshot) -> bool:
        """Terminal or already requested: cancel answers the state and writes nothing."""
        return (snapshot.state in spec.TERMINAL_TASK_STATES
                or snapshot.cancel_requested_at is not None)

    def _history_page(self, txn: Txn, task_id: str,
                      after_sequence: int) -> list[spec.RecordedHistoryEvent]:
        return txn.history(task_id, after_sequence, HISTORY_PAGE)

    def _record(self, txn: Txn, task_id: str, reason: str, at: int,
                attempt_id: str | None = None) -> None:
        """Append one history event at the task's next sequence (1, 2, 3... with no gaps)."""
        sequence = txn.last_sequence(task_id) + 1
        event = spec.HistoryEvent(task_id, attempt_id, at, reason)
        txn.append_history(spec.RecordedHistoryEvent(sequence, event))

    def _new_task(self, command: spec.SubmitCommand, descriptor: spec.ProgramDescriptor,
                  now: int) -> TaskRecord:
        snapshot = spec.TaskSnapshot(
            task_id=self._new_id("task"), run_id=self._new_id("run"),
            idempotency_key=command.idempotency_key, input=command.input, descriptor=descriptor,
            state=QUEUED, submitted_at=now, available_at=now, terminal_at=None,
            current_attempt_id=None, attempt_count=0, cancel_requested_at=None,
        )
        return TaskRecord(snapshot)

    def _replay(self, winner: TaskRecord, command: spec.SubmitCommand) -> spec.TaskSnapshot:
        """The winner's current snapshot, unchanged, for a submission that matches it."""
        if not self._same_submission(winner.snapshot.input, command.input):
            raise spec.Conflict(
                f"idempotency key {command.idempotency_key!r} was accepted for another input;"
                " resend that input or use a new key"
            )
        return winner.snapshot

    def _cancel_queued(self, txn: Txn, record: TaskRecord, now: int) -> TaskRecord:
        """A queued task is cancelled at once: requested and terminal at ``now``."""
        snapshot = attrs.evolve(record.snapshot, state=CANCELLED, cancel_requested_at=now,
                                terminal_at=now)
        cancelled = attrs.evolve(record, snapshot=snapshot, outcome=CANCELLED_OUTCOME)
        txn.save_task(cancelled)
        self._record(txn, record.task_id, "cancel_requested", now)
        self._record(txn, record.task_id, CANCELLED, now)
        return cancelled

    def _status(self, record: TaskRecord) -> spec.TaskStatus:
        snap = record.snapshot
        return spec.TaskStatus(
            scope=snap.input.scope, task_id=snap.task_id, run_id=snap.run_id,
            queue=snap.input.queue, correlation_key=snap.input.correlation_key,
            state=snap.state, attempt_count=snap.attempt_count,
            current_attempt_id=snap.current_attempt_id,
            latest_attempt_id=record.latest_attempt_id,
            submitted_at=snap.submitted_at, available_at=snap.available_at,
            terminal_at=snap.terminal_at, cancel_requested_at=snap.cancel_requested_at,
        )

    # -- sessions -------------------------------------------------------------------------------

    def open_session(self, scope: spec.Scope, queue: str, concurrency: int) -> spec.WorkerSession:
        spec.validate_scope(scope)
        spec.validate_text(queue, "queue")
        _require_count(concurrency, "concurrency", 1)
        with self._transaction() as txn:
            now = self.env.clock()
            session = spec.WorkerSession(self._new_id("ws"), scope, queue, concurrency,
                                         now + spec.SESSION_MS)
            txn.save_session(session)
            return session

    def extend_session(self, worker_session_id: str) -> spec.WorkerSession:
        spec.validate_text(worker_session_id, "worker_session_id")
        with self._transaction() as txn:
            session = txn.load_session(worker_session_id)
            if session is None:
                raise spec.UnknownSession(
                    f"no worker session {worker_session_id!r}; open one with open_session")
            now = self.env.clock()
            if self._session_expired(session, now):
                raise spec.SessionExpired(
                    f"worker session {worker_session_id!r} expired at {session.expires_at};"
                    " open a new one")
            extended = attrs.evolve(session, expires_at=now + spec.SESSION_MS)
            txn.save_session(extended)
            return extended

    # -- submission -----------------------------------------------------------------------------

    def lookup_submission(self, scope: spec.Scope,
                          idempotency_key: str) -> spec.TaskSnapshot | None:
        spec.validate_scope(scope)
        spec.validate_text(idempotency_key, "idempotency_key", spec.MAX_IDEMPOTENCY_KEY_BYTES)
        with self._transaction() as txn:
            winner = self._accepted(txn, scope, idempotency_key)
            return winner.snapshot if winner is not None else None

    def accept_resolved_submission(self, command: spec.SubmitCommand,
                                   descriptor: spec.ProgramDescriptor) -> spec.TaskSnapshot:
        spec.validate_submission(command, descriptor)
        scope = command.input.scope
        with self._transaction() as txn:
            winner = self._accepted(txn, scope, command.idempotency_key)
            if winner is not None:
                return self._replay(winner, command)
            record = self._new_task(command, descriptor, self.env.clock())
            txn.insert_task(record)
            self._record(txn, record.task_id, "submitted", record.snapshot.submitted_at)
            return record.snapshot

    # -- reads ----------------------------------------------------------------------------------

    def status(self, scope: spec.Scope, task_id: str) -> spec.TaskStatus:
        return self._status(self._read(scope, task_id))

    def result(self, scope: spec.Scope, task_id: str) -> spec.TaskResult:
        record = self._read(scope, task_id)
        return spec.TaskResult(task=self._status(record), outcome=record.outcome)

    def inspect(self, scope: spec.Scope, task_id: str) -> spec.TaskSnapshot:
        return self._read(scope, task_id).snapshot

    def history(self, scope: spec.Scope, task_id: str,
                after_sequence: int) -> list[spec.RecordedHistoryEvent]:
        self._check_task_ref(scope, task_id)
        _require_count(after_sequence, "after_sequence", 0)
        with self._transaction() as txn:
            self._require(txn, scope, task_id)
            return self._history_page(txn, task_id, after_sequence)

    # -- cancellation ---------------------------------------------------------------------------

    def cancel(self, scope: spec.Scope, task_id: str) -> str:
        self._check_task_ref(scope, task_id)
        with self._transaction() as txn:
            record = self._require(txn, scope, task_id)
            if self._cancel_unchanged(record.snapshot):
                return record.snapshot.state
            if record.snapshot.state != QUEUED:
                raise NotImplementedError("cancelling an active task arrives with acquisition")
            return self._cancel_queued(txn, record, self.env.clock()).snapshot.state

    # -- steps shared by the operations ---------------------------------------------------------

    @staticmethod
    def _accepted(txn: Txn, scope: spec.Scope, idempotency_key: str) -> TaskRecord | None:
        task_id = txn.find_submission(scope, idempotency_key)
        return txn.load_task(task_id) if task_id is not None else None

    @staticmethod
    def _check_task_ref(scope: spec.Scope, task_id: str) -> None:
        spec.validate_scope(scope)
        spec.validate_text(task_id, "task_id")

    def _require(self, txn: Txn, scope: spec.Scope, task_id: str) -> TaskRecord:
        """The task, or ``not_found`` when it is missing or belongs to another scope."""
        record = txn.load_task(task_id)
        if record is None or not self._visible(record, scope):
            raise spec.NotFound(f"no task {task_id!r} in scope "
                                f"({scope.tenant_id!r}, {scope.namespace!r})")
        return record

    def _read(self, scope: spec.Scope, task_id: str) -> TaskRecord:
        """One consistent read of a task; reads never write."""
        self._check_task_ref(scope, task_id)
        with self._transaction() as txn:
            return self._require(txn, scope, task_id)
