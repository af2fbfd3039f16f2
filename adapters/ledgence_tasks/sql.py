"""The SQLAlchemy ledgence-tasks store: one store for SQLite and PostgreSQL.

Six tables per run, named with :func:`~fencepost.adapters.sql.table_name`:

- ``fp_<namespace>_ledgence_sessions``: ``id`` (primary key), the whole session as JSON text;
- ``fp_<namespace>_ledgence_tasks``: ``task_id`` (primary key), ``scope`` (JSON text of
  ``[tenant_id, namespace]``), ``idempotency_key`` and the whole :class:`TaskRecord` as JSON
  text (``record``, the truth), with ``UNIQUE (scope, idempotency_key)``: the submission binding
  lives in the database, so concurrent submissions of one key bind exactly once whatever the
  isolation level. Beside the record, the columns the candidate queries filter and order on,
  written from it on every save: ``queue``, ``state``, ``available_at``, ``submitted_at``,
  ``attempt_count``, ``max_attempts``, ``cancel_requested`` and ``current_attempt_id``
  (index ``..._claim`` on scope, queue, state, available_at, submitted_at, task_id), and for
  the ``list_tasks`` filters ``correlation_key`` (null without a key) with
  ``has_correlation_key`` (the empty key ``""`` is a value: the filter ``""`` matches only rows
  that have a key and whose key is ``""``, never a missing one) (index ``..._list`` on scope,
  submitted_at, task_id: the keyset pages read it backwards);
- ``fp_<namespace>_ledgence_attempts``: ``(task_id, attempt_id)`` (primary key), the whole
  :class:`AttemptRecord` (snapshot and settlement receipt) as JSON text, and its ``state`` and
  ``lease_expires_at`` (index ``..._expiry`` on lease_expires_at, task_id);
- ``fp_<namespace>_ledgence_cursors``: ``(session_id, consumer_id)`` (primary key), the
  consumer's acquisition ``sequence`` and the ``task_id`` / ``attempt_id`` it assigned (both null
  for Empty). A row with sequence 0 is a placeholder that means "no cursor yet";
- ``fp_<namespace>_ledgence_history``: ``(task_id, sequence)`` (primary key), the event as JSON;
- ``fp_<namespace>_ledgence_receipts``: ``(session_id, consumer_id, sequence)`` (primary key),
  the ``command`` of a ``claim_dispatch`` and the ``disposition`` it answered, as JSON text.

A ``list_tasks`` page is one keyset query: the filters as WHERE clauses on the columns,
``(submitted_at < ? OR (submitted_at = ? AND task_id < ?))`` after a cursor's position,
``ORDER BY submitted_at DESC, task_id DESC`` and ``LIMIT limit + 1``; one statement, so one
snapshot on PostgreSQL (READ COMMITTED), and it takes no row locks.

Task ids sort bytewise: the id columns are ``TEXT`` (SQLite's BINARY collation) and
``TEXT COLLATE "C"`` on PostgreSQL, so ``ORDER BY task_id`` is the order the core defines.

Values are stored exactly (see :func:`dump_value`): ints stay ints, floats stay floats (``-0.0``
included), tuples stay tuples and mapping keys keep their types, because the contract compares
stored inputs canonically (``1`` is not ``1.0``) and snapshots by equality.

Atomicity: each operation is one transaction (``expire_batch``: one for the shortlist, then one per
candidate). SQLite serializes them with ``BEGIN IMMEDIATE`` (see
:func:`~fencepost.adapters.sql.make_engine`). PostgreSQL (READ COMMITTED) locks what it reads and
then writes, in one order (session, cursor, task, attempt): ``SELECT ... FOR UPDATE`` on the task
and attempt rows (reads included), the session for extend; acquire and renew read the session ``FOR
SHARE`` (so that concurrent acquisitions do not queue on it). An acquisition locks its consumer's
cursor row by insert-or-lock (``INSERT ... ON CONFLICT DO NOTHING`` of a placeholder, then ``FOR
UPDATE``): two first acquisitions of one consumer serialize, and the second sees the first's
cursor. A dispatch claim takes the same locks in the same order (session ``FOR SHARE``, the cursor
by insert-or-lock, then the task ``FOR UPDATE``) before it reads its receipt, so claims and
acquisitions of one consumer serialize and a claim waiting for an identical one answers that one's
receipt; claims of one task serialize on the task. An acquisition reads the head of the queue,
locks that task by id (``FOR UPDATE``, waiting while another transaction holds it: the head is what
a claim takes, and skipping to the next free row is not linearizable) and reads the head again: the
task is its when it still is the head, else it lets the lock go (a rolled-back savepoint) and
starts over. The busy check reads the consumer's previous task and attempt in one statement without
locks. So a transaction waits for at most one task lock while holding no other, and acquisitions do
not deadlock. The recovery scan shortlists without locks and takes each candidate's task with
``SKIP LOCKED``, passing over held ones. Two submissions of one new key both find no binding, and
the unique constraint makes the second insert wait for the first and fail: the loser then re-reads
the winner in its own transaction and replays or conflicts exactly as the core does for a binding
it found. A database error that is not a lost connection (those answer ``BackendUnavailable``)
answers ``unavailable``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import sqlalchemy as sa
from sqlalchemy import exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from fencepost.adapters.codec import Codec
from fencepost.adapters.sql import (
    TABLES_CACHED,
    SqlStoreFactory,
    lock_row,
    reader,
    table_name,
    unavailable_on_disconnect,
)
from fencepost.env import AdapterEnv
from fencepost.spec import ledgence_delivery, ledgence_discovery, ledgence_submission
from fencepost.spec import ledgence_tasks as spec

from .core import (
    ACTIVE,
    AttemptRecord,
    CandidateQuery,
    ClaimReceipt,
    Cursor,
    LedgenceCore,
    PageQuery,
    TaskRecord,
)

# --- exact JSON ---------------------------------------------------------------------------------

CODEC = Codec([
    *(c for module in (ledgence_submission, ledgence_delivery, ledgence_discovery)
      for c in vars(module).values()
      if isinstance(c, type) and attrs.has(c) and c.__module__ == module.__name__),
    TaskRecord,
    AttemptRecord,
])
"""Stored values may hold the contract's types and the core's records, nothing else."""
dump_value, load_value, dumps, loads = (CODEC.dump_value, CODEC.load_value, CODEC.dumps,
                                        CODEC.loads)


def dump_scope(scope: spec.Scope) -> str:
    """The scope column: one text value per scope, compared exactly by the unique constraint."""
    return json.dumps([scope.tenant_id, scope.namespace], separators=(",", ":"))


# --- schema --------------------------------------------------------------------------------------

BytewiseText = sa.Text().with_variant(sa.Text(collation="C"), "postgresql")
"""Text compared and sorted bytewise: SQLite's default BINARY collation, ``"C"`` on
PostgreSQL (whose default collation follows the locale)."""


@attrs.frozen
class Tables:
    """The run's six tables, on one ``MetaData`` (created and dropped together)."""

    metadata: sa.MetaData
    sessions: sa.Table
    tasks: sa.Table
    history: sa.Table
    attempts: sa.Table
    cursors: sa.Table
    receipts: sa.Table


TABLES = ("sessions", "tasks", "history", "attempts", "cursors", "receipts")
INDEXES = ("tasks_claim", "attempts_expiry", "tasks_list")


@functools.lru_cache(maxsize=TABLES_CACHED)
def ledgence_tables(namespace: str) -> Tables:
    all_names = [table_name(namespace, f"ledgence_{t}") for t in (*TABLES, *INDEXES)]
    if len(set(all_names)) != len(all_names):
        raise ValueError(f"namespace {namespace!r} is too long: its table names collide")
    names = dict(zip((*TABLES, *INDEXES), all_names, strict=True))
    metadata = sa.MetaData()
    sessions = sa.Table(
        names["sessions"], metadata,
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("session", sa.Text, nullable=False),
    )
    tasks = sa.Table(
        names["tasks"], metadata,
        sa.Column("task_id", BytewiseText, primary_key=True),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("idempotency_key", sa.Text, nullable=False),
        sa.Column("queue", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("available_at", sa.BigInteger, nullable=False),
        sa.Column("submitted_at", sa.BigInteger, nullable=False),
        sa.Column("attempt_count", sa.BigInteger, nullable=False),
        sa.Column("max_attempts", sa.BigInteger, nullable=False),
        sa.Column("cancel_requested", sa.Boolean, nullable=False),
        sa.Column("current_attempt_id", sa.Text),
        sa.Column("correlation_key", sa.Text),
        sa.Column("has_correlation_key", sa.Boolean, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        # Unnamed: PostgreSQL picks a name unique in the schema, SQLite needs none.
        sa.UniqueConstraint("scope", "idempotency_key"),
    )
    history = sa.Table(
        names["history"], metadata,
        sa.Column("task_id", sa.Text, primary_key=True),
        sa.Column("sequence", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("event", sa.Text, nullable=False),
    )
    attempts = sa.Table(
        names["attempts"], metadata,
        sa.Column("task_id", BytewiseText, primary_key=True),
        sa.Column("attempt_id", sa.Text, primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("lease_expires_at", sa.BigInteger, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
    )
    cursors = sa.Table(
        names["cursors"], metadata,
        sa.Column("session_id", sa.Text, primary_key=True),
        sa.Column("consumer_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("sequence", sa.BigInteger, nullable=False),
        sa.Column("task_id", sa.Text),
        sa.Column("attempt_id", sa.Text),
    )
    receipts = sa.Table(
        names["receipts"], metadata,
        sa.Column("session_id", sa.Text, primary_key=True),
        sa.Column("consumer_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("sequence", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("command", sa.Text, nullable=False),
        sa.Column("disposition", sa.Text, nullable=False),
    )
    sa.Index(names["tasks_claim"], tasks.c.scope, tasks.c.queue, tasks.c.state,
             tasks.c.available_at, tasks.c.submitted_at, tasks.c.task_id)
    sa.Index(names["attempts_expiry"], attempts.c.lease_expires_at, attempts.c.task_id)
    sa.Index(names["tasks_list"], tasks.c.scope, tasks.c.submitted_at, tasks.c.task_id)
    return Tables(metadata, sessions, tasks, history, attempts, cursors, receipts)


def _task_columns(record: TaskRecord) -> dict[str, Any]:
    """The task row: the record (the truth) and the columns derived from it."""
    snap = record.snapshot
    return {
        "scope": dump_scope(record.scope),
        "idempotency_key": snap.idempotency_key,
        "queue": snap.input.queue,
        "state": snap.state,
        "available_at": snap.available_at,
        "submitted_at": snap.submitted_at,
        "attempt_count": snap.attempt_count,
        "max_attempts": snap.input.retry_policy.max_attempts,
        "cancel_requested": snap.cancel_requested_at is not None,
        "current_attempt_id": snap.current_attempt_id,
        "correlation_key": snap.input.correlation_key,
        "has_correlation_key": snap.input.correlation_key is not None,
        "record": dumps(record),
    }


def _attempt_columns(record: AttemptRecord) -> dict[str, Any]:
    return {
        "state": record.snapshot.state,
        "lease_expires_at": record.snapshot.lease.expires_at,
        "record": dumps(record),
    }


_ORDER_COLUMNS: dict[str, Callable[[sa.Table], sa.ColumnElement[Any]]] = {
    "available_at": lambda t: t.c.available_at,
    "submitted_at": lambda t: t.c.submitted_at,
    "task_id": lambda t: t.c.task_id,  # bytewise: see BytewiseText
}


# --- per-backend statements ----------------------------------------------------------------------

_CREATE_LOCK: dict[str, Callable[[Connection, str], None]] = {}
_SKIP_LOCKED: dict[str, Callable[[sa.Select[Any]], sa.Select[Any]]] = {}
_SHARE_LOCK: dict[str, Callable[[sa.Select[Any]], sa.Select[Any]]] = {}
_INSERT_IGNORE: dict[str, Callable[[sa.Table, dict[str, Any]], sa.Executable]] = {}


def _no_create_lock(conn: Connection, name: str) -> None:
    """SQLite: ``BEGIN IMMEDIATE`` already serializes every writing transaction."""


def _pg_create_lock(conn: Connection, name: str) -> None:
    conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": name})


def _no_row_lock(select: sa.Select[Any]) -> sa.Select[Any]:
    """SQLite: the transaction already holds the database's write lock."""
    return select


def _pg_skip_locked(select: sa.Select[Any]) -> sa.Select[Any]:
    return select.with_for_update(skip_locked=True)


def _pg_share_lock(select: sa.Select[Any]) -> sa.Select[Any]:
    return select.with_for_update(read=True)


def _sqlite_insert_ignore(table: sa.Table, values: dict[str, Any]) -> sa.Executable:
    return sqlite.insert(table).values(**values).on_conflict_do_nothing()


def _pg_insert_ignore(table: sa.Table, values: dict[str, Any]) -> sa.Executable:
    return postgresql.insert(table).values(**values).on_conflict_do_nothing()


_CREATE_LOCK["postgresql"] = _pg_create_lock
_SKIP_LOCKED["postgresql"] = _pg_skip_locked
_SHARE_LOCK["postgresql"] = _pg_share_lock
_INSERT_IGNORE["sqlite"] = _sqlite_insert_ignore
_INSERT_IGNORE["postgresql"] = _pg_insert_ignore

BIGINT = range(-(2**63), 2**63)
"""The integers a ``BIGINT`` column holds (a receipt key outside it cannot be stored)."""


def _keyset_before(columns: list[sa.ColumnElement[Any]],
                   values: tuple[Any, ...]) -> sa.ColumnElement[bool]:
    """``(c1, c2, ...) < (v1, v2, ...)`` spelled out: ``c1 < v1 OR (c1 = v1 AND c2 < v2)
    OR ...`` (each column compared in its own collation: task ids bytewise)."""
    return sa.or_(*(
        sa.and_(*(c == v for c, v in zip(columns[:k], values[:k], strict=True)),
                columns[k] < values[k])
        for k in range(len(values))
    ))


CANDIDATE_ROUNDS = 100
"""How many times ``next_candidate`` looks again after the head it locked stopped being the
head (another transaction took it, or queued one before it), before it answers
``unavailable`` (never Empty)."""


# --- the storage interface -----------------------------------------------------------------------


class LostSubmissionRace(Exception):
    """``insert_task`` found the ``(scope, idempotency_key)`` bound by a transaction that
    committed after this one looked: ``winner`` is that task, read in this transaction."""

    def __init__(self, winner: TaskRecord) -> None:
        super().__init__(winner.task_id)
        self.winner = winner


@attrs.define
class _SqlTxn:
    conn: Connection
    engine: Engine
    tables: Tables
    locking: bool = True  # False: a read-only unit of work (see LedgenceCore._reading)

    def _lock(self, select: sa.Select[Any]) -> sa.Select[Any]:
        return lock_row(self.engine, select) if self.locking else select

    @property
    def _backend(self) -> str:
        return self.engine.dialect.name

    def _skip_locked(self, select: sa.Select[Any]) -> sa.Select[Any]:
        return _SKIP_LOCKED.get(self._backend, _no_row_lock)(select)

    # sessions

    def load_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        t = self.tables.sessions
        query = sa.select(t.c.session).where(t.c.id == worker_session_id)
        text = self.conn.execute(lock_row(self.engine, query)).scalar()
        return loads(text) if text is not None else None

    def read_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        t = self.tables.sessions
        query = sa.select(t.c.session).where(t.c.id == worker_session_id)
        query = _SHARE_LOCK.get(self._backend, _no_row_lock)(query)
        text = self.conn.execute(query).scalar()
        return loads(text) if text is not None else None

    def save_session(self, session: spec.WorkerSession) -> None:
        t = self.tables.sessions
        text = dumps(session)
        # An update of an extended (locked) session, else the insert of a newly minted id.
        updated = self.conn.execute(t.update().where(t.c.id == session.id).values(session=text))
        if updated.rowcount == 0:
            self.conn.execute(t.insert().values(id=session.id, session=text))

    # tasks and their bindings

    def find_submission(self, scope: spec.Scope, idempotency_key: str) -> str | None:
        t = self.tables.tasks
        query = sa.select(t.c.task_id).where(
            t.c.scope == dump_scope(scope), t.c.idempotency_key == idempotency_key
        )
        found: str | None = self.conn.execute(query).scalar()
        return found

    def load_task(self, task_id: str) -> TaskRecord | None:
        t = self.tables.tasks
        query = sa.select(t.c.record).where(t.c.task_id == task_id)
        text = self.conn.execute(self._lock(query)).scalar()
        return loads(text) if text is not None else None

    def lock_task_if_free(self, task_id: str) -> TaskRecord | None:
        t = self.tables.tasks
        query = sa.select(t.c.record).where(t.c.task_id == task_id)
        text = self.conn.execute(self._skip_locked(query)).scalar()
        return loads(text) if text is not None else None

    def insert_task(self, record: TaskRecord) -> None:
        t = self.tables.tasks
        scope, key = record.scope, record.snapshot.idempotency_key
        try:
            with self.conn.begin_nested():
                self.conn.execute(t.insert().values(task_id=record.task_id,
                                                    **_task_columns(record)))
        except exc.IntegrityError:
            # PostgreSQL: another submission of the key committed while this one was deciding
            # (the insert waited for it). Read its task here, as the core reads a binding.
            winner_id = self.find_submission(scope, key)
            winner = self.load_task(winner_id) if winner_id is not None else None
            if winner is None:
                raise  # not the binding (a task id collision): nothing to replay
            raise LostSubmissionRace(winner) from None

    def save_task(self, record: TaskRecord) -> None:
        t = self.tables.tasks
        self.conn.execute(
            t.update().where(t.c.task_id == record.task_id).values(**_task_columns(record))
        )

    def _candidates(self, query: CandidateQuery,
                    passed_over: Collection[str]) -> sa.Select[Any]:
        t = self.tables.tasks
        where = [t.c.scope == dump_scope(query.scope), t.c.queue == query.queue,
                 t.c.state.in_(query.states)]
        if query.available_by is not None:
            where.append(t.c.available_at <= query.available_by)
        if query.attempts_left:
            where.append(t.c.attempt_count < t.c.max_attempts)
        if query.not_cancel_requested:
            where.append(t.c.cancel_requested.is_(False))
        if passed_over:
            where.append(t.c.task_id.not_in(sorted(passed_over)))
        order = [_ORDER_COLUMNS[name](t) for name in query.order]
        return sa.select(t.c.record).where(*where).order_by(*order).limit(1)

    def next_candidate(self, query: CandidateQuery,
                       passed_over: Collection[str]) -> TaskRecord | None:
        select = self._candidates(query, passed_over)
        if self._backend not in _SKIP_LOCKED:
            text = self.conn.execute(select).scalar()  # BEGIN IMMEDIATE: nothing else runs
            found: TaskRecord | None = loads(text) if text is not None else None
            return found
        t = self.tables.tasks
        head_id = self._candidates(query, passed_over).with_only_columns(t.c.task_id)
        for _ in range(CANDIDATE_ROUNDS):
            # The head of the queue is what a claim takes: taking the next free row instead
            # is not linearizable (a reader could then see the head still queued after this
            # claim passed it over; the concurrent run's history check caught exactly that
            # with SKIP LOCKED). So: read the head, lock it by id (waiting for its holder), and
            # look again. It is ours when it is still the head; else the lock is let go
            # (rolled back with its savepoint) before the next round. One waited-for task lock
            # at a time: a locking ORDER BY ... LIMIT 1 keeps the rows it waited for and then
            # skipped, and two acquisitions reading the queue in different snapshots deadlocked
            # on those.
            candidate = self.conn.execute(head_id).scalar()
            if candidate is None:
                return None
            round_ = self.conn.begin_nested()
            text = self.conn.execute(lock_row(self.engine, sa.select(t.c.record).where(
                t.c.task_id == candidate))).scalar()
            if text is not None and self.conn.execute(head_id).scalar() == candidate:
                round_.commit()  # a savepoint's release: the lock stays with the transaction
                claimed: TaskRecord = loads(text)
                return claimed
            round_.rollback()
        raise spec.Unavailable("the queue kept changing under the acquisition; try again")

    def peek_assignment(self, task_id: str,
                        attempt_id: str) -> tuple[TaskRecord, AttemptRecord] | None:
        t, a = self.tables.tasks, self.tables.attempts
        query = (sa.select(t.c.record, a.c.record)
                 .select_from(t.join(a, a.c.task_id == t.c.task_id))
                 .where(t.c.task_id == task_id, a.c.attempt_id == attempt_id))
        row = self.conn.execute(query).first()
        return (loads(row[0]), loads(row[1])) if row is not None else None

    def expired_candidates(self, due_by: int, limit: int) -> list[spec.AttemptRef]:
        t, a = self.tables.tasks, self.tables.attempts
        query = (
            sa.select(a.c.task_id, a.c.attempt_id)
            .select_from(t.join(a, sa.and_(a.c.task_id == t.c.task_id,
                                           a.c.attempt_id == t.c.current_attempt_id)))
            .where(t.c.state == ACTIVE, a.c.lease_expires_at <= due_by)
            .order_by(a.c.lease_expires_at, a.c.task_id)
            .limit(limit)
        )
        return [spec.AttemptRef(task_id, attempt_id)
                for task_id, attempt_id in self.conn.execute(query)]

    def _page(self, query: PageQuery) -> sa.Select[Any]:
        t = self.tables.tasks
        f = query.filters
        where: list[sa.ColumnElement[bool]] = []
        if query.scope is not None:
            where.append(t.c.scope == dump_scope(query.scope))
        if f.state is not None:
            where.append(t.c.state == f.state)
        if f.queue is not None:
            where.append(t.c.queue == f.queue)
        if f.submitted_from is not None:
            where.append(t.c.submitted_at >= f.submitted_from)
        if f.submitted_until is not None:
            where.append(t.c.submitted_at < f.submitted_until)
        if f.correlation_key is not None:
            # "" is a key: only rows that have one, and exactly this one.
            where += [t.c.has_correlation_key.is_(True), t.c.correlation_key == f.correlation_key]
        order = [_ORDER_COLUMNS[name](t) for name in query.order]
        if query.after is not None:
            where.append(_keyset_before(order[:len(query.after)], query.after))
        select = (sa.select(t.c.record).where(*where)
                  .order_by(*(column.desc() for column in order)))
        if query.offset:
            select = select.offset(query.offset)
        return select.limit(query.limit)

    def list_page(self, query: PageQuery) -> list[TaskRecord]:
        return [loads(text) for text in self.conn.execute(self._page(query)).scalars()]

    # attempts

    def load_attempt(self, task_id: str, attempt_id: str) -> AttemptRecord | None:
        a = self.tables.attempts
        query = sa.select(a.c.record).where(a.c.task_id == task_id, a.c.attempt_id == attempt_id)
        text = self.conn.execute(self._lock(query)).scalar()
        return loads(text) if text is not None else None

    def insert_attempt(self, record: AttemptRecord) -> None:
        self.conn.execute(self.tables.attempts.insert().values(
            task_id=record.task_id, attempt_id=record.attempt_id, **_attempt_columns(record)))

    def save_attempt(self, record: AttemptRecord) -> None:
        a = self.tables.attempts
        self.conn.execute(
            a.update()
            .where(a.c.task_id == record.task_id, a.c.attempt_id == record.attempt_id)
            .values(**_attempt_columns(record))
        )

    # acquisition cursors

    def lock_cursor(self, worker_session_id: str, consumer_id: int) -> Cursor | None:
        c = self.tables.cursors
        # Insert-or-lock: a placeholder (sequence 0, "no cursor") makes the row exist, so that
        # FOR UPDATE has a row to lock; a concurrent first acquisition's insert waits for this
        # transaction and then finds the row. A transaction that writes no cursor rolls back
        # or committed a replay (which found the row), so placeholders do not outlive it.
        key = {"session_id": worker_session_id, "consumer_id": consumer_id}
        self.conn.execute(_INSERT_IGNORE[self._backend](c, {**key, "sequence": 0}))
        query = sa.select(c.c.sequence, c.c.task_id, c.c.attempt_id).where(
            c.c.session_id == worker_session_id, c.c.consumer_id == consumer_id)
        sequence, task_id, attempt_id = self.conn.execute(lock_row(self.engine, query)).one()
        if sequence == 0:
            return None
        ref = spec.AttemptRef(task_id, attempt_id) if task_id is not None else None
        return Cursor(int(sequence), ref)

    def save_cursor(self, worker_session_id: str, consumer_id: int, cursor: Cursor) -> None:
        c = self.tables.cursors
        ref = cursor.attempt
        values = {"sequence": cursor.sequence,
                  "task_id": ref.task_id if ref is not None else None,
                  "attempt_id": ref.attempt_id if ref is not None else None}
        updated = self.conn.execute(c.update().where(
            c.c.session_id == worker_session_id, c.c.consumer_id == consumer_id).values(**values))
        if updated.rowcount == 0:
            self.conn.execute(c.insert().values(session_id=worker_session_id,
                                                consumer_id=consumer_id, **values))

    # dispatch claim receipts

    def load_receipt(self, worker_session_id: str, consumer_id: int,
                     sequence: int) -> ClaimReceipt | None:
        if consumer_id not in BIGINT or sequence not in BIGINT:
            return None  # never stored: no cursor reaches such a sequence
        r = self.tables.receipts
        query = sa.select(r.c.command, r.c.disposition).where(
            r.c.session_id == worker_session_id, r.c.consumer_id == consumer_id,
            r.c.sequence == sequence)
        row = self.conn.execute(query).one_or_none()
        return ClaimReceipt(loads(row.command), loads(row.disposition)) if row else None

    def insert_receipt(self, worker_session_id: str, consumer_id: int, sequence: int,
                       receipt: ClaimReceipt) -> None:
        self.conn.execute(self.tables.receipts.insert().values(
            session_id=worker_session_id, consumer_id=consumer_id, sequence=sequence,
            command=dumps(receipt.command), disposition=dumps(receipt.disposition)))

    # history

    def last_sequence(self, task_id: str) -> int:
        t = self.tables.history
        query = sa.select(sa.func.max(t.c.sequence)).where(t.c.task_id == task_id)
        last = self.conn.execute(query).scalar()
        return int(last) if last is not None else 0

    def append_history(self, recorded: spec.RecordedHistoryEvent) -> None:
        self.conn.execute(self.tables.history.insert().values(
            task_id=recorded.event.task_id, sequence=recorded.sequence,
            event=dumps(recorded.event),
        ))

    def history(self, task_id: str, after_sequence: int,
                limit: int) -> list[spec.RecordedHistoryEvent]:
        t = self.tables.history
        query = (
            sa.select(t.c.sequence, t.c.event)
            .where(t.c.task_id == task_id, t.c.sequence > after_sequence)
            .order_by(t.c.sequence)
            .limit(limit)
        )
        return [spec.RecordedHistoryEvent(int(sequence), loads(event))
                for sequence, event in self.conn.execute(query)]


# --- the store -----------------------------------------------------------------------------------


@contextmanager
def _refusal_is_unavailable() -> Iterator[None]:
    """A lost connection answers ``BackendUnavailable``; any other database error means the
    database refused the transaction: ``unavailable``, never an answer the contract gives for
    data (Empty, ownership_lost)."""
    try:
        with unavailable_on_disconnect():
            yield
    except exc.SQLAlchemyError as e:
        reason = getattr(e, "orig", None) or e
        raise spec.Unavailable(f"{type(reason).__name__}: {str(reason).strip()}") from e


class SqlLedgence(LedgenceCore):
    """A ``ledgence-tasks`` store in six SQL tables."""

    def __init__(self, env: AdapterEnv, engine: Engine) -> None:
        super().__init__(env)
        self.engine = engine
        self.tables = ledgence_tables(env.namespace)
        self._reader = reader(engine)
        # Stores of one run may open at once: serialize the check-then-create of the tables
        # (BEGIN IMMEDIATE on SQLite, an advisory lock keyed by the run's tasks table on
        # PostgreSQL; DDL is transactional there, so the second opener sees the tables).
        with unavailable_on_disconnect(), engine.begin() as conn:
            _CREATE_LOCK.get(engine.dialect.name, _no_create_lock)(conn, self.tables.tasks.name)
            self.tables.metadata.create_all(conn, checkfirst=True)

    @contextmanager
    def _transaction(self) -> Iterator[_SqlTxn]:
        with _refusal_is_unavailable(), self.engine.begin() as conn:
            yield _SqlTxn(conn, self.engine, self.tables)

    @contextmanager
    def _reading(self) -> Iterator[_SqlTxn]:
        # The reads: one statement at a time, no locks, no BEGIN IMMEDIATE (see reader).
        with _refusal_is_unavailable(), self._reader.connect() as conn:
            yield _SqlTxn(conn, self.engine, self.tables, locking=False)

    def accept_resolved_submission(self, command: spec.SubmitCommand,
                                   descriptor: spec.ProgramDescriptor) -> spec.TaskSnapshot:
        try:
            return super().accept_resolved_submission(command, descriptor)
        except LostSubmissionRace as lost:
            # The losing transaction wrote nothing (rolled back); it read the winner after the
            # winner committed, so answer as for a binding found: replay or conflict.
            return self._replay(lost.winner, command)

    def close(self) -> None:
        self.engine.dispose()


class SqlLedgenceFactory(SqlStoreFactory):
    """``factory(env)`` for a database URL; ``discard(env)`` drops the run's tables.

    Example::

        factory = SqlLedgenceFactory("sqlite:///ledgence.db")
        store = factory(AdapterEnv(clock=clock.now, namespace="run1"))
        snapshot = store.accept_resolved_submission(command, descriptor)
    """

    store_class = SqlLedgence

    def drop(self, engine: Engine, namespace: str) -> None:
        ledgence_tables(namespace).metadata.drop_all(engine, checkfirst=True)
