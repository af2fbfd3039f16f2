"""The snodo-tasks mutant SQL stores that mishandle database failures (see
:mod:`fencepost.adapters.mutants.db_failures`):
a failed COMMIT ignored, a failed claim_next read as an empty queue.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from fencepost.adapters.mutants.base import Mutant
from fencepost.adapters.mutants.db_failures import SQL, commit_failure_ignored
from fencepost.adapters.snodo_tasks.core import TasksCore
from fencepost.adapters.snodo_tasks.records import Txn as TasksTxn
from fencepost.spec import snodo_tasks
from fencepost.spec.errors import BackendUnavailable


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


MUTANTS = (
    Mutant("commit_failure_ignored", "a failed COMMIT is ignored and the operation reported "
           "done (the statements were all sent)", "SNODO-FAULT-002", TasksIgnoreCommitFailure,
           SQL),
    Mutant("db_error_is_empty_queue", "claim_next answers an empty queue when the database "
           "fails", "SNODO-FAULT-001", PollErrorIsEmptyQueue, SQL),
)
