"""The pictures of a counterexample, as layout data the HTML template draws as SVG.

:func:`timeline` lays out a sequential counterexample (a :class:`TraceStep` list): simulated
time runs left to right, one lane per actor (owner, worker, client), each call a mark on its
lane, each lease a bar from the call that granted it to its expiry, each clock move a dashed
line with what it did, and the step where the store and the model differ highlighted with both
answers. Simulated time is shown *in order*, not to scale: steps at one ms stand side by side
(a counterexample often makes a dozen calls at one instant), and the gap a clock move opens is
labelled with its size. A lease's expiry falls where the clock reached it (between the last
step before and the first step at or after it), or past the right edge when the trace ends
first. A long counterexample is folded: the picture draws the :data:`SHOWN` steps that lead to
the differing one and says which it left out (all stay in the report's numbered list).

:func:`intervals` lays out a concurrent run that is not linearizable (a checker
:class:`~fencepost.model.linearizability.verdict.Counterexample`), as Porcupine draws one:
real time to scale, one lane per process, each call an interval from invocation to return
(open-ended when it never returned), those of the longest linearizable prefix numbered in
their order, and the call that could not be placed marked with the answer the store gave and
the answers the model allowed.

Which calls grant a lease is read from the answers, for any contract: a call that changes
something (not ``model.pure``) and answered ok with a ``lease_until`` or ``expires_at``
field (at any depth of the answer's records) holds a lease to that ms; failing such a field, a
``lease_ms`` argument gives the call's own time (its ``now_ms`` argument, else the step's) plus
``lease_ms``: a call made at another time than the kit's clock (``now_ms=-1``) is drawn with the
lease the store computed, none when it ended before the step. Every text here is cleaned
(:mod:`fencepost.reports.text`); the template escapes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from fencepost.model.linearizability.verdict import Counterexample
from fencepost.scenarios.trace import TraceStep
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Ok, Outcome, agrees

from .text import clean_line

LEFT = 120
"""Room for the lane names."""
SLOT = 34
"""Width of one step, at the least (a short trace's steps are wider, up to :data:`MAX_SLOT`,
so that the picture is :data:`WIDTH` wide)."""
MAX_SLOT = 90
LANE = 46
"""Height of one lane."""
TOP = 54
"""Room above the lanes for the time axis."""
CALLOUT = 64
"""Room below the lanes for the differing step's two answers."""
WIDTH = 960
"""Width of the intervals picture."""
SHOWN = 24
"""The most steps a timeline draws: a longer counterexample is folded to the steps that lead to
the differing one (every step stays in the report's numbered list)."""
AFTER = 3
"""Steps drawn after the differing one, when the trace goes on."""

EXPIRY_FIELDS = ("lease_until", "expires_at")
"""Answer fields that hold a lease's expiry (ms)."""

_WORLD = frozenset({"clock", "world"})


@attrs.frozen
class Lane:
    name: str
    y: int


@attrs.frozen
class Bar:
    """A lease (or an interval): from ``x1`` to ``x2`` on the lane at ``y``; ``open_end``
    when it runs past the picture (the trace ended first, or the call never returned)."""

    y: int
    x1: float
    x2: float
    label: str
    open_end: bool = False
    kind: str = "lease"
    order: int = 0


@attrs.frozen
class Mark:
    """A call: step ``number`` at ``x`` on the lane at ``y``; ``kind`` is ``ok``, ``err``,
    ``crash`` or ``none``; ``differs`` on the step the store and the model disagree at."""

    x: float
    y: int
    number: int
    kind: str
    title: str
    differs: bool = False


@attrs.frozen
class Tick:
    """A vertical line at ``x``: a clock move (``clock``), a kill or a reopen."""

    x: float
    label: str
    kind: str


@attrs.frozen
class Picture:
    """Everything the template draws for one counterexample."""

    width: int
    height: int
    lanes: tuple[Lane, ...]
    bars: tuple[Bar, ...]
    marks: tuple[Mark, ...]
    ticks: tuple[Tick, ...]
    times: tuple[Tick, ...]
    """The time axis: the ms each run of steps at one time starts at."""
    highlight: Mark | None = None
    expected: str = ""
    actual: str = ""
    axis: str = ""


def differing(trace: Sequence[TraceStep]) -> int:
    """The 1-based number of the last step at which the store and the model differ, or 0."""
    for number in range(len(trace), 0, -1):
        s = trace[number - 1]
        if s.expected is not None and s.actual is not None and not agrees(s.expected, s.actual):
            return number
    return 0


def shown_steps(length: int, worst: int) -> tuple[int, int]:
    """The steps a timeline of ``length`` steps draws, as ``[start, end)`` indexes: all of them
    up to :data:`SHOWN`, else the last :data:`SHOWN` up to :data:`AFTER` past the differing
    step ``worst`` (1-based; 0: none differs, the last ones)."""
    end = min(length, worst + AFTER) if worst else length
    return max(0, end - SHOWN), end


def timeline(trace: Sequence[TraceStep],
             pure: Callable[[Any, Any], bool] | None = None) -> Picture:
    """The timeline of a sequential counterexample (see the module's docstring), folded to the
    steps around the differing one when it is long (:func:`shown_steps`): a lease granted by a
    folded step and still running is drawn from the left edge."""
    whole = trace
    worst = differing(whole)
    start, end = shown_steps(len(whole), worst)
    trace = whole[start:end]
    names: list[str] = []
    for s in trace:
        for name in _lanes_of(s):
            if name not in names:
                names.append(name)
    lanes = tuple(Lane(clean_line(n, 60), TOP + i * LANE + LANE // 2) for i, n in enumerate(names))
    y_of = {n: lane.y for n, lane in zip(names, lanes, strict=True)}
    bottom = TOP + len(lanes) * LANE
    slot = max(SLOT, min(MAX_SLOT, (WIDTH - LEFT - 2 * SLOT) / max(len(trace), 1)))
    x_of = [LEFT + (i + 0.5) * slot for i in range(len(trace))]
    right = LEFT + len(trace) * slot + SLOT

    ticks: list[Tick] = []
    times: list[Tick] = []
    marks: list[Mark] = []
    bars: list[Bar] = []
    last_at: int | None = None
    highlight: Mark | None = None
    for k, s in enumerate(whole[:start], 1):  # folded: their leases still running
        if s.op is None or _lane(s) not in y_of:
            continue
        until = _lease_until(s.op, s.actual if s.actual is not None else s.expected, s.at, pure)
        if until is not None and trace and until > trace[0].at:
            x2, open_end = _x_at(trace, x_of, slot, until, right)
            bars.append(Bar(y_of[_lane(s)], LEFT, max(x2, LEFT + 4), clean_line(
                f"lease until {until} ms (granted at step {k}, not drawn)", 80), open_end))
    for i, s in enumerate(trace):
        x = x_of[i]
        number = start + i + 1
        if s.at != last_at:
            times.append(Tick(x - slot / 2, _ms(s.at, last_at), "time"))
            last_at = s.at
        if s.op is None:
            if s.event == "kill" and s.subject in y_of:
                marks.append(Mark(x, y_of[s.subject], number, "kill",
                                  clean_line(f"#{number} {s.note}", 300)))
            ticks.append(Tick(x, clean_line(s.note or s.event, 60), s.event or "note"))
            continue
        y = y_of[_lane(s)]
        answer = s.actual if s.actual is not None else s.expected
        mark = Mark(x, y, number, _kind(answer), clean_line(_title(number, s), 600),
                    differs=number == worst)
        marks.append(mark)
        if mark.differs:
            highlight = mark
        until = _lease_until(s.op, answer, s.at, pure)
        if until is not None:
            x2, open_end = _x_at(trace, x_of, slot, until, right)
            bars.append(Bar(y, x, max(x2, x + 4), clean_line(f"lease until {until} ms", 80),
                            open_end))
    expected = actual = ""
    if worst:
        s = whole[worst - 1]
        expected, actual = clean_line(str(s.expected), 300), clean_line(str(s.actual), 300)
    folded = "".join([
        f"; steps 1-{start} not drawn" if start else "",
        f"; steps {end + 1}-{len(whole)} not drawn" if end < len(whole) else "",
        " (every step is in the numbered list)" if start or end < len(whole) else ""])
    return Picture(
        width=int(right + SLOT), height=bottom + CALLOUT, lanes=lanes, bars=tuple(bars),
        marks=tuple(marks), ticks=tuple(ticks), times=tuple(times), highlight=highlight,
        expected=expected, actual=actual,
        axis="simulated time, in order (steps at one ms side by side; a clock move's size is "
             "its label)" + folded)


def _lanes_of(s: TraceStep) -> Iterator[str]:
    if s.op is not None:
        yield _lane(s)
    elif s.event == "kill" and s.subject:
        yield s.subject


def _lane(s: TraceStep) -> str:
    return s.actor if s.actor not in _WORLD else "world"


def _ms(at: int, before: int | None) -> str:
    if before is None:
        return f"{at} ms"
    return f"+{at - before} ms" if at > before else f"{at} ms"


def _kind(answer: Outcome | None) -> str:
    if answer is None:
        return "none"
    return "ok" if isinstance(answer, Ok) else type(answer).__name__.lower()


def _title(number: int, s: TraceStep) -> str:
    assert s.op is not None
    text = f"#{number} [{s.at} ms] {s.actor}: {s.op.describe()}"
    if s.expected is not None and s.actual is not None and not agrees(s.expected, s.actual):
        return f"{text} | model: {s.expected} | store: {s.actual}"
    answer = s.actual if s.actual is not None else s.expected
    return f"{text} -> {answer}" if answer is not None else text


def _lease_until(op: Op, answer: Outcome | None, at: int,
                 pure: Callable[[Any, Any], bool] | None) -> int | None:
    """The ms the lease this call was granted lasts to, or None (see the module's docstring)."""
    if not isinstance(answer, Ok) or (pure is not None and pure(op, answer)):
        return None
    found = _expiry(answer.value, 3)
    if found is None:
        lease_ms = getattr(op, "lease_ms", None)
        now_ms = getattr(op, "now_ms", None)
        since = now_ms if isinstance(now_ms, int) and not isinstance(now_ms, bool) else at
        if isinstance(lease_ms, int) and not isinstance(lease_ms, bool) and lease_ms > 0:
            found = since + lease_ms
    return found if found is not None and found > at else None


def _expiry(value: Any, depth: int) -> int | None:
    if depth < 0 or not attrs.has(type(value)):
        return None
    for name in EXPIRY_FIELDS:
        found = getattr(value, name, None)
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    for field in attrs.fields(type(value)):
        inner = _expiry(getattr(value, field.name), depth - 1)
        if inner is not None:
            return inner
    return None


def _x_at(trace: Sequence[TraceStep], x_of: list[float], slot: float, ms: int,
          right: float) -> tuple[float, bool]:
    """Where ``ms`` falls on the axis: at the first step at or after it (its left edge), part
    way into the gap before it, or past ``right`` when the trace ends before ``ms``."""
    previous: tuple[int, float] | None = None
    for s, x in zip(trace, x_of, strict=True):
        if s.at >= ms:
            left = x - slot / 2
            if s.at == ms or previous is None:
                return left, False
            at0, x0 = previous
            return x0 + (left - x0) * (ms - at0) / (s.at - at0), False
        previous = (s.at, x + slot / 2)
    return right, True


EARLIER = 10
"""Earlier events of the partition drawn before its failing segment (as in the steps list)."""


def intervals(cx: Counterexample) -> Picture:
    """The failing partition of a concurrent run as intervals per process (see the module's
    docstring). The last :data:`EARLIER` events of the partition's earlier segments and the
    longest linearizable prefix are numbered in their linearization order, as the numbered
    steps are; the event that could not be placed comes next; the segment's other events are
    drawn unnumbered."""
    earlier = cx.before[-EARLIER:]
    order = {id(e): k for k, e in enumerate((*earlier, *cx.prefix), 1)}
    blocked_number = len(order) + 1
    events = sorted({id(e): e for e in (*earlier, *cx.events)}.values(), key=lambda e: e.invoked)
    names: list[str] = []
    for e in events:
        if e.process not in names:
            names.append(e.process)
    lanes = tuple(Lane(clean_line(n, 60), TOP + i * LANE + LANE // 2) for i, n in enumerate(names))
    y_of = {n: lane.y for n, lane in zip(names, lanes, strict=True)}
    start = min(e.invoked for e in events)
    end = max(e.completed if e.completed is not None else e.invoked for e in events)
    span = max(end - start, 1)
    inner = WIDTH - LEFT - 40

    def x(t: int) -> float:
        return LEFT + inner * (t - start) / span

    earlier_ids = {id(e) for e in earlier}
    bars: list[Bar] = []
    marks: list[Mark] = []
    highlight: Mark | None = None
    for e in events:
        y = y_of[e.process]
        x1 = x(e.invoked)
        x2, open_end = (x(e.completed), False) if e.completed is not None else (WIDTH - 30, True)
        blocked = e is cx.blocked
        number = blocked_number if blocked else order.get(id(e), 0)
        kind = ("blocked" if blocked else "earlier" if id(e) in earlier_ids
                else "placed" if number else "left")
        answer = "no answer" if e.outcome is None else str(e.outcome)
        title = clean_line(f"{'#' + str(number) + ' ' if number else ''}{e.process}: "
                           f"{e.op.describe()} -> {answer}", 600)
        bars.append(Bar(y, x1, max(x2, x1 + 3), title, open_end, kind, number))
        mark = Mark(x1, y, number, kind, title, differs=blocked)
        marks.append(mark)
        if blocked:
            highlight = mark
    allowed = ", ".join(str(o) for o in cx.expected) or "none (the model cannot read the call)"
    shown = "no answer" if cx.blocked.outcome is None else str(cx.blocked.outcome)
    return Picture(
        width=WIDTH, height=TOP + len(lanes) * LANE + CALLOUT, lanes=lanes, bars=tuple(bars),
        marks=tuple(marks), ticks=(), times=(
            Tick(LEFT, "0 ns", "time"), Tick(LEFT + inner, f"{span:,} ns", "end")),
        highlight=highlight, expected=clean_line(allowed, 300), actual=clean_line(shown, 300),
        axis="real time since the first call drawn, to scale; numbers: the linearization order")
