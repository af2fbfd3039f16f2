"""The transition tour alone on one store, outside a check (``fencepost bench``'s section 8 and
the tours' tests): the first failure of each clause and the coverage."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fencepost.spec.env import AdapterEnv

from .collector import collecting_less
from .guard import CANCEL_GRACE_S, DEFAULT_CALL_TIMEOUT_S, supervise
from .harness import ClauseViolation
from .runner import drop_abandoned, drop_live, new_world, open_checked
from .shrinking import UNLIMITED, Shrinking
from .suite import Suite
from .tour import TourRun, run_tour, tour_coverage
from .tour_coverage import TourCoverage
from .tour_graph import Scope


def tour_alone(suite: Suite, factory: Callable[[AdapterEnv], Any], scope: Scope, *,
               options: Mapping[str, str] | None = None, want: str | None = None,
               sequences: int | None = None, shrinking: Shrinking = UNLIMITED,
               call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
               clauses: frozenset[str] | None = None
               ) -> tuple[dict[str, ClauseViolation], TourCoverage]:
    """The tour of ``scope`` on the store ``factory`` makes (opened and checked as every run opens
    it, its data dropped at the end; the factory is the caller's to close, and the SQL factories
    keep the emptied tables for reuse until then), under ``options`` (their defaults for the
    rest): the first failure of each clause, shrunk within ``shrinking``, and the coverage. It
    stops once the clause ``want`` failed, or after ``sequences`` sequences (the coverage then
    says how far it got); with ``clauses``, it runs only the sequences that walk through an edge
    putting one of them to the test (:func:`~.tour.puts_to_the_test`). Its store calls are
    watched as a check's are: a call that overruns ``call_timeout_s``, or a store lost, ends the
    tour and the coverage says where (the failures found before are kept)."""
    world = new_world(suite, factory, options=options, call_timeout_s=call_timeout_s)
    failed: dict[str, ClauseViolation] = {}
    asked = [0]
    so_far = TourRun()

    def record(v: ClauseViolation, _minimal: bool) -> None:
        failed.setdefault(v.clause, v)

    def stop() -> bool:
        asked[0] += 1
        return want in failed or (sequences is not None and asked[0] > sequences)

    def body() -> TourCoverage:
        open_checked(suite, world)
        return run_tour(scope, world, record=record, stop=stop, shrinking=shrinking,
                        so_far=so_far, clauses=clauses)

    with collecting_less():
        ended = supervise(world.guard, body)
    if ended.abandoned is None:
        drop_live(world)
    else:  # stuck in a store call (or not unwound within the grace after Ctrl-C)
        drop_abandoned(world, CANCEL_GRACE_S if ended.interrupted is not None
                       else world.guard.timeout_s)
    if ended.interrupted is not None:
        raise ended.interrupted
    if ended.abandoned is not None:
        return failed, tour_coverage(scope, world, so_far, ended.abandoned)
    if ended.error is not None:
        raise ended.error
    coverage: TourCoverage = ended.value
    return failed, coverage
