"""ledgence-tasks' concurrent workload: the workers of one queue racing for its tasks.

Every worker uses one scope and one queue (every name starts with the run's prefix). Each opens a
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
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Err, Ok, Outcome

from .calls import DESCRIPTOR, PROGRAM

IN_PLAY = 8
"""Tasks the workers read, cancel and target: the last ``IN_PLAY`` submitted."""

CONSUMERS = 2
ABANDON = 0.04
"""How often a worker about to renew or settle walks away from an attempt instead."""
POLICIES = (spec.RetryPolicy(3, 1), spec.RetryPolicy(2, 25), spec.RetryPolicy(4, 1500))
TIMEOUTS = (60_000, 90_000)
REPORTS = ("success", "success", "success", "app", "io", "io", "unavailable", "integrity")
WEIGHTS = {"submit": 10, "read": 3, "lookup": 0.7, "list": 0.3, "cancel": 0.4, "session": 1}
"""Calls any worker makes; the rest depend on what it holds (see ``LedgenceWorker._weights``)."""

SESSION, SUBMIT, ACQUIRE, DISPATCH = "session", "submit", "acquire", "dispatch"
"""The kinds of minting call; one is open at a time (see the module doc)."""

SCAN, SCAN_DUE = 0.01, 0.3
"""How often the first call at an instant is a recovery scan (see the module doc); the second
once a lease has ended since the last scan."""


@attrs.define
class Consumer:
    """What a worker knows of one of its consumers: its cursor and the attempt it holds."""

    seq: int = 0
    assignment: spec.Assignment | None = None
    expires_at: int = 0
    renewed: int = 0
    intent: str = spec.KEEP_ALIVE
    settlement: spec.SettleCommand | None = None
    claim: spec.ClaimCommand | None = None

    @property
    def owner(self) -> spec.LeaseOwner | None:
        return self.assignment.lease.owner if self.assignment is not None else None


class LedgenceWorkload:
    """The shared part of a run: the tasks and attempts seen, the keys handed out, which kind
    of minting call is open now, the boundaries seen."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.scope = spec.Scope(f"{prefix}tenant", "ns")
        self.other = spec.Scope(f"{prefix}intruder", "ns")
        self.queue = f"{prefix}q"
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
        return spec.TaskInput(self.scope, self.queue, PROGRAM,
                              None if n % 4 == 0 else f"{self.prefix}c{n % 3}",
                              {"n": float(n) if conflicting else n}, POLICIES[n % 3],
                              TIMEOUTS[n % 2])

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

    def waiting(self) -> int:
        """How many of the tasks in play were queued when last seen (a glance without the lock:
        it only steers the mix)."""
        return sum(self.states.get(t) == "queued" for t in self.tasks[-2 * IN_PLAY:])

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

    def dispatch_target(self, rng: random.Random) -> tuple[str, int] | None:
        """A task in play at its next generation (sometimes its current one). The lock is
        held."""
        if not self.tasks:
            return None
        queued = [t for t in self.tasks[-2 * IN_PLAY:] if self.states.get(t) == "queued"]
        task = rng.choice(queued if queued and rng.random() < 0.9 else self.tasks[-IN_PLAY:])
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


class LedgenceWorker:
    """One worker process: its session, its consumers, the settlements it made."""

    def __init__(self, shared: LedgenceWorkload, index: int) -> None:
        self.shared = shared
        self.name = f"{shared.prefix}w{index + 1}"
        self.session: spec.WorkerSession | None = None
        self.dead_session: str | None = None
        self.consumers: list[Consumer] = []
        self.settled: list[spec.SettleCommand] = []
        self.stale: list[spec.LeaseOwner] = []
        self.made = 0

    # -- choosing the next call ------------------------------------------------------------------

    def next_op(self, rng: random.Random, now: int) -> Op:
        """A call drawn by what this worker holds; one that cannot be made now (another kind
        of minting call is open, nothing is held) gives way to another draw."""
        makers: dict[str, Callable[[random.Random, int], Op | None]] = {
            "acquire": self._acquire, "probe": self._probe, "dispatch": self._dispatch,
            "renew": self._renew, "settle": self._settle, "confirm": self._confirm,
            "submit": self._submit, "lookup": self._lookup, "read": self._read,
            "cancel": self._cancel, "list": self._list, "session": self._session_op}
        scan = self.shared.instant(now, rng)
        if scan is not None:
            return spec.ExpireBatch(spec.MAX_RECOVERY_BATCH) if scan else self._quiet(rng, now)
        weights = self._weights(now)
        for _ in range(12):
            kind = rng.choices(list(weights), weights=list(weights.values()))[0]
            op = makers[kind](rng, now)
            if op is not None:
                return op
        return self._read(rng, now) or self._lookup(rng, now)

    def _weights(self, now: int) -> dict[str, float]:
        """How likely each kind of call is now: acquisitions by free consumers, owner calls
        for held attempts (a few of each either way: they must fail), a session first of
        all."""
        free = sum(c.assignment is None or now >= c.expires_at for c in self.consumers)
        held = len(self.consumers) - free
        waiting = any(c.settlement is not None for c in self.consumers)
        live = self._live_session(now) is not None
        return {**WEIGHTS,
                "session": WEIGHTS["session"] + (0 if live else 30),
                "acquire": 7 * free + 1, "probe": 1.5 * free + 0.5, "dispatch": 1.5 * free,
                "renew": 8 * held + 0.5, "settle": 3 * held + 0.5,
                "confirm": 4 if waiting else 0.3}

    def _live_session(self, now: int) -> spec.WorkerSession | None:
        s = self.session
        return s if s is not None and now < s.expires_at else None

    def _pick(self, rng: random.Random, now: int, free: bool) -> int:
        """A consumer: one whose attempt is over (``free``) or one holding a live attempt."""
        fits = [k for k, c in enumerate(self.consumers)
                if (c.assignment is None or now >= c.expires_at) == free]
        return rng.choice(fits) if fits else rng.randrange(len(self.consumers))

    def _odd_sequence(self, rng: random.Random, seq: int) -> int:
        """A sequence that cannot claim: the cursor's (a replay), an older one, one ahead."""
        return max(0, rng.choice((seq, seq, seq - 1, seq + 2)))

    def _command(self, rng: random.Random, now: int) -> spec.AcquireCommand | None:
        """An acquisition by one of the consumers: the next sequence only while acquisitions
        are open (they open when work is known to wait, for a few more consumers than it
        needs), now and then one that cannot claim."""
        if self._live_session(now) is None:
            return None
        k = self._pick(rng, now, free=rng.random() < 0.85)
        seq = self.consumers[k].seq
        shared = self.shared
        waiting = shared.waiting()
        joined = shared.take(now, ACQUIRE, lambda: waiting > 0 or rng.random() < 0.03 or None,
                             joiners=waiting + 2)
        if joined is None and rng.random() >= 0.04:
            return None
        odd = joined is None or rng.random() < 0.08
        return self._acquisition(k, self._odd_sequence(rng, seq) if odd else seq + 1)

    def _acquisition(self, k: int, seq: int) -> spec.AcquireCommand:
        assert self.session is not None
        return spec.AcquireCommand(self.shared.scope, self.shared.queue, self.session.id, k, seq)

    # -- acquisition -----------------------------------------------------------------------------

    def _acquire(self, rng: random.Random, now: int) -> Op | None:
        if self.session is not None and self._live_session(now) is None and rng.random() < 0.3:
            return spec.Acquire(self._acquisition(0, self.consumers[0].seq + 1))  # expired
        command = self._command(rng, now)
        return spec.Acquire(command) if command is not None else None

    def _probe(self, rng: random.Random, now: int) -> Op | None:
        command = self._command(rng, now)
        if command is None:
            return None
        passed = rng.random() < 0.15
        return spec.ProbeAcquisition(command, rng.random() < 0.5,
                                     now if passed else now + spec.CONTROL_REQUEST_TIMEOUT_MS)

    def _dispatch(self, rng: random.Random, now: int) -> Op | None:
        if self._live_session(now) is None:
            return None
        k = self._pick(rng, now, free=rng.random() < 0.85)
        c = self.consumers[k]
        if c.claim is not None and c.claim.acquisition.sequence == c.seq and rng.random() < 0.2:
            return spec.ClaimDispatch(c.claim)  # a receipt replay
        shared = self.shared
        target = shared.take(now, DISPATCH, lambda: shared.dispatch_target(rng)
                             if shared.waiting() or rng.random() < 0.05 else None, joiners=2)
        if target is None:
            return None
        task, generation = target
        return spec.ClaimDispatch(spec.ClaimCommand(
            self._acquisition(k, c.seq + 1),
            spec.DispatchRef(shared.scope, shared.queue, task, generation)))

    # -- owner calls -----------------------------------------------------------------------------

    def _held(self, rng: random.Random, now: int) -> Consumer | None:
        """A consumer holding an attempt (mostly a live one). Now and then the worker walks
        away from one instead (a dead owner): it expires with nobody renewing it."""
        held = [c for c in self.consumers if c.assignment is not None]
        live = [c for c in held if now < c.expires_at]
        if live and rng.random() < ABANDON:
            c = rng.choice(live)
            assert c.owner is not None
            self._drop(c.owner)
            live.remove(c)
            held.remove(c)
        if live and rng.random() < 0.9:
            return rng.choice(live)
        return rng.choice(held) if held else None

    def _forged(self, rng: random.Random, owner: spec.LeaseOwner) -> spec.LeaseOwner:
        if rng.random() < 0.5:
            return attrs.evolve(owner, generation=owner.generation + 1)
        return attrs.evolve(owner, lease_id=f"{self.name}-forged")

    def _renew(self, rng: random.Random, now: int) -> Op | None:
        c = self._held(rng, now)
        if c is None or c.owner is None:
            if not self.stale or rng.random() < 0.8:
                return None
            return spec.Renew(spec.RenewCommand(rng.choice(self.stale), 1, spec.KEEP_ALIVE))
        owner, roll = c.owner, rng.random()
        seq, intent = c.renewed + 1, spec.DISPATCH if rng.random() < 0.25 else spec.KEEP_ALIVE
        if roll < 0.12 and c.renewed:
            seq, intent = c.renewed, c.intent  # a replay
        elif roll < 0.16 and c.renewed:
            seq = c.renewed
            intent = spec.KEEP_ALIVE if c.intent == spec.DISPATCH else spec.DISPATCH
        elif roll < 0.22:
            seq = rng.choice((0, c.renewed + 2, max(0, c.renewed - 1)))
        elif roll < 0.28:
            owner = self._forged(rng, owner)
        return spec.Renew(spec.RenewCommand(owner, seq, intent))

    def _report(self, rng: random.Random, assignment: spec.Assignment
                ) -> spec.ExecutionReport | spec.ExecutionFailure:
        event, descriptor = assignment.event, assignment.descriptor
        context = spec.ExecutionContext(event.task_id, event.attempt_id, descriptor.program,
                                        descriptor.digest)
        kind = rng.choice(REPORTS)
        if kind == "success":
            return spec.ExecutionReport(context, self.name, False,
                                        {"status": "success", "output": {"n": event.attempt_no}},
                                        20)
        if kind == "app":
            return spec.ExecutionReport(context, self.name, True, {
                "status": "failure", "kind": "runtime", "message": "bounced"}, 20)
        return spec.ExecutionFailure(context, kind, f"{kind} failed", "execution", True)

    def _settle(self, rng: random.Random, now: int) -> Op | None:
        c = self._held(rng, now)
        if self.settled and rng.random() < (0.15 if c is None else 0.06):
            again = rng.choice(self.settled)
            if rng.random() < 0.3:
                again = attrs.evolve(again, operation_id=f"{again.operation_id}-other")
            return spec.Settle(again)
        if c is None or c.assignment is None or c.owner is None:
            return None
        if c.settlement is not None:
            return spec.Settle(c.settlement)
        owner = self._forged(rng, c.owner) if rng.random() < 0.05 else c.owner
        self.made += 1
        quiescence = spec.UNCONFIRMED if rng.random() < 0.2 and self.shared.touch(
            now, owner.task_id, "report") else spec.CONFIRMED
        return spec.Settle(spec.SettleCommand(owner, f"{self.name}-op{self.made}",
                                              self._report(rng, c.assignment), quiescence))

    def _confirm(self, rng: random.Random, now: int) -> Op | None:
        waiting = [c for c in self.consumers if c.settlement is not None and c.owner is not None]
        if waiting:
            owner = rng.choice(waiting).owner
            assert owner is not None
            return spec.ConfirmQuiescence(owner)
        c = self._held(rng, now)
        return spec.ConfirmQuiescence(c.owner) if c is not None and c.owner else None

    # -- submissions and reads -------------------------------------------------------------------

    def _submit(self, rng: random.Random, now: int) -> Op | None:
        shared = self.shared
        n: int | None = None
        if rng.random() < 0.4:
            n = shared.take(now, SUBMIT, lambda: shared.new_key(now), joiners=2)
        if n is None and rng.random() < 0.1:
            n = shared.old_key(rng, now)
        if n is None:
            return None
        return spec.AcceptResolvedSubmission(
            spec.SubmitCommand(shared.key(n), shared.task_input(n, rng.random() < 0.08)),
            DESCRIPTOR)

    def _lookup(self, rng: random.Random, now: int) -> Op:
        n = self.shared.old_key(rng, now)
        key = self.shared.key(n) if n is not None and rng.random() < 0.9 else f"{self.name}-no"
        return spec.LookupSubmission(self.shared.scope, key)

    def _task(self, rng: random.Random) -> str | None:
        tasks = self.shared.in_play()
        return rng.choice(tasks) if tasks else None

    def _read(self, rng: random.Random, now: int) -> Op | None:
        task = self._task(rng)
        if task is None:
            return None
        scope = self.shared.other if rng.random() < 0.05 else self.shared.scope
        roll = rng.random()  # the cheaper reads (for the checker) more often
        if roll < 0.12:
            attempts = self.shared.attempts_of(task)
            if attempts:
                return spec.InspectAttempt(scope, task, rng.choice(attempts))
        if roll < 0.3:
            return spec.History(scope, task, rng.choice((0, 1, 2, 3)))
        if roll < 0.42:
            return spec.Inspect(scope, task)
        return (spec.Status if roll < 0.75 else spec.Result)(scope, task)

    def _cancel(self, rng: random.Random, now: int) -> Op | None:
        """Mostly of a task seen active: cancels of queued tasks would starve the queue."""
        busy = self.shared.in_state("active")
        task = rng.choice(busy) if busy and rng.random() < 0.5 else self._task(rng)
        if task is None or not self.shared.touch(now, task, "cancel"):
            return None
        return spec.Cancel(self.shared.other if rng.random() < 0.1 else self.shared.scope, task)

    def _list(self, rng: random.Random, now: int) -> Op:
        roll = rng.random()
        if roll < 0.4:  # a short page of the busy tasks, with no cursor to bind
            query = spec.TaskListQuery(spec.TaskFilters(state="active"), 20)
        elif roll < 0.8:
            query = spec.TaskListQuery(spec.TaskFilters(state="queued"), 20)
        else:  # the newest task, and a cursor past it
            query = spec.TaskListQuery(spec.TaskFilters(queue=self.shared.queue), 1)
        return spec.ListTasks(self.shared.scope, query)

    def _quiet(self, rng: random.Random, now: int) -> Op:
        """A call that touches no task a recovery scan may look at (see the module doc): a
        submission of the new key, a session's, a lookup of a key never used, a malformed scan
        or session."""
        shared = self.shared
        if rng.random() < 0.4:
            n = shared.take(now, SUBMIT, lambda: shared.new_key(now), joiners=2)
            if n is not None:
                return spec.AcceptResolvedSubmission(
                    spec.SubmitCommand(shared.key(n), shared.task_input(n)), DESCRIPTOR)
        if self._live_session(now) is None and shared.take(now, SESSION) is not None:
            return spec.OpenSession(shared.scope, shared.queue, CONSUMERS)
        done = shared.in_state(*spec.TERMINAL_TASK_STATES)
        roll = rng.random()
        if roll < 0.45 and done:  # a finished task is nobody's candidate
            task = rng.choice(done)
            read = rng.choice((spec.Status, spec.Result, spec.Inspect, spec.Cancel))
            return spec.History(shared.scope, task, 0) if roll < 0.1 else read(shared.scope, task)
        if roll < 0.7 and self.session is not None:
            return spec.ExtendSession(self.session.id)
        if roll < 0.8:
            return spec.LookupSubmission(shared.scope, f"{self.name}-no")
        if roll < 0.87:
            return spec.ExpireBatch(rng.choice((0, -1, spec.MAX_RECOVERY_BATCH + 1)))
        if roll < 0.94:
            return spec.OpenSession(shared.scope, shared.queue, rng.choice((0, -1)))
        return spec.ExtendSession(self.dead_session or f"{self.name}-never")

    def _session_op(self, rng: random.Random, now: int) -> Op | None:
        live = self._live_session(now)
        if live is None:
            if self.shared.take(now, SESSION) is None:
                return None
            return spec.OpenSession(self.shared.scope, self.shared.queue, CONSUMERS)
        roll = rng.random()
        if roll < 0.15:
            return spec.OpenSession(self.shared.scope, self.shared.queue, 0)
        if roll < 0.3:
            return spec.ExtendSession(self.dead_session or f"{self.name}-never")
        return spec.ExtendSession(live.id)

    # -- learning from answers -------------------------------------------------------------------

    def saw(self, op: Op, outcome: Outcome, now: int) -> None:
        if isinstance(outcome, Ok):
            self.shared.learn(outcome.value, now)
        elif isinstance(outcome, Err) and outcome.code in ("session_expired",
                                                           "unknown_session"):
            self._session_lost(op)
        if isinstance(op, spec.OpenSession) and isinstance(outcome, Ok):
            self._drop_all()
            self.session = outcome.value
            self.shared.session_opened(outcome.value, now)
            self.consumers = [Consumer() for _ in range(op.concurrency)]
        elif isinstance(op, spec.ExtendSession) and isinstance(outcome, Ok):
            self.session = outcome.value
        elif isinstance(op, spec.Acquire | spec.ProbeAcquisition):
            self._saw_acquisition(op.command, outcome, now)
        elif isinstance(op, spec.ClaimDispatch):
            self._saw_claim(op.command, outcome, now)
        elif isinstance(op, spec.Renew):
            self._saw_renew(op.command, outcome)
        elif isinstance(op, spec.Settle):
            self._saw_settle(op.command, outcome)
        elif isinstance(op, spec.ConfirmQuiescence) and (
                isinstance(outcome, Ok) or outcome.code == "ownership_lost"):
            self._drop(op.owner)
            if isinstance(outcome, Ok):
                self.shared.saw_state(op.owner.task_id, outcome.value)
                self.shared.lease(op.owner.attempt_id, None)
        elif isinstance(op, spec.Cancel) and isinstance(outcome, Ok):
            self.shared.saw_state(op.task_id, outcome.value)

    def _session_lost(self, op: Op) -> None:
        if self.session is not None and not isinstance(op, spec.ExtendSession | spec.OpenSession):
            self.dead_session = self.session.id
            self.session = None

    def _consumer(self, command: spec.AcquireCommand) -> Consumer | None:
        if self.session is None or command.worker_session_id != self.session.id:
            return None
        return self.consumers[command.consumer_id]

    def _moved(self, c: Consumer, seq: int, assignment: spec.Assignment | None, now: int) -> None:
        """The cursor moved to ``seq``: the consumer holds ``assignment`` (None: nothing)."""
        if seq <= c.seq:
            if assignment is not None and c.assignment is not None:
                c.expires_at = assignment.lease.expires_at  # a replay: its current lease
            return
        if c.owner is not None:
            self._keep_stale(c.owner)
        c.seq, c.assignment, c.renewed, c.settlement = seq, assignment, 0, None
        c.intent = spec.KEEP_ALIVE
        c.expires_at = assignment.lease.expires_at if assignment is not None else now

    def _saw_acquisition(self, command: spec.AcquireCommand, outcome: Outcome,
                         now: int) -> None:
        c = self._consumer(command)
        if c is None or not isinstance(outcome, Ok):
            return
        reply = outcome.value
        if isinstance(reply, spec.ProbeCompleted):
            reply = reply.reply
        if isinstance(reply, spec.AcquireAssigned):
            self._moved(c, reply.sequence, reply.assignment, now)
        elif isinstance(reply, spec.AcquireEmpty | spec.AcquireOwnershipLost):
            self._moved(c, reply.sequence, None, now)

    def _saw_claim(self, command: spec.ClaimCommand, outcome: Outcome, now: int) -> None:
        c = self._consumer(command.acquisition)
        if c is None or not isinstance(outcome, Ok):
            return
        disposition = outcome.value.disposition
        reply = getattr(disposition, "reply", None)
        seq = command.acquisition.sequence
        if seq > c.seq:
            c.claim = command
        self._moved(c, seq, reply.assignment if isinstance(reply, spec.AcquireAssigned)
                    else None, now)

    def _holder(self, owner: spec.LeaseOwner) -> Consumer | None:
        return next((c for c in self.consumers if c.owner == owner), None)

    def _saw_renew(self, command: spec.RenewCommand, outcome: Outcome) -> None:
        c = self._holder(command.owner)
        if c is None:
            return
        if isinstance(outcome, Ok) and command.sequence > c.renewed:
            c.renewed, c.intent = command.sequence, command.intent
            c.expires_at = outcome.value.expires_at
            self.shared.lease(command.owner.attempt_id, c.expires_at)
        elif isinstance(outcome, Err) and outcome.code == "ownership_lost":
            self._drop(command.owner)

    def _saw_settle(self, command: spec.SettleCommand, outcome: Outcome) -> None:
        if isinstance(outcome, Ok):
            self.shared.saw_state(command.owner.task_id, outcome.value.task_state)
        if isinstance(outcome, Ok) and not outcome.value.already_accepted:
            self.settled = [*self.settled[-5:], command]
            c = self._holder(command.owner)
            if c is not None and command.quiescence == spec.UNCONFIRMED:
                c.settlement = command
            else:
                self._drop(command.owner)
                self.shared.lease(command.owner.attempt_id, None)
        elif isinstance(outcome, Err) and outcome.code == "ownership_lost":
            self._drop(command.owner)

    def _drop(self, owner: spec.LeaseOwner) -> None:
        c = self._holder(owner)
        if c is not None:
            self._keep_stale(owner)
            c.assignment, c.settlement = None, None

    def _drop_all(self) -> None:
        for c in self.consumers:
            if c.owner is not None:
                self._drop(c.owner)

    def _keep_stale(self, owner: spec.LeaseOwner) -> None:
        self.stale = [*self.stale[-5:], owner]


def workload(prefix: str) -> LedgenceWorkload:
    """The ledgence-tasks workload for one run (every name starts with ``prefix``)."""
    return LedgenceWorkload(prefix)
