"""What happened in a check, step by step, in a form a person reads and JSON can hold."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome, outcome_to_json


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

    def render(self, number: int) -> str:
        head = f"{number:>3}. [{self.at} ms] {self.actor}: "
        if self.op is None:
            return head + self.note
        line = head + self.op.describe()
        if self.expected is not None and self.actual is not None:
            mark = "" if self.expected == self.actual else "   <-- differs"
            line += f"\n       model: {self.expected}\n       store: {self.actual}{mark}"
        elif self.actual is not None:
            line += f"\n       store: {self.actual}"
        return line

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"actor": self.actor, "at": self.at}
        if self.op is not None:
            data["op"] = self.op.to_json()
        if self.note:
            data["note"] = self.note
        if self.expected is not None:
            data["expected"] = outcome_to_json(self.expected)
        if self.actual is not None:
            data["actual"] = outcome_to_json(self.actual)
        return data


def render_trace(steps: tuple[TraceStep, ...] | list[TraceStep]) -> str:
    return "\n".join(s.render(i) for i, s in enumerate(steps, 1))
