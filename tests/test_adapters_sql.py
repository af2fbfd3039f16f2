"""The SQL stores' shared plumbing: a write transaction on SQLite first waits, in this
process, for the database's other writers of this process; reads run on connections kept
between reads that hold nothing between them, a prebuilt SELECT on the driver itself;
SQLite databases are in WAL mode; a reopened store reads no catalog."""

from __future__ import annotations

import gc
import os
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from fencepost.adapters.sql import make_engine, writing


def _try_write_elsewhere(engine: sa.Engine) -> bool:
    """Could another thread start a write transaction now (without waiting)?"""
    from fencepost.adapters.sql import _sqlite_writer_gate

    got: list[bool] = []

    def attempt() -> None:
        gate = _sqlite_writer_gate(engine)
        acquired = gate.acquire(blocking=False)
        got.append(acquired)
        if acquired:
            gate.release()

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return got[0]


def test_a_sqlite_writer_holds_off_the_processes_other_writers_until_it_ends(
        tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    other = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")  # same file, another engine
    try:
        with writing(engine) as conn:
            conn.execute(sa.text("create table t (x integer)"))
            assert not _try_write_elsewhere(engine)
            assert not _try_write_elsewhere(other)
        assert _try_write_elsewhere(engine)
        with writing(other) as conn:
            conn.execute(sa.text("insert into t values (1)"))
        with engine.connect() as conn:
            assert conn.execute(sa.text("select x from t")).scalar_one() == 1
    finally:
        engine.dispose()
        other.dispose()


def test_writers_of_another_database_do_not_wait(tmp_path: Path) -> None:
    one = make_engine(f"sqlite:///{tmp_path / 'one.sqlite'}")
    two = make_engine(f"sqlite:///{tmp_path / 'two.sqlite'}")
    try:
        with writing(one):
            assert _try_write_elsewhere(two)
    finally:
        one.dispose()
        two.dispose()


# --- ReadConnections: a store's read connections, kept between reads ---------------------------


def _backend_pid(conn: sa.Connection) -> object:
    return conn.execute(sa.text("select pg_backend_pid()")).scalar_one()


@pytest.fixture
def pg_reads(pg_url: str) -> Iterator[tuple[sa.Engine, Any]]:
    """An engine on PostgreSQL and its ReadConnections, closed afterwards."""
    from fencepost.adapters.sql import ReadConnections

    engine = make_engine(pg_url)
    reads = ReadConnections(engine)
    yield engine, reads
    reads.close()
    engine.dispose()


def test_a_read_reuses_the_connection_the_last_one_gave_back_and_two_at_once_use_two(
        pg_reads: tuple[sa.Engine, Any]) -> None:
    _, reads = pg_reads
    with reads.connection() as conn:
        first = _backend_pid(conn)
    with reads.connection() as conn:
        assert _backend_pid(conn) == first
        with reads.connection() as inner:  # a read while another runs
            second = _backend_pid(inner)
    assert second != first
    other: list[object] = []

    def read_elsewhere() -> None:  # another thread takes an idle one
        with reads.connection() as conn:
            other.append(_backend_pid(conn))

    thread = threading.Thread(target=read_elsewhere)
    thread.start()
    thread.join()
    assert other[0] in (first, second)


@pytest.mark.parametrize("last_read", ["through SQLAlchemy", "on the driver"])
def test_a_kept_read_connection_holds_no_transaction_between_reads(
        pg_reads: tuple[sa.Engine, Any], last_read: str) -> None:
    """Between reads the connection is idle, not idle in a transaction: a transaction kept open
    would hold its locks (a dropped table would wait for it) and its snapshot. A read on the
    driver ends without a rollback of its own, one through SQLAlchemy with one."""
    engine, reads = pg_reads
    with reads.connection() as conn:
        pid = _backend_pid(conn)
    if last_read == "on the driver":
        read = sa.select(sa.cast(sa.bindparam("one", 1), sa.Integer))
        for _ in range(2):  # a statement's second read runs on the driver
            with reads.connection() as conn:
                result = conn.execute(read)
                assert result.scalar() == 1
        assert type(result).__name__ == "ReadRows"  # it did run there
    with engine.connect() as watcher:
        state = watcher.execute(sa.text("select state from pg_stat_activity where pid = :p"),
                                {"p": pid}).scalar_one()
    assert state == "idle"


@pytest.mark.parametrize("lost_read", ["through SQLAlchemy", "on the driver"])
def test_a_refusal_keeps_the_connection_and_a_lost_one_is_replaced(
        pg_reads: tuple[sa.Engine, Any], lost_read: str) -> None:
    """The store's own refusal inside a read keeps the connection; a connection the server
    dropped fails its read (SQLAlchemy's error, whichever way the read ran), and the next read
    connects afresh."""
    engine, reads = pg_reads
    with reads.connection() as conn:
        first = _backend_pid(conn)
    with pytest.raises(LookupError), reads.connection():
        raise LookupError("the store's own refusal (not found)")
    with reads.connection() as conn:
        assert _backend_pid(conn) == first
    read = (sa.text("select 1") if lost_read == "through SQLAlchemy"
            else sa.select(sa.cast(sa.bindparam("one", 1), sa.Integer)))
    with reads.connection() as conn:  # a statement's second read runs on the driver
        assert conn.execute(read).scalar() == 1
    with engine.connect() as admin:
        admin.execute(sa.text("select pg_terminate_backend(:p)"), {"p": first})
    with pytest.raises(sa.exc.OperationalError), reads.connection() as conn:
        conn.execute(read)
    with reads.connection() as conn:
        assert _backend_pid(conn) != first


def test_close_closes_the_idle_connections_and_a_busy_one_when_its_read_ends(
        tmp_path: Path) -> None:
    from fencepost.adapters.sql import ReadConnections

    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    reads = ReadConnections(engine)
    with reads.connection() as busy:
        with reads.connection() as idle:
            idle.execute(sa.text("select 1"))
        reads.close()
        assert idle.closed and not busy.closed
        busy.execute(sa.text("select 1"))
    assert busy.closed
    engine.dispose()


def test_threads_that_come_and_go_leave_no_connection_behind(tmp_path: Path) -> None:
    """Racing threads are new in every round; the connections stay as many as the reads that
    ran at once, not one per thread that ever read."""
    from fencepost.adapters.sql import ReadConnections

    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    reads = ReadConnections(engine)
    seen: set[int] = set()

    def read() -> None:
        with reads.connection() as conn:
            conn.execute(sa.text("select 1"))
            seen.add(id(conn))

    for _ in range(40):
        thread = threading.Thread(target=read)
        thread.start()
        thread.join()
    assert len(seen) == 1
    reads.close()
    engine.dispose()


def test_sqlite_databases_are_opened_in_wal_mode(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar_one() == 1  # NORMAL
    finally:
        engine.dispose()


def _write_one(contract_name: str, store: Any) -> None:
    """One record written through ``store``'s contract."""
    if contract_name == "adk-ledger":
        store.create("i1", {"kind": "agent"}, {"n": 0})
    elif contract_name == "ledgence-tasks":
        from fencepost.spec import ledgence_tasks as spec
        store.open_session(spec.Scope("tenant-a", "prod"), "emails", 1)
    else:
        from test_adapters_snodo_tasks import create
        create(store, "t1")


def _rows(engine: sa.Engine, slot: str) -> dict[str, int]:
    """The rows of each table of ``slot`` (``fp_<slot>_...``)."""
    inspector = sa.inspect(engine)
    inspector.clear_cache()
    with engine.connect() as conn:
        return {name: conn.execute(sa.text(f'SELECT COUNT(*) FROM "{name}"')).scalar_one()
                for name in inspector.get_table_names()
                # not those of the slot "<slot>_1"
                if name.startswith(f"fp_{slot}_") and not name[len(f"fp_{slot}_"):][0].isdigit()}


@pytest.mark.parametrize("contract_name", ["adk-ledger", "snodo-tasks", "ledgence-tasks"])
def test_a_reopened_store_reads_no_catalog_and_a_discarded_namespaces_tables_serve_the_next(
        tmp_path: Path, contract_name: str) -> None:
    """A store of a namespace this engine already made sure of opens without a statement. A
    discarded namespace's tables are emptied and kept: the next namespace opened takes them
    and makes no table; a namespace opened again after its discard takes tables of its own;
    discarding it twice touches nobody else's; the factory's close drops the kept tables."""
    from fencepost.adapter_spec import resolve_adapter
    from fencepost.scenarios.clock import SimClock
    from fencepost.spec.env import AdapterEnv

    factory, _ = resolve_adapter(contract_name, f"sqlite:///{tmp_path / 'db.sqlite'}")
    first = AdapterEnv(clock=SimClock(1000).now, namespace="reopen")
    second = AdapterEnv(clock=SimClock(1000).now, namespace="next")
    statements: list[str] = []
    sa.event.listen(factory.engine, "before_cursor_execute",
                    lambda _c, _cur, statement, *_a: statements.append(statement))

    def made_tables(since: int) -> bool:
        return any(s.lstrip().upper().startswith("CREATE TABLE") for s in statements[since:])

    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        factory(first).close()
        made = len(statements)
        assert made_tables(0)
        store = factory(first)
        assert len(statements) == made, statements[made:]
        _write_one(contract_name, store)
        store.close()
        assert sum(_rows(engine, "reopen").values()) > 0
        factory.discard(first)
        tables = _rows(engine, "reopen")
        assert tables and set(tables.values()) == {0}  # emptied, kept
        emptied = len(statements)
        store = factory(second)
        assert factory.slot_of("next") == "reopen" and not made_tables(emptied)
        _write_one(contract_name, store)  # the same record again: nothing was left of it
        store.close()
        written = sum(_rows(engine, "reopen").values())
        again = factory(first)
        assert factory.slot_of("reopen") == "reopen_1" and made_tables(emptied)
        again.close()
        factory.discard(first)
        factory.discard(first)  # twice: the second finds nothing of its own to drop
        assert sum(_rows(engine, "reopen").values()) == written  # the next namespace's rows
        factory.discard(second)
        assert set(_rows(engine, "reopen").values()) == {0}
    finally:
        factory.close()
    left = [n for n in sa.inspect(engine).get_table_names() if n.startswith("fp_reopen")]
    engine.dispose()
    assert left == []


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_namespace_dropped_through_another_factory_leaves_no_registry_row(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A namespace one factory opened and another (on the same database) discards is dropped
    with its row of the registry: ``fencepost clean`` finds nothing of it afterwards."""
    from fencepost.adapter_spec import resolve_adapter
    from fencepost.adapters.sql import REGISTRY, registry_table
    from fencepost.scenarios.clock import SimClock
    from fencepost.spec.env import AdapterEnv

    engine = _engine_for(backend, request, tmp_path)
    url = engine.url.render_as_string(hide_password=False)
    opener, _ = resolve_adapter("adk-ledger", url)
    dropper, _ = resolve_adapter("adk-ledger", url)
    env = AdapterEnv(clock=SimClock(1000).now, namespace=f"elsewhere_{os.getpid()}")
    registry = registry_table(sa.MetaData())

    def rows() -> list[str]:
        with engine.connect() as conn:
            return [r.namespace for r in conn.execute(
                sa.select(registry).where(registry.c.namespace == env.namespace))]

    try:
        _write_one("adk-ledger", opener(env))
        assert rows() == [env.namespace]
        dropper.discard(env)
        assert rows() == []
        assert _rows(engine, env.namespace) == {}
        assert sa.inspect(engine).has_table(REGISTRY)
    finally:
        opener.close()
        dropper.close()
        engine.dispose()


def test_a_reopened_store_reads_on_the_connection_the_closed_one_left_idle(
        tmp_path: Path) -> None:
    """Stores of one engine share its read connections: a store reopened after a read checks
    no connection out of the pool for its first read; the factory's close closes them (the
    next store's read connects again)."""
    from fencepost.adapter_spec import resolve_adapter
    from fencepost.scenarios.clock import SimClock
    from fencepost.spec.adk_ledger import NotFound
    from fencepost.spec.env import AdapterEnv

    factory, _ = resolve_adapter("adk-ledger", f"sqlite:///{tmp_path / 'db.sqlite'}")
    env = AdapterEnv(clock=SimClock(1000).now, namespace="shared_reads")
    checkouts: list[object] = []
    sa.event.listen(factory.engine, "checkout", lambda *a: checkouts.append(a[0]))

    def read_once() -> None:
        store = factory(env)
        with pytest.raises(NotFound):
            store.get("missing")
        store.close()

    try:
        read_once()
        first = len(checkouts)
        assert first >= 1
        read_once()
        read_once()
        assert len(checkouts) == first  # the idle read connection served both reopened stores
    finally:
        factory.discard(env)
        factory.close()
    after_close = len(checkouts)
    read_once()
    assert len(checkouts) > after_close  # closed with the factory: the read connects anew
    factory.discard(env)
    factory.close()


# --- reads on the driver -------------------------------------------------------------------------


def _engine_for(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> sa.Engine:
    if backend == "sqlite":
        return make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    return make_engine(request.getfixturevalue("pg_url"))


@pytest.fixture(params=["sqlite", "postgresql"])
def sample(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[sa.Engine, sa.Table]]:
    """A table with text, integer and JSON columns and two rows, on each backend."""
    engine = _engine_for(request.param, request, tmp_path)
    table = sa.Table(f"fp_test_reads_{os.getpid()}", sa.MetaData(),
                     sa.Column("id", sa.String(20), primary_key=True),
                     sa.Column("n", sa.BigInteger), sa.Column("doc", sa.JSON))
    table.drop(engine, checkfirst=True)
    table.create(engine)
    with engine.begin() as conn:
        conn.execute(table.insert(), [{"id": "a", "n": 1, "doc": {"k": [1, 2.5, None, "x"]}},
                                      {"id": "b", "n": 2, "doc": None}])
    yield engine, table
    table.drop(engine)
    engine.dispose()


def test_a_prebuilt_select_runs_on_the_driver_and_answers_as_sqlalchemy(
        sample: tuple[sa.Engine, sa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    """From a statement's second read on, text and integer columns are read on the driver
    everywhere, a JSON column on SQLite (decoded by the JSON type's own processor); on a server
    a JSON column goes through SQLAlchemy. Each answer equals SQLAlchemy's: rows, mappings,
    scalar, a column by name."""
    from fencepost.adapters.sql import ReadConnections

    engine, t = sample
    by_id = sa.select(t).where(t.c.id == sa.bindparam("id"))
    plain = sa.select(t.c.id, t.c.n).where(t.c.n >= sa.bindparam("least")).order_by(t.c.n)
    reads = ReadConnections(engine)
    expected: dict[int, tuple[list[tuple[Any, ...]], dict[str, Any]]] = {}
    cases = ((by_id, {"id": "a"}), (by_id, {"id": "b"}), (plain, {"least": 1}),
             (by_id, {"id": "none"}))
    for k, (stmt, params) in enumerate(cases):
        with engine.connect() as conn:
            expected[k] = ([tuple(r) for r in conn.execute(stmt, params)],
                           dict(conn.execute(stmt, params).mappings().first() or {}))
    through_sqlalchemy: list[Any] = []
    execute = sa.Connection.execute

    def counted(self: sa.Connection, statement: Any, *args: Any, **kwargs: Any) -> Any:
        through_sqlalchemy.append(statement)
        return execute(self, statement, *args, **kwargs)

    monkeypatch.setattr(sa.Connection, "execute", counted)
    for k, (stmt, params) in enumerate(cases):
        rows, first = expected[k]
        with reads.connection() as conn:
            assert [tuple(r) for r in conn.execute(stmt, params)] == rows
            assert (conn.execute(stmt, params).mappings().first() or {}) == first
            assert conn.execute(stmt, params).scalar() == (rows[0][0] if rows else None)
            found = conn.execute(stmt, params).first()  # SQLAlchemy's Row, by column name
            assert (found.n if found is not None else None) == (rows[0][1] if rows else None)
            assert [tuple(r) for r in conn.execute(stmt, params).all()] == rows
            assert list(conn.execute(stmt, params).scalars()) == [r[0] for r in rows]
    monkeypatch.undo()
    reads.close()
    assert expected[2][0] == [("a", 1), ("b", 2)] and expected[3] == ([], {})
    # Each statement's first read; on a server every read of the one with a JSON column.
    on_server = engine.dialect.name != "sqlite"
    assert len(through_sqlalchemy) == (1 + 3 * 6 if on_server else 2), through_sqlalchemy


def test_a_read_fails_where_the_fault_injector_arms_it_on_the_driver_path_too(
        tmp_path: Path) -> None:
    """The kit's fault injection counts and fails statements in SQLAlchemy's hook: while it
    listens, a read that would run on the driver goes through SQLAlchemy, so a store's read
    still meets the injected failure (and answers unavailable)."""
    from fencepost.adapter_spec import resolve_adapter
    from fencepost.scenarios.clock import SimClock
    from fencepost.scenarios.injection import STATEMENT, Fault, FaultInjector
    from fencepost.spec.env import AdapterEnv
    from fencepost.spec.errors import BackendUnavailable

    factory, _ = resolve_adapter("adk-ledger", f"sqlite:///{tmp_path / 'db.sqlite'}")
    env = AdapterEnv(clock=SimClock(1000).now, namespace="faults")
    store = factory(env)
    try:
        store.create("i1", {"workflow_id": "wf", "workflow_version": 1, "kind": "agent"}, {})
        for _ in range(2):  # the read's statement is now one the driver runs
            assert store.get("i1").invocation_id == "i1"
        with FaultInjector(store.engine) as injector:
            with injector.armed(Fault(STATEMENT, 1)) as tally, \
                    pytest.raises(BackendUnavailable, match="injected by fencepost"):
                store.get("i1")
            assert tally.fired and tally.statements == 1
        assert store.get("i1").invocation_id == "i1"
    finally:
        store.close()
        factory.discard(env)
        factory.close()


def test_a_driver_error_is_sqlalchemys_and_its_connection_is_not_kept(tmp_path: Path) -> None:
    from fencepost.adapters.sql import ReadConnections, unavailable_on_disconnect
    from fencepost.spec.errors import BackendUnavailable

    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    table = sa.Table("fp_gone", sa.MetaData(), sa.Column("id", sa.String, primary_key=True))
    table.create(engine)
    read = sa.select(table.c.id).where(table.c.id == sa.bindparam("id"))
    reads = ReadConnections(engine)
    for _ in range(2):  # from the second read on, on the driver
        with reads.connection() as conn:
            assert conn.execute(read, {"id": "x"}).first() is None
    table.drop(engine)
    with pytest.raises(BackendUnavailable, match="no such table: fp_gone"), \
            unavailable_on_disconnect(), reads.connection() as conn:
        kept = conn
        conn.execute(read, {"id": "x"})
    assert kept.closed
    with reads.connection() as conn:
        assert conn is not kept
    reads.close()
    engine.dispose()


def test_prepared_statements_are_kept_within_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    # A prepared statement holds its statement and its tables: a run that makes tables per
    # namespace (a tour: one per sequence) must not keep every one it ever made.
    from fencepost.adapters import sql

    monkeypatch.setattr(sql, "PREPARED_KEPT", 8)
    monkeypatch.setattr(sql, "_PREPARED", sql.OrderedDict())
    dialect = sa.create_engine("sqlite://").dialect
    first = sa.select(sa.table("t0", sa.column("x")).c.x)
    gone = weakref.ref(first)
    for statement in [first, *(sa.select(sa.table(f"t{i}", sa.column("x")).c.x)
                                for i in range(1, 20))]:
        assert sql._prepared(statement, dialect) is None  # the first read: SQLAlchemy runs it
        assert sql._prepared(statement, dialect) is not None  # from the second on: prepared
    assert len(sql._PREPARED) == 8
    del first, statement
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("contract", ["adk-ledger", "snodo-tasks", "ledgence-tasks"])
def test_a_factory_whose_first_open_found_no_database_opens_once_there_is_one(
        contract: str, tmp_path: Path) -> None:
    """The database is unreachable at a factory's first open (its folder is missing): that
    open answers backend_unavailable, and once the folder is there the same factory opens a
    working store (it used to take the registry for made, and answered "no such table" for
    good)."""
    from fencepost.registry import contract_named
    from fencepost.scenarios.clock import SimClock
    from fencepost.spec.env import AdapterEnv
    from fencepost.spec.errors import ContractError

    missing = tmp_path / "not-yet"  # the CLI refuses such a path; a factory made in code not
    factory = contract_named(contract).sql_factory(f"sqlite:///{missing}/fp.db")
    env = AdapterEnv(clock=SimClock(1000).now, namespace=f"late_{os.getpid()}")
    try:
        with pytest.raises(ContractError) as refused:
            factory(env)
        assert refused.value.code == "backend_unavailable"
        missing.mkdir()
        store = factory(env)
        _write_one(contract, store)
        store.close()
    finally:
        factory.close()
