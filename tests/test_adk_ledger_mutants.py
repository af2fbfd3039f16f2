"""Every adk-ledger mutant is caught, by its expected clause."""

from __future__ import annotations

import uuid
from typing import Any

import attrs
import pytest

from fencepost.adapter_spec import resolve_adapter
from fencepost.adapters.adk_ledger.mutants import MUTANTS
from fencepost.api import check
from fencepost.env import AdapterEnv
from fencepost.mutants import run_mutant, run_mutants
from fencepost.registry import contract_named
from fencepost.spec.adk_ledger import CLAUSES
from fencepost.spec.errors import ContractError

CRASHES = {m.name: m.crashes_on("memory") for m in MUTANTS}
RACY = [m.name for m in MUTANTS if any(c.startswith("race:") for c in
                                       CLAUSES[m.expected_clause].checks)]


@pytest.mark.parametrize("name", [m.name for m in MUTANTS if "memory" in m.bases])
def test_mutant_is_caught_on_memory(name: str) -> None:
    [row] = run_mutants("adk-ledger", base="memory", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"
    assert row.expected_clause in row.caught_by
    assert row.crashed == CRASHES[name]  # a crash is its bug, or no part of its catch
    assert row.steps > 0 or row.expected == "unknown"  # an unknown has no counterexample


def test_a_mutant_that_crashes_where_its_bug_is_no_crash_is_not_caught() -> None:
    """A mutant whose counterexample shows the store raising what the contract has no word
    for broke on its way: unless its bug is that raise, the catch does not count (a typo in a
    mutant must not pass for the kit catching its bug)."""
    contract = contract_named("adk-ledger")
    [declared] = [m for m in MUTANTS if m.name == "create_requires_every_key"]
    row = run_mutant(contract, declared, base="memory", profile="quick", seed=1)
    assert (row.caught, row.crashed, row.caught_by) == (True, True, ["ADK-CREATE-002"])
    row = run_mutant(contract, attrs.evolve(declared, crashes=()), base="memory",
                     profile="quick", seed=1)
    assert (row.caught, row.crashed, row.caught_by) == (False, True, ["ADK-CREATE-002"])


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


def _answers(adapter: str, calls: list[tuple[str, tuple[Any, ...]]],
             options: dict[str, str] | None = None) -> list[str]:
    """Each call's answer on a fresh store of ``adapter``: "ok" (with what it returned), the
    refusal's code, or the name of what else it raised."""
    factory, _ = resolve_adapter("adk-ledger", adapter)
    store = factory(AdapterEnv(clock=lambda: 5, namespace=f"m{uuid.uuid4().hex[:10]}",
                               options=options or {}))
    answers = []
    try:
        for name, args in calls:
            try:
                value = getattr(store, name)(*args)
                answers.append("ok" if value is None else f"ok {value!r}")
            except ContractError as e:
                answers.append(e.code)
            except Exception as e:  # noqa: BLE001 - a crash is an answer to compare
                answers.append(type(e).__name__)
    finally:
        store.close()
    return answers


CREATE = ("create", ("a", {"workflow_id": "w", "workflow_version": 1, "kind": "k"}, {}))
CLAIM = ("claim", ("a", "c1", "t1", 10, 100))
Calls = list[tuple[str, tuple[Any, ...]]]


@pytest.mark.parametrize(("name", "alike", "bug"), [
    ("claim_accepts_empty_token", [[CREATE, ("claim", ("a", "c1", bytes(range(32)), 10, 100))]],
     [CREATE, ("claim", ("a", "c1", "", 10, 100))]),
    ("one_byte_token_refused", [[CREATE, ("claim", ("a", "c1", "tt", 10, 100))],
                                [CREATE, ("claim", ("a", "c1", b"xy", 10, 100))],
                                [CREATE, ("claim", ("a", "c1", "", 10, 100))],
                                [CREATE, CLAIM, ("renew", ("a", "t", 20, 100))]],
     [CREATE, ("claim", ("a", "c1", b"\xff", 10, 100))]),
    ("lease_of_zero_taken", [[CREATE, ("claim", ("a", "c1", "t", 10, True))],
                             [CREATE, ("claim", ("a", "c1", "t", 10, False))]],
     [CREATE, ("claim", ("a", "c1", "t", 10, 0))]),
    ("float_time_taken", [[CREATE, ("claim", ("a", "c1", "t", True, 100))],
                          [CREATE, ("claim", ("a", "c1", "t", False, 100))]],
     [CREATE, ("claim", ("a", "c1", "t", 2.5, 100))]),
    ("claim_creates_missing", [[("claim", ("a", "c1", 5, 10, 100)), ("get", ("a",))],
                               [("claim", ("a", "c1", "t", 10, 0)), ("get", ("a",))]],
     [("claim", ("a", "c1", "t", 10, 100))]),
    ("missing_write_is_stale", [[("renew", ("a", "t", 10, 0))],
                                [("checkpoint", ("a", "t", [], 10, 100))],
                                [("finish", ("a", "t", "running", None, {}, 10))]],
     [("renew", ("a", "t", 10, 100))]),
    ("zombie_checkpoint", [[("checkpoint", ("a", "t", {}, 10, 0))],
                           [CREATE, CLAIM, ("checkpoint", ("a", 5, {}, 20, 100))]],
     [CREATE, CLAIM, ("checkpoint", ("a", "t0", {}, 20, 100))]),
    ("renew_read_then_write", [[CREATE, CLAIM, ("renew", ("a", "t1", 20, 0))],
                               [("renew", ("a", "t1", 20, -1))]], None),
    ("create_misreads_version", [[("create", ("a", [], {}))]],
     [CREATE, ("get", ("a",))]),
    ("create_overwrites", [[CREATE, ("create", ("a", [], {})), ("get", ("a",))]],
     [CREATE, CREATE]),
    ("create_check_then_insert", [[CREATE, ("create", ("a", {}, []))]], None),
    ("create_requires_every_key", [[("create", ("a", [], {}))]],
     [("create", ("a", {}, {}))]),
])
def test_a_mutant_differs_from_the_correct_store_in_its_bug_alone(
        name: str, alike: list[Calls], bug: Calls | None) -> None:
    """A mutant is one bug: it answers as the correct store does everywhere but where its
    bug shows (an empty token, a lease of 0, a time of 2.5 ms, a claim of a missing record, a
    write to one, a stale checkpoint): the seed's real caller claims with 32 random bytes, a
    bool is no integer (is_integer), and every write's arguments are checked before its
    record is looked at."""
    options = dict(next(m for m in MUTANTS if m.name == name).options)
    for calls in alike:
        assert _answers(f"mutant:{name}", calls, options) == _answers("memory", calls, options)
    if bug is not None:
        assert _answers(f"mutant:{name}", bug, options) != _answers("memory", bug, options)
