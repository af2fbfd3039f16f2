"""What the checks of a run found, clause by clause."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import attrs

from fencepost.model.answers import Answers
from fencepost.model.linearizability.verdict import Counterexample

from .kinds import kind, kind_of
from .tour_coverage import TourCoverage
from .trace import TraceStep, render_trace

CONCURRENT = "concurrent"
"""The check name of the concurrent run (the linearizability clauses name it)."""


@attrs.frozen
class Failure:
    """The counterexample of a broken clause, shrunk unless ``minimal`` is False (the state
    machine's shrinking was cut short by its budget, or turned off: the failure stands, a
    shorter example may exist). ``intervals`` is, for a concurrent run that is not
    linearizable, the checker's counterexample (the failing partition's events per process,
    the longest linearizable prefix, the event that could not be placed): what the HTML report
    draws."""

    check: str
    message: str
    trace: tuple[TraceStep, ...]
    intervals: Counterexample | None = attrs.field(default=None, eq=False, repr=False)
    minimal: bool = True
    repeats: int = 0
    """How many later answers of the same check differed again only in the fields this
    failure named (the check went on from the model's state; see ``Harness.go_on``)."""

    def render(self) -> str:
        return f"{self.message}\n{'' if self.minimal else NOT_MINIMAL}{render_trace(self.trace)}"


NOT_MINIMAL = "(not minimal: shrinking was stopped by its budget; --shrink-budget none shrinks "\
    "it fully)\n"


@attrs.frozen
class Ending:
    """How a check ended: it held (``HELD``), it failed ``clauses``, or it could not conclude
    (``unknown``, with the reason). Shown as the reports say it: ``failed X-1, X-2``,
    ``unknown: why``, and nothing for a check that held."""

    failed: tuple[str, ...] = ()
    unknown: str | None = None

    @classmethod
    def failing(cls, clauses: Iterable[str]) -> Ending:
        return cls(failed=tuple(sorted(clauses)))

    @classmethod
    def unknown_for(cls, reason: object) -> Ending:
        return cls(unknown=str(reason))

    @property
    def held(self) -> bool:
        return not self.failed and self.unknown is None

    def __str__(self) -> str:
        if self.failed:
            return "failed " + ", ".join(self.failed)
        return "" if self.unknown is None else f"unknown: {self.unknown}"


HELD = Ending()


def shortest_first(failure: Failure) -> tuple[bool, bool, int]:
    """How a failure ranks as the counterexample of its clause, the least first: one that can
    be replayed as a script (not a race's nor a concurrent run's), shrunk, then the fewest
    steps. Of two that rank alike, the one found first is kept (a run's order, and so
    ``--jobs``' merge, is fixed)."""
    found_by = kind(kind_of(failure.check))
    replayable = found_by is not None and found_by.replayable
    return not replayable, not failure.minimal, len(failure.trace)


@attrs.define
class Evidence:
    """What the checks of a run found, clause by clause."""

    exercised: dict[str, int] = attrs.Factory(dict)
    failures: dict[str, Failure] = attrs.Factory(dict)
    unknown: dict[str, str] = attrs.Factory(dict)
    checks_run: set[str] = attrs.Factory(set)
    steps: int = 0
    # clause -> situation -> how often it was reached with the store agreeing
    situations: dict[str, dict[str, int]] = attrs.Factory(dict)
    ended: dict[str, Ending] = attrs.Factory(dict)
    """Each check run, and how it first ended."""
    stopped: str = ""
    """Why the run stopped before its end (a call that did not return, an interruption)."""
    faults: list[str] = attrs.Factory(list)
    """The adapter's faults outside contract calls (its ``close`` or ``discard`` failed)."""
    concurrent: Answers | None = None
    """How the concurrent run's calls ended (answered, faulted), if there was a run."""
    tour: TourCoverage | None = None
    """How much of the transition tour's bounded graph ran on the store, if it ran."""
    counting: bool = True
    """Whether a clause seen to hold counts (:meth:`exercise`, :meth:`reach`). Not while a
    check shrinks a counterexample: how far it gets depends on the machine's speed (a budget
    in seconds), and what a seed puts to the test must not (see :mod:`.shrinking`)."""

    def exercise(self, clauses: Iterable[str]) -> None:
        """Count evidence: ``clauses`` were put to the test and held (each once)."""
        if self.counting:
            for clause in set(clauses):
                self.exercised[clause] = self.exercised.get(clause, 0) + 1

    def reach(self, clause: str, situation: str) -> None:
        """Count a situation of ``clause`` reached with the store agreeing."""
        if not self.counting:
            return
        counts = self.situations.setdefault(clause, {})
        counts[situation] = counts.get(situation, 0) + 1

    def fail(self, clause: str, failure: Failure) -> None:
        """Keep ``failure`` for ``clause`` unless a failure kept already is as short: the
        report shows the shortest counterexample any check found (:func:`shortest_first`)."""
        kept = self.failures.get(clause)
        if kept is None or shortest_first(failure) < shortest_first(kept):
            self.failures[clause] = failure

    def mark_unknown(self, clause: str, reason: str) -> None:
        """``clause`` could not be concluded, for ``reason`` (the first reason is kept)."""
        self.unknown.setdefault(clause, reason)

    @contextmanager
    def uncounted(self) -> Iterator[None]:
        """The body's clauses seen to hold do not count (its failures do)."""
        before, self.counting = self.counting, False
        try:
            yield
        finally:
            self.counting = before


def merged(parts: list[Evidence]) -> Evidence:
    """The evidence of a run made of ``parts`` (in the run's order), as if one run had found
    it all in that order: the shortest failure (the first of those alike), the first reason
    and ending of each clause or check kept, counts summed."""
    whole = Evidence()
    for part in parts:
        for clause, n in part.exercised.items():
            whole.exercised[clause] = whole.exercised.get(clause, 0) + n
        for clause, failure in part.failures.items():
            whole.fail(clause, failure)
        for clause, reason in part.unknown.items():
            whole.mark_unknown(clause, reason)
        whole.checks_run |= part.checks_run
        whole.steps += part.steps
        for clause, counts in part.situations.items():
            mine = whole.situations.setdefault(clause, {})
            for situation, n in counts.items():
                mine[situation] = mine.get(situation, 0) + n
        for check, how in part.ended.items():
            whole.ended.setdefault(check, how)
        whole.stopped = whole.stopped or part.stopped
        whole.faults.extend(part.faults)
        whole.concurrent = whole.concurrent or part.concurrent
        whole.tour = whole.tour or part.tour
    return whole
