"""The ledgence-tasks rules written once over a small storage interface.

``LedgenceCore`` implements the operations on top of ``_transaction()``, a context manager that
yields a :class:`Txn`: one atomic unit of work that loads and writes sessions, tasks, attempts,
acquisition cursors and history. Storage classes only provide that; the known-faulty adapters
override one small helper each (``_same_submission``, ``_session_expired``, ``_live``,
``_lease_expiry``, ``_retryable``, ``_expire_one``...). This is an implementation of the
contract independent of any reference model: the model is the oracle it is checked against.

The whole lifecycle: sessions, submission, the reads, history, paginated discovery
(``list_tasks``, keyset pages behind a stateless cursor), acquisition (with replays and
per-consumer sequences), targeted dispatch claims (``claim_dispatch``, sequenced with
acquisition and answered again from durable receipts), renewal, settlement, quiescence,
cancellation of queued and active tasks and the recovery scan (``expire_batch``). Every
operation reads the store's clock once, inside its transaction (``expire_batch`` once per
transaction: the shortlist and each candidate's own re-check).

Reads and replays never write and never expire anything: an attempt past its expiry stays
``active`` until ``expire_batch``, a cancel or its owner's next call finds it expired.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

import attrs

from fencepost.env import AdapterEnv
from fencepost.spec import ledgence_tasks as spec

HISTORY_PAGE = 100
"""At most this many records per ``history`` call (the seed's page size)."""

QUEUED, ACTIVE, CANCELLED = "queued", "active", "cancelled"
SUCCEEDED, FAILED, LOST = "succeeded", "failed", "lost"
CANCELLED_OUTCOME: Mapping[str, Any] = {"kind": CANCELLED}
LOST_FAILURE: Mapping[str, Any] = {"kind": "lost", "message": ""}

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
class AttemptRecord:
    """Everything stored for one attempt: the snapshot ``inspect_attempt`` answers and the
    receipt of its accepted settlement (``None`` until one is accepted), which a replayed
    settlement answers again unchanged."""

    snapshot: spec.AttemptSnapshot
    receipt: spec.SettleReceipt | None = None

    @property
    def task_id(self) -> str:
        return self.snapshot.event.task_id

    @property
    def attempt_id(self) -> str:
        return self.snapshot.event.attempt_id

    @property
    def owner(self) -> spec.LeaseOwner:
        return self.snapshot.lease.owner


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


class Txn(Protocol):
    """One atomic unit of work on the store; every read holds its lock until the end.

    Lock order, for the storages that lock rows: session, cursor, task, attempt (a task's
    history is written only by the holder of the task's lock).
    """

    # sessions

    def load_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        """The session, locked for an update (``extend_session``)."""

    def read_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        """The session, locked only against a concurrent update (acquire and renew read it;
        several may hold it at once)."""

    def save_session(self, session: spec.WorkerSession) -> None: ...

    # tasks and submissions

    def find_submission(self, scope: spec.Scope, idempotency_key: str) -> str | None:
        """The id of the task accepted under ``(scope, idempotency_key)``, if any."""

    def load_task(self, task_id: str) -> TaskRecord | None:
        """The task, locked (waits for another holder)."""

    def lock_task_if_free(self, task_id: str) -> TaskRecord | None:
        """The task, locked, or ``None`` when it is missing or another transaction holds it
        (PostgreSQL: ``FOR UPDATE SKIP LOCKED``); the recovery scan passes held tasks over."""

    def insert_task(self, record: TaskRecord) -> None:
        """Store a new task and bind its ``(scope, idempotency_key)`` to it."""

    def save_task(self, record: TaskRecord) -> None: ...

    def next_candidate(self, query: CandidateQuery,
                       passed_over: Collection[str]) -> TaskRecord | None:
        """The first task (by ``query.order``) matching ``query`` and not in ``passed_over``,
        locked; ``None`` only when no such task exists. A task another transaction holds is
        waited for, never skipped (the head of the queue is what a claim takes); the core
        re-checks the record it gets with :meth:`CandidateQuery.matches`."""

    def expired_candidates(self, due_by: int, limit: int) -> list[spec.AttemptRef]:
        """Up to ``limit`` active tasks whose current attempt's lease expires at or before
        ``due_by``, first by (lease expiry, task id); read without locks (a shortlist)."""

    def list_page(self, query: PageQuery) -> list[TaskRecord]:
        """Up to ``query.limit`` tasks matching ``query`` (scope, filters, keyset), in
        ``query.order`` descending, after skipping ``query.offset``; read without locks in one
        statement (one snapshot)."""

    # attempts

    def load_attempt(self, task_id: str, attempt_id: str) -> AttemptRecord | None:
        """The attempt ``attempt_id`` of task ``task_id`` (locked), ``None`` when that task has
        no such attempt."""

    def peek_assignment(self, task_id: str,
                        attempt_id: str) -> tuple[TaskRecord, AttemptRecord] | None:
        """The task and its attempt ``attempt_id`` as one snapshot, without locks (the busy
        check: a live attempt answers Busy, which writes nothing, and one that is not live
        never becomes live again); ``None`` when either is missing."""

    def insert_attempt(self, record: AttemptRecord) -> None: ...

    def save_attempt(self, record: AttemptRecord) -> None: ...

    # acquisition cursors

    def lock_cursor(self, worker_session_id: str, consumer_id: int) -> Cursor | None:
        """The consumer's cursor, locked even when it does not exist yet (insert-or-lock), so
        that concurrent acquisitions of one consumer serialize; ``None`` when it has none."""

    def save_cursor(self, worker_session_id: str, consumer_id: int, cursor: Cursor) -> None: ...

    # dispatch claim receipts

    def load_receipt(self, worker_session_id: str, consumer_id: int,
                     sequence: int) -> ClaimReceipt | None:
        """The claim receipt stored at (session, consumer, sequence), if any. Read under the
        consumer's cursor lock (which serializes the writers of that key), without its own."""

    def insert_receipt(self, worker_session_id: str, consumer_id: int, sequence: int,
                       receipt: ClaimReceipt) -> None:
        """Store a new claim receipt (its key is never written twice: the cursor moves past
        its sequence in the same transaction)."""

    # history

    def last_sequence(self, task_id: str) -> int:
        """The highest history sequence of the task, 0 when it has none."""

    def append_history(self, recorded: spec.RecordedHistoryEvent) -> None: ...

    def history(self, task_id: str, after_sequence: int,
                limit: int) -> list[spec.RecordedHistoryEvent]:
        """Up to ``limit`` records with ``sequence > after_sequence``, ascending."""


class _Discard(Exception):
    """Ends a transaction without committing anything it did (a Pending probe) and carries
    the answer out of it."""

    def __init__(self, answer: Any) -> None:
        super().__init__("discarded")
        self.answer = answer


def _require_count(value: Any, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise spec.InvalidInput(f"{what} must be an integer >= {minimum}, not {value!r}")
    return value


class LedgenceCore:
    """The ledgence-tasks rules, in the seed's order of checks: validate, then read or write."""

    capabilities: frozenset[str] = frozenset({"durable", "concurrency", DISPATCH})

    def __init__(self, env: AdapterEnv) -> None:
        self.env = env
        self.options = {c.name: str(env.options.get(c.name, c.default)) for c in spec.CHOICES}

    # -- storage, provided by subclasses --------------------------------------------------------

    def _transaction(self) -> AbstractContextManager[Txn]:
        raise NotImplementedError

    def _reading(self) -> AbstractContextManager[Txn]:
        """A unit of work for the reads (status, result, inspect, inspect_attempt, history):
        by default a :meth:`_transaction`. A storage may read without locks, one statement at
        a time: each of those reads one changing row or page (the task, the attempt, or the
        history after a sequence) beside the task's existence and scope, which never change."""
        return self._transaction()

    def close(self) -> None:
        """Release connections; the data stays (see the ``durable`` capability)."""

    # -- helpers the faulty adapters bend: sessions, submissions, reads ---------------------------

    def _new_id(self, prefix: str) -> str:
        """A new unique id, ``<prefix>_<32 hex>``."""
        return f"{prefix}_{uuid.uuid4().hex}"

    def _session_expired(self, session: spec.WorkerSession, now: int) -> bool:
        """Expiry is exact: at ``expires_at`` the session is expired."""
        return now >= session.expires_at

    def _same_submission(self, a: spec.TaskInput, b: spec.TaskInput) -> bool:
        """Does ``b`` replay ``a``: canonical equality (1 is not 1.0)."""
        return spec.same_submission(a, b)

    def _visible(self, record: TaskRecord, scope: spec.Scope) -> bool:
        """A task is seen only from its own scope."""
        return record.scope == scope

    def _cancel_unchanged(self, snapshot: spec.TaskSnapshot) -> bool:
        """Terminal or already requested: cancel answers the state and writes nothing."""
        return (snapshot.state in spec.TERMINAL_TASK_STATES
                or snapshot.cancel_requested_at is not None)

    def _history_page(self, txn: Txn, task_id: str,
                      after_sequence: int) -> list[spec.RecordedHistoryEvent]:
        """The page of history after ``after_sequence`` (at most :data:`HISTORY_PAGE`)."""
        return txn.history(task_id, after_sequence, HISTORY_PAGE)

    def _record(self, txn: Txn, task_id: str, reason: str, at: int,
                attempt_id: str | None = None) -> None:
        """Append one history event at the task's next sequence (1, 2, 3... with no gaps)."""
        sequence = txn.last_sequence(task_id) + 1
        event = spec.HistoryEvent(task_id, attempt_id, at, reason)
        txn.append_history(spec.RecordedHistoryEvent(sequence, event))

    def _new_task(self, command: spec.SubmitCommand, descriptor: spec.ProgramDescriptor,
                  now: int) -> TaskRecord:
        """A new queued task: submitted and available at ``now``, no attempts."""
        snapshot = spec.TaskSnapshot(
            task_id=self._new_id("task"), run_id=self._new_id("run"),
            idempotency_key=command.idempotency_key, input=command.input, descriptor=descriptor,
            state=QUEUED, submitted_at=now, available_at=now, terminal_at=None,
            current_attempt_id=None, attempt_count=0, cancel_requested_at=None,
        )
        return TaskRecord(snapshot)

    def _replay(self, winner: TaskRecord, command: spec.SubmitCommand) -> spec.TaskSnapshot:
        """The winner's current snapshot, unchanged, for a submission that matches it."""
        if not self._same_submission(winner.snapshot.input, command.input):
            raise spec.Conflict(
                f"idempotency key {command.idempotency_key!r} was accepted for another input;"
                " resend that input or use a new key"
            )
        return winner.snapshot

    def _cancel_queued(self, txn: Txn, record: TaskRecord, now: int) -> TaskRecord:
        """A queued task is cancelled at once: requested and terminal at ``now``."""
        snapshot = attrs.evolve(record.snapshot, state=CANCELLED, cancel_requested_at=now,
                                terminal_at=now)
        cancelled = attrs.evolve(record, snapshot=snapshot, outcome=CANCELLED_OUTCOME)
        txn.save_task(cancelled)
        self._record(txn, record.task_id, "cancel_requested", now)
        self._record(txn, record.task_id, CANCELLED, now)
        return cancelled

    def _status(self, record: TaskRecord) -> spec.TaskStatus:
        """The task's status: its snapshot's fields plus the latest attempt ever claimed
        (``status`` answers it, and so does every item of a ``list_tasks`` page)."""
        return status_of(record)

    # -- helpers the faulty adapters bend: discovery ---------------------------------------------

    def _page_order(self) -> tuple[str, ...]:
        """LDG-LIST-001: pages list in descending (submitted_at, task_id), task ids bytewise
        (the task id breaks submission-time ties)."""
        return PAGE_ORDER_FIELDS

    def _page_fetch(self, limit: int) -> int:
        """How many rows a page reads: one more than it shows, to learn whether more exist."""
        return limit + 1

    def _page_query(self, scope: spec.Scope, filters: spec.TaskFilters,
                    position: tuple[Any, ...] | None, limit: int) -> PageQuery:
        """LDG-LIST-002/006/010: the scope's tasks within the filters, strictly after the
        whole position (ties on submitted_at continue by task id), keyset only (no offset),
        :meth:`_page_fetch` rows in :meth:`_page_order`."""
        return PageQuery(scope=scope, filters=filters, order=self._page_order(), after=position,
                         limit=self._page_fetch(limit))

    def _page_rows(self, txn: Txn, query: PageQuery) -> list[TaskRecord]:
        """The rows of one page: one storage read (one snapshot)."""
        return txn.list_page(query)

    def _has_more(self, rows: list[TaskRecord], limit: int) -> bool:
        """LDG-LIST-005: a next cursor only when more than ``limit`` rows were read (an exact
        last page has none)."""
        return len(rows) > limit

    def _cursor_position(self, record: TaskRecord) -> tuple[Any, ...]:
        """Where a page ends: its last item's (submitted_at, task_id)."""
        return (record.snapshot.submitted_at, record.task_id)

    def _next_position(self, shown: list[TaskRecord],
                       position: tuple[Any, ...] | None) -> tuple[Any, ...]:
        """The position the next page starts after (``position``: where this page started,
        ``None`` for a first page): the last shown item's :meth:`_cursor_position`."""
        return self._cursor_position(shown[-1])

    def _cursor_document(self, cursor: PageCursor) -> dict[str, Any]:
        """The JSON a cursor encodes: version, scope, all five filters (nulls included) and
        the position; never the limit."""
        return {
            "version": CURSOR_VERSION,
            "scope": [cursor.scope.tenant_id, cursor.scope.namespace],
            "filters": {name: getattr(cursor.filters, name) for name in FILTER_FIELDS},
            "position": list(cursor.position),
        }

    def _encode_cursor(self, cursor: PageCursor) -> str:
        """LDG-LIST-007: a stateless cursor: lowercase hex of the UTF-8 canonical JSON
        (sorted keys, no spaces) of :meth:`_cursor_document`. Any store object of the
        namespace, reopened or not, decodes it."""
        return spec.canonical_json(self._cursor_document(cursor)).encode("utf-8").hex()

    def _decode_cursor(self, value: Any) -> PageCursor:
        """LDG-LIST-007: the cursor :meth:`_encode_cursor` wrote, else invalid_input: not a
        str, not lowercase hex of UTF-8, not exactly the canonical JSON this store writes, or
        not its shape (version 1, a valid scope and filters, a position of a timestamp and a
        task id)."""
        if not isinstance(value, str):
            raise spec.InvalidInput("a page cursor is a str this store issued as next_cursor")
        try:
            raw = bytes.fromhex(value)
            text = raw.decode("utf-8")
            document = json.loads(text)
            canonical = spec.canonical_json(document)
        except (ValueError, RecursionError, spec.InvalidInput):  # incl. UnicodeDecodeError
            raise spec.InvalidInput("the page cursor does not decode") from None
        if raw.hex() != value or canonical != text:
            raise spec.InvalidInput("the page cursor is not one this store issued")
        return self._cursor_from_document(document)

    def _cursor_from_document(self, document: Any) -> PageCursor:
        """A decoded cursor's JSON checked field by field (else invalid_input)."""
        def refuse() -> spec.InvalidInput:
            return spec.InvalidInput("the page cursor is not one this store issued")

        if not isinstance(document, dict) or set(document) != {"version", "scope", "filters",
                                                               "position"}:
            raise refuse()
        version, scope, filters, position = (document["version"], document["scope"],
                                             document["filters"], document["position"])
        if type(version) is not int or version != CURSOR_VERSION:
            raise refuse()
        if (not isinstance(scope, list) or len(scope) != 2
                or not isinstance(filters, dict) or set(filters) != set(FILTER_FIELDS)):
            raise refuse()
        if (not isinstance(position, list) or len(position) != 2
                or type(position[0]) is not int
                or not 0 <= position[0] <= spec.MAX_TIMESTAMP_MS
                or not isinstance(position[1], str) or not position[1]):
            raise refuse()
        decoded = PageCursor(spec.Scope(*scope), spec.TaskFilters(**filters), tuple(position))
        try:
            spec.validate_list_query(decoded.scope, spec.TaskListQuery(decoded.filters))
        except spec.InvalidInput:
            raise refuse() from None
        return decoded

    def _cursor_fits(self, cursor: PageCursor, scope: spec.Scope,
                     filters: spec.TaskFilters) -> bool:
        """LDG-LIST-007: a cursor continues only the walk of its own scope and filters."""
        return cursor.scope == scope and cursor.filters == filters

    def _page_start(self, scope: spec.Scope, query: spec.TaskListQuery
                    ) -> tuple[Any, ...] | None:
        """The position a page starts strictly after: ``None`` without a cursor, else the
        cursor's position when it decodes and fits this call's scope and filters (else
        invalid_input)."""
        if query.cursor is None:
            return None
        cursor = self._decode_cursor(query.cursor)
        if not self._cursor_fits(cursor, scope, query.filters):
            raise spec.InvalidInput(
                "the page cursor belongs to another scope or other filters; start again "
                "without a cursor")
        return cursor.position

    def _page(self, rows: list[TaskRecord], scope: spec.Scope, filters: spec.TaskFilters,
              limit: int, position: tuple[Any, ...] | None) -> spec.TaskPage:
        """LDG-LIST-001/005: the first ``limit`` rows as statuses (what ``status`` answers)
        and, when :meth:`_has_more`, a cursor at :meth:`_next_position`."""
        shown = rows[:limit]
        next_cursor = None
        if shown and self._has_more(rows, limit):
            next_cursor = self._encode_cursor(
                PageCursor(scope, filters, self._next_position(shown, position)))
        return spec.TaskPage(items=tuple(self._status(r) for r in shown),
                             next_cursor=next_cursor)

    # -- helpers the faulty adapters bend: liveness and authority --------------------------------

    def _live(self, task: TaskRecord, attempt: AttemptRecord, now: int) -> bool:
        """LDG-LIVE-001: the task is active with this attempt current and active, and ``now``
        is before both the lease expiry and the authority deadline (equality is expired)."""
        snap, att = task.snapshot, attempt.snapshot
        return (snap.state == ACTIVE
                and snap.current_attempt_id == attempt.attempt_id
                and att.state == ACTIVE
                and now < att.lease.expires_at
                and now < att.authority_deadline)

    def _cancel_requested(self, task: TaskRecord, attempt: AttemptRecord, now: int) -> bool:
        """Authority's ``cancel_requested``: the task's cancel was requested, or the attempt's
        execution deadline has passed."""
        return task.snapshot.cancel_requested_at is not None or now >= attempt.snapshot.deadline

    def _dispatch_allowed(self, task: TaskRecord, attempt: AttemptRecord, now: int) -> bool:
        """Authority's ``dispatch_allowed``: live, no cancel, no settlement, and the last
        accepted renewal asked for dispatch."""
        att = attempt.snapshot
        last = att.last_renewal
        return (self._live(task, attempt, now)
                and not self._cancel_requested(task, attempt, now)
                and att.settlement is None
                and last is not None and last.intent == spec.DISPATCH)

    def _authority(self, task: TaskRecord, attempt: AttemptRecord, now: int) -> spec.Authority:
        """LDG-AUTH-001: the attempt's authority computed at ``now`` (never stored)."""
        att = attempt.snapshot
        live = self._live(task, attempt, now)
        last = att.last_renewal
        return spec.Authority(
            expires_at=att.lease.expires_at,
            remaining_ms=att.lease.expires_at - now if live else 0,
            # execution time ends with the cancel flag (a requested cancel or the deadline)
            execution_remaining_ms=(att.deadline - now if live and not self._cancel_requested(
                task, attempt, now) else 0),
            renew_sequence=last.sequence if last is not None else 0,
            cancel_requested=self._cancel_requested(task, attempt, now),
            dispatch_allowed=self._dispatch_allowed(task, attempt, now),
        )

    def _owner_matches(self, attempt: AttemptRecord, owner: spec.LeaseOwner) -> bool:
        """The caller's owner equals the attempt's lease owner in every field."""
        return attempt.owner == owner

    # -- helpers the faulty adapters bend: acquisition --------------------------------------------

    def _deadline_passed(self, deadline_ms: int, now: int) -> bool:
        """LDG-ACQ-015: a probe whose deadline is at or before now is unavailable."""
        return deadline_ms <= now

    def _cursor_key(self, session: spec.WorkerSession,
                    command: spec.AcquireCommand) -> tuple[str, int]:
        """LDG-ACQ-016: cursors are per (session, consumer)."""
        return session.id, command.consumer_id

    def _fits_session(self, session: spec.WorkerSession, command: spec.AcquireCommand) -> bool:
        """The command's scope and queue are the session's and its consumer is one of the
        session's ``concurrency`` consumers (else invalid_input)."""
        return (session.scope == command.scope and session.queue == command.queue
                and command.consumer_id < session.concurrency)

    def _acquire_sequence(self, cursor: Cursor | None, sequence: int) -> bool:
        """Order the command's sequence against the consumer's cursor: raise out_of_order
        (0, a first sequence other than 1, a gap) or obsolete_operation (below the cursor);
        answer True for a replay (the cursor's own sequence), False for the next one."""
        if sequence == 0:
            raise spec.OutOfOrder("acquisition sequences start at 1")
        if cursor is None:
            if sequence != 1:
                raise spec.OutOfOrder(f"the consumer's first sequence must be 1, not {sequence}")
            return False
        if sequence < cursor.sequence:
            raise spec.ObsoleteOperation(
                f"sequence {sequence} is below the consumer's cursor {cursor.sequence}")
        if sequence > cursor.sequence + 1:
            raise spec.OutOfOrder(
                f"sequence {sequence} skips past the consumer's cursor {cursor.sequence}")
        return sequence == cursor.sequence

    def _cursor_attempt(self, txn: Txn, cursor: Cursor
                        ) -> tuple[TaskRecord, AttemptRecord] | None:
        """The task and attempt the cursor's sequence assigned (locked), ``None`` for Empty."""
        ref = cursor.attempt
        if ref is None:
            return None
        task = txn.load_task(ref.task_id)
        attempt = txn.load_attempt(ref.task_id, ref.attempt_id)
        if task is None or attempt is None:
            raise RuntimeError(f"the store lost attempt {ref.attempt_id!r} of {ref.task_id!r}")
        return task, attempt

    def _acquire_replay(self, txn: Txn, cursor: Cursor, now: int) -> Any:
        """The reply a repeated sequence answers, writing nothing: Empty again after an Empty,
        the assignment with fresh authority while its attempt is live, else OwnershipLost."""
        found = self._cursor_attempt(txn, cursor)
        if found is None:
            return spec.AcquireEmpty(cursor.sequence)
        task, attempt = found
        if self._live(task, attempt, now):
            return spec.AcquireAssigned(cursor.sequence, self._assignment(task, attempt, now))
        return spec.AcquireOwnershipLost(
            cursor.sequence, spec.AttemptRef(attempt.task_id, attempt.attempt_id))

    def _busy(self, txn: Txn, cursor: Cursor, now: int) -> bool:
        """The next sequence is refused while the cursor's attempt is still live (an
        unconfirmed settlement included)."""
        ref = cursor.attempt
        if ref is None:
            return False
        found = txn.peek_assignment(ref.task_id, ref.attempt_id)
        if found is None:
            raise RuntimeError(f"the store lost attempt {ref.attempt_id!r} of {ref.task_id!r}")
        return self._live(found[0], found[1], now)

    def _candidate_order(self) -> tuple[str, ...]:
        """The claim order: (available_at, submitted_at, task_id), task ids bytewise."""
        return CANDIDATE_ORDER_FIELDS

    def _candidate_query(self, command: spec.AcquireCommand, now: int) -> CandidateQuery:
        """LDG-ACQ-001: queued tasks of the command's scope and queue, not cancel-requested,
        available at ``now``, with attempts left, in :meth:`_candidate_order`."""
        return CandidateQuery(
            scope=command.scope, queue=command.queue, states=(QUEUED,), available_by=now,
            attempts_left=True, not_cancel_requested=True, order=self._candidate_order(),
        )

    def _claimable(self, record: TaskRecord, query: CandidateQuery) -> bool:
        """The re-check of a locked candidate: it still matches the query."""
        return query.matches(record)

    def _pick_candidate(self, txn: Txn, query: CandidateQuery) -> TaskRecord | None:
        """The first candidate that is still claimable once locked (the storage's order)."""
        passed_over: set[str] = set()
        while True:
            record = txn.next_candidate(query, frozenset(passed_over))
            if record is None or self._claimable(record, query):
                return record
            passed_over.add(record.task_id)

    def _attempt_deadline(self, task: TaskRecord, now: int) -> int:
        """An attempt's execution deadline: ``now + attempt_timeout_ms``."""
        return now + task.snapshot.input.attempt_timeout_ms

    def _authority_deadline(self, deadline: int) -> int:
        """An attempt's authority deadline: the execution deadline plus the cleanup grace."""
        return deadline + spec.CLEANUP_GRACE_MS

    def _lease_expiry(self, now: int, authority_deadline: int,
                      session: spec.WorkerSession) -> int:
        """LDG-ACQ-003: a granted or renewed lease expires at min(now + LEASE_MS, authority
        deadline, session expiry)."""
        return min(now + spec.LEASE_MS, authority_deadline, session.expires_at)

    def _claim(self, txn: Txn, task: TaskRecord, session: spec.WorkerSession,
               command: spec.AcquireCommand, now: int) -> spec.Assignment:
        """Start the task's next attempt for the (session, consumer): mint the attempt, lease
        and event ids, store the attempt, make the task active, write `claimed`, move the
        cursor; answer the assignment."""
        snap = task.snapshot
        attempt_id, lease_id, event_id = (self._new_id("att"), self._new_id("lease"),
                                          self._new_id("evt"))
        generation = snap.attempt_count + 1
        deadline = self._attempt_deadline(task, now)
        authority_deadline = self._authority_deadline(deadline)
        owner = spec.LeaseOwner(command.scope, snap.task_id, attempt_id, lease_id, generation,
                                session.id, command.consumer_id)
        lease = spec.Lease(owner, self._lease_expiry(now, authority_deadline, session))
        event = spec.AssignmentEvent(event_id, snap.task_id, snap.run_id, attempt_id,
                                     generation, command.scope, snap.input.data)
        attempt = AttemptRecord(spec.AttemptSnapshot(
            event=event, descriptor=snap.descriptor, lease=lease, deadline=deadline,
            authority_deadline=authority_deadline, state=ACTIVE,
            execution_may_have_started=False, last_renewal=None, quiescence=spec.UNCONFIRMED,
            settlement=None, finished_at=None,
        ))
        claimed = attrs.evolve(
            task, latest_attempt_id=attempt_id,
            snapshot=attrs.evolve(snap, state=ACTIVE, attempt_count=generation,
                                  current_attempt_id=attempt_id),
        )
        txn.insert_attempt(attempt)
        txn.save_task(claimed)
        self._record(txn, snap.task_id, CLAIMED, now, attempt_id)
        txn.save_cursor(*self._cursor_key(session, command),
                        Cursor(command.sequence, spec.AttemptRef(snap.task_id, attempt_id)))
        return self._assignment(claimed, attempt, now)

    def _assignment(self, task: TaskRecord, attempt: AttemptRecord,
                    now: int) -> spec.Assignment:
        """The assignment of a stored attempt: its descriptor, event, current lease and
        deadline, with authority computed at ``now``."""
        att = attempt.snapshot
        return spec.Assignment(att.descriptor, att.event, att.lease,
                               self._authority(task, attempt, now), att.deadline)

    def _finish_empty(self, txn: Txn, session: spec.WorkerSession,
                      command: spec.AcquireCommand) -> spec.ProbeCompleted:
        """Nothing to claim, and the caller finishes: the cursor moves to the sequence with no
        attempt, and the answer is Empty."""
        txn.save_cursor(*self._cursor_key(session, command), Cursor(command.sequence, None))
        return spec.ProbeCompleted(spec.AcquireEmpty(command.sequence), FINALIZED_EMPTY)

    def _pending(self, session: spec.WorkerSession, now: int) -> spec.ProbePending:
        """Nothing to claim and the caller keeps waiting: the session's remaining ms."""
        return spec.ProbePending(session.expires_at - now)

    def _no_candidate(self, txn: Txn, session: spec.WorkerSession,
                      command: spec.AcquireCommand, finish_empty: bool, now: int) -> Any:
        """Nothing to claim: with ``finish_empty`` the Empty answer is committed
        (:meth:`_finish_empty`); without, the transaction is rolled back (every mutation, the
        cursor's insert-or-lock placeholder included) and the answer is Pending."""
        if finish_empty:
            return self._finish_empty(txn, session, command)
        raise _Discard(self._pending(session, now))

    def _sequence_claimed(self, txn: Txn, key: tuple[str, int], sequence: int) -> bool:
        """Acquisition step 6: does a dispatch claim's receipt hold this (session, consumer,
        sequence)? Then an acquire of it is a conflict, not a replay."""
        return txn.load_receipt(*key, sequence) is not None

    # -- helpers the faulty adapters bend: targeted dispatch --------------------------------------

    def _dispatch_supported(self) -> bool:
        """LDG-DISPATCH-008: does this store implement targeted claims (it declares the
        ``dispatch`` capability)?"""
        return DISPATCH in self.capabilities

    def _claim_unsupported(self, command: Any) -> spec.ClaimReply:
        """A store without targeted dispatch: every claim, valid or not, is invalid_input
        (UNSUPPORTED_DISPATCH) and nothing changes (never a fallback to a queue scan)."""
        raise spec.InvalidInput(spec.UNSUPPORTED_DISPATCH)

    def _claim_key(self, acquisition: spec.AcquireCommand) -> tuple[str, int]:
        """The (session id, consumer id) of a claim's cursor and receipts, as the command
        names them (receipts are looked up before the session is checked)."""
        return acquisition.worker_session_id, acquisition.consumer_id

    def _lock_claimant(self, txn: Txn, acquisition: spec.AcquireCommand) -> Cursor | None:
        """Take a claim's locks before any check, in the lock order: the session (read), then
        the consumer's cursor (insert-or-lock), so that claims and acquisitions of one
        consumer serialize and a claim sees the receipt of one that committed while it
        waited. A missing session, or a consumer the session does not have, locks no cursor
        (no receipt or cursor can exist for it). Answers the cursor."""
        session = txn.read_session(acquisition.worker_session_id)
        if session is None or not self._fits_session(session, acquisition):
            return None
        return txn.lock_cursor(*self._claim_key(acquisition))

    def _claim_receipt(self, txn: Txn, command: spec.ClaimCommand) -> ClaimReceipt | None:
        """LDG-DISPATCH-005: the receipt at the claim's (session, consumer, sequence)."""
        acq = command.acquisition
        return txn.load_receipt(*self._claim_key(acq), acq.sequence)

    def _same_claim(self, stored: spec.ClaimCommand, command: spec.ClaimCommand) -> bool:
        """Is ``command`` a re-send of the stored claim (equal in every field)?"""
        return stored == command

    def _claim_replay(self, txn: Txn, receipt: ClaimReceipt, command: spec.ClaimCommand,
                      now: int) -> spec.ClaimReply:
        """LDG-DISPATCH-005: a claim's sequence again, writing nothing: another command is a
        conflict; the same one answers the stored disposition, except that Claimed is
        answered fresh (:meth:`_claimed_replay`). Even after the session expired."""
        if not self._same_claim(receipt.command, command):
            raise spec.Conflict(
                f"sequence {command.acquisition.sequence} of consumer "
                f"{command.acquisition.consumer_id} was used by another dispatch claim")
        disposition = receipt.disposition
        if isinstance(disposition, spec.ClaimClaimed):
            disposition = spec.ClaimClaimed(self._claimed_replay(
                txn, command.acquisition.sequence, self._claimed_attempt(disposition), now))
        return spec.ClaimReply(command, disposition)

    @staticmethod
    def _claimed_attempt(disposition: spec.ClaimClaimed) -> spec.AttemptRef:
        """The attempt a stored Claimed disposition assigned."""
        reply = disposition.reply
        if isinstance(reply, spec.AcquireAssigned):
            event = reply.assignment.event
            return spec.AttemptRef(event.task_id, event.attempt_id)
        lost: spec.AttemptRef = reply.assignment  # an AcquireOwnershipLost
        return lost

    def _claimed_replay(self, txn: Txn, sequence: int, ref: spec.AttemptRef, now: int) -> Any:
        """A replayed Claimed: the stored attempt's assignment with authority at ``now`` while
        it is live, else OwnershipLost of that attempt."""
        task = txn.load_task(ref.task_id)
        attempt = txn.load_attempt(ref.task_id, ref.attempt_id)
        if task is None or attempt is None:
            raise RuntimeError(f"the store lost attempt {ref.attempt_id!r} of {ref.task_id!r}")
        if self._live(task, attempt, now):
            return spec.AcquireAssigned(sequence, self._assignment(task, attempt, now))
        return spec.AcquireOwnershipLost(sequence, ref)

    def _claim_sequence(self, cursor: Cursor | None, sequence: int) -> None:
        """LDG-DISPATCH-006: a claim takes the consumer's next sequence as acquire does
        (:meth:`_acquire_sequence`: out_of_order, obsolete_operation); its cursor's own
        sequence, used by an acquisition (no receipt), is a conflict."""
        if self._acquire_sequence(cursor, sequence):
            raise spec.Conflict(
                f"sequence {sequence} was used by an acquisition; claim at the next one")

    def _dispatch_task(self, txn: Txn, dispatch: spec.DispatchRef) -> TaskRecord:
        """LDG-DISPATCH-007: the task (locked): not_found when missing or of another scope,
        conflict when it is of another queue."""
        task = self._require(txn, dispatch.scope, dispatch.task_id)
        if task.snapshot.input.queue != dispatch.queue:
            raise spec.Conflict(f"task {dispatch.task_id!r} is not in queue {dispatch.queue!r}")
        return task

    def _generation_issued(self, task: TaskRecord, generation: int) -> bool:
        """LDG-DISPATCH-007: a generation up to attempt_count + 1 has been issued (the next
        attempt's is, as soon as the task is queued)."""
        return generation <= task.snapshot.attempt_count + 1

    def _superseded(self, task: TaskRecord) -> bool:
        """LDG-DISPATCH-003: a terminal or cancel-requested task is never claimed again."""
        snap = task.snapshot
        return snap.state in spec.TERMINAL_TASK_STATES or snap.cancel_requested_at is not None

    def _disposition(self, task: TaskRecord, generation: int, now: int) -> Any:
        """Rule 7 for an issued generation ``g`` of a task with ``n`` attempts: terminal or
        cancel-requested -> TerminalOrSuperseded; active: g == n -> AlreadyHandedOff (current
        attempt), g < n -> TerminalOrSuperseded, g == n + 1 -> conflict; queued: g <= n ->
        TerminalOrSuperseded, not yet available -> Deferred(available_at); else ``None``:
        claim it."""
        snap = task.snapshot
        n = snap.attempt_count
        if self._superseded(task):
            return spec.ClaimTerminalOrSuperseded()
        if snap.state == ACTIVE:
            if generation == n + 1:
                raise spec.Conflict(
                    f"task {task.task_id!r} is active with attempt {n}; generation "
                    f"{generation} is not ready")
            if generation == n:
                return spec.ClaimAlreadyHandedOff(
                    spec.AttemptRef(task.task_id, snap.current_attempt_id or ""))
            return spec.ClaimTerminalOrSuperseded()
        if generation <= n:
            return spec.ClaimTerminalOrSuperseded()
        if snap.available_at > now:
            return spec.ClaimDeferred(snap.available_at)
        return None

    def _claim_handled(self, txn: Txn, session: spec.WorkerSession,
                       command: spec.ClaimCommand, disposition: Any) -> Any:
        """A handled (not claimed) disposition: the cursor moves to the sequence with no
        attempt; no history, nothing else."""
        txn.save_cursor(*self._cursor_key(session, command.acquisition),
                        Cursor(command.acquisition.sequence, None))
        return disposition

    def _claim_target(self, txn: Txn, task: TaskRecord, session: spec.WorkerSession,
                      command: spec.ClaimCommand, now: int) -> spec.ClaimClaimed:
        """LDG-DISPATCH-001: exactly acquire's claim (:meth:`_claim`) of this task."""
        acq = command.acquisition
        assignment = self._claim(txn, task, session, acq, now)
        return spec.ClaimClaimed(spec.AcquireAssigned(acq.sequence, assignment))

    def _store_receipt(self, txn: Txn, command: spec.ClaimCommand, disposition: Any) -> None:
        """Keep the claim's receipt at its (session, consumer, sequence) for replays."""
        acq = command.acquisition
        txn.insert_receipt(*self._claim_key(acq), acq.sequence,
                           ClaimReceipt(command, disposition))

    # -- helpers the faulty adapters bend: renewal ----------------------------------------------

    def _may_renew(self, task: TaskRecord, attempt: AttemptRecord, now: int) -> bool:
        """Renewal needs the attempt live (current, active, unexpired)."""
        return self._live(task, attempt, now)

    def _renew_sequence(self, attempt: AttemptRecord, command: spec.RenewCommand) -> bool:
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

    def _renew_replay(self, txn: Txn, task: TaskRecord, attempt: AttemptRecord,
                      session: spec.WorkerSession, command: spec.RenewCommand,
                      now: int) -> spec.Authority:
        """The last renewal's sequence again: the same intent answers fresh authority and
        changes nothing (the lease is not extended); another intent is a conflict."""
        last = attempt.snapshot.last_renewal
        if last is None or last.intent != command.intent:
            raise spec.Conflict(
                f"renewal {command.sequence} was accepted with another intent")
        return self._authority(task, attempt, now)

    def _authorizes_dispatch(self, task: TaskRecord, attempt: AttemptRecord,
                             command: spec.RenewCommand, now: int) -> bool:
        """LDG-RENEW-007: the first dispatch renewal before the deadline, with no cancel
        requested and no settlement, marks that execution may have started."""
        att = attempt.snapshot
        return (command.intent == spec.DISPATCH and not att.execution_may_have_started
                and now < att.deadline and task.snapshot.cancel_requested_at is None
                and att.settlement is None)

    def _renew_extend(self, txn: Txn, task: TaskRecord, attempt: AttemptRecord,
                      session: spec.WorkerSession, command: spec.RenewCommand,
                      now: int) -> spec.Authority:
        """The next renewal: the lease moves to the capped expiry, the renewal is recorded
        and, the first time dispatch is authorized, `dispatch_authorized` is written."""
        att = attempt.snapshot
        expiry = self._lease_expiry(now, att.authority_deadline, session)
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

    # -- helpers the faulty adapters bend: settlement and quiescence ----------------------------

    def _may_settle(self, task: TaskRecord, attempt: AttemptRecord, now: int) -> bool:
        """A first settlement needs the attempt live."""
        return self._live(task, attempt, now)

    def _check_report(self, command: spec.SettleCommand, task: TaskRecord) -> None:
        """LDG-SETTLE-005: the report names the owner's task and attempt and the task's
        program and digest (else conflict)."""
        spec.check_report_identity(command, task.snapshot.descriptor)

    def _same_settlement(self, stored: spec.SettleCommand, command: spec.SettleCommand) -> bool:
        """Is ``command`` a canonically identical re-send of the accepted settlement."""
        return spec.same_settlement(stored, command)

    def _settle_replay(self, txn: Txn, task: TaskRecord, attempt: AttemptRecord,
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

    def _accept_settlement(self, txn: Txn, task: TaskRecord, attempt: AttemptRecord,
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

    def _started_after(self, attempt: AttemptRecord, report: Any) -> bool:
        """execution_may_have_started once a settlement is accepted: true for a completed
        report, the failure's own flag for a failure; an attempt already marked stays so."""
        return (attempt.snapshot.execution_may_have_started
                or isinstance(report, spec.ExecutionReport)
                or bool(getattr(report, "execution_may_have_started", False)))

    def _may_confirm(self, task: TaskRecord, attempt: AttemptRecord, now: int) -> bool:
        """Confirming quiescence needs the attempt live."""
        return self._live(task, attempt, now)

    def _confirm(self, txn: Txn, task: TaskRecord, attempt: AttemptRecord, now: int) -> str:
        """Quiescence confirmed: write `cleanup_confirmed` and finish by the report."""
        attempt = attrs.evolve(attempt, snapshot=attrs.evolve(attempt.snapshot,
                                                              quiescence=spec.CONFIRMED))
        txn.save_attempt(attempt)
        self._record(txn, task.task_id, "cleanup_confirmed", now, attempt.attempt_id)
        return self._finish(txn, task, attempt, now).snapshot.state

    # -- helpers the faulty adapters bend: finishing an attempt ---------------------------------

    def _cancel_wins(self, task: TaskRecord) -> bool:
        """LDG-FINISH-006: a requested cancel decides a finishing attempt, whatever its report."""
        return task.snapshot.cancel_requested_at is not None

    def _retryable(self, report: spec.ExecutionFailure) -> bool:
        """An execution failure of a retryable kind (unavailable, io, capacity...)."""
        return report.kind in spec.RETRYABLE_FAILURE_KINDS

    def _attempts_left(self, task: TaskRecord) -> bool:
        """LDG-FINISH-004: the attempt budget: attempt_count < max_attempts."""
        snap = task.snapshot
        return snap.attempt_count < snap.input.retry_policy.max_attempts

    def _retry_at(self, task: TaskRecord, now: int) -> int:
        """When a retried task is claimable again: now + retry_delay_ms."""
        return now + task.snapshot.input.retry_policy.retry_delay_ms

    def _ending(self, task: TaskRecord, attempt: AttemptRecord, now: int) -> Ending:
        """The finish rules: cancel wins; a completed report succeeds or fails; a final
        failure fails; a retryable failure or a lost attempt retries while attempts are left,
        else fails."""
        att = attempt.snapshot
        report = att.settlement.report if att.settlement is not None else None
        available_at = task.snapshot.available_at
        if self._cancel_wins(task):
            attempt_state = CANCELLED if att.quiescence == spec.CONFIRMED else LOST
            return Ending(CANCELLED, attempt_state, CANCELLED_OUTCOME, CANCELLED, available_at)
        if isinstance(report, spec.ExecutionReport):
            outcome = report.outcome
            if outcome["status"] == "success":
                return Ending(SUCCEEDED, SUCCEEDED, {"kind": SUCCEEDED,
                                                     "output": outcome["output"]},
                              SUCCEEDED, available_at)
            failure = {"kind": outcome["kind"], "message": outcome["message"]}
            return Ending(FAILED, FAILED, {"kind": FAILED, "failure": failure}, FAILED,
                          available_at)
        if isinstance(report, spec.ExecutionFailure) and not self._retryable(report):
            failure = {"kind": report.kind, "message": report.message}
            return Ending(FAILED, FAILED, {"kind": FAILED, "failure": failure}, FAILED,
                          available_at)
        attempt_state = FAILED if report is not None else LOST
        if self._attempts_left(task):
            return Ending(QUEUED, attempt_state, None, "retry_scheduled",
                          self._retry_at(task, now))
        failure = ({"kind": report.kind, "message": report.message} if report is not None
                   else dict(LOST_FAILURE))
        return Ending(FAILED, attempt_state, {"kind": FAILED, "failure": failure}, FAILED,
                      available_at)

    def _finish(self, txn: Txn, task: TaskRecord, attempt: AttemptRecord,
                now: int) -> TaskRecord:
        """Finish the task's current attempt at ``now`` by :meth:`_ending`: the attempt's state
        and finished_at, the task's state, outcome, available_at and terminal_at, no current
        attempt; one finishing event. Answers the task as saved."""
        ending = self._ending(task, attempt, now)
        snap = task.snapshot
        terminal = ending.task_state in spec.TERMINAL_TASK_STATES
        finished = attrs.evolve(
            task, outcome=ending.outcome,
            snapshot=attrs.evolve(snap, state=ending.task_state, current_attempt_id=None,
                                  available_at=ending.available_at,
                                  terminal_at=now if terminal else snap.terminal_at),
        )
        txn.save_attempt(attrs.evolve(attempt, snapshot=attrs.evolve(
            attempt.snapshot, state=ending.attempt_state, finished_at=now)))
        txn.save_task(finished)
        self._record(txn, task.task_id, ending.reason, now, attempt.attempt_id)
        return finished

    # -- helpers the faulty adapters bend: cancellation and recovery ----------------------------

    def _current_attempt(self, txn: Txn, task: TaskRecord) -> AttemptRecord:
        """The active task's current attempt (locked)."""
        attempt_id = task.snapshot.current_attempt_id
        attempt = txn.load_attempt(task.task_id, attempt_id) if attempt_id is not None else None
        if attempt is None:
            raise RuntimeError(f"active task {task.task_id!r} has no current attempt")
        return attempt

    def _cancel_active(self, txn: Txn, task: TaskRecord, now: int) -> str:
        """An active task: a live attempt is only asked to stop; an expired one is finalized."""
        attempt = self._current_attempt(txn, task)
        if self._live(task, attempt, now):
            return self._cancel_live(txn, task, attempt, now)
        return self._cancel_expired(txn, task, attempt, now)

    def _cancel_live(self, txn: Txn, task: TaskRecord, attempt: AttemptRecord,
                     now: int) -> str:
        """LDG-CANCEL-003: request the cancel, cut the authority deadline to min(itself, now +
        CLEANUP_GRACE_MS) and cap the lease by it; write `cancel_requested`; the task stays
        active (the attempt is not finalized)."""
        att = attempt.snapshot
        authority_deadline = min(att.authority_deadline, now + spec.CLEANUP_GRACE_MS)
        lease = attrs.evolve(att.lease, expires_at=min(att.lease.expires_at,
                                                       authority_deadline))
        txn.save_attempt(attrs.evolve(attempt, snapshot=attrs.evolve(
            att, authority_deadline=authority_deadline, lease=lease)))
        requested = attrs.evolve(task, snapshot=attrs.evolve(task.snapshot,
                                                             cancel_requested_at=now))
        txn.save_task(requested)
        self._record(txn, task.task_id, "cancel_requested", now, attempt.attempt_id)
        return requested.snapshot.state

    def _cancel_expired(self, txn: Txn, task: TaskRecord, attempt: AttemptRecord,
                        now: int) -> str:
        """LDG-CANCEL-004: an attempt no longer live: `cancel_requested`, `lease_expired`, then
        the finish (the cancel wins: `cancelled`)."""
        requested = attrs.evolve(task, snapshot=attrs.evolve(task.snapshot,
                                                             cancel_requested_at=now))
        txn.save_task(requested)
        self._record(txn, task.task_id, "cancel_requested", now, attempt.attempt_id)
        self._record(txn, task.task_id, "lease_expired", now, attempt.attempt_id)
        return self._finish(txn, requested, attempt, now).snapshot.state

    def _expired(self, attempt: AttemptRecord, now: int) -> bool:
        """A recovery candidate's lease has expired: now >= lease expiry (exact)."""
        return now >= attempt.snapshot.lease.expires_at

    def _expiry_cutoff(self, now: int) -> int:
        """The latest lease expiry that is expired at ``now`` (the shortlist's bound)."""
        return now

    def _valid_limit(self, limit: Any) -> bool:
        """LDG-RECOVER-002: a batch limit is an integer in 1..=MAX_RECOVERY_BATCH."""
        return (not isinstance(limit, bool) and isinstance(limit, int)
                and 1 <= limit <= spec.MAX_RECOVERY_BATCH)

    def _expiry_shortlist(self, limit: int) -> list[spec.AttemptRef]:
        """At most ``limit`` candidates, earliest lease expiry first, read in one transaction
        without locks; each is re-checked in its own transaction by :meth:`_expire_one`."""
        with self._transaction() as txn:
            now = self.env.clock()
            return txn.expired_candidates(self._expiry_cutoff(now), limit)

    def _still_expired(self, task: TaskRecord, attempt: AttemptRecord | None,
                       now: int) -> bool:
        """The re-check under lock: the task is still active with the same current attempt,
        and that attempt's lease has expired at ``now``."""
        return (attempt is not None and task.snapshot.state == ACTIVE
                and task.snapshot.current_attempt_id == attempt.attempt_id
                and self._expired(attempt, now))

    def _expire_one(self, candidate: spec.AttemptRef) -> bool:
        """One candidate in its own transaction: lock its task (passing it over when another
        transaction holds it), re-check with a fresh clock reading, then write
        `lease_expired` and finish. True when it was expired here."""
        with self._transaction() as txn:
            task = txn.lock_task_if_free(candidate.task_id)
            if task is None:
                return False
            now = self.env.clock()
            attempt = txn.load_attempt(candidate.task_id, candidate.attempt_id)
            if attempt is None or not self._still_expired(task, attempt, now):
                return False
            self._record(txn, task.task_id, "lease_expired", now, attempt.attempt_id)
            self._finish(txn, task, attempt, now)
            return True

    # -- sessions -------------------------------------------------------------------------------

    def open_session(self, scope: spec.Scope, queue: str, concurrency: int) -> spec.WorkerSession:
        spec.validate_scope(scope)
        spec.validate_text(queue, "queue")
        _require_count(concurrency, "concurrency", 1)
        with self._transaction() as txn:
            now = self.env.clock()
            session = spec.WorkerSession(self._new_id("ws"), scope, queue, concurrency,
                                         now + spec.SESSION_MS)
            txn.save_session(session)
            return session

    def extend_session(self, worker_session_id: str) -> spec.WorkerSession:
        spec.validate_text(worker_session_id, "worker_session_id")
        with self._transaction() as txn:
            session = txn.load_session(worker_session_id)
            if session is None:
                raise spec.UnknownSession(
                    f"no worker session {worker_session_id!r}; open one with open_session")
            now = self.env.clock()
            if self._session_expired(session, now):
                raise spec.SessionExpired(
                    f"worker session {worker_session_id!r} expired at {session.expires_at};"
                    " open a new one")
            extended = attrs.evolve(session, expires_at=now + spec.SESSION_MS)
            txn.save_session(extended)
            return extended

    # -- submission -----------------------------------------------------------------------------

    def lookup_submission(self, scope: spec.Scope,
                          idempotency_key: str) -> spec.TaskSnapshot | None:
        self._check_lookup(scope, idempotency_key)
        with self._transaction() as txn:
            winner = self._accepted(txn, scope, idempotency_key)
            return winner.snapshot if winner is not None else None

    def accept_resolved_submission(self, command: spec.SubmitCommand,
                                   descriptor: spec.ProgramDescriptor) -> spec.TaskSnapshot:
        self._check_submission(command, descriptor)
        scope = command.input.scope
        with self._transaction() as txn:
            winner = self._accepted(txn, scope, command.idempotency_key)
            if winner is not None:
                return self._replay(winner, command)
            record = self._new_task(command, descriptor, self.env.clock())
            txn.insert_task(record)
            self._record(txn, record.task_id, "submitted", record.snapshot.submitted_at)
            return record.snapshot

    # -- reads ----------------------------------------------------------------------------------

    def status(self, scope: spec.Scope, task_id: str) -> spec.TaskStatus:
        return self._status(self._read(scope, task_id))

    def result(self, scope: spec.Scope, task_id: str) -> spec.TaskResult:
        record = self._read(scope, task_id)
        return spec.TaskResult(task=self._status(record), outcome=record.outcome)

    def inspect(self, scope: spec.Scope, task_id: str) -> spec.TaskSnapshot:
        return self._read(scope, task_id).snapshot

    def inspect_attempt(self, scope: spec.Scope, task_id: str,
                        attempt_id: str) -> spec.AttemptSnapshot:
        self._check_task_ref(scope, task_id)
        self._check_attempt_ref(attempt_id)
        with self._reading() as txn:
            self._require(txn, scope, task_id)
            attempt = txn.load_attempt(task_id, attempt_id)
            if attempt is None:
                raise spec.NotFound(f"task {task_id!r} has no attempt {attempt_id!r}")
            return attempt.snapshot

    def history(self, scope: spec.Scope, task_id: str,
                after_sequence: int) -> list[spec.RecordedHistoryEvent]:
        self._check_task_ref(scope, task_id)
        self._check_after(after_sequence)
        with self._reading() as txn:
            self._require(txn, scope, task_id)
            return self._history_page(txn, task_id, after_sequence)

    # -- discovery ------------------------------------------------------------------------------

    def list_tasks(self, scope: spec.Scope, query: spec.TaskListQuery) -> spec.TaskPage:
        """One page of the scope's tasks, newest first, in one consistent read (writes
        nothing): validate, decode the cursor, read ``limit + 1`` rows after its position."""
        self._check_list_query(scope, query)
        position = self._page_start(scope, query)
        with self._transaction() as txn:
            rows = self._page_rows(txn, self._page_query(scope, query.filters, position,
                                                         query.limit))
            return self._page(rows, scope, query.filters, query.limit, position)

    # -- acquisition ----------------------------------------------------------------------------

    def probe_acquisition(self, command: spec.AcquireCommand, finish_empty: bool,
                          deadline_ms: int) -> Any:
        self._check_acquire(command)
        if not isinstance(finish_empty, bool):
            raise spec.InvalidInput("finish_empty must be a bool")
        if isinstance(deadline_ms, bool) or not isinstance(deadline_ms, int):
            raise spec.InvalidInput("deadline_ms must be an integer (ms of store time)")
        return self._acquire(command, finish_empty, deadline_ms)

    def acquire(self, command: spec.AcquireCommand) -> Any:
        self._check_acquire(command)
        completed = self._acquire(command, True, None)
        return completed.reply

    def _acquire(self, command: spec.AcquireCommand, finish_empty: bool,
                 deadline_ms: int | None) -> Any:
        """probe_acquisition's steps 2-9 (``deadline_ms`` None: no deadline, as acquire)."""
        try:
            with self._transaction() as txn:
                return self._acquire_in(txn, command, finish_empty, deadline_ms)
        except _Discard as discarded:
            return discarded.answer

    def _acquire_in(self, txn: Txn, command: spec.AcquireCommand, finish_empty: bool,
                    deadline_ms: int | None) -> Any:
        """Steps 2-9 in one transaction: deadline, session, fit, sequence, cursor (replay or
        busy), candidate, then the claim, the committed Empty or the rolled-back Pending."""
        now = self.env.clock()
        if deadline_ms is not None and self._deadline_passed(deadline_ms, now):
            raise spec.Unavailable(f"the acquisition deadline {deadline_ms} has passed ({now})")
        session = self._usable_session(txn, command.worker_session_id, now)
        if not self._fits_session(session, command):
            raise spec.InvalidInput(
                "the command's scope, queue or consumer id does not fit the session "
                f"{session.id!r} (consumers 0..{session.concurrency - 1})")
        if command.sequence == 0:
            raise spec.OutOfOrder("acquisition sequences start at 1")
        key = self._cursor_key(session, command)
        cursor = txn.lock_cursor(*key)
        if self._acquire_sequence(cursor, command.sequence):
            assert cursor is not None
            if self._sequence_claimed(txn, key, command.sequence):
                raise spec.Conflict(
                    f"sequence {command.sequence} of consumer {command.consumer_id} holds a "
                    "dispatch claim; replay that claim or acquire at the next sequence")
            return spec.ProbeCompleted(self._acquire_replay(txn, cursor, now), REPLAYED)
        if cursor is not None and self._busy(txn, cursor, now):
            raise spec.Busy(f"consumer {command.consumer_id} still holds a live assignment "
                            f"(sequence {cursor.sequence})")
        task = self._pick_candidate(txn, self._candidate_query(command, now))
        if task is None:
            return self._no_candidate(txn, session, command, finish_empty, now)
        assignment = self._claim(txn, task, session, command, now)
        return spec.ProbeCompleted(spec.AcquireAssigned(command.sequence, assignment), CLAIMED)

    # -- targeted dispatch ----------------------------------------------------------------------

    def claim_dispatch(self, command: spec.ClaimCommand) -> spec.ClaimReply:
        if not self._dispatch_supported():
            return self._claim_unsupported(command)
        self._check_claim(command)
        with self._transaction() as txn:
            return self._claim_dispatch_in(txn, command)

    def _claim_dispatch_in(self, txn: Txn, command: spec.ClaimCommand) -> spec.ClaimReply:
        """Steps 2-8 in one transaction: locks (session, cursor), the receipt (replay or
        conflict), session, fit, sequence, busy, the task (locked), the disposition (a claim,
        or a handled one that moves the cursor), the receipt."""
        now = self.env.clock()
        acq, dispatch = command.acquisition, command.dispatch
        cursor = self._lock_claimant(txn, acq)
        receipt = self._claim_receipt(txn, command)
        if receipt is not None:
            return self._claim_replay(txn, receipt, command, now)
        session = self._usable_session(txn, acq.worker_session_id, now)
        if not self._fits_session(session, acq):
            raise spec.InvalidInput(
                "the claim's scope, queue or consumer id does not fit the session "
                f"{session.id!r} (consumers 0..{session.concurrency - 1})")
        self._claim_sequence(cursor, acq.sequence)
        if cursor is not None and self._busy(txn, cursor, now):
            raise spec.Busy(f"consumer {acq.consumer_id} still holds a live assignment "
                            f"(sequence {cursor.sequence})")
        task = self._dispatch_task(txn, dispatch)
        if not self._generation_issued(task, dispatch.generation):
            raise spec.InvalidInput("dispatch generation has never been issued")
        disposition = self._disposition(task, dispatch.generation, now)
        if disposition is None:
            disposition = self._claim_target(txn, task, session, command, now)
        else:
            disposition = self._claim_handled(txn, session, command, disposition)
        self._store_receipt(txn, command, disposition)
        return spec.ClaimReply(command, disposition)

    # -- renewal --------------------------------------------------------------------------------

    def renew(self, command: spec.RenewCommand) -> spec.Authority:
        self._check_renew(command)
        owner = command.owner
        with self._transaction() as txn:
            now = self.env.clock()
            session = self._usable_session(txn, owner.worker_session_id, now)
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

    def _check_renew_cursor(self, txn: Txn, owner: spec.LeaseOwner) -> None:
        """``renew_lookup=cursor_first`` (the seed's order): the owner's consumer cursor must
        have assigned exactly the owner's task and attempt, else ownership_lost, before the
        task is looked up (so a task never minted is ownership_lost, not not_found)."""
        cursor = txn.lock_cursor(owner.worker_session_id, owner.consumer_id)
        if cursor is None or cursor.attempt != spec.AttemptRef(owner.task_id, owner.attempt_id):
            raise spec.OwnershipLost(self._lost(owner))

    # -- settlement and quiescence --------------------------------------------------------------

    def settle(self, command: spec.SettleCommand) -> spec.SettleReply:
        """The seed's order: the shape; the owner's task, attempt and owner; then the operation
        id, the report's identity and the size."""
        self._check_settle(command)
        owner = command.owner
        with self._transaction() as txn:
            now = self.env.clock()
            task = self._require(txn, owner.scope, owner.task_id)
            attempt = self._owned_attempt(txn, owner)
            self._check_operation(command)
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

    def _already_confirmed(self, attempt: AttemptRecord) -> bool:
        """Quiescence confirmed already: confirm_quiescence answers the task's state and
        writes nothing."""
        return attempt.snapshot.quiescence == spec.CONFIRMED

    def _has_report(self, attempt: AttemptRecord) -> bool:
        """Only an attempt with an accepted settlement has anything to confirm."""
        return attempt.snapshot.settlement is not None

    # -- cancellation ---------------------------------------------------------------------------

    def cancel(self, scope: spec.Scope, task_id: str) -> str:
        self._check_task_ref(scope, task_id)
        with self._transaction() as txn:
            record = self._require(txn, scope, task_id)
            if self._cancel_unchanged(record.snapshot):
                return record.snapshot.state
            now = self.env.clock()
            if record.snapshot.state == QUEUED:
                return self._cancel_queued(txn, record, now).snapshot.state
            return self._cancel_active(txn, record, now)

    # -- recovery -------------------------------------------------------------------------------

    def expire_batch(self, limit: int) -> spec.RecoveryProgress:
        if not self._valid_limit(limit):
            raise spec.InvalidInput(
                f"limit must be an integer in 1..={spec.MAX_RECOVERY_BATCH}, not {limit!r}")
        shortlist = self._expiry_shortlist(limit)
        expired = sum(1 for candidate in shortlist if self._expire_one(candidate))
        return spec.RecoveryProgress(examined=len(shortlist), expired=expired)

    # -- argument checks the faulty adapters bend: each operation's, before it reads --------------

    @staticmethod
    def _check_lookup(scope: spec.Scope, idempotency_key: str) -> None:
        spec.validate_scope(scope)
        spec.validate_text(idempotency_key, "idempotency_key", spec.MAX_IDEMPOTENCY_KEY_BYTES)

    @staticmethod
    def _check_submission(command: spec.SubmitCommand,
                          descriptor: spec.ProgramDescriptor) -> None:
        spec.validate_submission(command, descriptor)

    @staticmethod
    def _check_attempt_ref(attempt_id: str) -> None:
        spec.validate_text(attempt_id, "attempt_id")

    @staticmethod
    def _check_after(after_sequence: int) -> None:
        _require_count(after_sequence, "after_sequence", 0)

    @staticmethod
    def _check_list_query(scope: spec.Scope, query: spec.TaskListQuery) -> None:
        spec.validate_list_query(scope, query)

    @staticmethod
    def _check_acquire(command: spec.AcquireCommand) -> None:
        spec.validate_acquire(command)

    @staticmethod
    def _check_claim(command: spec.ClaimCommand) -> None:
        spec.validate_claim(command)

    @staticmethod
    def _check_renew(command: spec.RenewCommand) -> None:
        spec.validate_renew(command)

    @staticmethod
    def _check_settle(command: spec.SettleCommand) -> None:
        spec.validate_settle(command)

    @staticmethod
    def _check_owner(owner: spec.LeaseOwner) -> None:
        spec.validate_owner(owner)

    @staticmethod
    def _check_operation(command: spec.SettleCommand) -> None:
        spec.check_operation_id(command)

    @staticmethod
    def _check_size(command: spec.SettleCommand) -> None:
        spec.check_settlement_size(command)

    # -- steps shared by the operations ---------------------------------------------------------

    @staticmethod
    def _accepted(txn: Txn, scope: spec.Scope, idempotency_key: str) -> TaskRecord | None:
        task_id = txn.find_submission(scope, idempotency_key)
        return txn.load_task(task_id) if task_id is not None else None

    @staticmethod
    def _check_task_ref(scope: spec.Scope, task_id: str) -> None:
        spec.validate_scope(scope)
        spec.validate_text(task_id, "task_id")

    def _require(self, txn: Txn, scope: spec.Scope, task_id: str) -> TaskRecord:
        """The task, or ``not_found`` when it is missing or belongs to another scope."""
        record = txn.load_task(task_id)
        if record is None or not self._visible(record, scope):
            raise spec.NotFound(f"no task {task_id!r} in scope "
                                f"({scope.tenant_id!r}, {scope.namespace!r})")
        return record

    def _read(self, scope: spec.Scope, task_id: str) -> TaskRecord:
        """One consistent read of a task; reads never write."""
        self._check_task_ref(scope, task_id)
        with self._reading() as txn:
            return self._require(txn, scope, task_id)

    def _usable_session(self, txn: Txn, worker_session_id: str,
                        now: int) -> spec.WorkerSession:
        """The (read-locked) session, or unknown_session / session_expired."""
        session = txn.read_session(worker_session_id)
        if session is None:
            raise spec.UnknownSession(f"no worker session {worker_session_id!r}")
        if self._session_expired(session, now):
            raise spec.SessionExpired(
                f"worker session {worker_session_id!r} expired at {session.expires_at}")
        return session

    def _owned_attempt(self, txn: Txn, owner: spec.LeaseOwner) -> AttemptRecord:
        """The owner's attempt of the task (not_found when the task has no such attempt) when
        its lease owner is exactly ``owner``, else ownership_lost (settle and confirm check
        liveness later)."""
        attempt = txn.load_attempt(owner.task_id, owner.attempt_id)
        if attempt is None:
            raise spec.NotFound(f"task {owner.task_id!r} has no attempt {owner.attempt_id!r}")
        if not self._owner_matches(attempt, owner):
            raise spec.OwnershipLost(self._lost(owner))
        return attempt

    @staticmethod
    def _lost(owner: spec.LeaseOwner) -> str:
        return (f"attempt {owner.attempt_id!r} of task {owner.task_id!r} is not held by this "
                "owner (another lease, expired, finished or superseded)")
