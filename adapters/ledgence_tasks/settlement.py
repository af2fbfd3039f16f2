"""Settlement and quiescence: ``settle`` and ``confirm_quiescence``.

The owner of a live attempt settles it once (an identical re-send answers the same receipt);
with quiescence confirmed, in the settlement or later, the attempt finishes by its report."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec

from .finishing import Finishing
from .records import StoredAttempt, TaskRecord
from .storage import Txn


class Settlement(Finishing):
    """The settlement and quiescence operations of :class:`~.core.LedgenceCore`."""

    def settle(self, command: spec.SettleCommand) -> spec.SettleReply:
        """The seed's order: the shape; the owner's task, attempt and owner; then the operation
        id, the output's nesting, the report's identity and the size."""
        self._check_settle(command)
        owner = command.owner
        with self._transaction() as txn:
            now = self.env.clock()
            task = self._require(txn, owner.scope, owner.task_id)
            attempt = self._owned_attempt(txn, owner)
            self._check_operation(command)
            self._check_output(command)
            self._check_report(command, task)
            self._check_size(command)
            if attempt.snapshot.settlement is not None:
                return self._settle_replay(txn, task, attempt, command, now)
            if not self._may_settle(task, attempt, now):
                raise spec.OwnershipLost(self._lost(owner))
            return self._accept_settlement(txn, task, attempt, command, now)

    def confirm_quiescence(self, owner: spec.LeaseOwner) -> str:
        self._check_owner(owner)
        with self._transaction() as txn:
            now = self.env.clock()
            task = self._require(txn, owner.scope, owner.task_id)
            attempt = self._owned_attempt(txn, owner)
            if self._already_confirmed(attempt):
                return task.snapshot.state
            if not self._may_confirm(task, attempt, now):
                raise spec.OwnershipLost(self._lost(owner))
            if not self._has_report(attempt):
                raise spec.InvalidInput(
                    f"attempt {owner.attempt_id!r} has no accepted settlement to confirm")
            return self._confirm(txn, task, attempt, now)

    def _check_settle(self, command: spec.SettleCommand) -> None:
        spec.validate_settle(command)

    def _check_owner(self, owner: spec.LeaseOwner) -> None:
        spec.validate_owner(owner)

    def _check_operation(self, command: spec.SettleCommand) -> None:
        spec.check_operation_id(command)

    def _check_output(self, command: spec.SettleCommand) -> None:
        spec.check_report_output(command)

    def _check_size(self, command: spec.SettleCommand) -> None:
        spec.check_settlement_size(command)

    # -- helpers the mutants bend: settlement -------------------------------------------

    def _owned_attempt(self, txn: Txn, owner: spec.LeaseOwner) -> StoredAttempt:
        """The owner's attempt of the task (not_found when the task has no such attempt) when
        its lease owner is exactly ``owner``, else ownership_lost (settle and confirm check
        liveness later)."""
        attempt = txn.load_attempt(owner.task_id, owner.attempt_id)
        if attempt is None:
            raise spec.NotFound(f"task {owner.task_id!r} has no attempt {owner.attempt_id!r}")
        if not self._owner_matches(attempt, owner):
            raise spec.OwnershipLost(self._lost(owner))
        return attempt

    def _check_report(self, command: spec.SettleCommand, task: TaskRecord) -> None:
        """LDG-SETTLE-005: the report names the owner's task and attempt and the task's
        program and digest (else conflict)."""
        spec.check_report_identity(command, task.snapshot.descriptor)

    def _may_settle(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        """A first settlement needs the attempt live."""
        return self._live(task, attempt, now)

    def _same_settlement(self, stored: spec.SettleCommand, command: spec.SettleCommand) -> bool:
        """Is ``command`` a canonically identical re-send of the accepted settlement."""
        return spec.same_settlement(stored, command)

    def _settle_replay(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                       command: spec.SettleCommand, now: int) -> spec.SettleReply:
        """A settled attempt: an identical re-send answers the original receipt with the
        task's current state and writes nothing; anything else is a conflict."""
        stored = attempt.snapshot.settlement
        if stored is None or attempt.receipt is None:
            raise RuntimeError(f"attempt {attempt.attempt_id!r} has no settlement to replay")
        if not self._same_settlement(stored, command):
            raise spec.Conflict(
                f"attempt {attempt.attempt_id!r} was settled by operation "
                f"{stored.operation_id!r} with another settlement")
        return spec.SettleReply(attempt.receipt, True, task.snapshot.state)

    def _accept_settlement(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                           command: spec.SettleCommand, now: int) -> spec.SettleReply:
        """Store the settlement and its receipt, write `report_accepted`; with confirmed
        quiescence the attempt finishes at once, else the task stays active."""
        receipt = spec.SettleReceipt(command.operation_id, task.task_id, attempt.attempt_id,
                                     now)
        attempt = attrs.evolve(
            attempt, receipt=receipt,
            snapshot=attrs.evolve(attempt.snapshot, settlement=command,
                                  quiescence=command.quiescence,
                                  execution_may_have_started=self._started_after(
                                      attempt, command.report)),
        )
        txn.save_attempt(attempt)
        self._record(txn, task.task_id, "report_accepted", now, attempt.attempt_id)
        if command.quiescence == spec.CONFIRMED:
            task = self._finish(txn, task, attempt, now)
        return spec.SettleReply(receipt, False, task.snapshot.state)

    def _started_after(self, attempt: StoredAttempt, report: Any) -> bool:
        """execution_may_have_started once a settlement is accepted: true for a completed
        report, the failure's own flag for a failure; an attempt already marked stays so."""
        return (attempt.snapshot.execution_may_have_started
                or isinstance(report, spec.ExecutionReport)
                or bool(getattr(report, "execution_may_have_started", False)))

    # -- helpers the mutants bend: quiescence -------------------------------------------

    def _already_confirmed(self, attempt: StoredAttempt) -> bool:
        """Quiescence confirmed already: confirm_quiescence answers the task's state and
        writes nothing."""
        return attempt.snapshot.quiescence == spec.CONFIRMED

    def _has_report(self, attempt: StoredAttempt) -> bool:
        """Only an attempt with an accepted settlement has anything to confirm."""
        return attempt.snapshot.settlement is not None

    def _may_confirm(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        """Confirming quiescence needs the attempt live."""
        return self._live(task, attempt, now)

    def _confirm(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt, now: int) -> str:
        """Quiescence confirmed: write `cleanup_confirmed` and finish by the report."""
        attempt = attrs.evolve(attempt, snapshot=attrs.evolve(attempt.snapshot,
                                                              quiescence=spec.CONFIRMED))
        txn.save_attempt(attempt)
        self._record(txn, task.task_id, "cleanup_confirmed", now, attempt.attempt_id)
        return self._finish(txn, task, attempt, now).snapshot.state
