"""What the mutant SQL stores that mishandle database failures share (each contract's set is
its mutants package's ``db_failures``, so that loading one contract imports no other's
adapters). They are caught by the fault clauses (the kit injects the failures through the
store's engine; see :mod:`fencepost.scenarios.injection`); each makes sense on a SQL store
only.

- a store that swallows a failed COMMIT and reports success (its writes were all sent);
- a store that turns a database error into a definite answer: a missing record, an empty
  queue;
- (ledgence-tasks) a store that takes a failed call for one that wrote nothing and, when the
  caller re-sends it, applies it again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar

T = TypeVar("T")
SQL = ("sqlite",)
"""The bases these mutants run on."""


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
