"""Operations and outcomes round-trip through JSON."""

from __future__ import annotations

import json

from fencepost.spec import adk_ledger as spec
from fencepost.spec.ops import op_from_json
from fencepost.spec.outcome import Crash, Err, Ok, outcome_from_json, outcome_to_json

VIEW = spec.Invocation("a", "wf", 1, "agent", {"s": [1, 2]}, "running", None, True, "c1", 15,
                       1, 0, 5)


def test_ops_round_trip_through_json() -> None:
    ops = [
        spec.Create("a", {"kind": "agent"}, {"s": 1}),
        spec.Claim("a", "c1", "t1", 5, 10),
        spec.Finish("a", "t1", "paused", {"why": "input"}, {}, 7),
    ]
    for op in ops:
        assert op_from_json("adk-ledger", json.loads(json.dumps(op.to_json()))) == op


def test_outcomes_round_trip_through_json() -> None:
    for outcome in (Ok(None), Ok(VIEW), Err("stale_owner", "x"), Crash("TypeError", "boom")):
        back = outcome_from_json(json.loads(json.dumps(outcome_to_json(outcome))))
        assert back == outcome


def test_error_details_do_not_affect_equality() -> None:
    assert Err("stale_owner", "a") == Err("stale_owner", "b")
    assert Err("stale_owner") != Err("lease_expired")
