"""``fencepost explain``: every clause's rule, situations, checks, options and mutants, read from
the catalogue (each expectation here is computed from the contract's declaration)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fencepost.errors import ConfigurationError
from fencepost.explain import explain, explain_clause, explain_contract, refusals, tour_edges
from fencepost.model.base import options_with_defaults
from fencepost.registry import contract_named, contract_names
from fencepost.scenarios.tour import tour_of

CONTRACTS = contract_names()


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", CONTRACTS)
def test_each_clause_says_its_rule_situations_checks_options_and_mutants(name: str) -> None:
    contract = contract_named(name)
    for clause in contract.clauses:
        out = explain_clause(contract, clause)
        assert out.splitlines()[0] == f"{clause.id}  {clause.title}  ({name})"
        said = flat(out)
        assert flat(clause.text) in said
        for need in clause.requires:
            assert need in said.split("applies to stores that declare: ")[1].split(" (")[0]
        for situation in clause.situations:
            assert f"- {situation.name}" in out
        for check in clause.checks:
            assert f"- {check}: " in out
        options = {clause.choice} | {n for s in clause.situations for n, _ in s.when}
        for choice in contract.choices:
            assert (f"  {choice.name} (default {choice.default}:" in out) == (
                choice.name in options), (clause.id, choice.name)
        proving = [m for m in contract.mutants if m.expected_clause == clause.id]
        assert f"mutants that prove the kit catches it ({len(proving)}):" in out, clause.id
        for m in proving:
            assert f"- {m.name} [" in out and flat(m.bug) in said


@pytest.mark.parametrize("name", ["adk-ledger", "snodo-tasks"])
def test_the_edges_it_counts_are_those_of_the_smallest_tour_a_check_runs(name: str) -> None:
    # explain explores the graph alone (no plan); the count must be the tour's own.
    contract = contract_named(name)
    scope = list(contract.suite.tours.values())[-1]
    model = contract.suite.model
    options = options_with_defaults(model.choices, {}, model.settings)
    graph, _ = tour_of(scope, model, tuple(sorted(options.items())),
                       frozenset(contract.spec.CAPABILITIES))
    counted = tour_edges(contract)
    assert counted == graph.clause_edges() and sum(counted.values()) > 100
    clause = max(counted, key=lambda c: counted[c])
    assert f"{counted[clause]:,} edges of the smallest scope decide it" in flat(
        explain_clause(contract, contract.clauses[clause]))


def test_a_clause_whose_rule_an_option_changes_shows_both_readings_and_the_seed() -> None:
    contract = contract_named("adk-ledger")
    clause = next(c for c in contract.clauses if c.choice is not None)
    choice = next(c for c in contract.choices if c.name == clause.choice)
    said = flat(explain_clause(contract, clause))
    assert flat(f"doc: {choice.doc_says}") in said
    assert flat(f"implementation: {choice.implementation_does}") in said
    for value, meaning in choice.values:
        assert flat(f"{value}: {meaning}") in said
    assert flat(f"seed source: {choice.source}") in said


@pytest.mark.parametrize("name", CONTRACTS)
def test_a_contract_lists_its_refusals_options_and_every_clause(name: str) -> None:
    contract = contract_named(name)
    out = explain_contract(contract)
    headers = [line.split("  ")[0] for line in out.splitlines()
               if line.endswith(f"  ({name})")]
    assert headers == [c.id for c in contract.clauses]
    codes = refusals(contract)
    assert "backend_unavailable" in codes and len(codes) > 1
    for code, cls in codes.items():
        assert f"  {code} ({cls.__name__})" in out
    for choice in contract.choices:
        assert f"  {choice.name} (default {choice.default}:" in out
    for setting in contract.settings:
        assert f"{setting.name}={setting.default} (a setting)" in flat(out)
    assert f"{len(contract.clauses)} clauses, {len(contract.mutants)} mutants" in out


def test_the_command_prints_it_and_a_clause_id_in_any_case_is_found() -> None:
    contract = contract_named("adk-ledger")
    result = subprocess.run([sys.executable, "-m", "fencepost.cli", "explain", "adk-lease-001"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == explain_clause(contract, contract.clauses["ADK-LEASE-001"]) + "\n"


def test_an_unknown_target_is_one_line_with_the_nearest_ids() -> None:
    result = subprocess.run([sys.executable, "-m", "fencepost.cli", "explain", "ADK-LEASE-01"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "fencepost: error: explain: 'ADK-LEASE-01' is neither a contract nor a clause id; did "
        "you mean ADK-LEASE-001, ADK-LEASE-002, ADK-DELETE-001?"]
    with pytest.raises(ConfigurationError, match="give a contract"):
        explain("nothing-like-it")


def test_piped_into_head_it_ends_quietly() -> None:
    result = subprocess.run(f"{sys.executable} -m fencepost.cli explain ledgence-tasks | head -1",
                            shell=True, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    assert result.stdout.startswith("ledgence-tasks: ") and result.stderr == ""
