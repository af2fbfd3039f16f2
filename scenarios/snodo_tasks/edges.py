"""Every argument at its edges, wherever the seed gives it an answer (the SNODO-ARG clauses).

The empty string for every id, owner, kind, key and tenant; 0, a negative number and a value
of the wrong type (a float, a bool, a string) for every number; a value of the wrong kind for
the work and the authority. The guards of the seed's Store functions refuse most of them
(function_clause) before anything is read; create and transition refuse what the seed's Task,
Work and Event validation refuse (invalid_task, invalid_event_id...); the rest are values the
seed takes (the empty tenant, a retry delay of 0, a task created completed). Each edge is sent
where the answer would differ if a store let it through: over a free task (a claim would be
granted), a live lease (a renewal would move it), a missing task, a stale revision.
"""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import Ref

from ..harness import Harness
from .steps import (
    ASK,
    DONE,
    FAILURE,
    STOP,
    TENANT,
    authorized,
    created,
    event,
    forked,
    new_task,
    observed,
    request,
    work,
    worker,
)

COUNTS: tuple[Any, ...] = (0, -1, 1.5, True, "100")
"""A number's edges: 0, negative, a float, a bool (``True == 1`` in Python), a string."""
NAMES: tuple[Any, ...] = ("", 7)
"""A name's edges: the empty string, a value that is no string."""
UNSAFE: Any = {"by_id": {7: "seven"}}
"""A mapping that is not JSON-safe: a key that is no string (JSONValue.valid? refuses it)."""


def arguments_at_their_edges(h: Harness, p: str) -> None:
    """The guards first (claims, renewals, transitions, authorizations, reads), then what
    create and transition validate, then the edge values the seed takes."""
    with forked(h, f"-{p}-edges") as r:
        t, u = f"{p}-a", f"{p}-b"
        created(r, t)
        created(r, u)
        r.apply("w1", spec.Claim(t, "w1", 30_000), bind="lease")
        _guards(r, t, u, f"{p}-never")
        _tasks_and_work(r, t, f"{p}-v")
        _events(r, t)
        _values_the_seed_takes(r, p)


def _guards(r: Harness, t: str, free: str, never: str) -> None:
    lease, seven = Ref("lease"), NAMES[1]
    for ms in COUNTS:  # a free task would be claimed, the live lease moved
        r.apply("w2", spec.Claim(free, "w2", ms))
        r.apply("w2", spec.ClaimNext("w2", ms))
        r.apply("w1", spec.Renew(lease, ms))
    for bad in NAMES:
        r.apply("w2", spec.Claim(bad, "w2", 100))
        r.apply("w2", spec.Claim(free, bad, 100))
        r.apply("w2", spec.ClaimNext(bad, 100))
        r.apply("client", spec.Authorize(spec.Context(TENANT), spec.Action("get", bad)))
    for kind in ("", "delete"):
        r.apply("client", spec.Authorize(spec.Context(TENANT), spec.Action(kind, t)))
    r.apply("client", spec.Get(seven, Ref(f"obs:{t}")))
    r.apply("client", spec.Get("", Ref(f"obs:{t}")))  # passes the guard: no such task
    r.apply("w1", spec.WorkerSnapshot(seven, lease))
    r.apply("w1", spec.WorkerSnapshot("", lease))
    worker(r, "w1", t, 0, ASK, lease)  # revision 1 now: True == 1 would pass a loose check
    revisions: tuple[Any, ...] = (-1, True, 1.0, "1")
    for rev in revisions:
        worker(r, "w1", t, rev, DONE, lease)
    worker(r, "w1", never, -1, DONE, lease)  # refused before the task is looked for
    r.apply("w1", spec.TransitionOp(t, 1, DONE, lease))  # a bare lease
    r.apply("w1", spec.TransitionOp(seven, 1, DONE, spec.WorkerAuthority(lease)))
    nothing: Any = None  # no lease at all: past the guards, a value this store never issued
    r.apply("w1", spec.Renew(nothing, 100))
    r.apply("w1", spec.WorkerSnapshot(t, nothing))
    worker(r, "w1", t, 1, DONE, nothing)
    r.apply("w1", spec.Release(nothing))
    r.apply("w1", spec.Renew(lease, 30_000), bind="lease")  # the guards left it as it was


def _bad_tasks(r: Harness, v: str) -> list[spec.Task]:
    task = new_task(r, v)
    fields: list[dict[str, Any]] = [
        {"status": ""}, {"status": "paused"}, {"status_message": 7}, {"created_at": "soon"},
        {"last_updated_at": r.now - 1}, {"input_requests": {"k": {"method": "x"}}},
        {"result": "done"}, {"status": spec.COMPLETED},  # completed without a result
        {"status": spec.COMPLETED, "result": UNSAFE},
        *({name: value} for name in ("ttl_ms", "poll_interval_ms") for value in (0, -1, 1.5)),
    ]
    return [attrs.evolve(task, **f) for f in fields]


def _bad_work(v: str) -> list[spec.Work]:
    good = work(v)
    fields: list[dict[str, Any]] = [
        {"idempotency_key": ""}, {"idempotency_key": 7}, {"type": ""}, {"type": None},
        {"input": "page=1"}, {"input": UNSAFE}, {"retry_policy": (-1,)}, {"retry_policy": (1.5,)},
        {"retry_policy": (spec.MAX_RETRY_DELAY_MS + 1,)},
    ]
    return [attrs.evolve(good, **f) for f in fields]


def _tasks_and_work(r: Harness, t: str, v: str) -> None:
    """Each invalid task and work under a create-access of its own id; then one under an
    existing id (create_validation_order decides which refusal comes first)."""
    observed(r, v)
    access = authorized(r, "create", v)
    no_work: Any = None
    r.apply("client", spec.Create(new_task(r, v), no_work, access))
    for task in _bad_tasks(r, v):
        r.apply("client", spec.Create(task, work(v), access))
    for bad in _bad_work(v):
        r.apply("client", spec.Create(new_task(r, v), bad, access))
    bad_ttl = attrs.evolve(new_task(r, t), ttl_ms=0)
    r.apply("client", spec.Create(bad_ttl, work(t), authorized(r, "create", t)))


def _bad_data() -> list[spec.Event]:
    """Worker events whose data Event.validate refuses (SNODO-ARG-007), one value each; the
    empty input key beside a missing request shows the data's shape is checked first."""
    no_data: Any = None
    ok = {"method": "elicitation/create"}
    return [
        spec.Event("d-none", "completed", no_data),
        spec.Event("d-missing", "input_requested", {"key": ""}),
        spec.Event("d-extra", "completed", {"result": {}, "note": "x"}),
        event("q-text", "input_requested", key="k5", request="Name?"),
        event("q-no-method", "input_requested", key="k5", request={"message": "Name?"}),
        event("q-7-method", "input_requested", key="k5", request={"method": 7}),
        event("q-empty-method", "input_requested", key="k5", request={"method": ""}),
        event("q-unsafe", "input_requested", key="k5", request={**ok, **UNSAFE}),
        event("res-text", "completed", result="done"),
        event("res-unsafe", "completed", result=UNSAFE),
        event("err-text", "failed", error="boom", statusMessage="boom"),
        event("err-unsafe", "retry_requested", error=UNSAFE, statusMessage=None),
        event("err-before-msg", "failed", error="boom", statusMessage=7),
        event("msg-7", "failed", error={"code": "x"}, statusMessage=7),
    ]


def _bad_responses() -> list[spec.Event]:
    """Request events whose responses Event.validate refuses (SNODO-ARG-007)."""
    return [event(f"r-{i}", "input_responses_accepted", responses=v) for i, v in enumerate(
        ("yes", {"k": UNSAFE}, {"k": "Ada"}, {"k": {"name": "Ada"}, "j": 1}))]


def _events(r: Harness, t: str) -> None:
    """Events the seed's validation refuses once the authority passed: on a live task at a
    stale revision and under an id seen before, then on a terminal one."""
    lease, update, seven = Ref("lease"), authorized(r, "update", t), NAMES[1]
    key = {"request": {"method": "elicitation/create"}}
    for rev in (1, 0):
        worker(r, "w1", t, rev, spec.Event("", "completed", {"result": {}}), lease)
        worker(r, "w1", t, rev, spec.Event(seven, "completed", {"result": {}}), lease)
        worker(r, "w1", t, rev, event("ask-empty", "input_requested", key="", **key), lease)
        worker(r, "w1", t, rev, event("ask-7", "input_requested", key=7, **key), lease)
        request(r, t, rev, event("r-empty", "input_responses_accepted",
                                 responses={"": {"a": 1}}), update)
        for bad in _bad_data():
            worker(r, "w1", t, rev, bad, lease)
        for bad in _bad_responses():
            request(r, t, rev, bad, update)
    worker(r, "w1", t, 1, spec.Event(ASK.id, "input_requested", {"key": "", **key}), lease)
    worker(r, "w1", t, 1, spec.Event(ASK.id, "input_requested",
                                     {"key": "k6", "request": {"method": ""}}), lease)
    request(r, t, 1, spec.Event("kind-empty", "", {}), update)  # no authority sends it
    worker(r, "w1", t, 1, spec.Event("kind-empty", "", {}), lease)
    request(r, t, 1, STOP, authorized(r, "cancel", t))
    worker(r, "w1", t, 2, spec.Event("", "completed", {"result": {}}), lease)
    worker(r, "w1", t, 2, event("late", "completed", result="done"), lease)


def _values_the_seed_takes(r: Harness, p: str) -> None:
    """The empty tenant (a scope of its own, not no tenant's), a retry delay of 0 (due at
    once), a task created completed, and 1, the least positive integer, for every lease_ms,
    ttl_ms and poll_interval_ms (the seed's ``pos_integer()``: a claim or renewal of 1 ms
    ends 1 ms on, a task of ttl 1 is hidden 1 ms on)."""
    none, empty, zero, done = (f"{p}-{x}" for x in ("none", "empty", "zero", "done"))
    created(r, none, tenant=None)
    r.apply("client", spec.Get(none, authorized(r, "get", none, "")))
    request(r, none, 0, STOP, authorized(r, "cancel", none, ""))
    created(r, empty, tenant="")
    r.apply("client", spec.Get(empty, authorized(r, "get", empty, None)))
    request(r, empty, 0, STOP, authorized(r, "cancel", empty, None))
    r.apply("client", spec.Get(empty, Ref(f"obs:{empty}")))
    created(r, zero, retry_policy=(0, 0))
    r.apply("w1", spec.Claim(zero, "w1", 30_000), bind="lz")
    r.advance(1)
    worker(r, "w1", zero, 0, event("retry", "retry_requested", **FAILURE), Ref("lz"))
    r.apply("w1", spec.Release(Ref("lz")))
    r.apply("w2", spec.Claim(zero, "w2", 30_000), bind="lz2")  # due at retry_at exactly
    worker(r, "w2", zero, 1, event("retry2", "retry_requested", **FAILURE), Ref("lz2"))
    observed(r, done)
    finished = attrs.evolve(new_task(r, done), status=spec.COMPLETED, result={"pages": 0})
    r.apply("client", spec.Create(finished, work(done), authorized(r, "create", done)))
    r.apply("w1", spec.Claim(done, "w1", 30_000))
    _ones(r, p)


def _ones(r: Harness, p: str) -> None:
    one, brief, polled = (f"{p}-{x}" for x in ("one", "brief", "polled"))
    created(r, brief, ttl_ms=1)
    r.apply("client", spec.Get(brief, Ref(f"obs:{brief}")))
    observed(r, polled)
    quick = attrs.evolve(new_task(r, polled), poll_interval_ms=1)
    r.apply("client", spec.Create(quick, work(polled), authorized(r, "create", polled)))
    created(r, one)
    r.apply("w1", spec.Claim(one, "w1", 1), bind="l1")
    r.apply("w1", spec.Renew(Ref("l1"), 1), bind="l1")
    r.advance(1)  # the ttl and the lease of 1 ms are over
    r.apply("client", spec.Get(brief, Ref(f"obs:{brief}")))
    r.apply("w2", spec.Claim(one, "w2", 1))  # free again
    r.apply("w1", spec.Renew(Ref("l1"), 1))  # fenced by that claim
    r.apply("w2", spec.ClaimNext("w2", 1))
