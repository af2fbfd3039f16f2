"""What the tours' tests (test_tour.py, test_tour_snodo.py, test_tour_ledgence.py) share (a
tour on one store is :func:`~fencepost.scenarios.tour_alone.tour_alone`): the assertions each
contract makes the same way (the plan, a pass, a catch), and the reasons a faulty store lies
outside every contract's scope."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from fencepost.adapter_spec import resolve_adapter
from fencepost.model.base import options_with_defaults
from fencepost.mutants import mutant_factory
from fencepost.scenarios.harness import ClauseViolation
from fencepost.scenarios.shrinking import UNLIMITED, Shrinking
from fencepost.scenarios.suite import Suite
from fencepost.scenarios.tour_alone import tour_alone
from fencepost.scenarios.tour_coverage import TourCoverage
from fencepost.scenarios.tour_graph import LONGEST, NEAR, Scope, explore, plan

RACE = "a race between two calls: the tour makes one call at a time (the race checks and the " \
       "concurrent run catch it)"
INJECTED = "a backend failure the fault checks inject: the tour injects none"
FLAKY = "a backend that fails at random: judged by the concurrent run's history, where " \
        "faulted calls are allowed"
NO_SHRINKING = Shrinking(0.0, 0.0)
"""A mutant's test asks only whether the tour catches it: its failure is not shrunk."""


def defaults(suite: Suite, **given: str) -> dict[str, str]:
    """The contract's options: ``given``, the defaults for the rest."""
    return options_with_defaults(suite.model.choices, given, suite.model.settings)


def store(contract: str, adapter: str, request: pytest.FixtureRequest | None = None) -> Any:
    """The factory of ``adapter`` (``postgresql``: the test database, through the ``pg_url``
    fixture of ``request``), closed at the end of ``request``'s test: a SQL factory keeps the
    tables of discarded namespaces for reuse until its close drops them."""
    spec = request.getfixturevalue("pg_url") if request and adapter == "postgresql" else adapter
    factory = resolve_adapter(contract, spec)[0]
    close = getattr(factory, "close", None)
    if request is not None and close is not None:
        request.addfinalizer(close)
    return factory


def assert_the_plan_runs_every_edge_and_is_the_same_on_every_run(
        suite: Suite, scope: Scope, capabilities: frozenset[str]) -> None:
    """Every edge of the graph is covered by the plan, made twice the same way from two
    explorations, no sequence is longer than the walk allows, and each sequence follows the
    graph's edges from the initial state."""
    options = defaults(suite)
    graph = explore(scope, suite.model, options, capabilities)
    first = plan(graph)
    again = plan(explore(scope, suite.model, options, capabilities))
    assert first.covered == frozenset(range(len(graph.edges)))
    assert first.sequences == again.sequences
    assert all(len(s) <= LONGEST + NEAR for s in first.sequences)
    for sequence, states in zip(first.sequences, first.states, strict=True):
        assert graph.walk(sequence)[1:] == list(states)


def assert_the_whole_tour_passed(failed: Mapping[str, ClauseViolation],
                                 coverage: TourCoverage) -> None:
    """No clause failed and every edge of the graph ran on the store, every clause's too."""
    assert dict(failed) == {}
    assert coverage.finished and coverage.run == coverage.edges == coverage.planned
    assert coverage.clauses and all(run == n for n, run in coverage.clauses.values())


def assert_the_first_sequences_passed(failed: Mapping[str, ClauseViolation],
                                      coverage: TourCoverage, sequences: int) -> None:
    """No clause failed in the first ``sequences``, and the coverage says how far it got."""
    assert dict(failed) == {}
    assert not coverage.finished
    assert coverage.stopped.startswith(f"the run ended after {sequences} of")
    assert 0 < coverage.run < coverage.edges


def _caught(contract: Any, mutant: Any, scope: Scope, want: str, shrinking: Shrinking,
            whole: bool = False) -> dict[str, ClauseViolation]:
    """The failures of the tour of ``scope`` on ``mutant``'s memory store, up to ``want``'s:
    first of the sequences that put ``want`` to the test (the tour's other sequences cannot
    fail it unless an answer's fields or a read-back name it), else of the whole tour; with
    ``whole``, of the whole tour at once (a mutant only a field or a read-back shows)."""
    factory = mutant_factory(contract, mutant, "memory")
    for clauses in ((None,) if whole else (frozenset({want}), None)):
        failed, _ = tour_alone(contract.suite, factory, scope, options=mutant.options,
                               want=want, shrinking=shrinking, clauses=clauses)
        if want in failed:
            break
    return failed


def assert_caught(contract: Any, mutant: Any, scope: Scope, want: str,
                  whole: bool = False) -> None:
    """The tour of ``scope`` on ``mutant``'s memory store fails ``want``, with its steps
    (``whole``: see :func:`_caught`)."""
    failed = _caught(contract, mutant, scope, want, NO_SHRINKING, whole)
    assert want in failed, f"{mutant.name} escaped the tour; it failed {sorted(failed)}"
    assert failed[want].trace, "a failure comes with its steps"


def assert_caught_and_shrunk(contract: Any, mutant: Any, scope: Scope, shortest: int,
                             longest: int) -> None:
    """The tour catches a deep ``mutant`` by its clause, shrunk to the steps that show it
    (between ``shortest`` and ``longest``)."""
    want = mutant.expected_clause
    failed = _caught(contract, mutant, scope, want, UNLIMITED)
    assert want in failed, f"{mutant.name} escaped the tour; it failed {sorted(failed)}"
    assert shortest <= len(failed[want].trace) <= longest


def assert_outside_names_mutants(mutants: Any, *named: Any) -> None:
    """Every name the test lists (outside the scope, caught by another clause) is a mutant."""
    names = {m.name for m in mutants}
    for listed in named:
        assert set(listed) <= names, sorted(set(listed) - names)
