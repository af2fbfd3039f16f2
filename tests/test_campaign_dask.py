"""fencepost campaign on a Dask distributed cluster: a scheduler and two workers started as
processes on loopback (free ports), one worker killed in the middle of the campaign."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import missing

DONE = re.compile(r"^\.\.\. seed (\d+) done: 1 fail \(\d+\.\d s\) \[\d+/8, [\d.]+ seeds/min\]$")


def _need_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        missing("Dask distributed is not installed (pip install 'fencepost[campaign]')",
                "toolchain")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Any]:
    """A scheduler and two single-threaded workers, every process ended afterwards."""
    _need_dask()
    from fencepost.campaign_dask import local_cluster

    with local_cluster(2, str(tmp_path / "cluster")) as started:
        yield started


def _ended(pid: int, timeout_s: float) -> bool:
    """Has process ``pid`` (not a child of this one) ended within ``timeout_s``?"""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    finally:
        os.close(fd)


def test_a_cluster_ends_with_the_process_that_started_it_killed_outright(
        tmp_path: Path) -> None:
    """The bench's cluster (or a test's) gets no chance to stop its scheduler and workers when
    its process is killed with SIGKILL: they end with it, they do not run on for good. (And a
    cluster started in a directory an earlier one used takes its own scheduler's address, not
    the one the earlier scheduler wrote there.)"""
    _need_dask()
    stale = "tcp://127.0.0.1:9"
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "scheduler.json").write_text(json.dumps({"address": stale}))
    script = f"""
import json, os, signal
from fencepost.campaign_dask import local_cluster
with local_cluster(1, {str(tmp_path / "cluster")!r}) as started:
    print(started.address, flush=True)
    print(json.dumps([started.scheduler.pid, *(w.pid for w in started.workers)]), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr
    address, listed = done.stdout.splitlines()
    pids = json.loads(listed)
    try:
        assert address.startswith("tcp://127.0.0.1:") and address != stale
        assert len(pids) == 2
        assert [pid for pid in pids if not _ended(pid, 60.0)] == []
    finally:
        for pid in pids:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is Linux's")
def test_the_bench_clusters_workers_run_on_a_core_each_when_they_take_every_cpu(
        cluster: Any) -> None:
    mine = sorted(os.sched_getaffinity(0))
    cores = sorted(sorted(os.sched_getaffinity(w.pid)) for w in cluster.workers)
    assert cores == ([[mine[0]], [mine[1]]] if len(mine) == 2 else [mine, mine])


def _processing(address: str) -> dict[str, tuple[str, list[str]]]:
    """Each worker's address -> (its name, the keys of the tasks it holds)."""
    from distributed import Client

    with Client(address, timeout=60, set_as_default=False) as client:
        processing = client.processing()
        names = {a: w["name"] for a, w in client.scheduler_info()["workers"].items()}
    return {a: (str(names[a]), [str(k) for k in keys]) for a, keys in processing.items()}


@pytest.mark.long
def test_a_lost_workers_seeds_run_elsewhere_and_every_seed_is_accounted_for(
        cluster: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    # No example database: every seed then takes its whole time, so the workers are busy
    # when one is killed (with one, later seeds replay the first failure in a moment).
    process = subprocess.Popen(
        [sys.executable, "-m", "fencepost.cli", "campaign", "adk-ledger", "--adapter",
         "mutant:claim_completed", "--seeds", "1..8", "--scheduler", cluster.address,
         "--out", str(out), "--example-db", "none", "--profile", "quick", "--concurrency",
         "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stderr is not None
        first = process.stderr.readline().rstrip("\n")
        assert DONE.match(first), first + process.stderr.read()
        # Freeze both workers so that none finishes a seed while we look, then kill the one
        # holding seeds (a frozen worker holds its tasks; the other goes on once thawed).
        for worker in cluster.workers:
            os.killpg(worker.pid, signal.SIGSTOP)
        held = {name: keys for name, keys in _processing(cluster.address).values() if keys}
        victim = sorted(held)[0]
        seeds = sorted(int(key.split("-")[2]) for key in held[victim])
        addresses = {name: a for a, (name, _) in _processing(cluster.address).items()}
        k = int(victim.rsplit("-", 1)[1])
        cluster.kill_worker(k)
        for j, worker in enumerate(cluster.workers):
            if j != k:
                os.killpg(worker.pid, signal.SIGCONT)
        rest = process.stderr.read()
        assert process.wait(300) == 1, rest
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert seeds, held
    lines = [first, *rest.splitlines()]
    assert sorted(int(m[1]) for m in map(DONE.match, lines) if m) == list(range(1, 9)), rest
    data = json.loads((out / "campaign.json").read_text())
    assert data["complete"] is True and data["exit_code"] == 1
    workers = data["seeds"].pop("workers")
    assert data["seeds"] == {"planned": list(range(1, 9)), "done": list(range(1, 9)),
                             "failed": list(range(1, 9)), "lost": {}, "errors": {},
                             "not_run": []}
    [found] = data["failing"]
    assert found["clause"] == "ADK-CLAIM-002" and found["seeds"] == list(range(1, 9))
    survivor = next(a for name, a in addresses.items() if name != victim)
    # the seeds the killed worker held were run again, by the other worker
    assert [workers[str(s)] for s in seeds] == [survivor] * len(seeds)
    assert set(workers.values()) <= {survivor, addresses[victim]}
    assert len(list((out / "seeds").glob("*/report.json"))) == 8

