"""The reads: ``status``, ``result``, ``inspect``, ``inspect_attempt`` and ``history``.

Reads never write and never expire anything: an attempt past its expiry stays ``active`` until
``expire_batch``, a cancel or its owner's next call finds it expired."""

from __future__ import annotations

from fencepost.spec import ledgence_tasks as spec

from .base import LedgenceBase, require_count
from .records import HISTORY_PAGE, StoredAttempt, TaskRecord
from .storage import Txn


class Reads(LedgenceBase):
    """The read operations of :class:`~.core.LedgenceCore`."""

    def status(self, scope: spec.Scope, task_id: str) -> spec.TaskStatus:
        return self._status(self._read(scope, task_id))

    def result(self, scope: spec.Scope, task_id: str) -> spec.TaskResult:
        record = self._read(scope, task_id)
        return spec.TaskResult(task=self._status(record), outcome=record.outcome)

    def inspect(self, scope: spec.Scope, task_id: str) -> spec.TaskSnapshot:
        return self._read(scope, task_id).snapshot

    def inspect_attempt(self, scope: spec.Scope, task_id: str,
                        attempt_id: str) -> spec.AttemptSnapshot:
        self._check_task_ref(scope, task_id)
        self._check_attempt_ref(attempt_id)
        with self._reading() as txn:
            txn.read_ahead(task_id, attempt_id=attempt_id)
            task = self._require(txn, scope, task_id)
            attempt = self._inspected_attempt(txn, task, attempt_id)
            if attempt is None:
                raise spec.NotFound(f"task {task_id!r} has no attempt {attempt_id!r}")
            return attempt.snapshot

    def history(self, scope: spec.Scope, task_id: str,
                after_sequence: int) -> list[spec.RecordedHistoryEvent]:
        self._check_task_ref(scope, task_id)
        self._check_after(after_sequence)
        with self._reading() as txn:
            txn.read_ahead(task_id, history=(after_sequence, HISTORY_PAGE))
            self._require(txn, scope, task_id)
            return self._history_page(txn, task_id, after_sequence)

    # -- helpers the mutants bend -------------------------------------------------------

    def _read(self, scope: spec.Scope, task_id: str) -> TaskRecord:
        """One consistent read of a task; reads never write."""
        self._check_task_ref(scope, task_id)
        with self._reading() as txn:
            return self._require(txn, scope, task_id)

    def _check_attempt_ref(self, attempt_id: str) -> None:
        spec.validate_text(attempt_id, "attempt_id")

    def _check_after(self, after_sequence: int) -> None:
        require_count(after_sequence, "after_sequence", 0, spec.U64_MAX)

    def _inspected_attempt(self, txn: Txn, task: TaskRecord,
                           attempt_id: str) -> StoredAttempt | None:
        """LDG-READ-003: the attempt ``inspect_attempt`` answers: the task's attempt of that
        id (``None``: not_found)."""
        return txn.load_attempt(task.task_id, attempt_id)

    def _history_page(self, txn: Txn, task_id: str,
                      after_sequence: int) -> list[spec.RecordedHistoryEvent]:
        """The page of history after ``after_sequence`` (at most :data:`HISTORY_PAGE`)."""
        return txn.history(task_id, after_sequence, HISTORY_PAGE)
