"""How hard a run shrinks the counterexamples its state machine finds, and a clock on it.

Hypothesis shrinks every distinct failure of a run in turn (one exception class per clause),
the one with the shortest choice sequence first: the failure reached soonest, most often the
root cause of the others. A store that breaks many clauses used to wait for every one of them
to be shrunk to its minimum. :class:`Shrinking` bounds that: not at all (``--no-shrink``: the
raw counterexamples at once), or within a number of seconds per clause and in all
(``--shrink-budget``). A failure is never hidden by a budget: when shrinking stops early, the
smallest counterexample found so far is reported, marked as not minimal.

The clock is a hook into Hypothesis' shrinker, the one place it decides whether to go on
(:mod:`.hypothesis_compat`, which holds every use of Hypothesis' internals): :func:`budgeted`
sets it for the calling thread only, while a run is on, and says which clauses it cut short.
No shrinking is a budget of 0, not Hypothesis' shrink phase turned off: without that phase
Hypothesis stops looking at the first failure, and the run would report one clause, not all.

What a run puts to the test must not depend on how long it shrinks either: the runs that
shrink a counterexample, and the replays of the shrunk ones, are no evidence that a clause
held (:meth:`Cut.shrinking` tells the run as its shrink phase begins); a failure they find is
kept. While a budget is set, a run also generates all of its examples even after a failure
(Hypothesis stops soon after the first ones, to start shrinking): which clauses a run puts to
the test must not depend on how early another clause broke, and every broken clause found by
generation is reported at once. The same holds after failures replayed from an example
database, where Hypothesis would not generate at all: the seeds of a campaign share one
database, and each must put the store to the test, not only replay what another found.

Example::

    with budgeted(Shrinking(per_clause_s=2.0, total_s=10.0)) as cut:
        run_state_machine_as_test(machine, settings=settings(...))
    cut.clauses  # the clauses whose counterexample is not minimal
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from .hypothesis_compat import clause_of, install


@attrs.frozen
class Shrinking:
    """How hard to shrink: each clause's shrinking stops after ``per_clause_s`` seconds and all
    of it after ``total_s`` (None: no limit; 0: none, the first counterexample as found)."""

    per_clause_s: float | None = None
    total_s: float | None = None

    def __attrs_post_init__(self) -> None:
        for name in ("per_clause_s", "total_s"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise ValueError(f"a shrink budget must be 0 seconds or more, not {value:g}")

    @classmethod
    def parse(cls, text: str) -> Shrinking:
        """``"5"`` (5 s per clause), ``"5/20"`` (and 20 s in all), ``"none"`` (no limit) or
        ``"0"`` (as soon as a clause fails: no shrinking). Raises ValueError."""
        if text.strip().lower() in ("none", "unlimited"):
            return cls()
        per, _, total = text.partition("/")
        try:
            per_s = float(per)
            total_s = float(total) if total else None
        except ValueError:
            raise ValueError(
                f"a shrink budget is SECONDS or SECONDS/TOTAL_SECONDS (or none), not {text!r}"
            ) from None
        return cls(per_clause_s=per_s, total_s=total_s)

    def describe(self) -> str:
        """As ``--shrink-budget`` reads it back."""
        if self.per_clause_s is None and self.total_s is None:
            return "none"
        per = "none" if self.per_clause_s is None else f"{self.per_clause_s:g}"
        return per if self.total_s is None else f"{per}/{self.total_s:g}"


UNLIMITED = Shrinking()


@attrs.define
class Cut:
    """What a budget did during one run: the clauses whose shrinking it stopped, a
    ``started(clause)`` callback told as each clause's shrinking begins and a ``begins()``
    callback told as the run's shrink phase begins (its generation is over)."""

    policy: Shrinking
    started: Callable[[str], None] | None = None
    begins: Callable[[], None] | None = None
    clauses: set[str] = attrs.Factory(set)
    _begun: dict[int, tuple[float, str]] = attrs.Factory(dict)
    _first: float | None = None

    def shrinking(self) -> None:
        """The run's shrink phase begins."""
        if self.begins is not None:
            self.begins()

    def tick(self, shrinker: Any) -> bool:
        """Called after each test run of ``shrinker``: True when its clause's time is up."""
        now = time.perf_counter()
        key = id(shrinker)
        if key not in self._begun:
            clause = clause_of(shrinker)
            self._begun[key] = (now, clause)
            if self._first is None:
                self._first = now
            if self.started is not None:
                self.started(clause)
        began, clause = self._begun[key]
        policy = self.policy
        over = ((policy.per_clause_s is not None and now - began > policy.per_clause_s)
                or (policy.total_s is not None and self._first is not None
                    and now - self._first > policy.total_s))
        if over:
            self.clauses.add(clause)
        return over


_active = threading.local()


def _clock() -> Cut | None:
    cut: Cut | None = getattr(_active, "cut", None)
    return cut


install(_clock)


@contextmanager
def budgeted(policy: Shrinking, started: Callable[[str], None] | None = None,
             begins: Callable[[], None] | None = None) -> Iterator[Cut]:
    """Run the body with ``policy``'s budget on every shrink this thread makes (``started``
    and ``begins``: :class:`Cut`'s callbacks)."""
    cut = Cut(policy, started, begins)
    previous = getattr(_active, "cut", None)
    _active.cut = cut
    try:
        yield cut
    finally:
        _active.cut = previous
