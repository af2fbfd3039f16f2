"""The state machine's shrink budget: every broken clause reported, none hidden by the budget,
the ones cut short marked. Budgets of 0 and none only: what a budget in seconds cuts depends on
the machine's speed, which no test here may depend on."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from fencepost.bench import _world
from fencepost.mutants import mutant_factory
from fencepost.registry import contract_named
from fencepost.scenarios.harness import READ_BACK
from fencepost.scenarios.machine import NOT_REPLAYED, _where, run_machine
from fencepost.scenarios.shrinking import Shrinking
from fencepost.scenarios.tour import run_tour
from fencepost.scenarios.trace import TraceStep
from fencepost.scenarios.world import violation
from fencepost.spec.adk_ledger import Create, Get, Renew
from fencepost.spec.outcome import Err, Ok


class TwoBugs(RuleBasedStateMachine):
    """X-1 breaks in most examples from the first; X-2 only from the 30th example on, long
    after Hypothesis on its own would have stopped generating to shrink X-1."""

    examples = 0
    x2_from = 30

    def __init__(self) -> None:
        super().__init__()
        type(self).examples += 1

    @rule(n=st.integers(0, 3))
    def step(self, n: int) -> None:
        if n == 1:
            raise violation("X-1", "one", ())
        if n == 2 and type(self).examples >= type(self).x2_from:
            raise violation("X-2", "two", ())


def _fresh() -> type[TwoBugs]:
    return type("TwoBugs", (TwoBugs,), {"examples": 0})


def test_no_shrinking_still_reports_every_broken_clause_each_marked_not_minimal() -> None:
    run = run_machine(_fresh(), examples=60, steps=5, seed=1, shrinking=Shrinking.parse("0"))
    assert sorted(v.clause for v in run.violations) == ["X-1", "X-2"]
    assert run.unshrunk == frozenset({"X-1", "X-2"})


def test_without_a_budget_every_clause_is_shrunk_to_its_minimum() -> None:
    run = run_machine(_fresh(), examples=60, steps=5, seed=1, shrinking=Shrinking.parse("none"))
    assert sorted(v.clause for v in run.violations) == ["X-1", "X-2"]
    assert run.unshrunk == frozenset()


def test_progress_says_which_clause_is_being_shrunk() -> None:
    said: list[str] = []
    run_machine(_fresh(), examples=60, steps=5, seed=1, progress=lambda e: said.append(str(e)),
                shrinking=Shrinking.parse("none"))
    shrinking = [line for line in said if "shrinking the counterexample" in line]
    assert sorted(shrinking) == ["state machine: shrinking the counterexample of X-1",
                                 "state machine: shrinking the counterexample of X-2"]


@pytest.mark.parametrize(("text", "per", "total", "back"), [
    ("3", 3.0, None, "3"), ("3/10", 3.0, 10.0, "3/10"), ("none", None, None, "none"),
    ("0", 0.0, None, "0"), ("2.5/0", 2.5, 0.0, "2.5/0")])
def test_a_budget_reads_and_reads_back(text: str, per: float | None, total: float | None,
                                       back: str) -> None:
    budget = Shrinking.parse(text)
    assert (budget.per_clause_s, budget.total_s) == (per, total)
    assert budget.describe() == back


@pytest.mark.parametrize("text", ["", "fast", "3/x", "-1", "1/-2"])
def test_a_bad_budget_is_refused_with_what_to_write(text: str) -> None:
    with pytest.raises(ValueError, match="shrink budget"):
        Shrinking.parse(text)


class Recorded(TwoBugs):
    """TwoBugs writing down the first example's steps."""

    first: list[int] | None = None

    @rule(n=st.integers(0, 3))
    def step(self, n: int) -> None:
        if type(self).examples == 1 and type(self).first is not None:
            type(self).first.append(n)
        super().step(n)


def test_a_failure_replayed_from_the_example_database_does_not_stop_generation() -> None:
    """The stored failure runs first; then, where Hypothesis would skip its generate phase to
    report the replay soonest, the run still makes all its examples (a campaign's later seeds
    share one database, and each must put the store to the test, not only replay): X-2, which
    only examples from the 30th on can break, is found too."""
    from hypothesis.database import InMemoryExampleDatabase

    db = InMemoryExampleDatabase()
    # Only X-1 is stored, shrunk: Hypothesis then takes the replay as final and ends the run.
    first = run_machine(type("Recorded", (Recorded,), {"examples": 0, "x2_from": 10**9}),
                        examples=60, steps=5, seed=1, database=db,
                        shrinking=Shrinking.parse("none"))
    assert [v.clause for v in first.violations] == ["X-1"]
    machine = type("Recorded", (Recorded,), {"examples": 0, "first": []})
    again = run_machine(machine, examples=60, steps=5, seed=2, database=db,
                        shrinking=Shrinking.parse("0"))
    assert machine.first == [1]  # the stored, shrunk counterexample of X-1
    # X-2 breaks from the 30th example on: generation went on past the replay. (Not all 60:
    # X-2 depending on how many examples ran before is state Hypothesis may find its replays
    # disagree with, and a run it calls flaky ends with the failures seen so far.)
    assert machine.examples >= TwoBugs.x2_from
    assert sorted(v.clause for v in again.violations) == ["X-1", "X-2"]


# -- a store that answers differently to the same steps: where the replay went another way --


T0 = 1_000_000  # the run's clock as its first example begins


def _example(prefix: str, *lines: TraceStep, began: int = T0) -> Any:
    """An example as ``_where`` reads it: its id prefix, its clock as it began and its
    harness's trace."""
    return SimpleNamespace(prefix=prefix, began=began, h=SimpleNamespace(trace=list(lines)))


def _get(actor: str, key: str, expected: Any, actual: Any, at: int = T0) -> TraceStep:
    return TraceStep(actor, at, Get(key), "", expected, actual)


def _create(key: str, at: int = T0) -> TraceStep:
    return TraceStep("client", at, Create(key, {"workflow_id": "w", "workflow_version": 1,
                                                "kind": "k"}, {}), "", Ok(None), Ok(None))


_FOUND, _MISSING = Ok("view"), Err("not_found")


def test_where_a_step_got_another_answer_in_the_replay() -> None:
    first = _example("e1", _create("e1-a"), _get("client", "e1-a", _FOUND, _MISSING))
    replay = _example("e2", _create("e2-a"), _get("client", "e2-a", _FOUND, _FOUND))
    assert _where([first, replay]) == (
        f"{NOT_REPLAYED}: step 2, [t+0 ms] client: get(invocation_id='x-a'), error not_found "
        f"the first time and ok('view') in the replay")


def test_where_the_replay_failed_a_read_back_the_first_run_passed_without_a_line() -> None:
    first = _example("e1", _get("client", "e1-a", _FOUND, _FOUND),
                     _get("client", "e1-b", _MISSING, _MISSING))
    replay = _example("e2", _get("client", "e2-a", _FOUND, _FOUND),
                      _get(READ_BACK, "e2-a", _FOUND, _MISSING))
    assert _where([first, replay]) == (
        f"{NOT_REPLAYED}: step 2, [t+0 ms] check: get(invocation_id='x-a'), ok('view') the "
        f"first time (as the contract requires) and error not_found in the replay")


@pytest.mark.parametrize("went_on", [True, False])
def test_where_the_first_run_failed_a_read_back_the_replay_passed_without_a_line(
        went_on: bool) -> None:
    first = _example("e1", _get("client", "e1-a", _FOUND, _FOUND),
                     _get(READ_BACK, "e1-a", _FOUND, _MISSING))
    after = (_get("client", "e2-b", _MISSING, _MISSING),) if went_on else ()
    replay = _example("e2", _get("client", "e2-a", _FOUND, _FOUND), *after)
    assert _where([first, replay]) == (
        f"{NOT_REPLAYED}: step 2, [t+0 ms] check: get(invocation_id='x-a'), error not_found "
        f"the first time and what the contract requires in the replay")


def test_where_reads_each_examples_times_from_its_own_start() -> None:
    """The run's clock goes on from example to example: the same steps replayed 40 ms later
    carry later times, in the trace and in the ops (a renew's now_ms), and still read alike."""
    def renew(prefix: str, at: int) -> TraceStep:
        return TraceStep("c1", at, Renew(f"{prefix}-a", "t", at, 5), "", _MISSING, _MISSING)

    first = _example("e1", renew("e1", T0), _get("client", "e1-a", _FOUND, _MISSING, T0 + 20))
    replay = _example("e2", renew("e2", T0 + 40), _get("client", "e2-a", _FOUND, _FOUND, T0 + 60),
                      began=T0 + 40)
    assert _where([first, replay]) == (
        f"{NOT_REPLAYED}: step 2, [t+20 ms] client: get(invocation_id='x-a'), error not_found "
        f"the first time and ok('view') in the replay")


def test_where_no_earlier_example_took_the_same_steps() -> None:
    first = _example("e1", _get("client", "e1-a", _FOUND, _FOUND))
    replay = _example("e2", _get("client", "e2-b", _MISSING, _MISSING))
    assert _where([first, replay]) == NOT_REPLAYED
    assert _where([]) == NOT_REPLAYED


# -- what a run puts to the test does not depend on how long it shrinks --


def test_the_runs_that_shrink_a_failure_are_no_evidence_that_a_clause_held() -> None:
    """How far a budget in seconds lets shrinking get is the machine's speed, and a seed's
    verdicts must not be: a clause only the runs of shrinking reached would pass on a fast
    machine and be unknown on a slow one (CI saw ADK-DELETE-005 do so). zombie_checkpoint's
    state machine, seed 1, counts the same clauses and situations held, as often, whether it
    does not shrink at all or shrinks every failure to its minimum."""
    contract = contract_named("adk-ledger")
    seen: dict[str, tuple[Any, ...]] = {}
    for budget in ("0", "none"):
        world = _world(contract, mutant_factory(contract, contract.mutant("zombie_checkpoint"),
                                                 "memory"))
        try:
            run = run_machine(contract.suite.machine_for(world), examples=60, steps=30, seed=1,
                              shrinking=Shrinking.parse(budget))
        finally:
            world.discard()
        assert "ADK-FENCE-001" in {v.clause for v in run.violations}
        seen[budget] = (run, world.evidence.exercised, world.evidence.situations)
    (cut, *not_shrunk), (shrunk, *shrunk_to_the_end) = seen["0"], seen["none"]
    assert "ADK-FENCE-001" in cut.unshrunk and shrunk.unshrunk == frozenset()
    assert shrunk.examples > cut.examples  # shrinking ran examples of its own
    assert not_shrunk == shrunk_to_the_end
    assert not_shrunk[0]["ADK-CREATE-001"] > 0  # generation's examples do count


def test_the_tours_shrinking_is_no_evidence_either() -> None:
    """The tour shrinks a failing sequence by running shorter ones, within the same budget:
    up to zombie_checkpoint's first failure (ADK-FENCE-001), the ci tour counts the same
    clauses held, as often, whether that failure is shrunk or not."""
    contract = contract_named("adk-ledger")
    seen: dict[str, tuple[Any, ...]] = {}
    for budget in ("0", "none"):
        world = _world(contract, mutant_factory(contract, contract.mutant("zombie_checkpoint"),
                                                 "memory"))
        found: list[tuple[str, bool]] = []
        try:
            run_tour(contract.suite.tours["ci"], world, shrinking=Shrinking.parse(budget),
                     record=lambda v, minimal, found=found: found.append((v.clause, minimal)),
                     stop=lambda found=found: bool(found))
        finally:
            world.discard()
        seen[budget] = (found, world.evidence.exercised, world.evidence.situations)
    (cut, *not_shrunk), (shrunk, *shrunk_to_the_end) = seen["0"], seen["none"]
    assert (cut, shrunk) == ([("ADK-FENCE-001", False)], [("ADK-FENCE-001", True)])
    assert not_shrunk == shrunk_to_the_end
    assert not_shrunk[0]["ADK-CREATE-001"] > 0
