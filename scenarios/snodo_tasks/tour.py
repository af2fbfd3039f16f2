"""The snodo-tasks tour's scope (see :mod:`fencepost.scenarios.tour`).

**Bound.** One task the walk works on, k0 (with ``second``, also a bystander k1: created, taken
by claim_next, read through k0's lease), created with the retry delays (1, 0): a deferral, a
delay of 0 and an exhausted policy; two workers, w0 at work and w1 competing, each keeping every
lease it was given (the moves present each one's last, and with ``before`` the one before);
two tenants, the task's and another. Moves from every state: create k0 (with its create-access,
with its get-access; with ``ttl`` also with a TTL), create k1; get k0 with its get and update
access, the other tenant's and k1's; w0 and w1 claim k0, the last worker claims the next task;
each lease held renewed for ``renew_ms``, released, completing k0 (and w0's read through), a
forged one read through and completing k0; w0's last lease sends an input request per key in
``keys``, a retry, failed, cancelled (a request kind) and a completion at a revision ahead,
and is renewed to the claim's own expiry (where that is a whole ms away); an answer per key
with the update-access, a cancel with the cancel-access, with the get-access, from the other
tenant (with its cancel and its get access) and with a forged access; a replay of the last
event applied and of the one before, and a reuse of the last one's id with 1.0 for 1; the
clock +1 ms, to k0's lease end -1/0/+1 ms and to its retry_at -1/0 ms (with ``ttl``: to its
TTL -1/0 ms, and reap); with ``durable`` a reopen; with ``edges`` every
argument at its edge (:mod:`.tour_edges`). Claims are of ``claim_ms``.

**Abstraction.** A state is, per task: absent; or terminal, with its claim (no event changes
a terminal task and no claim takes it, model/snodo_tasks/steps.py ``reduce``, ``_claim``); or
its status, its retry_count, its open and ever-requested input keys, its TTL's end, retry_at
and claim expiry relative to now (each 0 once passed: the rules ask only whether now is at or
past them, model/snodo_tasks/records.py ``expired``, ``live``, ``recoverable``), the claim's
holder, and, while a retry can still be scheduled, how far its last update stands past now
(committed_at steps past it and retry_at follows, steps.py ``committed_at``). Per lease a move
presents: the task it binds and whether it is that task's current claim, replaced by a renewal,
fenced by a later claim, released, of a reaped task or of an earlier creation (steps.py
``lease_state``: the generation and expiry matter only against the claim's). Of the last two
events applied: while the ledger holds its id, whether it was sent with a lease and has data
(its replay is a duplicate whatever it is); once reaped, which event it is. Revisions,
generations, absolute times, event ids, payloads and status messages are left out: each move
states its revision relative to the current one (``_transition`` asks only equality), and the
read-backs compare every field exactly on every move.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import attrs

from fencepost.model.snodo_tasks.records import BEFORE_REOPEN, Agg, LeaseM, State
from fencepost.spec import snodo_tasks as spec

from ..tour_graph import Move, Tourist
from .tour_calls import (
    OTHER,
    POLICY,
    WORKERS,
    Applied,
    Driver,
    access,
    authority_for,
    call,
    forged_access,
    fresh_event,
    lease,
    loosened,
    minted,
    new_task,
    new_work,
    observed,
    send,
)
from .tour_edges import EDGES


def _us(ms: float) -> float:
    """``ms`` to the nearest whole us, as the stores count: at a real date a float ms keeps
    a quarter of a us (1 767 225 600 000.001 is ...000.0009765625), so a successor's 0.001 ms
    is read as 0.001, not as float noise."""
    return round(ms * 1000) / 1000


def _rel(at: float, now: int) -> float:
    """``at`` relative to now, 0 once now reached it (the rules ask only ``now >= at``); in
    whole us (:func:`_us`)."""
    return max(_us(at - now), 0)


@attrs.frozen(eq=False)
class SnodoScope:
    """The snodo-tasks scope (see the module's docstring)."""

    name: str = "snodo-tasks"
    second: bool = False
    claim_ms: int = 1
    renew_ms: int = 2
    ttl: int | None = None
    keys: tuple[str, ...] = ("q0",)
    workers: int = 2
    """How many workers claim: w0 (at work), and w1 (competing) when 2."""
    before: tuple[int, ...] = ()
    """The workers whose lease before their last the moves present."""
    edges: bool = True
    own_store: bool = True  # claim_next and reap see the whole store

    @property
    def bound(self) -> str:
        tasks = "k0 and a bystander k1" if self.second else "one task"
        before = "".join(f", {WORKERS[w]}'s lease before" for w in self.before)
        ttl = "" if self.ttl is None else f", a TTL of {self.ttl} ms and reap"
        return (f"{tasks} (retry delays {POLICY}), {self.workers} worker"
                f"{'s' if self.workers > 1 else ''} (each one's last lease{before}, a forged "
                f"one), 2 tenants, input key{'s' if len(self.keys) > 1 else ''} "
                f"{', '.join(self.keys)}; claims of {self.claim_ms} ms, renewals of "
                f"{self.renew_ms} ms and to the claim's own expiry{ttl}; events of every kind, "
                "a revision ahead, replays and a reused id; the clock +1 ms, to the lease end "
                "-1/0/+1 ms and to retry_at -1/0 ms"
                + ("; every argument at its edge" if self.edges else ""))

    def start(self, prefix: str) -> Driver:
        return Driver(prefix)

    # -- the abstraction -----------------------------------------------------------------

    def abstract(self, d: Driver, t: Tourist) -> Hashable:
        state: State = t.state
        now = t.now
        tasks = tuple(_task(state.get(d.task(i)), now) for i in range(1 + self.second))
        leases = tuple(_lease(d.mine(w, back), d, state) for w, back in self._slots())
        events = tuple(_event(a, state.get(d.task(0)), state.ghosts.get(d.task(0), frozenset()))
                       for a in d.applied[-2:])
        return tasks, leases, events

    def _slots(self) -> list[tuple[int, int]]:
        """The leases the moves present: each worker's last, and the one before for
        :attr:`before`."""
        return [(w, back) for w in range(self.workers) for back in (0, 1)
                if back == 0 or w in self.before]

    # -- the moves -----------------------------------------------------------------------

    def moves(self, d: Driver, t: Tourist) -> Sequence[Move]:
        out = [Move("create k0", _create(0, None))]
        if self.ttl is not None:
            out.append(Move(f"create k0 with a {self.ttl} ms TTL", _create(0, self.ttl)))
        out.append(Move("create k0 with its get-access", _create(0, None, "get")))
        if self.second:
            out.append(Move("create k1", _create(1, None)))
        out += [Move(f"get k0 with {said}", _get(how)) for said, how in _READERS]
        out += [Move(f"{w} claims k0", _claim(n, self.claim_ms))
                for n, w in enumerate(WORKERS[:self.workers])]
        last = self.workers - 1
        out.append(Move(f"{WORKERS[last]} claims the next task",
                        _claim_next(last, self.claim_ms)))
        out += self._lease_moves(d)
        out += self._worker_moves(d, t)
        out += [Move(f"{said} with its {via}-access", _request(what, via))
                for said, what, via in _REQUESTS if what.split(" ")[-1] in (*self.keys, what)]
        out += [Move("cancel k0 with its get-access", _request("cancelled", "get")),
                Move("cancel k0 from the other tenant", _request("cancelled", "foreign")),
                Move("cancel k0 with the other tenant's get-access",
                     _request("cancelled", "foreign get")),
                Move("cancel k0 with a forged access", _request("cancelled", "forged"))]
        out += self._replays(d)
        out += self._clock_moves(d, t)
        if self.ttl is not None:  # with no TTL nothing is ever reaped
            out.append(Move("reap", _reap))
        if "durable" in t.capabilities:
            out.append(Move("reopen the store", _reopen))
        if self.edges:
            out += [Move(f"edge: {said}", _edge(build)) for said, build in EDGES]
        return out

    def _lease_moves(self, d: Driver) -> list[Move]:
        """Each lease the walk holds renewed, released, read through (w0's: w1's read is no
        other rule) and completing k0; a forged one read through and completing k0."""
        out: list[Move] = []
        for w, back in self._slots():
            if d.mine(w, back) is None:
                continue
            said = f"{WORKERS[w]}'s {'last lease' if back == 0 else 'lease before'}"
            out += [Move(f"renew {said} for {self.renew_ms} ms", _renew((w, back),
                                                                         self.renew_ms)),
                    Move(f"release {said}", _release((w, back)))]
            if w == 0:
                out.append(Move(f"worker snapshot of k0 with {said}",
                                _worker_snapshot((w, back), 0)))
            out.append(Move(f"{said} completes k0", _worker_event((w, back), "completed")))
        return [*out, Move("worker snapshot of k0 with a forged lease",
                           _worker_snapshot(None, 0)),
                Move("a forged lease completes k0", _worker_event(None, "completed"))]

    def _worker_moves(self, d: Driver, t: Tourist) -> list[Move]:
        """w0 is the worker at work: its last lease sends every worker event (and a request
        kind); w1 competes for the task."""
        if d.mine(0, 0) is None:
            return []
        out = [Move(f"w0's last lease sends {what}", _worker_event(WORK, what))
               for what in _WORKER_EVENTS if what.split(" ")[-1] in (*self.keys, what)]
        out.append(Move("w0's last lease completes k0 at a revision ahead",
                        _worker_event(WORK, "completed", ahead=True)))
        agg = t.state.get(d.task(0))
        if agg is not None and agg.claim is not None:
            left = agg.claim.expires_at - t.now
            if left > 0 and left == int(left):
                out.append(Move("renew w0's last lease to the claim's own expiry",
                                _renew(WORK, None)))
        if self.second:
            out.append(Move("worker snapshot of k1 with w0's last lease",
                            _worker_snapshot(WORK, 1)))
        return out

    @staticmethod
    def _replays(d: Driver) -> list[Move]:
        out: list[Move] = []
        if d.applied:
            out.append(Move("replay the last event applied", _replay(1, False)))
            if d.applied[-1].event.data:
                out.append(Move("reuse the last event's id with 1.0 for 1", _replay(1, True)))
        if len(d.applied) > 1:
            out.append(Move("replay the event applied before it", _replay(2, False)))
        return out

    @staticmethod
    def _clock_moves(d: Driver, t: Tourist) -> list[Move]:
        out = [Move("the clock +1 ms", _advance)]
        agg = t.state.get(d.task(0))
        if agg is None:
            return out
        snap = agg.snapshot
        marks: list[tuple[str, float | None, tuple[int, ...]]] = [
            ("lease end", agg.claim.expires_at if agg.claim is not None else None, (-1, 0, 1)),
            ("retry", snap.retry_at, (-1, 0)),
            ("TTL", snap.task.created_at + snap.task.ttl_ms
             if snap.task.ttl_ms is not None else None, (-1, 0)),
        ]
        for said, at, deltas in marks:
            if at is None or at <= t.now:  # a mark passed is no mark (the abstraction caps it)
                continue
            for delta in deltas:
                if math.ceil(at) + delta > t.now:
                    out.append(Move(f"the clock to k0's {said}{_ms(delta)}",
                                    _to_mark(said, delta)))
        return out


def _ms(delta: int) -> str:
    return {-1: " -1 ms", 0: "", 1: " +1 ms"}[delta]


# -- the abstraction's parts -------------------------------------------------------------


def _task(agg: Agg | None, now: int) -> Hashable:
    if agg is None:
        return None
    snap = agg.snapshot
    task = snap.task
    ttl = None if task.ttl_ms is None else _rel(task.created_at + task.ttl_ms, now)
    retry = None if snap.retry_at is None else _rel(snap.retry_at, now)
    claim = None if agg.claim is None else (WORKERS.index(agg.claim.owner_id),
                                            _rel(agg.claim.expires_at, now))
    if task.status in spec.TERMINAL:  # no event changes it, no claim takes it
        return "terminal", claim
    # How far the last update stands past now decides committed_at, and so a retry's
    # retry_at: kept while a retry can still be scheduled.
    scheduling = task.status not in spec.TERMINAL and snap.retry_count < len(POLICY)
    still = max(_us(task.last_updated_at - now), -1) if scheduling else None
    return (task.status, ttl, retry, snap.retry_count, tuple(sorted(task.input_requests)),
            tuple(sorted(snap.input_history)), still, claim)


def _lease(held: tuple[str, LeaseM] | None, d: Driver, state: State) -> Hashable:
    """The lease against its task's claim: current (its expiry is the claim's), replaced by a
    renewal (no renewal can bring its expiry back: each one ends later than the last, or at
    the same ms, which keeps the lease), fenced by a later claim, released, of a task reaped
    or of an earlier creation; or issued before a reopen (void, whatever its claim)."""
    if held is None:
        return None
    lease_ = held[1]
    i = d.index(lease_.task_id)
    agg = state.get(lease_.task_id)
    if lease_.store == BEFORE_REOPEN:
        return i, "before a reopen"
    if agg is None:
        return i, "gone"
    if agg.incarnation != lease_.incarnation:
        return i, "another creation"
    if lease_.generation < agg.generation:
        return i, "fenced"
    c = agg.claim
    if c is None:
        return i, "released"
    current = (c.owner_id, c.generation, c.expires_at) == (lease_.owner_id, lease_.generation,
                                                          lease_.expires_at)
    return i, "current" if current else "replaced"


def _event(applied: Applied, agg: Agg | None, ghosts: frozenset[str]) -> Hashable:
    """An event applied: while the task's ledger holds its id, a replay is a duplicate
    whatever it is (whether it was sent with a lease or an access, whose validity the rest of
    the state says, and whether it has data to reuse its id with, matter); once reaped, a
    replay is applied afresh by its kind's rule."""
    if agg is not None and applied.event.id in agg.seen:
        return applied.via == "lease", bool(applied.event.data)
    return applied.what, applied.via, applied.event.id in ghosts


# -- the moves' calls ---------------------------------------------------------------------

_READERS = (("its get-access", "get"), ("its update-access", "update"),
            ("the other tenant's get-access", "foreign"), ("k1's get-access", "k1"))
_WORKER_EVENTS = ("input_requested q0", "input_requested q1", "retry_requested", "failed",
                  "cancelled")
_REQUESTS = (("answer q0", "input_responses_accepted q0", "update"),
             ("answer q1", "input_responses_accepted q1", "update"),
             ("cancel k0", "cancelled", "cancel"))


def _reader(t: Tourist, d: Driver, how: str) -> Any:
    if how == "foreign":
        return access(t, d, "get", 0, OTHER)
    if how == "k1":
        return access(t, d, "get", 1)
    return access(t, d, how, 0)


def _create(i: int, ttl: int | None, kind: str = "create") -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        observed(t, d, i)
        task_id = d.task(i)
        call(t, "client", spec.Create(new_task(t, task_id, ttl), new_work(task_id),
                                      access(t, d, kind, i)))
        return d
    return do


def _get(how: str) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        call(t, "client", spec.Get(d.task(0), _reader(t, d, how)))
        return d
    return do


def _claimed(d: Driver, t: Tourist, w: int, op: Any) -> Driver:
    d, name = d.name("L")
    got = minted(t, call(t, WORKERS[w], op, bind=name), name)
    return d if got is None else d.given(w, name, got)


def _claim(w: int, ms: int) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        return _claimed(d, t, w, spec.Claim(d.task(0), WORKERS[w], ms))
    return do


def _claim_next(w: int, ms: int) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        return _claimed(d, t, w, spec.ClaimNext(WORKERS[w], ms))
    return do


WORK = (0, 0)
"""w0's last lease: the one the worker at work sends its events with."""


def _held(d: Driver, which: tuple[int, int] | None) -> tuple[str, LeaseM] | None:
    """The lease a move names: (worker, back), or None (a forged one)."""
    return None if which is None else d.mine(*which)


def _renew(which: Any, ms: int | None) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        held = _held(d, which)
        if ms is None:  # to the claim's own expiry
            agg = t.state[d.task(0)]
            lease_ms = int(agg.claim.expires_at - t.now)
        else:
            lease_ms = ms
        d, name = d.name("L")
        got = minted(t, call(t, "worker", spec.Renew(lease(t, held), lease_ms), bind=name),
                     name)
        if got is None or held is None:
            return d
        owner = WORKERS.index(held[1].owner_id)
        return d.given(owner, name, got)
    return do


def _release(which: Any) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        call(t, "worker", spec.Release(lease(t, _held(d, which))))
        return d
    return do


def _worker_snapshot(which: Any, i: int) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        call(t, "worker", spec.WorkerSnapshot(d.task(i), lease(t, _held(d, which))))
        return d
    return do


def _worker_event(which: Any, what: str, ahead: bool = False) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        d, ev = fresh_event(d, what)
        authority = spec.WorkerAuthority(lease(t, _held(d, which)))
        return send(t, d, "worker", ev, what, "lease", authority, ahead)
    return do


def _request(what: str, via: str) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        d, ev = fresh_event(d, what)
        if via == "forged":
            got = forged_access(t)
        elif via.startswith("foreign"):
            got = access(t, d, "get" if via == "foreign get" else "cancel", 0, OTHER)
        else:
            got = access(t, d, via, 0)
        return send(t, d, "client", ev, what, via, spec.RequestAuthority(got))
    return do


def _replay(back: int, loose: bool) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        first = d.applied[-back]
        ev = first.event
        if loose:
            ev = attrs.evolve(ev, data=loosened(ev.data))
        actor = "worker" if first.via == "lease" else "client"
        return send(t, d, actor, ev, first.what, first.via, authority_for(t, d, first.via))
    return do


def _advance(d: Driver, t: Tourist) -> Driver:
    t.advance(1)
    return d


def _to_mark(said: str, delta: int) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        agg = t.state[d.task(0)]
        snap = agg.snapshot
        at = {"lease end": lambda: agg.claim.expires_at, "retry": lambda: snap.retry_at,
              "TTL": lambda: snap.task.created_at + snap.task.ttl_ms}[said]()
        t.set_time(math.ceil(at) + delta)
        return d
    return do


def _reap(d: Driver, t: Tourist) -> Driver:
    call(t, "reaper", spec.Reap())
    return d


def _reopen(d: Driver, t: Tourist) -> Driver:
    t.reopen()
    return d.reopened()


def _edge(build: Any) -> Any:
    def do(d: Driver, t: Tourist) -> Driver:
        observed(t, d, 0)  # a create a store should have refused still reads back
        call(t, *build(d, t))
        return d
    return do


SCOPES = {
    "full": SnodoScope(before=(0,), claim_ms=2, renew_ms=3),
    "ci": SnodoScope(name="snodo-tasks (ci)", edges=False),
}
"""The named scopes: ``full`` (the bench's: 1,852 states, 139,172 edges; every argument edge,
w0's lease before its last, claims of 2 ms renewed for 3) and ``ci`` (566 states, 19,584
edges: no argument edges, w0's last leases alone). A TTL, a second input key and the
bystander task are parameters of :class:`SnodoScope` that no named scope sets: each multiplies
the graph by ten or more (the bystander alone: 392,493 edges; a TTL with reaping, over
thirty)."""
