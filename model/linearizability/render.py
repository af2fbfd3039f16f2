"""A counterexample as text a person reads in seconds (Porcupine's visualization, in a
terminal): the partition's intervals per process on a common time line, the order of earlier
events that leads to the failing segment, the longest linearizable prefix, and the event that
could not be placed after it with what the model allowed there.
"""

from __future__ import annotations

from ..history import Event
from .verdict import Counterexample, Verdict

_BAR = 40
_BEFORE_SHOWN = 12


def render_counterexample(target: Verdict | Counterexample) -> str:
    """A readable account of a counterexample (or of a verdict's smallest one): the partition's
    intervals per process on a common time line, the longest linearizable prefix, and the event
    that could not be placed after it with what the model allowed there."""
    if isinstance(target, Verdict):
        cx = target.counterexample
        if cx is None:
            return target.summary()
        head = target.summary() + "\n\n"
    else:
        cx, head = target, ""
    number = {id(e): k for k, e in enumerate(cx.events, 1)}
    return "\n".join([*_intervals(cx, number, head), *_before(cx), *_prefix(cx, number),
                      *_blocked(cx, number)])


class _TimeLine:
    """The events' intervals drawn on one bar of ``_BAR`` cells, from the first invocation."""

    def __init__(self, events: tuple[Event, ...]) -> None:
        self.start = min(e.invoked for e in events)
        end = max(max(e.invoked, e.completed or e.invoked) for e in events)
        self.span = max(end - self.start, 1)

    def col(self, t: int) -> int:
        """The cell of instant ``t``."""
        return min(_BAR - 1, (t - self.start) * (_BAR - 1) // self.span)

    def bar(self, e: Event) -> str:
        """``[===]`` from call to return, ``===>`` with no return or an indeterminate one."""
        cells = [" "] * _BAR
        first = self.col(e.invoked)
        last = _BAR - 1 if e.completed is None else self.col(e.completed)
        for x in range(first, last + 1):
            cells[x] = "="
        cells[first] = "["
        if e.completed is None or e.indeterminate:
            cells[last] = ">" if last > first else "?"
        else:
            cells[last] = "]" if last > first else "|"
        return "".join(cells)

    def when(self, e: Event) -> str:
        """The call's and the return's instants, in ns since the first invocation."""
        done = "never" if e.completed is None else str(e.completed - self.start)
        return f"{e.invoked - self.start:>8} .. {done:<8}"


def _answer(e: Event) -> str:
    if e.outcome is None:
        return "(no answer: indeterminate)"
    return str(e.outcome) + ("  (indeterminate)" if e.indeterminate else "")


def _intervals(cx: Counterexample, number: dict[int, int], head: str) -> list[str]:
    """The title line, then each process's calls as intervals with their answers."""
    where = "the whole history" if cx.partition is None else f"partition {cx.partition!r}"
    if cx.before:
        where += f", the segment after its first {len(cx.before)} events"
    lines = [
        f"{head}Not linearizable: {where} ({len(cx.events)} events, "
        f"{len(cx.by_process())} processes)",
        "",
        "Intervals per process (ns since the first invocation; [===] call to return, "
        "===> no return or indeterminate):",
    ]
    line = _TimeLine(cx.events)
    width = max(len(p) for p in cx.by_process())
    for process, mine in cx.by_process().items():
        for e in mine:
            mark = "  <-- could not be placed" if e is cx.blocked else ""
            lines.append(f"  {process:<{width}}  #{number[id(e)]:<3} |{line.bar(e)}| "
                         f"{line.when(e)} {e.op.describe()}{mark}")
            lines.append(f"  {'':<{width}}        -> {_answer(e)}")
    return lines


def _before(cx: Counterexample) -> list[str]:
    """The end of the order of earlier segments that leads to this one (none: nothing)."""
    if not cx.before:
        return []
    shown = cx.before[-_BEFORE_SHOWN:]
    lines = ["", f"Before this segment, {len(cx.before)} earlier events linearize in this "
             f"order (the last {len(shown)} shown), ending where the segment starts:"]
    for k, e in enumerate(shown, len(cx.before) - len(shown) + 1):
        lines.append(f"  {k:>5}. {e.process}: {e.op.describe()} -> {_answer(e)}")
    return lines


def _prefix(cx: Counterexample, number: dict[int, int]) -> list[str]:
    """The longest linearizable prefix, in its order."""
    lines = ["", f"Longest linearizable prefix ({len(cx.prefix)} of {len(cx.events)} events):"]
    if not cx.prefix:
        lines.append("  (none: not even the first event can be placed)")
    for k, e in enumerate(cx.prefix, 1):
        lines.append(f"  {k:>3}. #{number[id(e)]} {e.process}: {e.op.describe()} -> "
                     f"{_answer(e)}")
    return lines


def _blocked(cx: Counterexample, number: dict[int, int]) -> list[str]:
    """The event that could not be placed: the store's answer, what the model allows, and
    which other events could have gone before it."""
    b = cx.blocked
    lines = [
        "",
        f"Could not be placed next: #{number[id(b)]} {b.process}: {b.op.describe()}",
        f"  the store answered: {_answer(b)}",
    ]
    if cx.expected:
        allowed = " | ".join(str(o) for o in cx.expected)
        lines.append(f"  after the prefix the model allows: {allowed}")
    else:
        lines.append("  after the prefix the model cannot read this op (it names an id not "
                     "minted yet)")
    pending = [e for e in cx.events if e is not b and all(e is not p for p in cx.prefix)
               and e.invoked <= (b.completed if b.completed is not None else e.invoked)]
    if pending:
        lines.append("  other events not in the prefix that could go before it (every order of "
                     "them was tried): " + ", ".join(f"#{number[id(e)]}" for e in pending))
    return lines
