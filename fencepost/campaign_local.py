"""A campaign's seeds on this machine: ``--jobs N`` worker processes, each checking one seed
at a time, the results handed over as they finish.

A worker is forked from the campaign's process where that is safe
(:func:`~fencepost.pool.start_context`): it starts with the kit loaded, where a fresh
interpreter (``spawn``) spends about a third of a second on 2 vCPUs importing it, as long as a
seed's check at profile quick takes. What a fork would share is made private in the worker (see
:mod:`fencepost.pool`), and the signals are the worker's own (:func:`_worker_started`).

A store under test can end the process running it (``os._exit``, a crash in native code, the
out-of-memory killer), which breaks the whole pool: every seed in flight fails with it. Those
seeds are then suspects and run again one at a time, each alone in a fresh pool; one that
breaks it alone is lost (reported, not saved, run again by the next resume); the others go on.

Stopping (Ctrl-C, SIGTERM, a configuration error from a seed): the seeds not yet started are
cancelled, each worker is sent SIGTERM (a seed's check then drops its data, as ``check`` does
when interrupted) and killed if it has not ended within the supervisor's grace. A worker also
gets SIGTERM when the campaign's process dies, so none outlives it.
"""

from __future__ import annotations

import os
import signal
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .campaign import Runner, SeedResult, SeedTask, run_seed
from .pool import Cores, start_context

LOST = ("its worker process ended abruptly twice, the second time checking it alone (a store "
        "that ends the process: os._exit, a crash in native code, the out-of-memory killer)")

_running = False
"""In a worker: is a seed being checked (a signal then stops the check, else the worker)."""


def local_runner(jobs: int) -> Runner:
    """A runner of seeds on ``jobs`` local processes."""
    return lambda tasks, arrived: run_local(tasks, jobs, arrived)


def run_local(tasks: Sequence[SeedTask], jobs: int,
              arrived: Callable[[SeedResult], None]) -> None:
    """Check ``tasks`` on ``jobs`` processes, ``arrived(result)`` as each finishes (in this
    thread; an exception it raises stops the run)."""
    pending = deque(tasks)
    running: dict[Future[SeedResult], SeedTask] = {}
    suspects: set[int] = set()
    pool: ProcessPoolExecutor | None = None
    try:
        while pending or running:
            if pool is None:
                pool = _pool(min(jobs, len(pending)))
            _fill(pool, pending, running, suspects, jobs)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            if any(isinstance(f.exception(), BrokenProcessPool) for f in done):
                wait(running)  # every seed in flight ends with the pool
                _broken(running, pending, suspects, arrived)
                pool.shutdown(wait=True)
                pool = None
                continue
            for future in done:
                arrived(_result(future, running.pop(future)))
    finally:
        if pool is not None:
            _stop(pool)


def _pool(workers: int) -> ProcessPoolExecutor:
    context = start_context()
    return ProcessPoolExecutor(max_workers=max(1, workers), mp_context=context,
                               initializer=_worker_started, initargs=(Cores(workers, context),))


def _fill(pool: ProcessPoolExecutor, pending: deque[SeedTask],
          running: dict[Future[SeedResult], SeedTask], suspects: set[int], jobs: int) -> None:
    """Start seeds until ``jobs`` run; a suspect only alone, and nothing beside it."""
    while pending and len(running) < jobs:
        if any(t.seed in suspects for t in running.values()):
            return
        if pending[0].seed in suspects and running:
            return
        task = pending.popleft()
        running[pool.submit(_checked, task)] = task


def _broken(running: dict[Future[SeedResult], SeedTask], pending: deque[SeedTask],
            suspects: set[int], arrived: Callable[[SeedResult], None]) -> None:
    """The pool broke: keep what finished, make the others suspects (run next, alone), and
    give up on a suspect that broke it alone."""
    again = []
    for future, task in list(running.items()):
        del running[future]
        if not isinstance(future.exception(), BrokenProcessPool):
            arrived(_result(future, task))
        elif task.seed in suspects:
            arrived(SeedResult(task.seed, lost=LOST))
        else:
            suspects.add(task.seed)
            again.append(task)
    pending.extendleft(reversed(again))


def _result(future: Future[SeedResult], task: SeedTask) -> SeedResult:
    from fencepost.scenarios.interrupt import Interrupted

    error = future.exception()
    if error is None:
        return future.result()
    if isinstance(error, Interrupted):
        return SeedResult(task.seed, interrupted=error.signum)
    return SeedResult(task.seed, error=f"{type(error).__name__}: {error}")


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started, SIGTERM each worker, kill those still alive after the
    grace."""
    from .supervisor import CHILD_GRACE_S

    # ProcessPoolExecutor has no public way to stop running work before Python 3.14
    # (terminate_workers); its processes are reached through the private attribute.
    workers: list[Any] = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        if process.is_alive():
            process.terminate()
    for process in workers:
        process.join(CHILD_GRACE_S)
        if process.is_alive():
            process.kill()
            process.join()


def _worker_started(cores: Cores) -> None:
    """In each worker, first: die with the campaign's process; a signal stops the seed being
    checked (its data dropped, as ``check`` does) or, idle, ends the worker quietly; then a
    core of its own (:class:`~fencepost.pool.Cores`)."""
    from .supervisor import die_with_parent

    die_with_parent()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _on_signal)
    cores.take()  # after its signals: a SIGTERM may come at once


def _on_signal(signum: int, _frame: Any) -> None:
    if not _running:
        os._exit(128 + signum)
    from fencepost.scenarios.interrupt import Interrupted

    raise Interrupted(signum)


def _checked(task: SeedTask) -> SeedResult:
    """:func:`run_seed` in a worker, marked as running for the signal handler. A seed stopped
    by a signal has dropped its data: the worker then ends, as the campaign is stopping (it
    would otherwise take the next seed queued for it)."""
    global _running
    _running = True
    try:
        result = run_seed(task)
    finally:
        _running = False
    if result.interrupted:
        os._exit(128 + result.interrupted)
    return result
