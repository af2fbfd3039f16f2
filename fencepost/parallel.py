"""``--jobs N``: the independent parts of one run in parallel processes.

A run is made of parts (:func:`~fencepost.scenarios.kinds.parts_of`: the scripted scenarios
and fault cases, the state machine, each race, the concurrent run), each on a store namespace of
its own under a clock of its own, so a part finds the same things wherever it runs. With
``jobs`` > 1 the parts run in a pool of processes, each taking the next part left as soon as it
is free. A process resolves the adapter spec once and runs every part it takes on that factory,
closing it after its last (an ``exec:`` store's program is started once per process, as in a
run in one process, not once per part), unless a part was stopped: the next then starts on a
new one. The parts' results are merged in the run's order, never in the order they finish: a
seed's verdicts and counterexamples are the same at any ``jobs``. The command's own process
runs no part: whatever ends it, even ``kill -9``, the pool's processes drop their data.

Progress lines come back from the processes on a queue (each names its check). Ctrl-C
(or a signal the command turns into :class:`Interrupted`) reaches the processes as SIGTERM:
each stops its part, drops its data and returns what it found, which is merged and raised as
the run's :class:`Interrupted`.

Example::

    result = run_parts("adk-ledger", "sqlite", jobs=2, profile=PROFILES["quick"], seed=7,
                       options={})
"""

from __future__ import annotations

import os
import queue
import select
import signal
import threading
import time
from collections.abc import Collection, Mapping
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from fencepost.scenarios.evidence import merged
from fencepost.scenarios.guard import DEFAULT_CALL_TIMEOUT_S, Guard
from fencepost.scenarios.interrupt import Interrupted
from fencepost.scenarios.kinds import parts_of
from fencepost.scenarios.profiles import Profile
from fencepost.scenarios.runner import RunResult, close_factory_into, run_suite
from fencepost.scenarios.said import Progress, Said

from .ending import EndedAbruptly, say
from .errors import ConfigurationError
from .pool import JOBS_ENV, POOL_EXIT_S, PartsPool, default_jobs, start_context, take_early

__all__ = ["JOBS_ENV", "default_jobs", "run_parts", "start_process"]

_progress_queue: Any = None
_running = threading.Event()
_told = threading.Event()
_idle = threading.Event()
_idle.set()
_stopping = threading.Event()


_taken: Any = None
"""In a pool process: how many of the run's parts have been taken (shared by the pool)."""


def start_process(progress_queue: Any, taken: Any) -> None:
    """In each pool process: Ctrl-C is the parent's to handle; SIGTERM stops the parts it is
    taking (the one running drops its data and returns what it found, the factory is closed),
    or ends a process that is taking none."""
    from .supervisor import die_with_parent

    global _progress_queue, _taken
    _progress_queue, _taken = progress_queue, taken
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)  # a forked process had the command's handler

    def stop(signum: int, _frame: Any) -> None:
        if _told.is_set():
            return  # stopping already: a second SIGTERM must not break the part's clean-up
        _told.set()
        _stopping.set()
        if not _running.is_set():
            os._exit(128 + signum)
        raise Interrupted(signum)

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=_orphaned, args=(os.getppid(),), daemon=True,
                     name="fencepost-orphaned").start()


ORPHAN_GRACE_S = 30.0
"""How long a pool process whose parent died may take to drop its part's data."""


def _orphaned(parent: int) -> None:
    """In a pool process: once the process that started it is gone (killed: nobody will read
    its results), end this one, after the part running, if any, dropped its data (it was told
    by SIGTERM, die_with_parent). Waits on the parent's pidfd where there is one."""
    try:
        fd = os.pidfd_open(parent)
    except (OSError, AttributeError):
        fd = -1
    if fd >= 0:
        select.select([fd], [], [])
    else:
        while os.getppid() == parent:
            time.sleep(0.5)  # no pidfd: look again
    os.kill(os.getpid(), signal.SIGTERM)  # stop the part, as die_with_parent's signal does
    _idle.wait(ORPHAN_GRACE_S)  # set by the part's own thread once its data is dropped
    os._exit(128 + signal.SIGTERM)


Done = tuple[int, str, Any]
"""How a part ended: its index, then ``"ok"`` and its result, ``"interrupted"`` and its partial
result, ``"config"`` and the message of its ConfigurationError, or ``"skipped"`` and ``""``
(the run was stopped before it had a result)."""


def _take(taken: Any, count: int) -> int | None:
    """The next part nobody has taken (now taken), or None when none is left."""
    with taken.get_lock():
        k = int(taken.value)
        if k >= count:
            return None
        taken.value = k + 1
        return k


def _stop_taking(taken: Any, count: int) -> None:
    """No process takes another part (the run is stopping)."""
    with taken.get_lock():
        taken.value = count


def _run_parts_here(contract_name: str, adapter: str, count: int, kwargs: Mapping[str, Any],
                    example_db: str | None) -> list[Done]:
    """In a pool process: take the next part left and run it, until none is left or the run
    stops, on one factory (a new one after a part that was stopped); close it at the end."""
    from .adapter_spec import resolve_adapter
    from .example_db import example_database
    from .registry import contract_named

    q = _progress_queue

    def progress(said: Said) -> None:
        if q is not None:
            q.put(said)

    suite = contract_named(contract_name).suite
    done: list[Done] = []
    factory: Any = None
    last: RunResult | None = None  # the last part run on ``factory``
    _running.set()  # from here a SIGTERM stops the loop (the factory open between parts too)
    _idle.clear()
    try:
        while not _stopping.is_set() and (k := _take(_taken, count)) is not None:
            try:
                if factory is None:
                    factory, _ = resolve_adapter(contract_name, adapter)
                database = example_database(example_db) if example_db is not None else None
            except ConfigurationError as e:
                done.append((k, "config", str(e)))
                break
            try:
                result = run_suite(suite, factory, parts=(k,), progress=progress,
                                   example_db=database, keep_open=True, **kwargs)
            except ConfigurationError as e:
                done.append((k, "config", str(e)))
                factory = None  # closed by the run
            except Interrupted as stop:
                done.append((k, "interrupted", stop.result) if stop.result is not None
                            else (k, "skipped", ""))
                factory = None
            else:
                done.append((k, "ok", result))
                if result.evidence.stopped:
                    factory = None  # closed by the run, or left behind with a call stuck in it
                else:
                    last = result
            finally:
                _name_left_threads()
            if done[-1][1] != "ok":
                break
    except Interrupted:  # between two parts: the run stops here
        pass
    finally:
        if _stopping.is_set() or (done and done[-1][1] != "ok"):
            _stop_taking(_taken, count)  # no process takes another part
        try:
            if factory is not None and last is not None:
                close_factory_into(factory, last.evidence, Guard(kwargs["call_timeout_s"]))
        finally:
            _running.clear()
            _idle.set()
    return done


_named: set[str] = set()


def _name_left_threads() -> None:
    """In a pool process, after a part: say which threads the store left running (once
    each); the process is killed at the end of the run if they keep it alive."""
    from .supervisor import left_running

    new = [t.name for t in left_running() if t.name not in _named]
    if new:
        _named.update(new)
        say(f"fencepost: warning: the store left {len(new)} thread(s) running in a --jobs "
            f"process ({', '.join(repr(n[:80]) for n in new[:5])})")


def run_parts(
    contract_name: str,
    adapter: str,
    *,
    jobs: int,
    profile: Profile,
    seed: int,
    options: Mapping[str, str],
    progress: Progress = lambda _: None,
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    example_db: str | None = None,
    require: Collection[str] = (),
) -> RunResult:
    """Every part of a run of ``adapter`` (a spec, resolved in each process) on up to ``jobs``
    processes; the merged result. Raises ConfigurationError as a run in this process would,
    and :class:`Interrupted` (holding the merged partial result) on Ctrl-C."""
    started = time.perf_counter()
    kwargs = {"profile": profile, "seed": seed, "options": dict(options),
              "call_timeout_s": call_timeout_s, "require": frozenset(require)}
    from .registry import contract_named

    count = len(parts_of(contract_named(contract_name).suite, profile))
    parts_pool = take_early(jobs) or PartsPool(min(jobs, count), start_context())
    pool, taken, lines = parts_pool.executor, parts_pool.taken, parts_pool.lines
    done = threading.Event()
    last: list[str] = []  # the last progress line (the phase a part that ends abruptly was in)

    def told(said: Said) -> None:
        last[:] = [str(said)]
        progress(said)

    relay = threading.Thread(target=_relay, args=(lines, told, done), daemon=True,
                             name="fencepost-progress")
    try:
        # forked processes start at the first task: before the relay's thread starts
        futures = [pool.submit(_run_parts_here, contract_name, adapter, count, kwargs, example_db)
                   for _ in range(min(jobs, count))]
        relay.start()
        processes = parts_pool.processes()
        try:
            wait(futures)
        except KeyboardInterrupt as stop:
            signum = getattr(stop, "signum", signal.SIGINT)
            _stop_taking(taken, count)
            _stop_processes(pool)
            wait(futures)
            partial = _merge([f for f in futures if not f.cancelled()], started,
                             interrupted=True)
            raise Interrupted(signum, partial) from None
        if any(isinstance(f.exception(), BrokenProcessPool) for f in futures):
            parts_pool.shut_down(POOL_EXIT_S)  # the pool's thread reaps them: their exit codes
            raise EndedAbruptly(_how(processes), last[0] if last else "a --jobs part")
        return _merge(futures, started, interrupted=False)
    finally:
        parts_pool.shut_down(POOL_EXIT_S)
        lines.close()
        done.set()
        if relay.is_alive():
            relay.join(timeout=2)


EXIT_CODE_WAIT_S = 2.0
"""How long :func:`_how` waits for the exit codes of processes that have ended."""


def exit_codes(processes: list[Any], timeout_s: float = EXIT_CODE_WAIT_S) -> list[int | None]:
    """Each process's exit code, waiting for it until ``timeout_s`` from now (None: not known
    by then). A process's end is seen on its sentinel before it can be reaped: its
    ``exitcode`` (a ``waitpid`` that does not wait) can still be None then, and the pool's own
    thread may reap it meanwhile; ``join`` waits for the one or the other."""
    deadline = time.monotonic() + timeout_s
    codes = []
    for process in processes:
        while process.exitcode is None and (left := deadline - time.monotonic()) > 0:
            process.join(min(left, 0.05))
        codes.append(process.exitcode)
    return codes


def _how(processes: list[Any]) -> str:
    """How the process of ``processes`` that ended abruptly ended, in words (not the SIGTERM
    the pool then sends the others)."""
    codes = [code for code in exit_codes(processes) if code]
    # the pool's SIGTERM ends the others: killed by it, or (the kit's handler) exit 128 + 15
    codes.sort(key=lambda code: code in (-signal.SIGTERM, 128 + signal.SIGTERM))
    if not codes:
        return "(a --jobs process) ended"
    if codes[0] < 0:
        return f"(a --jobs process) was killed by {signal.Signals(-codes[0]).name}"
    return f"(a --jobs process) exited with status {codes[0]}"


def _relay(lines: Any, progress: Progress, done: threading.Event) -> None:
    while not done.is_set():
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        except (EOFError, OSError):
            return
        progress(line)


def _stop_processes(pool: ProcessPoolExecutor) -> None:
    """SIGTERM to every process of ``pool``: each stops its part and drops its data."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.pid is not None and process.is_alive():
            try:
                os.kill(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def _merge(futures: list[Future[list[Done]]], started: float, *,
           interrupted: bool) -> RunResult:
    """The parts' results merged in the run's order (see :func:`merged`), whichever process ran
    them; each phase's time summed over the parts, ``total`` the wall time since ``started``."""
    ended: list[Done] = []
    for future in futures:
        if future.exception() is not None:
            if interrupted:
                continue
            raise future.exception()  # type: ignore[misc]
        ended += future.result()
    results: list[RunResult] = []
    for _, kind, value in sorted(ended, key=lambda e: e[0]):
        if kind == "config":
            raise ConfigurationError(str(value))
        if isinstance(value, RunResult):
            results.append(value)
    if not results:
        raise ConfigurationError("no part of the run reported a result")
    opened = [r for r in results if r.unopened is None]
    if not opened:  # the store would not open in any part: as a run on one process says
        raise ConfigurationError(str(results[0].unopened))
    first = opened[0]
    timings: dict[str, float] = {}
    for r in results:
        for key, seconds in r.timings.items():
            if key != "total":
                timings[key] = timings.get(key, 0.0) + seconds
    timings["total"] = time.perf_counter() - started
    gated: dict[str, str] = {}
    for r in results:
        gated.update(r.gated_off)
    evidence = merged([r.evidence for r in results])
    history = next((r.history for r in results if r.history is not None), None)
    return RunResult(evidence, first.capabilities, first.options, gated, timings,
                     evidence.steps, sum(r.examples for r in results), history)
