"""snodo-tasks at the value boundary: each store that takes event data the seed refuses, or
keeps values through lossy JSON, is caught by exactly its clause; the values SNODO-VALUE-001
sends are JSON-safe and tell a lossy store apart."""

from __future__ import annotations

from typing import Any

import pytest

from fencepost.adapters.mutants.base import lossy_json
from fencepost.adapters.snodo_tasks.mutants import MUTANTS
from fencepost.adapters.snodo_tasks.mutants.values import MUTANTS as VALUE_MUTANTS
from fencepost.mutants import run_mutants
from fencepost.scenarios.snodo_tasks.values import DEPTH, EXACT, nested
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import agree


def test_the_value_mutants_are_registered_with_the_contract() -> None:
    assert {m.name for m in VALUE_MUTANTS} <= {m.name for m in MUTANTS}


@pytest.mark.parametrize("name", [m.name for m in VALUE_MUTANTS])
def test_each_value_mutant_is_caught_by_exactly_its_clause(name: str) -> None:
    mutant = next(m for m in VALUE_MUTANTS if m.name == name)
    [row] = run_mutants("snodo-tasks", base="memory", only=[name])
    assert (row.caught, row.caught_by) == (True, [mutant.expected_clause])


def test_the_exact_values_are_json_safe_and_deep() -> None:
    assert spec.json_safe(EXACT)
    depth, value = 0, EXACT["deep"]
    while isinstance(value, dict | list):
        value = value["d"] if isinstance(value, dict) else value[0]
        depth += 1
    assert (depth, value) == (DEPTH, 1.0)


@pytest.mark.parametrize(("value", "lossy"), [
    (1.0, 1), (-0.0, 0), (2**53 + 1, 2**53), (-(2**64 + 1), -(2**64)), ({"n": [1.0]}, {"n": [1]}),
])
def test_javascript_json_loses_what_the_exact_values_tell_apart(value: Any, lossy: Any) -> None:
    assert lossy_json(value) == lossy and type(lossy_json(value)) is type(lossy)
    assert not agree(value, lossy_json(value))


def test_every_kind_of_exact_value_survives_an_exact_store_only() -> None:
    assert agree(EXACT, EXACT)
    assert not agree(EXACT, lossy_json(EXACT))
    for name in ("one", "text", "empty", ""):  # what JSON as JavaScript reads it keeps
        assert agree(EXACT[name], lossy_json(EXACT[name]))
    assert not agree(nested(3), lossy_json(nested(3)))  # 1.0 at the bottom
