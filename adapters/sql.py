"""SQLAlchemy plumbing shared by the SQL stores: engines, per-backend locking, error mapping.
Over 500 lines: it is the SQL stores' one shared toolbox (engines, read connections, row
locks, writer gates, the namespace registry and liveness, the store factory), each piece short
and imported by name from here by every SQL store.

Per-backend behaviour lives in small functions registered by dialect name (as SQLAlchemy's own
dialect suite does), not in if-chains spread over the stores.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, NamedTuple, cast

import sqlalchemy as sa
from sqlalchemy import event, exc
from sqlalchemy.engine import Compiled, Connection, Engine
from sqlalchemy.engine.result import IteratorResult, SimpleResultMetaData

from fencepost.spec.errors import BackendUnavailable

_ENGINE_SETUP: dict[str, Callable[[str], Engine]] = {}
READ_ONLY = "fencepost_read_only"
"""The execution option of :func:`reader` engines."""
TABLES_CACHED = 256
"""The table definitions kept per store kind (by namespace): the stores of one namespace share
their ``Table`` objects, so a statement compiled for one store serves the next (SQLAlchemy's
compiled cache tells tables apart by identity)."""


def _backend(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _ENGINE_SETUP[name] = fn
        return fn

    return register


@_backend("sqlite")
def _sqlite_engine(url: str) -> Engine:
    # pysqlite emits its own BEGIN (deferred) lazily; take transaction control over, as
    # SQLAlchemy documents, so that every transaction starts with BEGIN IMMEDIATE and holds the
    # write lock from its first read: read-decide-write is then atomic across connections.
    engine = sa.create_engine(
        url, connect_args={"timeout": 30, "check_same_thread": False}, pool_size=16
    )

    wal = threading.Event()

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        # WAL, synced at checkpoints (SQLite's advice for applications): a commit survives the
        # process (what reopening checks), and readers neither wait for nor block the writer.
        # A commit in the default rollback journal waits for two fsyncs, most of a write's time.
        # WAL mode stays with the file: set it on the engine's first connection only (a store
        # reopened connects again, and the pragma cost more than a read).
        if not wal.is_set():
            dbapi_connection.execute("PRAGMA journal_mode=WAL")
            wal.set()
        dbapi_connection.execute("PRAGMA synchronous=NORMAL")

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        if not conn.get_execution_options().get(READ_ONLY):
            conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


@_backend("postgresql")
def _postgresql_engine(url: str) -> Engine:
    return sa.create_engine(url, pool_size=16, max_overflow=16, isolation_level="READ COMMITTED")


def normalize_url(url: str) -> str:
    """``postgresql://`` means psycopg 3 here (SQLAlchemy's default would be psycopg2)."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


_MADE: weakref.WeakSet[Engine] = weakref.WeakSet()
"""Every engine :func:`make_engine` made in this process that is still in use."""


def make_engine(url: str) -> Engine:
    """An engine for ``url`` configured for atomic read-decide-write transactions."""
    url = normalize_url(url)
    backend = sa.engine.make_url(url).get_backend_name()
    if backend not in _ENGINE_SETUP:
        supported = ", ".join(sorted(_ENGINE_SETUP))
        raise ValueError(f"no SQL backend {backend!r}; supported: {supported}")
    engine = _ENGINE_SETUP[backend](url)
    _MADE.add(engine)
    return engine


def _forked() -> None:
    """In a forked process (a campaign's worker): every engine made before the fork drops
    its pool without closing what it holds, as SQLAlchemy advises: those connections are the
    parent's, and two processes talking on one would mix their statements."""
    for engine in list(_MADE):
        engine.dispose(close=False)


os.register_at_fork(after_in_child=_forked)


def reader(engine: Engine) -> Engine:
    """``engine`` for reads that are one statement each and lock nothing. On SQLite the
    statement runs without ``BEGIN IMMEDIATE``, in its own implicit transaction under a shared
    lock (it neither takes nor waits for the write lock); on PostgreSQL in autocommit, each
    statement with its own snapshot as at READ COMMITTED. One statement sees one snapshot, so
    such a read is atomic either way. Never write through it: nothing would make two writes
    one transaction."""
    return _READER_OPTIONS.get(engine.dialect.name, _read_only)(engine)


def _read_only(engine: Engine) -> Engine:
    return engine.execution_options(**{READ_ONLY: True})


def _postgresql_reader(engine: Engine) -> Engine:
    # Autocommit: at READ COMMITTED every statement has its own snapshot anyway, and a read
    # then ends without a ROLLBACK round trip.
    return engine.execution_options(**{READ_ONLY: True}, isolation_level="AUTOCOMMIT")


_READER_OPTIONS: dict[str, Callable[[Engine], Engine]] = {"postgresql": _postgresql_reader}


class _Prepared(NamedTuple):
    """A statement compiled once for a dialect, run on the DBAPI connection itself."""

    sql: str
    compiled: Compiled
    positions: tuple[str, ...] | None  # the parameters' order (positional paramstyles)
    columns: SimpleResultMetaData  # the result's columns, for SQLAlchemy's own Result
    keys: tuple[str, ...]  # the columns' names
    processors: tuple[Callable[[Any], Any] | None, ...] | None  # per column (None: none)


PREPARED_KEPT = 1_024
"""How many statements' preparations are kept (the last used): a prepared statement holds its
statement and through it its tables, so a weak key never died and every namespace a run ever
made stayed in memory (a tour of 24,000 sequences, each on tables of its own, grew past 7 GB)."""
_PREPARED: OrderedDict[Any, dict[str, _Prepared | str]] = OrderedDict()
"""Per statement and dialect name: its :class:`_Prepared`, or where it stands (see
:func:`_prepared`); the least recently used first."""
_SEEN_ONCE = "seen once"
_NOT_ON_DRIVER = "not on the driver"
_PREPARED_LOCK = threading.Lock()

_DRIVER_TYPED = (sa.String, sa.Integer)
"""Column types whose values a server driver returns as SQLAlchemy would (no processing)."""


def _prepare(statement: Any, dialect: Any) -> _Prepared | None:
    """``statement`` compiled for ``dialect``, or None when SQLAlchemy must run it: not a
    SELECT, a parameter with a type processor, an expanding or post-compiled parameter, or (on a
    server) a column type other than text and integers. On SQLite the driver reports no column
    types, so a column's result processor (JSON's) is the one SQLAlchemy itself applies."""
    if not isinstance(statement, sa.Select):
        return None
    compiled = statement.compile(dialect=dialect)
    columns = compiled._result_columns
    if (compiled._bind_processors or compiled.literal_execute_params
            or compiled.post_compile_params
            or any(b.expanding for b in compiled.binds.values())):
        return None
    if dialect.name != "sqlite" and not all(isinstance(c.type, _DRIVER_TYPED) for c in columns):
        return None
    processors = tuple(c.type._cached_result_processor(dialect, None) for c in columns)
    positions = tuple(compiled.positiontup or ()) if compiled.positional else None
    keys = tuple(c.keyname for c in columns)
    return _Prepared(compiled.string, compiled, positions, SimpleResultMetaData(keys), keys,
                     processors if any(p is not None for p in processors) else None)


def _prepared(statement: Any, dialect: Any) -> _Prepared | None:
    """``statement``'s :class:`_Prepared` for ``dialect`` from its second read on (None the
    first time, and when SQLAlchemy must run it): a statement built for one call is run once,
    and SQLAlchemy's compiled cache serves it better than compiling it here."""
    with _PREPARED_LOCK:
        states = _PREPARED.get(statement)
        if states is None:
            states = _PREPARED[statement] = {}
            if len(_PREPARED) > PREPARED_KEPT:
                _PREPARED.popitem(last=False)
        else:
            _PREPARED.move_to_end(statement)
        state = states.get(dialect.name)
        if state is None:
            states[dialect.name] = _SEEN_ONCE
            return None
        if isinstance(state, _Prepared):
            return state
        if state == _NOT_ON_DRIVER:
            return None
    try:
        prepared = _prepare(statement, dialect)
    except AttributeError:  # _prepare reads SQLAlchemy's compiled internals; if they moved,
        prepared = None     # SQLAlchemy runs the read, as it did before reads on the driver
    with _PREPARED_LOCK:
        states[dialect.name] = prepared if prepared is not None else _NOT_ON_DRIVER
    return prepared


class ReadConnection:
    """A :class:`ReadConnections` connection: ``execute`` runs a prebuilt SELECT on the
    driver's own connection, compiled once per statement and dialect (SQLAlchemy's execution
    of a cached statement cost several times the driver's), and answers a :class:`ReadRows`;
    anything else goes to the SQLAlchemy ``Connection``, as do all other attributes. A read is
    one statement in autocommit either way (see :func:`reader`), so the driver runs it as
    SQLAlchemy would. Driver errors are raised as SQLAlchemy's, and a lost connection is
    invalidated. While a ``before_cursor_execute`` hook listens (fault injection), SQLAlchemy
    runs every read."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._began = False  # SQLAlchemy ran a statement: its transaction needs ending

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)

    @property
    def closed(self) -> bool:
        """The SQLAlchemy connection's ``closed``."""
        return self.conn.closed

    @property
    def invalidated(self) -> bool:
        """The SQLAlchemy connection's ``invalidated``."""
        return self.conn.invalidated

    def end(self) -> None:
        """End the read: roll back the transaction SQLAlchemy began, if it ran a statement
        (the driver's own reads began none: SQLite's driver runs a SELECT in autocommit, and
        PostgreSQL's reads are in autocommit)."""
        if self._began:
            self._began = False
            self.conn.rollback()

    def execute(self, statement: Any, parameters: Mapping[str, Any] | None = None) -> Any:
        conn = self.conn
        # While something listens to SQLAlchemy's statements (the kit's fault injector counts
        # and fails them there; a user's hook), every read goes through SQLAlchemy.
        watched = bool(conn.dispatch.before_cursor_execute)
        prepared = None if watched else _prepared(statement, conn.dialect)
        if prepared is None:
            self._began = True
            return conn.execute(statement, parameters or {})
        values = prepared.compiled.construct_params(parameters or {}) or {}
        arguments: Any = (tuple([values[name] for name in prepared.positions])
                          if prepared.positions is not None else values)
        driver = conn.connection.dbapi_connection
        assert driver is not None
        cursor = driver.cursor()
        try:
            cursor.execute(prepared.sql, arguments)
            rows = cursor.fetchall()
        except conn.dialect.loaded_dbapi.Error as e:
            dialect = conn.dialect
            lost = bool(dialect.is_disconnect(e, driver, cursor))
            if lost:
                conn.invalidate(e)
            raise exc.DBAPIError.instance(prepared.sql, arguments, e, dialect.loaded_dbapi.Error,
                                          connection_invalidated=lost,
                                          dialect=dialect) from e
        finally:
            cursor.close()
        processors = prepared.processors
        if processors is not None:
            rows = [tuple([v if p is None else p(v) for p, v in zip(processors, r, strict=True)])
                    for r in rows]
        return ReadRows(prepared, rows)


class ReadRows:
    """The rows of a :class:`ReadConnection` read, standing in for SQLAlchemy's ``Result``:
    ``scalar()``, ``mappings().first()`` and iterating over plain tuples are answered here
    (SQLAlchemy's ``Result`` cost more than the read); any other attribute is the ``Result``'s,
    built from the same rows."""

    __slots__ = ("_prepared", "_rows")

    def __init__(self, prepared: _Prepared, rows: Sequence[Any]) -> None:
        self._prepared = prepared
        self._rows = rows

    def scalar(self) -> Any:
        """The first row's first column (None: no row), as ``Result.scalar``."""
        return self._rows[0][0] if self._rows else None

    def mappings(self) -> ReadRows._Mappings:
        """The rows as mappings of column name to value (``first()`` only)."""
        return ReadRows._Mappings(self)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(IteratorResult(self._prepared.columns, iter(self._rows)), name)

    class _Mappings:
        __slots__ = ("_of",)

        def __init__(self, of: ReadRows) -> None:
            self._of = of

        def first(self) -> dict[str, Any] | None:
            """The first row as a dict by column name (None: no row)."""
            rows = self._of._rows
            if not rows:
                return None
            return dict(zip(self._of._prepared.keys, rows[0], strict=True))

        def __getattr__(self, name: str) -> Any:
            of = self._of
            return getattr(IteratorResult(of._prepared.columns, iter(of._rows)).mappings(), name)


class ReadConnections:
    """A store's :func:`reader` connections, kept open between reads until :meth:`close`: a
    read takes an idle one (or connects) and gives it back. A read then costs its statement
    only: checking a connection out of the pool and back in (which rolls it back: a round trip
    on a server) cost more than the read itself. There are never more connections than reads
    that ran at once.

    A connection that raised a database error is closed, not given back (after a lost server
    the next read connects afresh); a refusal the store raises inside the ``with`` gives it
    back. Each read ends its implicit transaction, so an idle connection holds no lock and no
    snapshot.

    Example::

        reads = ReadConnections(engine)
        with reads.connection() as conn:
            row = conn.execute(select).first()
        reads.close()
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = reader(engine)
        self._lock = threading.Lock()
        self._idle: list[ReadConnection] = []
        self._closed = False

    @classmethod
    def of(cls, engine: Engine) -> ReadConnections:
        """The read connections every store of ``engine`` shares until :meth:`close_shared`:
        a store reopened on the engine reads on those its predecessor left idle (checking one
        out of the pool again cost a reopened store's first read about twice the read). A
        read connection holds no snapshot between reads, so the reopened store still reads
        only what the database committed."""
        with _SHARED_READS_LOCK:
            found = _SHARED_READS.get(engine)
            if found is None:
                found = _SHARED_READS[engine] = cls(engine)
            return found

    @staticmethod
    def close_shared(engine: Engine) -> None:
        """Close the read connections the stores of ``engine`` share (the next store opened
        on it starts a new set)."""
        with _SHARED_READS_LOCK:
            found = _SHARED_READS.pop(engine, None)
        if found is not None:
            found.close()

    def connection(self) -> AbstractContextManager[Connection]:
        """A read connection, for one read: a :class:`ReadConnection`, which stands in for a
        SQLAlchemy ``Connection`` in a read (typed as one)."""
        return _Lent(self)

    def _take(self) -> ReadConnection:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is not None and conn.invalidated:  # its server went away while it was idle
            _close_quietly(conn)
        if conn is None or conn.closed or conn.invalidated:
            conn = ReadConnection(self._engine.connect())
        return conn

    def _give_back(self, conn: ReadConnection) -> None:
        if conn.closed:
            return
        if conn.invalidated:
            _close_quietly(conn)
            return
        with self._lock:
            if not self._closed:
                self._idle.append(conn)
                return
        _close_quietly(conn)

    def close(self) -> None:
        """Close the idle connections; one still in a read closes when the read ends."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            _close_quietly(conn)


class _Lent:
    """One read's use of a :class:`ReadConnections` connection (a class, not a generator:
    entering and leaving one cost more than the read on the driver). Leaving ends the read
    (:meth:`ReadConnection.end`); a connection that raised a database error, or could not end
    its read, is closed; either way it goes back (a closed one is dropped)."""

    __slots__ = ("_reads", "_conn")

    def __init__(self, reads: ReadConnections) -> None:
        self._reads = reads
        self._conn: ReadConnection | None = None

    def __enter__(self) -> Connection:
        self._conn = self._reads._take()
        return cast(Connection, self._conn)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 _tb: Any) -> None:
        conn = self._conn
        assert conn is not None
        try:
            if kind is not None and issubclass(kind, exc.SQLAlchemyError):
                _close_quietly(conn)
                return
            try:
                conn.end()
            except exc.SQLAlchemyError:
                _close_quietly(conn)
                if kind is None:
                    raise
        finally:
            self._reads._give_back(conn)


_SHARED_READS: weakref.WeakKeyDictionary[Engine, ReadConnections] = weakref.WeakKeyDictionary()
_SHARED_READS_LOCK = threading.Lock()


def _close_quietly(conn: Connection | ReadConnection) -> None:
    try:
        conn.close()
    except Exception:  # noqa: BLE001 - letting a connection go is best effort: reads hold no data
        pass


def lock_row(engine: Engine, select: sa.Select[Any]) -> sa.Select[Any]:
    """Lock the selected row for the transaction. SQLite's BEGIN IMMEDIATE already did."""
    return backend_lock_row(engine.dialect.name, select)


def backend_lock_row(backend: str, select: sa.Select[Any]) -> sa.Select[Any]:
    """:func:`lock_row` for the backend named ``backend`` (a dialect name)."""
    if backend == "sqlite":
        return select
    return select.with_for_update()


_TABLES_MADE: weakref.WeakKeyDictionary[Engine, set[str]] = weakref.WeakKeyDictionary()
_TABLES_MADE_LOCK = threading.Lock()


def ensure_tables(engine: Engine, namespace: str, create: Callable[[], None]) -> None:
    """Run ``create`` (make ``namespace``'s tables where missing) unless a store of ``engine``
    already made sure of them and they were not dropped since (:func:`tables_dropped`). A
    reopened store then costs no catalog reads: on SQLite one PRAGMA per table, and the write
    lock, on every reopen, which the state machines do hundreds of times a run. A store opened
    by another process (another engine) still looks for itself."""
    with _TABLES_MADE_LOCK:
        if namespace in _TABLES_MADE.get(engine, ()):
            return
    create()
    with _TABLES_MADE_LOCK:
        _TABLES_MADE.setdefault(engine, set()).add(namespace)


def tables_dropped(engine: Engine, namespace: str) -> None:
    """``namespace``'s tables were dropped through ``engine``: the next store opened makes them
    again (see :func:`ensure_tables`)."""
    with _TABLES_MADE_LOCK:
        _TABLES_MADE.get(engine, set()).discard(namespace)


def table_name(namespace: str, name: str) -> str:
    """A table name private to one run: ``fp_<namespace>_<name>``, safe on every backend."""
    base = re.sub(r"[^a-z0-9_]", "_", f"fp_{namespace}_{name}".lower())
    return base[:63]


_WRITER_GATES: dict[str, threading.RLock] = {}
_WRITER_GATES_LOCK = threading.Lock()


def _sqlite_writer_gate(engine: Engine) -> AbstractContextManager[Any]:
    # One writer at a time is all SQLite allows (BEGIN IMMEDIATE); waiting for it on a lock
    # of this process wakes the next writer at once, where SQLite's busy handler sleeps in
    # steps of up to 100 ms (8 racing writers spent a third of a race round asleep). Writers
    # of other processes still wait in the busy handler.
    with _WRITER_GATES_LOCK:
        return _WRITER_GATES.setdefault(str(engine.url), threading.RLock())


_WRITER_GATE: dict[str, Callable[[Engine], AbstractContextManager[Any]]] = {
    "sqlite": _sqlite_writer_gate,
}


def _no_writer_gate(_engine: Engine) -> AbstractContextManager[Any]:
    return nullcontext()


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """``engine.begin()`` for a read-decide-write transaction, after the database's other
    writers of this process where its backend takes one writer at a time (SQLite)."""
    with _WRITER_GATE.get(engine.dialect.name, _no_writer_gate)(engine), \
            engine.begin() as conn:
        yield conn


def unavailable_on_disconnect() -> AbstractContextManager[None]:
    """Turn a lost connection or an unreachable server into ``BackendUnavailable``."""
    return _LOST_IS_UNAVAILABLE


def raise_if_lost(e: BaseException) -> None:
    """Raise ``BackendUnavailable`` from ``e`` when it says the connection was lost or the
    server is unreachable (what :func:`unavailable_on_disconnect` turns)."""
    if isinstance(e, exc.OperationalError | exc.InterfaceError):
        raise BackendUnavailable(f"{type(e.orig).__name__}: {str(e.orig).strip()}") from e
    if isinstance(e, exc.DBAPIError) and e.connection_invalidated:
        raise BackendUnavailable(str(e.orig).strip()) from e


class _LostIsUnavailable:
    """:func:`unavailable_on_disconnect`'s context manager (no state: one serves every use; a
    class, not a generator, because every store call enters one)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, _kind: Any, error: BaseException | None, _tb: Any) -> None:
        if error is not None:
            raise_if_lost(error)


_LOST_IS_UNAVAILABLE = _LostIsUnavailable()


REGISTRY = "fp__namespaces"
"""The table where each namespace a run uses is written down as it is first opened: when, and
by which host and process (what ``fencepost clean`` reads)."""
LOCK_CLASS = 0x6670
"""The first key of the PostgreSQL advisory locks that mark a namespace in use ("fp")."""


def registry_table(metadata: sa.MetaData) -> sa.Table:
    return sa.Table(REGISTRY, metadata,
                    sa.Column("namespace", sa.String(200), primary_key=True),
                    sa.Column("created_ms", sa.BigInteger, nullable=False),
                    sa.Column("owner", sa.String(300), nullable=False))


def owner_id() -> str:
    """This process as the registry names it: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Liveness:
    """Marks the namespaces a process has open as in use, for as long as it lives.

    The first time a namespace is opened, a row of :data:`REGISTRY` says when and by whom
    (written through the stores' own engine, as they write); on PostgreSQL, a shared advisory
    lock on the namespace is held by a connection of its own until the namespace is discarded
    or the process ends (the server then releases it, however the process ended).
    ``fencepost clean`` never drops a namespace whose lock it cannot take, nor, elsewhere, one
    whose process still runs on this host."""

    def __init__(self, url: str, engine: Callable[[], Engine]) -> None:
        self.url = url
        self._engine = engine
        self._locker: Engine | None = None
        self._conn: Connection | None = None
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._table = registry_table(sa.MetaData())

    def hold(self, namespace: str) -> None:
        with self._lock:
            if namespace in self._held:
                return
            engine = self._engine()
            with unavailable_on_disconnect():
                if engine.dialect.name == "postgresql":  # first: then the row, never unmarked
                    self._locked("SELECT pg_advisory_lock_shared(:c, hashtext(:n))", namespace)
                ensure_tables(engine, REGISTRY, lambda: self._made(engine))
                try:  # the first holder's row stays (stores of one namespace open at once)
                    with writing(engine) as conn:
                        conn.execute(self._table.insert().values(
                            namespace=namespace, created_ms=int(time.time() * 1000),
                            owner=owner_id()))
                except exc.IntegrityError:
                    pass
            self._held.add(namespace)

    def release(self, namespace: str) -> None:
        """``namespace`` was dropped: its row goes (this process's, even when another
        factory of this process wrote it) and, if this object holds it, its lock."""
        with self._lock:
            held = namespace in self._held
            self._held.discard(namespace)
            engine = self._engine()
            with unavailable_on_disconnect():
                with writing(engine) as conn:
                    if held or sa.inspect(conn).has_table(REGISTRY):
                        conn.execute(self._table.delete().where(
                            (self._table.c.namespace == namespace)
                            & (self._table.c.owner == owner_id())))
                if held and engine.dialect.name == "postgresql":
                    self._locked("SELECT pg_advisory_unlock_shared(:c, hashtext(:n))",
                                 namespace)

    def _made(self, engine: Engine) -> None:
        try:
            with writing(engine) as conn:
                self._table.create(conn, checkfirst=True)
        except exc.DBAPIError:  # another process made it meanwhile, or none could be made:
            with writing(engine) as conn:  # an unreachable database raises here, and the
                if not sa.inspect(conn).has_table(REGISTRY):  # registry is never taken as
                    raise  # made for this engine (the next open tries again)

    def _locked(self, statement: str, namespace: str) -> None:
        """``statement`` on the connection that holds the locks (made on first use)."""
        if self._conn is None:
            self._locker = sa.create_engine(normalize_url(self.url), poolclass=sa.NullPool)
            self._conn = self._locker.connect()
        self._conn.execute(sa.text(statement), {"c": LOCK_CLASS, "n": namespace})
        self._conn.commit()  # the lock is the session's: it outlives the transaction

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                _close_quietly(self._conn)
            if self._locker is not None:
                self._locker.dispose()
            self._conn, self._locker = None, None
            self._held.clear()


class SqlStoreFactory:
    """``factory(env)`` opens a store of ``store_class`` on the database at ``url``;
    ``discard(env)`` empties one namespace's tables and keeps them for the next namespace
    opened; ``close()`` drops the kept tables and lets the engine go.

    Every store a factory opens shares one engine, as the processes of one application do:
    each call still checks out a connection of its own, and statements are compiled once per
    factory, not once per store. A write's connection goes back to the pool, rolled back, when
    its transaction ends; the read connections stay idle with the engine
    (:meth:`ReadConnections.of`), holding no snapshot: a store reopened on them reads only what
    the database committed (nothing of the closed store object survives), without paying for
    closing and opening connections (closing SQLite's last one checkpoints its log). The
    factory's ``close()`` closes them.

    **Tables kept for reuse.** A run opens and discards hundreds of namespaces (a tour's
    sequence, a race's round, each on a store of its own). Their tables live in *slots*: a
    namespace opened for the first time takes a slot a discarded namespace left, emptied, or
    else a new one named after itself (``fp_<namespace>_<table>``). Reusing a slot makes no
    table and compiles no statement (on SQLite every schema change also makes each connection
    prepare its statements again): it took a third off a ledgence tour's time on SQLite and on
    PostgreSQL. An empty slot holds nothing of the namespace before it: the tables have
    no counters nor sequences, only rows. A namespace keeps its slot until it is discarded, so
    a store reopened with the same env sees the same data. A namespace this factory never
    opened is discarded as before: its own tables dropped.

    Subclasses name their ``store_class`` (built as ``store_class(env, engine, tables=slot)``)
    and a slot's tables (:meth:`metadata`), which :meth:`drop` drops and :meth:`empty`
    empties.
    """

    store_class: Any = None

    def __init__(self, url: str, store_class: Any = None) -> None:
        self.url = url
        if store_class is not None:
            self.store_class = store_class
        self._engine: Engine | None = None
        self._lock = threading.Lock()
        self._slots_lock = threading.Lock()
        self._slots: dict[str, str] = {}
        """The slot each namespace opened and not yet discarded has its tables in."""
        self._spare: list[str] = []
        """Slots emptied by a discard, for the next namespace opened."""
        self._named: set[str] = set()
        """Every slot this factory has made and not dropped."""
        self.liveness = Liveness(url, lambda: self.engine)

    @property
    def engine(self) -> Engine:
        """The factory's engine (made on first use)."""
        with self._lock:
            if self._engine is None:
                self._engine = make_engine(self.url)
            return self._engine

    def __call__(self, env: Any) -> Any:
        with self._slots_lock:
            slot = self._slots.get(env.namespace)
            if slot is None:
                slot = self._spare.pop() if self._spare else self._new_slot(env.namespace)
                self._slots[env.namespace] = slot
        self.liveness.hold(slot)
        return self.store_class(env, self.engine, tables=slot)

    def _new_slot(self, namespace: str) -> str:
        # Named after the namespace, unless a slot of that name is in use already (the
        # namespace was discarded and its slot went to another, then it was opened again).
        slot, k = namespace, 1
        while slot in self._named:
            slot, k = f"{namespace}_{k}", k + 1
        self._named.add(slot)
        return slot

    def slot_of(self, namespace: str) -> str:
        """The slot ``namespace``'s tables are in (its own name if this factory has not
        opened it)."""
        with self._slots_lock:
            return self._slots.get(namespace, namespace)

    def discard(self, env: Any) -> None:
        """Empty ``env.namespace``'s tables and keep them for the next namespace opened (the
        other namespaces' tables stay as they are). A namespace this factory did not open, or
        whose tables could not be emptied, has its tables dropped."""
        with self._slots_lock:
            slot = self._slots.pop(env.namespace, None)
            if slot is None and env.namespace in self._named:
                return  # discarded before: its slot was emptied then
        if slot is not None:
            try:
                with unavailable_on_disconnect():
                    self.empty(self.engine, slot)
            except Exception:  # noqa: BLE001 - dropped instead, which raises if it fails too
                pass
            else:
                with self._slots_lock:
                    self._spare.append(slot)
                return
        self._drop_slot(slot if slot is not None else env.namespace)

    def _drop_slot(self, slot: str) -> None:
        try:
            with unavailable_on_disconnect():
                self.drop(self.engine, slot)
        finally:
            tables_dropped(self.engine, slot)
            with self._slots_lock:
                self._named.discard(slot)
        self.liveness.release(slot)

    def metadata(self, namespace: str) -> sa.MetaData:
        """The tables of the slot ``namespace`` (the subclass's schema)."""
        raise NotImplementedError

    def drop(self, engine: Engine, namespace: str) -> None:
        """Drop the tables of the slot ``namespace`` through ``engine``."""
        self.metadata(namespace).drop_all(engine, checkfirst=True)

    def empty(self, engine: Engine, namespace: str) -> None:
        """Delete every row of the slot ``namespace``'s tables through ``engine``, in one
        transaction (the tables that others refer to last)."""
        with writing(engine) as conn:
            for table in reversed(self.metadata(namespace).sorted_tables):
                conn.execute(table.delete())

    def close(self) -> None:
        """Drop the kept (emptied) tables, close the engine's pooled connections (stores
        opened later connect afresh) and the connection that marks its namespaces in use.
        Until then the pool keeps the connections the factory's stores gave back. The tables
        of namespaces not discarded stay, and their stores reopen them."""
        with self._slots_lock:
            spare, self._spare = self._spare, []
        failed: list[BaseException] = []
        for slot in spare:
            try:
                self._drop_slot(slot)
            except Exception as e:  # noqa: BLE001 - the others are dropped all the same
                failed.append(e)
        with self._lock:
            if self._engine is not None:
                ReadConnections.close_shared(self._engine)
                self._engine.dispose()
        self.liveness.close()
        if failed:
            raise failed[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


def probe(url: str) -> None:
    """Connect once; raise :class:`BackendUnavailable` with the server's reason when that fails."""
    engine = make_engine(url)
    try:
        with unavailable_on_disconnect(), engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    finally:
        engine.dispose()
