"""How much of a transition tour's bounded graph ran on the store (see :mod:`.tour`): a value
of its own, light to import, for the reports that show it and read it back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class TourCoverage:
    """How much of the bounded graph ran on the store.

    ``states``/``edges``: the bounded graph's (``complete`` False: the exploration stopped at
    its state budget); ``planned``: the edges the plan's sequences run; ``run``: those run on
    the store with every answer and read-back agreeing (a sequence stops at its first
    difference); ``sequences``/``steps``: how many the plan has and the moves they make;
    ``clauses``: clause id -> (edges whose decision names it, of those run on the store);
    ``stopped``: why the tour did not run to its end, if it did not."""

    scope: str
    bound: str
    states: int
    edges: int
    planned: int
    run: int
    sequences: int
    steps: int
    seconds: float
    complete: bool = True
    clauses: Mapping[str, tuple[int, int]] = attrs.field(factory=dict)
    stopped: str = ""

    @property
    def finished(self) -> bool:
        return self.complete and not self.stopped and self.run == self.edges

    @property
    def shortfall(self) -> str:
        """Why a tour without a failure is not a pass of every edge ("": it is one)."""
        if self.stopped:
            return self.stopped
        if not self.complete:
            return "the exploration stopped at its state budget: the graph is a part of the " \
                   "bounded one"
        if self.run < self.edges:
            return (f"{self.edges - self.run:,} of {self.edges:,} edges did not run on the "
                    "store (it took other answers the model allows, and the walk could not "
                    "lead it back to them)")
        return ""

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "bound": self.bound, "states": self.states,
                "edges": self.edges, "planned": self.planned, "run": self.run,
                "sequences": self.sequences, "steps": self.steps,
                "seconds": round(self.seconds, 3), "complete": self.complete,
                "stopped": self.stopped,
                "clauses": {c: {"edges": n, "run": r} for c, (n, r) in self.clauses.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TourCoverage:
        return cls(str(data["scope"]), str(data["bound"]), int(data["states"]),
                   int(data["edges"]), int(data["planned"]), int(data["run"]),
                   int(data["sequences"]), int(data["steps"]), float(data["seconds"]),
                   bool(data.get("complete", True)),
                   {str(c): (int(v["edges"]), int(v["run"]))
                    for c, v in dict(data.get("clauses") or {}).items()},
                   str(data.get("stopped", "")))

    def describe(self) -> str:
        """One line: the scope, the graph, what ran."""
        graph = f"{self.states:,} states, {self.edges:,} edges"
        if not self.complete:
            graph += " (exploration stopped at its state budget)"
        line = (f"tour ({self.scope}): {graph}; {self.sequences:,} sequences, "
                f"{self.steps:,} moves; {self.run:,} of {self.edges:,} edges run on the store")
        return line + (f"; stopped: {self.stopped}" if self.stopped else "")
