"""The SQLAlchemy ledgence-tasks store: one store for SQLite and PostgreSQL.

Three tables per run, named with :func:`~fencepost.adapters.sql.table_name`:

- ``fp_<namespace>_ledgence_sessions``: ``id`` (primary key), the whole session as JSON text;
- ``fp_<namespace>_ledgence_tasks``: ``task_id`` (primary key), ``scope`` (JSON text of
  ``[tenant_id, namespace]``), ``idempotency_key`` and the whole :class:`TaskRecord` as JSON
  text, with ``UNIQUE (scope, idempotency_key)``: the submission binding lives in the database,
  so concurrent submissions of one key bind exactly once whatever the isolation level;
- ``fp_<namespace>_ledgence_history``: ``(task_id, sequence)`` (primary key), the event as JSON.

Values are stored exactly (see :func:`dump_value`): ints stay ints, floats stay floats (``-0.0``
included), tuples stay tuples and mapping keys keep their types, because the contract compares
stored inputs canonically (``1`` is not ``1.0``) and snapshots by equality.

Atomicity: each operation is one transaction. SQLite serializes them with ``BEGIN IMMEDIATE``
(see :func:`~fencepost.adapters.sql.make_engine`). PostgreSQL (READ COMMITTED) locks the rows it
reads with ``SELECT ... FOR UPDATE`` (the task for cancel and the reads, the session for
extend); two submissions of one new key both find no binding, and the unique constraint makes
the second insert wait for the first and fail: the loser then re-reads the winner in its own
transaction and replays or conflicts exactly as the core does for a binding it found.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import attrs
import sqlalchemy as sa
from sqlalchemy import exc
from sqlalchemy.engine import Connection, Engine

from fencepost.adapters.codec import Codec
from fencepost.adapters.sql import lock_row, make_engine, table_name, unavailable_on_disconnect
from fencepost.env import AdapterEnv
from fencepost.spec import ledgence_delivery, ledgence_submission
from fencepost.spec import ledgence_tasks as spec

from .core import LedgenceCore, TaskRecord

# --- exact JSON ---------------------------------------------------------------------------------

CODEC = Codec([
    *(c for module in (ledgence_submission, ledgence_delivery)
      for c in vars(module).values()
      if isinstance(c, type) and attrs.has(c) and c.__module__ == module.__name__),
    TaskRecord,
])
"""Stored values may hold the contract's types and the core's record, nothing else."""
dump_value, load_value, dumps, loads = (CODEC.dump_value, CODEC.load_value, CODEC.dumps,
                                        CODEC.loads)


def dump_scope(scope: spec.Scope) -> str:
    """The scope column: one text value per scope, compared exactly by the unique constraint."""
    return json.dumps([scope.tenant_id, scope.namespace], separators=(",", ":"))


# --- schema --------------------------------------------------------------------------------------


@attrs.frozen
class Tables:
    """The run's three tables, on one ``MetaData`` (created and dropped together)."""

    metadata: sa.MetaData
    sessions: sa.Table
    tasks: sa.Table
    history: sa.Table


def ledgence_tables(namespace: str) -> Tables:
    names = [table_name(namespace, f"ledgence_{t}") for t in ("sessions", "tasks", "history")]
    if len(set(names)) != len(names):
        raise ValueError(f"namespace {namespace!r} is too long: its table names collide")
    metadata = sa.MetaData()
    sessions = sa.Table(
        names[0], metadata,
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("session", sa.Text, nullable=False),
    )
    tasks = sa.Table(
        names[1], metadata,
        sa.Column("task_id", sa.Text, primary_key=True),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("idempotency_key", sa.Text, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        # Unnamed: PostgreSQL picks a name unique in the schema, SQLite needs none.
        sa.UniqueConstraint("scope", "idempotency_key"),
    )
    history = sa.Table(
        names[2], metadata,
        sa.Column("task_id", sa.Text, primary_key=True),
        sa.Column("sequence", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("event", sa.Text, nullable=False),
    )
    return Tables(metadata, sessions, tasks, history)


_CREATE_LOCK: dict[str, Callable[[Connection, str], None]] = {}


def _no_create_lock(conn: Connection, name: str) -> None:
    """SQLite: ``BEGIN IMMEDIATE`` already serializes every writing transaction."""


def _pg_create_lock(conn: Connection, name: str) -> None:
    conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": name})


_CREATE_LOCK["postgresql"] = _pg_create_lock


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

    # sessions

    def load_session(self, worker_session_id: str) -> spec.WorkerSession | None:
        t = self.tables.sessions
        query = sa.select(t.c.session).where(t.c.id == worker_session_id)
        text = self.conn.execute(lock_row(self.engine, query)).scalar()
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
        text = self.conn.execute(lock_row(self.engine, query)).scalar()
        return loads(text) if text is not None else None

    def insert_task(self, record: TaskRecord) -> None:
        t = self.tables.tasks
        scope, key = record.scope, record.snapshot.idempotency_key
        row = {"task_id": record.task_id, "scope": dump_scope(scope), "idempotency_key": key,
               "record": dumps(record)}
        try:
            with self.conn.begin_nested():
                self.conn.execute(t.insert().values(**row))
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
            t.update().where(t.c.task_id == record.task_id).values(record=dumps(record))
        )

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


class SqlLedgence(LedgenceCore):
    """A ``ledgence-tasks`` store in three SQL tables."""

    def __init__(self, env: AdapterEnv, engine: Engine) -> None:
        super().__init__(env)
        self.engine = engine
        self.tables = ledgence_tables(env.namespace)
        # Stores of one run may open at once: serialize the check-then-create of the tables
        # (BEGIN IMMEDIATE on SQLite, an advisory lock keyed by the run's tasks table on
        # PostgreSQL; DDL is transactional there, so the second opener sees the tables).
        with unavailable_on_disconnect(), engine.begin() as conn:
            _CREATE_LOCK.get(engine.dialect.name, _no_create_lock)(conn, self.tables.tasks.name)
            self.tables.metadata.create_all(conn, checkfirst=True)

    @contextmanager
    def _transaction(self) -> Iterator[_SqlTxn]:
        with unavailable_on_disconnect(), self.engine.begin() as conn:
            yield _SqlTxn(conn, self.engine, self.tables)

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


class SqlLedgenceFactory:
    """``factory(env)`` for a database URL; ``discard(env)`` drops the run's tables.

    Example::

        factory = SqlLedgenceFactory("sqlite:///ledgence.db")
        store = factory(AdapterEnv(clock=clock.now, namespace="run1"))
        snapshot = store.accept_resolved_submission(command, descriptor)
    """

    def __init__(self, url: str, store_class: type[SqlLedgence] = SqlLedgence) -> None:
        self.url = url
        self.store_class = store_class

    def __call__(self, env: AdapterEnv) -> SqlLedgence:
        return self.store_class(env, make_engine(self.url))

    def discard(self, env: AdapterEnv) -> None:
        engine = make_engine(self.url)
        try:
            with unavailable_on_disconnect():
                ledgence_tables(env.namespace).metadata.drop_all(engine, checkfirst=True)
        finally:
            engine.dispose()

    def __repr__(self) -> str:
        return f"SqlLedgenceFactory({self.url!r})"
