"""The ledgence SQL store's schema, the exact JSON of what it stores, and the statements
that differ by backend (chosen by the dialect's name, never by an if-chain).

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
  :class:`StoredAttempt` (snapshot and settlement receipt) as JSON text, and its ``state`` and
  ``lease_expires_at`` (index ``..._expiry`` on lease_expires_at, task_id);
- ``fp_<namespace>_ledgence_cursors``: ``(session_id, consumer_id)`` (primary key), the
  consumer's acquisition ``sequence`` and the ``task_id`` / ``attempt_id`` it assigned (both null
  for Empty). A row with sequence 0 is a placeholder that means "no cursor yet";
- ``fp_<namespace>_ledgence_history``: ``(task_id, sequence)`` (primary key), the event as JSON;
- ``fp_<namespace>_ledgence_receipts``: ``(session_id, consumer_id, sequence)`` (primary key),
  the ``command`` of a ``claim_dispatch`` and the ``disposition`` it answered, as JSON text.

Task ids sort bytewise: the id columns are ``TEXT`` (SQLite's BINARY collation) and
``TEXT COLLATE "C"`` on PostgreSQL, so ``ORDER BY task_id`` is the order the core defines.

Values are stored exactly (see :func:`dump_value`): ints stay ints, floats stay floats (``-0.0``
included), tuples stay tuples and mapping keys keep their types, because the contract compares
stored inputs canonically (``1`` is not ``1.0``) and snapshots by equality.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import attrs
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from fencepost.adapters.sql import TABLES_CACHED, table_name
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.ledgence_tasks import delivery, discovery, submission
from fencepost.spec.values import Codec

from .core import StoredAttempt, TaskRecord

# --- exact JSON ---------------------------------------------------------------------------------

CODEC = Codec([
    *(c for module in (submission, delivery, discovery)
      for c in vars(module).values()
      if isinstance(c, type) and attrs.has(c) and c.__module__ == module.__name__),
    TaskRecord,
    StoredAttempt,
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


def task_columns(record: TaskRecord) -> dict[str, Any]:
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


def attempt_columns(record: StoredAttempt) -> dict[str, Any]:
    return {
        "state": record.snapshot.state,
        "lease_expires_at": record.snapshot.lease.expires_at,
        "record": dumps(record),
    }


ORDER_COLUMNS: dict[str, Callable[[sa.Table], sa.ColumnElement[Any]]] = {
    "available_at": lambda t: t.c.available_at,
    "submitted_at": lambda t: t.c.submitted_at,
    "task_id": lambda t: t.c.task_id,  # bytewise: see BytewiseText
}


# --- per-backend statements ----------------------------------------------------------------------

NAME_LOCK: dict[str, Callable[[Connection, str], None]] = {}
"""Per backend: take a lock on a name until the transaction ends (two transactions locking
one name run that part one after the other)."""
SKIP_LOCKED: dict[str, Callable[[sa.Select[Any]], sa.Select[Any]]] = {}
SHARE_LOCK: dict[str, Callable[[sa.Select[Any]], sa.Select[Any]]] = {}
INSERT_IGNORE: dict[str, Callable[[sa.Table, dict[str, Any]], sa.Executable]] = {}
READ_AHEAD = frozenset({"postgresql"})
"""The backends on which a read fetches its task row with its attempt or history page in one
statement (``read_ahead``): a server, where every statement is a round trip (PostgreSQL:
inspect_attempt about 333 -> 223 us, history 309 -> 211 us on a 2-vCPU machine). In process,
SQLite runs two small statements as fast as the join or faster (history 56 -> 59-64 us)."""


def no_name_lock(conn: Connection, name: str) -> None:
    """SQLite: ``BEGIN IMMEDIATE`` already serializes every writing transaction."""


def _pg_name_lock(conn: Connection, name: str) -> None:
    conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": name})


def no_row_lock(select: sa.Select[Any]) -> sa.Select[Any]:
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


NAME_LOCK["postgresql"] = _pg_name_lock
SKIP_LOCKED["postgresql"] = _pg_skip_locked
SHARE_LOCK["postgresql"] = _pg_share_lock
INSERT_IGNORE["sqlite"] = _sqlite_insert_ignore
INSERT_IGNORE["postgresql"] = _pg_insert_ignore

BIGINT = range(-(2**63), 2**63)
"""The integers a ``BIGINT`` column holds (a receipt key outside it cannot be stored)."""


def keyset_before(columns: list[sa.ColumnElement[Any]],
                   values: tuple[Any, ...]) -> sa.ColumnElement[bool]:
    """``(c1, c2, ...) < (v1, v2, ...)`` spelled out: ``c1 < v1 OR (c1 = v1 AND c2 < v2)
    OR ...`` (each column compared in its own collation: task ids bytewise)."""
    return sa.or_(*(
        sa.and_(*(c == v for c, v in zip(columns[:k], values[:k], strict=True)),
                columns[k] < values[k])
        for k in range(len(values))
    ))

