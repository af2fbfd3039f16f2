"""Fault injection (issue 6): the injector really fails statements and drops connections on
SQLite and PostgreSQL; the built-in SQL stores pass every fault clause on both; every store
that mishandles a database failure is caught by its clause."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc

from fencepost.adapter_spec import TempSqliteFactory
from fencepost.adapters.adk_ledger.mutants import db_failures as adk_faults
from fencepost.adapters.ledgence_tasks.mutants import db_failures as ledgence_faults
from fencepost.adapters.snodo_tasks.mutants import db_failures as snodo_faults
from fencepost.adapters.sql import make_engine
from fencepost.model.base import options_with_defaults
from fencepost.mutants import mutant_factory, run_mutants
from fencepost.registry import contract_named, contract_names
from fencepost.reports.verdict import ClauseVerdict, judge
from fencepost.scenarios.clock import SimClock
from fencepost.scenarios.harness import World
from fencepost.scenarios.injection import (
    COMMIT_UNCERTAIN,
    DROP_BEFORE_COMMIT,
    FAULT_INJECTION,
    STATEMENT,
    Fault,
    FaultInjector,
    found_capabilities,
)
from fencepost.scenarios.phases import run_faults
from fencepost.scenarios.runner import CLOCK_START

# --- the injector ---------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/faults.db"
    else:
        url = request.getfixturevalue("pg_url")
    engine = make_engine(url)
    table = _table()
    table.create(engine)
    try:
        yield engine
    finally:
        table.drop(engine)
        engine.dispose()


TABLE = f"fp_test_faults_{os.getpid()}"
"""This process's table: the suite runs in several processes (pytest -n) on one database."""


def _table() -> sa.Table:
    return sa.Table(TABLE, sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True))


def _insert(engine: sa.Engine, row: int) -> BaseException | None:
    """One transaction: read the row, insert it; the error it raised, if any."""
    table = _table()
    try:
        with engine.begin() as conn:
            conn.execute(sa.select(table.c.id).where(table.c.id == row)).first()
            conn.execute(table.insert().values(id=row))
    except exc.SQLAlchemyError as e:
        return e
    return None


def _present(engine: sa.Engine, row: int) -> bool:
    table = _table()
    with engine.connect() as conn:
        return conn.execute(sa.select(table.c.id).where(table.c.id == row)).first() is not None


def test_a_clean_call_is_counted_and_untouched(engine: sa.Engine) -> None:
    with FaultInjector(engine) as injector, injector.armed(None) as tally:
        assert _insert(engine, 1) is None
    begin = 1 if engine.dialect.name == "sqlite" else 0  # SQLite's BEGIN IMMEDIATE is a statement
    assert (tally.statements, tally.commits, tally.fired) == (2 + begin, 1, False)
    assert _present(engine, 1)


@pytest.mark.parametrize("at", [1, 2, 3])
def test_a_failed_statement_is_the_drivers_error_and_writes_nothing(engine: sa.Engine,
                                                                   at: int) -> None:
    with FaultInjector(engine) as injector, injector.armed(Fault(STATEMENT, at)) as tally:
        error = _insert(engine, 2)
    statements = 2 + (engine.dialect.name == "sqlite")
    if at > statements:
        assert (error, tally.fired) == (None, False)
        return
    assert isinstance(error, exc.OperationalError), error
    assert isinstance(error.orig, engine.dialect.loaded_dbapi.OperationalError)
    assert "injected by fencepost" in str(error.orig)
    assert not error.connection_invalidated
    assert (tally.statements, tally.commits, tally.fired) == (at, 0, True)
    assert not _present(engine, 2)


def test_a_connection_dropped_before_commit_commits_nothing(engine: sa.Engine) -> None:
    with FaultInjector(engine) as injector, injector.armed(Fault(DROP_BEFORE_COMMIT, 1)) as tally:
        error = _insert(engine, 3)
    assert isinstance(error, exc.DBAPIError) and error.connection_invalidated, error
    assert (tally.commits, tally.fired) == (1, True)
    assert not _present(engine, 3)
    assert _insert(engine, 4) is None  # the pool replaced the dropped connection


def test_an_uncertain_commit_commits_but_the_caller_gets_an_error(engine: sa.Engine) -> None:
    with FaultInjector(engine) as injector, injector.armed(Fault(COMMIT_UNCERTAIN, 1)) as tally:
        error = _insert(engine, 5)
    assert isinstance(error, exc.DBAPIError) and error.connection_invalidated, error
    assert tally.fired
    assert _present(engine, 5)


def test_an_armed_fault_leaves_other_threads_and_later_calls_alone(engine: sa.Engine) -> None:
    errors: list[BaseException | None] = []
    with FaultInjector(engine) as injector, injector.armed(Fault(STATEMENT, 1)) as tally:
        other = threading.Thread(target=lambda: errors.append(_insert(engine, 6)))
        other.start()
        other.join()
    assert errors == [None] and tally.statements == 0
    with FaultInjector(engine) as injector:
        with injector.armed(Fault(STATEMENT, 1)):
            assert _insert(engine, 7) is not None
        assert _insert(engine, 7) is None  # disarmed after its block
    assert not sa.event.contains(engine, "before_cursor_execute", injector._before_execute)
    assert not sa.event.contains(engine, "commit", injector._commit)


# --- the fault clauses ----------------------------------------------------------------------------


def _fault_verdicts(name: str, factory: Any) -> dict[str, ClauseVerdict]:
    """Run only the fault checks of contract ``name`` against ``factory``'s store."""
    suite = contract_named(name).suite
    world = World(model=suite.model, factory=factory, clock=SimClock(CLOCK_START),
                  namespace=f"tf{uuid.uuid4().hex[:8]}",
                  options=options_with_defaults(suite.model.choices, {}, suite.model.settings))
    try:
        store = world.open()
        world.capabilities = frozenset(store.capabilities) | found_capabilities(store)
        run_faults(suite, world, lambda _: None, lambda _: False)
    finally:
        world.discard()
        close = getattr(factory, "close", None)
        if close is not None:
            close()
    verdicts = judge(suite.clauses, world.evidence, world.capabilities, {})
    return {v.clause.id: v for v in verdicts if FAULT_INJECTION in v.clause.requires}


def _fault_clauses(name: str) -> set[str]:
    return {c.id for c in contract_named(name).clauses if FAULT_INJECTION in c.requires}


@pytest.mark.parametrize("name", contract_names())
def test_the_sqlite_store_passes_every_fault_clause(name: str) -> None:
    verdicts = _fault_verdicts(name, TempSqliteFactory(contract_named(name)))
    assert {c: v.status for c, v in verdicts.items()} == dict.fromkeys(_fault_clauses(name),
                                                                       "pass")
    assert all(v.evidence >= 20 for v in verdicts.values()), verdicts


@pytest.mark.parametrize("name", contract_names())
def test_the_postgresql_store_passes_every_fault_clause(name: str, pg_url: str) -> None:
    verdicts = _fault_verdicts(name, contract_named(name).sql_factory(pg_url))
    assert {c: v.status for c, v in verdicts.items()} == dict.fromkeys(_fault_clauses(name),
                                                                       "pass")


def test_a_store_without_an_engine_has_no_fault_injection() -> None:
    entry = contract_named("adk-ledger")
    world = World(model=entry.suite.model, factory=entry.memory_factory(),
                  clock=SimClock(CLOCK_START), namespace="tfmem", options={})
    try:
        assert found_capabilities(world.open()) == frozenset()
    finally:
        world.discard()


MUTANTS = [(name, m) for name, group in (("adk-ledger", adk_faults.MUTANTS),
                                         ("snodo-tasks", snodo_faults.MUTANTS),
                                         ("ledgence-tasks", ledgence_faults.MUTANTS))
           for m in group]


@pytest.mark.parametrize(("name", "mutant"), MUTANTS, ids=[f"{n}:{m.name}" for n, m in MUTANTS])
def test_a_store_that_mishandles_a_database_failure_is_caught(name: str, mutant: Any) -> None:
    assert mutant in contract_named(name).mutants
    verdicts = _fault_verdicts(name, mutant_factory(contract_named(name), mutant, "sqlite"))
    failed = verdicts[mutant.expected_clause]
    assert failed.status == "fail", (mutant.name, {c: v.status for c, v in verdicts.items()})
    assert failed.failure is not None
    assert any(step.note.startswith("fault armed: ") for step in failed.failure.trace)


def test_the_counterexample_shows_the_fault_and_the_records() -> None:
    ledger = contract_named("adk-ledger")
    [ignored] = [m for m in adk_faults.MUTANTS if m.name == "commit_failure_ignored"]
    failure = _fault_verdicts("adk-ledger", mutant_factory(ledger, ignored, "sqlite"))[
        "ADK-FAULT-002"].failure
    assert failure is not None
    assert failure.check == "fault:create"
    assert failure.message.startswith(
        "after create met a fault (the connection drops before COMMIT 1 of the call) and "
        "answered ok, the store's records are not the state after it")
    rendered = failure.render()
    assert "kit: fault armed: the connection drops before COMMIT 1 of the call" in rendered
    assert "model: ok(Invocation(" in rendered
    assert "store: error not_found   <-- differs" in rendered


def test_a_leaked_driver_error_fails_the_surfacing_clause() -> None:
    """A store that lets SQLAlchemy's exception escape instead of ``backend_unavailable``."""
    from fencepost.adapters.adk_ledger.sql import SqlLedger
    from fencepost.spec.errors import BackendUnavailable

    class Leaky(SqlLedger):
        @contextmanager
        def _locked(self, invocation_id: str) -> Iterator[Any]:
            try:
                with super()._locked(invocation_id) as slot:
                    yield slot
            except BackendUnavailable as e:
                raise e.__cause__ from None  # type: ignore[misc]

    ledger = contract_named("adk-ledger")
    verdicts = _fault_verdicts("adk-ledger", TempSqliteFactory(ledger, Leaky))
    failure = verdicts["ADK-FAULT-001"].failure
    assert failure is not None
    assert failure.message.startswith(
        "create met a fault (statement 1 of the call fails) and raised OperationalError: "
        "(sqlite3.OperationalError) database is locked (injected by fencepost)"), failure.message
    assert "must answer backend_unavailable" in failure.message


def test_the_mutants_command_catches_a_fault_mutant_end_to_end() -> None:
    [row] = run_mutants("adk-ledger", base="sqlite", only=["db_error_is_not_found"])
    assert row.caught and row.caught_by == ["ADK-FAULT-001"], row
