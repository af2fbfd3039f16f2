"""ledgence-tasks' concurrent workload: the workers of two queues racing for their tasks.

Every worker uses one scope (every name starts with the run's prefix) and one of two queues:
one worker in four :data:`spec.ROUTED_QUEUE`, which a store with targeted dispatch routes (its
tasks are claimed, acquisition there is refused), the others the run's plain queue; every
fourth key's task is submitted to the routed queue. Acquisitions and claims of one queue take turns
with the other's (each is a kind of minting call of its own, below). Each opens a
session of two consumers; submits tasks (racing the others on one idempotency key, now and then
with a conflicting input, or replaying an old key); acquires with a consumer's next sequence
(sometimes the same, an old or a future one, sometimes through ``probe_acquisition``) or claims
one task by targeted dispatch at the generation it last saw; renews and settles what it holds
(successes, retryable and final failures, unconfirmed reports it confirms later, re-sends,
replayed and conflicting renewals, stale and forged owners), and now and then walks away from
an attempt (a dead owner: its lease runs out); cancels, reads, lists, extends its session.

**New names take turns.** The model names what a store mints by one counter (``task#7``,
``attempt#8``), so two calls that both mint and commute (two submissions of different keys, a
submission and a claim) fit a burst in both orders with their names swapped: two model states,
both carried into the next burst, and the search doubles with every such burst. So at each
store instant one kind of minting call is open (one session opening, the submissions of one
key, acquisitions, the dispatch claims of one task) and the answers order the calls of that
kind: one submission of a key mints, the others replay it; claims take the queue's tasks in its
order (no two tasks tie: each has its own submitted_at, and retries wait at least 1 ms, so
nothing becomes claimable inside a burst); one dispatch claim wins, the others find the task
handed off. For the same reason a task is not cancelled at an instant when its owner reports
without confirmed quiescence (both answer alike in either order, but its history differs).

**Recovery scans run alone.** The stores shortlist expired attempts without locks, then expire
each in a transaction of its own, passing over a task another transaction holds (PostgreSQL's
SKIP LOCKED, and a read holds the row there too): a scan racing a cancel, another scan or any
call on that task answers more examined than expired. LDG-RECOVER-005's race allows that
(``expired <= examined``); the model, which steps a scan as one atomic call, does not. So a
scan opens an instant of its own (most often after a lease has ended), and the other calls
there touch no task a scan may look at: the new key's submissions, session calls, reads and
cancels of finished tasks, lookups of keys never used, malformed calls.

The boundaries are every lease end, attempt deadline, authority deadline and retry time the
answers show, and the expiry of every session opened.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.shapes import answer_hints

from .calls import PROGRAM
from .worker import LedgenceWorker

IN_PLAY = 8
"""Tasks the workers read, cancel and target: the last ``IN_PLAY`` submitted."""

POLICIES = (spec.RetryPolicy(3, 1), spec.RetryPolicy(2, 25), spec.RetryPolicy(4, 1500))
TIMEOUTS = (60_000, 90_000)

SCAN, SCAN_DUE = 0.01, 0.3
"""How often the first call at an instant is a recovery scan (see the module doc); the second
once a lease has ended since the last scan."""


class LedgenceWorkload:
    """The shared part of a run: the tasks and attempts seen, the keys handed out, which kind
    of minting call is open now, the boundaries seen."""

    answers = answer_hints(spec)

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.scope = spec.Scope(f"{prefix}tenant", "ns")
        self.other = spec.Scope(f"{prefix}intruder", "ns")
        self.queue = f"{prefix}q"
        self.routed_queue = spec.ROUTED_QUEUE  # of this run's own scope
        self.routed = False  # an acquisition there answered external_dispatch_required
        self.queues: dict[str, str] = {}  # task -> its queue
        self.lock = threading.Lock()
        self.keys: list[int] = []  # keys[n - 1]: the store time key n was handed out
        self.tasks: list[str] = []
        self.counts: dict[str, int] = {}  # task -> the latest attempt_count seen
        self.states: dict[str, str] = {}  # task -> the state seen last
        self.attempts: dict[str, list[str]] = {}
        self.slot: tuple[int, str, Any, list[int]] | None = None
        self.touched: tuple[int, dict[str, str]] = (0, {})
        self.scans: tuple[int, bool, int] = (-1, False, -1)  # the instant, a scan's?, last scan
        self.leases: dict[str, int] = {}  # attempt -> its lease end, while it may be active
        self.ends: list[int] = []

    def task_input(self, n: int, conflicting: bool = False) -> spec.TaskInput:
        """Key ``n``'s input (the same for every worker); ``conflicting``: 1.0 for 1."""
        return spec.TaskInput(self.scope, self.queue_of(n), PROGRAM,
                              None if n % 4 == 0 else f"{self.prefix}c{n % 3}",
                              {"n": float(n) if conflicting else n}, POLICIES[n % 3],
                              TIMEOUTS[n % 2])

    def queue_of(self, n: int) -> str:
        """Key ``n``'s queue: every fourth key the routed one."""
        return self.routed_queue if n % 4 == 3 else self.queue

    def key(self, n: int) -> str:
        return f"{self.prefix}k{n}"

    def take(self, now: int, kind: str, propose: Callable[[], Any] = lambda: True,
             joiners: int = 0) -> Any:
        """Join the minting call open at ``now`` (its value: a key, a dispatch target), or open
        one of ``kind`` that up to ``joiners`` more calls may join; None when another kind is
        open, nobody may join any more, or ``propose`` has nothing."""
        with self.lock:
            if self.slot is None or self.slot[0] != now:
                value = propose()
                if value is not None:
                    self.slot = (now, kind, value, [joiners])
                return value
            _, open_kind, value, left = self.slot
            if open_kind != kind or left[0] <= 0:
                return None
            left[0] -= 1
            return value

    def touch(self, now: int, task: str, kind: str) -> bool:
        """May a call of ``kind`` change ``task`` at ``now``? Not when a call of another kind
        did (a cancel and an unconfirmed report of one task answer alike in either order, but
        leave its history in two orders)."""
        with self.lock:
            at, kinds = self.touched
            if at != now:
                kinds = {}
                self.touched = (now, kinds)
            return kinds.setdefault(task, kind) == kind

    def instant(self, now: int, rng: random.Random) -> bool | None:
        """Is ``now`` a recovery scan's instant? The first call at an instant decides (a scan,
        likely when a lease has ended since the last one): True for that scan, False for the
        calls that follow it there, None at an instant of ordinary work."""
        with self.lock:
            if self.scans[0] != now:
                due = any(self.scans[2] < at <= now for at in self.leases.values())
                scan = rng.random() < (SCAN_DUE if due else SCAN)
                self.scans = (now, scan, now if scan else self.scans[2])
                return True if scan else None
            return False if self.scans[1] else None

    def new_key(self, now: int) -> int:
        """Hand out the next key (the lock is held)."""
        self.keys.append(now)
        return len(self.keys)

    def old_key(self, rng: random.Random, now: int) -> int | None:
        """A key handed out before ``now`` (bound by then), recent ones first."""
        with self.lock:
            done = [n for n in range(max(1, len(self.keys) - 12), len(self.keys) + 1)
                    if self.keys[n - 1] < now]
        return rng.choice(done) if done else None

    def waiting(self, queue: str) -> int:
        """How many of the tasks in play of ``queue`` were queued when last seen (a glance
        without the lock: it only steers the mix)."""
        return sum(self.states.get(t) == "queued" and self.queues.get(t) == queue
                   for t in self.tasks[-2 * IN_PLAY:])

    def saw_state(self, task: str, state: Any) -> None:
        """A call answered ``task``'s state."""
        if isinstance(state, str):
            with self.lock:
                self._state(task, state)

    def _state(self, task: str, state: str) -> None:
        """Answers are learned in any order, but a finished task stays finished."""
        if self.states.get(task) not in spec.TERMINAL_TASK_STATES:
            self.states[task] = state

    def in_state(self, *states: str) -> list[str]:
        """The tasks in play last seen in one of ``states``."""
        with self.lock:
            return [t for t in self.tasks[-2 * IN_PLAY:] if self.states.get(t) in states]

    def in_play(self) -> list[str]:
        with self.lock:
            return self.tasks[-IN_PLAY:]

    def attempts_of(self, task: str) -> list[str]:
        with self.lock:
            return list(self.attempts.get(task, ()))

    def dispatch_target(self, rng: random.Random, queue: str) -> tuple[str, int] | None:
        """A task of ``queue`` in play at its next generation (sometimes its current one). The
        lock is held."""
        mine = [t for t in self.tasks[-2 * IN_PLAY:] if self.queues.get(t) == queue]
        if not mine:
            return None
        queued = [t for t in mine if self.states.get(t) == "queued"]
        task = rng.choice(queued if queued and rng.random() < 0.9 else mine[-IN_PLAY:])
        count = self.counts.get(task, 0)
        return task, count if count and rng.random() < 0.2 else count + 1

    def learn(self, value: Any, now: int) -> None:
        """Tasks, attempts, attempt counts and boundaries from an answer."""
        with self.lock:
            self._learn(value, now)
            del self.ends[:-128]

    def _learn(self, value: Any, now: int) -> None:
        if isinstance(value, tuple | list):
            for item in value:
                self._learn(item, now)
            return
        if not attrs.has(type(value)) or isinstance(value, spec.TaskInput | spec.Scope):
            return
        if isinstance(value, spec.TaskSnapshot | spec.TaskStatus):
            if value.task_id not in self.counts:
                self.tasks.append(value.task_id)
            self.queues[value.task_id] = (value.queue if isinstance(value, spec.TaskStatus)
                                          else value.input.queue)
            self.counts[value.task_id] = max(self.counts.get(value.task_id, 0),
                                             value.attempt_count)
            self._state(value.task_id, value.state)
            self._time(value.available_at, now)
            return
        if isinstance(value, spec.Assignment):
            event = value.event
            self.counts[event.task_id] = max(self.counts.get(event.task_id, 0), event.attempt_no)
            self._state(event.task_id, "active")
            seen = self.attempts.setdefault(event.task_id, [])
            if event.attempt_id not in seen:
                seen.append(event.attempt_id)
            for at in (value.lease.expires_at, value.attempt_deadline,
                       value.attempt_deadline + spec.CLEANUP_GRACE_MS):
                self._time(at, now)
            self.leases[event.attempt_id] = value.lease.expires_at
            return
        if isinstance(value, spec.AttemptSnapshot):
            for at in (value.lease.expires_at, value.deadline, value.authority_deadline):
                self._time(at, now)
            if value.state == "active":
                self.leases[value.event.attempt_id] = value.lease.expires_at
            else:
                self.leases.pop(value.event.attempt_id, None)
            return
        if isinstance(value, spec.Authority):
            self._time(value.expires_at, now)
            return
        if isinstance(value, spec.WorkerSession):
            return  # an opening's expiry is a boundary (not every extension's: see saw)
        if isinstance(value, spec.ClaimDeferred):
            self._time(value.available_at, now)
            return
        for field in attrs.fields(type(value)):
            self._learn(getattr(value, field.name), now)

    def session_opened(self, session: spec.WorkerSession, now: int) -> None:
        with self.lock:
            self._time(session.expires_at, now)

    def lease(self, attempt: str, expires_at: int | None) -> None:
        """An attempt's lease now ends at ``expires_at`` (None: the attempt is over)."""
        with self.lock:
            if expires_at is None:
                self.leases.pop(attempt, None)
            elif attempt in self.leases:
                self.leases[attempt] = expires_at

    def _time(self, at: int, now: int) -> None:
        if at > now and at not in self.ends[-16:]:
            self.ends.append(at)

    def worker(self, index: int) -> LedgenceWorker:
        return LedgenceWorker(self, index)

    def boundaries(self) -> Sequence[int]:
        with self.lock:
            return tuple(self.ends)


def workload(prefix: str) -> LedgenceWorkload:
    """The ledgence-tasks workload for one run (every name starts with ``prefix``)."""
    return LedgenceWorkload(prefix)
