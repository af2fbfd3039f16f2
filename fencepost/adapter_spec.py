"""Adapter specs: what ``--adapter`` may say (``memory``, ``sqlite``, a database URL,
``MODULE:FACTORY``, ``exec:COMMAND``, ``mutant:NAME[@BASE]``) and the factory each names."""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import threading
from typing import Any, cast

from .contract import Contract, Factory
from .env import AdapterEnv
from .errors import ConfigurationError
from .registry import contract_named
from .scenarios.guard import seconds_from_env
from .spec.errors import exception_said, told
from .wire_spec import exec_factory

ADAPTER_FORMS = (
    "memory",
    "sqlite",
    "sqlite:///PATH",
    "postgresql://USER@HOST:PORT/DB",
    "postgresql+psycopg://...",
    "MODULE:FACTORY",
    "exec:COMMAND [ARGS...]",
    "mutant:NAME[@memory|@sqlite|@exec]",
)


class TempSqliteFactory:
    """The ``sqlite`` adapter: a database file in a private temporary directory, removed at
    the end of the run (``close``).

    The directory is made when the first store is opened, not before: a run that stops at a
    configuration error (a bad option, a store missing methods) before opening one leaves
    nothing behind, and neither does resolving the spec only to validate it."""

    def __init__(self, contract: Contract, store_class: type | None = None) -> None:
        contract.require_sql()
        self.entry = contract
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
    contract = contract_named(contract_name)
    if callable(spec):
        return spec, getattr(spec, "__qualname__", repr(spec))
    if spec == "memory":
        return contract.memory_factory(), "memory"
    if spec == "sqlite":
        return TempSqliteFactory(contract), "sqlite"
    if spec.startswith("sqlite:///"):
        _check_sqlite_path(spec)
        return contract.sql_factory(spec), spec
    if spec.startswith(("postgresql://", "postgresql+psycopg://", "postgres://")):
        _probe(spec)
        return contract.sql_factory(spec), spec
    if spec.startswith("exec:"):
        return exec_factory(contract, spec[len("exec:"):]), spec
    if spec.startswith(MUTANT):
        from .mutants import mutant_factory

        mutant, base = mutant_store(contract, spec)
        return mutant_factory(contract, mutant, base), spec
    _refuse_old_mutant_form(spec)
    if "://" not in spec and ":" in spec:
        return _import_factory(spec), spec
    raise ConfigurationError(
        f"cannot understand adapter {spec!r}; use one of: {', '.join(ADAPTER_FORMS)}"
    )


def _import_bounded(module_name: str, spec: str) -> Any:
    """``importlib.import_module(module_name)`` on a thread of its own, waited for at most
    :data:`IMPORT_TIMEOUT_S`; what goes wrong is a ConfigurationError of one line."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["module"] = importlib.import_module(module_name)
        except BaseException as e:  # noqa: BLE001 - even SystemExit: said below
            box["error"] = e

    limit = seconds_from_env(IMPORT_TIMEOUT_ENV, IMPORT_TIMEOUT_S)
    worker = threading.Thread(target=target, daemon=True, name="fencepost-import")
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise ConfigurationError(
            f"importing {module_name!r} for adapter {spec!r} did not finish in {limit:g} s "
            f"({IMPORT_TIMEOUT_ENV})")
    error = box.get("error")
    if isinstance(error, ImportError):
        raise ConfigurationError(
            f"cannot import module {module_name!r} for adapter {spec!r} "
            f"({_one_line(error, kind=False)}); is its directory on PYTHONPATH?")
    if error is not None:
        raise ConfigurationError(f"importing {module_name!r} raised {_one_line(error)}")
    return box["module"]


def _one_line(e: BaseException, kind: bool = True) -> str:
    """:func:`exception_said` (without ``kind``: the first line of what ``e`` says alone),
    control characters escaped: a module's text on the command's one line."""
    said = exception_said(e) if kind else (told(e).strip().splitlines() or [""])[0]
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in said)


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


MUTANT = "mutant:"
"""The adapter form of a mutant: ``mutant:NAME`` (on memory) or ``mutant:NAME@BASE``."""

_OLD_MUTANT = "faulty:"
"""The form ``mutant:`` replaced; refused with what to write instead, never taken silently."""


def _refuse_old_mutant_form(spec: str) -> None:
    """Raise a ConfigurationError naming the ``mutant:`` form when ``spec`` uses the old one."""
    if spec.startswith(_OLD_MUTANT):
        rest = spec[len(_OLD_MUTANT):]
        raise ConfigurationError(
            f"adapter {spec!r}: {_OLD_MUTANT}NAME is now {MUTANT}NAME; write "
            f"{MUTANT}{rest or 'NAME'} instead")


def mutant_store(contract: Contract, spec: str) -> tuple[Any, str]:
    """The mutant ``mutant:NAME[@BASE]`` names, and its base (default memory)."""
    from .mutants import BASES, runs_on

    name, _, base = spec[len(MUTANT):].partition("@")
    base = base or "memory"
    by_name = {m.name: m for m in (*contract.mutants, *contract.deep)}
    if name not in by_name:
        raise ConfigurationError(
            f"{contract.name} has no mutant {name!r} (see fencepost mutants "
            f"{contract.name} for the {len(contract.mutants)} there are)")
    if base not in BASES:
        raise ConfigurationError(f"{spec}: a mutant is built on {', '.join(BASES)}, "
                                 f"not {base!r}")
    mutant = by_name[name]
    if not runs_on(mutant, base):
        raise ConfigurationError(f"{spec}: {name} runs only on {', '.join(mutant.bases)}")
    return mutant, base


def adapter_options(contract_name: str, spec: str | Factory) -> dict[str, str]:
    """The options an adapter spec brings: a mutant's (its bug shows under them), none
    for any other adapter."""
    if isinstance(spec, str) and spec.startswith(MUTANT):
        mutant, _ = mutant_store(contract_named(contract_name), spec)
        return dict(mutant.options)
    return {}


IMPORT_TIMEOUT_ENV = "FENCEPOST_IMPORT_TIMEOUT"
IMPORT_TIMEOUT_S = 60.0
"""How long importing an adapter's module (``--adapter MODULE:FACTORY``) may take before the
command gives up with a configuration error (``FENCEPOST_IMPORT_TIMEOUT`` seconds if set): a
module that connects somewhere as it is imported must not hang the kit."""


def _import_factory(spec: str) -> Factory:
    module_name, _, attr = spec.partition(":")
    module = _import_bounded(module_name, spec)
    factory: Any = module
    for part in attr.split("."):
        try:
            factory = getattr(factory, part, None)
        except BaseException as e:  # noqa: BLE001 - a module's __getattr__, even SystemExit
            raise ConfigurationError(f"getting {attr!r} from module {module_name!r} raised "
                                     f"{_one_line(e)}") from None
        if factory is None:
            raise ConfigurationError(f"module {module_name!r} has no attribute {attr!r}")
    if not callable(factory):
        raise ConfigurationError(f"{spec!r} is not callable; it must be factory(env) -> store")
    return cast(Factory, factory)
