"""The calls one worker of the ledgence-tasks workload makes: drawn by what it holds (see
:mod:`.worker_state`), within the rules of :mod:`.workload` (one kind of minting call open at a
store instant, recovery scans alone).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.ops import Op

from .calls import DESCRIPTOR
from .worker_state import Consumer, WorkerState

CONSUMERS = 2
ABANDON = 0.04
"""How often a worker about to renew or settle walks away from an attempt instead."""
REPORTS = ("success", "success", "success", "app", "io", "io", "unavailable", "integrity")
WEIGHTS = {"submit": 10, "read": 3, "lookup": 0.7, "list": 0.3, "cancel": 0.4, "session": 1}
"""Calls any worker makes; the rest depend on what it holds (see ``LedgenceWorker._weights``)."""

SESSION, SUBMIT, ACQUIRE, DISPATCH = "session", "submit", "acquire", "dispatch"
"""The kinds of minting call; one is open at a time (see :mod:`.workload`)."""


class LedgenceWorker(WorkerState):
    """One worker process: the next call, drawn by what it holds."""

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
        routed = self.shared.routed  # the store routes its queue: claims, not acquisitions
        claims = routed and self.queue == self.shared.routed_queue
        return {**WEIGHTS,
                "session": WEIGHTS["session"] + (0 if live else 30),
                "acquire": 0.5 if claims else 7 * free + 1,
                "probe": 0.3 if claims else 1.5 * free + 0.5,
                "dispatch": 7 * free + 1 if claims else 0.3 if routed else 1.5 * free,
                "renew": 8 * held + 0.5, "settle": 3 * held + 0.5,
                "confirm": 4 if waiting else 0.3}

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
        waiting = shared.waiting(self.queue)
        joined = shared.take(now, f"{ACQUIRE}:{self.queue}",
                             lambda: waiting > 0 or rng.random() < 0.03 or None,
                             joiners=waiting + 2)
        if joined is None and rng.random() >= 0.04:
            return None
        odd = joined is None or rng.random() < 0.08
        return self._acquisition(k, self._odd_sequence(rng, seq) if odd else seq + 1)

    def _acquisition(self, k: int, seq: int) -> spec.AcquireCommand:
        assert self.session is not None
        return spec.AcquireCommand(self.shared.scope, self.queue, self.session.id, k, seq)

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
        target = shared.take(now, f"{DISPATCH}:{self.queue}",
                             lambda: shared.dispatch_target(rng, self.queue)
                             if shared.waiting(self.queue) or rng.random() < 0.05 else None,
                             joiners=2)
        if target is None:
            return None
        task, generation = target
        return spec.ClaimDispatch(spec.ClaimCommand(
            self._acquisition(k, c.seq + 1),
            spec.DispatchRef(shared.scope, self.queue, task, generation)))

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
            query = spec.TaskListQuery(spec.TaskFilters(queue=self.queue), 1)
        return spec.ListTasks(self.shared.scope, query)

    def _quiet(self, rng: random.Random, now: int) -> Op:
        """A call that touches no task a recovery scan may look at (see :mod:`.workload`): a
        submission of the new key, a session's, a lookup of a key never used, a malformed scan
        or session."""
        shared = self.shared
        if rng.random() < 0.4:
            n = shared.take(now, SUBMIT, lambda: shared.new_key(now), joiners=2)
            if n is not None:
                return spec.AcceptResolvedSubmission(
                    spec.SubmitCommand(shared.key(n), shared.task_input(n)), DESCRIPTOR)
        if self._live_session(now) is None and shared.take(now, SESSION) is not None:
            return spec.OpenSession(shared.scope, self.queue, CONSUMERS)
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
            return spec.OpenSession(shared.scope, self.queue, rng.choice((0, -1)))
        return spec.ExtendSession(self.dead_session or f"{self.name}-never")

    def _session_op(self, rng: random.Random, now: int) -> Op | None:
        live = self._live_session(now)
        if live is None:
            if self.shared.take(now, SESSION) is None:
                return None
            return spec.OpenSession(self.shared.scope, self.queue, CONSUMERS)
        roll = rng.random()
        if roll < 0.15:
            return spec.OpenSession(self.shared.scope, self.queue, 0)
        if roll < 0.3:
            return spec.ExtendSession(self.dead_session or f"{self.name}-never")
        return spec.ExtendSession(live.id)
