"""The steps every snodo-tasks check is made of: accesses, tasks, events, worker and request
writes, and attributing a difference to the clause a block of steps is about.

Each task's get-access is bound as ``obs:<task_id>`` before the task is created (see
:func:`created`), so that the harness can read the task back after every step.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import Forged, Ref
from fencepost.spec.outcome import Outcome

from ..harness import Harness

TENANT = "acme"
Handle = Ref | Forged


def asking(message: str) -> dict[str, Any]:
    """An input request as the seed's callers send one: a non-empty ``method`` (task.ex:174-180
    refuses any other as invalid_input_request)."""
    return {"method": "elicitation/create", "message": message}


ASK = spec.Event("ask", "input_requested", {"key": "k", "request": asking("Name?")})
DONE = spec.Event("done", "completed", {"result": {"pages": 3}})
STOP = spec.Event("stop", "cancelled", {})
FAILURE = {"error": {"code": "timeout"}, "statusMessage": "upstream timed out"}


def event(event_id: str, kind: str, **data: Any) -> spec.Event:
    return spec.Event(event_id, kind, data)


def new_task(h: Harness, task_id: str, ttl_ms: int | None = None) -> spec.Task:
    return spec.Task(task_id, spec.WORKING, None, h.now, h.now, ttl_ms, 250, {}, None, None)


def work(task_id: str, retry_policy: tuple[int, ...] = ()) -> spec.Work:
    return spec.Work(f"idem-{task_id}", "render", {"page": 1, "scale": 1.5}, retry_policy)


def authorized(
    h: Harness, kind: str, task_id: str, tenant: str | None = TENANT, name: str | None = None
) -> Ref:
    """An access for ``kind`` on ``task_id`` in ``tenant``'s scope, bound under ``name``."""
    name = name or f"{kind}:{tenant}:{task_id}"
    h.apply("client", spec.Authorize(spec.Context(tenant), spec.Action(kind, task_id)), bind=name)
    return Ref(name)


def observed(h: Harness, task_id: str, tenant: str | None = TENANT) -> None:
    """Bind the get-access the harness reads ``task_id`` back through."""
    authorized(h, "get", task_id, tenant, name=f"obs:{task_id}")


def created(
    h: Harness,
    task_id: str,
    tenant: str | None = TENANT,
    ttl_ms: int | None = None,
    retry_policy: tuple[int, ...] = (),
) -> Outcome:
    """Authorize the observer and a create-access, then create ``task_id`` (the answer may be
    a refusal: the model says which)."""
    observed(h, task_id, tenant)
    access = authorized(h, "create", task_id, tenant)
    op = spec.Create(new_task(h, task_id, ttl_ms), work(task_id, retry_policy), access)
    return h.apply("client", op)


def worker(h: Harness, owner: str, task_id: str, rev: int, ev: spec.Event, lease: Handle) -> None:
    h.apply(owner, spec.TransitionOp(task_id, rev, ev, spec.WorkerAuthority(lease)))


def request(h: Harness, task_id: str, rev: int, ev: spec.Event, access: Handle) -> None:
    h.apply("client", spec.TransitionOp(task_id, rev, ev, spec.RequestAuthority(access)))


@contextmanager
def forked(h: Harness, suffix: str, **limits: str) -> Iterator[Harness]:
    """A harness on a store of its own (same clock and evidence; ``limits`` override options),
    for checks that see the whole store: claim_next, reap, capacity. Discarded afterwards."""
    world = h.world.fork(suffix, {**h.world.options, **limits})
    try:
        yield h.on(world)
    finally:
        world.discard()


def fenced(h: Harness, t: str, lease: Ref, rev: int) -> None:
    """Every worker use of ``lease`` on ``t``, the release last (a zombie worker)."""
    h.apply("zombie", spec.WorkerSnapshot(t, lease))
    h.apply("zombie", spec.Renew(lease, 30_000))
    worker(h, "zombie", t, rev, DONE, lease)
    h.apply("zombie", spec.Release(lease))


def refused_everywhere(
    h: Harness, t: str, v: str, get: Handle, cancel: Handle, create: Handle, lease: Handle
) -> None:
    """Every use of values ``t``'s store never issued: reads, request and worker writes."""
    h.apply("intruder", spec.Get(t, get))
    request(h, t, 0, STOP, cancel)
    h.apply("intruder", spec.Create(new_task(h, v), work(v), create))
    h.apply("intruder", spec.Renew(lease, 60_000))
    h.apply("intruder", spec.WorkerSnapshot(t, lease))
    worker(h, "intruder", t, 0, DONE, lease)
    h.apply("intruder", spec.Release(lease))


def smuggled(h: Harness, source: Harness, name: str) -> Ref:
    """Bind into ``h`` a value ``source``'s store issued, meaning what it means over there."""
    meaning, value = source.bindings[name]
    h.bind(f"other:{name}", attrs.evolve(meaning, store="other"), value)
    return Ref(f"other:{name}")
