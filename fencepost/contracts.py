"""The three built-in contracts, declared as any contract is (see :mod:`fencepost.contract`):
each function is the target of an entry point of the ``fencepost.contracts`` group in
``pyproject.toml`` and imports its contract's pieces only when called (the SQL store, and with
it SQLAlchemy, only when a run asks for it)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from .contract import Contract


def _sql(module: str, factory: str, store: str) -> Callable[[], tuple[Any, type]]:
    """A ``sql_loader``: ``module``'s SQL factory and store classes, imported when called."""
    def load() -> tuple[Any, type]:
        found = importlib.import_module(module)
        return getattr(found, factory), getattr(found, store)

    return load


def adk_ledger() -> Contract:
    """erlang_adk's durable invocation ledger."""
    from fencepost.adapters.adk_ledger.memory import MemoryLedger, MemoryLedgerFactory
    from fencepost.adapters.adk_ledger.mutants import MUTANTS
    from fencepost.adapters.adk_ledger.mutants.deep import DEEP
    from fencepost.scenarios.adk_ledger.suite import SUITE
    from fencepost.spec import adk_ledger as spec

    return Contract(
        name="adk-ledger",
        summary="erlang_adk durable invocation ledger: create/claim/renew/checkpoint/finish/"
        "delete",
        spec=spec, suite=SUITE,
        memory=MemoryLedgerFactory, memory_store=MemoryLedger,
        sql_loader=_sql("fencepost.adapters.adk_ledger.sql", "SqlLedgerFactory", "SqlLedger"),
        mutants=tuple(MUTANTS), deep=DEEP,
    )


def snodo_tasks() -> Contract:
    """snodo's Tasks store."""
    from fencepost.adapters.snodo_tasks.memory import MemoryTasks, MemoryTasksFactory
    from fencepost.adapters.snodo_tasks.mutants import MUTANTS
    from fencepost.adapters.snodo_tasks.mutants.deep import DEEP
    from fencepost.scenarios.snodo_tasks.suite import SUITE
    from fencepost.spec import snodo_tasks as spec

    return Contract(
        name="snodo-tasks",
        summary="snodo Tasks store: scoped accesses, generation-fenced leases, revisioned "
        "events, retries, TTL reaping",
        spec=spec, suite=SUITE,
        memory=MemoryTasksFactory, memory_store=MemoryTasks,
        sql_loader=_sql("fencepost.adapters.snodo_tasks.sql", "SqlTasksFactory", "SqlTasks"),
        mutants=tuple(MUTANTS), deep=DEEP,
    )


def ledgence_tasks() -> Contract:
    """ledgence's TaskStore and RecoveryStore."""
    from fencepost.adapters.ledgence_tasks.memory import MemoryLedgence, MemoryLedgenceFactory
    from fencepost.adapters.ledgence_tasks.mutants import MUTANTS
    from fencepost.adapters.ledgence_tasks.mutants.deep import DEEP
    from fencepost.scenarios.ledgence_tasks.suite import SUITE
    from fencepost.spec import ledgence_tasks as spec

    return Contract(
        name="ledgence-tasks",
        summary="ledgence TaskStore + RecoveryStore: sessions, sequenced acquisition, renewal, "
        "settlement, quiescence, cancel, recovery, history",
        spec=spec, suite=SUITE,
        memory=MemoryLedgenceFactory, memory_store=MemoryLedgence,
        sql_loader=_sql("fencepost.adapters.ledgence_tasks.sql", "SqlLedgenceFactory",
                        "SqlLedgence"),
        mutants=tuple(MUTANTS), deep=DEEP,
    )
