"""What the checks of a run found, clause by clause."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from fencepost.model.answers import Answers
from fencepost.model.linearizability.verdict import Counterexample

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
    """How a check ended: it held (``HELD``), it failed ``clauses``, or it was lost (could not
    conclude) with a ``reason``. Shown as the reports say it: ``failed X-1, X-2``, ``lost:
    why``, and nothing for a check that held."""

    failed: tuple[str, ...] = ()
    lost: str | None = None

    @classmethod
    def failing(cls, clauses: Iterable[str]) -> Ending:
        return cls(failed=tuple(sorted(clauses)))

    @classmethod
    def lost_for(cls, reason: object) -> Ending:
        return cls(lost=str(reason))

    @property
    def held(self) -> bool:
        return not self.failed and self.lost is None

    def __str__(self) -> str:
        if self.failed:
            return "failed " + ", ".join(self.failed)
        return "" if self.lost is None else f"lost: {self.lost}"


HELD = Ending()


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

    def reach(self, clause: str, situation: str) -> None:
        counts = self.situations.setdefault(clause, {})
        counts[situation] = counts.get(situation, 0) + 1

    def fail(self, clause: str, failure: Failure) -> None:
        self.failures.setdefault(clause, failure)

    def lost(self, clause: str, reason: str) -> None:
        self.unknown.setdefault(clause, reason)


def merged(parts: list[Evidence]) -> Evidence:
    """The evidence of a run made of ``parts`` (in the run's order), as if one run had found
    it all in that order: the first failure, reason and ending of each clause or check kept,
    counts summed."""
    whole = Evidence()
    for part in parts:
        for clause, n in part.exercised.items():
            whole.exercised[clause] = whole.exercised.get(clause, 0) + n
        for clause, failure in part.failures.items():
            whole.fail(clause, failure)
        for clause, reason in part.unknown.items():
            whole.lost(clause, reason)
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
    return whole
