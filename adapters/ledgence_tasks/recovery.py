"""Recovery: ``expire_batch``, the scan that finalizes attempts whose lease has expired.

A shortlist, earliest expiry first, is read without locks; each candidate is then locked (or
passed over when another transaction holds it), re-checked and expired in its own transaction."""

from __future__ import annotations

from typing import Any

from fencepost.spec import ledgence_tasks as spec

from .finishing import Finishing
from .records import ACTIVE, StoredAttempt, TaskRecord
from .storage import Txn


class Recovery(Finishing):
    """The ``expire_batch`` operation of :class:`~.core.LedgenceCore`."""

    def expire_batch(self, limit: int) -> spec.RecoveryProgress:
        if not self._valid_limit(limit):
            raise spec.InvalidInput(
                f"limit must be an integer in 1..={spec.MAX_RECOVERY_BATCH}, not {limit!r}")
        shortlist = self._expiry_shortlist(limit)
        expired = sum(1 for candidate in shortlist if self._expire_one(candidate))
        return spec.RecoveryProgress(examined=len(shortlist), expired=expired)

    # -- helpers the mutants bend -------------------------------------------------------

    def _valid_limit(self, limit: Any) -> bool:
        """LDG-RECOVER-002: a batch limit is an integer in 1..=MAX_RECOVERY_BATCH."""
        return (not isinstance(limit, bool) and isinstance(limit, int)
                and 1 <= limit <= spec.MAX_RECOVERY_BATCH)

    def _expiry_shortlist(self, limit: int) -> list[spec.AttemptRef]:
        """At most ``limit`` candidates, earliest lease expiry first, read in one transaction
        without locks; each is re-checked in its own transaction by :meth:`_expire_one`."""
        with self._transaction() as txn:
            return self._shortlist(txn, self.env.clock(), limit)

    def _shortlist(self, txn: Txn, now: int, limit: int) -> list[spec.AttemptRef]:
        """LDG-RECOVER-003: the shortlist's read: at most ``limit`` attempts due at ``now``
        (lease expiry up to :meth:`_expiry_cutoff`), earliest expiry first."""
        return txn.expired_candidates(self._expiry_cutoff(now), limit)

    def _expiry_cutoff(self, now: int) -> int:
        """The latest lease expiry that is expired at ``now`` (the shortlist's bound)."""
        return now

    def _expire_one(self, candidate: spec.AttemptRef) -> bool:
        """One candidate in its own transaction: :meth:`_recheck` it, then :meth:`_expire`
        it. True when it was expired here."""
        with self._transaction() as txn:
            found = self._recheck(txn, candidate)
            if found is None:
                return False
            self._expire(txn, *found)
            return True

    def _recheck(self, txn: Txn, candidate: spec.AttemptRef
                 ) -> tuple[TaskRecord, StoredAttempt, int] | None:
        """LDG-RECOVER-005: lock the candidate's task (``None``, passed over, when another
        transaction holds it) and re-check it with a fresh clock reading
        (:meth:`_still_expired`); answers the task, the attempt and that reading when it is
        still expired."""
        task = txn.lock_task_if_free(candidate.task_id)
        if task is None:
            return None
        now = self.env.clock()
        attempt = txn.load_attempt(candidate.task_id, candidate.attempt_id)
        if attempt is None or not self._still_expired(task, attempt, now):
            return None
        return task, attempt, now

    def _expire(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                now: int) -> TaskRecord:
        """Expire the attempt at ``now``: write `lease_expired`, then finish it (a lost
        attempt); answers the task as saved."""
        self._record(txn, task.task_id, "lease_expired", now, attempt.attempt_id)
        return self._finish(txn, task, attempt, now)

    def _still_expired(self, task: TaskRecord, attempt: StoredAttempt | None,
                       now: int) -> bool:
        """The re-check under lock: the task is still active with the same current attempt,
        and that attempt's lease has expired at ``now``."""
        return (attempt is not None and task.snapshot.state == ACTIVE
                and task.snapshot.current_attempt_id == attempt.attempt_id
                and self._expired(attempt, now))

    def _expired(self, attempt: StoredAttempt, now: int) -> bool:
        """A recovery candidate's lease has expired: now >= lease expiry (exact)."""
        return now >= attempt.snapshot.lease.expires_at
