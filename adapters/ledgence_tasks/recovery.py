"""Recovery: ``expire_batch``, the scan that finalizes attempts whose lease has expired.

A shortlist, earliest expiry first, is read without locks; each candidate is then locked (or
passed over when another transaction holds it), re-checked and expired in its own transaction."""

from __future__ import annotations

from typing import Any

from fencepost.spec import ledgence_tasks as spec

from .finishing import Finishing
from .records import ACTIVE, AttemptRecord, TaskRecord


class Recovery(Finishing):
    """The ``expire_batch`` operation of :class:`~.core.LedgenceCore`."""

    def expire_batch(self, limit: int) -> spec.RecoveryProgress:
        if not self._valid_limit(limit):
            raise spec.InvalidInput(
                f"limit must be an integer in 1..={spec.MAX_RECOVERY_BATCH}, not {limit!r}")
        shortlist = self._expiry_shortlist(limit)
        expired = sum(1 for candidate in shortlist if self._expire_one(candidate))
        return spec.RecoveryProgress(examined=len(shortlist), expired=expired)

    # -- helpers the faulty adapters bend -------------------------------------------------------

    def _valid_limit(self, limit: Any) -> bool:
        """LDG-RECOVER-002: a batch limit is an integer in 1..=MAX_RECOVERY_BATCH."""
        return (not isinstance(limit, bool) and isinstance(limit, int)
                and 1 <= limit <= spec.MAX_RECOVERY_BATCH)

    def _expiry_shortlist(self, limit: int) -> list[spec.AttemptRef]:
        """At most ``limit`` candidates, earliest lease expiry first, read in one transaction
        without locks; each is re-checked in its own transaction by :meth:`_expire_one`."""
        with self._transaction() as txn:
            now = self.env.clock()
            return txn.expired_candidates(self._expiry_cutoff(now), limit)

    def _expiry_cutoff(self, now: int) -> int:
        """The latest lease expiry that is expired at ``now`` (the shortlist's bound)."""
        return now

    def _expire_one(self, candidate: spec.AttemptRef) -> bool:
        """One candidate in its own transaction: lock its task (passing it over when another
        transaction holds it), re-check with a fresh clock reading, then write
        `lease_expired` and finish. True when it was expired here."""
        with self._transaction() as txn:
            task = txn.lock_task_if_free(candidate.task_id)
            if task is None:
                return False
            now = self.env.clock()
            attempt = txn.load_attempt(candidate.task_id, candidate.attempt_id)
            if attempt is None or not self._still_expired(task, attempt, now):
                return False
            self._record(txn, task.task_id, "lease_expired", now, attempt.attempt_id)
            self._finish(txn, task, attempt, now)
            return True

    def _still_expired(self, task: TaskRecord, attempt: AttemptRecord | None,
                       now: int) -> bool:
        """The re-check under lock: the task is still active with the same current attempt,
        and that attempt's lease has expired at ``now``."""
        return (attempt is not None and task.snapshot.state == ACTIVE
                and task.snapshot.current_attempt_id == attempt.attempt_id
                and self._expired(attempt, now))

    def _expired(self, attempt: AttemptRecord, now: int) -> bool:
        """A recovery candidate's lease has expired: now >= lease expiry (exact)."""
        return now >= attempt.snapshot.lease.expires_at
