"""Two figures of ``fencepost bench`` about the state machine as a user meets it.

1. **Time to verdict**: each mutant of a contract run as a plain ``check`` (profile
   quick, the command's defaults: its shrink budget, ``--jobs`` the machine's cores), the wall
   seconds until the report is there, on memory and on SQLite; per contract the median, p90
   and max. Targets: every one under :data:`VERDICT_MAX_S`, the median under
   :data:`VERDICT_MEDIAN_S`.
2. **The ceiling**: a trivial Hypothesis state machine (:class:`TrivialMachine`, ten rules that
   each draw one small integer and add it up) run with the same examples and steps as the
   contracts' machines, in the same run: the steps per second Hypothesis itself allows here, which
   the contracts' machines on the memory store are measured against (target ratio
   :data:`CEILING_TARGET`).

Example::

    rows = bench_verdicts("adk-ledger", ("memory",), limit=5)
    ceiling = ceiling_rate(examples=25, steps=30)
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from typing import TypeVar

import attrs
import hypothesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from fencepost.scenarios.collector import collecting_less
from fencepost.scenarios.said import Progress, Said

from .parallel import default_jobs
from .registry import contract_named

VERDICT_MAX_S = 20.0
VERDICT_MEDIAN_S = 10.0
CEILING_TARGET = 0.6


@attrs.frozen
class VerdictTime:
    """One mutant run as ``check`` on ``base``: the wall seconds to its report and
    how many clauses failed (0: its bug went unseen by this seed)."""

    contract: str
    name: str
    base: str
    seconds: float
    failed: int


@attrs.frozen
class VerdictSummary:
    """Time to verdict over a contract's mutants on one base."""

    contract: str
    base: str
    runs: int
    median_s: float
    p90_s: float
    max_s: float
    slowest: str

    @property
    def met(self) -> bool:
        """Every run under :data:`VERDICT_MAX_S` and the median under :data:`VERDICT_MEDIAN_S`."""
        return self.max_s < VERDICT_MAX_S and self.median_s < VERDICT_MEDIAN_S


def bench_verdicts(name: str, bases: Sequence[str], limit: int | None = None, seed: int = 1,
                   progress: Progress = lambda _: None) -> list[VerdictTime]:
    """Each mutant of ``name`` that runs on a base (spread evenly over the list
    when ``limit`` keeps only some) as ``check`` on every base of ``bases``."""
    from .api import check

    mutants = contract_named(name).mutants
    chosen = list(mutants) if limit is None else _spread(list(mutants), limit)
    times = []
    for base in bases:
        runnable = [m for m in chosen if base in m.bases]
        for k, mutant in enumerate(runnable, 1):
            progress(Said.of(f"verdict/{name}", f"{mutant.name}@{base} ({k}/{len(runnable)})"))
            started = time.perf_counter()
            report = check(name, f"mutant:{mutant.name}@{base}", seed=seed, jobs=default_jobs())
            times.append(VerdictTime(name, mutant.name, base, time.perf_counter() - started,
                                     len(report.failed())))
    return times


T = TypeVar("T")


def _spread(items: list[T], n: int) -> list[T]:
    if n >= len(items):
        return items
    step = len(items) / n
    return [items[int(k * step)] for k in range(n)]


def summarize(times: Sequence[VerdictTime]) -> list[VerdictSummary]:
    """Per contract and base: median, p90 (nearest rank) and max."""
    groups: dict[tuple[str, str], list[VerdictTime]] = {}
    for t in times:
        groups.setdefault((t.contract, t.base), []).append(t)
    out = []
    for (name, base), rows in groups.items():
        seconds = sorted(r.seconds for r in rows)
        p90 = seconds[max(0, math.ceil(0.9 * len(seconds)) - 1)]
        slowest = max(rows, key=lambda r: r.seconds)
        out.append(VerdictSummary(name, base, len(rows), statistics.median(seconds), p90,
                                  seconds[-1], slowest.name))
    return out


class _Adder(RuleBasedStateMachine):
    steps = 0

    def __init__(self) -> None:
        super().__init__()
        self.total = 0

    def add(self, n: int) -> None:
        self.total += n
        type(self).steps += 1


def _adding_rule() -> object:
    def add_one(self: _Adder, n: int) -> None:
        self.add(n)

    return rule(n=st.integers(0, 9))(add_one)


TrivialMachine: type[_Adder] = type(
    "TrivialMachine", (_Adder,), {f"r{k}": _adding_rule() for k in range(10)})
"""Ten rules, each drawing one small integer and adding it to a total: nearly all of a
step's cost is Hypothesis choosing the rule and drawing its argument."""


def ceiling_rate(examples: int, steps: int, seed: int = 1, runs: int = 3
                 ) -> tuple[int, float]:
    """(steps, seconds) of :class:`TrivialMachine` under the settings the contracts' machines
    run with (see :func:`fencepost.scenarios.machine.run_machine`): the fastest of ``runs``
    after one to warm up (Hypothesis' first run in a process pays for building its
    strategies), so the ratio against it is, if anything, too strict."""
    config = settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                      database=None, phases=(Phase.generate,),
                      suppress_health_check=list(HealthCheck))
    measured: list[tuple[int, float]] = []
    for k in range(runs + 1):
        machine: type[_Adder] = type("TrivialMachine", (TrivialMachine,), {"steps": 0})
        started = time.perf_counter()
        with collecting_less():  # the contracts' machines run so too
            run_state_machine_as_test(hypothesis.seed(seed)(machine), settings=config)
        if k > 0:  # the first run warms up
            measured.append((machine.steps, time.perf_counter() - started))
    return min(measured, key=lambda m: m[1])
