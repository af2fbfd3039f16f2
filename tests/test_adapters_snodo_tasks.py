"""The built-in snodo-tasks stores, called directly (no harness): exact answers per rule."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest
from conftest import Clock, race
from test_model_snodo_tasks_arguments import INVALID_EVENTS

from fencepost.adapters.snodo_tasks.memory import MemoryTasksFactory
from fencepost.adapters.snodo_tasks.sql import SqlTasksFactory
from fencepost.adapters.snodo_tasks.validation import event_error
from fencepost.env import AdapterEnv
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import ForgedValue

WORK = spec.Work("idem-1", "email", {"to": "a@b", "n": 1, "x": 1.5, "deep": [1, {"k": None}]},
                 (2000,))


class Backend:
    """One factory; envs it opened (to reopen and to discard) and stores (to close)."""

    def __init__(self, factory: Any) -> None:
        self.factory = factory
        self.clock = Clock(1000)
        self.envs: list[AdapterEnv] = []
        self.stores: list[Any] = []

    def env(self, **options: str) -> AdapterEnv:
        env = AdapterEnv(clock=self.clock, namespace=f"smoke_{uuid.uuid4().hex[:12]}",
                         options=options)
        self.envs.append(env)
        return env

    def open(self, env: AdapterEnv | None = None, **options: str) -> Any:
        store = self.factory(env if env is not None else self.env(**options))
        self.stores.append(store)
        return store

    def cleanup(self) -> None:
        for store in self.stores:
            store.close()
        for env in self.envs:
            self.factory.discard(env)
        getattr(self.factory, "close", lambda: None)()  # its pooled connections


def _factory(kind: str, request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if kind == "memory":
        return MemoryTasksFactory()
    if kind == "sqlite":
        return SqlTasksFactory(f"sqlite:///{tmp_path}/tasks.db")
    return SqlTasksFactory(request.getfixturevalue("pg_url"))


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Backend]:
    b = Backend(_factory(request.param, request, tmp_path))
    yield b
    b.cleanup()


def make_task(task_id: str, created_at: int = 1000, **changes: Any) -> spec.Task:
    task = spec.Task(id=task_id, status=spec.WORKING, status_message=None,
                     created_at=created_at, last_updated_at=created_at, ttl_ms=None,
                     poll_interval_ms=None, input_requests={}, result=None, error=None)
    return attrs.evolve(task, **changes)


def access(store: Any, kind: str, task_id: str, tenant: str | None = "t1") -> Any:
    return store.authorize(spec.Context(tenant), spec.Action(kind, task_id))


def create(store: Any, task_id: str, tenant: str | None = "t1", work: spec.Work = WORK,
           **changes: Any) -> spec.Snapshot:
    task = make_task(task_id, **changes)
    return store.create(task, work, access(store, "create", task_id, tenant))  # type: ignore[no-any-return]


def fresh(task: spec.Task, work: spec.Work = WORK) -> spec.Snapshot:
    return spec.Snapshot(task, work, 0, 0, None, None, {}, {})


def event(event_id: str, kind: str, **data: Any) -> spec.Event:
    return spec.Event(event_id, kind, data)


def raises(error: type[spec.ContractError], fn: Callable[..., Any], *args: Any,
           **kwargs: Any) -> Any:
    """Call ``fn`` expecting ``error``; answer its payload."""
    with pytest.raises(error) as info:
        fn(*args, **kwargs)
    return info.value.payload


# --- create and get -----------------------------------------------------------------------------


def test_create_stores_revision_zero_and_get_reads_it_with_read_accesses(backend: Backend) -> None:
    store = backend.open()
    snap = create(store, "a")
    assert snap == fresh(make_task("a"))
    for kind in ("get", "update", "cancel"):
        assert store.get("a", access(store, kind, "a")) == snap
    raises(spec.NotFound, store.get, "a", access(store, "create", "a"))
    raises(spec.NotFound, store.get, "a", access(store, "get", "b"))
    raises(spec.NotFound, store.get, "b", access(store, "get", "b"))


def test_create_needs_a_genuine_create_access_for_that_id(backend: Backend) -> None:
    store, other = backend.open(), backend.open()
    task = make_task("a")
    for bad in (access(store, "get", "a"), access(store, "create", "b"), ForgedValue("x"),
                access(other, "create", "a")):
        raises(spec.UnauthorizedAction, store.create, task, WORK, bad)
    raises(spec.NotFound, store.get, "a", access(store, "get", "a"))


def test_create_of_an_existing_id_is_already_exists_and_changes_nothing(backend: Backend) -> None:
    store = backend.open()
    first = create(store, "a")
    raises(spec.AlreadyExists, create, store, "a", "t1", WORK, created_at=5)
    assert store.get("a", access(store, "get", "a")) == first


def test_max_tasks_counts_terminal_and_expired_tasks_until_reaped(backend: Backend) -> None:
    store = backend.open(max_tasks="2")
    create(store, "done", status=spec.COMPLETED, result={})  # the seed takes a finished task
    create(store, "old", ttl_ms=10)
    backend.clock.now = 1010
    assert raises(spec.CapacityExceeded, create, store, "c") == "max_tasks"
    assert store.reap() == ["old"]
    assert create(store, "c").revision == 0


def test_max_active_tasks_per_scope_bounds_one_tenant(backend: Backend) -> None:
    store = backend.open(max_active_tasks_per_scope="1")
    create(store, "a")
    assert raises(spec.CapacityExceeded, create, store, "b") == "max_active_tasks_per_scope"
    create(store, "c", tenant="t2")
    create(store, "d", tenant=None)
    lease = store.claim("a", "w", 100).lease
    store.transition("a", 0, event("e1", "completed", result={}), spec.WorkerAuthority(lease))
    assert create(store, "b").revision == 0


def test_foreign_scope_is_not_found_for_get_and_request_transitions(backend: Backend) -> None:
    store = backend.open()
    create(store, "a", tenant="t1")
    create(store, "n", tenant=None)
    for tenant in ("t2", None):
        raises(spec.NotFound, store.get, "a", access(store, "get", "a", tenant))
        authority = spec.RequestAuthority(access(store, "cancel", "a", tenant))
        raises(spec.NotFound, store.transition, "a", 0, event("c", "cancelled"), authority)
    raises(spec.NotFound, store.get, "n", access(store, "get", "n", "t1"))
    assert store.get("n", access(store, "get", "n", None)).task.id == "n"


# --- claims and leases --------------------------------------------------------------------------


def test_claim_renew_release_and_stale_leases_after_reclaim(backend: Backend) -> None:
    store, clock = backend.open(), backend.clock
    snap = create(store, "a")
    raises(spec.NotFound, store.claim, "zz", "w", 10)
    first = store.claim("a", "w1", 500)
    assert first.snapshot == snap
    assert (first.lease.generation, first.lease.expires_at) == (1, 1500)
    raises(spec.Unavailable, store.claim, "a", "w2", 500)
    assert store.claim_next("w2", 500) is None
    clock.now = 1200
    renewed = store.renew(first.lease, 1000)
    assert (renewed.generation, renewed.expires_at) == (1, 2200)
    raises(spec.StaleLease, store.renew, first.lease, 1000)
    raises(spec.StaleLease, store.worker_snapshot, "a", first.lease)
    assert store.worker_snapshot("a", renewed) == snap
    assert store.renew(renewed, 1000) == renewed  # same expiry: the same lease
    clock.now = 2200
    raises(spec.StaleLease, store.worker_snapshot, "a", renewed)
    raises(spec.StaleLease, store.renew, renewed, 10)
    second = store.claim("a", "w2", 100)
    assert (second.lease.generation, second.lease.expires_at) == (2, 2300)
    raises(spec.StaleLease, store.release, renewed)
    clock.now = 5000
    assert store.release(second.lease) is None  # identity only: expiry does not matter
    raises(spec.StaleLease, store.release, second.lease)
    third = store.claim_next("w3", 50)
    assert third is not None and third.lease.generation == 3 and third.snapshot == snap
    create(store, "b")
    raises(spec.StaleLease, store.worker_snapshot, "b", third.lease)
    raises(spec.StaleLease, store.worker_snapshot, "a", ForgedValue("lease"))
    raises(spec.NotFound, store.worker_snapshot, "zz", third.lease)


def test_claim_of_terminal_task_is_unavailable_and_no_task_is_workless(backend: Backend) -> None:
    store = backend.open()
    create(store, "done", status=spec.FAILED, error={"code": 1})
    raises(spec.FunctionClause, create, store, "idle", work=None)  # create takes a Work
    raises(spec.Unavailable, store.claim, "done", "w", 10)
    raises(spec.NotFound, store.claim, "idle", "w", 10)
    assert store.claim_next("w", 10) is None


def test_retry_requested_defers_claims_by_the_exact_remaining_ms(backend: Backend) -> None:
    store, clock = backend.open(), backend.clock
    create(store, "a")
    lease = store.claim("a", "w", 10_000).lease
    clock.now = 1100
    failure = {"error": {"code": 7}, "statusMessage": "boom"}
    tr = store.transition("a", 0, event("r1", "retry_requested", **failure),
                          spec.WorkerAuthority(lease))
    expected = attrs.evolve(fresh(make_task("a", last_updated_at=1100)), revision=1,
                            retry_count=1, retry_at=3100, last_failure=failure)
    assert tr == spec.Transition("applied", expected, {"retry": {
        "disposition": "scheduled", "retry_at": 3100, "delay_ms": 2000, "retry_count": 1}},
        1, 1100)
    assert store.release(lease) is None
    assert raises(spec.Deferred, store.claim, "a", "w", 10) == 2000
    assert store.claim_next("w", 10) is None
    clock.now = 3099
    assert raises(spec.Deferred, store.claim, "a", "w", 10) == 1
    clock.now = 3100
    lease = store.claim("a", "w", 10).lease
    tr = store.transition("a", 1, event("r2", "retry_requested", **failure),
                          spec.WorkerAuthority(lease))
    failed = attrs.evolve(make_task("a", last_updated_at=3100), status=spec.FAILED,
                          error={"code": 7}, status_message="boom")
    assert tr == spec.Transition("applied", attrs.evolve(
        expected, task=failed, revision=2, retry_at=None), {"retry": {
            "disposition": "exhausted", "retry_at": None, "delay_ms": None, "retry_count": 1}},
        2, 3100)


# --- transitions --------------------------------------------------------------------------------


def test_replayed_event_is_a_duplicate_with_the_original_revision(backend: Backend) -> None:
    store, clock = backend.open(), backend.clock
    create(store, "a")
    worker = spec.WorkerAuthority(store.claim("a", "w", 10_000).lease)
    first = event("e1", "input_requested", key="k1", request={"method": "m", "q": 1})
    assert store.transition("a", 0, first, worker).committed_at == 1001  # clock did not move
    clock.now = 1200
    store.transition("a", 1, event("e2", "input_requested", key="k2", request={"method": "m"}),
                     worker)
    current = store.get("a", access(store, "get", "a"))
    assert current.revision == 2 and current.task.last_updated_at == 1200
    assert store.transition("a", 0, first, worker) == spec.Transition(
        "duplicate", current, {}, 1, 1001)
    reused = event("e1", "input_requested", key="k9", request={"method": "m", "q": 1})
    raises(spec.EventIdReused, store.transition, "a", 2, reused, worker)


def test_no_caller_changes_stored_data_by_changing_a_value(backend: Backend) -> None:
    """What a caller gave (an event's data) and every answer (a snapshot, a transition, a
    replayed duplicate) share nothing with what is stored: changing them in place, after the
    call, changes nothing the store answers later."""
    store = backend.open()
    work = spec.Work("idem-2", "email", {"to": "a@b", "deep": [1, {"k": None}]}, (2000,))
    create(store, "a", work=work)
    work.input["to"] = "changed"  # type: ignore[index]
    worker = spec.WorkerAuthority(store.claim("a", "w", 10_000).lease)
    request = {"method": "m", "q": [1]}
    first = event("e1", "input_requested", key="k1", request=request)
    applied = store.transition("a", 0, first, worker)
    request["q"].append(2)
    applied.snapshot.input_history["k1"]["method"] = "changed"
    applied.snapshot.work.input["deep"][1]["k"] = "changed"
    first = event("e1", "input_requested", key="k1", request={"method": "m", "q": [1]})
    replayed = store.transition("a", 0, first, worker)
    assert replayed.outcome == "duplicate"
    replayed.snapshot.task.input_requests["k1"]["q"].append(3)
    got = store.get("a", access(store, "get", "a"))
    got.input_history["k1"]["q"].append(4)
    expected_request = {"method": "m", "q": [1]}
    again = store.get("a", access(store, "get", "a"))
    assert again.work == spec.Work("idem-2", "email", {"to": "a@b", "deep": [1, {"k": None}]},
                                   (2000,))
    assert again.input_history == {"k1": expected_request}
    assert again.task.input_requests == {"k1": expected_request}
    assert store.transition("a", 0, first, worker).snapshot == again


def test_stale_expected_revision_conflicts_with_the_current_snapshot(backend: Backend) -> None:
    store = backend.open()
    create(store, "a")
    cancel = spec.RequestAuthority(access(store, "cancel", "a"))
    current = store.get("a", access(store, "get", "a"))
    assert raises(spec.Conflict, store.transition, "a", 5, event("c", "cancelled"),
                  cancel) == current
    tr = store.transition("a", 0, event("c", "cancelled"), cancel)
    cancelled = attrs.evolve(make_task("a", last_updated_at=1001), status=spec.CANCELLED,
                             status_message="Cancellation requested")
    assert tr == spec.Transition("applied", attrs.evolve(current, task=cancelled, revision=1),
                                 {}, 1, 1001)
    unchanged = store.transition("a", 1, event("c2", "cancelled"), cancel)
    assert unchanged == spec.Transition("unchanged", tr.snapshot, {}, 1, 1002)


def test_input_round_trip_and_who_may_send_what(backend: Backend) -> None:
    store = backend.open()
    create(store, "a")
    worker = spec.WorkerAuthority(store.claim("a", "w", 10_000).lease)
    update = spec.RequestAuthority(access(store, "update", "a"))
    store.transition("a", 0, event("i1", "input_requested", key="k1",
                                   request={"method": "m", "q": 1}), worker)
    store.transition("a", 1, event("i2", "input_requested", key="k2",
                                   request={"method": "m", "n": [2]}), worker)
    raises(spec.DuplicateInputKey, store.transition, "a", 2,
           event("i3", "input_requested", key="k1", request={"method": "m"}), worker)
    respond = event("u1", "input_responses_accepted",
                    responses={"k1": {"a": "yes"}, "zz": {"a": 0}})
    for bad in (worker, spec.RequestAuthority(access(store, "cancel", "a")),
                spec.RequestAuthority(access(store, "get", "a"))):
        raises(spec.UnauthorizedAction, store.transition, "a", 2, respond, bad)
    raises(spec.UnauthorizedAction, store.transition, "a", 2, event("x", "cancelled"), worker)
    raises(spec.FunctionClause, store.transition, "a", 2, respond, ForgedValue("authority"))
    raises(spec.UnauthorizedAction, store.transition, "a", 2,
           event("x", "completed", result={}), update)
    tr = store.transition("a", 2, respond, update)
    assert tr.effects == {"accepted_input_responses": {"k1": {"a": "yes"}}}
    assert tr.snapshot.task.status == spec.INPUT_REQUIRED
    assert tr.snapshot.task.input_requests == {"k2": {"method": "m", "n": [2]}}
    assert tr.snapshot.input_history == {"k1": {"method": "m", "q": 1},
                                        "k2": {"method": "m", "n": [2]}}
    none = event("u2", "input_responses_accepted", responses={"zz": {"a": 1}})
    assert store.transition("a", 3, none, update) == spec.Transition(
        "unchanged", tr.snapshot, {"accepted_input_responses": {}}, 3, 1004)
    # an unchanged event is not recorded: its id is free for another event
    tr = store.transition("a", 3, event("u2", "input_responses_accepted",
                                        responses={"k2": {"v": 2}}), update)
    assert tr.outcome == "applied" and tr.snapshot.task.status == spec.WORKING
    assert tr.snapshot.task.input_requests == {}
    assert tr.snapshot.accepted_input_responses == {"k1": {"a": "yes"}, "k2": {"v": 2}}
    assert store.get("a", access(store, "get", "a")) == tr.snapshot


def test_values_round_trip_exactly(backend: Backend) -> None:
    store = backend.open()
    work = spec.Work("k", "t", {"i": 1, "f": 1.0, "neg": -0.0, "b": True, "l": [1, "2"],
                                "big": 2**62, "d": {"x": None}}, (5, 10, 20))
    env = backend.env()
    store = backend.open(env)
    create(store, "a", work=work, ttl_ms=10**9, poll_interval_ms=25)
    lease = store.claim("a", "w", 10_000).lease
    store.transition("a", 0, event("c", "completed", result={"n": 1, "f": 2.5}),
                     spec.WorkerAuthority(lease))
    got = backend.open(env).get("a", access(store, "get", "a"))
    assert got.work == work and type(got.work.retry_policy) is tuple
    assert [type(got.work.input[k]) for k in ("i", "f", "b", "big")] == [int, float, bool, int]
    assert repr(got.work.input["neg"]) == "-0.0"
    assert got.task.result == {"n": 1, "f": 2.5} and type(got.task.result["n"]) is int
    assert (got.task.ttl_ms, got.task.poll_interval_ms) == (10**9, 25)


# --- arguments at their edges (SNODO-ARG) -------------------------------------------------------


def test_arguments_outside_the_seeds_guards_are_refused_before_anything(backend: Backend) -> None:
    store = backend.open()
    create(store, "a")
    create(store, "b")
    lease = store.claim("a", "w", 1000).lease
    worker = spec.WorkerAuthority(lease)
    done = event("d", "completed", result={})
    for ms in (0, -1, 1.5, True, "100"):
        raises(spec.FunctionClause, store.claim, "b", "w2", ms)
        raises(spec.FunctionClause, store.claim_next, "w2", ms)
        raises(spec.FunctionClause, store.renew, lease, ms)
        raises(spec.FunctionClause, store.renew, ForgedValue("lease"), ms)  # before the lease
    for bad in ("", 7):
        raises(spec.FunctionClause, store.claim, bad, "w2", 10)
        raises(spec.FunctionClause, store.claim, "b", bad, 10)
        raises(spec.FunctionClause, store.claim_next, bad, 10)
        raises(spec.FunctionClause, access, store, "get", bad)
    for kind in ("", "delete"):
        raises(spec.FunctionClause, access, store, kind, "a")
    for rev in (-1, True, 0.0, "0"):
        raises(spec.FunctionClause, store.transition, "a", rev, done, worker)
        raises(spec.FunctionClause, store.transition, "missing", rev, done, worker)
    raises(spec.FunctionClause, store.transition, "a", 0, done, lease)  # a bare lease
    raises(spec.FunctionClause, store.transition, 7, 0, done, worker)
    raises(spec.FunctionClause, store.get, 7, access(store, "get", "a"))
    raises(spec.FunctionClause, store.worker_snapshot, None, lease)
    raises(spec.NotFound, store.get, "", access(store, "get", "a"))
    raises(spec.NotFound, store.worker_snapshot, "", lease)
    assert store.worker_snapshot("a", lease).revision == 0  # the lease is as it was
    assert store.claim("b", "w2", 10).snapshot.revision == 0


@pytest.mark.parametrize("changes", [
    {"ttl_ms": 0}, {"ttl_ms": -5}, {"poll_interval_ms": 1.5}, {"status": ""},
    {"status_message": 7}, {"last_updated_at": 999}, {"input_requests": {"k": {"method": "m"}}},
    {"status": spec.COMPLETED}, {"result": "x"},
])
def test_create_refuses_a_task_the_seed_refuses(backend: Backend, changes: dict[str, Any]) -> None:
    store = backend.open()
    raises(spec.InvalidTask, create, store, "a", **changes)
    raises(spec.NotFound, store.get, "a", access(store, "get", "a"))


@pytest.mark.parametrize("changes", [
    {"idempotency_key": ""}, {"type": 7}, {"input": []}, {"retry_policy": (-1,)},
    {"retry_policy": (1.5,)}, {"retry_policy": (spec.MAX_RETRY_DELAY_MS + 1,)},
])
def test_create_refuses_work_the_seed_refuses(backend: Backend, changes: dict[str, Any]) -> None:
    store = backend.open()
    raises(spec.InvalidTask, create, store, "a", work=attrs.evolve(WORK, **changes))
    create(store, "a", work=attrs.evolve(WORK, retry_policy=(0, spec.MAX_RETRY_DELAY_MS)))


@pytest.mark.parametrize(("order", "over_existing"), [("last", spec.AlreadyExists),
                                                      ("after_access", spec.InvalidTask)])
def test_create_validation_order(backend: Backend, order: str,
                                 over_existing: type[spec.ContractError]) -> None:
    store = backend.open(create_validation_order=order)
    create(store, "a")
    raises(over_existing, create, store, "a", ttl_ms=0)


def test_events_the_seed_refuses_once_the_authority_passed(backend: Backend) -> None:
    store = backend.open()
    create(store, "a")
    lease = store.claim("a", "w", 1000).lease
    worker = spec.WorkerAuthority(lease)
    update = spec.RequestAuthority(access(store, "update", "a"))
    asked = event("ask", "input_requested", key="k", request={"method": "m"})
    store.transition("a", 0, asked, worker)
    for rev in (1, 0):  # before the revision is compared
        raises(spec.InvalidEventId, store.transition, "a", rev, event("", "completed", result={}),
               worker)
        raises(spec.InvalidInputKey, store.transition, "a", rev,
               event("ask2", "input_requested", key="", request={}), worker)
        raises(spec.InvalidInputResponses, store.transition, "a", rev,
               event("r", "input_responses_accepted", responses={"": {"a": 1}}), update)
    raises(spec.InvalidInputKey, store.transition, "a", 1,  # before the seen id
           event("ask", "input_requested", key="", request={}), worker)
    raises(spec.StaleLease, store.transition, "a", 1, event("", "completed", result={}),
           spec.WorkerAuthority(ForgedValue("lease")))  # after the authority
    raises(spec.UnauthorizedAction, store.transition, "a", 1, event("e", ""), update)
    assert store.get("a", access(store, "get", "a")).revision == 1


def test_the_empty_tenant_is_not_no_tenant(backend: Backend) -> None:
    store = backend.open(max_active_tasks_per_scope="1")
    create(store, "a", tenant=None)
    create(store, "b", tenant="")  # its own scope: room for one
    raises(spec.NotFound, store.get, "a", access(store, "get", "a", ""))
    raises(spec.NotFound, store.get, "b", access(store, "get", "b", None))


# --- reaping and reopening ----------------------------------------------------------------------


def test_reap_returns_sorted_expired_ids_and_removes_whole_aggregates(backend: Backend) -> None:
    store, clock = backend.open(), backend.clock
    create(store, "c", ttl_ms=50)
    create(store, "b")
    create(store, "a", ttl_ms=100)
    old = store.claim("a", "w", 10_000).lease
    applied = event("e1", "input_requested", key="k", request={"method": "m"})
    store.transition("a", 0, applied, spec.WorkerAuthority(old))
    clock.now = 1099
    raises(spec.NotFound, store.get, "c", access(store, "get", "c"))
    assert store.get("a", access(store, "get", "a")).revision == 1
    clock.now = 1100
    raises(spec.NotFound, store.get, "a", access(store, "get", "a"))
    assert store.worker_snapshot("a", old).revision == 1  # no TTL check for workers
    assert store.reap() == ["a", "c"]
    assert store.reap() == []
    raises(spec.NotFound, store.claim, "a", "w", 10)
    assert create(store, "a", created_at=1100) == fresh(make_task("a", created_at=1100))
    new = store.claim("a", "w", 9_900).lease
    # same owner, generation and expiry as the reaped claim: only the token tells them apart
    assert (new.owner_id, new.generation, new.expires_at) == (old.owner_id, 1, old.expires_at)
    raises(spec.StaleLease, store.worker_snapshot, "a", old)
    raises(spec.StaleLease, store.release, old)
    other = event("e1", "input_requested", key="k", request={"method": "m", "again": True})
    assert store.transition("a", 0, other, spec.WorkerAuthority(new)).outcome == "applied"


@pytest.mark.parametrize("claims", ["kept", "released"])
def test_a_reopen_keeps_the_records_and_voids_every_value_issued_before(
        backend: Backend, claims: str) -> None:
    env = backend.env(reopen_claims=claims)
    store, clock = backend.open(env), backend.clock
    create(store, "a")
    create(store, "b")
    old = store.claim("a", "w1", 100).lease
    clock.now = 1100
    live = store.claim("a", "w2", 1000).lease
    other = store.claim("b", "w3", 1000).lease
    done = event("e1", "input_requested", key="k", request={"method": "m"})
    first = store.transition("a", 0, done, spec.WorkerAuthority(live))
    get_a = access(store, "get", "a")
    beside = backend.open(env)  # a second connection while the first is open: one boot
    assert beside.get("a", get_a) == first.snapshot
    assert beside.worker_snapshot("a", live) == first.snapshot
    beside.close()
    store.close()
    again = backend.open(env)
    raises(spec.NotFound, again.get, "a", get_a)
    raises(spec.UnauthorizedAction, again.create, make_task("c"), WORK,
           access(store, "create", "c"))
    for lease in (old, live, other):
        raises(spec.StaleLease, again.worker_snapshot, lease.task_id, lease)
        raises(spec.StaleLease, again.renew, lease, 10)
        raises(spec.StaleLease, again.release, lease)
    assert again.get("a", access(again, "get", "a")) == first.snapshot
    if claims == "kept":  # live until their deadline (2100), then claimable
        raises(spec.Unavailable, again.claim, "a", "w4", 10)
        assert again.claim_next("w4", 10) is None
        clock.now = 2100
    claimed = again.claim("a", "w4", 10)
    assert claimed.lease.generation == 3
    replay = again.transition("a", 9, done, spec.WorkerAuthority(claimed.lease))
    assert (replay.outcome, replay.event_revision, replay.committed_at) == ("duplicate", 1, 1100)
    assert again.claim_next("w4", 10).snapshot.task.id == "b"
    foreign = backend.open()
    create(foreign, "a")
    raises(spec.NotFound, foreign.get, "a", access(again, "get", "a"))
    raises(spec.StaleLease, foreign.worker_snapshot, "a", claimed.lease)


# --- concurrency --------------------------------------------------------------------------------


def _race(workers: int, fn: Callable[[int], Any]) -> list[Any]:
    """``race``, a contract error shown as its (code, payload)."""
    return [(r.code, r.payload) if isinstance(r, spec.ContractError) else r
            for r in race(workers, fn)]


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_creates_at_capacity_have_exactly_k_winners(
    backend: Backend, round_: int
) -> None:
    k, n = 3, 10
    env = backend.env(max_tasks=str(k))
    stores = [backend.open(env) for _ in range(n)]
    results = _race(n, lambda i: create(stores[i], f"t{i}").revision)
    assert sorted(results, key=repr) == [("capacity_exceeded", "max_tasks")] * (n - k) + [0] * k
    env = backend.env(max_active_tasks_per_scope=str(k))
    stores = [backend.open(env) for _ in range(n)]
    results = _race(n, lambda i: create(stores[i], f"t{i}").revision)
    assert sorted(results, key=repr) == [
        ("capacity_exceeded", "max_active_tasks_per_scope")] * (n - k) + [0] * k


def test_concurrent_claimers_take_distinct_tasks(backend: Backend) -> None:
    env = backend.env()
    store = backend.open(env)
    for name in ("a", "b", "c"):
        create(store, name)
    stores = [backend.open(env) for _ in range(8)]
    results = _race(8, lambda i: stores[i].claim_next(f"w{i}", 1000))
    claimed = sorted(r.snapshot.task.id for r in results if r is not None)
    assert claimed == ["a", "b", "c"]
    results = _race(8, lambda i: stores[i].claim("a", f"w{i}", 1000))
    assert results == [("unavailable", None)] * 8


@pytest.mark.parametrize(("bad", "code"), [(e, c) for e, c, _, _ in INVALID_EVENTS],
                         ids=[f"{c}:{s}" for _, c, _, s in INVALID_EVENTS])
def test_the_store_refuses_event_data_as_the_seed_does(backend: Backend, bad: spec.Event,
                                                        code: str) -> None:
    """The kit's stores give the model's code for each value Event.validate refuses, before
    the revision, and store nothing."""
    store = backend.open()
    create(store, "a")
    worker = spec.WorkerAuthority(store.claim("a", "w", 1000).lease)
    kind = spec.REQUEST_KINDS.get(bad.kind)
    authority = worker if kind is None else spec.RequestAuthority(access(store, kind, "a"))
    before = store.get("a", access(store, "get", "a"))
    for rev in (0, 5):
        with pytest.raises(spec.ContractError) as info:
            store.transition("a", rev, bad, authority)
        assert (info.value.code, info.value.payload) == (code, None)
    assert store.get("a", access(store, "get", "a")) == before


def test_unsupported_event_kind_carries_the_kind() -> None:
    problem = event_error(spec.Event("e", "paused", {}))
    assert isinstance(problem, spec.UnsupportedEventKind)
    assert (problem.code, problem.payload) == ("unsupported_event_kind", "paused")
