"""How the calls of a concurrent history ended: answered, faulted or crashed.

A call is **answered** when the store gave a contract answer: ok, or one of the contract's error
codes. It is **faulted** when it gave none the store can be held to: no answer (it timed out or
never returned), ``backend_unavailable``, or a lost connection (an
:attr:`~fencepost.model.history.Event.indeterminate` event). A faulted call may or may not have
taken effect, so the linearizability checker lets it do either; but it is not an answer, so it
is no evidence that the store answers correctly. A call that **crashed** raised something that
is neither (a bug's exception): a wrong answer, which the checker fails.

Example::

    >>> from fencepost.model.answers import Answers
    >>> Answers(303, 297, 6, kinds=(("backend_unavailable", 6),), allowed=3).describe()
    '303 calls: 297 answered, 6 faulted (6 backend_unavailable)'
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from fencepost.spec.outcome import Crash, Err, Outcome

from .history import LOST_CRASHES, LOST_ERRORS, Event


def _kinds(kinds: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    return tuple((str(kind), int(n)) for kind, n in kinds)


@attrs.frozen
class Answers:
    """The calls of one concurrent run by how they ended. ``kinds`` are the faulted calls by
    kind (``backend_unavailable``, ``without an answer``, ``ConnectionError``...), the most
    frequent first; ``allowed`` is how many faulted calls the run allows its history before
    the history is no evidence (None: no limit applied, as when a saved history is checked
    again)."""

    calls: int
    answered: int
    faulted: int
    crashed: int = 0
    kinds: tuple[tuple[str, int], ...] = attrs.field(default=(), converter=_kinds)
    allowed: int | None = None

    @property
    def exceeded(self) -> bool:
        """More faulted calls than the run allows?"""
        return self.allowed is not None and self.faulted > self.allowed

    def describe(self) -> str:
        """``303 calls: 297 answered, 6 faulted (6 backend_unavailable)``."""
        line = f"{self.calls:,} calls: {self.answered:,} answered, {self.faulted:,} faulted"
        if self.kinds:
            line += f" ({self.faulted_by()})"
        if self.crashed:
            line += f", {self.crashed:,} crashed"
        return line

    def faulted_by(self) -> str:
        """``33 backend_unavailable, 30 ConnectionError``."""
        return ", ".join(f"{n:,} {kind}" for kind, n in self.kinds)

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "answered": self.answered, "faulted": self.faulted,
                "crashed": self.crashed, "faulted_by": dict(self.kinds),
                "allowed": self.allowed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Answers:
        allowed = data.get("allowed")
        return cls(int(data["calls"]), int(data["answered"]), int(data["faulted"]),
                   int(data.get("crashed", 0)),
                   tuple((str(k), int(n)) for k, n in dict(data.get("faulted_by") or {}).items()),
                   None if allowed is None else int(allowed))


def allowed_faults(calls: int, max_faulted: float) -> int:
    """How many of ``calls`` may fault when at most the share ``max_faulted`` may."""
    return math.floor(max_faulted * calls + 1e-9)


def answers_of(events: Iterable[Event], max_faulted: float | None = None) -> Answers:
    """The :class:`Answers` of ``events``; ``max_faulted`` (a share of the calls, 0 to 1) sets
    how many faulted calls the history allows."""
    calls = answered = crashed = 0
    kinds: Counter[str] = Counter()
    for e in events:
        calls += 1
        if e.indeterminate:
            kinds[fault_kind(e)] += 1
        elif isinstance(e.outcome, Crash):
            crashed += 1
        else:
            answered += 1
    faulted = sum(kinds.values())
    allowed = None if max_faulted is None else allowed_faults(calls, max_faulted)
    return Answers(calls, answered, faulted, crashed, tuple(kinds.most_common()), allowed)


def faulted(outcome: Outcome | None) -> bool:
    """Is ``outcome`` a fault, not an answer (none, ``backend_unavailable``, a lost
    connection)?"""
    return (outcome is None
            or (isinstance(outcome, Crash) and outcome.kind in LOST_CRASHES)
            or (isinstance(outcome, Err) and outcome.code in LOST_ERRORS))


def fault_kind(e: Event) -> str:
    """What a faulted call got: its error code or exception class, or ``without an answer``."""
    if e.outcome is None or e.completed is None:
        return "without an answer"
    return e.outcome.code.removeprefix("crash:")


__all__ = ["Answers", "allowed_faults", "answers_of", "fault_kind", "faulted"]
