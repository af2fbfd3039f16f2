"""The snodo-tasks tour's argument edges (the full scope's, see :mod:`.tour`): one call per
argument at its edge, sent to k0 in whatever state the walk is in, with w0's last lease (a
forged one before any). The values are :mod:`.edges`' own (0, a negative number, a float, a
bool and a string for a count; the empty string and a number for a name); the model says what
each answers, whatever the state (most are refused by a guard before anything is read).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from fencepost.spec import snodo_tasks as spec

from ..tour_graph import Tourist
from .edges import COUNTS, NAMES
from .tour_calls import HOME, Driver, access, lease, new_task, new_work

Build = Callable[[Driver, Tourist], tuple[str, Any]]


def _newest(d: Driver, t: Tourist) -> Any:
    return lease(t, d.mine(0, 0))


def _claim(ms: Any) -> Build:
    return lambda d, t: ("w0", spec.Claim(d.task(0), "w0", ms))


def _claim_next(ms: Any) -> Build:
    return lambda d, t: ("w0", spec.ClaimNext("w0", ms))


def _renew(ms: Any) -> Build:
    return lambda d, t: ("worker", spec.Renew(_newest(d, t), ms))


def _claim_of(task: Any, owner: Any) -> Build:
    return lambda d, t: ("w0", spec.Claim(d.task(0) if task is None else task,
                                          "w0" if owner is None else owner, 3))


def _authorize(kind: str, task: Any) -> Build:
    return lambda d, t: ("client", spec.Authorize(
        spec.Context(HOME), spec.Action(kind, d.task(0) if task is None else task)))


def _get(task: Any) -> Build:
    return lambda d, t: ("client", spec.Get(task, access(t, d, "get", 0)))


def _worker_snapshot(task: Any) -> Build:
    return lambda d, t: ("worker", spec.WorkerSnapshot(task, _newest(d, t)))


def _revision(rev: Any) -> Build:
    done = spec.Event("edge-done", "completed", {"result": {}})
    return lambda d, t: ("worker", spec.TransitionOp(d.task(0), rev, done,
                                                     spec.WorkerAuthority(_newest(d, t))))


def _current(d: Driver, t: Tourist) -> int:
    agg = t.state.get(d.task(0))
    return 0 if agg is None else int(agg.snapshot.revision)


def _event(ev: spec.Event) -> Build:
    return lambda d, t: ("worker", spec.TransitionOp(d.task(0), _current(d, t), ev,
                                                     spec.WorkerAuthority(_newest(d, t))))


def _bare_lease(d: Driver, t: Tourist) -> tuple[str, Any]:
    return "worker", spec.TransitionOp(d.task(0), _current(d, t), spec.Event(
        "edge-bare", "completed", {"result": {}}), _newest(d, t))


def _create(task_change: dict[str, Any], work_change: dict[str, Any] | None) -> Build:
    def build(d: Driver, t: Tourist) -> tuple[str, Any]:
        task_id = d.task(0)
        task = attrs.evolve(new_task(t, task_id, None), **task_change)
        work: Any = None if work_change is None else attrs.evolve(new_work(task_id),
                                                                  **work_change)
        return "client", spec.Create(task, work, access(t, d, "create", 0))
    return build


ASK_EMPTY = spec.Event("edge-ask", "input_requested",
                       {"key": "", "request": {"method": "elicitation/create"}})

EDGES: tuple[tuple[str, Build], ...] = (
    *((f"claim k0 for {ms!r} ms", _claim(ms)) for ms in COUNTS),
    *((f"claim the next task for {ms!r} ms", _claim_next(ms)) for ms in COUNTS),
    *((f"renew w0's last lease for {ms!r} ms", _renew(ms)) for ms in COUNTS),
    *((f"claim the task {name!r}", _claim_of(name, None)) for name in NAMES),
    *((f"claim k0 as the owner {name!r}", _claim_of(None, name)) for name in NAMES),
    ("claim the next task as the owner ''", lambda d, t: ("w0", spec.ClaimNext("", 3))),
    ("authorize get of the task ''", _authorize("get", "")),
    ("authorize the action 'delete' on k0", _authorize("delete", None)),
    ("authorize the action '' on k0", _authorize("", None)),
    *((f"get the task {name!r} with k0's get-access", _get(name)) for name in NAMES),
    *((f"worker snapshot of the task {name!r}", _worker_snapshot(name)) for name in NAMES),
    *((f"complete k0 at the revision {rev!r}", _revision(rev)) for rev in (-1, True, 1.0, "1")),
    ("complete k0 with the bare lease as authority", _bare_lease),
    ("complete k0 with the event id ''",
     _event(spec.Event("", "completed", {"result": {}}))),
    ("request input under the key ''", _event(ASK_EMPTY)),
    ("create k0 with a TTL of 0 ms", _create({"ttl_ms": 0}, {})),
    ("create k0 with the work type ''", _create({}, {"type": ""})),
    ("create k0 with no work", _create({}, None)),
)
"""Each argument edge: its move's label and the call it makes."""
