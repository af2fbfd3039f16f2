"""The linearizability checker: histories against the reference models (issue 6)."""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest

from fencepost.model import adk_ledger as adk
from fencepost.model import ledgence_tasks as ldg
from fencepost.model.base import ContractModel, Ctx, OneOf, Step
from fencepost.model.history import Event, History
from fencepost.model.linearizability import (
    LINEARIZABLE,
    NOT_LINEARIZABLE,
    UNKNOWN,
    CheckResult,
    Verdict,
    check_history,
    partitions,
    render_counterexample,
)
from fencepost.scenarios.ledgence_tasks.scripted import DESCRIPTOR, SCOPE, task_input
from fencepost.scenarios.synthetic import simulate
from fencepost.spec import adk_ledger as spec
from fencepost.spec import ledgence_tasks as lspec
from fencepost.spec import snodo_tasks as sspec
from fencepost.spec.opaque import Forged, Opaque, Ref, known
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Crash, Err, Ok, Outcome

MODEL = adk.MODEL
OPTIONS = adk.default_options()
T0 = 1_000_000  # store time, ms


def adk_step(state: adk.State, op: Op, at: int = T0) -> Step:
    answer = MODEL.step(state, op, Ctx(now=at, options=OPTIONS))
    assert isinstance(answer, Step)
    return answer


def checked(model: ContractModel, events: Any, **kwargs: Any) -> Verdict:
    """``check_history`` with a budget that cannot run out unless a test sets one: the budget
    is wall-clock time, and a verdict asserted here must not depend on how loaded the machine
    is (the checker's speed is what ``fencepost bench`` measures)."""
    return check_history(model, events, **{"budget_s": math.inf, "clock": time.perf_counter,
                                           **kwargs})


def history(*events: Event) -> History:
    return History(spec.CONTRACT, events)


CREATE = spec.Create("i1", {"kind": "agent"}, {"n": 0})
CLAIM1 = spec.Claim("i1", "c1", "t1", T0, 50)
CLAIM2 = spec.Claim("i1", "c2", "t2", T0, 50)
CREATED = adk_step(adk.EMPTY, CREATE).state


def create_event() -> Event:
    return Event("p0", CREATE, 0, 10, Ok(None), T0)


def claimed_by(op: spec.Claim) -> Outcome:
    return adk_step(CREATED, op).outcome


# --- (a) sequential ------------------------------------------------------------------------------


def test_a_sequential_history_is_linearizable() -> None:
    state = adk.EMPTY
    ops: list[Op] = [CREATE, spec.Get("i1"), CLAIM1,
                     spec.Checkpoint("i1", "t1", {"n": 1, "f": 0.5}, T0 + 5, 50),
                     spec.Renew("i1", "t2", T0 + 6, 50),  # stale_owner
                     spec.Finish("i1", "t1", "completed", {"r": 1}, {"n": 2}, T0 + 7),
                     spec.Claim("i1", "c2", "t2", T0 + 8, 50),  # completed
                     spec.Get("i1")]
    events = []
    for k, op in enumerate(ops):
        s = adk_step(state, op, T0 + k)
        state = s.state
        events.append(Event(f"p{k % 3}", op, 100 * k, 100 * k + 50, s.outcome, T0 + k))
    verdict = checked(MODEL, history(*events))
    assert verdict.result == LINEARIZABLE
    assert verdict.linearizable
    assert [p.key for p in verdict.partitions] == ["i1"]
    assert verdict.counterexample is None


def test_a_sequential_history_with_a_wrong_answer_is_not() -> None:
    get = spec.Get("i1")
    wrong = attrs.evolve(adk_step(CREATED, get).outcome.value, revision=7)  # type: ignore[union-attr]
    verdict = checked(MODEL, history(create_event(),
                                           Event("p1", get, 20, 30, Ok(wrong), T0)))
    assert verdict.result == NOT_LINEARIZABLE
    cx = verdict.counterexample
    assert cx is not None
    assert cx.blocked.op == get
    assert [e.op for e in cx.before + cx.prefix] == [CREATE]
    assert cx.expected == (adk_step(CREATED, get).outcome,)


# --- (b), (c) two claims -------------------------------------------------------------------------


def two_claims(second: Event) -> History:
    return history(create_event(),
                   Event("p1", CLAIM1, 20, 60, claimed_by(CLAIM1), T0),
                   second)


def test_b_two_overlapping_claims_that_both_won_are_not_linearizable() -> None:
    h = two_claims(Event("p2", CLAIM2, 25, 55, claimed_by(CLAIM2), T0))
    verdict = checked(MODEL, h)
    assert verdict.result == NOT_LINEARIZABLE
    assert [p.result for p in verdict.partitions] == [NOT_LINEARIZABLE]
    cx = verdict.counterexample
    assert cx is not None
    assert cx.partition == "i1"
    # the create returned before the claims began: an earlier segment, the claims' own is shown
    assert [e.op for e in cx.before] == [CREATE]
    assert [e.op for e in cx.prefix] == [CLAIM1]
    assert cx.blocked.op == CLAIM2
    assert cx.expected == (Err("invocation_owned"),)
    assert set(cx.by_process()) == {"p1", "p2"}
    text = render_counterexample(verdict)
    assert "the segment after its first 1 events" in text
    assert "owner='c1'" in text and "owner='c2'" in text
    assert "<-- could not be placed" in text
    assert "Longest linearizable prefix (1 of 2 events)" in text
    assert "the model allows: error invocation_owned" in text


def test_b_the_loser_answering_invocation_owned_is_linearizable() -> None:
    h = two_claims(Event("p2", CLAIM2, 25, 55, Err("invocation_owned"), T0))
    assert checked(MODEL, h).result == LINEARIZABLE


@pytest.mark.parametrize("second", [
    Event("p2", CLAIM2, 25, None, None, T0),  # never returned
    Event("p2", CLAIM2, 25, 55, None, T0),  # returned nothing (the client gave up)
    Event("p2", CLAIM2, 25, 55, Crash("TimeoutError", "read timed out"), T0),
    Event("p2", CLAIM2, 25, 55, claimed_by(CLAIM2), T0, info=True),
], ids=["never-returned", "no-outcome", "timeout-crash", "info"])
def test_c_the_same_with_one_claim_indeterminate_is_linearizable(second: Event) -> None:
    assert second.indeterminate
    assert checked(MODEL, two_claims(second)).result == LINEARIZABLE


def test_c_an_indeterminate_op_may_take_effect_or_not() -> None:
    create = Event("p0", CREATE, 0, None, None, T0)  # timed out: did it create?
    get = spec.Get("i1")
    seen = Event("p1", get, 50, 60, adk_step(CREATED, get).outcome, T0)
    missing = Event("p1", get, 50, 60, Err("not_found"), T0)
    assert checked(MODEL, history(create, seen)).result == LINEARIZABLE
    assert checked(MODEL, history(create, missing)).result == LINEARIZABLE
    # ... but not before it was invoked: a read that returned before the create was called
    early = Event("p1", get, 0, 10, adk_step(CREATED, get).outcome, T0)
    late_create = Event("p0", CREATE, 20, None, None, T0)
    verdict = checked(MODEL, history(early, late_create))
    assert verdict.result == NOT_LINEARIZABLE
    assert verdict.counterexample is not None and verdict.counterexample.blocked == early


# --- (d) the only valid order is the reverse of the invocations ---------------------------------


def test_d_reverse_order_of_invocation_is_found() -> None:
    after = adk_step(CREATED, CLAIM1).state
    get = spec.Get("i1")
    read = adk_step(after, get).outcome  # sees the claim
    read_event = Event("p1", get, 20, 100, read, T0)  # invoked first, returns last
    claim_event = Event("p2", CLAIM1, 30, 50, claimed_by(CLAIM1), T0)
    verdict = checked(MODEL, history(create_event(), read_event, claim_event))
    assert verdict.result == LINEARIZABLE
    # the same answers with the read over before the claim began: no order explains it
    verdict = checked(MODEL, history(create_event(), attrs.evolve(read_event, completed=25),
                                           claim_event))
    assert verdict.result == NOT_LINEARIZABLE
    cx = verdict.counterexample
    assert cx is not None and cx.blocked.op == get
    assert [e.op for e in cx.before + cx.prefix] == [CREATE]


# --- (d2) segments: quiescent cuts, with indeterminate events carried over them --------------


def test_d2_a_history_is_cut_where_it_is_quiescent() -> None:
    from fencepost.model.linearizability import segments

    a = Event("p1", CLAIM1, 20, 50, claimed_by(CLAIM1), T0)
    b = Event("p2", CLAIM2, 40, 60, Err("invocation_owned"), T0)
    lost = Event("p3", spec.Get("i1"), 45, None, None, T0)
    c = Event("p1", spec.Get("i1"), 61, 70, Ok(None), T0)
    assert segments([c, lost, b, a, create_event()]) == [[create_event()], [a, b, lost], [c]]
    # touching instants are concurrent: no cut
    assert segments([create_event(), attrs.evolve(a, invoked=10)]) == [
        [create_event(), attrs.evolve(a, invoked=10)]]


def test_d2_an_indeterminate_claim_may_take_effect_in_a_later_segment() -> None:
    """The claim's answer was lost in one segment; a read two segments later sees it (the
    claim is placed there), or does not (never placed); a read that sees it and a later one
    that does not cannot both be right."""
    after = adk_step(CREATED, CLAIM1).state
    get = spec.Get("i1")
    sees = adk_step(after, get).outcome
    not_yet = adk_step(CREATED, get).outcome
    lost = Event("p1", CLAIM1, 20, None, None, T0)
    filler = Event("p2", spec.Get("i2"), 30, 40, adk_step(CREATED, spec.Get("i2")).outcome, T0)
    for reads, expected in (
        ([(sees, 50)], LINEARIZABLE),
        ([(not_yet, 50)], LINEARIZABLE),
        ([(not_yet, 50), (sees, 70)], LINEARIZABLE),
        ([(sees, 50), (not_yet, 70)], NOT_LINEARIZABLE),
    ):
        events = [create_event(), lost, filler] + [
            Event("p3", get, t, t + 5, answer, T0) for answer, t in reads]
        verdict = checked(MODEL, history(*events), partition=lambda op: None)
        assert verdict.result == expected, reads
        if expected == NOT_LINEARIZABLE:
            cx = verdict.counterexample
            assert cx is not None and cx.blocked.invoked == 70
            # the last read's segment alone; before it, the claim placed before the first read
            assert [e.invoked for e in cx.events] == [70]
            assert sorted(e.invoked for e in cx.before) == [0, 20, 30, 50]


def test_d2_an_ambiguous_segment_is_settled_by_a_later_one() -> None:
    """One claim's answer is lost and a racing claim by c2 is refused: the refusal proves the
    lost one took effect. A later read must show c1's claim, not the state with no claim."""
    after = adk_step(CREATED, CLAIM1).state
    get = spec.Get("i1")
    lost = Event("p1", CLAIM1, 20, None, None, T0)
    refused = Event("p2", CLAIM2, 25, 30, Err("invocation_owned"), T0)
    good = Event("p3", get, 40, 45, adk_step(after, get).outcome, T0)
    bad = Event("p3", get, 40, 45, adk_step(CREATED, get).outcome, T0)
    assert checked(MODEL, history(create_event(), lost, refused, good)).result == (
        LINEARIZABLE)
    verdict = checked(MODEL, history(create_event(), lost, refused, bad))
    assert verdict.result == NOT_LINEARIZABLE
    assert verdict.counterexample is not None and verdict.counterexample.blocked == bad


# --- (e) partitions: a generated 10,000-event history -------------------------------------------


def test_e_a_partitioned_10000_event_history_is_linearizable() -> None:
    events = simulate(10_000, 8, 500)
    assert len({e.process for e in events}) == 8
    h = history(*events)
    started = time.perf_counter()
    verdict = checked(MODEL, h)
    print(f"\n10,000 events, 8 processes, 500 keys: {verdict.summary()} "
          f"(wall {time.perf_counter() - started:.3f} s)")
    assert verdict.result == LINEARIZABLE
    assert len(verdict.partitions) == 500
    assert {p.result for p in verdict.partitions} == {LINEARIZABLE}
    assert sum(p.events for p in verdict.partitions) == 10_000


def test_e_one_corrupted_outcome_is_found_in_its_partition() -> None:
    events = simulate(10_000, 8, 500)
    k, bad = next((k, e) for k, e in enumerate(events) if k > 5_000 and isinstance(e.op, spec.Get)
                  and isinstance(e.outcome, Ok) and not e.indeterminate)
    assert isinstance(bad.outcome, Ok)
    corrupted = attrs.evolve(bad, outcome=Ok(attrs.evolve(bad.outcome.value,
                                                          revision=bad.outcome.value.revision
                                                          + 1000)))
    events[k] = corrupted
    verdict = checked(MODEL, history(*events))
    assert verdict.result == NOT_LINEARIZABLE
    assert [p.key for p in verdict.failed] == [bad.op.key()]
    cx = verdict.counterexample
    assert cx is not None
    assert cx.partition == bad.op.key()
    assert cx.blocked == corrupted
    assert cx.expected == (bad.outcome,)
    assert all(e.op.key() == bad.op.key() for e in cx.events)
    assert f"partition {bad.op.key()!r}" in render_counterexample(verdict)


def test_e_a_key_of_none_makes_one_global_partition() -> None:
    events = simulate(200, 4, 10)
    assert len(partitions(history(*events))) == 10
    assert list(partitions(history(*events), lambda op: None)) == [None]
    verdict = checked(MODEL, history(*events), partition=lambda op: None)
    assert verdict.result == LINEARIZABLE
    assert [p.key for p in verdict.partitions] == [None]


# --- (f) the budget ---------------------------------------------------------------------------


def test_f_an_exhausted_budget_is_unknown_never_linearizable() -> None:
    verdict = checked(MODEL, history(*simulate(500, 4, 20)), budget_s=0.0)
    assert verdict.result == UNKNOWN
    assert not verdict.linearizable
    assert {p.result for p in verdict.partitions} == {UNKNOWN}
    assert verdict.counterexample is None
    # with no time to search, a wrong history is unknown too; given time, it is caught
    events = simulate(500, 4, 20)
    wrong = history(*events, Event("px", spec.Get("nobody"), 10**9, 10**9 + 1, Ok(None), T0))
    assert checked(MODEL, wrong, budget_s=0.0).result == UNKNOWN
    verdict = checked(MODEL, wrong)
    assert verdict.result == NOT_LINEARIZABLE
    assert [p.key for p in verdict.failed] == ["nobody"]


def test_f_the_budget_runs_on_the_callers_clock_not_the_wall_clock() -> None:
    events = history(*simulate(500, 4, 20))
    frozen = check_history(MODEL, events, budget_s=0.5, clock=lambda: 0.0)
    assert frozen.result == LINEARIZABLE
    assert frozen.elapsed_s == 0.0
    assert {p.elapsed_s for p in frozen.partitions} == {0.0}
    looks = itertools.count(0.0, 1.0)  # a second passes at every look
    late = check_history(MODEL, events, budget_s=0.5, clock=lambda: next(looks))
    assert late.result == UNKNOWN
    assert {p.result for p in late.partitions} == {UNKNOWN}


def test_f_results_are_a_str_enum_written_as_their_words() -> None:
    assert [r.value for r in CheckResult] == ["linearizable", "not_linearizable", "unknown"]
    verdict = checked(MODEL, history(*simulate(50, 4, 5)))
    assert verdict.result is CheckResult.LINEARIZABLE is LINEARIZABLE
    assert json.dumps({"result": verdict.result}) == '{"result": "linearizable"}'
    assert f"{verdict.result}" == "linearizable" == verdict.result
    assert verdict.summary().startswith("linearizable: 50 events")


# --- (g) JSON lines -----------------------------------------------------------------------------


def test_g_history_round_trips_through_json_lines(tmp_path: Path) -> None:
    events = [
        create_event(),
        Event("p1", CLAIM1, 20, 60, claimed_by(CLAIM1), T0),
        Event("p2", CLAIM2, 25, None, None, T0),
        Event("p2", spec.Checkpoint("i1", "t1", {"i": 1, "f": 1.0, "z": -0.0, "l": [1, 2.5],
                                                 "t": (1, 2), "inf": float("inf")}, T0, 9),
              70, 80, Err("stale_owner", "detail", payload={"why": (1, "x")}), T0 + 1),
        Event("p3", spec.Get("i1"), 90, 95, Crash("ConnectionError", "reset"), T0 + 2,
              info=True),
        Event("p3", spec.Renew(Ref("inv"), "t1", T0, 5), 96, 99, Ok(None), T0 + 2),  # type: ignore[arg-type]
    ]
    h = history(*events)
    path = tmp_path / "h.jsonl"
    h.save(path)
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"fencepost": "history", "version": 1,
                                    "contract": "adk-ledger"}
    assert len(lines) == 1 + len(events)
    back = History.load(path)
    assert back == h
    cp = back.events[3].op.checkpoint  # type: ignore[attr-defined]
    assert [type(cp[k]) for k in ("i", "f", "z")] == [int, float, float]
    assert repr(cp["z"]) == "-0.0" and cp["inf"] == float("inf")
    assert isinstance(cp["t"], tuple) and isinstance(cp["l"], list)
    assert back.events[3].outcome.payload == {"why": (1, "x")}  # type: ignore[union-attr]
    assert isinstance(back.events[5].op.invocation_id, Ref)  # type: ignore[attr-defined]
    # through a stream, and for another contract's value classes (tuples inside)
    task = sspec.Task("t", "working", None, 3, 3, None, 250, {}, None, None)
    work = sspec.Work("w", "echo", {"x": [1, (2, 3)]}, (100, 200))
    snodo = History(sspec.CONTRACT, [
        Event("p", sspec.Create(task, work, None), 0, 1, Ok(None), 3),
        Event("p", sspec.Get("t", Forged("x")), 1, 2, Err("not_found"), 3),
    ])
    buf = io.StringIO()
    snodo.save(buf)
    again = History.loads(buf.getvalue())
    assert again == snodo
    assert isinstance(again.events[0].op.work.retry_policy, tuple)  # type: ignore[attr-defined]
    # and re-checking offline gives the same verdict
    assert checked(MODEL, back).result == checked(MODEL, h).result


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "line 3: not JSON"),
    ('{"process": "p", "op": {"op": "get", "args": {"invocation_id": "i"}}}', "line 3: .*lacks"),
    ('{"process": "p", "op": {"op": "fly", "args": {}}, "invoked": 1, "at": 2}',
     "line 3: adk-ledger has no operation 'fly'"),
    ('{"process": "p", "op": {"op": "get", "args": {"invocation_id": "i"}}, "invoked": 5, '
     '"completed": 1, "at": 2}', "line 3: completed .* is before invoked"),
    ('{"process": "p", "op": {"op": "get", "args": {"who": "i"}}, "invoked": 1, "at": 2}',
     "line 3: bad arguments for get"),
    ('{"process": "p", "op": {"op": "get", "args": {"invocation_id": "i"}}, "invoked": 1, '
     '"completed": 2, "outcome": {"ok": {"__type__": "Nope"}}, "at": 2}',
     "line 3: unknown value class 'Nope'"),
    ('[1, 2]', "line 3: an event is a JSON object"),
])
def test_g_a_malformed_line_names_its_number(line: str, message: str) -> None:
    good = history(create_event()).dumps().splitlines()
    with pytest.raises(ValueError, match=message):
        History.loads("\n".join([*good, line]))


def test_g_a_bad_header_is_line_1() -> None:
    with pytest.raises(ValueError, match="line 1: not a fencepost history header"):
        History.loads('{"process": "p"}\n')
    with pytest.raises(ValueError, match="line 1: history format version 2"):
        History.loads('{"fencepost": "history", "version": 2, "contract": "adk-ledger"}\n')
    with pytest.raises(ValueError, match="line 1: unknown contract 'nope'"):
        History.loads('{"fencepost": "history", "version": 1, "contract": "nope"}\n')
    with pytest.raises(ValueError, match="line 1: empty history"):
        History.loads("")


# --- (h) minted names: ledgence-tasks ---------------------------------------------------------


def accept(key: str) -> lspec.AcceptResolvedSubmission:
    return lspec.AcceptResolvedSubmission(lspec.SubmitCommand(key, task_input()), DESCRIPTOR)


def snapshot(key: str, task_id: str, run_id: str, at: int = 5) -> Ok:
    """The store's answer to an accepted submission, with the ids it minted."""
    answer = ldg.MODEL.step(ldg.EMPTY, accept(key), Ctx(now=at))
    assert isinstance(answer, Step)
    real = {"task#1": task_id, "run#1": run_id}
    outcome = known(answer.outcome, real.__getitem__)
    assert isinstance(outcome, Ok)
    return outcome


def ledgence(*events: Event) -> History:
    return History(lspec.CONTRACT, events)


def test_h_concurrent_submissions_of_one_key_return_one_task() -> None:
    a = Event("p1", accept("k1"), 0, 100, snapshot("k1", "T-1", "R-1"), 5)
    b = Event("p2", accept("k1"), 10, 90, snapshot("k1", "T-1", "R-1"), 5)
    verdict = checked(ldg.MODEL, ledgence(a, b))
    assert verdict.result == LINEARIZABLE
    assert [p.key for p in verdict.partitions] == [None]  # a submission mints: global


def test_h_two_task_ids_for_one_key_are_not_linearizable() -> None:
    a = Event("p1", accept("k1"), 0, 100, snapshot("k1", "T-1", "R-1"), 5)
    b = Event("p2", accept("k1"), 10, 90, snapshot("k1", "T-2", "R-2"), 5)
    verdict = checked(ldg.MODEL, ledgence(a, b))
    assert verdict.result == NOT_LINEARIZABLE
    cx = verdict.counterexample
    assert cx is not None and cx.partition is None
    assert cx.prefix == (a,) and cx.blocked == b
    assert cx.expected == (snapshot("k1", "T-1", "R-1"),)  # task#1 is bound to T-1 by then


def test_h_one_id_for_two_tasks_breaks_the_mint_rule() -> None:
    a = Event("p1", accept("k1"), 0, 100, snapshot("k1", "T-1", "R-1"), 5)
    b = Event("p2", accept("k2"), 10, 90, snapshot("k2", "T-1", "R-2"), 5)
    assert checked(ldg.MODEL, ledgence(a, b)).result == NOT_LINEARIZABLE
    b_ok = Event("p2", accept("k2"), 10, 90, snapshot("k2", "T-2", "R-2"), 5)
    assert checked(ldg.MODEL, ledgence(a, b_ok)).result == LINEARIZABLE


def test_h_ops_with_real_ids_are_read_through_the_bindings() -> None:
    a = Event("p1", accept("k1"), 0, 100, snapshot("k1", "T-1", "R-1"), 5)
    b = Event("p2", accept("k2"), 10, 90, snapshot("k2", "T-2", "R-2"), 5)
    # p3 inspects the task it was told about (by its real id) while both submissions run
    inspect = Event("p3", lspec.Inspect(SCOPE, "T-2"), 20, 80, snapshot("k2", "T-2", "R-2"), 5)
    assert checked(ldg.MODEL, ledgence(a, b, inspect)).result == LINEARIZABLE
    # the same by reference (as a script writes it)
    by_ref = attrs.evolve(inspect, op=lspec.Inspect(SCOPE, Ref("task#1")))
    assert checked(ldg.MODEL, ledgence(a, b, by_ref)).result == LINEARIZABLE
    # an id nobody minted cannot be read back as a task
    ghost = attrs.evolve(inspect, op=lspec.Inspect(SCOPE, "T-9"))
    verdict = checked(ldg.MODEL, ledgence(a, b, ghost))
    assert verdict.result == NOT_LINEARIZABLE
    assert verdict.counterexample is not None and verdict.counterexample.blocked == ghost


# --- toy models: the search's own rules --------------------------------------------------------


@attrs.frozen
class Pick(Op):
    """Toy op: the model allows two moves with one answer (like claim_next's tied tasks)."""

    contract: ClassVar[str] = "toy"
    name: ClassVar[str] = "pick"


@attrs.frozen
class Read(Op):
    contract: ClassVar[str] = "toy"
    name: ClassVar[str] = "read"


@attrs.frozen
class Pair(Op):
    """Toy op: the answer shows one minted name twice."""

    contract: ClassVar[str] = "toy"
    name: ClassVar[str] = "pair"


def toy_step(state: int, op: Op, ctx: Ctx) -> Step | OneOf:
    if isinstance(op, Pick):
        return OneOf((Step(Ok("picked"), 1, "T-1", "T-1"), Step(Ok("picked"), 2, "T-1", "T-1")),
                     "T-1", "either")
    if isinstance(op, Pair):
        return Step(Ok((Opaque("id#1"), Opaque("id#1"))), state, "T-2", "T-2")
    return Step(Ok(state), state, "T-3", "T-3")


TOY = ContractModel(name="toy", initial=0, step=toy_step, observe=lambda *a: None,
                    field_clauses={}, choices=(), durable_clause="T-4", mint_clause="T-2")


def test_every_option_of_a_choice_is_a_branch() -> None:
    pick = Event("p1", Pick(), 0, 10, Ok("picked"), 0)
    assert checked(TOY, [pick, Event("p2", Read(), 20, 30, Ok(2), 0)]).result == LINEARIZABLE
    assert checked(TOY, [pick, Event("p2", Read(), 20, 30, Ok(1), 0)]).result == LINEARIZABLE
    verdict = checked(TOY, [pick, Event("p2", Read(), 20, 30, Ok(3), 0)])
    assert verdict.result == NOT_LINEARIZABLE
    assert verdict.counterexample is not None
    assert verdict.counterexample.expected == (Ok(1),)  # the first option's branch went deepest


def test_one_name_cannot_stand_for_two_values_in_one_answer() -> None:
    same = Event("p1", Pair(), 0, 10, Ok(("a", "a")), 0)
    assert checked(TOY, [same]).result == LINEARIZABLE
    assert checked(TOY, [attrs.evolve(same, outcome=Ok(("a", "b")))]).result == (
        NOT_LINEARIZABLE)


# --- fencepost analyze: the same verdict offline ------------------------------------------------


def _analyze(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    # no budget that machine load could exhaust, unless ``extra`` gives one (the last wins)
    return subprocess.run([sys.executable, "-m", "fencepost.cli", "analyze", str(path),
                           "--budget", "inf", *extra],
                          capture_output=True, text=True, timeout=120)


def test_analyze_rechecks_a_saved_history_with_the_same_verdict(tmp_path: Path) -> None:
    good = history(*simulate(2_000, 4, 50))
    good.save(tmp_path / "good.jsonl")
    result = _analyze(tmp_path / "good.jsonl")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(f"{checked(MODEL, good).result}: 2000 events")

    bad = two_claims(Event("p2", CLAIM2, 25, 55, claimed_by(CLAIM2), T0))
    bad.save(tmp_path / "bad.jsonl")
    result = _analyze(tmp_path / "bad.jsonl")
    assert result.returncode == 1
    assert result.stdout.startswith(NOT_LINEARIZABLE)
    assert "<-- could not be placed" in result.stdout and "owner='c2'" in result.stdout


def test_analyze_says_unknown_when_the_budget_runs_out(tmp_path: Path) -> None:
    history(*simulate(2_000, 8, 1)).save(tmp_path / "h.jsonl")
    result = _analyze(tmp_path / "h.jsonl", "--budget", "0")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith(UNKNOWN)


def test_a_history_line_past_the_limit_is_refused_not_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fencepost.model import history as histories

    monkeypatch.setattr(histories, "LINE_CHARS", 1 << 20)
    saved = history(*simulate(20, 4, 3)).dumps()
    lines = saved.count("\n")
    (tmp_path / "h.jsonl").write_text(saved + "x" * ((1 << 20) + 1))
    with pytest.raises(ValueError, match=rf"^line {lines + 1}: longer than 1 Mi characters$"):
        History.load(tmp_path / "h.jsonl")
    assert History.load(io.StringIO(saved)).dumps() == saved


def test_analyze_refuses_a_file_that_is_not_a_history(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text("hello\n")
    result = _analyze(tmp_path / "x.jsonl")
    assert result.returncode == 2
    assert "not a fencepost history: line 1" in result.stderr
    result = _analyze(tmp_path / "missing.jsonl")
    assert result.returncode == 2 and "cannot read history" in result.stderr
    os.mkfifo(tmp_path / "pipe")  # read, it would wait for a writer forever
    result = _analyze(tmp_path / "pipe")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"fencepost: error: {tmp_path / 'pipe'}: not a regular file; name a history.jsonl "
        "written by fencepost check --report"]
