"""snodo-tasks' named options (spec.CHOICES): the model gives each reading, the built-in store
passes under each value, and the mutant following the other reading is caught."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from fencepost.adapters.snodo_tasks.mutants import MUTANTS
from fencepost.api import check
from fencepost.model.base import Ctx
from fencepost.model.snodo_tasks import step
from fencepost.model.snodo_tasks.records import BEFORE_REOPEN, EMPTY, MAIN, AccessM, LeaseM
from fencepost.model.snodo_tasks.steps import reopened
from fencepost.mutants import run_mutants
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import ForgedMeaning
from fencepost.spec.outcome import Err, Ok

NOW = 1_000
CHOICES = {c.name: c for c in spec.CHOICES}


def run(state: Any, op: Any, now: int = NOW, **options: str) -> Any:
    return step(state, op, Ctx(now=now, options=options))


def task(tid: str, ttl: int | None = None, at: int = NOW) -> spec.Task:
    return spec.Task(tid, "working", None, at, at, ttl, 250, {}, None, None)


def acc(kind: str, tid: str, scope: str = "t1") -> AccessM:
    return AccessM(MAIN, scope, kind, tid)


def created(*tasks: spec.Task, **options: str) -> Any:
    state = EMPTY
    for t in tasks:
        state = run(state, spec.Create(t, spec.Work("i", "job", {}, (100,)),
                                       acc("create", t.id)), **options).state
    return state


def claimed(state: Any, tid: str = "a", lease_ms: int = 100) -> tuple[Any, LeaseM]:
    s = run(state, spec.Claim(tid, "w1", lease_ms))
    return s.state, s.outcome.value.lease.meaning


def test_every_option_defaults_to_a_listed_value_and_cites_the_seed() -> None:
    assert set(CHOICES) == {"same_expiry_renewal", "forged_request_authority",
                            "transition_check_order", "create_check_order",
                            "committed_at_step", "reopen_claims", "reap_order",
                            "create_validation_order"}
    for choice in spec.CHOICES:
        assert choice.default == choice.values[0][0]
        assert "memory.ex" in choice.source and "sqlite.ex" in choice.source
        assert {c.choice for c in spec.CLAUSES if c.choice} >= {choice.name}


@pytest.mark.parametrize(("value", "old_valid", "expiry"),
                         [("identical", True, NOW + 100), ("successor", False, NOW + 100.001)])
def test_renewal_to_the_same_expiry(value: str, old_valid: bool, expiry: float) -> None:
    state, lease = claimed(created(task("a")))
    renewed = run(state, spec.Renew(lease, 60), NOW + 40, same_expiry_renewal=value)
    assert renewed.outcome.value.meaning.expires_at == expiry
    ws = run(renewed.state, spec.WorkerSnapshot("a", lease), NOW + 40,
             same_expiry_renewal=value)
    assert isinstance(ws.outcome, Ok) is old_valid
    at_old_expiry = run(renewed.state, spec.Claim("a", "w2", 10), NOW + 100)
    assert at_old_expiry.outcome.code == ("ok" if old_valid else "unavailable")


@pytest.mark.parametrize(("value", "claimable"), [("kept", False), ("released", True)])
def test_a_reopen_voids_every_value_and_keeps_or_releases_the_claims(
        value: str, claimable: bool) -> None:
    state, lease = claimed(created(task("a")))
    observer, other = acc("get", "a"), attrs.evolve(acc("get", "a"), store="elsewhere")
    bindings = {"l": (lease, "L"), "obs:a": (observer, "A"), "x": (other, "X")}
    after, voided, again = reopened(state, bindings, {"reopen_claims": value})
    assert voided == {"l": attrs.evolve(lease, store=BEFORE_REOPEN),
                      "obs:a": attrs.evolve(observer, store=BEFORE_REOPEN)}
    assert list(again) == [(spec.Authorize(spec.Context("t1"), spec.Action("get", "a")),
                            "obs:a")]
    for op in (spec.WorkerSnapshot("a", voided["l"]), spec.Renew(voided["l"], 10),
               spec.Get("a", voided["obs:a"])):
        refused = run(after, op, reopen_claims=value)
        assert (refused.outcome.code, refused.clause) == (
            "not_found" if op.name == "get" else "stale_lease", "SNODO-DURABLE-001")
    claim = run(after, spec.Claim("a", "w2", 10), reopen_claims=value)
    assert claim.outcome.code == ("ok" if claimable else "unavailable")
    later = run(after, spec.Claim("a", "w2", 10), NOW + 100, reopen_claims=value)
    assert later.outcome.value.lease.meaning.generation == 2
    assert run(after, spec.Get("a", acc("get", "a"))).outcome == Ok(state["a"].snapshot)


@pytest.mark.parametrize("value", ["unauthorized_action", "not_found"])
def test_forged_request_authority(value: str) -> None:
    state = created(task("a"))
    op = spec.TransitionOp("a", 0, spec.Event("e", "cancelled", {}),
                           spec.RequestAuthority(ForgedMeaning("cancel")))
    s = run(state, op, forged_request_authority=value)
    assert s.outcome == Err(value) and s.clause == "SNODO-AUTH-004"
    missing = run(state, spec.TransitionOp("b", 0, op.event, op.authority),
                  forged_request_authority=value)
    assert missing.outcome == Err("not_found")  # row_first: the missing task comes first


@pytest.mark.parametrize(("order", "foreign", "missing", "stale_request_kind"), [
    ("row_first", "not_found", "not_found", "stale_lease"),
    ("authority_first", "unauthorized_action", "unauthorized_action", "unauthorized_action"),
])
def test_transition_check_order(order: str, foreign: str, missing: str,
                                stale_request_kind: str) -> None:
    state = created(task("a"))
    stop = spec.Event("e", "cancelled", {})
    other_tenant = spec.RequestAuthority(acc("get", "a", scope="t2"))
    assert run(state, spec.TransitionOp("a", 0, stop, other_tenant),
               transition_check_order=order).outcome == Err(foreign)
    get_missing = spec.RequestAuthority(acc("get", "b"))
    assert run(state, spec.TransitionOp("b", 0, stop, get_missing),
               transition_check_order=order).outcome == Err(missing)
    state, lease = claimed(state)
    taken = run(state, spec.Claim("a", "w2", 100), NOW + 100).state  # fences ``lease``
    s = run(taken, spec.TransitionOp("a", 0, stop, spec.WorkerAuthority(lease)), NOW + 100,
            transition_check_order=order)
    assert s.outcome == Err(stale_request_kind)


@pytest.mark.parametrize(("order", "answer"), [("exists_first", "already_exists"),
                                               ("capacity_first", "capacity_exceeded")])
def test_create_check_order(order: str, answer: str) -> None:
    state = created(task("a"))
    s = run(state, spec.Create(task("a"), spec.Work("i", "job", {}, ()), acc("create", "a")),
            max_tasks="1", create_check_order=order)
    assert s.outcome.code == answer


@pytest.mark.parametrize(("value", "committed", "deferred"),
                         [("millisecond", NOW + 1, 101), ("microsecond", NOW + 0.001, 101)])
def test_committed_at_step(value: str, committed: float, deferred: int) -> None:
    state, lease = claimed(created(task("a")))
    retry = spec.Event("r", "retry_requested", {"error": {}, "statusMessage": "x"})
    s = run(state, spec.TransitionOp("a", 0, retry, spec.WorkerAuthority(lease)),
            committed_at_step=value)
    assert s.outcome.value.committed_at == committed
    assert s.outcome.value.snapshot.retry_at == committed + 100
    released = run(s.state, spec.Release(lease)).state
    assert run(released, spec.Claim("a", "w2", 10), NOW).outcome == Err("deferred", "", deferred)
    # 1 ms left, or 0.001 ms left: rounded up, both deferred(1)
    assert run(released, spec.Claim("a", "w2", 10), NOW + 100).outcome == Err("deferred", "", 1)
    assert run(released, spec.Claim("a", "w2", 10), NOW + 101).outcome.code == "ok"


@pytest.mark.parametrize(("order", "over_existing", "into_full_store"), [
    ("last", "already_exists", "capacity_exceeded"),
    ("after_access", "invalid_task", "invalid_task"),
])
def test_create_validation_order(order: str, over_existing: str, into_full_store: str) -> None:
    state = created(task("a"))
    zero_ttl = spec.Work("i", "job", {}, ())
    for tid, limit, answer in (("a", "infinity", over_existing), ("b", "1", into_full_store)):
        op = spec.Create(task(tid, ttl=0), zero_ttl, acc("create", tid))
        s = run(state, op, max_tasks=limit, create_validation_order=order)
        assert s.outcome.code == answer and s.state == state
    fresh = run(state, spec.Create(task("b", ttl=0), zero_ttl, acc("create", "b")),
                create_validation_order=order)
    assert fresh.outcome == Err("invalid_task") and fresh.clause == "SNODO-ARG-005"


@pytest.mark.parametrize(("value", "ids"), [("task_id", ["a", "b", "c"]),
                                            ("expiry", ["a", "c", "b"])])
def test_reap_order(value: str, ids: list[str]) -> None:
    state = created(task("c", ttl=500), task("b", ttl=1_000), task("a", ttl=499, at=NOW + 1))
    assert run(state, spec.Reap(), NOW + 1_000, reap_order=value).outcome == Ok(ids)


# The mutant that follows the other reading, for every reading of every option.
READING_MUTANTS = {
    ("same_expiry_renewal", "identical"): "renewal_moves_same_expiry",
    ("same_expiry_renewal", "successor"): "renewal_keeps_same_expiry",
    ("forged_request_authority", "unauthorized_action"): "forged_access_not_found",
    ("forged_request_authority", "not_found"): "forged_access_unauthorized",
    ("transition_check_order", "row_first"): "authority_checked_before_row",
    ("transition_check_order", "authority_first"): "row_read_before_authority",
    ("create_check_order", "exists_first"): "capacity_checked_before_exists",
    ("create_check_order", "capacity_first"): "exists_checked_before_capacity",
    ("committed_at_step", "millisecond"): "committed_at_steps_one_us",
    ("committed_at_step", "microsecond"): "committed_at_steps_one_ms",
    ("reopen_claims", "kept"): "reopen_releases_claims",
    ("reopen_claims", "released"): "reopen_keeps_claims_live",
    ("reap_order", "task_id"): "reaps_in_expiry_order",
    ("reap_order", "expiry"): "reaps_in_id_order",
    ("create_validation_order", "last"): "task_validated_first",
    ("create_validation_order", "after_access"): "task_validated_last",
}
BY_NAME = {m.name: m for m in MUTANTS}


def test_each_reading_of_each_option_has_a_mutant_run_under_it() -> None:
    assert set(READING_MUTANTS) == {(c.name, v) for c in spec.CHOICES for v, _ in c.values}
    for (option, value), name in READING_MUTANTS.items():
        mutant = BY_NAME[name]
        assert mutant.options.get(option, CHOICES[option].default) == value, name
        assert set(mutant.options) <= {option}, name


@pytest.mark.parametrize("name", sorted(READING_MUTANTS.values()))
def test_mutant_of_the_other_reading_is_caught(name: str) -> None:
    [row] = run_mutants("snodo-tasks", base="memory", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"


@pytest.mark.parametrize(("name", "value"), [(c.name, v) for c in spec.CHOICES
                                             for v, _ in c.values[1:]])
def test_memory_store_passes_under_the_other_reading(name: str, value: str) -> None:
    report = check("snodo-tasks", "memory", seed=3, options={name: value})
    failed = [(v.clause.id, v.reason) for v in report.failed()]
    assert failed == [] and report.exit_code == 0
