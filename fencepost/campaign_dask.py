"""A campaign's seeds on a Dask distributed cluster (``--scheduler tcp://HOST:8786``).

Each seed is one task (``pure=False``, its key naming the seed and the campaign), run by
:func:`fencepost.campaign.run_seed` on whichever worker the scheduler picks; results come back
as they finish (``as_completed``) and are saved by the campaign at once. A worker lost while
running a seed is Dask's to handle: the scheduler runs the seed again on another worker, and
gives up after ``distributed.scheduler.allowed-failures`` workers died running it
(``KilledWorker``: the seed is reported lost, and run again by the next resume). Every worker
needs fencepost (and the adapter's module) installed; the example database must be one they
all reach (``redis://``, or a directory on a shared file system).

Imported only when ``--scheduler`` is given, so ``fencepost --help`` does not load Dask.
:func:`local_cluster` starts a scheduler and workers as processes on loopback, for the bench
and the tests.

Example::

    with local_cluster(workers=2, directory="/tmp/c") as cluster:
        run_campaign(settings, seeds, "out", scheduler=cluster.address)
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs

from .campaign import Runner, SeedResult, SeedTask, run_seed
from .errors import ConfigurationError
from .example_db import CAMPAIGN_EXTRA
from .pool import own_cores, pin_to

CONNECT_TIMEOUT_S = 10.0
"""How long connecting to the scheduler may take before the campaign stops (exit 2)."""
WORKER_WAIT_S = 60.0
"""How long a campaign waits for the scheduler's first worker before it stops (exit 2)."""
WORKER_ENV = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
"""The local cluster's workers run without Dask's sampling profiler: its
``sys._current_frames()`` every 10 ms can deadlock CPython 3.11 (3.11.7 here; the runtime's
head lock against the GIL, python/cpython#106883, dask/distributed#8616), and a seed's races
run many threads. Seen here: a worker hung in a race for good, the campaign with it."""


def _distributed(module: str = "") -> Any:
    """``distributed`` (or its submodule ``module``), typed loosely: Dask's API is untyped."""
    return importlib.import_module("distributed" + (f".{module}" if module else ""))


def dask_runner(address: str) -> Runner:
    """A runner of seeds on the Dask scheduler at ``address``; raises ConfigurationError (one
    line) when Dask is not installed or nothing answers there."""
    try:
        _distributed()
    except ImportError:
        raise ConfigurationError(f"--scheduler needs Dask distributed: {CAMPAIGN_EXTRA}") \
            from None
    _reachable(address)
    return lambda tasks, arrived: run_on_dask(address, tasks, arrived)


def _reachable(address: str) -> None:
    """Fail fast, in one line, when nothing listens at the scheduler's address."""
    addressing = _distributed("comm.addressing")
    try:
        scheme, location = addressing.parse_address(address)
        host, port = addressing.parse_host_port(location)
    except (ValueError, TypeError) as e:
        raise ConfigurationError(f"--scheduler {address!r}: not an address like "
                                 f"tcp://HOST:8786 ({e})") from None
    if scheme not in ("tcp", "tls"):
        return  # another transport (ucx, inproc): Dask's own connection says
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise ConfigurationError(
            f"cannot reach the Dask scheduler at {address} ({e.strerror or e}); start one "
            "with `dask scheduler` (and workers with `dask worker ADDRESS`), or run without "
            "--scheduler to use this machine's cores") from None


def run_on_dask(address: str, tasks: Sequence[SeedTask],
                arrived: Callable[[SeedResult], None]) -> None:
    """Submit one task per seed to the scheduler at ``address`` and hand each result to
    ``arrived`` as it finishes. Stopping (an exception, Ctrl-C) cancels the seeds not
    finished; a seed already running on a worker runs to its end there, unused."""
    distributed = _distributed()
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ConfigurationError(f"cannot connect to the Dask scheduler at {address}: "
                                 f"{e}") from None
    futures: dict[Any, SeedTask] = {}
    try:
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_S)
        except (TimeoutError, OSError):
            raise ConfigurationError(
                f"the Dask scheduler at {address} has no worker after {WORKER_WAIT_S:g} s; "
                f"start some with `dask worker {address}`") from None
        campaign = uuid.uuid4().hex[:8]
        for task in tasks:
            key = f"fencepost-seed-{task.seed}-{campaign}"
            futures[client.submit(_on_worker, task, key=key, pure=False)] = task
        for future in distributed.as_completed(list(futures), loop=client.loop):
            arrived(_result(future, futures[future]))
    finally:
        if futures:
            client.cancel(list(futures))
        client.close()


def _on_worker(task: SeedTask) -> SeedResult:
    """:func:`run_seed` on a Dask worker, naming the worker."""
    try:
        worker = str(_distributed().get_worker().address)
    except (ImportError, ValueError):
        worker = f"pid {os.getpid()}"
    return run_seed(task, worker)


def _result(future: Any, task: SeedTask) -> SeedResult:
    """The seed's result, or what stopped it: workers lost running it, a worker that cannot
    import what the seed needs (a configuration error), another exception."""
    killed = _distributed().KilledWorker
    try:
        result: SeedResult = future.result()
        return result
    except killed as e:
        return SeedResult(task.seed, lost=f"the Dask workers running it died ({e})")
    except ImportError as e:
        return SeedResult(task.seed, worker="a Dask worker", configuration=(
            f"{type(e).__name__}: {e} (install fencepost and the adapter on every worker)"))
    except Exception as e:  # noqa: BLE001 - whatever a task raised is the seed's error
        return SeedResult(task.seed, error=f"{type(e).__name__}: {e}")


# --- a cluster on loopback, for the bench and the tests ---------------------------------------


@attrs.define
class LocalCluster:
    """A Dask scheduler and workers running as processes of this machine (each in a process
    group of its own, so that stopping one kills all it started)."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]

    def kill_worker(self, k: int) -> None:
        """SIGKILL worker ``k`` (its process group) and wait for it: a lost worker."""
        _kill(self.workers[k], signal.SIGKILL)

    def stop(self) -> None:
        """End every process it started (SIGTERM, then SIGKILL after 10 s)."""
        for process in [*self.workers, self.scheduler]:
            _kill(process, signal.SIGTERM, grace=10.0)


def _kill(process: subprocess.Popen[bytes], signum: int, grace: float = 10.0) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            pass
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


@contextmanager
def local_cluster(workers: int, directory: str, *,
                  timeout_s: float = 120.0) -> Iterator[LocalCluster]:
    """A scheduler on a free loopback port and ``workers`` single-threaded workers (no nanny:
    a killed worker stays dead; each on a core of its own when they are as many as the CPUs,
    as local workers: :class:`~fencepost.pool.Cores`), their logs and files in ``directory``;
    every process is ended on the way out, also on failure, and is killed when the thread that
    started it ends without that (its process killed outright: Linux; SIGKILL, as a worker
    told to stop with SIGTERM can wait on its scheduler, gone at the same time, for good).
    Waits until each worker has registered."""
    from .supervisor import die_with_parent

    killed_with_parent = functools.partial(die_with_parent, signal.SIGKILL)

    cpus = own_cores(workers)

    def start(argv: list[str], log: str, cpu: int | None = None) -> subprocess.Popen[bytes]:
        def started() -> None:
            killed_with_parent()
            if cpu is not None:
                pin_to(cpu)

        with open(os.path.join(directory, log), "wb") as out:
            return subprocess.Popen([sys.executable, "-m", *argv], stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    preexec_fn=started, env={**os.environ, **WORKER_ENV})

    os.makedirs(directory, exist_ok=True)
    file = os.path.join(directory, "scheduler.json")
    if os.path.exists(file):  # an earlier cluster's: its address is not this one's
        os.remove(file)
    quiet = ["--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
    scheduler = start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                       *quiet, "--scheduler-file", file], "scheduler.log")
    cluster = LocalCluster("", scheduler, [])
    try:
        cluster.address = _address(file, scheduler, time.monotonic() + timeout_s)
        for k in range(workers):
            cluster.workers.append(start(
                ["distributed.cli.dask_worker", cluster.address, "--nthreads", "1",
                 "--no-nanny", "--host", "127.0.0.1", *quiet, "--memory-limit", "0",
                 "--name", f"fencepost-{k}", "--local-directory", directory],
                f"worker-{k}.log", cpus[k] if cpus else None))
        with _distributed().Client(cluster.address, timeout=timeout_s,
                                   set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=timeout_s)
        yield cluster
    finally:
        cluster.stop()


def _address(file: str, scheduler: subprocess.Popen[bytes], deadline: float) -> str:
    """The address the scheduler wrote to its scheduler file, once it has."""
    while time.monotonic() < deadline:
        if scheduler.poll() is not None:
            raise RuntimeError(f"the Dask scheduler exited ({scheduler.returncode}); see "
                               f"{os.path.dirname(file)}/scheduler.log")
        try:
            with open(file, encoding="utf-8") as f:
                return str(json.load(f)["address"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)  # the file is written once the scheduler listens
    raise RuntimeError("the Dask scheduler did not start in time")
