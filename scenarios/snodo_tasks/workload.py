"""snodo-tasks' concurrent workload: workers and clients racing over a small set of tasks.

Every worker (owner ``<prefix>w<k>``) plays both sides of the store. As a client it authorizes
accesses (its own, for the task's home tenant, sometimes the other tenant's), creates tasks
(sometimes an id that exists), reads them, and sends input responses and cancellations. As a
worker it claims the tasks in play and claims the next recoverable one (so claims collide),
renews and releases its leases (sometimes one that a renew or a re-claim replaced), reads
through them and sends worker events with the revision it last saw (sometimes a stale one:
conflict), replaying an event now and then (duplicate). Once in a while it reaps.

Accesses and leases are the store's own values, taken from its answers; a call that needs an
access no worker holds yet is preceded by the ``authorize`` that gets it (the workers share
accesses, and what the answers showed of each task: revision, open input requests, status). The
tasks in play are the last few created; every task carries a TTL and is reaped in time, so the
store (and the set of tasks ``claim_next`` chooses from) stays small. Boundaries are the lease
ends, retry times and TTL expiries the answers show.

A history of this contract is checked as one partition (``claim_next`` and ``reap`` see every
task), cut into its bursts, and the checker carries every state a burst can end in into the
next one. So the workload keeps bursts from ending in several states where it costs coverage
nothing: at most one create per burst (see :meth:`SnodoWorkload.create_slot`).
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Err, Ok, Outcome
from fencepost.spec.shapes import answer_hints, holds

IN_PLAY = 6
"""Tasks the workers pick from: the last ``IN_PLAY`` created."""

TENANTS = ("acme", "umbrella")
LEASES = (5, 15, 40, 100)
TTLS = (150, 300, 600, 600, 1200)
POLICIES: tuple[tuple[int, ...], ...] = ((), (4,), (3, 20), (3, 20))
WEIGHTS = {"create": 6, "get": 5, "claim": 7, "claim_next": 6, "renew": 10, "release": 5,
           "worker_snapshot": 4, "worker_event": 18, "request_event": 6, "reap": 1}
WORKER_EVENTS = {"input_requested": 8, "retry_requested": 8, "completed": 3, "failed": 1}
Need = tuple[str, str, str]
"""What an access is for: (kind, task id, tenant)."""

MISSING: Any = object()
"""No worker holds that access yet."""

Build = Callable[[Any, int], Op]
"""``build(access, now)``: a call that needs an access, made at store time ``now``."""

HELD = 3
"""Leases a worker keeps per task (newest last): the older ones are its stale replays."""


class SnodoWorkload:
    """The shared part of a run: the task ids handed out and created, the boundaries seen."""

    answers = answer_hints(spec)

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.lock = threading.Lock()
        self.minted = 0
        self.created: list[str] = []  # ids a create succeeded for, newest last
        self.slot_at = -1
        self.times: list[int] = []
        self.accesses: dict[Need, Any] = {}
        self.snapshots: dict[str, spec.Snapshot] = {}
        self.reaped: set[str] = set()
        self.claimed: dict[str, int] = {}  # task id -> when the last claim seen ends

    def access(self, need: Need) -> Any:
        """The access some worker was given for ``need``, else :data:`MISSING`."""
        with self.lock:
            return self.accesses.get(need, MISSING)

    def saw_access(self, need: Need, access: Any) -> None:
        with self.lock:
            self.accesses[need] = access

    def snapshot(self, task_id: str) -> spec.Snapshot | None:
        """The newest snapshot of ``task_id`` an answer showed."""
        with self.lock:
            return self.snapshots.get(task_id)

    def saw_snapshot(self, snap: spec.Snapshot) -> None:
        task_id = snap.task.id
        with self.lock:
            old = self.snapshots.get(task_id)
            if old is None or (old.task.created_at, old.revision) <= (snap.task.created_at,
                                                                       snap.revision):
                self.snapshots[task_id] = snap

    def new_id(self) -> str:
        with self.lock:
            self.minted += 1
            return f"{self.prefix}t{self.minted}"

    def task(self, rng: random.Random) -> str:
        """One of the tasks in play (the last few created; before any, the first id), mostly
        one that was not finished when last seen."""
        with self.lock:
            if not self.created:
                return f"{self.prefix}t1"
            going = [t for t in self.created if t not in self.snapshots
                     or self.snapshots[t].task.status not in spec.TERMINAL]
            return rng.choice(going if going and rng.random() < 0.8 else self.created)

    def claimable(self, rng: random.Random, now: int) -> str:
        """A task in play to claim: mostly one that looked claimable at ``now`` as far as the
        answers show (not finished, retry due, no claim known to be live), so that claims of
        one task meet in a burst; else any task in play."""
        with self.lock:
            free = [t for t in self.created if t in self.snapshots
                    and _claimable(self.snapshots[t], now) and self.claimed.get(t, 0) <= now]
        return rng.choice(free) if free and rng.random() < 0.85 else self.task(rng)

    def saw_claim(self, task_id: str, until: int | None) -> None:
        """``task_id`` was claimed until ``until`` (None: released)."""
        with self.lock:
            self.claimed[task_id] = until if until is not None else 0

    def saw_reaped(self, ids: Sequence[str]) -> None:
        with self.lock:
            self.reaped.update(ids)
            for task_id in ids:
                self.snapshots.pop(task_id, None)

    def gone(self, task_id: str) -> bool:
        """Was ``task_id`` reaped (and not created since), as far as the answers show?"""
        with self.lock:
            return task_id in self.reaped

    def asking(self) -> list[str]:
        """The tasks in play that were waiting for input when last seen."""
        with self.lock:
            return [t for t in self.created
                    if t in self.snapshots and self.snapshots[t].task.input_requests]

    def saw_created(self, task_id: str) -> None:
        with self.lock:
            self.reaped.discard(task_id)
            if task_id in self.created:
                self.created.remove(task_id)
            self.created.append(task_id)
            del self.created[:-IN_PLAY]

    @staticmethod
    def home(task_id: str) -> str:
        """The tenant a task is created in (every worker agrees)."""
        return TENANTS[int(task_id.rsplit("t", 1)[1]) % len(TENANTS)]

    def create_slot(self, now: int) -> bool:
        """May a create be made at store time ``now``? One per store time (so one per burst).

        Creates of distinct ids in one burst would leave the model in as many states as their
        orders (each aggregate records which create made it: its incarnation), and the checker
        would carry every one of them into the next burst, and the next."""
        with self.lock:
            if self.slot_at == now:
                return False
            self.slot_at = now
            return True

    def saw_time(self, at: float | None) -> None:
        if at is None:
            return
        with self.lock:  # a time with a us part (committed_at_step) is due at its next ms
            self.times.append(math.ceil(at))
            del self.times[:-64]

    def worker(self, index: int) -> SnodoWorker:
        return SnodoWorker(self, index)

    def boundaries(self) -> Sequence[int]:
        with self.lock:
            return tuple(self.times)


class SnodoWorker:
    """One worker: its leases per task (and when it was told they end), its events per task,
    and the call an ``authorize`` it just made is for."""

    def __init__(self, shared: SnodoWorkload, index: int) -> None:
        self.shared = shared
        self.owner = f"{shared.prefix}w{index + 1}"
        self.leases: dict[str, list[Any]] = {}
        self.expires: dict[str, int] = {}  # task id -> when its newest lease ends, as told
        self.events: dict[str, list[spec.Event]] = {}
        self.issued = 0
        self.then: tuple[Need, Build] | None = None
        self.next_id: str | None = None

    # -- what to call ---------------------------------------------------------------------------

    def next_op(self, rng: random.Random, now: int) -> Op:
        if self.then is not None:  # the call an authorize was made for
            need, build = self.then
            self.then = None
            access = self.shared.access(need)
            if access is not MISSING:
                return build(access, now)
        while True:
            kind = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
            op = self._create(rng, now) if kind == "create" else self._op(rng, now, kind)
            if op is not None:
                return op

    def _op(self, rng: random.Random, now: int, kind: str) -> Op | None:
        if kind == "get":
            task_id = self.shared.task(rng)
            access = rng.choices(("get", "update", "cancel"), weights=(8, 1, 1))[0]
            return self._with_access(rng, access, task_id, lambda a, _: spec.Get(task_id, a),
                                     now)
        if kind == "claim":
            return spec.Claim(self.shared.claimable(rng, now), self.owner, rng.choice(LEASES))
        if kind == "claim_next":
            return spec.ClaimNext(self.owner, rng.choice(LEASES))
        if kind == "request_event":
            return self._request_event(rng, now)
        if kind == "reap":
            return spec.Reap()
        held = self._held_task(rng, now)
        if held is None:  # no lease to use: another kind of call
            return None
        lease = self._lease(rng, held)
        if kind == "renew":
            return spec.Renew(lease, rng.choice(LEASES))
        if kind == "release":
            return spec.Release(lease)
        if kind == "worker_snapshot":
            return spec.WorkerSnapshot(held, lease)
        kinds = list(WORKER_EVENTS)
        event_kind = rng.choices(kinds, weights=[WORKER_EVENTS[k] for k in kinds])[0]
        return spec.TransitionOp(held, self._revision(rng, held),
                                 self._event(rng, held, event_kind), spec.WorkerAuthority(lease))

    def _with_access(self, rng: random.Random, kind: str, task_id: str, build: Build,
                     now: int) -> Op:
        """``build(access, now)`` with the worker's access for ``kind`` on ``task_id`` (now and
        then the other tenant's); first the ``authorize`` that gets it when not held yet."""
        home = self.shared.home(task_id)
        tenant = next(t for t in TENANTS if t != home) if rng.random() < 0.03 else home
        need = (kind, task_id, tenant)
        access = self.shared.access(need)
        if access is not MISSING:
            return build(access, now)
        self.then = (need, build)
        return spec.Authorize(spec.Context(tenant), spec.Action(kind, task_id))

    def _create(self, rng: random.Random, now: int) -> Op | None:
        """A create of the worker's next new id (else of a task in play: already_exists): first
        the authorize for it; then the create itself when the burst's create slot is free, else
        nothing (another kind of call is drawn)."""
        if self.next_id is None:
            self.next_id = self.shared.new_id()
        task_id = self.next_id if rng.random() < 0.85 else self.shared.task(rng)
        need = ("create", task_id, self.shared.home(task_id))
        access = self.shared.access(need)
        if access is MISSING:
            return spec.Authorize(spec.Context(need[2]), spec.Action("create", task_id))
        if not self.shared.create_slot(now):
            return None
        if task_id == self.next_id:
            self.next_id = None
        task = spec.Task(task_id, spec.WORKING, None, now, now, rng.choice(TTLS), 250, {}, None,
                         None)
        work = spec.Work(f"idem-{task_id}", "render", {"page": 1}, rng.choice(POLICIES))
        return spec.Create(task, work, access)

    def _held_task(self, rng: random.Random, now: int) -> str | None:
        """A task this worker holds a lease on, mostly one it believes live; the leases of
        reaped tasks are forgotten (after a last use, now and then)."""
        for task_id in [t for t in self.leases if self.shared.gone(t)]:
            if rng.random() < 0.05:
                return task_id
            del self.leases[task_id]
        live = [t for t in self.leases if self.expires.get(t, 0) > now]
        if live and rng.random() < 0.9:
            return rng.choice(live)
        return rng.choice(list(self.leases)) if self.leases and rng.random() < 0.08 else None

    def _lease(self, rng: random.Random, task_id: str) -> Any:
        mine = self.leases[task_id]
        if len(mine) > 1 and rng.random() < 0.12:
            return rng.choice(mine[:-1])
        return mine[-1]

    def _revision(self, rng: random.Random, task_id: str) -> int:
        """The revision last seen (by any worker), sometimes one off: a stale writer."""
        snap = self.shared.snapshot(task_id)
        rev: int = snap.revision if snap is not None else 0
        if rng.random() < 0.1:
            return rev - 1 if rev > 0 else rev + 1
        return rev

    def _event(self, rng: random.Random, task_id: str, kind: str) -> spec.Event:
        mine = self.events.setdefault(task_id, [])
        if mine and rng.random() < 0.06:
            old = rng.choice(mine)
            if rng.random() < 0.25:  # the same id for another event: event_id_reused
                return spec.Event(old.id, kind, self._data(rng, task_id, kind))
            return old  # a replay: duplicate
        self.issued += 1
        new = spec.Event(f"{self.owner}e{self.issued}", kind, self._data(rng, task_id, kind))
        mine.append(new)
        del mine[:-4]
        return new

    def _data(self, rng: random.Random, task_id: str, kind: str) -> dict[str, Any]:
        """An event's data: mostly a key never asked for, responses to the outstanding ones
        (as last seen); now and then a key used before (duplicate_input_key, unchanged)."""
        snap = self.shared.snapshot(task_id)
        if kind == "input_requested":
            used = len(snap.input_history) if snap is not None else 0
            key = f"q{used + 1}" if rng.random() < 0.85 else f"q{rng.randint(1, used + 1)}"
            request = {"method": "elicitation/create", "message": f"{key}?"}  # task.ex:174-180
            return {"key": key, "request": request}
        if kind == "input_responses_accepted":
            asked = sorted(snap.task.input_requests) if snap is not None else []
            key = rng.choice(asked) if asked and rng.random() < 0.85 else "q1"
            return {"responses": {key: {"answer": rng.randint(1, 3)}}}
        if kind in ("retry_requested", "failed"):
            return {"error": {"code": "timeout"}, "statusMessage": "upstream timed out"}
        if kind == "completed":
            return {"result": {"pages": rng.randint(1, 3)}}
        return {}

    def _request_event(self, rng: random.Random, now: int) -> Op | None:
        """A client's answer to a task waiting for input (as last seen), or a cancel."""
        asking = self.shared.asking()
        cancel = rng.random() < 0.08
        if asking and not cancel:
            task_id = rng.choice(asking)
        elif cancel or rng.random() < 0.1:
            task_id = self.shared.task(rng)
        else:
            return None
        kind = "cancelled" if cancel else "input_responses_accepted"
        access_kind = "cancel" if cancel else "update"
        rev = self._revision(rng, task_id)
        ev = self._event(rng, task_id, kind)
        return self._with_access(
            rng, access_kind, task_id,
            lambda a, _: spec.TransitionOp(task_id, rev, ev, spec.RequestAuthority(a)), now)

    # -- what the answers teach -----------------------------------------------------------------

    def saw(self, op: Op, outcome: Outcome, now: int) -> None:
        if isinstance(outcome, Err) and outcome.code == "conflict":
            self._snapshot(outcome.payload)
            return
        if not isinstance(outcome, Ok):
            return
        value = outcome.value
        if isinstance(op, spec.Create):
            self.shared.saw_created(op.task.id)
            self._snapshot(value)
        elif isinstance(op, spec.Authorize):
            self.shared.saw_access((op.action.kind, op.action.task_id, op.context.tenant or ""),
                                   value)
        elif isinstance(op, spec.Claim | spec.ClaimNext) and isinstance(value, spec.Claimed):
            task_id = self._snapshot(value.snapshot)
            if task_id is not None:
                self._hold(task_id, value.lease, now + op.lease_ms)
        elif isinstance(op, spec.Renew):
            task_id = next((t for t, ls in self.leases.items()
                            if any(x is op.lease for x in ls)), None)
            if task_id is not None:
                self._hold(task_id, value, now + op.lease_ms)
        elif isinstance(op, spec.Release):
            for task_id, ls in self.leases.items():
                if ls and ls[-1] is op.lease:
                    self.expires.pop(task_id, None)
                    self.shared.saw_claim(task_id, None)
        elif isinstance(op, spec.Reap) and isinstance(value, list):
            self.shared.saw_reaped(value)
        elif isinstance(value, spec.Transition):
            self._snapshot(value.snapshot)
        else:
            self._snapshot(value)

    def _hold(self, task_id: str, lease: Any, until: int) -> None:
        mine = self.leases.setdefault(task_id, [])
        mine.append(lease)
        del mine[:-HELD]
        self.expires[task_id] = until
        self.shared.saw_claim(task_id, until)
        self.shared.saw_time(until)

    def _snapshot(self, value: Any) -> str | None:
        """Learn the revision (and the retry and TTL times) a snapshot shows; its task id
        (None for anything that is no snapshot of the declared shape: a conflict's payload is
        the store's, unchecked)."""
        if not holds(spec.Snapshot, value):
            return None
        task = value.task
        task_id: str = task.id
        self.shared.saw_snapshot(value)
        self.shared.saw_time(value.retry_at)
        if task.ttl_ms is not None:
            self.shared.saw_time(task.created_at + task.ttl_ms)
        if task.status in spec.TERMINAL:
            self.expires.pop(task_id, None)
        return task_id


def _claimable(snap: spec.Snapshot, now: int) -> bool:
    return snap.task.status not in spec.TERMINAL and (snap.retry_at is None
                                                      or snap.retry_at <= now)


def workload(prefix: str) -> SnodoWorkload:
    """The snodo-tasks workload for one run (task ids start with ``prefix``)."""
    return SnodoWorkload(prefix)
