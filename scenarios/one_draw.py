"""One draw per step: a state machine's rules and their arguments laid out on one integer.

A contract's state machine lists what a step may do as :class:`Pick`\\ s: the method to call,
its weight (its share of the steps), each argument's values (simplest first) and a capability
it needs. A :class:`Table` built from them for a run's capabilities lays the rules out, in the
order given, on the quantiles of one integer draw (:data:`CODES`), each on a share of [0, 1)
equal to its weight, and within a rule's share its argument combinations in order (mixed radix,
the first argument the most significant). A step is then one choice Hypothesis makes, instead
of one for the rule (among rules filtered by their preconditions) and one per argument; and
Hypothesis' stateful runner draws it alone (:func:`~.hypothesis_compat.one_rule_steps`), without
first drawing which rules are enabled and which of them runs.

Shrinking moves a step's code toward 0: toward the first rule, and within a rule toward its
first combination; deleting steps works as with plain rules. The table's first rule should be
a cheap, useful one (a read), never a reopen, since every shrunk step tends to it; its last a
cheap one too (a clock move), since the engine's largest constants land there.

A contract's machine derives from :class:`OneDrawMachine` and names its table; each pick's
rule is a plain method of the machine. Example::

    class Machine(OneDrawMachine):
        picks = (Pick("get", 20, (("i", (0, 1, 2)),)),
                 Pick("reopen", 3, needs="durable"),
                 Pick("advance", 10, (("ms", (1, 2, 5)),)))

        def get(self, i: int) -> None: ...
        def reopen(self) -> None: ...
        def advance(self, ms: int) -> None: ...
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Collection, Sequence
from itertools import accumulate
from typing import Any, ClassVar

import attrs
from hypothesis import strategies as st
from hypothesis.stateful import rule

from .hypothesis_compat import one_rule_steps, quantile
from .machine import WorldMachine

CODE_TOP = 2**64 - 1
CODES = st.integers(0, CODE_TOP)
"""What one step draws."""


@attrs.frozen
class Pick:
    """One rule of a table: ``rule`` (a method of the machine) on a share ``weight`` of the
    steps, called with one combination of ``args`` (each a name and its values, simplest
    first); left out of a run whose store lacks the capability ``needs``."""

    rule: str
    weight: float
    args: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    needs: str = ""

    @property
    def combinations(self) -> int:
        return math.prod(len(values) for _, values in self.args)


class Table:
    """The picks a run can make (those whose capability the store has), laid out on the
    quantiles of a step's code, their weights made to add up to 1."""

    def __init__(self, picks: Sequence[Pick], capabilities: Collection[str]) -> None:
        kept = tuple(p for p in picks if not p.needs or p.needs in capabilities)
        if not kept:
            raise ValueError("a table needs at least one pick the store can make")
        total = sum(p.weight for p in kept)
        self.picks = kept
        self.ends = tuple(accumulate(p.weight / total for p in kept))
        self.combinations = tuple(p.combinations for p in kept)  # worked out once, not per step

    def decode(self, code: int) -> tuple[str, dict[str, Any]]:
        """The rule and arguments of the step drawn as ``code``."""
        at = quantile(code, CODE_TOP)
        k = min(bisect_right(self.ends, at), len(self.picks) - 1)
        start = self.ends[k - 1] if k else 0.0
        pick, combinations = self.picks[k], self.combinations[k]
        within = (at - start) / (self.ends[k] - start)
        index = min(int(within * combinations), combinations - 1)
        args: dict[str, Any] = {}
        for name, values in reversed(pick.args):
            index, digit = divmod(index, len(values))
            args[name] = values[digit]
        return pick.rule, args

    def share(self, rule: str) -> float:
        """The share of the steps stated for ``rule`` (0 when it is left out)."""
        for k, pick in enumerate(self.picks):
            if pick.rule == rule:
                return self.ends[k] - (self.ends[k - 1] if k else 0.0)
        return 0.0


class OneDrawMachine(WorldMachine):
    """A contract's state machine whose every step is one draw (:data:`CODES`) read through
    its table :attr:`picks`, the picks its store's capabilities allow."""

    picks: ClassVar[tuple[Pick, ...]] = ()

    def __init__(self) -> None:
        super().__init__()
        self.table = Table(self.picks, self.world.capabilities)
        one_rule_steps(self)

    @rule(code=CODES)
    def step(self, code: int) -> None:
        """One step: the rule and arguments ``code`` stands for in :attr:`picks`."""
        name, args = self.table.decode(code)
        getattr(self, name)(**args)
