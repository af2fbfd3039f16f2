"""ledgence-tasks stores whose bug shows only after three or four specific steps.

Each keeps a little state of its own beside the records (a cache of what it answered, a
short cut to the attempt being worked on), the kind of shortcut a store's author adds for
speed, and each breaks a rule only once a particular short sequence has run: the quick state
machine makes that sequence at some seeds and not at others; the transition tour
(:mod:`fencepost.scenarios.tour`) makes it at every run. They are not among
:data:`~.MUTANTS` (every one of which the quick check must catch at every seed); the tour's
tests require each to be caught by its clause.
"""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.adapters.ledgence_tasks.core import (
    Cursor,
    LedgenceCore,
    StoredAttempt,
    TaskRecord,
    Txn,
)
from fencepost.adapters.mutants.base import Mutant
from fencepost.spec import ledgence_tasks as spec


class ReplayKeepsFirstLease(LedgenceCore):
    """A replayed acquisition answers the lease the claim first answered ("the assignment
    does not change, only its authority"): open, submit, acquire, renew, and the replay of
    the same sequence shows the claim's lease expiry where the seed shows the renewed one."""

    @property
    def _first_leases(self) -> dict[tuple[str, str], spec.Lease]:
        found: dict[tuple[str, str], spec.Lease] = self.__dict__.setdefault("_leases", {})
        return found

    def _claim(self, txn: Txn, task: TaskRecord, session: spec.WorkerSession,
               command: spec.AcquireCommand, now: int) -> spec.Assignment:
        assignment = super()._claim(txn, task, session, command, now)
        owner = assignment.lease.owner
        self._first_leases[(owner.task_id, owner.attempt_id)] = assignment.lease
        return assignment

    def _acquire_replay(self, txn: Txn, cursor: Cursor, now: int) -> Any:
        reply = super()._acquire_replay(txn, cursor, now)
        if not isinstance(reply, spec.AcquireAssigned) or cursor.attempt is None:
            return reply
        first = self._first_leases.get((cursor.attempt.task_id, cursor.attempt.attempt_id))
        if first is None:
            return reply
        return attrs.evolve(reply, assignment=attrs.evolve(reply.assignment, lease=first))


class ResendCheckedAgainstCurrentAttempt(LedgenceCore):
    """A re-sent settlement is compared with the settlement of the task's current attempt
    ("the one being worked on") rather than the attempt it names: open, submit, acquire,
    settle with a retryable failure, acquire the retry, and the re-send of the first
    settlement is a conflict where the seed replays its receipt."""

    def _settle_replay(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                       command: spec.SettleCommand, now: int) -> spec.SettleReply:
        current_id = task.snapshot.current_attempt_id
        if current_id is None or current_id == attempt.attempt_id:
            return super()._settle_replay(txn, task, attempt, command, now)
        current = txn.load_attempt(task.task_id, current_id)
        stored = current.snapshot.settlement if current is not None else None
        if stored is None or not self._same_settlement(stored, command):
            raise spec.Conflict(f"attempt {current_id!r} was not settled this way")
        assert attempt.receipt is not None
        return spec.SettleReply(attempt.receipt, True, task.snapshot.state)


DEEP = (
    Mutant("replay_keeps_first_lease", "a replayed acquisition answers the lease the claim "
           "first answered, even after the lease was renewed", "LDG-ACQ-010",
           ReplayKeepsFirstLease),
    Mutant("resend_checked_against_current_attempt", "a re-sent settlement is compared with "
           "the task's current attempt instead of the attempt it settled, so after a retry "
           "it is refused as a conflict", "LDG-SETTLE-003",
           ResendCheckedAgainstCurrentAttempt),
)
"""The stores whose bug shows only after a few specific steps (see the module's docstring)."""
