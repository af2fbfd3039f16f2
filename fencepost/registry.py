"""Contracts by name, and adapter specs (``memory``, ``sqlite``, URLs, ``MODULE:FACTORY``)."""

from __future__ import annotations

import functools
import importlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, cast

from .contract import Contract, Factory
from .env import AdapterEnv
from .errors import ConfigurationError

ENTRY_POINTS = "fencepost.contracts"
"""The entry-point group contracts are declared in (name = "module:function")."""

def contract_names() -> tuple[str, ...]:
    """The names of every installed contract, in alphabetical order. Nothing is imported."""
    return tuple(sorted(_entry_points()))


def contract(name: str) -> Contract:
    """The contract ``name``, declared by its entry point (imported once, on first use)."""
    points = _entry_points()
    if name not in points:
        raise ConfigurationError(
            f"unknown contract {name!r}; choose one of {', '.join(contract_names())}")
    return _load(name, points[name])


@functools.cache
def _entry_points() -> dict[str, EntryPoint]:
    """The ``fencepost.contracts`` entry points (read once per process: reading them scans
    every installed distribution)."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINTS):
        found.setdefault(point.name, point)  # a distribution found twice on the path
    return found


@functools.cache
def _load(name: str, point: EntryPoint) -> Contract:
    try:
        declare = point.load()
        declared = declare()
    except Exception as e:  # noqa: BLE001 - a broken plugin, said as such
        raise ConfigurationError(
            f"the contract {name!r} ({point.value}) cannot be loaded: "
            f"{type(e).__name__}: {e}") from e
    if not isinstance(declared, Contract) or declared.name != name:
        raise ConfigurationError(
            f"the entry point {name} = {point.value} must name a function returning "
            f"fencepost.contract.Contract(name={name!r}, ...), not {declared!r:.80}")
    return declared


ADAPTER_FORMS = (
    "memory",
    "sqlite",
    "sqlite:///PATH",
    "postgresql://USER@HOST:PORT/DB",
    "postgresql+psycopg://...",
    "MODULE:FACTORY",
    "exec:COMMAND [ARGS...]",
    "faulty:NAME[@memory|@sqlite|@exec]",
)


class TempSqliteFactory:
    """The ``sqlite`` adapter: a database file in a private temporary directory, removed at
    the end of the run (``close``).

    The directory is made when the first store is opened, not before: a run that stops at a
    configuration error (a bad option, a store missing methods) before opening one leaves
    nothing behind, and neither does resolving the spec only to validate it."""

    def __init__(self, entry: Contract, store_class: type | None = None) -> None:
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
    if spec.startswith("exec:"):
        return exec_factory(entry, spec[len("exec:"):]), spec
    if spec.startswith(FAULTY):
        from .mutants import mutant_factory

        mutant, base = faulty_store(entry, spec)
        return mutant_factory(entry, mutant, base), spec
    if "://" not in spec and ":" in spec:
        return _import_factory(spec), spec
    raise ConfigurationError(
        f"cannot understand adapter {spec!r}; use one of: {', '.join(ADAPTER_FORMS)}"
    )


WIRE_TIMEOUT_ENV = "FENCEPOST_WIRE_TIMEOUT"
WIRE_TIMEOUT_S = 5.0


def wire_timeout() -> float:
    """How long an ``exec:`` adapter may take over one request: ``FENCEPOST_WIRE_TIMEOUT``
    seconds (default 5), at most 0.8 of the run's call timeout, so that the child is killed and
    the check is ``unknown`` before the run's guard would stop the whole run."""
    from fencepost.scenarios.guard import default_call_timeout, seconds_from_env

    return min(seconds_from_env(WIRE_TIMEOUT_ENV, WIRE_TIMEOUT_S), 0.8 * default_call_timeout())


def exec_factory(entry: Contract, command: str) -> Factory:
    """The adapter of ``exec:COMMAND``: a child process speaking ``fencepost-wire/1``."""
    from fencepost.adapters.wire.store import WireFactory
    from fencepost.spec.ops import operations

    return WireFactory(entry.name, entry.spec, operations(entry.name), exec_argv(command),
                       timeout_s=wire_timeout())


def exec_argv(command: str) -> list[str]:
    """``command`` split as a POSIX shell would (no shell runs), its program checked."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ConfigurationError(f"cannot split the exec command {command!r}: {e}") from None
    if not argv:
        raise ConfigurationError("exec: needs a command, e.g. exec:./my_adapter --flag")
    program = argv[0]
    if os.sep in program:
        if not os.path.isfile(program):
            raise ConfigurationError(f"exec adapter {program}: no such file")
        if not os.access(program, os.X_OK):
            raise ConfigurationError(f"exec adapter {program} is not executable (chmod +x)")
    elif shutil.which(program) is None:
        raise ConfigurationError(f"exec adapter {program}: not found on PATH")
    return argv


def probe_call(contract_name: str) -> dict[str, Any]:
    """One valid call of the contract for ``wire-check``: its op with the fewest arguments
    (at least one), each a string (a store answers it, or refuses it with a contract error)."""
    import attrs

    from fencepost.spec.ops import operations

    arguments = {name: [a.name for a in attrs.fields(op)]  # type: ignore[arg-type]
                 for name, op in operations(contract(contract_name).name).items()}
    name = min((n for n, args in arguments.items() if args), key=lambda n: len(arguments[n]))
    return {"op": name, "args": {a: "wire-check" for a in arguments[name]}}


def served_capabilities(entry: Contract, factory: Factory) -> frozenset[str]:
    """What a store of ``factory`` declares (a store opened on a scratch namespace and
    dropped again), less what the wire cannot carry (fault injection needs the engine)."""
    import uuid

    env = AdapterEnv(clock=lambda: 0, namespace=f"probe{uuid.uuid4().hex[:8]}")
    store = factory(env)
    try:
        declared = frozenset(getattr(store, "capabilities", frozenset()))
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()
        discard = getattr(factory, "discard", None)
        if discard is not None:
            discard(env)
    return declared & frozenset(entry.capabilities)


def wire_schema(contract_name: str) -> str:
    """The operations, value classes, error codes, capabilities and options of a contract, as
    an adapter speaking fencepost-wire/1 sees them."""
    import attrs

    from fencepost.adapters.wire.store import error_classes
    from fencepost.spec.ops import operations
    from fencepost.spec.values import value_classes

    entry = contract(contract_name)
    lines = [f"{entry.name} over fencepost-wire/1 (docs/protocol.md)", "", "operations (call):"]
    for name, op in operations(entry.name).items():
        args = ", ".join(a.name for a in attrs.fields(op))  # type: ignore[arg-type]
        lines.append(f"  {name}({args})")
    lines += ["", "value classes ({\"__type__\": NAME, field: value, ...}):"]
    held = {id(v) for v in vars(entry.spec).values()}
    for name, cls in sorted(value_classes().items()):
        if id(cls) in held:
            fields = ", ".join(a.name for a in attrs.fields(cls) if a.init)
            lines.append(f"  {name}({fields})")
    lines += ["", "error codes (error.code):"]
    for code, cls in sorted(error_classes(entry.spec).items()):
        lines.append(f"  {code}  ({cls.__name__})")
    lines += ["", "capabilities (hello):"]
    lines += [f"  {name}: {text}" for name, text in entry.capabilities.items()
              if name != "fault_injection"]
    lines += ["", "options (hello, open), default first:"]
    for c in entry.choices:
        others = [v for v, _ in c.values if v != c.default]
        lines.append(f"  {c.name}: {', '.join([c.default, *others])}")
    for setting in entry.settings:
        lines.append(f"  {setting.name}: {setting.default} (a setting)")
    return "\n".join(lines)


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

    entry = contract(contract_name)
    try:
        options_with_defaults(entry.choices, options, entry.settings)
    except ValueError as e:
        raise ConfigurationError(str(e)) from None
    return dict(options)


def validate_capabilities(contract_name: str, names: Iterable[str]) -> frozenset[str]:
    """``names`` if each is a capability of the contract, else ConfigurationError."""
    known = contract(contract_name).capabilities
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


FAULTY = "faulty:"
"""The adapter form of a known-faulty store: ``faulty:NAME`` (on memory) or ``faulty:NAME@BASE``."""


def faulty_store(entry: Contract, spec: str) -> tuple[Any, str]:
    """The known-faulty store ``faulty:NAME[@BASE]`` names, and its base (default memory)."""
    from .mutants import BASES, runs_on

    name, _, base = spec[len(FAULTY):].partition("@")
    base = base or "memory"
    by_name = {m.name: m for m in entry.mutants}
    if name not in by_name:
        raise ConfigurationError(
            f"{entry.name} has no known-faulty store {name!r} (see fencepost mutants "
            f"{entry.name} for the {len(by_name)} there are)")
    if base not in BASES:
        raise ConfigurationError(f"{spec}: a faulty store is built on {', '.join(BASES)}, "
                                 f"not {base!r}")
    mutant = by_name[name]
    if not runs_on(mutant, base):
        raise ConfigurationError(f"{spec}: {name} runs only on {', '.join(mutant.bases)}")
    return mutant, base


def adapter_options(contract_name: str, spec: str | Factory) -> dict[str, str]:
    """The options an adapter spec brings: a faulty store's (its bug shows under them), none
    for any other adapter."""
    if isinstance(spec, str) and spec.startswith(FAULTY):
        mutant, _ = faulty_store(contract(contract_name), spec)
        return dict(mutant.options)
    return {}


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


