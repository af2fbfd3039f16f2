"""Is a concurrent history linearizable against a contract's reference model?

:func:`check_history` searches for an order of the history's events that (1) respects real time
(an event that returned before another was invoked comes first), (2) gives every event the
answer the store gave, when the model steps the events in that order from its initial state::

    verdict = check_history(MODEL, history, clock=time.perf_counter)
    if verdict.result == NOT_LINEARIZABLE:
        print(render_counterexample(verdict))

The checker needs only the model, so it lives in the model layer; this module is its entry
point, whose public names the package (:mod:`fencepost.model.linearizability`) re-exports. Its
concerns live apart:

- :mod:`.partition`: the history cut by record (P-compositionality) and each
  partition cut where it was quiescent (segments);
- :mod:`.search`: Wing & Gong's search with Lowe's memoized configurations over
  one segment, indeterminate events included;
- :mod:`.bindings`: the names the models mint, bound to the store's real ids in
  each order, and recorded ops translated back to the model's names;
- :mod:`.keys`: exact structural keys for (often unhashable) model states;
- :mod:`.verdict`: the results (:class:`CheckResult`, a ``str`` enum),
  :class:`Verdict`, :class:`PartitionResult`, :class:`Counterexample`;
- :mod:`.render`: a counterexample as text.

**Budget.** Each partition gets ``budget_s`` seconds of search; a partition whose search runs
out is ``unknown``, and a history with an unknown partition (and none proven non-linearizable)
is ``unknown``: never linearizable. The seconds are read from ``clock`` (the caller's monotonic
clock, e.g. ``time.perf_counter``): the model layer reads no wall clock of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from fencepost.spec.ops import Op

from ..base import ContractModel, options_with_defaults
from ..history import Event, History
from .bindings import Bindings
from .partition import partitions, segments
from .search import (
    CheckContext,
    Ends,
    Partition,
    SeenStates,
    Start,
    counterexample,
    search,
    unwind,
)
from .verdict import (
    LINEARIZABLE,
    NOT_LINEARIZABLE,
    UNKNOWN,
    CheckResult,
    Counterexample,
    PartitionResult,
    Verdict,
)

__all__ = ["DEFAULT_BUDGET_S", "check_history"]

DEFAULT_BUDGET_S = 10.0


def check_history(
    model: ContractModel,
    history: History | Sequence[Event],
    partition: Callable[[Op], Hashable | None] | None = None,
    budget_s: float = DEFAULT_BUDGET_S,
    *,
    clock: Callable[[], float],
    options: Mapping[str, str] | None = None,
    capabilities: Iterable[str] = (),
    dead: Iterable[str] = (),
) -> Verdict:
    """Check ``history`` against ``model`` partition by partition (see the module doc).

    ``options`` are the contract's choices (defaults filled in), ``capabilities`` and ``dead``
    go into every step's :class:`~fencepost.model.base.Ctx`. ``budget_s`` is the search time
    allowed per partition, in seconds of ``clock`` (monotonic), which also times the check.
    """
    if isinstance(history, History) and history.contract != model.name:
        raise ValueError(f"a {history.contract} history cannot be checked against the "
                         f"{model.name} model")
    started = clock()
    world = CheckContext(
        model=model,
        options=options_with_defaults(model.choices, dict(options or {}), model.settings),
        capabilities=frozenset(capabilities),
        dead=frozenset(dead),
    )
    results = [
        _check_partition(world, key, events, budget_s, clock)
        for key, events in partitions(history, partition).items()
    ]
    if any(r.result == NOT_LINEARIZABLE for r in results):
        verdict = NOT_LINEARIZABLE
    elif any(r.result == UNKNOWN for r in results):
        verdict = UNKNOWN
    else:
        verdict = LINEARIZABLE
    return Verdict(verdict, tuple(results), clock() - started)


def _check_partition(world: CheckContext, key: Hashable | None, events: list[Event],
                     budget_s: float, clock: Callable[[], float]) -> PartitionResult:
    """Check one partition segment by segment (see :func:`segments`): the search of a segment
    starts from every configuration the previous segment can end in, and a partition is
    linearizable when the last segment can end somewhere."""
    started = clock()
    deadline = started + budget_s
    digests: dict[int, tuple[Any, int]] = {}
    frontier: list[Start] = [(world.model.initial, Bindings({}, {}, digests), (), None)]
    explored = [0]  # configurations visited, over every search

    def result(verdict: CheckResult, cx: Counterexample | None = None) -> PartitionResult:
        return PartitionResult(key, verdict, len(events), clock() - started, explored[0], cx)

    parts = segments(events)
    for number, segment in enumerate(parts):
        last = number == len(parts) - 1
        ends: Ends = {}
        by_pending: dict[tuple[int, ...], list[Start]] = {}
        for start in frontier:
            by_pending.setdefault(tuple(id(e) for e in start[2]), []).append(start)
        for group in by_pending.values():
            part = Partition(world, list(group[0][2]) + segment, digests)
            seen: SeenStates = set()
            for state, b, _pending, trail in group:
                verdict, _best = search(part, state, b.fresh(), deadline, clock, seen,
                                        None if last else ends, trail)
                if verdict == UNKNOWN or (last and verdict == LINEARIZABLE):
                    explored[0] += len(seen)
                    return result(verdict)
            explored[0] += len(seen)
        if not last and ends:
            frontier = list(ends.values())
            continue
        # Nowhere to go: the smallest story is this segment from one of its starts.
        state, b, pending, trail = frontier[0]
        part = Partition(world, list(pending) + segment, digests)
        _verdict, best = search(part, state, b.fresh(), float("inf"), clock, set(), None, trail)
        assert best is not None
        return result(NOT_LINEARIZABLE, counterexample(part, key, best, unwind(trail)))
    return result(LINEARIZABLE)
