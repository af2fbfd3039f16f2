"""Which clause a difference fails (``fencepost.model.base``): the fields that differ, the
refusal that names its rule, the reads and refusals that leave the state as it was. Each
assertion was written for a mutant of these functions that passed every other unit test (a
survey of the kit's own blame code)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import attrs
import pytest

from fencepost.model.base import (
    Step,
    attribute_outcome,
    field_diff,
    options_with_defaults,
    reads_and_refusals,
)
from fencepost.spec.outcome import Err, Ok


@attrs.frozen
class Pair:
    left: Any
    right: Any


@attrs.frozen
class Other:
    left: Any
    right: Any


def test_field_diff_names_the_innermost_fields_that_differ() -> None:
    assert field_diff(Pair(1, Pair(2, 3)), Pair(1, Pair(2, 4))) == ("right",)
    assert field_diff(Pair(0, Pair(2, 3)), Pair(1, Pair(9, 3))) == ("left", "left")
    assert field_diff(Pair(1, Pair(2, 3)), Pair(1, Other(2, 3))) == ("right",)  # not nested
    assert field_diff(Pair(1, 2), Other(1, 2)) == ("<value>",)
    assert field_diff(Pair(1, 2), None) == ("<value>",)
    assert field_diff({"a": 1}, {"a": 2}) == ("<value>",)


def test_an_unknown_option_lists_the_contracts_options_or_says_it_has_none() -> None:
    with pytest.raises(ValueError, match="^unknown option 'x'; this contract has none$"):
        options_with_defaults((), {"x": "1"})


def test_reads_and_refusals_leave_the_state_as_it_was() -> None:
    pure = reads_and_refusals("get")
    write, read = SimpleNamespace(name="put"), SimpleNamespace(name="get")
    assert pure(read, Ok(1)) and pure(write, Err("not_found"))
    assert not pure(write, Ok(1)) and not pure(write, None)  # no code: an answer, not refused


MODEL = SimpleNamespace(answer_clause=None, field_clauses={"right": "X-FIELD"},
                        refusal_clauses={("claim", "deferred", 5): "X-RETRY-AT",
                                         ("claim", "deferred"): "X-RETRY"})


def _step(outcome: Any) -> Step:
    return Step(outcome, None, "X-DECIDED", "X-EFFECT")


def test_a_refusal_the_model_did_not_expect_is_blamed_on_the_rule_it_names() -> None:
    allowed = _step(Ok(Pair(1, 2)))
    assert attribute_outcome(MODEL, allowed, Err("deferred", "", 5), "claim") == "X-RETRY-AT"
    assert attribute_outcome(MODEL, allowed, Err("deferred", "", 6), "claim") == "X-RETRY"
    assert attribute_outcome(MODEL, allowed, Err("deferred", "", {"at": 5}), "claim") == (
        "X-RETRY")  # an unhashable payload: the code alone
    assert attribute_outcome(MODEL, allowed, Err("deferred", "", 5), "renew") == "X-DECIDED"
    assert attribute_outcome(MODEL, allowed, Err("gone"), "claim") == "X-DECIDED"


def test_an_answer_that_differs_otherwise_is_blamed_on_the_deciding_clause_or_its_field() -> None:
    refused = _step(Err("deferred", "", 5))
    assert attribute_outcome(MODEL, refused, Ok(Pair(1, 2)), "claim") == "X-DECIDED"
    assert attribute_outcome(MODEL, refused, Err("gone"), "claim") == "X-DECIDED"
    allowed = _step(Ok(Pair(1, 2)))
    assert attribute_outcome(MODEL, allowed, Ok(Pair(1, 3)), "claim") == "X-FIELD"
    assert attribute_outcome(MODEL, allowed, Ok(Pair(0, 2)), "claim") == "X-EFFECT"


def test_a_difference_in_refusals_alone_is_the_deciding_clauses() -> None:
    refused = _step(Err("deferred", "", 5))
    assert attribute_outcome(MODEL, refused, Err("deferred", "", 6), "claim") == "X-DECIDED"


def test_the_model_names_the_clause_from_the_difference_when_it_is_given_the_op() -> None:
    def named(op: Any, clause: str, expected: Any, actual: Any) -> str | None:
        return "X-NAMED" if op == "special" else None

    model = SimpleNamespace(**{**vars(MODEL), "answer_clause": named})
    allowed = _step(Ok(Pair(1, 2)))
    wrong = Err("deferred", "", 5)
    assert attribute_outcome(model, allowed, wrong, "claim", op="special") == "X-NAMED"
    assert attribute_outcome(model, allowed, wrong, "claim", op="plain") == "X-RETRY-AT"
    assert attribute_outcome(model, allowed, wrong, "claim") == "X-RETRY-AT"  # no op: not asked
    assert attribute_outcome(MODEL, allowed, wrong, "claim", op="special") == "X-RETRY-AT"
