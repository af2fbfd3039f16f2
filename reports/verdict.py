"""Per-clause verdicts from the evidence a run gathered, and the run's report as a value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.scenarios.evidence import Evidence, Failure
from fencepost.spec.clauses import Catalogue, Clause

PASS, FAIL, UNKNOWN, UNSUPPORTED = "pass", "fail", "unknown", "unsupported"


@attrs.frozen
class ClauseVerdict:
    clause: Clause
    status: str
    reason: str = ""
    evidence: int = 0
    failure: Failure | None = None


def judge(
    clauses: Catalogue,
    evidence: Evidence,
    capabilities: frozenset[str],
    gated_off: Mapping[str, str],
) -> list[ClauseVerdict]:
    """Turn evidence into verdicts. A clause passes only if some check exercised it and none
    failed it; without a needed capability it is unsupported; a choice can switch it off."""
    out = []
    for clause in clauses:
        missing = sorted(clause.requires - capabilities)
        seen = evidence.exercised.get(clause.id, 0)
        if clause.id in evidence.failures:
            failure = evidence.failures[clause.id]
            out.append(ClauseVerdict(clause, FAIL, failure.message, seen, failure))
        elif missing:
            reason = f"adapter lacks capability {', '.join(missing)}"
            out.append(ClauseVerdict(clause, UNSUPPORTED, reason, seen))
        elif clause.id in gated_off:
            out.append(ClauseVerdict(clause, UNSUPPORTED, gated_off[clause.id], seen))
        elif clause.id in evidence.unknown:
            out.append(ClauseVerdict(clause, UNKNOWN, evidence.unknown[clause.id], seen))
        elif seen == 0:
            reason = "no check exercised it at this profile; try a larger profile or seed"
            out.append(ClauseVerdict(clause, UNKNOWN, reason, 0))
        else:
            out.append(ClauseVerdict(clause, PASS, "", seen))
    return out


@attrs.frozen
class RunReport:
    """One run of one contract against one adapter."""

    contract: str
    adapter: str
    kit_version: str
    profile: str
    seed: int
    options: Mapping[str, str]
    capabilities: frozenset[str]
    timings: Mapping[str, float]
    steps: int
    examples: int
    verdicts: tuple[ClauseVerdict, ...]
    replay: str
    history: Any = attrs.field(default=None, eq=False, repr=False)
    """The concurrent run's :class:`~fencepost.scenarios.history.History`, if there was one."""

    def count(self, status: str) -> int:
        return sum(1 for v in self.verdicts if v.status == status)

    @property
    def exit_code(self) -> int:
        """0 all applicable clauses pass, 1 a clause failed, 3 none failed but one is unknown."""
        if self.count(FAIL):
            return 1
        if self.count(UNKNOWN):
            return 3
        return 0

    def failed(self) -> list[ClauseVerdict]:
        return [v for v in self.verdicts if v.status == FAIL]

    def summary(self) -> dict[str, Any]:
        return {s: self.count(s) for s in (PASS, FAIL, UNKNOWN, UNSUPPORTED)}
