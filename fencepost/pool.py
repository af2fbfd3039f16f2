"""The processes of a ``--jobs`` run and of a local campaign: how they start.

On Linux a pool's processes are forked from the process that starts them, when that is safe
(:func:`start_context`): they start with the kit loaded, in a few hundredths of a second. A
fresh interpreter (``spawn``, elsewhere, or beside a thread of the caller's) must load the kit
first: about a third of a second on 2 vCPUs. What a fork would share is made the process's own:
every SQL engine drops its pool of connections without closing them (``adapters/sql.py``), the
supervisor's status pipe is dropped (:mod:`fencepost.supervisor`), the progress heartbeats
stay with the parent (:mod:`fencepost.progress`), and each pool sets its processes' signals in
its initializer. Any other file the caller holds open stays open in the processes until the
pool ends.

Where the run's processes are spawned, ``fencepost check`` starts them first
(:func:`start_early`), and they load the kit while the command loads its own (loading the kit
and the contract, checking the flags, opening the adapter); :func:`fencepost.parallel.run_parts`
takes that pool (:func:`take_early`) instead of starting one. A command that ends before its
run (a configuration error) shuts the pool down (:func:`stop_early`). Where they are forked,
nothing starts early: a fork once the command has loaded costs less. This module is light on
purpose: it is loaded before the rest.

Example::

    start_early(jobs)
    try:
        ...  # fencepost.check(..., jobs=jobs) takes the pool
    finally:
        stop_early()
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import connection
from typing import Any

JOBS_ENV = "FENCEPOST_JOBS"

POOL_EXIT_S = 10.0
"""How long a pool process may take to exit once the pool is shut down (a store that left a
thread running would keep it alive) before it is killed."""

EARLY_PROCESSES = 4
"""At most this many processes are started early (a run has 6 or 7 parts at ``quick``; on a
machine with more cores the rest start when the run hands out its parts)."""


def default_jobs() -> int:
    """``FENCEPOST_JOBS`` when set to a whole number of 1 or more, else the machine's cores."""
    text = os.environ.get(JOBS_ENV, "")
    if text.strip().isdigit() and int(text) >= 1:
        return int(text)
    return os.cpu_count() or 1


FORK_ENV = "FENCEPOST_FORK"


def forks() -> bool:
    """Are a pool's processes forked here when nothing else runs? On Linux, unless
    ``FENCEPOST_FORK=0`` (an adapter module that opens a connection when it is imported would
    share it with the forked processes: spawned, each opens its own). Elsewhere system
    libraries are not fork-safe (macOS), or there is no fork."""
    return sys.platform.startswith("linux") and os.environ.get(FORK_ENV, "1") != "0"


def start_context() -> Any:
    """How a pool's processes start: ``fork`` where :func:`forks` and no thread runs beside
    the caller's but the kit's progress heartbeats (:func:`~fencepost.progress.quiet_at_fork`),
    else ``spawn``: a thread of the caller's could hold a lock across the fork that the process
    then waits on for ever."""
    from .progress import quiet_at_fork

    if forks() and quiet_at_fork():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


PIN_ENV = "FENCEPOST_PIN"


def own_cores(processes: int) -> tuple[int, ...]:
    """A CPU for each of ``processes`` to run on alone (see :class:`Cores`) when they are as
    many as the CPUs this process may run on; else none: pinned to the first few CPUs, the
    pools of several runs side by side (pytest's workers, a CI matrix on one host) would all
    share those few while the others idled. None either off Linux or with
    ``FENCEPOST_PIN=0``."""
    if os.environ.get(PIN_ENV, "1") == "0" or not hasattr(os, "sched_getaffinity"):
        return ()
    mine = sorted(os.sched_getaffinity(0))
    return tuple(mine) if processes == len(mine) else ()


def pin_to(cpu: int) -> None:
    """Run this process's threads, and those they start, on ``cpu`` alone (if the CPU was
    taken away meanwhile: anywhere)."""
    try:
        threads = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for thread in threads:
        try:
            os.sched_setaffinity(thread, {cpu})
        except OSError:
            pass


class Cores:
    """A core of its own for each process of a pool, taken in turn as they start (Linux, and
    only when the pool has one process for each CPU this process may run on: see
    :func:`own_cores`; ``FENCEPOST_PIN=0`` turns it off). A process whose threads stay on
    one core hands the interpreter's lock from thread to thread there; free to move, two
    such processes on two cores wait for each other's core at each hand-over, and the races,
    whose threads switch every few microseconds, took 1.3 to 1.9 times as long beside another
    process on 2 vCPUs (pinned: no longer than alone)."""

    def __init__(self, processes: int, context: Any) -> None:
        self.cpus = own_cores(processes)
        self.taken = context.Value("i", 0)

    def take(self) -> None:
        """In a pool process, first: run on the next core (nothing when there are none)."""
        if not self.cpus:
            return
        with self.taken.get_lock():
            k = self.taken.value
            self.taken.value = k + 1
        pin_to(self.cpus[k % len(self.cpus)])


class PartsPool:
    """A pool of up to ``jobs`` processes for one run's parts (started as ``context`` says,
    by default spawned), with the queue they say progress on and the count of the run's parts
    taken so far (shared by them). Forked processes start at the pool's first task."""

    def __init__(self, jobs: int, context: Any = None) -> None:
        ctx = context if context is not None else multiprocessing.get_context("spawn")
        self.jobs = jobs
        self.lines = ctx.Queue()
        self.taken = ctx.Value("i", 0)
        self.executor = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx,
                                            initializer=_started, initargs=(
                                                self.lines, self.taken, Cores(jobs, ctx)))

    def processes(self) -> list[Any]:
        """The pool's processes started so far."""
        return list((getattr(self.executor, "_processes", None) or {}).values())

    def shut_down(self, timeout_s: float) -> None:
        """Shut the pool down, waiting for its processes at most until ``timeout_s`` from now;
        kill those still alive then, saying how many (their parts were over: their data
        dropped). A process's end is seen on its sentinel, not by reaping it: the pool's own
        thread reaps."""
        processes = [p for p in self.processes() if p.pid is not None]
        manager = getattr(self.executor, "_executor_manager_thread", None)  # shutdown drops it
        self.executor.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + timeout_s
        pending = {p.sentinel: p for p in processes}
        while pending and (left := deadline - time.monotonic()) > 0:
            for ended in connection.wait(list(pending), left):
                pending.pop(ended, None)
        for process in pending.values():
            process.kill()
        if manager is not None:  # once it has ended, the pool's own queues can be freed
            manager.join(timeout_s)
        if pending:
            from .ending import say

            say(f"fencepost: warning: {len(pending)} --jobs process(es) had not exited "
                f"{timeout_s:g} s after their part (the store left a thread running?); killed")


def _started(lines: Any, taken: Any, cores: Cores) -> None:
    """The initializer of each pool process (see :func:`fencepost.parallel.start_process`)."""
    from .parallel import start_process

    start_process(lines, taken)  # its signals first: a SIGTERM may come at once
    cores.take()


def _loaded() -> None:
    """The first task of a process started early: load what a part needs."""
    from . import adapter_spec, parallel, registry  # noqa: F401 - loaded for the parts to come


_early: PartsPool | None = None


def start_early(jobs: int) -> None:
    """With ``jobs`` > 1, where the run's processes would be spawned (not :func:`forks`),
    start the pool of the run to come now (at most :data:`EARLY_PROCESSES` of its processes),
    each loading the kit."""
    global _early
    if jobs > 1 and _early is None and not forks():
        pool = PartsPool(jobs)
        for _ in range(min(jobs, EARLY_PROCESSES)):
            pool.executor.submit(_loaded)
        _early = pool


def take_early(jobs: int) -> PartsPool | None:
    """The pool :func:`start_early` started for ``jobs`` processes, now the caller's to shut
    down; None if there is none (or it is for another count, then shut down)."""
    global _early
    pool, _early = _early, None
    if pool is not None and pool.jobs != jobs:
        pool.shut_down(POOL_EXIT_S)
        return None
    return pool


def stop_early() -> None:
    """Shut down the pool :func:`start_early` started, if no run took it."""
    global _early
    pool, _early = _early, None
    if pool is not None:
        pool.shut_down(POOL_EXIT_S)
