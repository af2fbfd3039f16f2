"""What the linearizability checker answers: a :class:`Verdict` per history, made of one
:class:`PartitionResult` per partition, each with a :class:`CheckResult` and, when a partition
is not linearizable, a :class:`Counterexample`.

The results are a ``str``-valued enum (Porcupine's Ok / Illegal / Unknown): a result compares
equal to its word and is written as its word, so JSON, saved histories and reports read as
before (``"linearizable"``, ``"not_linearizable"``, ``"unknown"``)::

    >>> CheckResult.NOT_LINEARIZABLE == "not_linearizable", f"{CheckResult.UNKNOWN}"
    (True, 'unknown')
"""

from __future__ import annotations

import enum
from collections.abc import Hashable

import attrs

from fencepost.spec.outcome import Outcome

from ..history import Event


class CheckResult(enum.StrEnum):
    """The checker's answer on a history or one of its partitions."""

    LINEARIZABLE = "linearizable"
    """Some order of the events respects real time and gives every answer the store gave."""
    NOT_LINEARIZABLE = "not_linearizable"
    """No such order: the store gave an answer no order explains."""
    UNKNOWN = "unknown"
    """The search ran out of its budget: never counted as linearizable."""


# The results under their own names, as the checker's callers compare them (``verdict.result ==
# NOT_LINEARIZABLE``).
LINEARIZABLE = CheckResult.LINEARIZABLE
NOT_LINEARIZABLE = CheckResult.NOT_LINEARIZABLE
UNKNOWN = CheckResult.UNKNOWN


@attrs.frozen
class Counterexample:
    """Why one partition is not linearizable.

    ``events`` are the partition's events in invocation order; ``prefix`` the longest sequence
    of them the search could linearize (in that order); ``blocked`` the event that had to come
    next (the first to return among those left) and could not be placed after ``prefix``;
    ``expected`` the model's allowed answers for it there (bound names shown as real values),
    empty when the model could not even read its op (a reference to an id not minted yet).
    ``before`` is an order of the partition's earlier events (its earlier segments, see
    :func:`~fencepost.model.linearizability.partition.segments`) that linearizes and ends where
    the search of ``events`` started; then ``events`` is the one segment that cannot go on from
    there.
    """

    partition: Hashable | None
    events: tuple[Event, ...]
    prefix: tuple[Event, ...]
    blocked: Event
    expected: tuple[Outcome, ...]
    before: tuple[Event, ...] = ()

    def by_process(self) -> dict[str, tuple[Event, ...]]:
        """The partition's events as intervals per process (processes by first invocation)."""
        out: dict[str, list[Event]] = {}
        for event in self.events:
            out.setdefault(event.process, []).append(event)
        return {p: tuple(sorted(es, key=lambda e: e.invoked)) for p, es in out.items()}

    def render(self) -> str:
        """The readable account of :func:`render_counterexample`."""
        from .render import render_counterexample  # it renders these types

        return render_counterexample(self)


@attrs.frozen
class PartitionResult:
    """The verdict on one partition: ``result`` is linearizable, not linearizable or unknown
    (its budget ran out); ``explored`` counts the configurations the search visited."""

    key: Hashable | None
    result: CheckResult
    events: int
    elapsed_s: float
    explored: int
    counterexample: Counterexample | None = None


@attrs.frozen
class Verdict:
    """The verdict on a history: not linearizable if any partition is, else unknown if any
    partition's budget ran out, else linearizable. ``counterexample`` is the smallest
    non-linearizable partition's."""

    result: CheckResult
    partitions: tuple[PartitionResult, ...]
    elapsed_s: float

    @property
    def linearizable(self) -> bool:
        """Was an order found for every partition?"""
        return self.result == LINEARIZABLE

    @property
    def failed(self) -> tuple[PartitionResult, ...]:
        """The partitions proven not linearizable."""
        return tuple(p for p in self.partitions if p.result == NOT_LINEARIZABLE)

    @property
    def unknown(self) -> tuple[PartitionResult, ...]:
        """The partitions whose search ran out of budget."""
        return tuple(p for p in self.partitions if p.result == UNKNOWN)

    @property
    def counterexample(self) -> Counterexample | None:
        """The smallest failing partition's counterexample, or None."""
        failed = [p for p in self.failed if p.counterexample is not None]
        if not failed:
            return None
        return min(failed, key=lambda p: p.events).counterexample

    def summary(self) -> str:
        """One line: the result, the events and partitions, the time, what failed."""
        events = sum(p.events for p in self.partitions)
        line = (f"{self.result}: {events} events in {len(self.partitions)} partition(s), "
                f"checked in {self.elapsed_s:.3f} s")
        if self.failed:
            line += f"; {len(self.failed)} not linearizable"
        if self.unknown:
            line += f"; {len(self.unknown)} unknown (budget exhausted)"
        return line
