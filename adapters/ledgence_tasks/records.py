"""The ledgence store's records and the queries its core hands to storage.

:class:`TaskRecord`, :class:`StoredAttempt`, :class:`Cursor` and :class:`ClaimReceipt` are what
a storage keeps (the memory store as values, the SQL store as JSON columns);
:class:`CandidateQuery` and :class:`PageQuery` are the questions the core asks it (in SQL, one
WHERE and ORDER BY each); :class:`Ending` is how a finishing attempt ends. They are the
adapter's own: the reference model, the oracle the store is checked against, keeps records of
its own shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.ledgence_tasks import StoredAttempt as StoredAttempt  # the schema, shared

HISTORY_PAGE = 100
"""At most this many records per ``history`` call (the seed's page size)."""

QUEUED, ACTIVE, CANCELLED = "queued", "active", "cancelled"

SUCCEEDED, FAILED, LOST = "succeeded", "failed", "lost"

CANCELLED_OUTCOME: Mapping[str, Any] = {"kind": CANCELLED}

LOST_FAILURE: Mapping[str, Any] = {"kind": "attempt_lost"}
"""A lost attempt's failure: the seed's ``TaskFailure::AttemptLost``, no message."""

CLAIMED, REPLAYED, FINALIZED_EMPTY = "claimed", "replayed", "finalized_empty"
"""The kinds of :class:`spec.ProbeCompleted`."""

CANDIDATE_ORDER_FIELDS = ("available_at", "submitted_at", "task_id")
"""The fields a candidate order may name (each storage maps them to its own columns)."""

PAGE_ORDER_FIELDS = ("submitted_at", "task_id")
"""The fields a page order may name, all descending (``task_id`` compared bytewise)."""

CURSOR_VERSION = 1
"""The version field of the page cursors this store issues."""

DISPATCH = "dispatch"
"""The capability of a store whose ``claim_dispatch`` implements targeted claims."""

FILTER_FIELDS = ("state", "queue", "submitted_from", "submitted_until", "correlation_key")
"""The fields of :class:`spec.TaskFilters`, all written into a page cursor."""


@attrs.frozen
class TaskRecord:
    """Everything stored for one task besides its history and attempts.

    ``latest_attempt_id`` outlives ``snapshot.current_attempt_id`` (which a finished attempt
    clears); ``outcome`` is the logical outcome ``result`` reports, set when the task finishes.
    """

    snapshot: spec.TaskSnapshot
    latest_attempt_id: str | None = None
    outcome: Mapping[str, Any] | None = None

    @property
    def task_id(self) -> str:
        return self.snapshot.task_id

    @property
    def scope(self) -> spec.Scope:
        return self.snapshot.input.scope


@attrs.frozen
class Cursor:
    """A consumer's acquisition cursor: the last sequence it committed and the attempt that
    sequence assigned (``None`` for an Empty answer). Keyed by (session id, consumer id)."""

    sequence: int
    attempt: spec.AttemptRef | None


@attrs.frozen
class CandidateQuery:
    """Which tasks an acquisition may claim and in which order: decided by the core, run by
    the storage (in SQL, as the WHERE and ORDER BY of the candidate query) and re-checked by
    the core on the locked record with :meth:`matches`.

    ``available_by``: ``available_at <= available_by`` (``None``: no bound);
    ``attempts_left``: ``attempt_count < max_attempts``; ``not_cancel_requested``:
    ``cancel_requested_at is None``; ``order``: fields of :data:`CANDIDATE_ORDER_FIELDS`,
    ascending (``task_id`` compared bytewise).
    """

    scope: spec.Scope
    queue: str
    states: tuple[str, ...]
    available_by: int | None
    attempts_left: bool
    not_cancel_requested: bool
    order: tuple[str, ...]

    def matches(self, record: TaskRecord) -> bool:
        snap = record.snapshot
        return (
            snap.input.scope == self.scope
            and snap.input.queue == self.queue
            and snap.state in self.states
            and (self.available_by is None or snap.available_at <= self.available_by)
            and (not self.attempts_left
                 or snap.attempt_count < snap.input.retry_policy.max_attempts)
            and (not self.not_cancel_requested or snap.cancel_requested_at is None)
        )

    def sort_key(self, record: TaskRecord) -> tuple[Any, ...]:
        # Python compares str by code point, which is UTF-8 byte order.
        return tuple(getattr(record.snapshot, name) for name in self.order)


def status_of(record: TaskRecord) -> spec.TaskStatus:
    """The task's status: its snapshot's fields plus the latest attempt ever claimed."""
    snap = record.snapshot
    return spec.TaskStatus(
        scope=snap.input.scope, task_id=snap.task_id, run_id=snap.run_id,
        queue=snap.input.queue, correlation_key=snap.input.correlation_key,
        state=snap.state, attempt_count=snap.attempt_count,
        current_attempt_id=snap.current_attempt_id,
        latest_attempt_id=record.latest_attempt_id,
        submitted_at=snap.submitted_at, available_at=snap.available_at,
        terminal_at=snap.terminal_at, cancel_requested_at=snap.cancel_requested_at,
    )


@attrs.frozen
class PageQuery:
    """Which tasks one ``list_tasks`` page reads and in which order: decided by the core, run
    by the storage (in SQL, as the WHERE, ORDER BY, OFFSET and LIMIT of one query).

    ``scope``: the tasks' scope (``None``: every scope, which the correct core never asks
    for); ``filters``: :func:`spec.matches_filters` on the task's status (in SQL, one WHERE
    clause per given filter; ``correlation_key=""`` matches only an exact ``""`` key);
    ``order``: fields of :data:`PAGE_ORDER_FIELDS`, each descending; ``after``: the keyset, a
    tuple of values for the first ``len(after)`` order fields: only rows whose tuple of those
    fields is strictly smaller are read (``None``: from the top); ``offset``: rows skipped
    after that (0 for keyset pages); ``limit``: at most this many rows.
    """

    scope: spec.Scope | None
    filters: spec.TaskFilters
    order: tuple[str, ...]
    after: tuple[Any, ...] | None
    limit: int
    offset: int = 0

    def matches(self, record: TaskRecord) -> bool:
        """In the scope, within the filters and past the keyset."""
        return ((self.scope is None or record.scope == self.scope)
                and spec.matches_filters(status_of(record), self.filters)
                and (self.after is None
                     or self.sort_key(record)[:len(self.after)] < self.after))

    def sort_key(self, record: TaskRecord) -> tuple[Any, ...]:
        # Python compares str by code point, which is UTF-8 byte order.
        return tuple(getattr(record.snapshot, name) for name in self.order)


@attrs.frozen
class PageCursor:
    """What a ``next_cursor`` carries: the scope and filters of the walk it belongs to and the
    position (``(submitted_at, task_id)`` of the last item returned). Not the limit."""

    scope: spec.Scope
    filters: spec.TaskFilters
    position: tuple[Any, ...]


@attrs.frozen
class ClaimReceipt:
    """What a ``claim_dispatch`` stored at its (session, consumer, sequence): the command and
    the disposition it answered (a Claimed one holds the original assignment)."""

    command: spec.ClaimCommand
    disposition: Any


@attrs.frozen
class Ending:
    """How a finishing attempt ends: the task's and the attempt's new states, the task's
    outcome (``None`` for a retry), its ``available_at`` and the one finishing event."""

    task_state: str
    attempt_state: str
    outcome: Mapping[str, Any] | None
    reason: str
    available_at: int
