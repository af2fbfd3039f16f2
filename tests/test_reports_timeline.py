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


def long_trace(steps: int = 140) -> tuple[TraceStep, ...]:
    """``steps`` calls by three clients, every fifth a claim granting a 25 ms lease, the last
    one answered ok where the model refuses it."""
    from fencepost.spec.outcome import Err

    out = []
    for k in range(steps):
        at = AT + 10 * k
        if k % 5 == 0:
            claim = spec.Claim(f"i{k}", f"c{k % 3}", "t", at, 25)
            answer = Ok(spec.Invocation(f"i{k}", "w", "1", "k", {}, "running", None, True,
                                        "node", at + 25, 2, at, at))
            out.append(TraceStep(f"c{k % 3}", at, claim, "", answer, answer))
        else:
            get = spec.Get(f"i{k}")
            out.append(TraceStep(f"c{k % 3}", at, get, "", Ok(None), Ok(None)))
    last = spec.Renew("i0", "t", AT + 10 * steps, 10)
    out.append(TraceStep("c0", AT + 10 * steps, last, "", Err("lease_expired"), Ok(None)))
    return tuple(out)


def test_a_long_counterexample_is_folded_to_the_steps_before_the_difference() -> None:
    from fencepost.reports.timeline import LEFT, SHOWN, SLOT

    trace = long_trace()
    picture = timeline(trace)
    numbers = [m.number for m in picture.marks]
    assert numbers == list(range(len(trace) - SHOWN + 1, len(trace) + 1))
    assert picture.highlight is not None and picture.highlight.number == len(trace)
    assert picture.width <= LEFT + (SHOWN + 2) * SLOT + SLOT
    assert picture.axis.endswith(f"; steps 1-{len(trace) - SHOWN} not drawn (every step is in "
                                 "the numbered list)")
    short = timeline(trace[:10])
    assert [m.number for m in short.marks] == list(range(1, 11))
    assert "not drawn" not in short.axis


def test_a_lease_of_a_folded_step_still_running_is_drawn_from_the_left_edge() -> None:
    from fencepost.reports.timeline import LEFT, SHOWN

    trace = long_trace()
    first = len(trace) - SHOWN  # the last folded step's index
    running = [k for k in range(first) if k % 5 == 0 and AT + 10 * k + 25 > trace[first].at]
    picture = timeline(trace)
    from_left = [b.label for b in picture.bars if b.x1 == LEFT]
    assert from_left == [f"lease until {AT + 10 * k + 25} ms (granted at step {k + 1}, not "
                         "drawn)" for k in running]
    assert running  # the trace was made so that one is
