"""The adk-ledger clause catalogue is complete, well-formed and wired to real checks."""

from __future__ import annotations

import re

from fencepost.scenarios.adk_ledger.suite import SUITE
from fencepost.spec import adk_ledger as spec


def test_catalogue_has_stable_well_formed_ids() -> None:
    ids = [c.id for c in spec.CLAUSES]
    assert len(ids) == len(set(ids)) >= 25
    assert all(re.fullmatch(r"ADK-[A-Z]+-\d{3}", i) for i in ids)


def test_every_check_a_clause_names_exists() -> None:
    for clause in spec.CLAUSES:
        for check in clause.checks:
            kind, _, name = check.partition(":")
            if kind == "machine":
                continue
            known = SUITE.scenarios if kind == "scenario" else SUITE.races
            assert name in known, f"{clause.id} names unknown check {check}"


def test_every_scenario_and_race_covers_some_clause() -> None:
    named = {check for clause in spec.CLAUSES for check in clause.checks}
    for name in SUITE.scenarios:
        assert f"scenario:{name}" in named
    for name in SUITE.races:
        assert f"race:{name}" in named


def test_each_doc_versus_implementation_difference_is_a_choice() -> None:
    names = {c.name for c in spec.CHOICES}
    assert names == {"store_clock", "finish_phases", "renew_atomic", "delete_completed",
                     "owned_view"}
    for choice in spec.CHOICES:
        assert choice.default in dict(choice.values)
    assert {c.choice for c in spec.CLAUSES if c.choice} == names


def test_errors_carry_the_seed_atoms() -> None:
    assert {e.code for e in (spec.AlreadyExists, spec.NotFound, spec.Completed,
                             spec.InvocationOwned, spec.StaleOwner, spec.LeaseExpired,
                             spec.InvalidTerminalPhase)} == {
        "already_exists", "not_found", "completed", "invocation_owned", "stale_owner",
        "lease_expired", "invalid_terminal_phase"}
    assert all(issubclass(e, spec.ContractError) for e in (spec.StaleOwner, spec.NotFound))
