"""Unit tests of the snodo-tasks model at every argument's edge: the seed's guards answer
function_clause before anything else, create and transition refuse what the seed's validation
refuses, and the edges the seed takes (the empty tenant, a retry delay of 0, a task created
completed) are taken."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from fencepost.model.base import Ctx
from fencepost.model.snodo_tasks import step
from fencepost.model.snodo_tasks.records import EMPTY, MAIN, AccessM, LeaseM
from fencepost.model.snodo_tasks.situations import situations
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.outcome import Err, Ok

NOW = 1_000
ASK = spec.Event("ask", "input_requested", {"key": "k", "request": {"method": "m"}})
DONE = spec.Event("done", "completed", {"result": {}})


def run(state: Any, op: Any, now: int = NOW, **options: str) -> Any:
    return step(state, op, Ctx(now=now, options=options))


def found(state: Any, op: Any, **options: str) -> set[tuple[str, str]]:
    ctx = Ctx(now=NOW, options=options)
    return set(situations(state, op, ctx, step(state, op, ctx)))


def task(tid: str = "a", **changes: Any) -> spec.Task:
    return attrs.evolve(spec.Task(tid, "working", None, NOW, NOW, None, 250, {}, None, None),
                        **changes)


def work(**changes: Any) -> spec.Work:
    return attrs.evolve(spec.Work("idem", "job", {}, ()), **changes)


def acc(kind: str, tid: str = "a", scope: str | None = "t1") -> AccessM:
    return AccessM(MAIN, scope, kind, tid)


def claimed() -> tuple[Any, LeaseM]:
    """Task a created and claimed by w1 until NOW + 100; task b created, free."""
    state = EMPTY
    for tid in ("a", "b"):
        state = run(state, spec.Create(task(tid), work(), acc("create", tid))).state
    s = run(state, spec.Claim("a", "w1", 100))
    return s.state, s.outcome.value.lease.meaning


def _guarded(lease: LeaseM) -> list[tuple[Any, str, str]]:
    worker = spec.WorkerAuthority(lease)
    return [
        (spec.Claim("b", "w2", 0), "SNODO-ARG-001", "claim with a lease_ms of 0"),
        (spec.Claim("b", "w2", -5), "SNODO-ARG-001", "claim with a negative lease_ms"),
        (spec.Claim("b", "w2", True), "SNODO-ARG-001", "claim with a lease_ms that is no integer"),
        (spec.Claim("b", "w2", 1.5), "SNODO-ARG-001", "claim with a lease_ms that is no integer"),
        (spec.Claim("", "w2", 10), "SNODO-ARG-001", "claim with an empty task id"),
        (spec.Claim("b", "", 10), "SNODO-ARG-001", "claim with an empty owner"),
        (spec.Claim("b", 7, 10), "SNODO-ARG-001", "claim with an owner that is no string"),
        (spec.ClaimNext("", 10), "SNODO-ARG-001", "claim_next with an empty owner"),
        (spec.ClaimNext("w2", "10"), "SNODO-ARG-001",
         "claim_next with a lease_ms that is no integer"),
        (spec.Renew(lease, 0), "SNODO-ARG-002", "a lease_ms of 0"),
        (spec.TransitionOp("a", -1, DONE, worker), "SNODO-ARG-003",
         "a negative expected_revision"),
        (spec.TransitionOp("a", True, DONE, worker), "SNODO-ARG-003",
         "an expected_revision that is no integer"),
        (spec.TransitionOp("a", 0, DONE, lease), "SNODO-ARG-003",
         "an authority neither request nor worker"),
        (spec.TransitionOp(7, 0, DONE, worker), "SNODO-ARG-003", "a task id that is no string"),
        (spec.Authorize(spec.Context("t1"), spec.Action("", "a")), "SNODO-ARG-004",
         "authorize an empty action kind"),
        (spec.Authorize(spec.Context("t1"), spec.Action("delete", "a")), "SNODO-ARG-004",
         "authorize an unknown action kind"),
        (spec.Authorize(spec.Context("t1"), spec.Action("get", "")), "SNODO-ARG-004",
         "authorize an empty task id"),
        (spec.Get(7, acc("get")), "SNODO-ARG-004", "get of a task id that is no string"),
        (spec.WorkerSnapshot(None, lease), "SNODO-ARG-004",
         "worker_snapshot of a task id that is no string"),
        (spec.Create(task("c"), None, acc("create", "c")), "SNODO-ARG-005",
         "a work that is no Work"),
    ]


def test_every_guard_answers_function_clause_and_changes_nothing() -> None:
    state, lease = claimed()
    for op, clause, situation in _guarded(lease):
        s = run(state, op)
        assert (s.outcome, s.clause, s.state) == (Err("function_clause"), clause, state), op
        assert (clause, situation) in found(state, op), op


def test_guards_come_before_every_other_check() -> None:
    state, lease = claimed()
    stale = attrs.evolve(lease, generation=9)  # stale_lease, were it looked at
    assert found(state, spec.Renew(lease, 0)) == {("SNODO-ARG-002", "a lease_ms of 0"),
                                                  ("SNODO-ARG-002", "of a live lease")}
    assert run(state, spec.Renew(stale, 0)).outcome == Err("function_clause")
    missing = spec.TransitionOp("zz", -1, DONE, spec.WorkerAuthority(lease))
    assert run(state, missing).outcome == Err("function_clause")  # not not_found
    assert ("SNODO-ARG-003", "on a missing task") in found(state, missing)
    for order in ("row_first", "authority_first"):
        assert run(state, missing, transition_check_order=order).outcome == Err("function_clause")
    live = run(state, spec.Claim("a", "w2", 0)).outcome  # not unavailable
    assert live == Err("function_clause")


def test_the_empty_task_id_passes_the_read_guards_and_is_no_task() -> None:
    state, lease = claimed()
    s = run(state, spec.Get("", acc("get")))
    assert (s.outcome, s.clause) == (Err("not_found"), "SNODO-GET-002")
    assert found(state, spec.Get("", acc("get"))) == {("SNODO-GET-002", "the empty task id")}
    s = run(state, spec.WorkerSnapshot("", lease))
    assert (s.outcome, s.clause) == (Err("not_found"), "SNODO-WS-001")


@pytest.mark.parametrize(("changes", "situation"), [
    ({"status": ""}, "an empty status"),
    ({"status": "paused"}, "an unknown status"),
    ({"status_message": 7}, "a status_message that is no string"),
    ({"created_at": "soon"}, "a time that is no number"),
    ({"last_updated_at": NOW - 1}, "last_updated_at before created_at"),
    ({"ttl_ms": 0}, "a ttl_ms of 0"),
    ({"ttl_ms": -1}, "a negative ttl_ms"),
    ({"ttl_ms": True}, "a ttl_ms that is no integer"),
    ({"poll_interval_ms": 0}, "a poll_interval_ms of 0"),
    ({"input_requests": {"k": {"method": "m"}}}, "a task created with input requests"),
    ({"result": "done"}, "a result or error that is no mapping"),
    ({"status": "completed", "result": {"n": (1,)}}, "a result or error that is not JSON-safe"),
    ({"status": "failed", "error": {3: "x"}}, "a result or error that is not JSON-safe"),
    ({"status": "completed"}, "a payload that is not its status's"),
    ({"status": "failed", "result": {}}, "a payload that is not its status's"),
    ({"status": "input_required"}, "a payload that is not its status's"),
])
def test_create_refuses_a_task_the_seeds_validation_refuses(changes: dict[str, Any],
                                                            situation: str) -> None:
    op = spec.Create(task(**changes), work(), acc("create"))
    s = run(EMPTY, op)
    assert (s.outcome, s.clause, s.state) == (Err("invalid_task"), "SNODO-ARG-005", EMPTY)
    assert found(EMPTY, op) == {("SNODO-ARG-005", situation)}


@pytest.mark.parametrize(("changes", "situation"), [
    ({"idempotency_key": ""}, "an empty idempotency key"),
    ({"type": None}, "a work type that is no string"),
    ({"input": "x"}, "a work input that is no mapping"),
    ({"input": {"at": float("inf")}}, "a work input that is not JSON-safe"),
    ({"input": {"nested": [{7: 1}]}}, "a work input that is not JSON-safe"),
    ({"retry_policy": (5, -1)}, "a negative retry delay"),
    ({"retry_policy": (2.5,)}, "a retry delay that is no integer"),
    ({"retry_policy": (spec.MAX_RETRY_DELAY_MS + 1,)}, "a retry delay over 4294967295"),
])
def test_create_refuses_work_the_seeds_validation_refuses(changes: dict[str, Any],
                                                          situation: str) -> None:
    op = spec.Create(task(), work(**changes), acc("create"))
    assert run(EMPTY, op).outcome == Err("invalid_task")
    assert found(EMPTY, op) == {("SNODO-ARG-005", situation)}


def test_create_takes_the_edges_the_seed_takes() -> None:
    for t, w in ((task(status="completed", result={}), work()),
                 (task(status="failed", error={"code": 1}, status_message="x"), work()),
                 (task(status="cancelled", ttl_ms=1, poll_interval_ms=None), work()),
                 (task(), work(retry_policy=(0, spec.MAX_RETRY_DELAY_MS)))):
        assert isinstance(run(EMPTY, spec.Create(t, w, acc("create"))).outcome, Ok), (t, w)


def test_a_retry_delay_of_0_is_due_at_once() -> None:
    state = run(EMPTY, spec.Create(task(), work(retry_policy=(0,)), acc("create"))).state
    grant = run(state, spec.Claim("a", "w1", 100))
    lease = grant.outcome.value.lease.meaning
    retry = spec.Event("r", "retry_requested", {"error": {}, "statusMessage": "x"})
    op = spec.TransitionOp("a", 0, retry, spec.WorkerAuthority(lease))
    s = run(grant.state, op, NOW + 1)
    assert s.outcome.value.effects["retry"] == {"disposition": "scheduled", "retry_at": NOW + 1,
                                                "delay_ms": 0, "retry_count": 1}
    assert ("SNODO-RED-004", "a delay of 0") in set(
        situations(grant.state, op, Ctx(now=NOW + 1, options={}), s))
    released = run(s.state, spec.Release(lease), NOW + 1).state
    assert isinstance(run(released, spec.Claim("a", "w2", 10), NOW + 1).outcome, Ok)


def test_the_empty_tenant_is_a_scope_of_its_own() -> None:
    state = run(EMPTY, spec.Create(task(), work(), acc("create", scope=None))).state
    op = spec.Get("a", acc("get", scope=""))
    assert run(state, op).outcome == Err("not_found")
    assert ("SNODO-AUTH-003", "between the empty tenant and no tenant") in found(state, op)


@pytest.mark.parametrize(("event", "code", "situation"), [
    (spec.Event("", "completed", {"result": {}}), "invalid_event_id", "an empty event id"),
    (spec.Event(7, "completed", {"result": {}}), "invalid_event_id",
     "an event id that is no string"),
    (spec.Event("e", "input_requested", {"key": "", "request": {}}), "invalid_input_key",
     "an empty input key"),
])
def test_an_event_the_seed_refuses_once_the_authority_passed(event: spec.Event, code: str,
                                                            situation: str) -> None:
    state, lease = claimed()
    worker = spec.WorkerAuthority(lease)
    op = spec.TransitionOp("a", 0, event, worker)
    s = run(state, op)
    assert (s.outcome, s.clause, s.state) == (Err(code), "SNODO-ARG-006", state)
    assert found(state, op) == {("SNODO-ARG-006", situation)}
    stale = spec.TransitionOp("a", 5, event, worker)  # before the revision check
    assert run(state, stale).outcome == Err(code)
    fenced = spec.TransitionOp("a", 0, event, spec.WorkerAuthority(
        attrs.evolve(lease, generation=9)))  # after the authority
    assert run(state, fenced).outcome == Err("stale_lease")


def test_an_empty_response_key_is_refused_before_the_task_is_reduced() -> None:
    state, lease = claimed()
    state = run(state, spec.TransitionOp("a", 0, ASK, spec.WorkerAuthority(lease))).state
    answer = spec.Event("r", "input_responses_accepted", {"responses": {"": {"a": 1}}})
    op = spec.TransitionOp("a", 1, answer, spec.RequestAuthority(acc("update")))
    assert run(state, op).outcome == Err("invalid_input_responses")
    replayed = spec.TransitionOp("a", 1, attrs.evolve(ASK, data={"key": "", "request": {}}),
                                 spec.WorkerAuthority(lease))
    assert run(state, replayed).outcome == Err("invalid_input_key")  # not event_id_reused
    assert ("SNODO-ARG-006", "under an id seen before") in found(state, replayed)


UNSAFE: Any = {"by_id": {7: "seven"}}  # a key that is no string: not JSON-safe
OK_REQUEST = {"method": "elicitation/create"}
ARG7 = "SNODO-ARG-007"
INVALID_EVENTS: list[tuple[spec.Event, str, str, str]] = [
    # (event, code, clause, situation), each in Event.validate's order
    (spec.Event("e", "completed", None), "invalid_event_data", ARG7,  # type: ignore[arg-type]
     "event data that is no mapping"),
    (spec.Event("e", "input_requested", {"key": ""}), "invalid_event_data", ARG7,
     "event data missing a field"),  # the shape before the key
    (spec.Event("e", "completed", {"result": {}, "note": 1}), "invalid_event_data", ARG7,
     "event data with an extra field"),
    (spec.Event("e", "cancelled", {"why": "x"}), "invalid_event_data", ARG7,
     "event data with an extra field"),
    (spec.Event("e", "failed", {"error": {}}), "invalid_event_data", ARG7,
     "event data missing a field"),
    (spec.Event("e", "input_requested", {"key": "", "request": "x"}), "invalid_input_key",
     "SNODO-ARG-006", "an empty input key"),  # the key before the request
    (spec.Event("e", "input_requested", {"key": "q", "request": "Name?"}),
     "invalid_input_request", ARG7, "an input request that is no mapping"),
    (spec.Event("e", "input_requested", {"key": "q", "request": {}}),
     "invalid_input_request", ARG7, "an input request without a string method"),
    (spec.Event("e", "input_requested", {"key": "q", "request": {"method": 7}}),
     "invalid_input_request", ARG7, "an input request without a string method"),
    (spec.Event("e", "input_requested", {"key": "q", "request": {"method": ""}}),
     "invalid_input_request", ARG7, "an input request with an empty method"),
    (spec.Event("e", "input_requested", {"key": "q", "request": {**OK_REQUEST, **UNSAFE}}),
     "invalid_input_request", ARG7, "an input request that is not JSON-safe"),
    (spec.Event("e", "input_requested", {"key": "q", "request": {**OK_REQUEST, "t": (1,)}}),
     "invalid_input_request", ARG7, "an input request that is not JSON-safe"),
    (spec.Event("e", "input_requested",
                {"key": "q", "request": {**OK_REQUEST, "x": float("nan")}}),
     "invalid_input_request", ARG7, "an input request that is not JSON-safe"),
    (spec.Event("e", "completed", {"result": "done"}), "invalid_task_result", ARG7,
     "a result that is no mapping"),
    (spec.Event("e", "completed", {"result": UNSAFE}), "invalid_task_result", ARG7,
     "a result that is not JSON-safe"),
    (spec.Event("e", "failed", {"error": "boom", "statusMessage": 7}), "invalid_task_error",
     ARG7, "an error that is no mapping"),  # the error before the status message
    (spec.Event("e", "retry_requested", {"error": UNSAFE, "statusMessage": None}),
     "invalid_task_error", ARG7, "an error that is not JSON-safe"),
    (spec.Event("e", "failed", {"error": {}, "statusMessage": 7}), "invalid_status_message",
     ARG7, "a status message that is no string"),
    (spec.Event("e", "retry_requested", {"error": {}, "statusMessage": b"x"}),
     "invalid_status_message", ARG7, "a status message that is no string"),
    (spec.Event("e", "input_responses_accepted", {"responses": "yes"}),
     "invalid_input_responses", ARG7, "responses that are no mapping"),
    (spec.Event("e", "input_responses_accepted", {"responses": {"k": UNSAFE}}),
     "invalid_input_responses", ARG7, "responses that are not JSON-safe"),
    (spec.Event("e", "input_responses_accepted", {"responses": {7: {}}}),
     "invalid_input_responses", ARG7, "responses that are not JSON-safe"),
    (spec.Event("e", "input_responses_accepted", {"responses": {"k": "Ada"}}),
     "invalid_input_responses", ARG7, "a response that is no mapping"),
    (spec.Event("e", "input_responses_accepted", {"responses": {"": "Ada"}}),
     "invalid_input_responses", "SNODO-ARG-006", "an empty response key"),
]


def _authority(event: spec.Event, lease: LeaseM) -> Any:
    if event.kind in spec.REQUEST_KINDS:
        return spec.RequestAuthority(acc(spec.REQUEST_KINDS[event.kind]))
    return spec.WorkerAuthority(lease)


@pytest.mark.parametrize(("event", "code", "clause", "situation"), INVALID_EVENTS,
                         ids=[f"{c}:{s}" for _, c, _, s in INVALID_EVENTS])
def test_event_data_the_seed_refuses_is_refused_in_its_order(
        event: spec.Event, code: str, clause: str, situation: str) -> None:
    state, lease = claimed()
    authority = _authority(event, lease)
    s = run(state, spec.TransitionOp("a", 0, event, authority))
    assert (s.outcome, s.clause, s.state) == (Err(code), clause, state)
    assert found(state, spec.TransitionOp("a", 0, event, authority)) == {(clause, situation)}
    stale = spec.TransitionOp("a", 3, event, authority)  # before the revision is compared
    assert run(state, stale).outcome == Err(code)
    assert (clause, "over a stale expected_revision") in found(state, stale)


@pytest.mark.parametrize("kind", ["", "paused", "Completed"])
def test_a_kind_outside_the_six_is_refused_by_the_authority_never_as_unsupported(
        kind: str) -> None:
    state, lease = claimed()
    ev = spec.Event("e", kind, {})
    assert run(state, spec.TransitionOp("a", 0, ev, spec.WorkerAuthority(lease))).outcome == \
        Err("unauthorized_action")
    for action in ("update", "cancel"):
        op = spec.TransitionOp("a", 0, ev, spec.RequestAuthority(acc(action)))
        assert run(state, op).outcome == Err("unauthorized_action")


def test_the_values_the_seeds_callers_send_are_accepted() -> None:
    state, lease = claimed()
    worker = spec.WorkerAuthority(lease)
    ask = spec.Event("q", "input_requested",
                     {"key": "k", "request": {**OK_REQUEST, "schema": {"n": [1, 1.0, None]}}})
    s = run(state, spec.TransitionOp("a", 0, ask, worker))
    assert s.outcome.value.snapshot.task.input_requests == {"k": ask.data["request"]}
    answer = spec.Event("r", "input_responses_accepted", {"responses": {"k": {"": -0.0}}})
    s = run(s.state, spec.TransitionOp("a", 1, answer, spec.RequestAuthority(acc("update"))))
    assert s.outcome.value.snapshot.accepted_input_responses == {"k": {"": -0.0}}
    failed = spec.Event("f", "failed", {"error": {"big": 2**64 + 1}, "statusMessage": ""})
    s = run(s.state, spec.TransitionOp("a", 2, failed, worker))
    assert (s.outcome.value.snapshot.task.status, s.outcome.value.snapshot.task.error) == \
        ("failed", {"big": 2**64 + 1})


@pytest.mark.parametrize(("value", "safe"), [
    (None, True), (True, True), ("", True), (2**64 + 1, True), (-0.0, True), (5e-324, True),
    ([1, [1.0, {"": None}]], True), ({"a": {"b": []}}, True),
    ((1, 2), False), (b"x", False), (float("nan"), False), (float("inf"), False),
    ({7: "x"}, False), ({"a": [{"b": (1,)}]}, False), ({"a": {1, 2}}, False),
])
def test_json_safe_is_the_seeds_json_value_rule(value: Any, safe: bool) -> None:
    assert spec.json_safe(value) is safe
