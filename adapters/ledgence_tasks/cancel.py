"""Cancellation: ``cancel`` of a queued task (cancelled at once) or of an active one (a live
attempt is asked to stop, an expired one is finalized)."""

from __future__ import annotations

import attrs

from fencepost.spec import ledgence_tasks as spec

from .finishing import Finishing
from .records import CANCELLED, CANCELLED_OUTCOME, QUEUED, StoredAttempt, TaskRecord
from .storage import Txn


class Cancellation(Finishing):
    """The ``cancel`` operation of :class:`~.core.LedgenceCore`."""

    def cancel(self, scope: spec.Scope, task_id: str) -> str:
        self._check_task_ref(scope, task_id)
        with self._transaction() as txn:
            record = self._require(txn, scope, task_id)
            if self._cancel_unchanged(record.snapshot):
                return record.snapshot.state
            now = self.env.clock()
            if record.snapshot.state == QUEUED:
                return self._cancel_queued(txn, record, now).snapshot.state
            return self._cancel_active(txn, record, now)

    # -- helpers the mutants bend -------------------------------------------------------

    def _cancel_unchanged(self, snapshot: spec.TaskSnapshot) -> bool:
        """Terminal or already requested: cancel answers the state and writes nothing."""
        return (snapshot.state in spec.TERMINAL_TASK_STATES
                or snapshot.cancel_requested_at is not None)

    def _cancel_queued(self, txn: Txn, record: TaskRecord, now: int) -> TaskRecord:
        """A queued task is cancelled at once: requested and terminal at ``now``."""
        snapshot = attrs.evolve(record.snapshot, state=CANCELLED, cancel_requested_at=now,
                                terminal_at=now)
        cancelled = attrs.evolve(record, snapshot=snapshot, outcome=CANCELLED_OUTCOME)
        txn.save_task(cancelled)
        self._record(txn, record.task_id, "cancel_requested", now)
        self._record(txn, record.task_id, CANCELLED, now)
        return cancelled

    def _cancel_active(self, txn: Txn, task: TaskRecord, now: int) -> str:
        """An active task: a live attempt is only asked to stop; an expired one is finalized."""
        attempt = self._current_attempt(txn, task)
        if self._live(task, attempt, now):
            return self._cancel_live(txn, task, attempt, now)
        return self._cancel_expired(txn, task, attempt, now)

    def _current_attempt(self, txn: Txn, task: TaskRecord) -> StoredAttempt:
        """The active task's current attempt (locked)."""
        attempt_id = task.snapshot.current_attempt_id
        attempt = txn.load_attempt(task.task_id, attempt_id) if attempt_id is not None else None
        if attempt is None:
            raise RuntimeError(f"active task {task.task_id!r} has no current attempt")
        return attempt

    def _cancel_live(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                     now: int) -> str:
        """LDG-CANCEL-003: request the cancel, cut the authority deadline to min(itself, now +
        CLEANUP_GRACE_MS) and cap the lease by it; write `cancel_requested`; the task stays
        active (the attempt is not finalized)."""
        att = attempt.snapshot
        authority_deadline = min(att.authority_deadline, now + spec.CLEANUP_GRACE_MS)
        lease = attrs.evolve(att.lease, expires_at=min(att.lease.expires_at,
                                                       authority_deadline))
        txn.save_attempt(attrs.evolve(attempt, snapshot=attrs.evolve(
            att, authority_deadline=authority_deadline, lease=lease)))
        requested = attrs.evolve(task, snapshot=attrs.evolve(task.snapshot,
                                                             cancel_requested_at=now))
        txn.save_task(requested)
        self._record(txn, task.task_id, "cancel_requested", now, attempt.attempt_id)
        return requested.snapshot.state

    def _cancel_expired(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                        now: int) -> str:
        """LDG-CANCEL-004: an attempt no longer live: `cancel_requested`, `lease_expired`, then
        the finish (the cancel wins: `cancelled`)."""
        requested = attrs.evolve(task, snapshot=attrs.evolve(task.snapshot,
                                                             cancel_requested_at=now))
        txn.save_task(requested)
        self._record(txn, task.task_id, "cancel_requested", now, attempt.attempt_id)
        self._record(txn, task.task_id, "lease_expired", now, attempt.attempt_id)
        return self._finish(txn, requested, attempt, now).snapshot.state
