"""The transition tour alone on one store, outside a check (``fencepost bench``'s section 8 and
the tours' tests): the first failure of each clause and the coverage."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fencepost.spec.env import AdapterEnv

from .harness import ClauseViolation
from .runner import drop_live, new_world, open_checked
from .shrinking import UNLIMITED, Shrinking
from .suite import Suite
from .tour import run_tour
from .tour_coverage import TourCoverage
from .tour_graph import Scope


def tour_alone(suite: Suite, factory: Callable[[AdapterEnv], Any], scope: Scope, *,
               options: Mapping[str, str] | None = None, want: str | None = None,
               sequences: int | None = None, shrinking: Shrinking = UNLIMITED
               ) -> tuple[dict[str, ClauseViolation], TourCoverage]:
    """The tour of ``scope`` on the store ``factory`` makes (opened and checked as every run
    opens it, its data dropped at the end), under ``options`` (their defaults for the rest):
    the first failure of each clause, shrunk within ``shrinking``, and the coverage. It stops
    once the clause ``want`` failed, or after ``sequences`` sequences (the coverage then says
    how far it got)."""
    world = new_world(suite, factory, options=options)
    failed: dict[str, ClauseViolation] = {}
    asked = [0]

    def record(v: ClauseViolation, _minimal: bool) -> None:
        failed.setdefault(v.clause, v)

    def stop() -> bool:
        asked[0] += 1
        return want in failed or (sequences is not None and asked[0] > sequences)

    try:
        open_checked(suite, world)
        coverage = run_tour(scope, world, record=record, stop=stop, shrinking=shrinking)
    finally:
        drop_live(world)
    return failed, coverage
