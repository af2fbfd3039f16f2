"""The transition tour (fencepost.scenarios.tour): its abstraction is sound, its plan runs
every edge of the bounded graph and is the same on every run, correct stores pass it, and
every built-in faulty store whose bug lies within its scope is caught by it alone (the ones
outside are listed with the reason)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import attrs
import pytest
from tourkit import (
    FLAKY,
    INJECTED,
    RACE,
    assert_caught,
    assert_caught_and_shrunk,
    assert_outside_names_mutants,
    assert_the_plan_runs_every_edge_and_is_the_same_on_every_run,
    assert_the_whole_tour_passed,
    defaults,
    store,
)

from fencepost.adapters.adk_ledger.mutants import MUTANTS
from fencepost.adapters.adk_ledger.mutants.deep import DEEP
from fencepost.api import check
from fencepost.registry import contract_named
from fencepost.reports.json_report import report_from_json
from fencepost.scenarios.adk_ledger.tour import AdkScope, Driver
from fencepost.scenarios.kinds import parts_of
from fencepost.scenarios.profiles import PROFILES
from fencepost.scenarios.runner import run_suite
from fencepost.scenarios.tour import TOUR, puts_to_the_test, tour_of
from fencepost.scenarios.tour_alone import tour_alone
from fencepost.scenarios.tour_graph import ModelTourist, Tourist, Unsound, _concrete, explore

ADK = contract_named("adk-ledger")
SUITE = ADK.suite
CI = SUITE.tours["ci"]
FULL = SUITE.tours["full"]
MEMORY_CAPABILITIES = frozenset({"durable", "owner_liveness", "concurrency"})

ABSOLUTE_TIME = "a time at or below 0: the tour's clock starts at 1,000,000 ms and only moves " \
                "forward (the scripted argument checks send those times)"
OUTSIDE_ADK = {
    "create_check_then_insert": RACE,
    "claim_select_then_update": RACE,
    "claim_race_in_history": RACE,
    "renew_read_then_write": RACE,
    "flaky_backend": FLAKY,
    "values_through_json": "value fidelity: the tour sends the kit's plain metadata and "
                           "checkpoints; the scripted value checks send what a JSON store loses",
    "create_accepts_empty_id": "the create of the empty id: no walk's prefix can own it, so it "
                               "runs on a store of its own (scripted arguments_at_their_edges)",
    "negative_time_refused": ABSOLUTE_TIME,
    "one_byte_token_refused": "a token of one byte: the tour's tokens are 32 bytes, as the "
                              "seed's caller makes them (scripted arguments_at_their_edges "
                              "sends the shortest)",
    "lease_until_zero_is_unowned": ABSOLUTE_TIME,
    "commit_failure_ignored": INJECTED,
    "db_error_is_not_found": INJECTED,
}
"""The adk-ledger mutants whose bug lies outside the tour's scope, and why."""
OTHER_CLAUSE_ADK = {
    "empty_strings_refused_when_accepted": "ADK-ARG-003",
}
"""Mutants the tour catches by another clause their bug also breaks: the empty token refused
under empty_strings=accepted (ADK-ARG-003); the empty id's create (ADK-ARG-001) is outside."""
ARGUMENT_EDGES = {"ADK-ARG-002", "ADK-ARG-003", "ADK-ARG-004", "ADK-ARG-005"}
"""Clauses only the argument-edge moves reach (the full scope makes them; the ci scope does
not)."""
EDGES = AdkScope(name="adk-ledger (argument edges, no deaths)", edges=True, deaths=False)
"""The full scope's argument edges without its deaths or its ci tour first: the mutants of
:data:`ARGUMENT_EDGES` are caught there (the full scope's graph takes half a minute to make,
and its plan runs the ci tour's 1,329 sequences before the first edge)."""


def _options(**given: str) -> dict[str, str]:
    return defaults(SUITE, **given)


def test_the_abstraction_is_sound_on_the_ci_scope() -> None:
    graph = explore(CI, SUITE.model, _options(), MEMORY_CAPABILITIES, verify=True)
    assert graph.complete
    assert len(graph.keys) > 100 and len(graph.edges) > 10 * len(graph.keys)


READINGS = [(c.name, r) for c in SUITE.model.choices for r, _ in c.values if r != c.default]


@pytest.mark.parametrize(("name", "reading"), READINGS)
def test_the_abstraction_is_sound_under_every_reading(name: str, reading: str) -> None:
    # Without owner_liveness and durable (no deaths, no reopens): the graph each reading's
    # rules make, a tenth of the size.
    graph = explore(CI, SUITE.model, _options(**{name: reading}), frozenset(), verify=True)
    assert graph.complete


@attrs.frozen(eq=False)
class ForgetsTheLease(AdkScope):
    """An abstraction that leaves the lease's end out: unsound (a write decides by it)."""

    def abstract(self, driver: Driver, t: Tourist) -> Any:
        records, dead = super().abstract(driver, t)
        return tuple(r[:3] for r in records), dead


def test_the_soundness_check_finds_a_merge_that_changes_a_decision() -> None:
    with pytest.raises(Unsound, match="decides|leads to|different moves"):
        explore(ForgetsTheLease(edges=False), SUITE.model, _options(), frozenset(), verify=True)


def test_the_plan_runs_every_edge_and_is_the_same_on_every_run() -> None:
    assert_the_plan_runs_every_edge_and_is_the_same_on_every_run(SUITE, CI, MEMORY_CAPABILITIES)


SERVER = AdkScope(name="adk-ledger (ci, no deaths)", edges=False, deaths=False)
"""The ci scope without deaths, a fifth of its size: for the stores a move costs a
transaction or a round trip on (the ci scope on SQLite takes a minute and a half on a loaded
2-core machine; the bench measures it)."""


@pytest.mark.parametrize("adapter", ["memory", "sqlite", "postgresql"])
def test_a_correct_store_passes_the_whole_tour(adapter: str, request: pytest.FixtureRequest
                                               ) -> None:
    scope = CI if adapter == "memory" else SERVER
    assert_the_whole_tour_passed(*tour_alone(SUITE, store("adk-ledger", adapter, request), scope))


def test_a_tour_focused_on_a_clause_runs_the_sequences_that_put_it_to_the_test() -> None:
    """``clauses=``: only the plan's sequences through an edge naming the clause run, and all
    of their edges (a correct store); the coverage says the others did not."""
    focus = frozenset({"ADK-DELETE-005"})
    options = tuple(sorted(defaults(SUITE).items()))
    graph, the_plan = tour_of(CI, SUITE.model, options, MEMORY_CAPABILITIES)
    chosen = [n for n in range(1, len(the_plan.sequences) + 1)
              if puts_to_the_test(graph, the_plan, n, focus)]
    edges = {graph.edge_index[((0, *the_plan.states[n - 1])[j], label)]
             for n in chosen for j, label in enumerate(the_plan.sequences[n - 1])}
    naming = [e for e in edges if "ADK-DELETE-005" in graph.edges[e].named]
    assert 0 < len(chosen) < len(the_plan.sequences) / 4 and 0 < len(naming) < len(edges)
    failed, coverage = tour_alone(SUITE, store("adk-ledger", "memory"), CI, clauses=focus)
    assert failed == {}
    assert coverage.run == len(edges)
    assert coverage.stopped == "only the sequences that put ADK-DELETE-005 to the test ran"


def _expected(mutant: Any) -> str:
    return OTHER_CLAUSE_ADK.get(mutant.name, mutant.expected_clause)


@pytest.mark.parametrize("name", [m.name for m in MUTANTS if m.name not in OUTSIDE_ADK])
def test_every_mutant_within_the_scope_is_caught_by_the_tour_alone(name: str) -> None:
    mutant = next(m for m in MUTANTS if m.name == name)
    want = _expected(mutant)
    assert_caught(ADK, mutant, EDGES if want in ARGUMENT_EDGES else CI, want)


def test_the_mutants_outside_the_scope_are_mutants() -> None:
    assert_outside_names_mutants(MUTANTS, OUTSIDE_ADK, OTHER_CLAUSE_ADK)


ON_THE_FULL_GRAPH = pytest.mark.xdist_group("adk-full-scope")
"""The tests that make the full scope's graph (half a minute each time) run on one worker, which
makes it once (:func:`~fencepost.scenarios.tour.tour_of` keeps it per process)."""


@pytest.mark.parametrize("scope", [CI, pytest.param(FULL, marks=ON_THE_FULL_GRAPH)],
                         ids=["ci", "full"])
@pytest.mark.parametrize("mutant", DEEP, ids=lambda m: m.name)
def test_a_bug_that_needs_several_steps_is_caught_at_every_run(mutant: Any, scope: Any) -> None:
    # shrunk: the steps that show it and no more (create, claim, ... and the failing call)
    assert_caught_and_shrunk(ADK, mutant, scope, 3, 8)


@ON_THE_FULL_GRAPH
def test_the_full_tour_runs_the_ci_tour_first() -> None:
    # so it catches whatever the ci tour does: a store's own history (two renewals, then the
    # lease's last ms) is built along the ci tour's paths too
    options = tuple(sorted(_options().items()))
    ci = tour_of(CI, SUITE.model, options, MEMORY_CAPABILITIES)[1]
    full = tour_of(FULL, SUITE.model, options, MEMORY_CAPABILITIES)[1]
    assert full.sequences[:len(ci.sequences)] == ci.sequences
    assert len(full.sequences) > len(ci.sequences) and len(full.covered) > len(ci.covered)
    assert FULL.bound.endswith("; every argument at its edge; adk-ledger (ci)'s tour first")


def test_a_first_scope_with_a_move_the_scope_does_not_make_is_refused() -> None:
    no_deaths = AdkScope(name="no deaths", edges=False, deaths=False, first=CI)
    with pytest.raises(Unsound, match="no deaths runs a smaller scope's tour first, but makes "
                                      "no move 'c[01] dies'"):
        tour_of(no_deaths, SUITE.model, tuple(sorted(_options().items())), MEMORY_CAPABILITIES)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fencepost.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.long
def test_check_with_the_tour_reports_its_coverage(tmp_path: Path) -> None:
    done = _cli("check", "adk-ledger", "--adapter", "memory", "--tour", "ci", "--seed", "1",
                "--concurrency", "0", "--report", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tour (adk-ledger (ci)): " in done.stdout
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    tour = data["tour"]
    assert tour["run"] == tour["edges"] == tour["planned"] > 0 and tour["stopped"] == ""
    report = report_from_json(data)
    assert report.tour is not None and report.tour.finished
    assert report.tour.to_json() == tour
    assert "--tour ci" in report.replay
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "## Transition tour" in markdown
    fence = tour["clauses"]["ADK-FENCE-001"]["edges"]
    assert re.search(rf"\| ADK-FENCE-001 +\| {fence:,} +\| {fence:,} +\|", markdown)


@pytest.mark.parametrize(("args", "said"), [
    (("adk-ledger", "--tour", "nowhere"),
     "fencepost: error: --tour: adk-ledger has no tour scope 'nowhere'; use full, ci"),
])
def test_a_tour_that_does_not_exist_is_one_line_and_exit_2(args: tuple[str, ...], said: str,
                                                           tmp_path: Path) -> None:
    done = _cli("check", *args, "--adapter", "memory", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == said
    assert done.stdout == ""


def test_the_graph_and_plan_are_made_once_per_process() -> None:
    key = (_options(), MEMORY_CAPABILITIES)
    options = tuple(sorted(key[0].items()))
    assert tour_of(CI, SUITE.model, options, key[1]) is not None
    first = tour_of(CI, SUITE.model, options, key[1])
    assert tour_of(CI, SUITE.model, options, key[1])[1] is first[1]


def test_a_deep_mutant_is_an_adapter_spec_and_the_tour_catches_it_in_a_whole_check() -> None:
    report = check("adk-ledger", "mutant:steady_owner_boundary_slack", seed=1, concurrency=0,
                   tour="ci")
    failed = {v.clause.id: v for v in report.verdicts if v.status == "fail"}
    assert "ADK-LEASE-001" in failed
    # the tour ran to its end; the edges where the store differed are not counted as run
    assert report.tour is not None and report.tour.stopped == ""
    edges, run = report.tour.clauses["ADK-LEASE-001"]
    assert 0 < run < edges


def _lost_while_shrinking(base: type) -> type:
    """``base`` whose every call on an id of a shrinking replay (``...s0x...``) raises: its
    connection goes while the tour shrinks the failure it found."""

    def lost(name: str) -> Any:
        def call(self: Any, *args: Any) -> Any:
            if args and isinstance(args[0], str) and "s0x" in args[0]:
                raise ConnectionError("connection reset")
            return getattr(base, name)(self, *args)
        return call

    methods = ("create", "get", "claim", "renew", "checkpoint", "finish", "delete")
    return type("LostWhileShrinking", (base,), {m: lost(m) for m in methods})


def test_a_store_lost_while_a_failure_is_shrunk_keeps_the_failure_and_the_coverage() -> None:
    mutant = next(m for m in DEEP if m.name == "dead_owner_keeps_its_window")
    store_class = _lost_while_shrinking(mutant.store_class(ADK.store_class("memory")))
    profile = attrs.evolve(PROFILES["quick"], tour="ci")
    part = next(k for k, p in enumerate(parts_of(SUITE, profile)) if TOUR in p)
    evidence = run_suite(SUITE, ADK.memory_factory(store_class), profile=profile, seed=1,
                         options=mutant.options, parts=[part]).evidence
    assert evidence.failures["ADK-FENCE-001"].check == TOUR
    assert not evidence.failures["ADK-FENCE-001"].minimal  # found, not shrunk
    assert str(evidence.ended[TOUR]).startswith("failed ADK-FENCE-001")
    assert evidence.tour is not None and 0 < evidence.tour.run < evidence.tour.edges
    assert evidence.tour.stopped.startswith("the store was lost in sequence ")
    assert "connection reset" in evidence.tour.stopped
    assert "ADK-FENCE-001" not in evidence.unknown and "ADK-LEASE-001" in evidence.unknown


def test_a_store_call_that_does_not_return_ends_the_tour_and_says_where() -> None:
    release = threading.Event()

    class Hangs(ADK.store_class("memory")):  # type: ignore[misc]
        def create(self, *args: Any) -> Any:
            release.wait()
            return super().create(*args)

    try:
        failed, coverage = tour_alone(SUITE, ADK.memory_factory(Hangs), CI, call_timeout_s=0.5)
    finally:
        release.set()
    assert failed == {} and coverage.run == 0 and not coverage.finished
    assert coverage.stopped.startswith("create did not return in 0.5 s")


def test_verify_tells_apart_concrete_states_that_python_equates() -> None:
    """The soundness check skips a concrete state written exactly as one it checked before;
    1, 1.0 and True are equal in Python but not in the contracts, so states holding them are
    each checked."""
    def tourist(value: object) -> ModelTourist:
        return ModelTourist(SUITE.model, {}, frozenset(), {"x": value}, 5)

    states = [tourist(v) for v in (1, 1.0, True)]
    assert states[0].state == states[1].state == states[2].state
    assert len({_concrete("d", t) for t in states}) == 3
    assert _concrete("d", tourist(1)) == _concrete("d", states[0])
