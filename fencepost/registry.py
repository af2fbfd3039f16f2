"""Contracts by name, and adapter specs (``memory``, ``sqlite``, URLs, ``MODULE:FACTORY``)."""

from __future__ import annotations

import importlib
import shutil
import tempfile
from collections.abc import Callable
from typing import Any, cast

import attrs

from .env import AdapterEnv
from .errors import ConfigurationError

Factory = Callable[[AdapterEnv], Any]


@attrs.frozen
class ContractEntry:
    """Where a contract's pieces live (imported on first use, so ``list`` stays fast)."""

    name: str
    summary: str
    spec_module: str
    suite: str
    memory: str
    sql: str | None
    memory_store: str
    sql_store: str | None
    faulty: str | None

    def load_suite(self) -> Any:
        return _attr(self.suite)

    def load_spec(self) -> Any:
        return importlib.import_module(self.spec_module)

    def memory_factory(self, store_class: Any = None) -> Factory:
        cls = _attr(self.memory)
        return cls() if store_class is None else cls(store_class)  # type: ignore[no-any-return]

    def sql_factory(self, url: str, store_class: Any = None) -> Factory:
        if self.sql is None:
            raise ConfigurationError(
                f"{self.name} has no SQL store yet (work in progress); use --adapter memory "
                "or your own MODULE:FACTORY"
            )
        cls = _attr(self.sql)
        return cls(url) if store_class is None else cls(url, store_class)  # type: ignore[no-any-return]

    def store_class(self, base: str) -> Any:
        """The correct store class a known-faulty adapter is built on."""
        path = self.memory_store if base == "memory" else self.sql_store
        if path is None:
            raise ConfigurationError(f"{self.name} has no {base} store yet")
        return _attr(path)

    def mutants(self) -> Any:
        return _attr(self.faulty) if self.faulty is not None else ()


def _attr(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


CONTRACTS = {
    "adk-ledger": ContractEntry(
        name="adk-ledger",
        summary="erlang_adk durable invocation ledger: create/claim/renew/checkpoint/finish/delete",
        spec_module="fencepost.spec.adk_ledger",
        suite="fencepost.scenarios.adk_ledger.suite:SUITE",
        memory="fencepost.adapters.adk_ledger.memory:MemoryLedgerFactory",
        sql="fencepost.adapters.adk_ledger.sql:SqlLedgerFactory",
        memory_store="fencepost.adapters.adk_ledger.memory:MemoryLedger",
        sql_store="fencepost.adapters.adk_ledger.sql:SqlLedger",
        faulty="fencepost.adapters.faulty.adk_ledger:MUTANTS",
    ),
    "snodo-tasks": ContractEntry(
        name="snodo-tasks",
        summary="snodo Tasks store: scoped accesses, generation-fenced leases, revisioned "
        "events, retries, TTL reaping",
        spec_module="fencepost.spec.snodo_tasks",
        suite="fencepost.scenarios.snodo_tasks.suite:SUITE",
        memory="fencepost.adapters.snodo_tasks.memory:MemoryTasksFactory",
        sql="fencepost.adapters.snodo_tasks.sql:SqlTasksFactory",
        memory_store="fencepost.adapters.snodo_tasks.memory:MemoryTasks",
        sql_store="fencepost.adapters.snodo_tasks.sql:SqlTasks",
        faulty="fencepost.adapters.faulty.snodo_tasks:MUTANTS",
    ),
    "ledgence-tasks": ContractEntry(
        name="ledgence-tasks",
        summary="ledgence TaskStore + RecoveryStore: sessions, sequenced acquisition, renewal, "
        "settlement, quiescence, cancel, recovery, history",
        spec_module="fencepost.spec.ledgence_tasks",
        suite="fencepost.scenarios.ledgence_tasks.suite:SUITE",
        memory="fencepost.adapters.ledgence_tasks.memory:MemoryLedgenceFactory",
        sql="fencepost.adapters.ledgence_tasks.sql:SqlLedgenceFactory",
        memory_store="fencepost.adapters.ledgence_tasks.memory:MemoryLedgence",
        sql_store="fencepost.adapters.ledgence_tasks.sql:SqlLedgence",
        faulty="fencepost.adapters.faulty.ledgence_tasks:MUTANTS",
    ),
}

ADAPTER_FORMS = (
    "memory",
    "sqlite",
    "sqlite:///PATH",
    "postgresql://USER@HOST:PORT/DB",
    "postgresql+psycopg://...",
    "MODULE:FACTORY",
)


def contract(name: str) -> ContractEntry:
    try:
        return CONTRACTS[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown contract {name!r}; choose one of {', '.join(CONTRACTS)}"
        ) from None


class TempSqliteFactory:
    """The ``sqlite`` adapter: a database file in a private temporary directory, removed at
    the end of the run (``close``)."""

    def __init__(self, entry: ContractEntry, store_class: Any = None) -> None:
        self.directory = tempfile.mkdtemp(prefix="fencepost-")
        self.url = f"sqlite:///{self.directory}/ledger.db"
        self.inner = entry.sql_factory(self.url, store_class)

    def __call__(self, env: AdapterEnv) -> Any:
        return self.inner(env)

    def discard(self, env: AdapterEnv) -> None:
        """Drop one namespace's tables."""
        discard = getattr(self.inner, "discard", None)
        if discard is not None:
            discard(env)

    def close(self) -> None:
        """Close the database and remove the temporary directory (the end of the run)."""
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()
        shutil.rmtree(self.directory, ignore_errors=True)


def resolve_adapter(contract_name: str, spec: str | Factory) -> tuple[Factory, str]:
    """Turn an adapter spec into ``(factory, display name)``; raise ConfigurationError with
    what to write instead when the spec is bad or its server unreachable."""
    entry = contract(contract_name)
    if callable(spec):
        return spec, getattr(spec, "__qualname__", repr(spec))
    if spec == "memory":
        return entry.memory_factory(), "memory"
    if spec == "sqlite":
        return TempSqliteFactory(entry), "sqlite"
    if spec.startswith("sqlite:///"):
        return entry.sql_factory(spec), spec
    if spec.startswith(("postgresql://", "postgresql+psycopg://", "postgres://")):
        _probe(spec)
        return entry.sql_factory(spec), spec
    if "://" not in spec and ":" in spec:
        return _import_factory(spec), spec
    raise ConfigurationError(
        f"cannot understand adapter {spec!r}; use one of: {', '.join(ADAPTER_FORMS)}"
    )


def _probe(url: str) -> None:
    from fencepost.adapters.sql import probe
    from fencepost.spec.errors import BackendUnavailable

    try:
        probe(url)
    except BackendUnavailable as e:
        reason = str(e).strip().splitlines()[0]
        raise ConfigurationError(f"cannot reach the database at {url}: {reason}") from None
    except Exception as e:  # noqa: BLE001 - bad URL, missing driver, ...
        raise ConfigurationError(f"cannot use the database URL {url}: {e}") from None


def _import_factory(spec: str) -> Factory:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigurationError(
            f"cannot import module {module_name!r} for adapter {spec!r} ({e}); "
            "is its directory on PYTHONPATH?"
        ) from None
    except Exception as e:  # noqa: BLE001 - the user's module failed at import
        raise ConfigurationError(
            f"importing {module_name!r} raised {type(e).__name__}: {e}"
        ) from None
    factory: Any = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise ConfigurationError(f"module {module_name!r} has no attribute {attr!r}")
    if not callable(factory):
        raise ConfigurationError(f"{spec!r} is not callable; it must be factory(env) -> store")
    return cast(Factory, factory)


