"""How hard a run shrinks the counterexamples its state machine finds, and a clock on it.

Hypothesis shrinks every distinct failure of a run in turn (one exception class per clause),
the one with the shortest choice sequence first: the failure reached soonest, most often the
root cause of the others. A store that breaks many clauses used to wait for every one of them
to be shrunk to its minimum. :class:`Shrinking` bounds that: not at all (``--no-shrink``: the
raw counterexamples at once), or within a number of seconds per clause and in all
(``--shrink-budget``). A failure is never hidden by a budget: when shrinking stops early, the
smallest counterexample found so far is reported, marked as not minimal.

The clock is a hook into Hypothesis' shrinker, the one place it decides whether to go on
(``Shrinker.check_calls``, called after every test run it makes): :func:`budgeted` replaces it
for the calling thread only, while a run is on, and says which clauses it cut short. No
shrinking is a budget of 0, not Hypothesis' shrink phase turned off: without that phase
Hypothesis stops looking at the first failure, and the run would report one clause, not all.

A second hook (``ConjectureRunner.should_generate_more``) makes a run generate all of its
examples even after a failure (Hypothesis stops soon after the first ones, to start
shrinking): which clauses a run puts to the test must not depend on how early another clause
broke, and every broken clause found by generation is reported at once. Two more
(``ConjectureRunner.reuse_existing_test_cases`` and ``generate_new_test_cases``) do the same
after failures replayed from an example database, where Hypothesis would not generate at
all: the seeds of a campaign share one database, and each must put the store to the test,
not only replay what another found.

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
from hypothesis.internal.conjecture import engine as _engine
from hypothesis.internal.conjecture import shrinker as _shrinker


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
    """What a budget did during one run: the clauses whose shrinking it stopped, and a
    ``started(clause)`` callback told as each clause's shrinking begins."""

    policy: Shrinking
    started: Callable[[str], None] | None = None
    clauses: set[str] = attrs.Factory(set)
    _begun: dict[int, tuple[float, str]] = attrs.Factory(dict)
    _first: float | None = None

    def tick(self, shrinker: Any) -> bool:
        """Called after each test run of ``shrinker``: True when its clause's time is up."""
        now = time.perf_counter()
        key = id(shrinker)
        if key not in self._begun:
            clause = _clause_of(shrinker)
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


def _clause_of(shrinker: Any) -> str:
    origin = getattr(shrinker.shrink_target, "interesting_origin", None)
    exc_type = getattr(origin, "exc_type", None)
    return str(getattr(exc_type, "clause", "") or getattr(exc_type, "__name__", "?"))


_active = threading.local()
_original_check_calls = _shrinker.Shrinker.check_calls


def _check_calls(self: Any) -> None:
    _original_check_calls(self)
    cut: Cut | None = getattr(_active, "cut", None)
    if cut is not None and cut.tick(self):
        raise _shrinker.StopShrinking


_shrinker.Shrinker.check_calls = _check_calls  # type: ignore[method-assign]

_original_should_generate_more = _engine.ConjectureRunner.should_generate_more


def _should_generate_more(self: Any) -> bool:
    found = self.interesting_test_cases
    if getattr(_active, "cut", None) is None or not found:
        return _original_should_generate_more(self)
    # Hypothesis' own limits, as if nothing had been found yet, and no more calls than
    # examples (a store failing every example makes no valid one).
    self.interesting_test_cases = {}
    try:
        return bool(_original_should_generate_more(self)
                    and self.call_count < self.settings.max_examples)
    finally:
        self.interesting_test_cases = found


_engine.ConjectureRunner.should_generate_more = _should_generate_more  # type: ignore[method-assign]

_original_generate_new_test_cases = _engine.ConjectureRunner.generate_new_test_cases


def _generate_new_test_cases(self: Any) -> None:
    replayed = self.interesting_test_cases
    if getattr(_active, "cut", None) is None or not replayed:
        _original_generate_new_test_cases(self)
        return
    # Failures the example database replayed: Hypothesis would skip generating and report
    # them. Generate as if none had been found, then keep, per clause, the smaller of the
    # replayed and the generated counterexample (as Hypothesis keeps the smaller of two).
    self.interesting_test_cases = {}
    try:
        _original_generate_new_test_cases(self)
    finally:
        found = self.interesting_test_cases
        for origin, result in replayed.items():
            new = found.get(origin)
            if new is None or _shrinker.sort_key(result.nodes) <= _shrinker.sort_key(new.nodes):
                found[origin] = result
        self.interesting_test_cases = found


_engine.ConjectureRunner.generate_new_test_cases = (  # type: ignore[method-assign]
    _generate_new_test_cases)

_original_reuse = _engine.ConjectureRunner.reuse_existing_test_cases


def _reuse_existing_test_cases(self: Any) -> None:
    _original_reuse(self)
    if getattr(_active, "cut", None) is not None:
        # Hypothesis ends the run at once when a replayed failure had been shrunk before;
        # this run goes on to generate (see _generate_new_test_cases).
        self.reused_previously_shrunk_test_case = False


_engine.ConjectureRunner.reuse_existing_test_cases = (  # type: ignore[method-assign]
    _reuse_existing_test_cases)


@contextmanager
def budgeted(policy: Shrinking, started: Callable[[str], None] | None = None) -> Iterator[Cut]:
    """Run the body with ``policy``'s budget on every shrink this thread makes."""
    cut = Cut(policy, started)
    previous = getattr(_active, "cut", None)
    _active.cut = cut
    try:
        yield cut
    finally:
        _active.cut = previous
