"""The kit's faulty stores served over fencepost-wire/1 (``fencepost mutants --adapter exec``):
a race in the store is caught there as in process, and a bug that is a raise is a fault,
its clause unknown, never a pass."""

from __future__ import annotations

import pytest

from fencepost.mutants import run_mutants
from fencepost.registry import contract_named

RACES = {
    "adk-ledger": ("create_check_then_insert", "claim_select_then_update",
                   "claim_race_in_history", "renew_read_then_write", "flaky_backend"),
    "snodo-tasks": ("claim_select_then_update", "claim_race_in_history",
                    "revision_checked_outside_write", "capacity_outside_transaction",
                    "flaky_backend"),
    "ledgence-tasks": ("submission_check_then_insert", "claim_read_then_write",
                       "acquire_race_in_history", "rescuer_rechecks_lease_only",
                       "recheck_then_write", "flaky_backend"),
}
"""The mutants whose bug needs another call to run between two of its statements (a round
trip to the backend, ``env.waiting()`` first): ``fencepost serve`` hands the reading over
there, so the calls in flight run meanwhile."""


@pytest.mark.parametrize(("contract", "name"),
                         [(c, n) for c, names in RACES.items() for n in names])
def test_a_race_in_a_served_store_is_caught_over_the_wire(contract: str, name: str) -> None:
    [mutant] = [m for m in contract_named(contract).mutants if m.name == name]
    [row] = run_mutants(contract, base="exec", only=[name])
    assert (row.caught, row.expected) == (True, str(mutant.expected))
    assert mutant.expected_clause in row.caught_by


def test_a_bug_that_is_a_raise_is_an_unknown_clause_over_the_wire() -> None:
    """In process the raise is an answer, and fails the clause; served, it is a fault (the
    store unavailable), and the clause is expected unknown."""
    [row] = run_mutants("adk-ledger", base="exec", only=["create_requires_every_key"])
    assert (row.caught, row.expected, row.crashed) == (True, "unknown", False)
    assert "ADK-CREATE-002" in row.caught_by
    [in_process] = run_mutants("adk-ledger", base="memory", only=["create_requires_every_key"])
    assert (in_process.caught, in_process.expected, in_process.crashed) == (True, "fail", True)
    assert in_process.caught_by[0] == "ADK-CREATE-002"
