"""Renewal: ``renew``, the owner's sequenced heartbeat.

The next renewal moves the lease to its capped expiry and, the first time dispatch is asked
for and allowed, marks that execution may have started; the last renewal's sequence again is
a replay that extends nothing."""

from __future__ import annotations

import attrs

from fencepost.spec import ledgence_tasks as spec

from .base import LedgenceBase
from .records import StoredAttempt, TaskRecord
from .storage import Txn


class Renewal(LedgenceBase):
    """The ``renew`` operation of :class:`~.core.LedgenceCore`."""

    def renew(self, command: spec.RenewCommand) -> spec.Authority:
        self._check_renew(command)
        owner = command.owner
        with self._transaction() as txn:
            now = self.env.clock()
            session = self._renew_session(txn, owner, now)
            if self.options[spec.RENEW_LOOKUP] == spec.CURSOR_FIRST:
                self._check_renew_cursor(txn, owner)
            task = self._require(txn, owner.scope, owner.task_id)
            attempt = txn.load_attempt(owner.task_id, owner.attempt_id)
            if (attempt is None or not self._owner_matches(attempt, owner)
                    or not self._may_renew(task, attempt, now)):
                raise spec.OwnershipLost(self._lost(owner))
            if self._renew_sequence(attempt, command):
                return self._renew_replay(txn, task, attempt, session, command, now)
            return self._renew_extend(txn, task, attempt, session, command, now)

    def _check_renew(self, command: spec.RenewCommand) -> None:
        spec.validate_renew(command)

    def _check_renew_cursor(self, txn: Txn, owner: spec.LeaseOwner) -> None:
        """``renew_lookup=cursor_first`` (the seed's order): the owner's consumer cursor must
        have assigned exactly the owner's task and attempt, else ownership_lost, before the
        task is looked up (so a task never minted is ownership_lost, not not_found)."""
        cursor = txn.lock_cursor(owner.worker_session_id, owner.consumer_id)
        if cursor is None or cursor.attempt != spec.AttemptRef(owner.task_id, owner.attempt_id):
            raise spec.OwnershipLost(self._lost(owner))

    # -- helpers the mutants bend -------------------------------------------------------

    def _renew_session(self, txn: Txn, owner: spec.LeaseOwner, now: int) -> spec.WorkerSession:
        """LDG-RENEW-003: the owner's session, usable (else unknown_session /
        session_expired), before anything else is looked up."""
        return self._usable_session(txn, owner.worker_session_id, now)

    def _may_renew(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        """Renewal needs the attempt live (current, active, unexpired)."""
        return self._live(task, attempt, now)

    def _renew_sequence(self, attempt: StoredAttempt, command: spec.RenewCommand) -> bool:
        """Order the renewal against the last accepted one: 0 and gaps are out_of_order, below
        it obsolete_operation; True for a replay (the last sequence), False for the next."""
        last = attempt.snapshot.last_renewal
        last_sequence = last.sequence if last is not None else 0
        if command.sequence == 0:
            raise spec.OutOfOrder("renewal sequences start at 1")
        if command.sequence < last_sequence:
            raise spec.ObsoleteOperation(
                f"renewal {command.sequence} is below the last renewal {last_sequence}")
        if command.sequence > last_sequence + 1:
            raise spec.OutOfOrder(
                f"renewal {command.sequence} skips past the last renewal {last_sequence}")
        return command.sequence == last_sequence

    def _renew_replay(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                      session: spec.WorkerSession, command: spec.RenewCommand,
                      now: int) -> spec.Authority:
        """The last renewal's sequence again: the same intent answers fresh authority and
        changes nothing (the lease is not extended); another intent is a conflict."""
        last = attempt.snapshot.last_renewal
        if last is None or last.intent != command.intent:
            raise spec.Conflict(
                f"renewal {command.sequence} was accepted with another intent")
        return self._authority(task, attempt, now)

    def _authorizes_dispatch(self, task: TaskRecord, attempt: StoredAttempt,
                             command: spec.RenewCommand, now: int) -> bool:
        """LDG-RENEW-007: the first dispatch renewal before the deadline, with no cancel
        requested and no settlement, marks that execution may have started."""
        att = attempt.snapshot
        return (command.intent == spec.DISPATCH and not att.execution_may_have_started
                and now < att.deadline and task.snapshot.cancel_requested_at is None
                and att.settlement is None)

    def _renewed_expiry(self, attempt: StoredAttempt, session: spec.WorkerSession,
                        command: spec.RenewCommand, now: int) -> int:
        """LDG-RENEW-001: where the next renewal, of either intent, moves the lease: the
        capped expiry of :meth:`_lease_expiry`."""
        return self._lease_expiry(now, attempt.snapshot.authority_deadline, session)

    def _renew_extend(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                      session: spec.WorkerSession, command: spec.RenewCommand,
                      now: int) -> spec.Authority:
        """The next renewal: the lease moves to the capped expiry, the renewal is recorded
        and, the first time dispatch is authorized, `dispatch_authorized` is written."""
        att = attempt.snapshot
        expiry = self._renewed_expiry(attempt, session, command, now)
        renewed = attrs.evolve(att, lease=attrs.evolve(att.lease, expires_at=expiry),
                               last_renewal=command)
        dispatch = self._authorizes_dispatch(task, attempt, command, now)
        if dispatch:
            renewed = attrs.evolve(renewed, execution_may_have_started=True)
        attempt = attrs.evolve(attempt, snapshot=renewed)
        txn.save_attempt(attempt)
        if dispatch:
            self._record(txn, task.task_id, "dispatch_authorized", now, attempt.attempt_id)
        return self._authority(task, attempt, now)
