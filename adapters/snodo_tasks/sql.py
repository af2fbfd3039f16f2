"""The SQLAlchemy snodo-tasks store: one store for SQLite and PostgreSQL.

One table per run (``fp_<namespace>_snodo_tasks``): a row per task holding the whole aggregate
as exact JSON text (see :mod:`.codec`) plus the columns the set-wise queries need (scope,
status, work present, retry and claim times, TTL).

Atomicity: each operation is one transaction. SQLite serializes them with ``BEGIN IMMEDIATE``.
PostgreSQL (READ COMMITTED) locks the task's row with ``SELECT ... FOR UPDATE``; create first
takes a transaction-scoped advisory lock keyed by the table, so capacity is counted with no
concurrent create in flight; claim_next takes a recoverable row with ``FOR UPDATE SKIP LOCKED``
so that concurrent claimers never wait on, or double-claim, one task; it answers None only when
a plain SELECT finds nothing recoverable, and otherwise waits for the row it found. ``get`` and
``worker_snapshot`` write nothing and read the row in one SELECT without a lock (see
:func:`~fencepost.adapters.sql.reader`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
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
    table_name,
    unavailable_on_disconnect,
    writing,
)
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.env import AdapterEnv
from fencepost.spec.errors import BackendUnavailable

from .codec import dump_aggregate, dump_scope, load_aggregate
from .core import TasksCore
from .records import ACTIVE, Aggregate, Predicate

_CREATE_LOCK: dict[str, Callable[[Connection, sa.Table], None]] = {}
_SKIP_LOCKED: dict[str, Callable[[sa.Select[Any]], sa.Select[Any]]] = {}
CLAIM_ROUNDS = 20
"""How often claim_next goes again when the row it waited for stopped being recoverable."""


def _no_create_lock(conn: Connection, table: sa.Table) -> None:
    """SQLite: ``BEGIN IMMEDIATE`` already serializes every writing transaction."""


def _pg_create_lock(conn: Connection, table: sa.Table) -> None:
    conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": table.name})


def _pg_skip_locked(select: sa.Select[Any]) -> sa.Select[Any]:
    return select.with_for_update(skip_locked=True)


_CREATE_LOCK["postgresql"] = _pg_create_lock
_SKIP_LOCKED["postgresql"] = _pg_skip_locked


@functools.lru_cache(maxsize=TABLES_CACHED)
def tasks_table(namespace: str) -> sa.Table:
    return sa.Table(
        table_name(namespace, "snodo_tasks"),
        sa.MetaData(),
        sa.Column("task_id", sa.Text, primary_key=True),
        sa.Column("scope", sa.Text, nullable=False),  # JSON text: null is a scope of its own
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("has_work", sa.Boolean, nullable=False),
        sa.Column("retry_at", sa.BigInteger),
        sa.Column("claim_expires_at", sa.BigInteger),
        sa.Column("claim_store", sa.Text),  # the boot that granted the claim (see core)
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("ttl_ms", sa.BigInteger),
        sa.Column("aggregate", sa.Text, nullable=False),
    )


def _whole_ms(at: float | None) -> int | None:
    """A time as the whole ms it is due at: a time with a us part (``committed_at_step``,
    ``same_expiry_renewal``) rounds up, so ``column <= now`` still says ``now >= at`` for the
    integer clock."""
    return None if at is None else math.ceil(at)


def _columns(aggregate: Aggregate) -> dict[str, Any]:
    snap = aggregate.snapshot
    claim = aggregate.claim
    return {
        "scope": dump_scope(aggregate.scope),
        "status": snap.task.status,
        "has_work": snap.work is not None,
        "retry_at": _whole_ms(snap.retry_at),
        "claim_expires_at": _whole_ms(claim.expires_at) if claim is not None else None,
        "claim_store": claim.store_id if claim is not None else None,
        "created_at": snap.task.created_at,
        "ttl_ms": snap.task.ttl_ms,
        "aggregate": dump_aggregate(aggregate),
    }


@attrs.frozen
class Statements:
    """The statements every call runs, built once per namespace and backend with their values
    as parameters (built per call, each was built and keyed for SQLAlchemy's compiled cache
    every time): load a task, the same locking its row (see
    :func:`~fencepost.adapters.sql.lock_row`), save it."""

    load: sa.Select[Any]
    load_locked: sa.Select[Any]
    save: sa.Update


@functools.lru_cache(maxsize=TABLES_CACHED)
def statements(namespace: str, backend: str) -> Statements:
    """The namespace's :class:`Statements` for ``backend`` (a dialect name)."""
    t = tasks_table(namespace)
    load = sa.select(t.c.aggregate).where(t.c.task_id == sa.bindparam("task_id"))
    # The key as b_task_id: a column's own name is reserved for its SET value.
    return Statements(load, backend_lock_row(backend, load),
                      t.update().where(t.c.task_id == sa.bindparam("b_task_id")))


@attrs.define
class _SqlTxn:
    conn: Connection
    engine: Engine
    table: sa.Table
    sql: Statements
    locking: bool = True  # False: a read-only unit of work (load only, no lock)
    released_before: str | None = None
    """With ``reopen_claims=released``, the store's boot: a claim another granted is not live."""

    @property
    def _backend(self) -> str:
        return self.engine.dialect.name

    def load(self, task_id: str) -> Aggregate | None:
        query = self.sql.load_locked if self.locking else self.sql.load
        text = self.conn.execute(query, {"task_id": task_id}).scalar()
        return load_aggregate(text) if text is not None else None

    def insert(self, aggregate: Aggregate) -> None:
        try:
            with self.conn.begin_nested():
                self.conn.execute(
                    self.table.insert().values(task_id=aggregate.task_id, **_columns(aggregate))
                )
        except exc.IntegrityError as e:
            raise spec.AlreadyExists(aggregate.task_id) from e

    def save(self, aggregate: Aggregate) -> None:
        self.conn.execute(self.sql.save, {**_columns(aggregate), "b_task_id": aggregate.task_id})

    def delete(self, task_id: str) -> None:
        self.conn.execute(self.table.delete().where(self.table.c.task_id == task_id))

    def lock_for_create(self) -> None:
        _CREATE_LOCK.get(self._backend, _no_create_lock)(self.conn, self.table)

    def count_tasks(self) -> int:
        query = sa.select(sa.func.count()).select_from(self.table)
        return int(self.conn.execute(query).scalar_one())

    def count_active(self, scope: str | None) -> int:
        t = self.table
        query = sa.select(sa.func.count()).select_from(t).where(
            t.c.scope == dump_scope(scope), t.c.status.in_(ACTIVE)
        )
        return int(self.conn.execute(query).scalar_one())

    def count_active_everywhere(self) -> int:
        t = self.table
        query = sa.select(sa.func.count()).select_from(t).where(t.c.status.in_(ACTIVE))
        return int(self.conn.execute(query).scalar_one())

    def find_recoverable(self, now: int, recoverable: Predicate) -> str | None:
        t = self.table
        free = [t.c.claim_expires_at.is_(None), t.c.claim_expires_at <= now]
        if self.released_before is not None:
            free.append(t.c.claim_store != self.released_before)
        query = (
            sa.select(t.c.task_id)
            .where(
                t.c.status.not_in(spec.TERMINAL),
                t.c.has_work.is_(True),
                sa.or_(t.c.retry_at.is_(None), t.c.retry_at <= now),
                sa.or_(*free),
            )
            .order_by(t.c.created_at, t.c.task_id)
            .limit(1)
        )
        skip_locked = _SKIP_LOCKED.get(self._backend)
        if skip_locked is None:  # SQLite: BEGIN IMMEDIATE already excludes everyone else
            found: str | None = self.conn.execute(query).scalar()
            return found
        for _ in range(CLAIM_ROUNDS):
            found = self.conn.execute(skip_locked(query)).scalar()
            if found is not None:
                return str(found)
            # Every recoverable row is held, or there is none. Held rows may be merely read by
            # others (every call locks what it loads): answering None then would not be
            # linearizable (the concurrent run's history check caught it). A plain SELECT's
            # snapshot decides: nothing recoverable there is a true None; else wait for that
            # row and take it if it is still recoverable (the caller re-checks).
            waiting_for = self.conn.execute(query).scalar()
            if waiting_for is None:
                return None
            row = sa.select(t.c.task_id).where(t.c.task_id == waiting_for)
            self.conn.execute(lock_row(self.engine, row))
            # Locked now: a new statement reads its newest committed version.
            if self.conn.execute(query.where(t.c.task_id == waiting_for)).scalar() is not None:
                return str(waiting_for)
        raise BackendUnavailable("claim_next: the tasks kept changing under it; try again")

    def expired_ids(self, now: int, expired: Predicate) -> list[str]:
        t = self.table
        # Expiry order (what reap_order=expiry answers); one lock order either way, so that
        # concurrent reaps cannot deadlock.
        query = sa.select(t.c.task_id).where(
            t.c.ttl_ms.is_not(None), t.c.created_at + t.c.ttl_ms <= now
        ).order_by(t.c.created_at + t.c.ttl_ms, t.c.task_id)
        return list(self.conn.execute(lock_row(self.engine, query)).scalars())


class SqlTasks(TasksCore):
    """A ``snodo-tasks`` store in one SQL table."""

    def __init__(self, env: AdapterEnv, engine: Engine, tables: str | None = None) -> None:
        self.engine = engine
        super().__init__(env)
        try:
            slot = env.namespace if tables is None else tables  # see SqlStoreFactory
            self.table = tasks_table(slot)
            self.sql = statements(slot, engine.dialect.name)
            self._reads = ReadConnections.of(engine)
            ensure_tables(engine, slot, self._create_table)
        except BaseException:
            super().close()  # not opened: the next instance may begin a boot of its own
            raise

    def _create_table(self) -> None:
        # Stores of one run may open at once: serialize the check-then-create of the table
        # (BEGIN IMMEDIATE on SQLite, the table's advisory lock on PostgreSQL; DDL is
        # transactional there, so the second opener sees the table).
        with unavailable_on_disconnect(), self.engine.begin() as conn:
            _CREATE_LOCK.get(self.engine.dialect.name, _no_create_lock)(conn, self.table)
            self.table.create(conn, checkfirst=True)

    @property
    def _released_before(self) -> str | None:
        return self.store_id if self._reopen_releases else None

    def _identity(self) -> str:
        url = self.engine.url.render_as_string(hide_password=True)
        return f"sql:{url}:{self.env.namespace}"

    @contextmanager
    def _transaction(self) -> Iterator[_SqlTxn]:
        with unavailable_on_disconnect(), writing(self.engine) as conn:
            yield _SqlTxn(conn, self.engine, self.table, self.sql,
                          released_before=self._released_before)

    @contextmanager
    def _reading(self) -> Iterator[_SqlTxn]:
        # get and worker_snapshot load one row: one SELECT, no lock and (SQLite) no write
        # lock, so reads neither wait for nor hold up claims.
        with unavailable_on_disconnect(), self._reads.connection() as conn:
            yield _SqlTxn(conn, self.engine, self.table, self.sql, locking=False,
                          released_before=self._released_before)

    def close(self) -> None:
        """Nothing more to let go: the read connections stay with the engine for the next
        store (see ``ReadConnections.of``); the factory's ``close`` closes them."""
        super().close()


class SqlTasksFactory(SqlStoreFactory):
    """``factory(env)`` for a database URL; ``discard(env)`` empties the namespace's table
    (kept for the next namespace: see ``SqlStoreFactory``).

    Example::

        factory = SqlTasksFactory("sqlite:///tasks.db")
        store = factory(AdapterEnv(clock=clock.now, namespace="run1"))
    """

    store_class = SqlTasks

    def metadata(self, namespace: str) -> sa.MetaData:
        return tasks_table(namespace).metadata
