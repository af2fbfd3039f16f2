"""The ``memory`` ledgence-tasks store: a thread-safe in-process store.

Durable within the process: a store opened again with the same ``env.namespace`` sees the same
sessions, tasks, attempts, acquisition cursors, dispatch claim receipts and history, which is
what lets the kit check the ``durable`` clauses without a database. Every operation holds the
namespace's one lock (``expire_batch`` takes it once for its shortlist and once per candidate;
a ``list_tasks`` page is one read under it). Task, attempt and receipt records are copied in
(:func:`detached`) and every answer out (:class:`CopiedOut`), so that no caller can change
stored data by mutating a value (``data`` is any JSON value); the store's own code reads them
as stored.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

from fencepost.adapters.memory import CopiedOut, detached, forget, shelf
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.env import AdapterEnv

from .core import (
    ACTIVE,
    CandidateQuery,
    ClaimReceipt,
    Cursor,
    LedgenceCore,
    PageQuery,
    StoredAttempt,
    TaskRecord,
)


class _MemoryTxn:
    """The shelf's tables, read and written while its lock is held (which is the only lock:
    ``lock_task_if_free`` never finds a task held, and every read is current)."""

    def __init__(self, records: dict[str, Any]) -> None:
        self.sessions: dict[str, spec.WorkerSession] = records.setdefault("sessions", {})
        self.tasks: dict[str, TaskRecord] = records.setdefault("tasks", {})
        self.submissions: dict[tuple[spec.Scope, str], str] = records.setdefault(
            "submissions", {})
        self.events: dict[str, list[spec.RecordedHistoryEvent]] = records.setdefault(
            "history", {})
        self.attempts: dict[tuple[str, str], StoredAttempt] = records.setdefault(
            "attempts", {})
        self.cursors: dict[tuple[str, int], Cursor] = records.setdefault("cursors", {})
        self.receipts: dict[tuple[str, int, int], ClaimReceipt] = records.setdefault(
            "receipts", {})

    # sessions

    def load_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        return self.sessions.get(worker_session_id)

    def read_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        return self.sessions.get(worker_session_id)

    def save_session(self, session: spec.WorkerSession) -> None:
        self.sessions[session.id] = session

    # tasks

    def find_submission(self, scope: spec.Scope, idempotency_key: str) -> str | None:
        return self.submissions.get((scope, idempotency_key))

    def load_task(self, task_id: str) -> TaskRecord | None:
        return self.tasks.get(task_id)

    def read_ahead(self, task_id: str, attempt_id: str | None = None,
                   history: tuple[int, int] | None = None) -> None:
        return None  # every read is a lookup already

    def lock_task_if_free(self, task_id: str) -> TaskRecord | None:
        return self.load_task(task_id)

    def insert_task(self, record: TaskRecord) -> None:
        self.tasks[record.task_id] = detached(record)
        self.submissions[(record.scope, record.snapshot.idempotency_key)] = record.task_id

    def save_task(self, record: TaskRecord) -> None:
        self.tasks[record.task_id] = detached(record)

    def next_candidate(self, query: CandidateQuery,
                       passed_over: Collection[str]) -> TaskRecord | None:
        matching = [r for r in self.tasks.values()
                    if r.task_id not in passed_over and query.matches(r)]
        if not matching:
            return None
        return min(matching, key=query.sort_key)

    def expired_candidates(self, due_by: int, limit: int) -> list[spec.AttemptRef]:
        due: list[tuple[int, str, str]] = []
        for task in self.tasks.values():
            attempt_id = task.snapshot.current_attempt_id
            if task.snapshot.state != ACTIVE or attempt_id is None:
                continue
            attempt = self.attempts.get((task.task_id, attempt_id))
            if attempt is not None and attempt.snapshot.lease.expires_at <= due_by:
                due.append((attempt.snapshot.lease.expires_at, task.task_id, attempt_id))
        return [spec.AttemptRef(task_id, attempt_id)
                for _, task_id, attempt_id in sorted(due)[:limit]]

    def list_page(self, query: PageQuery) -> list[TaskRecord]:
        matching = [r for r in self.tasks.values() if query.matches(r)]
        matching.sort(key=query.sort_key, reverse=True)
        return matching[query.offset:query.offset + query.limit]

    # attempts

    def load_attempt(self, task_id: str, attempt_id: str) -> StoredAttempt | None:
        return self.attempts.get((task_id, attempt_id))

    def peek_assignment(self, task_id: str,
                        attempt_id: str) -> tuple[TaskRecord, StoredAttempt] | None:
        task, attempt = self.load_task(task_id), self.load_attempt(task_id, attempt_id)
        return (task, attempt) if task is not None and attempt is not None else None

    def insert_attempt(self, record: StoredAttempt) -> None:
        self.attempts[(record.task_id, record.attempt_id)] = detached(record)

    def save_attempt(self, record: StoredAttempt) -> None:
        self.attempts[(record.task_id, record.attempt_id)] = detached(record)

    # cursors

    def lock_cursor(self, worker_session_id: str, consumer_id: int) -> Cursor | None:
        return self.cursors.get((worker_session_id, consumer_id))

    def save_cursor(self, worker_session_id: str, consumer_id: int, cursor: Cursor) -> None:
        self.cursors[(worker_session_id, consumer_id)] = cursor

    # dispatch claim receipts

    def load_receipt(self, worker_session_id: str, consumer_id: int,
                     sequence: int) -> ClaimReceipt | None:
        return self.receipts.get((worker_session_id, consumer_id, sequence))

    def insert_receipt(self, worker_session_id: str, consumer_id: int, sequence: int,
                       receipt: ClaimReceipt) -> None:
        self.receipts[(worker_session_id, consumer_id, sequence)] = detached(receipt)

    # history

    def last_sequence(self, task_id: str) -> int:
        events = self.events.get(task_id)
        return events[-1].sequence if events else 0

    def append_history(self, recorded: spec.RecordedHistoryEvent) -> None:
        self.events.setdefault(recorded.event.task_id, []).append(recorded)

    def history(self, task_id: str, after_sequence: int,
                limit: int) -> list[spec.RecordedHistoryEvent]:
        later = [r for r in self.events.get(task_id, []) if r.sequence > after_sequence]
        return sorted(later, key=lambda r: r.sequence)[:limit]


class MemoryLedgence(LedgenceCore, CopiedOut):
    """A ``ledgence-tasks`` store in dicts under one lock."""

    PROTOCOL_METHODS = spec.PROTOCOL_METHODS

    def __init__(self, env: AdapterEnv) -> None:
        super().__init__(env)
        self._shelf = shelf(spec.CONTRACT, env.namespace)

    @contextmanager
    def _transaction(self) -> Iterator[_MemoryTxn]:
        with self._shelf.lock:
            yield _MemoryTxn(self._shelf.records)


class MemoryLedgenceFactory:
    """``factory(env)`` for the built-in ``memory`` adapter; ``discard(env)`` forgets the run's
    sessions, tasks, attempts, cursors, receipts and history.

    Example::

        factory = MemoryLedgenceFactory()
        store = factory(AdapterEnv(clock=clock.now, namespace="run1"))
        snapshot = store.accept_resolved_submission(command, descriptor)
        store.cancel(command.input.scope, snapshot.task_id)  # "cancelled"
    """

    def __init__(self, store_class: type[MemoryLedgence] = MemoryLedgence) -> None:
        self.store_class = store_class

    def __call__(self, env: AdapterEnv) -> MemoryLedgence:
        return self.store_class(env)

    def discard(self, env: AdapterEnv) -> None:
        forget(spec.CONTRACT, env.namespace)

