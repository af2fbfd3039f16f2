"""The ledgence-tasks mutant SQL stores that mishandle database failures (see
:mod:`fencepost.adapters.mutants.db_failures`):
a failed COMMIT ignored, a failed acquisition read as Empty, a settlement re-sent after a
failed call accepted again.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from fencepost.adapters.ledgence_tasks.core import LedgenceCore
from fencepost.adapters.ledgence_tasks.records import StoredAttempt, TaskRecord
from fencepost.adapters.ledgence_tasks.storage import Txn as LedgenceTxn
from fencepost.adapters.mutants.base import Mutant
from fencepost.adapters.mutants.db_failures import SQL, commit_failure_ignored
from fencepost.spec import ledgence_tasks
from fencepost.spec.errors import BackendUnavailable

_FAILED = (BackendUnavailable, ledgence_tasks.Unavailable)


class LedgenceIgnoresCommitFailure(LedgenceCore):
    def _transaction(self) -> AbstractContextManager[LedgenceTxn]:
        return commit_failure_ignored(super()._transaction(), *_FAILED)


class AcquireErrorIsEmpty(LedgenceCore):
    """An acquisition that fails on the database answers Empty: the queue looked empty."""

    def acquire(self, command: ledgence_tasks.AcquireCommand) -> Any:
        try:
            return super().acquire(command)
        except _FAILED:
            return ledgence_tasks.AcquireEmpty(command.sequence)


class FailedSettlementAppliedAgain(LedgenceCore):
    """Settlements whose call failed are remembered as never written: when the worker re-sends
    one, the stored settlement is not replayed but accepted again (after a lost COMMIT
    acknowledgement the report is applied twice)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._failed: set[tuple[str, str]] = set()

    def settle(self, command: ledgence_tasks.SettleCommand) -> ledgence_tasks.SettleReply:
        try:
            return super().settle(command)
        except _FAILED:
            self._failed.add((command.owner.attempt_id, command.operation_id))
            raise

    def _settle_replay(self, txn: LedgenceTxn, task: TaskRecord, attempt: StoredAttempt,
                       command: ledgence_tasks.SettleCommand,
                       now: int) -> ledgence_tasks.SettleReply:
        if (attempt.attempt_id, command.operation_id) in self._failed:
            return self._accept_settlement(txn, task, attempt, command, now)
        return super()._settle_replay(txn, task, attempt, command, now)


MUTANTS = (
    Mutant("commit_failure_ignored", "a failed COMMIT is ignored and the operation reported "
           "done (the statements were all sent)", "LDG-FAULT-002", LedgenceIgnoresCommitFailure,
           SQL),
    Mutant("db_error_is_empty_queue", "acquire answers Empty when the database fails",
           "LDG-FAULT-001", AcquireErrorIsEmpty, SQL),
    Mutant("failed_settlement_applied_again", "a settlement re-sent after a failed call is "
           "accepted again: after a lost COMMIT acknowledgement it is applied twice",
           "LDG-FAULT-003", FailedSettlementAppliedAgain, SQL),
)
