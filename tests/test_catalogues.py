"""Every contract's catalogue is well formed, wired to checks that exist, and proven: each
clause has a mutant expected to be caught by it."""

from __future__ import annotations

import re

import pytest

from fencepost.registry import contract_named, contract_names


@pytest.fixture(params=contract_names())
def entry(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    return contract_named(request.param)


def test_clause_ids_are_unique_and_well_formed(entry) -> None:  # type: ignore[no-untyped-def]
    ids = [c.id for c in entry.clauses]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[A-Z]+-[A-Z]+-\d{3}", i) for i in ids), ids
    assert len({i.split("-")[0] for i in ids}) == 1, "one prefix per contract"


def test_every_named_check_exists_and_every_check_is_named(entry) -> None:  # type: ignore[no-untyped-def]
    suite = entry.suite
    named = {check for clause in suite.clauses for check in clause.checks}
    faults = suite.faults if suite.faults is not None else {}
    registries = {"scenario": suite.scenarios, "race": suite.races, "fault": faults}
    for check in named:
        kind, _, name = check.partition(":")
        if kind not in ("machine", "concurrent"):
            assert name in registries[kind], check
    assert {f"scenario:{n}" for n in suite.scenarios} <= named
    assert {f"race:{n}" for n in suite.races} <= named
    assert {f"fault:{n}" for n in faults} <= named
    if suite.faults is not None:  # the clauses the fault checks prove are in the catalogue
        assert set(suite.faults.clauses) <= {c.id for c in suite.clauses}
    assert ("concurrent" in named) == (suite.workload is not None)


def test_every_clause_has_a_mutant(entry) -> None:  # type: ignore[no-untyped-def]
    mutants = entry.mutants
    assert {m.expected_clause for m in mutants} == {c.id for c in entry.clauses}
    assert len({m.name for m in mutants}) == len(mutants)


def test_every_option_cites_its_seed_source_and_offers_its_default(entry) -> None:  # type: ignore[no-untyped-def]
    for choice in entry.choices:
        assert choice.source.strip(), f"{choice.name} names no seed source"
        assert choice.default in dict(choice.values), choice.name


def test_option_specific_mutants_name_real_option_values(entry) -> None:  # type: ignore[no-untyped-def]
    spec = entry.spec
    known = {c.name: dict(c.values) for c in spec.CHOICES}
    for mutant in entry.mutants:
        for name, value in mutant.options.items():
            assert name in known, f"{mutant.name}: unknown option {name}"
            assert value in known[name], f"{mutant.name}: {name}={value} is not a reading"


def test_every_required_capability_is_one_the_contract_defines(entry) -> None:  # type: ignore[no-untyped-def]
    spec = entry.spec
    for clause in spec.CLAUSES:
        assert clause.requires <= set(spec.CAPABILITIES), (clause.id, sorted(clause.requires))
        for situation in clause.situations:
            assert situation.requires <= set(spec.CAPABILITIES), (clause.id, situation.name)
            assert {n for n, _ in situation.when} <= {c.name for c in spec.CHOICES}, clause.id
