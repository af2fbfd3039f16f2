"""The SQLAlchemy ledger: one store for SQLite and PostgreSQL.

Atomicity: each operation is one transaction that locks the record before reading it (SQLite:
``BEGIN IMMEDIATE``; PostgreSQL: ``SELECT ... FOR UPDATE`` at READ COMMITTED); a concurrent
create of one id meets the primary key and answers ``already_exists``. ``get`` writes nothing
and reads the row in one SELECT without a lock (see :func:`~fencepost.adapters.sql.reader`):
it neither waits for nor holds up a writer. The table lives in the run's namespace and is
created on first use.

Values the caller gives (metadata values, checkpoint, outcome, token) are Erlang terms in the
seed, kept exactly (mnesia.erl:68, 159, 182-184): here each is a text column holding the kit's
exact JSON (:class:`~fencepost.spec.values.Codec`), so 1.0 stays a float, a tuple a tuple,
bytes bytes and a map's integer keys integers (ADK-VALUE-001).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

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
    table_name,
    unavailable_on_disconnect,
    writing,
)
from fencepost.spec import adk_ledger as spec
from fencepost.spec.adk_ledger import StoredInvocation
from fencepost.spec.env import AdapterEnv
from fencepost.spec.values import Codec

from .core import LedgerCore

_COLUMNS = [a.name for a in attrs.fields(StoredInvocation)]
_EXACT = ("workflow_id", "workflow_version", "kind", "checkpoint", "outcome", "token")
"""The columns that hold a caller's value as exact JSON text (none stays SQL NULL)."""
_CODEC = Codec([])


def _stored(row: StoredInvocation) -> dict[str, Any]:
    """``row`` as column values."""
    values = attrs.asdict(row, recurse=False)
    for name in _EXACT:
        if values[name] is not None:
            values[name] = _CODEC.dumps(values[name])
    return values


def _loaded(found: sa.RowMapping) -> StoredInvocation:
    """The record a row holds."""
    values = {c: found[c] for c in _COLUMNS}
    for name in _EXACT:
        if values[name] is not None:
            values[name] = _CODEC.loads(str(values[name]))
    return StoredInvocation(**values)


@functools.lru_cache(maxsize=TABLES_CACHED)
def ledger_table(namespace: str) -> sa.Table:
    return sa.Table(
        table_name(namespace, "adk_invocations"),
        sa.MetaData(),
        sa.Column("invocation_id", sa.String(255), primary_key=True),
        sa.Column("workflow_id", sa.Text),
        sa.Column("workflow_version", sa.Text),
        sa.Column("kind", sa.Text),
        sa.Column("checkpoint", sa.Text, nullable=False),
        sa.Column("phase", sa.String(64), nullable=False),
        sa.Column("outcome", sa.Text),
        sa.Column("token", sa.Text),
        sa.Column("owner", sa.String(255)),
        sa.Column("lease_until", sa.BigInteger, nullable=False),
        sa.Column("revision", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
    )


class _Reads(NamedTuple):
    read: sa.Select[Any]
    lock: sa.Select[Any]


@functools.lru_cache(maxsize=TABLES_CACHED)
def _reads(namespace: str, backend: str) -> _Reads:
    """The namespace's read of one record, plain and locking for ``backend`` (a dialect
    name), built once: a reopened store runs the statements the first one compiled."""
    t = ledger_table(namespace)
    read = sa.select(t).where(t.c.invocation_id == sa.bindparam("id"))
    return _Reads(read, backend_lock_row(backend, read))


class _Writes(NamedTuple):
    insert: sa.Insert
    update: sa.Update
    delete: sa.Delete


@functools.lru_cache(maxsize=TABLES_CACHED)
def _writes(namespace: str) -> _Writes:
    """The namespace's insert, update and delete, built once with the key as a parameter
    (``b_id``: a column's own name is reserved for its SET value)."""
    t = ledger_table(namespace)
    key = t.c.invocation_id == sa.bindparam("b_id")
    return _Writes(t.insert(), t.update().where(key), t.delete().where(key))


@attrs.define
class _SqlSlot:
    conn: Connection
    namespace: str
    invocation_id: str
    row: StoredInvocation | None

    def insert(self, row: StoredInvocation) -> None:
        try:
            with self.conn.begin_nested():
                self.conn.execute(_writes(self.namespace).insert, _stored(row))
        except exc.IntegrityError as e:
            raise spec.AlreadyExists(self.invocation_id) from e

    def update(self, row: StoredInvocation) -> None:
        values = _stored(row)
        del values["invocation_id"]
        self.conn.execute(_writes(self.namespace).update, {**values, "b_id": self.invocation_id})

    def remove(self) -> None:
        self.conn.execute(_writes(self.namespace).delete, {"b_id": self.invocation_id})


class SqlLedger(LedgerCore):
    """An ``adk-ledger`` store in one SQL table."""

    def __init__(self, env: AdapterEnv, engine: Engine, tables: str | None = None) -> None:
        super().__init__(env)
        self.engine = engine
        self.slot = env.namespace if tables is None else tables
        """The namespace the table is named by (see ``SqlStoreFactory``)."""
        self.table = ledger_table(self.slot)
        self._reads = ReadConnections.of(engine)
        self._read, self._lock = _reads(self.slot, engine.dialect.name)
        ensure_tables(engine, self.slot, self._create_table)

    def _create_table(self) -> None:
        with unavailable_on_disconnect():
            self.table.create(self.engine, checkfirst=True)

    @contextmanager
    def _locked(self, invocation_id: str) -> Iterator[_SqlSlot]:
        with unavailable_on_disconnect(), writing(self.engine) as conn:
            found = conn.execute(self._lock, {"id": invocation_id}).mappings().first()
            row = _loaded(found) if found is not None else None
            yield _SqlSlot(conn, self.slot, invocation_id, row)

    @contextmanager
    def _reading(self, invocation_id: str) -> Iterator[_SqlSlot]:
        # One SELECT, no lock and (SQLite) no write lock: a get neither waits for nor holds
        # up a claim. The slot is read-only (get writes nothing).
        with unavailable_on_disconnect(), self._reads.connection() as conn:
            found = conn.execute(self._read, {"id": invocation_id}).mappings().first()
            row = _loaded(found) if found is not None else None
            yield _SqlSlot(conn, self.slot, invocation_id, row)

    def close(self) -> None:
        """Nothing to let go: the read connections stay with the engine for the next store
        (see ``ReadConnections.of``); the factory's ``close`` closes them."""


class SqlLedgerFactory(SqlStoreFactory):
    """``factory(env)`` for a database URL; ``discard(env)`` empties the namespace's table
    (kept for the next namespace: see ``SqlStoreFactory``)."""

    store_class = SqlLedger

    def metadata(self, namespace: str) -> sa.MetaData:
        return ledger_table(namespace).metadata


