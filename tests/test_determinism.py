"""All randomness flows from one seed: the same seed gives the same trace, others differ.

The concurrent run draws its calls from the seed too, but how its threads interleave is the
machine's: it is left out here. Shrinking runs without a time budget here: a budget cuts
shrinking where the machine's speed puts it."""

from __future__ import annotations

import pytest

from fencepost.api import check
from fencepost.scenarios.clock import ClockWentBackwards, SimClock


def _run(seed: int) -> tuple[int, int, list[tuple[str, str, tuple[str, ...]]]]:
    from my_ledger import make_zombie_ledger  # type: ignore[import-not-found]

    report = check("adk-ledger", make_zombie_ledger, seed=seed, shrink_budget="none",
                   concurrency=0)
    failures = [
        (v.clause.id, v.failure.check, tuple(s.render(i) for i, s in enumerate(v.failure.trace)))
        for v in report.verdicts
        if v.failure is not None
    ]
    return report.steps, report.examples, failures


@pytest.fixture(autouse=True)
def _external_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "external"))


@pytest.mark.long
def test_same_seed_gives_the_same_trace() -> None:
    first, second = _run(1234), _run(1234)
    assert first == second
    assert first[2], "the zombie ledger must fail somewhere"


def test_different_seeds_explore_differently() -> None:
    """On the correct store (nothing to shrink, no concurrent run: quick), two seeds make
    different numbers of calls."""
    steps = [check("adk-ledger", "memory", seed=seed, concurrency=0).steps for seed in (1, 2)]
    assert steps[0] != steps[1], steps


def test_clock_never_goes_backwards() -> None:
    clock = SimClock(100)
    assert clock.advance(5) == 105
    assert clock.set(105) == 105
    with pytest.raises(ClockWentBackwards):
        clock.set(104)
    with pytest.raises(ClockWentBackwards):
        clock.advance(-1)
    assert clock.now() == 105
