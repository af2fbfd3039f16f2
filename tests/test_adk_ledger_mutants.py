"""Every adk-ledger mutant is caught, by its expected clause."""

from __future__ import annotations

import pytest

from fencepost.adapters.adk_ledger.mutants import MUTANTS
from fencepost.api import check
from fencepost.mutants import run_mutants
from fencepost.spec.adk_ledger import CLAUSES

RACY = [m.name for m in MUTANTS if any(c.startswith("race:") for c in
                                       CLAUSES[m.expected_clause].checks)]


@pytest.mark.parametrize("name", [m.name for m in MUTANTS if "memory" in m.bases])
def test_mutant_is_caught_on_memory(name: str) -> None:
    [row] = run_mutants("adk-ledger", base="memory", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"
    assert row.expected_clause in row.caught_by
    assert row.steps > 0 or row.expected == "unknown"  # an unknown has no counterexample


@pytest.mark.parametrize("name", RACY)
def test_non_atomic_adapter_is_caught_on_sqlite(name: str) -> None:
    [row] = run_mutants("adk-ledger", base="sqlite", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"


def test_one_wrong_read_back_field_fails_its_clause_alone_and_every_other_gets_a_verdict(
) -> None:
    # finish_keeps_owner differs from the first finish on, in `owner` only: the scripted
    # checks go on past it, so no clause is left unknown behind that one difference. (Without
    # the concurrent run: a history whose reads show the kept owner is rightly not
    # linearizable, when its threads happen to read a record after its finish.)
    report = check("adk-ledger", "mutant:finish_keeps_owner", profile="quick", seed=1,
                   strict=True, concurrency=0)
    by_status: dict[str, set[str]] = {}
    for v in report.verdicts:
        by_status.setdefault(v.status, set()).add(v.clause.id)
    assert by_status["fail"] == {"ADK-OWNER-001"}
    assert by_status.get("unknown", set()) == set()
    assert by_status["pass"] == {c.id for c in CLAUSES} - {"ADK-OWNER-001"} - by_status[
        "unsupported"]
    failure = next(v.failure for v in report.verdicts if v.clause.id == "ADK-OWNER-001")
    assert failure is not None and failure.check.startswith("scenario:")
    assert failure.repeats > 0
