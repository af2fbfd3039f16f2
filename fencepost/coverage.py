"""Situation coverage: which cases that put each clause to the test a profile reaches, seed
by seed.

Example::

    from fencepost.coverage import run_coverage

    table = run_coverage("adk-ledger", "memory", profile="standard", seeds=3)
    table.missed()      # [(clause, situation, seeds that reached it), ...]
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from fencepost.scenarios.said import Progress, quiet

from .api import check
from .contract import Factory


@attrs.frozen
class SituationRow:
    """One situation of one clause over the seeds of a coverage run."""

    clause: str
    situation: str
    seeds_reached: int
    seeds: int
    reached: int  # how often, summed over the seeds

    @property
    def fraction(self) -> float:
        return self.seeds_reached / self.seeds if self.seeds else 0.0


@attrs.frozen
class Coverage:
    contract: str
    adapter: str
    profile: str
    seeds: tuple[int, ...]
    rows: tuple[SituationRow, ...]
    failed: tuple[str, ...]  # clauses that failed in some seed (coverage of a broken store)
    seconds: float

    def missed(self) -> list[SituationRow]:
        """The situations some seed did not reach."""
        return [r for r in self.rows if r.seeds_reached < r.seeds]

    @property
    def exit_code(self) -> int:
        """1 a clause failed in some seed; 3 a situation was missed by some seed; else 0."""
        if self.failed:
            return 1
        return 3 if self.missed() else 0


def _numbered(progress: Progress, prefix: str) -> Progress:
    """``progress`` with each event said within ``prefix`` (``seed 2/5``)."""
    return lambda said: progress(said.within(prefix))


def run_coverage(
    contract_name: str,
    adapter: str | Factory = "memory",
    *,
    profile: str = "standard",
    seeds: int = 3,
    first_seed: int = 1,
    options: Mapping[str, str] | None = None,
    progress: Progress = quiet,
) -> Coverage:
    """Check ``adapter`` once per seed and count, for every situation of every clause, the
    seeds that reached it."""
    per_seed: list[dict[tuple[str, str], int]] = []
    failed: set[str] = set()
    order: dict[tuple[str, str], None] = {}
    seconds = 0.0
    name = str(adapter)
    for k, seed in enumerate(range(first_seed, first_seed + seeds), 1):
        report = check(contract_name, adapter, profile=profile, seed=seed, options=options,
                       progress=_numbered(progress, f"seed {k}/{seeds}"))
        name = report.adapter
        seconds += report.timings.get("total", 0.0)
        failed |= {v.clause.id for v in report.failed()}
        counts: dict[tuple[str, str], int] = {}
        for v in report.verdicts:
            for situation, count in v.situations.items():
                order[(v.clause.id, situation)] = None
                counts[(v.clause.id, situation)] = count
        per_seed.append(counts)
    rows = tuple(
        SituationRow(clause, situation,
                     seeds_reached=sum(1 for c in per_seed if c.get((clause, situation), 0)),
                     seeds=seeds,
                     reached=sum(c.get((clause, situation), 0) for c in per_seed))
        for clause, situation in order
    )
    return Coverage(contract_name, name, profile,
                    tuple(range(first_seed, first_seed + seeds)), rows, tuple(sorted(failed)),
                    round(seconds, 2))
