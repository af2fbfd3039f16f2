"""The snodo-tasks transition tour (fencepost.scenarios.snodo_tasks.tour): its abstraction is
sound, its plan runs every edge and is the same on every run, correct stores pass it, and every
built-in faulty store whose bug lies within its scope is caught by it alone (the ones outside
are listed with the reason)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from tourkit import (
    INJECTED,
    RACE,
    assert_caught,
    assert_caught_and_shrunk,
    assert_outside_names_mutants,
    assert_the_first_sequences_passed,
    assert_the_plan_runs_every_edge_and_is_the_same_on_every_run,
    assert_the_whole_tour_passed,
    defaults,
    store,
)

from fencepost.adapters.snodo_tasks.mutants import MUTANTS
from fencepost.adapters.snodo_tasks.mutants.deep import DEEP
from fencepost.registry import contract_named
from fencepost.scenarios.kinds import parts_of
from fencepost.scenarios.profiles import PROFILES
from fencepost.scenarios.runner import run_suite
from fencepost.scenarios.snodo_tasks.tour import SnodoScope
from fencepost.scenarios.snodo_tasks.tour_calls import Driver
from fencepost.scenarios.tour import TOUR
from fencepost.scenarios.tour_alone import tour_alone
from fencepost.scenarios.tour_graph import Tourist, Unsound, explore

SNODO = contract_named("snodo-tasks")
SUITE = SNODO.suite
CI = SUITE.tours["ci"]
EDGES = SnodoScope(name="snodo-tasks (ci, argument edges)")
"""The ci scope with every argument at its edge (the full scope's edges, on one task)."""
MEMORY_CAPABILITIES = frozenset({"durable", "concurrency"})

CAPACITY = "a capacity limit: the tour runs under the run's settings (no limit); the " \
           "scripted capacity checks set their own"
TTL = "a TTL and reaping: the named scopes' tasks have none (a TTL multiplies the graph over " \
      "thirtyfold; SnodoScope(ttl=...) has it); the scripted ttl checks catch it"
VALUES = "value fidelity: the tour sends plain values; the scripted value checks send what a " \
         "lossy store changes"
OUTSIDE = {
    "claim_select_then_update": RACE,
    "claim_race_in_history": RACE,
    "revision_checked_outside_write": RACE,
    "capacity_outside_transaction": RACE,
    "max_tasks_counts_active_only": CAPACITY,
    "scope_limit_counts_every_scope": CAPACITY,
    "max_tasks_off_by_one": CAPACITY,
    "get_ignores_ttl": TTL,
    "reaps_one_ms_early": TTL,
    "claim_hides_expired_tasks": TTL,
    "reap_leaves_seen_events": TTL,
    "ttl_as_i32": TTL,
    "timing_of_one_refused": "a ttl or poll interval of 1 ms: the named scopes' tasks have "
                             "none and the kit's poll interval (scripted edges send 1)",
    "retry_delay_as_i32": "a retry delay past 2^31 ms: the named scopes' policy has short "
                          "delays (the scripted retry checks send the longest)",
    "requests_see_the_ttls_last_ms": TTL,
    "accepts_other_stores_accesses": "a value another store minted: the tour walks one store",
    "values_per_connection": "a second connection beside an open one: the tour walks one "
                             "connection (stores_open_together_share_values opens three)",
    "boot_ends_at_first_close": "a second connection beside an open one: the tour walks one "
                                "connection (stores_open_together_share_values opens three)",
    "lease_names_the_task": "a lease presented for another existing task: the named scopes "
                            "have one (SnodoScope(second=True) has the bystander: ten times "
                            "the graph)",
    "capacity_checked_before_exists": CAPACITY,
    "exists_checked_before_capacity": CAPACITY,
    "reaps_in_expiry_order": TTL,
    "reaps_in_id_order": TTL,
    "claim_next_ignores_retry_among_several": "several tasks due at once: the named scopes "
                                              "have one (SnodoScope(second=True) has two)",
    "partial_responses_resume": "two input keys open at once: the named scopes request one "
                                "key (SnodoScope(keys=('q0', 'q1')) has two)",
    "empty_tenant_is_no_tenant": "a task of no tenant and the empty tenant's access: the "
                                 "tour's tasks are one tenant's",
}
"""The snodo-tasks mutants whose bug lies outside the tour's scope, and why (the fault
injection, flaky-backend and value-fidelity mutants are added below by their module)."""
OTHER_CLAUSE = {
    "renewal_moves_same_expiry": "SNODO-LEASE-003",
    "row_read_before_authority": "SNODO-AUTH-001",
    "reopen_keeps_claims_live": "SNODO-CLAIM-003",
    "reopen_releases_claims": "SNODO-CLAIM-004",
}
"""Mutants the tour catches by another clause their bug also breaks: a renewal to the same
expiry moved 1 us keeps the claim live in the old expiry's ms (SNODO-LEASE-003; the tour
presents the lease the renewal handed back, not the value renewed); under authority_first the
other tenant's get-access cancelling is refused for its action before the task is read (the
model names SNODO-AUTH-001 for that refusal); a claim after a reopen decided against the reading
of reopen_claims breaks the claim rule the model names for that claim (a task claimable,
SNODO-CLAIM-003, or under a live claim, SNODO-CLAIM-004; the scripted check blames the reopen,
SNODO-DURABLE-001)."""
ON_EDGES = {"empty_id_read_refused", "task_validated_first"}
"""Mutants whose bug only an argument edge shows (the get of the empty task id, an invalid
task created over an existing one)."""
ARGUMENT_EDGES = {"SNODO-ARG-001", "SNODO-ARG-002", "SNODO-ARG-003", "SNODO-ARG-004",
                  "SNODO-ARG-005", "SNODO-ARG-006", "SNODO-ARG-007"}
"""Clauses only the scopes with argument edges reach."""


def _outside() -> dict[str, str]:
    """:data:`OUTSIDE`, and every mutant of the shared fault, flaky and value modules."""
    from fencepost.adapters.mutants.flaky import flaky_mutants
    from fencepost.adapters.snodo_tasks.mutants import db_failures, values
    from fencepost.spec import snodo_tasks

    found = dict(OUTSIDE)
    found.update({m.name: INJECTED for m in db_failures.MUTANTS})
    found.update({m.name: INJECTED for m in flaky_mutants(snodo_tasks)})
    found.update({m.name: VALUES for m in values.MUTANTS})
    return found


ALL_OUTSIDE = _outside()


def _options(**given: str) -> dict[str, str]:
    return defaults(SUITE, **given)


def test_the_abstraction_is_sound_on_the_ci_scope() -> None:
    graph = explore(CI, SUITE.model, _options(), MEMORY_CAPABILITIES, verify=True)
    assert graph.complete
    assert len(graph.keys) > 400 and len(graph.edges) > 20 * len(graph.keys)


SMALL = SnodoScope(name="snodo-tasks (one worker)", edges=False, workers=1)
"""The ci scope with w0 alone: the readings' graphs at a third of the size."""
READINGS = [("same_expiry_renewal", "successor"), ("committed_at_step", "microsecond"),
            ("transition_check_order", "authority_first"),
            ("forged_request_authority", "not_found")]
"""The readings the ci scope's moves meet (a renewal to the claim's own expiry, an event at a
still clock, a transition refused by its authority, a forged request authority); the others'
points (capacity, reap order, an invalid task) lie outside its moves, and their graphs are the
default's."""


@pytest.mark.parametrize(("name", "reading"), READINGS)
def test_the_abstraction_is_sound_under_every_reading_it_meets(name: str, reading: str
                                                                ) -> None:
    graph = explore(SMALL, SUITE.model, _options(**{name: reading}), frozenset(), verify=True)
    assert graph.complete


@attrs.frozen(eq=False)
class ForgetsTheClaimExpiry(SnodoScope):
    """An abstraction that leaves the claim's expiry out: unsound (claims and leases decide
    by it)."""

    def abstract(self, driver: Driver, t: Tourist) -> Any:
        tasks, leases, events = super().abstract(driver, t)
        return tuple(None if k is None else (*k[:-1], k[-1] and k[-1][0]) for k in tasks), \
            leases, events


def test_the_soundness_check_finds_a_merge_that_changes_a_decision() -> None:
    with pytest.raises(Unsound, match="decides|leads to|different moves"):
        explore(ForgetsTheClaimExpiry(edges=False, workers=1), SUITE.model, _options(),
                frozenset(), verify=True)


def test_the_plan_runs_every_edge_and_is_the_same_on_every_run() -> None:
    assert_the_plan_runs_every_edge_and_is_the_same_on_every_run(SUITE, CI, MEMORY_CAPABILITIES)


def test_no_label_names_an_id_or_a_time() -> None:
    graph = explore(EDGES, SUITE.model, _options(), MEMORY_CAPABILITIES, max_states=50)
    labels = {e.label for e in graph.edges}
    # the walk's ids are "t-k0", "t-e3", "L2" ...; a label names roles (k0, w0's last lease)
    assert labels and not any(word.startswith(("t-", "L")) and word[-1].isdigit()
                              for label in labels for word in label.split())


def test_a_correct_store_passes_the_whole_tour() -> None:
    assert_the_whole_tour_passed(*tour_alone(SUITE, store("snodo-tasks", "memory"), CI))


SQL_SEQUENCES = 120
"""How many of the ci tour's sequences a SQL store runs here: the whole tour (about 31,000
store steps, each sequence on a database of its own) takes minutes on SQLite and PostgreSQL;
``fencepost check snodo-tasks --tour ci`` and the bench run all of it."""


@pytest.mark.long
@pytest.mark.parametrize("adapter", ["sqlite", "postgresql"])
def test_a_correct_sql_store_passes_the_tours_first_sequences(
        adapter: str, request: pytest.FixtureRequest) -> None:
    failed, coverage = tour_alone(SUITE, store("snodo-tasks", adapter, request), CI,
                            sequences=SQL_SEQUENCES)
    assert_the_first_sequences_passed(failed, coverage, SQL_SEQUENCES)


WITHIN = [m.name for m in MUTANTS if m.name not in ALL_OUTSIDE]


@pytest.mark.parametrize("name", WITHIN)
def test_every_mutant_within_the_scope_is_caught_by_the_tour_alone(name: str) -> None:
    mutant = next(m for m in MUTANTS if m.name == name)
    want = OTHER_CLAUSE.get(name, mutant.expected_clause)
    assert_caught(SNODO, mutant, EDGES if want in ARGUMENT_EDGES or name in ON_EDGES else CI,
                  want)


def test_the_mutants_outside_the_scope_are_mutants() -> None:
    assert_outside_names_mutants(MUTANTS, ALL_OUTSIDE, OTHER_CLAUSE, ON_EDGES)


@pytest.mark.parametrize("mutant", DEEP, ids=lambda m: m.name)
def test_a_bug_that_needs_several_steps_is_caught_at_every_run(mutant: Any) -> None:
    # shrunk: the steps that show it (accesses authorized on the way, the create, the claim,
    # ... and the failing call) and no more
    assert_caught_and_shrunk(SNODO, mutant, CI, 4, 12)


@attrs.frozen(eq=False)
class TwoTasksOneClaimer(SnodoScope):
    """Two tasks and one worker claiming the next: the two are tied (created at the same ms),
    and the memory store takes them by creation and id where the model's walk takes the
    first by id, so the store's walk leaves the plan's at some claims."""

    def moves(self, driver: Driver, t: Tourist) -> Any:
        keep = {"create k0", "create k1", "w0 claims the next task", "the clock +1 ms",
                "release w0's last lease"}
        return [m for m in super().moves(driver, t) if m.label in keep]


TIES = TwoTasksOneClaimer(name="snodo-tasks (two tied tasks)", second=True, workers=1,
                          edges=False)


def test_edges_a_store_walks_past_by_another_allowed_answer_are_not_a_pass() -> None:
    failed, coverage = tour_alone(SUITE, store("snodo-tasks", "memory"), TIES)
    assert failed == {} and coverage.stopped == "" and 0 < coverage.run < coverage.edges
    assert coverage.shortfall == (
        f"{coverage.edges - coverage.run:,} of {coverage.edges:,} edges did not run on the "
        "store (it took other answers the model allows, and the walk could not lead it back "
        "to them)")
    profile = attrs.evolve(PROFILES["quick"], tour="ties")
    suite = attrs.evolve(SUITE, tours={**SUITE.tours, "ties": TIES})
    part = next(k for k, p in enumerate(parts_of(suite, profile)) if TOUR in p)
    evidence = run_suite(suite, store("snodo-tasks", "memory"), profile=profile, seed=1,
                         parts=[part]).evidence
    assert str(evidence.ended[TOUR]) == f"unknown: {coverage.shortfall}"
