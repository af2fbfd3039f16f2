"""Contracts by name, and adapter specs (``memory``, ``sqlite``, URLs, ``MODULE:FACTORY``)."""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
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

    def require_sql(self) -> None:
        """Raise ConfigurationError when the contract has no SQL store to run on."""
        if self.sql is None:
            raise ConfigurationError(
                f"{self.name} has no SQL store yet (work in progress); use --adapter memory "
                "or your own MODULE:FACTORY"
            )

    def sql_factory(self, url: str, store_class: Any = None) -> Factory:
        self.require_sql()
        assert self.sql is not None
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
    the end of the run (``close``).

    The directory is made when the first store is opened, not before: a run that stops at a
    configuration error (a bad option, a store missing methods) before opening one leaves
    nothing behind, and neither does resolving the spec only to validate it."""

    def __init__(self, entry: ContractEntry, store_class: Any = None) -> None:
        entry.require_sql()
        self.entry = entry
        self.store_class = store_class
        self.directory: str | None = None
        self.inner: Any = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str | None:
        """The database's URL, None until the first store is opened."""
        return None if self.directory is None else f"sqlite:///{self.directory}/ledger.db"

    def _opened(self) -> Any:
        with self._lock:
            if self.inner is None:
                self.directory = tempfile.mkdtemp(prefix="fencepost-")
                try:
                    self.inner = self.entry.sql_factory(f"sqlite:///{self.directory}/ledger.db",
                                                        self.store_class)
                except BaseException:
                    self._remove()
                    raise
            return self.inner

    def __call__(self, env: AdapterEnv) -> Any:
        return self._opened()(env)

    def discard(self, env: AdapterEnv) -> None:
        """Drop one namespace's tables."""
        discard = getattr(self.inner, "discard", None)
        if discard is not None:
            discard(env)

    def close(self) -> None:
        """Close the database and remove the temporary directory (the end of the run)."""
        with self._lock:
            inner, self.inner = self.inner, None
            try:
                close = getattr(inner, "close", None)
                if close is not None:
                    close()
            finally:
                self._remove()

    def _remove(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


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
        _check_sqlite_path(spec)
        return entry.sql_factory(spec), spec
    if spec.startswith(("postgresql://", "postgresql+psycopg://", "postgres://")):
        _probe(spec)
        return entry.sql_factory(spec), spec
    if "://" not in spec and ":" in spec:
        return _import_factory(spec), spec
    raise ConfigurationError(
        f"cannot understand adapter {spec!r}; use one of: {', '.join(ADAPTER_FORMS)}"
    )


def _check_sqlite_path(url: str) -> None:
    """Fail before the run when SQLite could not create or write the database file."""
    import sqlalchemy as sa

    try:
        database = sa.engine.make_url(url).database
    except Exception as e:  # noqa: BLE001 - a malformed URL
        raise ConfigurationError(f"cannot use the database URL {url}: {e}") from None
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = os.path.abspath(database)
    directory = os.path.dirname(path)
    problem = None
    if os.path.isdir(path):
        problem = f"{path} is a directory; name a file in it"
    elif os.path.exists(path):
        if not os.access(path, os.R_OK | os.W_OK):
            problem = f"{path} is not readable and writable"
    elif os.path.exists(directory) and not os.path.isdir(directory):
        problem = f"{directory} is a file, not a directory"
    elif not os.path.isdir(directory):
        problem = (f"directory {directory} does not exist; create it, or use --adapter "
                   "sqlite for a temporary database")
    elif not os.access(directory, os.W_OK | os.X_OK):
        problem = f"directory {directory} is not writable"
    if problem is not None:
        raise ConfigurationError(f"cannot use the SQLite database {url}: {problem}")


def parse_options(pairs: Iterable[str], flag: str = "--option") -> dict[str, str]:
    """``["NAME=VALUE", ...]`` as a dict; a pair without ``=`` or a name is a
    ConfigurationError (it is never dropped)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigurationError(f"{flag} takes NAME=VALUE, not {pair!r}")
        out[key] = value
    return out


def validate_options(contract_name: str, options: Mapping[str, str]) -> dict[str, str]:
    """``options`` if each names a choice or setting of the contract with an allowed value
    (as the run itself checks them), else ConfigurationError naming the known ones."""
    from fencepost.model.base import options_with_defaults

    spec = contract(contract_name).load_spec()
    try:
        options_with_defaults(getattr(spec, "CHOICES", ()), options, getattr(spec, "SETTINGS", ()))
    except ValueError as e:
        raise ConfigurationError(str(e)) from None
    return dict(options)


def validate_capabilities(contract_name: str, names: Iterable[str]) -> frozenset[str]:
    """``names`` if each is a capability of the contract, else ConfigurationError."""
    known = contract(contract_name).load_spec().CAPABILITIES
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ConfigurationError(
            f"unknown capability {', '.join(map(repr, unknown))} for {contract_name}; "
            f"known: {', '.join(known)}")
    return frozenset(names)


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


