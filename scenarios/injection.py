"""Database faults injected through SQLAlchemy's event hooks.

A store whose ``engine`` attribute is the SQLAlchemy :class:`~sqlalchemy.engine.Engine` every one
of its transactions runs on has the ``fault_injection`` capability (found, not declared). The
kit then arms one fault for one call at a time, in the store's own process (no proxy):

- ``statement``: the k-th statement of the call fails before it reaches the server, with the
  driver's own error (SQLite: ``database is locked``; PostgreSQL: a statement timeout), raised
  from ``before_cursor_execute``, where SQLAlchemy 2 wraps it exactly as it wraps a real one
  (``sqlalchemy.exc.OperationalError``, the connection still valid);
- ``drop_before_commit``: at the j-th COMMIT the DBAPI connection is closed first, so the
  transaction never commits (the server rolls it back); SQLAlchemy's COMMIT then meets the
  closed connection and raises the driver's error as a disconnect (``connection_invalidated``);
- ``commit_uncertain``: at the j-th COMMIT the transaction commits, then the connection is
  closed before the acknowledgement reaches the caller: the effect is there, the caller gets
  the same connection-lost error.

Example::

    with FaultInjector(store.engine) as injector:
        with injector.armed(Fault(COMMIT_UNCERTAIN, 1)) as tally:
            outcome = call(store, claim)     # error backend_unavailable, yet committed
        assert tally.fired

Every DBAPI driver raises on a closed connection (PEP 249); SQLite's and psycopg's errors are
the ones SQLAlchemy reports as disconnects. The checks that use the injector are in
:mod:`fencepost.scenarios.fault_checks`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:  # SQLAlchemy is imported by the SQL stores, not by a run without one
    from sqlalchemy.engine import Connection, Engine

FAULT_INJECTION = "fault_injection"
"""The capability a store has when it exposes its SQLAlchemy engine as ``engine``."""

STATEMENT, DROP_BEFORE_COMMIT, COMMIT_UNCERTAIN = (
    "statement", "drop_before_commit", "commit_uncertain")
COMMIT_FAULTS = (DROP_BEFORE_COMMIT, COMMIT_UNCERTAIN)


def engine_of(store: Any) -> Engine | None:
    """The store's SQLAlchemy engine (its ``engine`` attribute), or None."""
    engine = getattr(store, "engine", None)
    # An Engine exists only once SQLAlchemy was imported: a run on another store (memory, a
    # child process) does not import it (about 0.16 s of a process's start).
    loaded = sys.modules.get("sqlalchemy.engine")
    if engine is None or loaded is None:
        return None
    return engine if isinstance(engine, loaded.Engine) else None


def found_capabilities(store: Any) -> frozenset[str]:
    """The capabilities the kit finds on a store beyond those it declares."""
    return frozenset({FAULT_INJECTION}) if engine_of(store) is not None else frozenset()



@attrs.frozen
class Fault:
    """One fault: ``kind`` at the ``at``-th statement (``statement``) or COMMIT (the others) of
    the call it is armed for, counting from 1."""

    kind: str
    at: int

    def __str__(self) -> str:
        if self.kind == STATEMENT:
            return f"statement {self.at} of the call fails"
        if self.kind == DROP_BEFORE_COMMIT:
            return f"the connection drops before COMMIT {self.at} of the call"
        return f"COMMIT {self.at} of the call succeeds but its acknowledgement is lost"


@attrs.define
class Tally:
    """What the armed call did: statements run (the failed one included), COMMITs attempted,
    and whether the fault was reached."""

    statements: int = 0
    commits: int = 0
    fired: bool = False


_STATEMENT_ERRORS: dict[str, Callable[[Any], BaseException]] = {}


def _statement_error(backend: str) -> Callable[[Callable[[Any], BaseException]],
                                              Callable[[Any], BaseException]]:
    def register(fn: Callable[[Any], BaseException]) -> Callable[[Any], BaseException]:
        _STATEMENT_ERRORS[backend] = fn
        return fn

    return register


@_statement_error("sqlite")
def _sqlite_busy(dbapi: Any) -> BaseException:
    error: BaseException = dbapi.OperationalError("database is locked (injected by fencepost)")
    return error


@_statement_error("postgresql")
def _postgresql_timeout(dbapi: Any) -> BaseException:
    error: BaseException = dbapi.errors.QueryCanceled(
        "canceling statement due to statement timeout (injected by fencepost)")
    return error


def _any_backend(dbapi: Any) -> BaseException:
    """Every DBAPI module has ``OperationalError`` (PEP 249)."""
    error: BaseException = dbapi.OperationalError("statement failed (injected by fencepost)")
    return error


class FaultInjector:
    """Listens on ``engine`` until closed; :meth:`armed` arms one fault for the calls made in
    its block, on the arming thread only (the store's other clients are left alone)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._fault: Fault | None = None
        self._tally: Tally | None = None
        self._thread = 0
        from sqlalchemy import event

        event.listen(engine, "before_cursor_execute", self._before_execute)
        event.listen(engine, "commit", self._commit)

    def close(self) -> None:
        from sqlalchemy import event

        event.remove(self.engine, "before_cursor_execute", self._before_execute)
        event.remove(self.engine, "commit", self._commit)

    def __enter__(self) -> FaultInjector:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @contextmanager
    def armed(self, fault: Fault | None) -> Iterator[Tally]:
        """Count (and, with ``fault``, break) the statements and COMMITs of the block."""
        tally = Tally()
        self._fault, self._tally, self._thread = fault, tally, threading.get_ident()
        try:
            yield tally
        finally:
            self._fault, self._tally = None, None

    def _mine(self) -> Tally | None:
        tally = self._tally
        return tally if tally is not None and threading.get_ident() == self._thread else None

    def _before_execute(self, conn: Connection, cursor: Any, statement: str, parameters: Any,
                        context: Any, executemany: bool) -> None:
        tally = self._mine()
        if tally is None:
            return
        tally.statements += 1
        fault = self._fault
        if fault is not None and fault.kind == STATEMENT and fault.at == tally.statements:
            tally.fired = True
            dialect = self.engine.dialect
            raise _STATEMENT_ERRORS.get(dialect.name, _any_backend)(dialect.loaded_dbapi)

    def _commit(self, conn: Connection) -> None:
        tally = self._mine()
        if tally is None:
            return
        tally.commits += 1
        fault = self._fault
        if fault is None or fault.kind not in COMMIT_FAULTS or fault.at != tally.commits:
            return
        tally.fired = True
        raw = conn.connection.dbapi_connection
        assert raw is not None
        if fault.kind == COMMIT_UNCERTAIN:
            raw.commit()
        # SQLAlchemy's own COMMIT follows this event: on the closed connection the driver
        # raises (PEP 249), and SQLAlchemy reports it as a disconnect.
        raw.close()
