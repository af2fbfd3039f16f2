"""What happened in a check, step by step, in a form a person reads and JSON can hold."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec.opaque import agree
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome, agrees, outcome_to_json


@attrs.frozen
class TraceStep:
    """One numbered line of a counterexample: who did what at which ms, and the two answers.

    ``op`` is ``None`` for world events (the clock moved, an owner died, the store reopened),
    which ``note`` describes. ``expected`` is the model's answer, ``actual`` the store's.
    """

    actor: str
    at: int
    op: Op | None = None
    note: str = ""
    expected: Outcome | None = None
    actual: Outcome | None = None
    event: str = ""  # for world events: "clock", "kill", "reopen", "open_beside"...
    subject: str = ""  # the owner killed
    bind: str = ""  # the name the answer's opaque value was bound to
    # the clause a difference here breaks, by the check's blamed_on block (in these fields
    # only, or None: any)
    blamed_on: str = ""
    blamed_fields: tuple[str, ...] | None = None

    def render(self, number: int) -> str:
        head = f"{number:>3}. [{self.at} ms] {self.actor}: "
        if self.op is None:
            return head + self.note
        line = head + self.op.describe()
        if self.expected is not None and self.actual is not None:
            if agrees(self.expected, self.actual):
                return line + f"\n       -> {self.actual}"
            line += f"\n       model: {self.expected}\n       store: {self.actual}   <-- differs"
            fields = _differing_fields(self.expected, self.actual)
            if fields:
                line += f"\n       differs in: {fields}"
        elif self.actual is not None:
            line += f"\n       store: {self.actual}"
        return line

    def to_code(self) -> str:
        """This step as a line of a replay script (see :mod:`fencepost.replay`)."""
        if self.op is not None:
            comment = f"  # model: {_short(self.expected)}" if self.expected is not None else ""
            if self.expected is not None and self.actual is not None and not agrees(
                self.expected, self.actual
            ):
                comment += f"; store: {_short(self.actual)}"
            bind = f", bind={self.bind!r}" if self.bind else ""
            if self.blamed_on:
                bind += f", blamed_on={self.blamed_on!r}"
                if self.blamed_fields is not None:
                    bind += f", fields={self.blamed_fields!r}"
            return f"r.apply({self.actor!r}, {self.op!r}{bind}){comment}"
        if self.event == "clock":
            return f"r.set_time({self.at})"
        if self.event == "kill":
            return f"r.kill({self.subject!r})"
        if self.event in ("reopen", "open_beside", "close_beside"):
            return f"r.{self.event}()"
        return f"# {self.note}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"actor": self.actor, "at": self.at}
        if self.op is not None:
            data["op"] = self.op.to_json()
        if self.note:
            data["note"] = self.note
        if self.event:
            data["event"] = self.event
        if self.subject:
            data["subject"] = self.subject
        if self.blamed_on:
            data["blamed_on"] = self.blamed_on
            if self.blamed_fields is not None:
                data["blamed_fields"] = list(self.blamed_fields)
        if self.expected is not None:
            data["expected"] = outcome_to_json(self.expected)
        if self.actual is not None:
            data["actual"] = outcome_to_json(self.actual)
        return data


def _short(outcome: Outcome | None) -> str:
    return "ok" if outcome is not None and outcome.code == "ok" else str(outcome)


def _differing_fields(expected: Outcome, actual: Outcome) -> str:
    a, b = getattr(expected, "value", None), getattr(actual, "value", None)
    if a is None or b is None or type(a) is not type(b) or not attrs.has(type(a)):
        return ""
    return ", ".join(
        f"{f.name} (model {getattr(a, f.name)!r}, store {getattr(b, f.name)!r})"
        for f in attrs.fields(type(a))
        if not agree(getattr(a, f.name), getattr(b, f.name))  # as the kit compares
    )


def render_trace(steps: tuple[TraceStep, ...] | list[TraceStep]) -> str:
    return "\n".join(s.render(i) for i, s in enumerate(steps, 1))


def trace_to_code(
    steps: tuple[TraceStep, ...] | list[TraceStep], contract: str, adapter: str
) -> str:
    """A Python script that replays ``steps`` against ``adapter`` and stops at the difference."""
    start = steps[0].at if steps else 0
    module = contract.replace("-", "_")
    lines = [
        "from fencepost.replay import Replay",
        "from fencepost.spec.opaque import Forged, Ref",
        f"from fencepost.spec.{module} import *",
        "",
        f"r = Replay({contract!r}, {adapter!r}, start_ms={start})",
    ]
    lines += [s.to_code() for s in steps]
    return "\n".join(lines)
