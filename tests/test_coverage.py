"""Situation coverage: the model names only declared situations, and each declared one is
reached (the quick profile already reaches every adk-ledger situation on one seed)."""

from __future__ import annotations

import pytest

from fencepost.cli import main
from fencepost.coverage import run_coverage
from fencepost.model.adk_ledger import default_options
from fencepost.registry import contract_named
from fencepost.scenarios.phases import OVERLAPPED
from fencepost.scenarios.profiles import PROFILES
from fencepost.scenarios.runner import run_suite
from fencepost.spec.adk_ledger import CAPABILITIES, CLAUSES


def assert_reaches_exactly(reached: set[tuple[str, str]], declared: set[tuple[str, str]]) -> None:
    """The model names no undeclared situation, and the run reached every declared one but
    the overlap of concurrent calls, which depends on thread timing (a loaded machine may
    serialize a small concurrent run); that one is tested on fixed histories below."""
    assert reached <= declared, sorted(reached - declared)
    assert {d for d in declared if d[1] != OVERLAPPED} <= reached, sorted(declared - reached)


def _declared(options: dict[str, str], capabilities: frozenset[str]) -> set[tuple[str, str]]:
    return {(c.id, s.name) for c in CLAUSES for s in c.situations_for(options, capabilities)}


@pytest.mark.parametrize("given", [{}, {"metadata_keys": "optional"}])
def test_adk_ledger_reaches_exactly_its_declared_situations(given: dict[str, str]) -> None:
    suite = contract_named("adk-ledger").suite
    result = run_suite(suite, contract_named("adk-ledger").memory_factory(),
                       profile=PROFILES["quick"], seed=1, options=given)
    reached = {(c, s) for c, counts in result.evidence.situations.items()
               for s, n in counts.items() if n}
    caps = frozenset(result.capabilities) & set(CAPABILITIES)
    assert_reaches_exactly(reached, _declared(default_options(given), caps))


def test_coverage_counts_seeds_per_situation_and_exits_0_when_all_are_reached(capsys) -> None:  # type: ignore[no-untyped-def]
    table = run_coverage("adk-ledger", "memory", profile="quick", seeds=2)
    assert not table.failed
    assert {r.situation for r in table.missed()} <= {OVERLAPPED}
    assert table.exit_code == (3 if table.missed() else 0)
    assert {(r.clause, r.situation) for r in table.rows} == _declared(
        default_options(), frozenset({"concurrency", "owner_liveness", "durable"}))
    assert all(r.seeds == 2 and r.seeds_reached == 2 and r.reached >= 2
               for r in table.rows if r.situation != OVERLAPPED)
    code = main(["coverage", "adk-ledger", "--profile", "quick", "--seeds", "1", "--quiet"])
    out = capsys.readouterr().out
    total = len(table.rows)
    assert (code, f"{total} of {total} situations of " in out) in ((0, True), (3, False))


def test_coverage_of_a_store_that_breaks_a_clause_exits_1() -> None:
    from fencepost.adapters.adk_ledger.mutants import MUTANTS
    from fencepost.mutants import mutant_factory

    mutant = next(m for m in MUTANTS if m.name == "claim_boundary_off_by_one")
    table = run_coverage("adk-ledger",
                         mutant_factory(contract_named("adk-ledger"), mutant, "memory"),
                         profile="quick", seeds=1)
    assert "ADK-CLAIM-005" in table.failed and table.exit_code == 1


def test_coverage_refuses_zero_seeds(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["coverage", "adk-ledger", "--seeds", "0"]) == 2
    assert capsys.readouterr().err.strip() == "fencepost: error: --seeds must be 1 or more, not 0"


def _history(*spans: tuple[str, object, int, int]):  # type: ignore[no-untyped-def]
    from fencepost.model.history import Event, History
    from fencepost.spec import adk_ledger as spec
    from fencepost.spec.outcome import Err, Ok

    answers = {"ok": Ok(None), "refused": Err("stale_owner")}
    return History("adk-ledger", tuple(
        Event(f"w{k}", spec.Renew(str(inv), "t", 5, 5), start, end, answers[kind], 5)
        for k, (kind, inv, start, end) in enumerate(spans)))


@pytest.mark.parametrize(("spans", "overlapped"), [
    ((("ok", "a", 0, 10), ("refused", "a", 5, 20)), True),     # a change and a refusal
    ((("refused", "a", 0, 10), ("ok", "a", 5, 20)), True),     # the change started second
    ((("ok", "a", 0, 10), ("ok", "a", 10, 20)), False),        # one after the other
    ((("ok", "a", 0, 10), ("ok", "b", 5, 20)), False),         # two records
    ((("refused", "a", 0, 10), ("refused", "a", 5, 20)), False),  # no change at all
])
def test_a_change_overlapping_another_call_on_its_record(spans, overlapped) -> None:  # type: ignore[no-untyped-def]
    from fencepost.model.adk_ledger import MODEL
    from fencepost.scenarios.phases import changes_overlapped

    assert changes_overlapped(_history(*spans), None, MODEL.pure) is overlapped


SNODO_SQLITE_READINGS = {
    "same_expiry_renewal": "successor", "forged_request_authority": "not_found",
    "transition_check_order": "authority_first", "create_check_order": "capacity_first",
    "committed_at_step": "microsecond", "reap_order": "expiry",
    "create_validation_order": "after_access",
}


@pytest.mark.parametrize("given", [{}, SNODO_SQLITE_READINGS], ids=["memory", "sqlite"])
def test_snodo_tasks_reaches_exactly_its_declared_situations(given: dict[str, str]) -> None:
    """The Memory store's readings (the defaults) and the SQLite store's: quick on seed 1
    reaches every situation that applies, and the model names no other."""
    from fencepost.model.base import options_with_defaults
    from fencepost.spec import snodo_tasks as snodo

    entry = contract_named("snodo-tasks")
    result = run_suite(entry.suite, entry.memory_factory(),
                       profile=PROFILES["quick"], seed=1, options=given)
    reached = {(c, s) for c, counts in result.evidence.situations.items()
               for s, n in counts.items() if n}
    options = options_with_defaults(snodo.CHOICES, given, snodo.SETTINGS)
    caps = frozenset(result.capabilities) & set(snodo.CAPABILITIES)
    assert_reaches_exactly(reached, {(c.id, s.name) for c in snodo.CLAUSES
                                     for s in c.situations_for(options, caps)})
    assert not result.evidence.failures


@pytest.mark.parametrize("given", [{}, {"renew_lookup": "task_first"}],
                         ids=["cursor_first", "task_first"])
def test_ledgence_tasks_reaches_exactly_its_declared_situations(given: dict[str, str]) -> None:
    """Under each reading of renew_lookup, quick on seed 1 on the Memory store reaches every
    situation that applies (a task 101 events long, four due tasks expiring unlike their ids
    included), and the model names no other."""
    from fencepost.model.base import options_with_defaults
    from fencepost.spec import ledgence_tasks as ledgence

    entry = contract_named("ledgence-tasks")
    result = run_suite(entry.suite, entry.memory_factory(),
                       profile=PROFILES["quick"], seed=1, options=given)
    reached = {(c, s) for c, counts in result.evidence.situations.items()
               for s, n in counts.items() if n}
    options = options_with_defaults(ledgence.CHOICES, given)
    caps = frozenset(result.capabilities) & set(ledgence.CAPABILITIES)
    assert_reaches_exactly(reached, {(c.id, s.name) for c in ledgence.CLAUSES
                                     for s in c.situations_for(options, caps)})
    assert not result.evidence.failures
