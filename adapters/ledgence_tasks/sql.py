"""The SQLAlchemy ledgence-tasks store: one store for SQLite and PostgreSQL.
Over 500 lines: one transaction class over six tables and the store built on it, with the
locking and atomicity argument (this docstring) beside the code it is about; the schema, the
JSON of the records and the per-backend statements are already in :mod:`.sql_schema`.

Six tables per run; their columns and indexes, the exact JSON of the stored records and the
statements that differ by backend are in :mod:`.sql_schema`.

A ``list_tasks`` page is one keyset query: the filters as WHERE clauses on the columns,
``(submitted_at < ? OR (submitted_at = ? AND task_id < ?))`` after a cursor's position,
``ORDER BY submitted_at DESC, task_id DESC`` and ``LIMIT limit + 1``; one statement, so one
snapshot on PostgreSQL (READ COMMITTED), and it takes no row locks.

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
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import sqlalchemy as sa
from sqlalchemy import exc
from sqlalchemy.engine import Connection, Engine

from fencepost.adapters.sql import (
    TABLES_CACHED,
    ReadConnections,
    SqlStoreFactory,
    backend_lock_row,
    ensure_tables,
    lock_row,
    raise_if_lost,
    unavailable_on_disconnect,
    writing,
)
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.env import AdapterEnv

from .core import (
    ACTIVE,
    CandidateQuery,
    ClaimReceipt,
    Cursor,
    LedgenceCore,
    PageQuery,
    StoredAttempt,
    TaskRecord,
)
from .sql_schema import (
    BIGINT,
    INSERT_IGNORE,
    NAME_LOCK,
    ORDER_COLUMNS,
    READ_AHEAD,
    SHARE_LOCK,
    SKIP_LOCKED,
    Tables,
    attempt_columns,
    dump_scope,
    dumps,
    keyset_before,
    ledgence_tables,
    loads,
    no_name_lock,
    no_row_lock,
    task_columns,
)

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


@attrs.frozen
class Statements:
    """The statements the store runs most, built once per namespace and backend with their
    values as parameters: a statement built per call is built and keyed for SQLAlchemy's
    compiled cache on every call, which cost more than running it. ``*_locked``: the same
    read locking its row for the transaction (see :func:`~fencepost.adapters.sql.lock_row`)."""

    task: sa.Select[Any]
    task_locked: sa.Select[Any]
    attempt: sa.Select[Any]
    attempt_locked: sa.Select[Any]
    session_shared: sa.Select[Any]
    submission: sa.Select[Any]
    last_sequence: sa.Select[Any]
    history: sa.Select[Any]
    save_task: sa.Update
    save_attempt: sa.Update
    session_locked: sa.Select[Any]
    save_session: sa.Update
    insert_session: sa.Insert
    insert_task: sa.Insert
    insert_attempt: sa.Insert
    append_history: sa.Insert
    cursor_placeholder: sa.Executable
    cursor_locked: sa.Select[Any]
    save_cursor: sa.Update
    insert_cursor: sa.Insert
    receipt: sa.Select[Any]
    insert_receipt: sa.Insert
    task_and_attempt: sa.Select[Any]
    task_and_history: sa.Select[Any]


@functools.lru_cache(maxsize=TABLES_CACHED)
def statements(namespace: str, backend: str) -> Statements:
    """The namespace's :class:`Statements` for ``backend`` (a dialect name)."""
    tables = ledgence_tables(namespace)
    t, a, h, s = tables.tasks, tables.attempts, tables.history, tables.sessions
    c, r = tables.cursors, tables.receipts
    cursor_key = (c.c.session_id == sa.bindparam("b_session_id"),
                  c.c.consumer_id == sa.bindparam("b_consumer_id"))
    task = sa.select(t.c.record).where(t.c.task_id == sa.bindparam("task_id"))
    attempt = sa.select(a.c.record).where(a.c.task_id == sa.bindparam("task_id"),
                                          a.c.attempt_id == sa.bindparam("attempt_id"))
    session = sa.select(s.c.session).where(s.c.id == sa.bindparam("id"))
    return Statements(
        task=task,
        task_locked=backend_lock_row(backend, task),
        attempt=attempt,
        attempt_locked=backend_lock_row(backend, attempt),
        session_shared=SHARE_LOCK.get(backend, no_row_lock)(session),
        submission=sa.select(t.c.task_id).where(t.c.scope == sa.bindparam("scope"),
                                                t.c.idempotency_key == sa.bindparam("key")),
        last_sequence=(sa.select(sa.func.max(h.c.sequence))
                       .where(h.c.task_id == sa.bindparam("task_id"))),
        history=(sa.select(h.c.sequence, h.c.event)
                 .where(h.c.task_id == sa.bindparam("task_id"),
                        h.c.sequence > sa.bindparam("after"))
                 .order_by(h.c.sequence).limit(sa.bindparam("limit"))),
        # The key as b_*: a column's own name is reserved for its SET value.
        save_task=t.update().where(t.c.task_id == sa.bindparam("b_task_id")),
        save_attempt=a.update().where(a.c.task_id == sa.bindparam("b_task_id"),
                                      a.c.attempt_id == sa.bindparam("b_attempt_id")),
        session_locked=backend_lock_row(backend, session),
        save_session=s.update().where(s.c.id == sa.bindparam("b_id")),
        insert_session=s.insert(),
        insert_task=t.insert(),
        insert_attempt=a.insert(),
        append_history=h.insert(),
        cursor_placeholder=INSERT_IGNORE[backend](c, {
            "session_id": sa.bindparam("b_session_id"),
            "consumer_id": sa.bindparam("b_consumer_id"), "sequence": 0}),
        cursor_locked=backend_lock_row(backend, sa.select(
            c.c.sequence, c.c.task_id, c.c.attempt_id).where(*cursor_key)),
        save_cursor=c.update().where(*cursor_key),
        insert_cursor=c.insert(),
        receipt=sa.select(r.c.command, r.c.disposition).where(
            r.c.session_id == sa.bindparam("session_id"),
            r.c.consumer_id == sa.bindparam("consumer_id"),
            r.c.sequence == sa.bindparam("sequence")),
        insert_receipt=r.insert(),
        # A read's task row with what it reads next, in one statement (see read_ahead): its
        # attempt (none when the task has no such attempt), or its history page (one row
        # with no event when the page is empty).
        task_and_attempt=sa.select(t.c.record, a.c.record).select_from(t.outerjoin(
            a, sa.and_(a.c.task_id == t.c.task_id,
                       a.c.attempt_id == sa.bindparam("attempt_id")))).where(
            t.c.task_id == sa.bindparam("task_id")),
        task_and_history=sa.select(t.c.record, h.c.sequence, h.c.event).select_from(t.outerjoin(
            h, sa.and_(h.c.task_id == t.c.task_id, h.c.sequence > sa.bindparam("after")))).where(
            t.c.task_id == sa.bindparam("task_id")).order_by(h.c.sequence).limit(
            sa.bindparam("limit")),
    )


@attrs.define
class _SqlTxn:
    conn: Connection
    engine: Engine
    tables: Tables
    sql: Statements
    locking: bool = True  # False: a read-only unit of work (see LedgenceCore._reading)
    ahead: dict[tuple[Any, ...], Any] = attrs.field(factory=dict)
    """What :meth:`read_ahead` fetched and no read has taken yet, by the read that takes it."""

    @property
    def _backend(self) -> str:
        return self.engine.dialect.name

    def _skip_locked(self, select: sa.Select[Any]) -> sa.Select[Any]:
        return SKIP_LOCKED.get(self._backend, no_row_lock)(select)

    # sessions

    def load_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        text = self.conn.execute(self.sql.session_locked, {"id": worker_session_id}).scalar()
        return loads(text) if text is not None else None

    def read_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        text = self.conn.execute(self.sql.session_shared, {"id": worker_session_id}).scalar()
        return loads(text) if text is not None else None

    def save_session(self, session: spec.WorkerSession) -> None:
        text = dumps(session)
        # An update of an extended (locked) session, else the insert of a newly minted id.
        updated = self.conn.execute(self.sql.save_session, {"session": text, "b_id": session.id})
        if updated.rowcount == 0:
            self.conn.execute(self.sql.insert_session, {"id": session.id, "session": text})

    # tasks and their bindings

    def find_submission(self, scope: spec.Scope, idempotency_key: str) -> str | None:
        found: str | None = self.conn.execute(
            self.sql.submission, {"scope": dump_scope(scope), "key": idempotency_key}).scalar()
        return found

    def read_ahead(self, task_id: str, attempt_id: str | None = None,
                   history: tuple[int, int] | None = None) -> None:
        # A writing unit of work locks its rows one by one, in lock order.
        if self.locking or self._backend not in READ_AHEAD:
            return
        if attempt_id is not None:
            row = self.conn.execute(self.sql.task_and_attempt,
                                    {"task_id": task_id, "attempt_id": attempt_id}).first()
            self.ahead[("task", task_id)] = row[0] if row is not None else None
            if row is not None:
                self.ahead[("attempt", task_id, attempt_id)] = row[1]
        elif history is not None and history[0] in BIGINT:
            after, limit = history
            rows = self.conn.execute(self.sql.task_and_history,
                                     {"task_id": task_id, "after": after, "limit": limit}).all()
            self.ahead[("task", task_id)] = rows[0][0] if rows else None
            if rows:
                self.ahead[("history", task_id, after, limit)] = [
                    (sequence, event) for _, sequence, event in rows if sequence is not None]

    def load_task(self, task_id: str) -> TaskRecord | None:
        if self.ahead and ("task", task_id) in self.ahead:
            text = self.ahead.pop(("task", task_id))
        else:
            query = self.sql.task_locked if self.locking else self.sql.task
            text = self.conn.execute(query, {"task_id": task_id}).scalar()
        return loads(text) if text is not None else None

    def lock_task_if_free(self, task_id: str) -> TaskRecord | None:
        t = self.tables.tasks
        query = sa.select(t.c.record).where(t.c.task_id == task_id)
        text = self.conn.execute(self._skip_locked(query)).scalar()
        return loads(text) if text is not None else None

    def insert_task(self, record: TaskRecord) -> None:
        scope, key = record.scope, record.snapshot.idempotency_key
        try:
            with self.conn.begin_nested():
                self.conn.execute(self.sql.insert_task,
                                  {"task_id": record.task_id, **task_columns(record)})
        except exc.IntegrityError:
            # PostgreSQL: another submission of the key committed while this one was deciding
            # (the insert waited for it). Read its task here, as the core reads a binding.
            winner_id = self.find_submission(scope, key)
            winner = self.load_task(winner_id) if winner_id is not None else None
            if winner is None:
                raise  # not the binding (a task id collision): nothing to replay
            raise LostSubmissionRace(winner) from None

    def save_task(self, record: TaskRecord) -> None:
        self.conn.execute(self.sql.save_task,
                          {**task_columns(record), "b_task_id": record.task_id})

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
        order = [ORDER_COLUMNS[name](t) for name in query.order]
        return sa.select(t.c.record).where(*where).order_by(*order).limit(1)

    def next_candidate(self, query: CandidateQuery,
                       passed_over: Collection[str]) -> TaskRecord | None:
        select = self._candidates(query, passed_over)
        if self._backend not in SKIP_LOCKED:
            text = self.conn.execute(select).scalar()  # BEGIN IMMEDIATE: nothing else runs
            found: TaskRecord | None = loads(text) if text is not None else None
            return found
        t = self.tables.tasks
        head_id = self._candidates(query, passed_over).with_only_columns(t.c.task_id)
        # Acquisitions from one queue take their turn (a lock on the queue's name until the
        # transaction ends): all of them racing for the head's row lock made each waiter find
        # the head taken and go round again, n^2 rounds for n at once. Other writers of a task
        # (settle, cancel, expire) do not take it; the rounds below still answer for them.
        NAME_LOCK.get(self._backend, no_name_lock)(
            self.conn, f"{t.name}:{dump_scope(query.scope)}:{query.queue}")
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
                        attempt_id: str) -> tuple[TaskRecord, StoredAttempt] | None:
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
        order = [ORDER_COLUMNS[name](t) for name in query.order]
        if query.after is not None:
            where.append(keyset_before(order[:len(query.after)], query.after))
        select = (sa.select(t.c.record).where(*where)
                  .order_by(*(column.desc() for column in order)))
        if query.offset:
            select = select.offset(query.offset)
        return select.limit(query.limit)

    def list_page(self, query: PageQuery) -> list[TaskRecord]:
        return [loads(text) for text in self.conn.execute(self._page(query)).scalars()]

    # attempts

    def load_attempt(self, task_id: str, attempt_id: str) -> StoredAttempt | None:
        if self.ahead and ("attempt", task_id, attempt_id) in self.ahead:
            text = self.ahead.pop(("attempt", task_id, attempt_id))
        else:
            query = self.sql.attempt_locked if self.locking else self.sql.attempt
            text = self.conn.execute(
                query, {"task_id": task_id, "attempt_id": attempt_id}).scalar()
        return loads(text) if text is not None else None

    def insert_attempt(self, record: StoredAttempt) -> None:
        self.conn.execute(self.sql.insert_attempt, {
            "task_id": record.task_id, "attempt_id": record.attempt_id,
            **attempt_columns(record)})

    def save_attempt(self, record: StoredAttempt) -> None:
        self.conn.execute(self.sql.save_attempt, {
            **attempt_columns(record),
            "b_task_id": record.task_id, "b_attempt_id": record.attempt_id})

    # acquisition cursors

    def lock_cursor(self, worker_session_id: str, consumer_id: int) -> Cursor | None:
        # Insert-or-lock: a placeholder (sequence 0, "no cursor") makes the row exist, so that
        # FOR UPDATE has a row to lock; a concurrent first acquisition's insert waits for this
        # transaction and then finds the row. A transaction that writes no cursor rolls back
        # or committed a replay (which found the row), so placeholders do not outlive it.
        key = {"b_session_id": worker_session_id, "b_consumer_id": consumer_id}
        self.conn.execute(self.sql.cursor_placeholder, key)
        sequence, task_id, attempt_id = self.conn.execute(self.sql.cursor_locked, key).one()
        if sequence == 0:
            return None
        ref = spec.AttemptRef(task_id, attempt_id) if task_id is not None else None
        return Cursor(int(sequence), ref)

    def save_cursor(self, worker_session_id: str, consumer_id: int, cursor: Cursor) -> None:
        ref = cursor.attempt
        values = {"sequence": cursor.sequence,
                  "task_id": ref.task_id if ref is not None else None,
                  "attempt_id": ref.attempt_id if ref is not None else None}
        updated = self.conn.execute(self.sql.save_cursor, {
            **values, "b_session_id": worker_session_id, "b_consumer_id": consumer_id})
        if updated.rowcount == 0:
            self.conn.execute(self.sql.insert_cursor, {
                **values, "session_id": worker_session_id, "consumer_id": consumer_id})

    # dispatch claim receipts

    def load_receipt(self, worker_session_id: str, consumer_id: int,
                     sequence: int) -> ClaimReceipt | None:
        if consumer_id not in BIGINT or sequence not in BIGINT:
            return None  # never stored: no cursor reaches such a sequence
        row = self.conn.execute(self.sql.receipt, {
            "session_id": worker_session_id, "consumer_id": consumer_id,
            "sequence": sequence}).one_or_none()
        return ClaimReceipt(loads(row.command), loads(row.disposition)) if row else None

    def insert_receipt(self, worker_session_id: str, consumer_id: int, sequence: int,
                       receipt: ClaimReceipt) -> None:
        self.conn.execute(self.sql.insert_receipt, {
            "session_id": worker_session_id, "consumer_id": consumer_id, "sequence": sequence,
            "command": dumps(receipt.command), "disposition": dumps(receipt.disposition)})

    # history

    def last_sequence(self, task_id: str) -> int:
        last = self.conn.execute(self.sql.last_sequence, {"task_id": task_id}).scalar()
        return int(last) if last is not None else 0

    def append_history(self, recorded: spec.RecordedHistoryEvent) -> None:
        self.conn.execute(self.sql.append_history, {
            "task_id": recorded.event.task_id, "sequence": recorded.sequence,
            "event": dumps(recorded.event),
        })

    def history(self, task_id: str, after_sequence: int,
                limit: int) -> list[spec.RecordedHistoryEvent]:
        if after_sequence not in BIGINT:  # past every sequence a BIGINT column holds
            return []
        key = ("history", task_id, after_sequence, limit)
        if self.ahead and key in self.ahead:
            rows = self.ahead.pop(key)
        else:
            rows = self.conn.execute(self.sql.history, {
                "task_id": task_id, "after": after_sequence, "limit": limit})
        return [spec.RecordedHistoryEvent(int(sequence), loads(event))
                for sequence, event in rows]


# --- the store -----------------------------------------------------------------------------------


class _RefusalIsUnavailable:
    """A lost connection answers ``BackendUnavailable``; any other database error means the
    database refused the transaction: ``unavailable``, never an answer the contract gives for
    data (Empty, ownership_lost). No state: one serves every call (a class, not a generator,
    because every call enters one)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, _kind: Any, error: BaseException | None, _tb: Any) -> None:
        if isinstance(error, exc.SQLAlchemyError):
            raise_if_lost(error)
            reason = getattr(error, "orig", None) or error
            raise spec.Unavailable(f"{type(reason).__name__}: {str(reason).strip()}") from error


_refusal_is_unavailable = _RefusalIsUnavailable()


class SqlLedgence(LedgenceCore):
    """A ``ledgence-tasks`` store in six SQL tables."""

    def __init__(self, env: AdapterEnv, engine: Engine, tables: str | None = None) -> None:
        super().__init__(env)
        self.engine = engine
        slot = env.namespace if tables is None else tables  # see SqlStoreFactory
        self.tables = ledgence_tables(slot)
        self.sql = statements(slot, engine.dialect.name)
        self._reads = ReadConnections.of(engine)
        ensure_tables(engine, slot, self._create_tables)

    def _create_tables(self) -> None:
        # Stores of one run may open at once: serialize the check-then-create of the tables
        # (BEGIN IMMEDIATE on SQLite, an advisory lock keyed by the run's tasks table on
        # PostgreSQL; DDL is transactional there, so the second opener sees the tables).
        with unavailable_on_disconnect(), self.engine.begin() as conn:
            NAME_LOCK.get(self.engine.dialect.name, no_name_lock)(conn, self.tables.tasks.name)
            self.tables.metadata.create_all(conn, checkfirst=True)

    @contextmanager
    def _transaction(self) -> Iterator[_SqlTxn]:
        with _refusal_is_unavailable, writing(self.engine) as conn:
            yield _SqlTxn(conn, self.engine, self.tables, self.sql)

    @contextmanager
    def _reading(self) -> Iterator[_SqlTxn]:
        # The reads: one statement at a time, no locks, no BEGIN IMMEDIATE (see reader).
        with _refusal_is_unavailable, self._reads.connection() as conn:
            yield _SqlTxn(conn, self.engine, self.tables, self.sql, locking=False)

    def accept_resolved_submission(self, command: spec.SubmitCommand,
                                   descriptor: spec.ProgramDescriptor) -> spec.TaskSnapshot:
        try:
            return super().accept_resolved_submission(command, descriptor)
        except LostSubmissionRace as lost:
            # The losing transaction wrote nothing (rolled back); it read the winner after the
            # winner committed, so answer as for a binding found: replay or conflict.
            return self._replay(lost.winner, command)

    def close(self) -> None:
        """Nothing to let go: the read connections stay with the engine for the next store
        (see ``ReadConnections.of``); the factory's ``close`` closes them."""


class SqlLedgenceFactory(SqlStoreFactory):
    """``factory(env)`` for a database URL; ``discard(env)`` empties the namespace's tables
    (kept for the next namespace: see ``SqlStoreFactory``).

    Example::

        factory = SqlLedgenceFactory("sqlite:///ledgence.db")
        store = factory(AdapterEnv(clock=clock.now, namespace="run1"))
        snapshot = store.accept_resolved_submission(command, descriptor)
    """

    store_class = SqlLedgence

    def metadata(self, namespace: str) -> sa.MetaData:
        return ledgence_tables(namespace).metadata
