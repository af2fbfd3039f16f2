"""The ledgence-tasks transition tour (fencepost.scenarios.ledgence_tasks.tour): its
abstraction is sound, its plan runs every edge of the bounded graph and is the same on every
run, correct stores pass it, and every built-in faulty store whose bug lies within its scope
is caught by it alone (the ones outside are listed with the reason)."""

from __future__ import annotations

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
    assert_the_first_sequences_passed,
    assert_the_plan_runs_every_edge_and_is_the_same_on_every_run,
    assert_the_whole_tour_passed,
    defaults,
    store,
)

from fencepost.adapters.ledgence_tasks.mutants import MUTANTS
from fencepost.adapters.ledgence_tasks.mutants.deep import DEEP
from fencepost.registry import contract_named
from fencepost.scenarios.ledgence_tasks.tour import REPORTS, Driver, LedgenceScope
from fencepost.scenarios.tour_alone import tour_alone
from fencepost.scenarios.tour_graph import Tourist, Unsound, explore

LEDGENCE = contract_named("ledgence-tasks")
SUITE = LEDGENCE.suite
CI = SUITE.tours["ci"]
MEMORY_CAPABILITIES = frozenset({"durable", "concurrency", "dispatch"})
SMALL = LedgenceScope(name="ledgence-tasks (small)", tasks=1, consumers=1, edges=False,
                      near_session=False, reports=("io failure",),
                      deadlines=False, after=False)
"""The ci scope with one settlement (a retryable failure: a retry, a second attempt, an
exhausted budget): every merge is checked under each other reading on it (the ci scope's own
check, under the default reading, is the long test: a merge check runs every move again)."""

EDGE = "an argument at its edge the tour's scopes do not send (the scripted edge checks do)"
LISTING = "paginated listing: the tour does not list (the scripted pagination checks do)"
DISPATCH = "targeted dispatch: the tour makes no claim_dispatch (the dispatch scenarios do)"
TWO_TASKS = "needs two tasks in one queue (an order between them): the ci scope has one"
OTHER_SCOPE = "needs a second scope: the tour submits and reads in one"
VALUES = "value fidelity: the tour sends the kit's plain input and output; the scripted value " \
         "checks send what a lossy store changes"
SUBMISSION = "a submission refused for its input: the tour submits one valid input and a " \
             "variant (the scripted submission checks send the invalid ones)"
OUTSIDE = {
    # races and injected faults
    "submission_check_then_insert": RACE,
    "acquire_race_in_history": RACE,
    "claim_read_then_write": RACE,
    "rescuer_rechecks_lease_only": RACE,
    "recheck_then_write": RACE,
    "flaky_backend": FLAKY,
    "commit_failure_ignored": INJECTED,
    "db_error_is_empty_queue": INJECTED,
    "failed_settlement_applied_again": INJECTED,
    # beyond the bound
    "claims_in_submission_order": TWO_TASKS,
    "recovery_scans_in_id_order": TWO_TASKS,
    "limit_checked_against_backlog": TWO_TASKS + " (a batch smaller than the backlog)",
    "busy_per_session": "two consumers of one session: the named scopes have one "
                        "(LedgenceScope(consumers=2) has two: twelve times the graph)",
    "recycled_ids": "a third run or lease id of one store object: the ci scope mints two "
                    "leases and one run per store object",
    "output_not_counted": "a settlement over 8 MiB: the tour's outputs are small (the scripted "
                          "size checks send one)",
    "application_kind_restricted": "an application failure of the program's own kind: the "
                                   "tour's application failures are 'runtime' (the scripted "
                                   "settlement checks send others)",
    "unknown_intent_is_keep_alive": "an intent neither keep_alive nor dispatch: the tour "
                                    "renews with those two (the scripted edge checks send "
                                    "another)",
    "keys_across_scopes": OTHER_SCOPE,
    "foreign_scope_reads": OTHER_SCOPE,
    "history_page_unbounded": "more than 100 events on one task: two attempts write far fewer",
    "zero_concurrency_accepted": "a session opened with concurrency 0: the tour opens one with "
                                 "2 (the scripted edge checks send 0)",
    "zero_below_cursor_obsolete": "sequence 0 beside a consumer's cursor: the tour acquires at "
                                  "the next sequence and replays the last (the scripted "
                                  "acquisition checks send 0)",
    "session_queue_prefix_fits": "an acquire on a prefix of the session's queue: the tour "
                                 "acquires on the session's own queue (the scripted "
                                 "acquisition checks send others)",
    "input_through_lossy_json": VALUES,
    "output_through_lossy_json": VALUES,
    "elapsed_as_i64": VALUES,
    "one_equals_one_point_zero": VALUES,
    "integer_beyond_u64_accepted": SUBMISSION,
    "data_depth_unchecked": SUBMISSION,
    "retry_delay_unbounded": SUBMISSION,
    "program_mismatch_accepted": SUBMISSION,
    "correlation_key_checked_as_an_id": "a correlation key an id's rules refuse: the tour's "
                                        "keys are plain ids (the scripted submission checks "
                                        "send the others)",
}
"""The ledgence-tasks mutants whose bug lies outside the tour's scope, and why (with those of
the listing, dispatch and argument-edge modules, below)."""
OUTSIDE.update({m.name: LISTING for m in MUTANTS if m.expected_clause.startswith("LDG-LIST")})
OUTSIDE.update({m.name: DISPATCH for m in MUTANTS
                if m.expected_clause.startswith("LDG-DISPATCH")})
OUTSIDE.update({m.name: EDGE for m in MUTANTS
                if m.mixin.__module__.endswith(".edges") and m.name not in OUTSIDE})
OTHER_CLAUSE = {
    "extension_not_stored": "LDG-ACQ-013",
    "pending_commits_cursor": "LDG-ACQ-014",
    "sessions_in_process": "LDG-ACQ-004",
}
"""Mutants the tour catches by another clause their bug also breaks: an extension not stored
shows in the Pending probe's remaining time (LDG-ACQ-013) long before the session's old end,
a day away, which the scope reaches only as the extended end; a Pending
probe that moved the cursor shows at the next finishing acquisition (LDG-ACQ-014); sessions
lost on reopening show at the next acquisition (LDG-ACQ-004: the read-backs after a reopen
read tasks, not sessions)."""


def _options(**given: str) -> dict[str, str]:
    return defaults(SUITE, **given)


def test_the_abstraction_is_sound_on_the_small_scope_with_memorys_capabilities() -> None:
    # The ci scope's own check (every merge of 33,279 edges: two minutes on 2 cores) is run by
    # hand: explore(CI, ..., verify=True) with the default options.
    graph = explore(SMALL, SUITE.model, _options(), MEMORY_CAPABILITIES, verify=True)
    assert graph.complete and len(graph.keys) > 100


READINGS = [(c.name, r) for c in SUITE.model.choices for r, _ in c.values if r != c.default]


@pytest.mark.parametrize(("name", "reading"), READINGS)
def test_the_abstraction_is_sound_under_every_other_reading(name: str, reading: str) -> None:
    graph = explore(SMALL, SUITE.model, _options(**{name: reading}), frozenset(), verify=True)
    assert graph.complete and len(graph.keys) > 100


@attrs.frozen(eq=False)
class ForgetsTheLease(LedgenceScope):
    """An abstraction that leaves the current attempt's times out: unsound (liveness and the
    boundary rule decide by them)."""

    def abstract(self, driver: Driver, t: Tourist) -> Any:
        where, tasks, order, cursors = super().abstract(driver, t)
        kept = tuple(None if task is None or task[4] is None else
                     (*task[:4], task[4][:6], *task[5:]) for task in tasks)
        return where, kept, order, cursors


def test_the_soundness_check_finds_a_merge_that_changes_a_decision() -> None:
    forgets = ForgetsTheLease(**{f.name: getattr(SMALL, f.name)
                                 for f in attrs.fields(LedgenceScope)})
    with pytest.raises(Unsound, match="decides|leads to|different moves"):
        explore(forgets, SUITE.model, _options(), frozenset(), verify=True)


def test_the_plan_runs_every_edge_and_is_the_same_on_every_run() -> None:
    assert_the_plan_runs_every_edge_and_is_the_same_on_every_run(SUITE, CI, MEMORY_CAPABILITIES)


def test_the_scopes_state_their_bound() -> None:
    assert "1 session, 1 consumer, 1 task" in CI.bound
    assert SUITE.tours["full"].reports == REPORTS and SUITE.tours["full"].edges


@pytest.mark.long
def test_a_correct_store_passes_the_whole_tour() -> None:
    assert_the_whole_tour_passed(*tour_alone(SUITE, store("ledgence-tasks", "memory"), CI))


SQL_SEQUENCES = 60
"""How many of the ci tour's sequences a SQL store runs here: the whole tour (about 55,000
store moves) takes five to twelve minutes on SQLite and PostgreSQL; ``fencepost check
ledgence-tasks --tour ci`` and the bench run all of it."""


@pytest.mark.long
@pytest.mark.parametrize("adapter", ["sqlite", "postgresql"])
def test_a_correct_sql_store_passes_the_tours_first_sequences(
        adapter: str, request: pytest.FixtureRequest) -> None:
    failed, coverage = tour_alone(SUITE, store("ledgence-tasks", adapter, request), CI,
                            sequences=SQL_SEQUENCES)
    assert_the_first_sequences_passed(failed, coverage, SQL_SEQUENCES)


def _expected(mutant: Any) -> str:
    return str(OTHER_CLAUSE.get(mutant.name, mutant.expected_clause))


EDGES = LedgenceScope(name="ledgence-tasks (ci, argument edges)", tasks=1, consumers=1,
                      near_session=False, reports=("io failure",), deadlines=False,
                      after=False)
"""The ci scope with one settlement (a retryable failure) and every argument at its edge (the
full scope's edges)."""
BOUNDARIES = LedgenceScope(name="ledgence-tasks (ci, every boundary)", tasks=1, consumers=1,
                           edges=False, reports=("io failure",), after=False)
"""The ci scope with one settlement, the clock sent a ms before the session's end and to each
attempt's deadlines too (the full scope's boundaries but +1 ms)."""
ON_SCOPE = {
    "consumer_id_unchecked": EDGES,  # a consumer outside the session
    "limit_has_no_upper_bound": EDGES,  # expire_batch 101
    "renewal_outlives_session": BOUNDARIES,  # a session that ends within a lease
    "dispatch_at_deadline_authorized": BOUNDARIES,  # a dispatch renewal at the deadline -1 ms
}
"""Mutants whose bug only the full scope's argument edges or clock boundaries show, each
caught on a scope with those alone (the full scope's graph takes a minute to make)."""


BY_FIELD = frozenset({"dispatch_at_deadline_authorized"})
"""Mutants the tour shows only through an answer's field (``execution_may_have_started``,
LDG-RENEW-007), which no edge of the sequences that put the clause to the test names: their
tour is the whole one at once (those sequences alone ran 19,072 edges, 34 s, without a catch;
the whole tour catches it after 6,247)."""


@pytest.mark.parametrize("name", [m.name for m in MUTANTS if m.name not in OUTSIDE])
def test_every_mutant_within_the_scope_is_caught_by_the_tour_alone(name: str) -> None:
    mutant = next(m for m in MUTANTS if m.name == name)
    assert_caught(LEDGENCE, mutant, ON_SCOPE.get(name, CI), _expected(mutant),
                  whole=name in BY_FIELD)


def test_the_mutants_outside_the_scope_are_mutants() -> None:
    assert_outside_names_mutants(MUTANTS, OUTSIDE, OTHER_CLAUSE, ON_SCOPE, BY_FIELD)


@pytest.mark.parametrize("mutant", DEEP, ids=lambda m: m.name)
def test_a_bug_that_needs_several_steps_is_caught_at_every_run(mutant: Any) -> None:
    # shrunk: the steps that show it and no more (open, submit, acquire, ... the failing call)
    assert_caught_and_shrunk(LEDGENCE, mutant, CI, 4, 12)
