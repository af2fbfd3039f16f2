"""A contract, declared once: the one object the kit runs for it.

A contract is a package of its own (this repository's three are spread over ``spec/``,
``model/``, ``adapters/`` and ``scenarios/`` by layer, but declared in one place,
:mod:`fencepost.contracts`). It is found through the ``fencepost.contracts`` entry-point group:
the entry point names a zero-argument function that imports the contract's pieces and returns
its :class:`Contract`. So ``fencepost list`` and ``--help`` import no contract, and a run imports
only its own. See docs/extending.md, "Adding a contract".

Example (a third-party package's ``pyproject.toml``)::

    [project.entry-points."fencepost.contracts"]
    tiny-register = "tiny_register.contract:declare"
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs

from .env import AdapterEnv
from .errors import ConfigurationError

if TYPE_CHECKING:
    from fencepost.adapters.mutants.base import Mutant
    from fencepost.scenarios.suite import Suite
    from fencepost.spec.clauses import Catalogue, Choice, Setting

Factory = Callable[[AdapterEnv], Any]
"""An adapter: ``factory(env) -> store`` (optionally with ``discard(env)`` and ``close()``)."""


@attrs.frozen
class Contract:
    """Everything the kit runs for one contract.

    - ``name`` (``adk-ledger``), ``summary`` (one line, for ``fencepost list``);
    - ``spec``: the module of the contract as data; it defines ``CLAUSES`` (the catalogue),
      ``PROTOCOL_METHODS``, ``CAPABILITIES`` (name -> meaning), and may define ``CHOICES`` and
      ``SETTINGS`` (the named options) and ``CATALOGUE_VERSION`` (``"MAJOR.MINOR"``, default
      "1.0"); importing it registers the contract's operations;
    - ``suite``: the checks (:class:`~fencepost.scenarios.suite.Suite`: model, scenarios, state
      machine, races, concurrent workload, partition, fault cases);
    - ``memory``: ``memory(store_class) -> factory`` for the built-in in-memory store, and
      ``memory_store`` its correct store class; ``sql`` and ``sql_store`` the same for the
      SQLAlchemy store, ``sql(url, store_class) -> factory`` (None: no SQL store, so no
      ``--adapter sqlite`` or URL); or ``sql_loader``, a function returning ``(sql,
      sql_store)`` called when the SQL store is first asked for (a run on another store then
      never imports SQLAlchemy: about 0.15 s of a process's start);
    - ``mutants``: the mutants (:class:`~fencepost.adapters.mutants.base.Mutant`),
      each caught by its clause (``fencepost mutants``);
    - ``deep``: mutants whose bug shows only after a few specific steps: caught by the
      transition tour at every run (``--tour``), by the quick check at some seeds only; usable
      as ``mutant:NAME`` like the others.
    """

    name: str
    summary: str
    spec: ModuleType
    suite: Suite
    memory: Callable[[type], Factory]
    memory_store: type
    sql: Callable[[str, type], Factory] | None = None
    sql_store: type | None = None
    sql_loader: Callable[[], tuple[Callable[[str, type], Factory], type]] | None = None
    mutants: tuple[Mutant, ...] = ()
    deep: tuple[Mutant, ...] = ()

    @property
    def clauses(self) -> Catalogue:
        """The clause catalogue (``spec.CLAUSES``)."""
        return self.suite.clauses

    @property
    def capabilities(self) -> Mapping[str, str]:
        """Capability name -> what it means (``spec.CAPABILITIES``)."""
        return self.suite.capabilities

    @property
    def choices(self) -> tuple[Choice, ...]:
        """The named options that change a rule (``spec.CHOICES``)."""
        return tuple(getattr(self.spec, "CHOICES", ()))

    @property
    def settings(self) -> tuple[Setting, ...]:
        """The named options that tune a check (``spec.SETTINGS``)."""
        return tuple(getattr(self.spec, "SETTINGS", ()))

    @property
    def catalogue_version(self) -> str:
        """The clause catalogue's version, ``"MAJOR.MINOR"`` (``spec.CATALOGUE_VERSION``; "1.0"
        when the spec module defines none). MINOR grows when clauses are added, MAJOR when an
        existing clause id changes meaning or is removed: a baseline report compares with a
        run of the same MAJOR only (:mod:`fencepost.reports.baseline`)."""
        return str(getattr(self.spec, "CATALOGUE_VERSION", "1.0"))

    def memory_factory(self, store_class: type | None = None) -> Factory:
        """A factory of the in-memory store (of ``store_class``, a mutant, if given)."""
        return self.memory(store_class or self.memory_store)

    def require_sql(self) -> tuple[Callable[[str, type], Factory], type]:
        """``(sql, sql_store)`` (loaded by ``sql_loader`` if that is how they are given);
        raise ConfigurationError when the contract has no SQL store to run on."""
        if self.sql is not None and self.sql_store is not None:
            return self.sql, self.sql_store
        if self.sql_loader is not None:
            return self.sql_loader()
        raise ConfigurationError(
            f"{self.name} has no SQL store; use --adapter memory or your own "
            "MODULE:FACTORY")

    def sql_factory(self, url: str, store_class: type | None = None) -> Factory:
        """A factory of the SQL store on ``url`` (of ``store_class``, if given)."""
        sql, sql_store = self.require_sql()
        return sql(url, store_class or sql_store)

    def store_class(self, base: str) -> type:
        """The correct store class (``memory`` or ``sqlite``) a mutant is built on."""
        if base == "memory":
            return self.memory_store
        return self.require_sql()[1]

    def mutant(self, name: str) -> Mutant:
        """The mutant ``name``."""
        for m in (*self.mutants, *self.deep):
            if m.name == name:
                return m
        raise KeyError(name)
