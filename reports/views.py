"""What every writer shows of a verdict: its mark, its reason, its trace and its replay script,
each already cleaned (:mod:`fencepost.reports.text`), so no writer emits a raw adapter string."""

from __future__ import annotations

from fencepost.scenarios.evidence import NOT_MINIMAL, Failure
from fencepost.scenarios.kinds import kind, kind_of
from fencepost.scenarios.trace import TraceStep, trace_to_code
from fencepost.scenarios.trace import render_trace as _render_trace

from .text import clean_block
from .verdict import FAIL, PASS, UNKNOWN, UNSUPPORTED, ClauseVerdict, RunReport

MARK = {PASS: "pass", FAIL: "FAIL", UNKNOWN: "unknown", UNSUPPORTED: "unsupported"}


def mark(v: ClauseVerdict) -> str:
    """The verdict as a table shows it (``pass (weak)`` for a pass that missed a situation)."""
    return "pass (weak)" if v.weak else MARK.get(v.status, v.status)


def reason_of(v: ClauseVerdict) -> str:
    """The reason a report gives (uncleaned): for a weak pass, the situations it missed."""
    if v.weak:
        return "situations never reached: " + "; ".join(v.unreached)
    return v.reason


def evidence_of(v: ClauseVerdict) -> str:
    """The evidence a table shows: the count, and for a clause the concurrent run checks how
    many of that run's calls faulted (``297 (6 of 303 calls faulted)``): they are no evidence."""
    c = v.concurrent
    if c is None:
        return f"{v.evidence:,}"
    return f"{v.evidence:,} ({c.faulted:,} of {c.calls:,} calls faulted)"


def concurrent_line(report: RunReport) -> str | None:
    """The concurrent run's calls in one line (``303 calls: 297 answered, 6 faulted (6
    backend_unavailable); at most 3 may fault``), or None when there was no run."""
    c = report.concurrent
    if c is None:
        return None
    limit = "" if c.allowed is None else f"; at most {c.allowed:,} may fault"
    return c.describe() + limit


def tour_line(report: RunReport) -> str | None:
    """The transition tour in one line (its scope, the bounded graph's states and edges, the
    sequences and moves, the edges run on the store), or None when it did not run."""
    return None if report.tour is None else report.tour.describe()


def render_trace(steps: tuple[TraceStep, ...] | list[TraceStep]) -> str:
    """The numbered steps of a counterexample, cleaned (secrets masked, invisible characters
    escaped, each line and the whole cut to their limits)."""
    return clean_block(_render_trace(steps))


def failure_steps(failure: Failure) -> str:
    """The numbered steps of ``failure``'s counterexample, cleaned as :func:`render_trace`
    cleans them, after a line saying so when they are not minimal."""
    return ("" if failure.minimal else NOT_MINIMAL) + render_trace(failure.trace)


def replay_code(v: ClauseVerdict, report: RunReport) -> str | None:
    """The counterexample as a script, cleaned, for sequential checks (a race is not
    replayable)."""
    if v.failure is None:
        return None
    found_by = kind(kind_of(v.failure.check))
    if found_by is None or not found_by.replayable:
        return None
    return clean_block(trace_to_code(v.failure.trace, report.contract, report.adapter))


def examples_words(report: RunReport) -> str:
    """What ``report.examples`` counts, in words: Hypothesis makes one state-machine run per
    example it generates and one per replay while shrinking a failure, so the figure can
    exceed the profile's number of examples."""
    return f"{report.examples:,} state-machine runs (examples and shrink replays)"
