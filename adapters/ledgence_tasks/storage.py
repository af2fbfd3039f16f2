"""The ledgence store's storage seam: :class:`Txn`, one atomic unit of work.

The core's rules (:class:`~.core.LedgenceCore`) run over a ``Txn``; a storage (the memory
store, the SQL store) implements it and its ``_transaction()`` and nothing else.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from fencepost.spec import ledgence_tasks as spec

from .records import CandidateQuery, ClaimReceipt, Cursor, PageQuery, StoredAttempt, TaskRecord


class Txn(Protocol):
    """One atomic unit of work on the store; every read holds its lock until the end.

    Lock order, for the storages that lock rows: session, cursor, task, attempt (a task's
    history is written only by the holder of the task's lock).
    """

    # sessions

    def load_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        """The session, locked for an update (``extend_session``)."""

    def read_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        """The session, locked only against a concurrent update (acquire and renew read it;
        several may hold it at once)."""

    def save_session(self, session: spec.WorkerSession) -> None: ...

    # tasks and submissions

    def find_submission(self, scope: spec.Scope, idempotency_key: str) -> str | None:
        """The id of the task accepted under ``(scope, idempotency_key)``, if any."""

    def load_task(self, task_id: str) -> TaskRecord | None:
        """The task, locked (waits for another holder)."""

    def read_ahead(self, task_id: str, attempt_id: str | None = None,
                   history: tuple[int, int] | None = None) -> None:
        """A read about to load the task, and its attempt ``attempt_id`` or its history page
        ``history`` (``after_sequence``, ``limit``), may fetch them now at once (one statement
        of a read-only SQL unit of work): the next :meth:`load_task`, :meth:`load_attempt`
        or :meth:`history` asked exactly that answers from what was fetched, once. A storage
        with nothing to gain does nothing."""

    def lock_task_if_free(self, task_id: str) -> TaskRecord | None:
        """The task, locked, or ``None`` when it is missing or another transaction holds it
        (PostgreSQL: ``FOR UPDATE SKIP LOCKED``); the recovery scan passes held tasks over."""

    def insert_task(self, record: TaskRecord) -> None:
        """Store a new task and bind its ``(scope, idempotency_key)`` to it."""

    def save_task(self, record: TaskRecord) -> None: ...

    def next_candidate(self, query: CandidateQuery,
                       passed_over: Collection[str]) -> TaskRecord | None:
        """The first task (by ``query.order``) matching ``query`` and not in ``passed_over``,
        locked; ``None`` only when no such task exists. A task another transaction holds is
        waited for, never skipped (the head of the queue is what a claim takes); the core
        re-checks the record it gets with :meth:`CandidateQuery.matches`."""

    def expired_candidates(self, due_by: int, limit: int) -> list[spec.AttemptRef]:
        """Up to ``limit`` active tasks whose current attempt's lease expires at or before
        ``due_by``, first by (lease expiry, task id); read without locks (a shortlist)."""

    def list_page(self, query: PageQuery) -> list[TaskRecord]:
        """Up to ``query.limit`` tasks matching ``query`` (scope, filters, keyset), in
        ``query.order`` descending, after skipping ``query.offset``; read without locks in one
        statement (one snapshot)."""

    # attempts

    def load_attempt(self, task_id: str, attempt_id: str) -> StoredAttempt | None:
        """The attempt ``attempt_id`` of task ``task_id`` (locked), ``None`` when that task has
        no such attempt."""

    def peek_assignment(self, task_id: str,
                        attempt_id: str) -> tuple[TaskRecord, StoredAttempt] | None:
        """The task and its attempt ``attempt_id`` as one snapshot, without locks (the busy
        check: a live attempt answers Busy, which writes nothing, and one that is not live
        never becomes live again); ``None`` when either is missing."""

    def insert_attempt(self, record: StoredAttempt) -> None: ...

    def save_attempt(self, record: StoredAttempt) -> None: ...

    # acquisition cursors

    def lock_cursor(self, worker_session_id: str, consumer_id: int) -> Cursor | None:
        """The consumer's cursor, locked even when it does not exist yet (insert-or-lock), so
        that concurrent acquisitions of one consumer serialize; ``None`` when it has none."""

    def save_cursor(self, worker_session_id: str, consumer_id: int, cursor: Cursor) -> None: ...

    # dispatch claim receipts

    def load_receipt(self, worker_session_id: str, consumer_id: int,
                     sequence: int) -> ClaimReceipt | None:
        """The claim receipt stored at (session, consumer, sequence), if any. Read under the
        consumer's cursor lock (which serializes the writers of that key), without its own."""

    def insert_receipt(self, worker_session_id: str, consumer_id: int, sequence: int,
                       receipt: ClaimReceipt) -> None:
        """Store a new claim receipt (its key is never written twice: the cursor moves past
        its sequence in the same transaction)."""

    # history

    def last_sequence(self, task_id: str) -> int:
        """The highest history sequence of the task, 0 when it has none."""

    def append_history(self, recorded: spec.RecordedHistoryEvent) -> None: ...

    def history(self, task_id: str, after_sequence: int,
                limit: int) -> list[spec.RecordedHistoryEvent]:
        """Up to ``limit`` records with ``sequence > after_sequence``, ascending."""
