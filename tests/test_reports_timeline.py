"""The timeline's lease bars come from each call's own arguments: a lease granted by a call made
at another time than the kit's clock (``now_ms``) is drawn as the store computed it."""

from __future__ import annotations

from fencepost.reports.timeline import timeline
from fencepost.scenarios.trace import TraceStep
from fencepost.spec import adk_ledger as spec
from fencepost.spec.outcome import Ok

AT = 1_000_000


def leases(*steps: TraceStep) -> list[str]:
    return [bar.label for bar in timeline(steps).bars]


def test_a_lease_runs_from_the_calls_own_now_ms() -> None:
    renew = spec.Renew("i1", "t1", AT - 5, 10)
    assert leases(TraceStep("c1", AT, renew, "", Ok(None), Ok(None))) == [
        f"lease until {AT + 5} ms"]


def test_a_lease_that_ended_before_the_step_is_not_drawn() -> None:
    """renew at now_ms=-1 for 1 ms: the store's lease_until is 0, long before the step (the
    kit's clock), so there is no bar, not one to the kit's clock plus lease_ms."""
    renew = spec.Renew("i1", "t1", -1, 1)
    assert leases(TraceStep("c1", AT, renew, "", Ok(None), Ok(None))) == []


def test_an_expiry_in_the_answer_wins_over_the_arguments() -> None:
    claim = spec.Claim("i1", "owner", "t1", AT, 10)
    answer = Ok(spec.Invocation("i1", "w", "1", "k", {}, "running", None, True, "node",
                                AT + 3, 2, AT, AT))
    assert leases(TraceStep("c1", AT, claim, "", answer, answer)) == [f"lease until {AT + 3} ms"]
