"""Unit tests of the snodo-tasks reference model: exact answers and the deciding clauses."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.model.base import Ctx, OneOf
from fencepost.model.snodo_tasks import step
from fencepost.model.snodo_tasks.records import EMPTY, MAIN, AccessM, LeaseM
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import Opaque
from fencepost.spec.outcome import Err, Ok

NOW = 1_000


def task(tid: str, ttl: int | None = None, at: int = NOW) -> spec.Task:
    return spec.Task(tid, "working", None, at, at, ttl, 250, {}, None, None)


def work(*delays: int) -> spec.Work:
    return spec.Work("idem", "job", {"n": 1}, tuple(delays))


def acc(kind: str, tid: str, scope: str = "t1") -> AccessM:
    return AccessM(MAIN, scope, kind, tid)


def run(state: Any, op: Any, now: int = NOW, **options: str) -> Any:
    return step(state, op, Ctx(now=now, options=options))


def created(tid: str = "a", ttl: int | None = None, delays: tuple[int, ...] = ()) -> Any:
    return run(EMPTY, spec.Create(task(tid, ttl), work(*delays), acc("create", tid))).state


def claimed(state: Any, tid: str = "a", now: int = NOW, lease_ms: int = 10) -> tuple[Any, LeaseM]:
    s = run(state, spec.Claim(tid, "w1", lease_ms), now)
    assert isinstance(s.outcome, Ok)
    return s.state, s.outcome.value.lease.meaning


def ev(eid: str, kind: str, **data: Any) -> spec.Event:
    return spec.Event(eid, kind, data)


def test_create_returns_revision_zero_snapshot() -> None:
    s = run(EMPTY, spec.Create(task("a"), work(), acc("create", "a")))
    assert s.outcome == Ok(spec.Snapshot(task("a"), work(), 0, 0, None, None, {}, {}))
    assert s.clause == "SNODO-CREATE-001"


def test_create_with_get_access_is_unauthorized() -> None:
    s = run(EMPTY, spec.Create(task("a"), work(), acc("get", "a")))
    assert s.outcome == Err("unauthorized_action") and s.clause == "SNODO-CREATE-003"
    assert s.state == EMPTY


def test_capacity_max_tasks_then_per_scope() -> None:
    state = created("a")
    s = run(state, spec.Create(task("b"), work(), acc("create", "b")), max_tasks="1")
    assert s.outcome == Err("capacity_exceeded", "", "max_tasks")
    s = run(state, spec.Create(task("b"), work(), acc("create", "b")),
            max_active_tasks_per_scope="1")
    assert s.outcome == Err("capacity_exceeded", "", "max_active_tasks_per_scope")
    other = run(state, spec.Create(task("b"), work(), acc("create", "b", "t2")),
                max_active_tasks_per_scope="1")
    assert isinstance(other.outcome, Ok)


def test_foreign_scope_get_is_not_found() -> None:
    s = run(created("a"), spec.Get("a", acc("get", "a", "t2")))
    assert s.outcome == Err("not_found") and s.clause == "SNODO-AUTH-003"


def test_expired_task_is_hidden_at_exactly_ttl() -> None:
    state = created("a", ttl=50)
    assert isinstance(run(state, spec.Get("a", acc("get", "a")), NOW + 49).outcome, Ok)
    s = run(state, spec.Get("a", acc("get", "a")), NOW + 50)
    assert s.outcome == Err("not_found") and s.clause == "SNODO-TTL-001"
    reaped = run(state, spec.Reap(), NOW + 50)
    assert reaped.outcome == Ok(["a"]) and reaped.state == {}
    assert run(state, spec.Reap(), NOW + 49).outcome == Ok([])


def test_claim_raises_generation_and_live_claim_is_unavailable() -> None:
    state, lease = claimed(created())
    assert lease == LeaseM(MAIN, "a", "w1", 1, NOW + 10, 1)
    assert run(state, spec.Claim("a", "w2", 10), NOW + 9).outcome == Err("unavailable")
    again = run(state, spec.Claim("a", "w2", 10), NOW + 10)
    assert again.outcome.value.lease == Opaque(LeaseM(MAIN, "a", "w2", 2, NOW + 20, 1))
    assert again.clause == "SNODO-CLAIM-005"
    old = run(again.state, spec.WorkerSnapshot("a", lease), NOW + 10)
    assert old.outcome == Err("stale_lease") and old.clause == "SNODO-LEASE-001"


def test_retry_defers_claim_by_exact_remaining_ms() -> None:
    state, lease = claimed(created(delays=(2000,)))
    t = run(state, spec.TransitionOp("a", 0, ev("e1", "retry_requested", error={"c": 1},
                                                  statusMessage="m"), spec.WorkerAuthority(lease)),
            NOW + 5)
    assert t.outcome.value.effects == {"retry": {"disposition": "scheduled",
                                                 "retry_at": NOW + 2005, "delay_ms": 2000,
                                                 "retry_count": 1}}
    state = t.state
    assert run(state, spec.Claim("a", "w2", 10), NOW + 2004).outcome == Err("deferred", "", 1)
    assert run(state, spec.Claim("a", "w2", 10), NOW + 1005).outcome == Err("deferred", "", 1000)
    assert run(state, spec.ClaimNext("w2", 10), NOW + 2004).outcome == Ok(None)
    assert isinstance(run(state, spec.Claim("a", "w2", 10), NOW + 2005).outcome, Ok)


def test_exhausted_retry_fails_the_task() -> None:
    state, lease = claimed(created())
    t = run(state, spec.TransitionOp("a", 0, ev("e1", "retry_requested", error={"c": 1},
                                                  statusMessage="m"), spec.WorkerAuthority(lease)))
    snap = t.outcome.value.snapshot
    assert snap.task.status == "failed" and snap.task.error == {"c": 1}
    assert snap.retry_count == 0 and snap.last_failure == {"error": {"c": 1}, "statusMessage": "m"}
    assert t.clause == "SNODO-RED-005"


def test_duplicate_replays_original_whatever_the_revision() -> None:
    state, lease = claimed(created())
    e = ev("e1", "input_requested", key="k", request={"method": "m"})
    first = run(state, spec.TransitionOp("a", 0, e, spec.WorkerAuthority(lease)), NOW + 1)
    dup = run(first.state, spec.TransitionOp("a", 7, e, spec.WorkerAuthority(lease)), NOW + 5)
    assert dup.outcome.value == attrs.evolve(first.outcome.value, outcome="duplicate")
    reused = run(first.state, spec.TransitionOp("a", 1, ev("e1", "completed", result={}),
                                                spec.WorkerAuthority(lease)), NOW + 5)
    assert reused.outcome == Err("event_id_reused")


def test_an_event_equal_only_by_python_equality_reuses_the_id() -> None:
    # memory.ex matches a replay with ^event: the data's 1 and 1.0, or true and 1, differ.
    state, lease = claimed(created())
    e = ev("e1", "input_requested", key="k", request={"method": "m", "n": 1})
    first = run(state, spec.TransitionOp("a", 0, e, spec.WorkerAuthority(lease)), NOW + 1)
    for n in (1.0, True):
        other = ev("e1", "input_requested", key="k", request={"method": "m", "n": n})
        again = run(first.state, spec.TransitionOp("a", 1, other, spec.WorkerAuthority(lease)),
                    NOW + 5)
        assert again.outcome == Err("event_id_reused")


def test_stale_revision_conflicts_with_current_snapshot() -> None:
    state, lease = claimed(created())
    s = run(state, spec.TransitionOp("a", 3, ev("e1", "completed", result={}),
                                     spec.WorkerAuthority(lease)))
    assert s.outcome == Err("conflict", "", state["a"].snapshot)


def test_committed_at_moves_past_last_update_when_clock_stalls() -> None:
    state, lease = claimed(created())
    e1 = ev("e1", "input_requested", key="k1", request={"method": "m"})
    s1 = run(state, spec.TransitionOp("a", 0, e1, spec.WorkerAuthority(lease)), NOW)
    assert s1.outcome.value.committed_at == NOW + 1
    e2 = ev("e2", "input_requested", key="k2", request={"method": "m"})
    s2 = run(s1.state, spec.TransitionOp("a", 1, e2, spec.WorkerAuthority(lease)), NOW)
    assert s2.outcome.value.committed_at == NOW + 2


def test_get_access_cannot_cancel_and_lease_cannot_send_request_kinds() -> None:
    state, lease = claimed(created())
    s = run(state, spec.TransitionOp("a", 0, ev("e1", "cancelled"),
                                     spec.RequestAuthority(acc("get", "a"))))
    assert s.outcome == Err("unauthorized_action") and s.clause == "SNODO-AUTH-001"
    s = run(state, spec.TransitionOp("a", 0, ev("e1", "cancelled"), spec.WorkerAuthority(lease)))
    assert s.outcome == Err("unauthorized_action") and s.clause == "SNODO-LEASE-006"


def test_claim_next_allows_any_recoverable_task() -> None:
    state = run(created("a"), spec.Create(task("b"), work(), acc("create", "b"))).state
    choice = run(state, spec.ClaimNext("w1", 10))
    assert isinstance(choice, OneOf)
    picked = {o.outcome.value.snapshot.task.id for o in choice.options}
    assert picked == {"a", "b"}


def test_a_microsecond_step_is_the_exact_decimal_however_many_steps() -> None:
    # The seed's SQLite timestamps count whole microseconds (timestamp.ex:44): a thousand
    # steps past 1000 ms are 1001 ms exactly, not a running float sum of 0.001s.
    t: float = 1000
    for _ in range(1000):
        t = spec.microsecond_after(t)
    assert t == 1001.0 and spec.microsecond_after(1000.001) == 1000.002
    assert sum([0.001] * 1000, 1000.0) != 1001.0  # what the running sum would have given
