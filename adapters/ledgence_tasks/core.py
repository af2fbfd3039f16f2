"""The ledgence-tasks rules written once over a small storage interface.

``LedgenceCore`` implements the operations on top of ``_transaction()``, a context manager that
yields a :class:`~.storage.Txn`: one atomic unit of work that loads and writes sessions, tasks,
attempts, acquisition cursors and history. Storage classes only provide that; the mutants
override one small helper each (``_same_submission``, ``_session_expired``, ``_live``,
``_lease_expiry``, ``_retryable``, ``_expire_one``...). This is an implementation of the
contract independent of any reference model: the model is the oracle it is checked against.

The whole lifecycle, one module per operation family, joined here:

- :mod:`.submission`: sessions and submission;
- :mod:`.reads`: the reads and history;
- :mod:`.listing`: paginated discovery (``list_tasks``, keyset pages behind a stateless
  cursor);
- :mod:`.acquisition`: acquisition (with replays and per-consumer sequences);
- :mod:`.dispatch`: targeted dispatch claims (``claim_dispatch``, sequenced with acquisition
  and answered again from durable receipts);
- :mod:`.renewal`: renewal;
- :mod:`.settlement`: settlement and quiescence, finishing by the rules of :mod:`.finishing`;
- :mod:`.cancel`: cancellation of queued and active tasks;
- :mod:`.recovery`: the recovery scan (``expire_batch``);

with the steps they share in :mod:`.base`, the records and queries in :mod:`.records` and the
storage seam in :mod:`.storage`. Every operation reads the store's clock once, inside its
transaction (``expire_batch`` once per transaction: the shortlist and each candidate's own
re-check).

Reads and replays never write and never expire anything: an attempt past its expiry stays
``active`` until ``expire_batch``, a cancel or its owner's next call finds it expired.

This module is the public one: it re-exports the records, constants and the storage seam, so
that storages and mutants import from it alone.
"""

from __future__ import annotations

from .base import LedgenceBase
from .cancel import Cancellation
from .dispatch import Dispatch
from .listing import Listing
from .reads import Reads
from .records import (
    ACTIVE,
    CANCELLED,
    CANCELLED_OUTCOME,
    CANDIDATE_ORDER_FIELDS,
    CLAIMED,
    CURSOR_VERSION,
    DISPATCH,
    FAILED,
    FILTER_FIELDS,
    FINALIZED_EMPTY,
    HISTORY_PAGE,
    LOST,
    LOST_FAILURE,
    PAGE_ORDER_FIELDS,
    QUEUED,
    REPLAYED,
    SUCCEEDED,
    CandidateQuery,
    ClaimReceipt,
    Cursor,
    Ending,
    PageCursor,
    PageQuery,
    StoredAttempt,
    TaskRecord,
    status_of,
)
from .recovery import Recovery
from .renewal import Renewal
from .settlement import Settlement
from .storage import Txn
from .submission import Submission

__all__ = [
    "ACTIVE",
    "CANCELLED",
    "CANCELLED_OUTCOME",
    "CANDIDATE_ORDER_FIELDS",
    "CLAIMED",
    "CURSOR_VERSION",
    "DISPATCH",
    "FAILED",
    "FILTER_FIELDS",
    "FINALIZED_EMPTY",
    "HISTORY_PAGE",
    "LOST",
    "LOST_FAILURE",
    "PAGE_ORDER_FIELDS",
    "QUEUED",
    "REPLAYED",
    "SUCCEEDED",
    "StoredAttempt",
    "CandidateQuery",
    "ClaimReceipt",
    "Cursor",
    "Ending",
    "LedgenceBase",
    "LedgenceCore",
    "PageCursor",
    "PageQuery",
    "TaskRecord",
    "Txn",
    "status_of",
]


class LedgenceCore(Submission, Reads, Listing, Dispatch, Renewal, Settlement, Cancellation,
                   Recovery):
    """The ledgence-tasks rules, in the seed's order of checks: validate, then read or write.

    Each operation family is a class of its own module; every hook is defined in exactly one
    of them, so the order of the bases decides nothing. A storage subclasses this class and
    provides ``_transaction()``; a mutant subclasses it and overrides one hook.
    """
