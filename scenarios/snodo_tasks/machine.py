"""The snodo-tasks state machine: two tenants, workers holding leases, a moving clock.

Each example runs on a store of its own (reap and capacity see the whole store). Accesses of
every action, for the home tenant and a foreign one, are authorized up front; workers keep every
lease they were ever given (so old generations get replayed); events reuse ids on purpose; now
and then a call carries an argument at its edge (:data:`EDGES`), in whatever state the tasks
are. Each step is one integer Hypothesis draws, read through the table :data:`PICKS`
(:mod:`..one_draw`: the rule and its arguments, with stated weights). Every answer and the task
behind it are compared with the model after every step.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import Forged, Ref
from fencepost.spec.outcome import Ok

from ..one_draw import OneDrawMachine, Pick

TASKS = 3
TENANTS = ("t1", "t2")
WORKERS = ("w0", "w1", "w2")
LEASES = (5, 20, 60)
TTLS = (None, None, 40, 150)
POLICIES: tuple[tuple[int, ...], ...] = ((), (10,), (3, 25), (3, 25), (0, 10))
# The access a request presents: its own (g/u/x/c), the foreign tenant's, another task's, forged.
ACCESS = ("g", "u", "x", "c", "foreign", "other_task", "forged")
KINDS = ("input_requested", "retry_requested", "completed", "failed",
         "input_responses_accepted", "cancelled")
# One argument at its edge (the SNODO-ARG clauses): 0, negative, a float, a bool, the empty string.
EDGES = ("claim_ms", "claim_owner", "claim_next_ms", "renew_ms", "revision",
         "bare_lease", "event_id", "input_key", "read_empty", "create_ttl")
EDGE_COUNTS = (0, -1, 1.5, True)
BOOLEANS = (False, True)

_I = ("i", tuple(range(TASKS)))
_PICK = ("pick", tuple(range(51)))
_WORKER = ("worker", WORKERS)
_LEASE_MS = ("lease_ms", LEASES)
PICKS = (
    Pick("get", 10, (_I, ("which", ACCESS))),
    Pick("create", 5, (_I, ("ttl", TTLS), ("policy", POLICIES),
                       ("which", ("c", "c", "c", "g", "other_task", "forged")))),
    Pick("claim", 10, (_I, _WORKER, _LEASE_MS)),
    Pick("claim_next", 8, (_WORKER, _LEASE_MS)),
    Pick("renew", 8, (_PICK, _LEASE_MS)),
    Pick("release", 5, (_PICK,)),
    Pick("worker_snapshot", 5, (_I, _PICK)),
    Pick("worker_event", 14, (_I, _PICK, ("kind", KINDS), ("stale", BOOLEANS),
                              ("reuse", BOOLEANS), ("own", BOOLEANS))),
    Pick("request_event", 9, (_I, ("which", ACCESS), _PICK, ("cancel", BOOLEANS),
                              ("stale", BOOLEANS), ("reuse", BOOLEANS))),
    Pick("advance_to_boundary", 5, (_I, ("what", ("lease", "retry", "ttl")),
                                    ("before", BOOLEANS))),
    Pick("reap", 4),
    Pick("edge", 8, (_I, _PICK, ("which", EDGES), ("ms", EDGE_COUNTS))),
    Pick("reopen", 2, needs="durable"),
    Pick("advance", 7, (("ms", (1, 2, 5, 13, 40)),)),
)
"""What a step may do and how often (percent of the steps; reopen only where the store can be
reopened): a read first, the step every shrunk step tends to; a clock move last, where
the engine's largest constants land."""


class TasksMachine(OneDrawMachine):
    """Tenants and workers over a few tasks, each example on a store of its own."""

    picks = PICKS
    own_store = True

    def __init__(self) -> None:
        super().__init__()
        self.leases: list[tuple[str, str]] = []  # (lease name, task id) in issue order
        self.events: dict[str, list[spec.Event]] = {}
        self.counter = 0

    # -- helpers ----------------------------------------------------------------------------

    def tid(self, i: int) -> str:
        return f"{self.prefix}-k{i}"

    def home(self, i: int) -> str:
        return TENANTS[i % 2]

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def access(self, i: int, which: str) -> Any:
        if which == "forged":
            return Forged("access")
        if which == "foreign":
            return Ref(f"f:{i}")
        if which == "other_task":
            return Ref(f"g:{(i + 1) % TASKS}")
        return Ref(f"{which}:{i}")

    def lease(self, pick: int) -> Any:
        if not self.leases:
            return Forged("lease")
        return Ref(self.leases[pick % len(self.leases)][0])

    def revision(self, i: int, stale: bool) -> int:
        agg = self.h.state.get(self.tid(i))
        rev = agg.snapshot.revision if agg is not None else 0
        return max(rev - 1, 0) if stale and rev else rev + (1 if stale else 0)

    def event(self, i: int, kind: str, pick: int, reuse: bool) -> spec.Event:
        seen = self.events.setdefault(self.tid(i), [])
        if reuse and seen:
            old = seen[pick % len(seen)]
            if pick % 3 == 0:  # same id, different content: event_id_reused
                return spec.Event(old.id, kind, self.data(kind, pick + 1))
            return old
        ev = spec.Event(self.fresh("e"), kind, self.data(kind, pick))
        seen.append(ev)
        return ev

    @staticmethod
    def data(kind: str, pick: int) -> dict[str, Any]:
        key = f"q{pick % 2}"
        if kind == "input_requested":
            return {"key": key, "request": {"method": "elicitation/create", "n": pick % 2}}
        if kind == "input_responses_accepted":
            return {"responses": {key: {"answer": pick}}}
        if kind in ("retry_requested", "failed"):
            return {"error": {"code": -1, "message": "boom"}, "statusMessage": f"try {pick % 2}"}
        if kind == "completed":
            return {"result": {"value": pick % 2}}
        return {}

    # -- rules ------------------------------------------------------------------------------

    @initialize(ttls=st.lists(st.sampled_from(TTLS), min_size=TASKS, max_size=TASKS),
                policies=st.lists(st.sampled_from(POLICIES), min_size=TASKS, max_size=TASKS))
    def start(self, ttls: list[int | None], policies: list[tuple[int, ...]]) -> None:
        """Accesses for every action of every task (home tenant and foreign; obs = get), then
        every task created, so most rules meet a task."""
        self.authorize_everything()
        for i in range(TASKS):
            self.create(i, ttls[i], policies[i], "c")


    def authorize_everything(self) -> None:
        for i in range(TASKS):
            tid, home, other = self.tid(i), self.home(i), TENANTS[(i + 1) % 2]
            for kind, name in (("get", "g"), ("update", "u"), ("cancel", "x"), ("create", "c")):
                bind = f"{name}:{i}"
                self.h.apply("client", spec.Authorize(spec.Context(home), spec.Action(kind, tid)),
                             bind=bind)
            self.h.alias(f"obs:{tid}", f"g:{i}")
            self.h.apply("intruder", spec.Authorize(spec.Context(other),
                                                    spec.Action("cancel", tid)), bind=f"f:{i}")

    def create(self, i: int, ttl: int | None, policy: tuple[int, ...], which: str) -> None:
        now = self.h.now
        task = spec.Task(self.tid(i), spec.WORKING, None, now, now, ttl, 250, {}, None, None)
        work = spec.Work(self.fresh("idem"), "job", {"n": i}, policy)
        access = Ref(f"c:{(i + 1) % TASKS}") if which == "other_task" else self.access(i, which)
        self.h.apply("client", spec.Create(task, work, access))

    def get(self, i: int, which: str) -> None:
        self.h.apply("client", spec.Get(self.tid(i), self.access(i, which)))

    def claim(self, i: int, worker: str, lease_ms: int) -> None:
        name = self.fresh("L")
        out = self.h.apply(worker, spec.Claim(self.tid(i), worker, lease_ms), bind=name)
        if isinstance(out, Ok):
            self.leases.append((name, self.tid(i)))

    def claim_next(self, worker: str, lease_ms: int) -> None:
        name = self.fresh("L")
        out = self.h.apply(worker, spec.ClaimNext(worker, lease_ms), bind=name)
        if isinstance(out, Ok) and out.value is not None:
            self.leases.append((name, out.value.snapshot.task.id))

    def renew(self, pick: int, lease_ms: int) -> None:
        name = self.fresh("L")
        lease = self.lease(pick)
        out = self.h.apply("worker", spec.Renew(lease, lease_ms), bind=name)
        if isinstance(out, Ok) and isinstance(lease, Ref):
            task = next(t for n, t in self.leases if n == lease.name)
            self.leases.append((name, task))

    def release(self, pick: int) -> None:
        self.h.apply("worker", spec.Release(self.lease(pick)))

    def worker_snapshot(self, i: int, pick: int) -> None:
        self.h.apply("worker", spec.WorkerSnapshot(self.tid(i), self.lease(pick)))

    def worker_event(self, i: int, pick: int, kind: str, stale: bool, reuse: bool,
                     own: bool) -> None:
        """A worker event, usually with the task's own latest lease."""
        lease = self.lease(pick)
        if own:
            mine = [n for n, t in self.leases if t == self.tid(i)]
            lease = Ref(mine[-1]) if mine else lease
        op = spec.TransitionOp(self.tid(i), self.revision(i, stale), self.event(i, kind, pick,
                               reuse), spec.WorkerAuthority(lease))
        self.h.apply("worker", op)

    def request_event(self, i: int, which: str, pick: int, cancel: bool, stale: bool,
                      reuse: bool) -> None:
        kind = "cancelled" if cancel else "input_responses_accepted"
        op = spec.TransitionOp(self.tid(i), self.revision(i, stale),
                               self.event(i, kind, pick, reuse),
                               spec.RequestAuthority(self.access(i, which)))
        self.h.apply("client", op)

    def edge(self, i: int, pick: int, which: str, ms: Any) -> None:
        """A call with one argument at its edge, sent to a task in whatever state it is."""
        tid, lease = self.tid(i), self.lease(pick)
        h = self.h
        if which == "claim_ms":
            h.apply("w0", spec.Claim(tid, "w0", ms))
        elif which == "claim_owner":
            h.apply("w0", spec.Claim(tid, "", 20))
        elif which == "claim_next_ms":
            h.apply("w0", spec.ClaimNext("w0", ms))
        elif which == "renew_ms":
            h.apply("worker", spec.Renew(lease, ms))
        elif which == "read_empty":
            h.apply("client", spec.Get("", Ref(f"g:{i}")))
        elif which == "create_ttl":
            self.create(i, ms if ms is not True else 0, (), "c")
        else:
            self.edge_event(i, which, lease, ms)

    def edge_event(self, i: int, which: str, lease: Any, ms: Any) -> None:
        rev: Any = self.revision(i, stale=False)
        ev = spec.Event(self.fresh("e"), "completed", {"result": {}})
        authority: Any = spec.WorkerAuthority(lease)
        if which == "revision":
            rev = -1 if ms in (0, -1) else (True if rev == 1 else float(rev))
        elif which == "bare_lease":
            authority = lease
        elif which == "event_id":
            ev = spec.Event("", "completed", {"result": {}})
        else:
            ev = spec.Event(self.fresh("e"), "input_requested",
                            {"key": "", "request": {"method": "elicitation/create"}})
        self.h.apply("worker", spec.TransitionOp(self.tid(i), rev, ev, authority))

    def reap(self) -> None:
        self.h.apply("reaper", spec.Reap())

    def advance(self, ms: int) -> None:
        self.h.advance(ms)

    def advance_to_boundary(self, i: int, what: str, before: bool) -> None:
        """Move the clock to exactly a claim expiry, retry_at or TTL expiry (or 1 ms before)."""
        agg = self.h.state.get(self.tid(i))
        if agg is None:
            return
        task = agg.snapshot.task
        target = {
            "lease": agg.claim.expires_at if agg.claim is not None else None,
            "retry": agg.snapshot.retry_at,
            "ttl": task.created_at + task.ttl_ms if task.ttl_ms is not None else None,
        }[what]
        if target is not None:  # a time with a us part is reached at its next whole ms
            due = math.ceil(target) - (1 if before else 0)
            if due > self.h.now:
                self.h.set_time(due)

    def reopen(self) -> None:
        # Skipped when it would tell nothing (the step stays drawn, so shrinking keeps the
        # codes after a deleted step as they were).
        if self.h.reopen_would_tell():
            self.h.reopen()


machine_for = TasksMachine.bound_to
