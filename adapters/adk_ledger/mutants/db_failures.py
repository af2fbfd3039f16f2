"""The adk-ledger mutant SQL stores that mishandle database failures (see
:mod:`fencepost.adapters.mutants.db_failures`):
a failed COMMIT ignored, a database error read as a missing invocation.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from fencepost.adapters.adk_ledger.core import LedgerCore, Slot
from fencepost.adapters.mutants.base import Mutant
from fencepost.adapters.mutants.db_failures import SQL, commit_failure_ignored
from fencepost.spec import adk_ledger
from fencepost.spec.errors import BackendUnavailable


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


MUTANTS = (
    Mutant("commit_failure_ignored", "a failed COMMIT is ignored and the write reported done "
           "(the statements were all sent)", "ADK-FAULT-002", LedgerIgnoresCommitFailure, SQL),
    Mutant("db_error_is_not_found", "a database error answers not_found: a failed lookup "
           "reads as a missing invocation", "ADK-FAULT-001", LedgerErrorIsNotFound, SQL),
)
