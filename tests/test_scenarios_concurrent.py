"""fencepost.scenarios.concurrent: the workers' bursts, their stores, and the clock's moves
between bursts (the linearizability verdicts are tests/test_concurrent.py's)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from fencepost.adapters.adk_ledger.memory import MemoryLedger
from fencepost.registry import contract_named
from fencepost.scenarios.adk_ledger.workload import AdkWorkload
from fencepost.scenarios.concurrent import _move_clock, run_concurrent
from fencepost.scenarios.guard import RunStopped
from fencepost.scenarios.harness import World
from fencepost.scenarios.runner import new_world
from fencepost.scenarios.said import Said
from fencepost.spec import adk_ledger as adk
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome

ADK = contract_named("adk-ledger")
ANSWERS = AdkWorkload("x").answers


class _Reads:
    """Every worker reads ``x`` (the store's answers do not matter here); with ``stop_after``,
    the run is stopped once that many calls were drawn."""

    answers = ANSWERS

    def __init__(self, world: World, stop_after: int | None = None,
                 boundaries: Sequence[int] = ()) -> None:
        self.world, self.stop_after, self.drawn = world, stop_after, 0
        self._boundaries = list(boundaries)

    def worker(self, index: int) -> _Reads:
        return self

    def next_op(self, rng: random.Random, now: int) -> Op:
        self.drawn += 1
        if self.stop_after is not None and self.drawn > self.stop_after:
            self.world.guard.stop("stopped by the test")
        return adk.Get("x")

    def saw(self, op: Op, outcome: Outcome, now: int) -> None:
        pass

    def boundaries(self) -> Sequence[int]:
        return self._boundaries


class _Closing(MemoryLedger):
    closed = 0

    def close(self) -> None:
        self.closed += 1


class _Opened:
    """A factory that keeps every store it opened."""

    def __init__(self) -> None:
        self.base = ADK.memory_factory(_Closing)
        self.stores: list[_Closing] = []

    def __call__(self, env: Any) -> Any:
        self.stores.append(self.base(env))
        return self.stores[-1]

    def discard(self, env: Any) -> None:
        self.base.discard(env)


@pytest.fixture
def opened() -> Iterator[tuple[World, _Opened]]:
    factory = _Opened()
    world = new_world(ADK.suite, factory, namespace=f"cu{uuid.uuid4().hex[:8]}")
    yield world, factory
    world.discard()


def test_a_run_needs_a_worker_and_one_is_enough(opened: tuple[World, _Opened]) -> None:
    world, _ = opened
    with pytest.raises(ValueError, match=r"^threads must be at least 1, not 0$"):
        run_concurrent(world, _Reads(world), threads=0, ops=1, seed=1)
    run = run_concurrent(world, _Reads(world), threads=1, ops=1, seed=1)
    assert {e.process for e in run.history.events} == {"w1"}


def test_the_run_ends_with_the_burst_that_reached_its_calls(
        opened: tuple[World, _Opened]) -> None:
    world, _ = opened
    first = random.Random(1)
    first.getrandbits(64)  # the worker's own draws
    assert first.randint(1, 3) == 1  # seed 1's first burst makes one call
    run = run_concurrent(world, _Reads(world), threads=1, ops=1, seed=1)
    assert (run.bursts, len(run.history.events)) == (1, 1)


def test_progress_is_told_every_25_bursts(opened: tuple[World, _Opened]) -> None:
    world, _ = opened
    told: list[Said] = []
    run = run_concurrent(world, _Reads(world), threads=1, ops=80, seed=2, progress=told.append)
    assert run.bursts >= 27
    ticks = [s.line for s in told if s.line.endswith(" bursts")]
    assert len(ticks) == run.bursts // 25
    assert ticks[0].startswith("concurrent: ") and ticks[0].endswith(
        "/80 calls by 1 worker, 25 bursts")


@pytest.mark.parametrize("durable", [True, False])
def test_each_worker_of_a_durable_store_has_a_store_of_its_own_closed_after(
        opened: tuple[World, _Opened], durable: bool) -> None:
    world, factory = opened
    world.capabilities = frozenset({"durable"} if durable else ())
    run_concurrent(world, _Reads(world), threads=3, ops=9, seed=3)
    assert len(factory.stores) == (3 if durable else 1)
    assert factory.stores[0] is world.store and factory.stores[0].closed == 0
    assert [s.closed for s in factory.stores[1:]] == [1] * (len(factory.stores) - 1)


def test_a_stopped_run_still_closes_its_workers_stores(opened: tuple[World, _Opened]) -> None:
    world, factory = opened
    world.capabilities = frozenset({"durable"})
    with pytest.raises(RunStopped, match=r"^stopped by the test$"):
        run_concurrent(world, _Reads(world, stop_after=4), threads=2, ops=100, seed=3)
    assert [s.closed for s in factory.stores] == [0, 1]


# --- the clock between bursts ----------------------------------------------------------------


class _Draws:
    """What ``_move_clock`` draws, in its order: roll, pick, early, small, large."""

    def __init__(self, roll: float, pick: int = 0, early: float = 0.5, small: int = 2,
                 large: int = 40) -> None:
        self.rolls = [roll, early]
        self.pick, self.small, self.large = pick, small, large

    def random(self) -> float:
        return self.rolls.pop(0)

    def randrange(self, n: int) -> int:
        return self.pick

    def choice(self, seq: Sequence[int]) -> int:
        assert self.small in seq
        return self.small

    def randint(self, a: int, b: int) -> int:
        return self.large


@pytest.mark.parametrize(("boundaries", "draws", "moved"), [
    ((10, 20, 30, 40), _Draws(0.1, pick=1), 20),  # onto a boundary ahead, of the first three
    ((10, 20, 30, 40), _Draws(0.1, pick=4), 20),  # the pick wraps around those three
    ((10, 20, 30, 40), _Draws(0.1, pick=1, early=0.1), 19),  # or 1 ms before it
    ((10, 20, 30, 40), _Draws(0.1, pick=1, early=0.3), 20),
    ((1,), _Draws(0.1, early=0.1), 1),  # 1 ms before would be now: onto it
    ((0, -5), _Draws(0.1), 2),  # none ahead: a small step
    ((10,), _Draws(0.2), 2),  # no boundary roll: a small step
    ((10,), _Draws(0.84), 2),
    ((10,), _Draws(0.85), 40),  # or a large one
])
def test_the_clock_moves_onto_a_boundary_ahead_or_by_a_step(
        opened: tuple[World, _Opened], boundaries: tuple[int, ...], draws: _Draws,
        moved: int) -> None:
    world, _ = opened
    now = world.clock.now()
    _move_clock(world, _Reads(world, boundaries=[now + b for b in boundaries]), draws)  # type: ignore[arg-type]
    assert world.clock.now() - now == moved
