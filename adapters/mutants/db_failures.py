"""Mutant SQL stores that mishandle database failures, one set per contract, caught by
the fault clauses (the kit injects the failures through the store's engine; see
:mod:`fencepost.scenarios.injection`). Each makes sense on a SQL store only.

- a store that swallows a failed COMMIT and reports success (its writes were all sent);
- a store that turns a database error into a definite answer: a missing record, an empty
  queue;
- (ledgence-tasks) a store that takes a failed call for one that wrote nothing and, when the
  caller re-sends it, applies it again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from fencepost.adapters.adk_ledger.core import LedgerCore, Slot
from fencepost.adapters.ledgence_tasks.core import LedgenceCore
from fencepost.adapters.ledgence_tasks.records import StoredAttempt, TaskRecord
from fencepost.adapters.ledgence_tasks.storage import Txn as LedgenceTxn
from fencepost.adapters.snodo_tasks.core import TasksCore
from fencepost.adapters.snodo_tasks.records import Txn as TasksTxn
from fencepost.spec import adk_ledger, ledgence_tasks, snodo_tasks
from fencepost.spec.errors import BackendUnavailable

from .base import Mutant

T = TypeVar("T")
SQL = ("sqlite",)


@contextmanager
def commit_failure_ignored(transaction: AbstractContextManager[T],
                           *errors: type[BaseException]) -> Iterator[T]:
    """``transaction``, except that a failure once its body has finished (the COMMIT) is
    ignored: the caller hears of success whether or not the writes committed."""
    finished = False
    try:
        with transaction as txn:
            yield txn
            finished = True
    except errors:
        if not finished:
            raise


# -- adk-ledger -----------------------------------------------------------------------------------

class LedgerIgnoresCommitFailure(LedgerCore):
    def _locked(self, invocation_id: str) -> AbstractContextManager[Slot]:
        return commit_failure_ignored(super()._locked(invocation_id), BackendUnavailable)


class LedgerErrorIsNotFound(LedgerCore):
    """Any failure while the record is locked reads as "no such invocation"."""

    @contextmanager
    def _locked(self, invocation_id: str) -> Iterator[Slot]:
        try:
            with super()._locked(invocation_id) as slot:
                yield slot
        except BackendUnavailable as e:
            raise adk_ledger.NotFound(invocation_id) from e


ADK_LEDGER = (
    Mutant("commit_failure_ignored", "a failed COMMIT is ignored and the write reported done "
           "(the statements were all sent)", "ADK-FAULT-002", LedgerIgnoresCommitFailure, SQL),
    Mutant("db_error_is_not_found", "a database error answers not_found: a failed lookup "
           "reads as a missing invocation", "ADK-FAULT-001", LedgerErrorIsNotFound, SQL),
)


# -- snodo-tasks ----------------------------------------------------------------------------------

class TasksIgnoreCommitFailure(TasksCore):
    def _transaction(self) -> AbstractContextManager[TasksTxn]:
        return commit_failure_ignored(super()._transaction(), BackendUnavailable)


class PollErrorIsEmptyQueue(TasksCore):
    """A worker's claim_next that fails on the database answers "nothing to do"."""

    def claim_next(self, owner_id: str, lease_ms: int) -> snodo_tasks.Claimed | None:
        try:
            return super().claim_next(owner_id, lease_ms)
        except BackendUnavailable:
            return None


SNODO_TASKS = (
    Mutant("commit_failure_ignored", "a failed COMMIT is ignored and the operation reported "
           "done (the statements were all sent)", "SNODO-FAULT-002", TasksIgnoreCommitFailure,
           SQL),
    Mutant("db_error_is_empty_queue", "claim_next answers an empty queue when the database "
           "fails", "SNODO-FAULT-001", PollErrorIsEmptyQueue, SQL),
)


# -- ledgence-tasks -------------------------------------------------------------------------------

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


LEDGENCE_TASKS = (
    Mutant("commit_failure_ignored", "a failed COMMIT is ignored and the operation reported "
           "done (the statements were all sent)", "LDG-FAULT-002", LedgenceIgnoresCommitFailure,
           SQL),
    Mutant("db_error_is_empty_queue", "acquire answers Empty when the database fails",
           "LDG-FAULT-001", AcquireErrorIsEmpty, SQL),
    Mutant("failed_settlement_applied_again", "a settlement re-sent after a failed call is "
           "accepted again: after a lost COMMIT acknowledgement it is applied twice",
           "LDG-FAULT-003", FailedSettlementAppliedAgain, SQL),
)
