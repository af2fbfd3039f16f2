"""Shared fixtures: server URLs that skip when unreachable, except in CI where they fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# A correct store's call takes milliseconds, but on a 2-core machine running the suite on every
# core beside PostgreSQL, a call can stall for seconds; the kit's own tests must not turn that
# into an unknown verdict. The timeout itself is tested with explicit --call-timeout values.
os.environ.setdefault("FENCEPOST_CALL_TIMEOUT", "60")
# Likewise a stopped run's clean-up: at load 10 it has taken 3.4 s (0.2 s idle); the kill after
# the grace is tested with an explicit one (tests/test_scenarios_guard.py).
os.environ.setdefault("FENCEPOST_STOP_GRACE", "60")
# And one request of an exec: adapter (a child process, itself slowed by the load); the wire
# timeout is tested with explicit values (tests/test_adapters_wire.py).
os.environ.setdefault("FENCEPOST_WIRE_TIMEOUT", "45")
# The suite already runs on every core (pytest -n auto): a command under test runs its parts in
# one process unless the test says otherwise (--jobs is tested with explicit values).
os.environ.setdefault("FENCEPOST_JOBS", "1")

PG_URL = os.environ.get("FENCEPOST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _require(url: str, what: str) -> str:
    from fencepost.adapters.sql import probe
    from fencepost.spec.errors import BackendUnavailable

    try:
        probe(url)
    except BackendUnavailable as e:
        missing(f"{what} unreachable at {url}: {e}", "server")
    return url


def missing(message: str, kind: str) -> None:
    """Skip the test for what is missing, or fail it under CI=true (CI never passes by
    skipping)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} (CI=true: {kind} tests must not skip)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def pg_url() -> str:
    """The PostgreSQL URL; skips (fails under CI=true) when the server is unreachable."""
    return _require(PG_URL, "PostgreSQL")


class Clock:
    """A settable clock for a test that drives a store directly: the store reads ``clock()``,
    the test sets ``clock.now``."""

    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def require_program(name: str, what: str) -> str:
    """The path of ``name`` on PATH; skips (fails under CI=true) when it is missing."""
    import shutil

    found = shutil.which(name)
    if found is None:
        missing(f"{what} is not installed ({name} not on PATH)", "toolchain")
    assert found is not None
    return found


def race(n: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(i)`` for i in 0..n-1 on ``n`` real threads released together: each one's
    answer, or the exception it raised."""
    barrier = threading.Barrier(n)
    answers: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            answers[i] = work(i)
        except Exception as e:  # noqa: BLE001 - the race's answer is whatever was raised
            answers[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return answers


def source_copy(target: Path) -> Path:
    """A copy of the project's sources (every file git tracks or would, none it ignores) in
    ``target``, to build from: setuptools builds in the source's ``build/``, which keeps
    modules since moved or deleted and is shared by builds running at the same time."""
    root = Path(__file__).resolve().parent.parent
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=root, capture_output=True, check=True,
                            timeout=60).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = root / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the cores this process may use. A third of the suite's
    time is spent waiting (on PostgreSQL, Redis, child processes and subprocess commands), and
    a worker per core leaves that time idle (84% of 2 cores busy over a run)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``long`` (a whole check on a server or through the command) run first:
    under ``-n`` the workers then end together, short tests filling in, instead of one worker
    waiting on a long test that began last. The order of the rest stays."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
