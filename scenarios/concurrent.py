"""Concurrent runs: N workers hammer one store at once, and the history is checked afterwards.

Each worker is a thread with a connection of its own (a store opened from the factory for each
worker when the store is ``durable``: the SQL stores of one factory share an engine, and each call
checks out its own connection; one shared store otherwise). Workers draw contract-aware operations
from a :class:`Workload` (each contract has one, in ``scenarios/<contract>/workload.py``), learn
from the answers (ids minted, leases won) and record every call as an
:class:`~fencepost.model.history.Event`.

**Time.** The store's time is the simulated clock. It is frozen while a *burst* runs (every
worker makes one to three calls, all released together by a barrier) and moved between bursts,
so every call knows its store time exactly (``Event.at``). The moves land on the boundaries the
workload names (a lease's end, a retry's due time, a session's expiry), one ms before them or
exactly on them, or jump a random distance: a run crosses every kind of boundary many times.

**The check.** The history is checked for linearizability against the contract's model
(:func:`~fencepost.model.linearizability.check_history`): partitioned by record where the
contract allows it, and cut at the end of every burst, where the store is quiescent. A call
that never returned (a worker stuck past the timeout), answered ``backend_unavailable`` or lost
its connection is *faulted* (:mod:`fencepost.model.answers`): the checker lets it take effect
or not, but it is not an answer. A history with more faulted calls than the run allows
(``max_faulted``, a share of its calls) is not checked: it is no evidence either way.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from fencepost.model.answers import Answers, answers_of
from fencepost.model.history import Event, History
from fencepost.model.linearizability import Verdict, check_history
from fencepost.spec.errors import told
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome
from fencepost.spec.shapes import well_formed

from .evidence import CONCURRENT
from .guard import RunStopped
from .harness import AdapterFault, World
from .profiles import MAX_FAULTED
from .races import SWITCH_INTERVAL_S
from .said import Progress, Said, quiet

BURST_MAX = 3
"""Calls per worker in one burst (each worker makes 1 to ``BURST_MAX``)."""



class Worker(Protocol):
    """One worker's view of the run: what to call next, and what it learned from an answer."""

    def next_op(self, rng: random.Random, now: int) -> Op:
        """The next call, with the real values the store gave (ids, leases) filled in."""
        ...

    def saw(self, op: Op, outcome: Outcome, now: int) -> None:
        """Learn from the store's answer to ``op`` (made at store time ``now``)."""
        ...


class Workload(Protocol):
    """A contract's random concurrent work for one run (shared by its workers, thread-safe).
    ``answers``: what each protocol method answers (:func:`~fencepost.spec.shapes.
    answer_hints`); a worker sees only answers of that shape (any other is the model's to
    judge, never the workload's to read)."""

    answers: Mapping[str, Any]

    def worker(self, index: int) -> Worker:
        """The worker ``index`` (0-based) of the run."""
        ...

    def boundaries(self) -> Sequence[int]:
        """Store times (ms) worth landing on exactly: leases' ends, retries' due times, session
        expiries... as far as the answers so far show them."""
        ...


WorkloadFactory = Callable[[str], Workload]
"""``workload(prefix)``: a workload whose ids and names all start with ``prefix``."""


@attrs.frozen
class ConcurrentRun:
    """What a concurrent run did: its history, how its calls ended (``answers``), the verdict
    on it, and how long each part took. ``verdict`` is None when more calls faulted than the
    run allows (``answers.exceeded``): such a history is not checked. A call that does not
    return within the run's call timeout stops the run
    (:class:`~fencepost.scenarios.guard.CallTimedOut`): no verdict comes of a stuck history."""

    history: History
    verdict: Verdict | None
    bursts: int
    run_s: float
    check_s: float
    answers: Answers


def run_concurrent(
    world: World,
    workload: Workload,
    *,
    threads: int,
    ops: int,
    seed: int,
    partition: Callable[[Op], Hashable | None] | None = None,
    budget_s: float = 60.0,
    max_faulted: float = MAX_FAULTED,
    progress: Progress = quiet,
) -> ConcurrentRun:
    """Run ``threads`` workers for at least ``ops`` calls in bursts on ``world``'s store, then
    check the history unless more than the share ``max_faulted`` of its calls faulted (see the
    module doc)."""
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    rng = random.Random(seed)
    guard = world.guard
    store = world.open()
    durable = "durable" in world.capabilities
    stores = [store] + [_open_another(world) if durable else store
                        for _ in range(threads - 1)]
    workers = [workload.worker(k) for k in range(threads)]
    rngs = [random.Random(rng.getrandbits(64)) for _ in range(threads)]
    plan = [0] * threads  # calls each worker makes in the current burst
    recorded: list[list[Event]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads + 1)
    stop = threading.Event()
    broken: list[BaseException] = []
    burst = _Burst(threads)

    def work(k: int) -> None:
        process = f"w{k + 1}"
        while True:
            try:
                start.wait()
            except threading.BrokenBarrierError:
                return
            if stop.is_set():
                return
            now = world.clock.now()
            try:
                for _ in range(plan[k]):
                    op = workers[k].next_op(rngs[k], now)
                    invoked = time.monotonic_ns()
                    recorded[k].append(Event(process, op, invoked, None, None, now))
                    outcome = guard.call(stores[k], op)
                    recorded[k][-1] = Event(process, op, invoked, time.monotonic_ns(), outcome,
                                            now)
                    if well_formed(workload.answers, op, outcome):
                        workers[k].saw(op, outcome, now)
            except RunStopped:
                return
            except BaseException as e:  # a bug in the workload, not the store: stop the run
                broken.append(e)
                burst.fail()
                return
            burst.finished()

    pool = [threading.Thread(target=work, args=(k,), daemon=True, name=f"fencepost-w{k + 1}")
            for k in range(threads)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    started = time.perf_counter()
    bursts = 0
    made = 0
    try:
        for t in pool:
            t.start()
        while made < ops:
            for k in range(threads):
                plan[k] = rng.randint(1, BURST_MAX)
            done = burst.begin()
            try:
                start.wait(guard.timeout_s)
            except threading.BrokenBarrierError:
                raise RuntimeError("the concurrent workers did not start a burst") from None
            guard.await_done(done)
            if broken:
                raise RuntimeError(f"the {world.model.name} workload failed") from broken[0]
            bursts += 1
            made = sum(len(r) for r in recorded)
            if bursts % 25 == 0:
                progress(Said(CONCURRENT, f"concurrent: {made}/{ops} calls by {threads} "
                              f"worker{'s' if threads > 1 else ''}, {bursts} bursts"))
            _move_clock(world, workload, rng)
        stop.set()
        start.abort()
        deadline = time.monotonic() + guard.timeout_s
        for t in pool:
            t.join(max(0.0, deadline - time.monotonic()))
    finally:
        stop.set()
        start.abort()
        sys.setswitchinterval(switch)
        for extra in stores[1:]:
            if extra is not store:
                close = getattr(extra, "close", None)
                if close is not None and not guard.abandoned:
                    try:
                        guard.run("store.close", close, cleanup=True)
                    except Exception as e:  # noqa: BLE001 - the adapter's fault, noted
                        world.evidence.faults.append(
                            f"a worker's store.close raised {type(e).__name__}: {told(e)}")
    run_s = time.perf_counter() - started
    return concluded(world, [e for r in recorded for e in r], bursts=bursts, run_s=run_s,
                     partition=partition, budget_s=budget_s, max_faulted=max_faulted,
                     progress=progress)


def concluded(world: World, events: Sequence[Event], *, bursts: int, run_s: float,
              partition: Callable[[Op], Hashable | None] | None, budget_s: float,
              max_faulted: float, progress: Progress = quiet) -> ConcurrentRun:
    """The run that recorded ``events`` on ``world`` (in ``bursts``, in ``run_s`` seconds): its
    history in order of invocation, checked for linearizability within ``budget_s`` unless more
    than the share ``max_faulted`` of its calls faulted."""
    history = History(world.model.name, tuple(sorted(events, key=lambda e: e.invoked)),
                      world.options, world.capabilities)
    answers = answers_of(history.events, max_faulted)
    if answers.exceeded:
        progress(Said(CONCURRENT, f"concurrent: {answers.describe()}: too many faulted to check"))
        return ConcurrentRun(history, None, bursts, run_s, 0.0, answers)
    progress(Said(CONCURRENT, f"concurrent: checking {answers.describe()} for linearizability"))
    t0 = time.perf_counter()
    verdict = check_history(world.model, history, partition, budget_s, clock=time.perf_counter,
                            options=world.options, capabilities=world.capabilities)
    return ConcurrentRun(history, verdict, bursts, run_s, time.perf_counter() - t0, answers)


class _Burst:
    """The end of one burst: set once every worker has made its calls."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._left = 0
        self._lock = threading.Lock()
        self._done = threading.Event()

    def begin(self) -> threading.Event:
        with self._lock:
            self._left = self.workers
            self._done = threading.Event()
            return self._done

    def finished(self) -> None:
        with self._lock:
            self._left -= 1
            if self._left == 0:
                self._done.set()

    def fail(self) -> None:
        self._done.set()


def _open_another(world: World) -> Any:
    """One more store from the factory (a connection of its own for a worker)."""
    try:
        return world.guard.run("the adapter factory", world.factory, world.env)
    except Exception as e:  # noqa: BLE001 - the adapter's fault, said as such
        raise AdapterFault(f"the adapter factory raised {type(e).__name__}: {told(e)}",
                           ()) from e


def _move_clock(world: World, workload: Workload, rng: random.Random) -> None:
    """Between bursts: onto a boundary ahead (or 1 ms before it), else a random step. Every
    move draws the same from ``rng`` whatever the boundaries are (they come from the answers,
    so from thread timing): the bursts a seed plans do not depend on the interleaving."""
    now = world.clock.now()
    ahead = sorted({b for b in workload.boundaries() if b > now})
    roll, pick, early = rng.random(), rng.randrange(3), rng.random() < 0.3
    small, large = rng.choice((0, 1, 2, 5)), rng.randint(1, 60)
    if ahead and roll < 0.2:
        target = ahead[:3][pick % len(ahead[:3])]
        world.clock.set(target - 1 if early and target - 1 > now else target)
    elif roll < 0.85:
        world.clock.advance(small)
    else:
        world.clock.advance(large)
