"""Every known-faulty adk-ledger adapter is caught, by its expected clause."""

from __future__ import annotations

import pytest

from fencepost.adapters.faulty.adk_ledger import MUTANTS
from fencepost.mutants import run_mutants
from fencepost.spec.adk_ledger import CLAUSES

RACY = [m.name for m in MUTANTS if any(c.startswith("race:") for c in
                                       CLAUSES[m.expected_clause].checks)]


@pytest.mark.parametrize("name", [m.name for m in MUTANTS if "memory" in m.bases])
def test_faulty_adapter_is_caught_on_memory(name: str) -> None:
    [row] = run_mutants("adk-ledger", base="memory", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"
    assert row.expected_clause in row.caught_by
    assert row.steps > 0 or row.expected == "unknown"  # an unknown has no counterexample


@pytest.mark.parametrize("name", RACY)
def test_non_atomic_adapter_is_caught_on_sqlite(name: str) -> None:
    [row] = run_mutants("adk-ledger", base="sqlite", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"
