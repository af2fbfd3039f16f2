"""A run collects garbage less often and gives the process its own settings back."""

from __future__ import annotations

import gc
import threading
from typing import Any

from fencepost.adapters.adk_ledger.memory import MemoryLedgerFactory
from fencepost.api import check
from fencepost.env import AdapterEnv
from fencepost.scenarios.collector import YOUNGEST, collecting_less


def test_inside_a_run_what_existed_is_frozen_and_the_young_wait_longer() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with collecting_less():
        assert gc.get_threshold() == (before[0] * YOUNGEST, before[1], before[2])
        assert gc.get_freeze_count() > frozen
        with collecting_less():  # nested: the outer setting holds
            assert gc.get_threshold() == (before[0] * YOUNGEST, before[1], before[2])
        assert gc.get_threshold() == (before[0] * YOUNGEST, before[1], before[2])
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, frozen)


def test_concurrent_runs_restore_the_settings_when_the_last_one_ends() -> None:
    before = gc.get_threshold()
    inside, release = threading.Barrier(3), threading.Event()

    def run() -> None:
        with collecting_less():
            inside.wait()
            release.wait()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    assert gc.get_threshold()[0] == before[0] * YOUNGEST
    release.set()
    for t in threads:
        t.join()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_check_runs_so_and_leaves_the_collector_as_it_found_it() -> None:
    before = gc.get_threshold()
    memory = MemoryLedgerFactory()
    seen = set()

    def factory(env: AdapterEnv) -> Any:
        seen.add(gc.get_threshold())  # the store is opened during the run
        return memory(env)

    report = check("adk-ledger", factory, seed=1, concurrency=0, jobs=1)  # in this process
    assert report.exit_code == 0
    assert seen == {(before[0] * YOUNGEST, before[1], before[2])}
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, 0)
