"""``fencepost bench``, section 8: the transition tour.

Per contract that has a tour, its scope (``full``; ``ci`` at ``--quick``): the bounded graph's
states and edges and the seconds to explore it and plan the tour (the model alone), then the
tour run on the memory store, on SQLite (a temporary file) and, when the bench reaches it, on
PostgreSQL: its sequences, the moves made on the store, the edges run and the seconds. And per
faulty store whose bug needs a few specific steps (``adapters/<contract>/mutants/deep.py``):
whether the tour caught it by its clause, in how many moves after shrinking, and the seconds
to the catch.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

import attrs

from fencepost.model.base import options_with_defaults
from fencepost.scenarios.harness import ClauseViolation
from fencepost.scenarios.runner import drop_live, new_world, open_checked
from fencepost.scenarios.said import Progress, Said
from fencepost.scenarios.tour import tour_of
from fencepost.scenarios.tour_alone import tour_alone
from fencepost.scenarios.tour_coverage import TourCoverage

from .adapter_spec import resolve_adapter
from .mutants import mutant_factory
from .registry import contract_named

STORES = ("memory", "sqlite", "postgresql")


@attrs.frozen
class TourRow:
    """One contract's tour on one store: the graph (``states``, ``edges``; ``made_s`` to
    explore and plan it), the plan (``sequences``, ``moves``), and on the store the edges
    ``run`` and the ``seconds`` (failed: the clauses a correct store failed, none expected;
    ``finished`` False: the run stopped at the bench's sequence limit)."""

    contract: str
    scope: str
    store: str
    states: int
    edges: int
    made_s: float
    sequences: int
    moves: int
    run: int
    seconds: float
    failed: tuple[str, ...] = ()
    finished: bool = True


@attrs.frozen
class DeepRow:
    """One faulty store whose bug needs a few steps: caught by its clause on the tour (memory),
    the shrunk counterexample's moves and the seconds to the catch."""

    contract: str
    mutant: str
    clause: str
    caught: bool
    moves: int | None
    seconds: float


def _capabilities(contract: Any, factory: Any) -> frozenset[str]:
    world = new_world(contract.suite, factory)
    try:
        open_checked(contract.suite, world)
        return world.capabilities
    finally:
        drop_live(world)


def _tour(contract: Any, scope: Any, factory: Any, options: Any = None,
          want: str | None = None, sequences: int | None = None
          ) -> tuple[dict[str, ClauseViolation], TourCoverage, float]:
    """:func:`tour_alone` and the seconds it took."""
    started = time.perf_counter()
    failed, coverage = tour_alone(contract.suite, factory, scope, options=options, want=want,
                                  sequences=sequences)
    return failed, coverage, time.perf_counter() - started


def bench_tour(name: str, scope_name: str, progress: Progress, sequences: int | None = None,
               postgres: str | None = None, deep: int | None = None
               ) -> tuple[list[TourRow], list[DeepRow]]:
    """Section 8 for contract ``name`` (nothing when it has no tour), each tour on a correct
    store stopped after ``sequences`` (None: all); on PostgreSQL at URL ``postgres`` too (None:
    not reachable, no row); then the first ``deep`` of its deep faulty stores (None: all)."""
    contract = contract_named(name)
    scope = contract.suite.tours.get(scope_name)
    if scope is None:
        return [], []
    rows = []
    made_s: dict[frozenset[str], float] = {}  # a store of the same capabilities: the same graph
    for store in STORES:
        spec = store if store != "postgresql" else postgres
        if spec is None:  # PostgreSQL not reachable
            continue
        factory, _ = resolve_adapter(name, spec)
        try:
            rows.append(_on_store(contract, scope, factory, store, made_s, progress, sequences))
        finally:
            close = getattr(factory, "close", None)  # a SQL factory's pool
            if close is not None:
                close()
    return rows, _deep(contract, scope, progress, deep)


def _on_store(contract: Any, scope: Any, factory: Any, store: str,
              made_s: dict[frozenset[str], float], progress: Progress, sequences: int | None
              ) -> TourRow:
    name = contract.name
    capabilities = _capabilities(contract, factory)
    options = options_with_defaults(contract.suite.model.choices, {},
                                    contract.suite.model.settings)
    progress(Said.of(f"tour/{name}", f"exploring the {scope.name} scope ({store}'s "
                                     "capabilities)"))
    started = time.perf_counter()  # made once: the run's tour takes them from tour_of
    graph, the_plan = tour_of(scope, contract.suite.model, tuple(sorted(options.items())),
                              capabilities)
    made = made_s.setdefault(capabilities, time.perf_counter() - started)
    progress(Said.of(f"tour/{name}", f"the tour on {store}: {len(the_plan.sequences):,} "
                                     "sequences"))
    failed, coverage, seconds = _tour(contract, scope, factory, sequences=sequences)
    return TourRow(name, scope.name, store, len(graph.keys), len(graph.edges), made,
                   coverage.sequences, coverage.steps, coverage.run, seconds,
                   tuple(sorted(failed)), coverage.finished)


def _deep(contract: Any, scope: Any, progress: Progress, limit: int | None) -> list[DeepRow]:
    try:
        module = importlib.import_module(
            f"fencepost.adapters.{contract.name.replace('-', '_')}.mutants.deep")
    except ModuleNotFoundError:
        return []
    out = []
    for mutant in module.DEEP[:limit]:
        progress(Said.of(f"tour/{contract.name}", f"the tour on {mutant.name}"))
        failed, _, seconds = _tour(contract, scope, mutant_factory(contract, mutant, "memory"),
                                   mutant.options, mutant.expected_clause)
        found = failed.get(mutant.expected_clause)
        out.append(DeepRow(contract.name, mutant.name, mutant.expected_clause, found is not None,
                           None if found is None else len(found.trace), seconds))
    return out
