"""Per-clause verdicts from the evidence a run gathered, and the run's report as a value."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import attrs

from fencepost.model.answers import Answers
from fencepost.model.base import Pure
from fencepost.scenarios.evidence import CONCURRENT, Evidence, Failure
from fencepost.scenarios.kinds import covers
from fencepost.scenarios.tour_coverage import TourCoverage
from fencepost.spec.clauses import Catalogue, Clause


class Status(StrEnum):
    """A clause's verdict (a ``str``: it is written to JSON and compared as its value)."""

    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"
    UNSUPPORTED = "unsupported"


PASS, FAIL, UNKNOWN, UNSUPPORTED = Status.PASS, Status.FAIL, Status.UNKNOWN, Status.UNSUPPORTED

@attrs.frozen
class ClauseVerdict:
    """A clause's verdict. ``situations`` maps each of the clause's situations that applied to
    the run to how often it was reached; a pass that missed one is ``weak``. ``concurrent`` is,
    for a clause the concurrent run checks, how that run's calls ended (its answered calls are
    the clause's evidence; its faulted calls are none)."""

    clause: Clause
    status: Status = attrs.field(converter=Status)
    reason: str = ""
    evidence: int = 0
    failure: Failure | None = None
    situations: Mapping[str, int] = attrs.field(factory=dict)
    concurrent: Answers | None = None

    @property
    def unreached(self) -> list[str]:
        return [name for name, count in self.situations.items() if count == 0]

    @property
    def weak(self) -> bool:
        """Passed, but some situation that puts the rule to the test was never reached."""
        return self.status == PASS and bool(self.unreached)

    @property
    def label(self) -> str:
        return "pass (weak)" if self.weak else self.status


def judge(
    clauses: Catalogue,
    evidence: Evidence,
    capabilities: frozenset[str],
    gated_off: Mapping[str, str],
    options: Mapping[str, str] | None = None,
    *,
    strict: bool = False,
) -> list[ClauseVerdict]:
    """Turn evidence into verdicts. A clause passes only if some check exercised it and none
    failed it; without a needed capability it is unsupported; a choice can switch it off. A
    pass that never reached one of the clause's situations is weak; ``strict`` makes it
    unknown instead."""
    out = []
    for clause in clauses:
        reached = evidence.situations.get(clause.id, {})
        situations = {s.name: reached.get(s.name, 0)
                      for s in clause.situations_for(options or {}, capabilities)}
        verdict = _verdict(clause, evidence, capabilities, gated_off)
        concurrent = evidence.concurrent if CONCURRENT in clause.checks else None
        verdict = attrs.evolve(verdict, situations=situations, concurrent=concurrent)
        if strict and verdict.weak:
            verdict = attrs.evolve(verdict, status=UNKNOWN, reason=(
                "--strict: situations never reached: " + "; ".join(verdict.unreached)))
        out.append(verdict)
    return out


def _verdict(clause: Clause, evidence: Evidence, capabilities: frozenset[str],
             gated_off: Mapping[str, str]) -> ClauseVerdict:
    missing = sorted(clause.requires - capabilities)
    seen = evidence.exercised.get(clause.id, 0)
    if clause.id in evidence.failures:
        failure = evidence.failures[clause.id]
        return ClauseVerdict(clause, FAIL, failure.message, seen, failure)
    if missing:
        return ClauseVerdict(clause, UNSUPPORTED,
                             f"adapter lacks capability {', '.join(missing)}", seen)
    if clause.id in gated_off:
        return ClauseVerdict(clause, UNSUPPORTED, gated_off[clause.id], seen)
    if clause.id in evidence.unknown:
        return ClauseVerdict(clause, UNKNOWN, evidence.unknown[clause.id], seen)
    if seen == 0:
        return ClauseVerdict(clause, UNKNOWN, _untested(clause, evidence), 0)
    return ClauseVerdict(clause, PASS, "", seen)


def _untested(clause: Clause, evidence: Evidence) -> str:
    """Why a clause nothing failed was never put to the test, in the words of what happened."""
    ran = {check: how for check, how in evidence.ended.items()
           if covers(clause, check)}
    if ran and not any(how.held for how in ran.values()):
        stops = sorted({str(how) for how in ran.values()})
        said = "; ".join(stops[:3]) + (f"; and {len(stops) - 3} more" if len(stops) > 3 else "")
        return (f"not put to the test: each of its {len(ran)} checks stopped before reaching "
                f"it ({said})")
    if evidence.stopped and not ran:
        return f"not put to the test: the run stopped before its checks ({evidence.stopped})"
    if evidence.stopped:
        return f"not put to the test before the run stopped ({evidence.stopped})"
    return "no check exercised it at this profile; try a larger profile or seed"


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
    """The concurrent run's :class:`~fencepost.model.history.History`, if there was one."""
    faults: tuple[str, ...] = ()
    """The adapter's faults outside contract calls (its ``close`` or ``discard`` failed)."""
    stopped: str = ""
    """Why the run stopped before its end (a store call that did not return), if it did."""
    concurrent: Answers | None = None
    """How the concurrent run's calls ended (answered, faulted), if there was a run."""
    tour: TourCoverage | None = None
    """How much of the transition tour's bounded graph ran on the store
    (:class:`~fencepost.scenarios.tour.TourCoverage`), if the tour ran."""
    catalogue_version: str = ""
    """The version (``"MAJOR.MINOR"``) of the clause catalogue the run judged by; "" when
    unknown (a report written before reports carried it): such a report is no baseline."""
    pure: Pure | None = attrs.field(default=None, eq=False, repr=False)
    """The contract model's ``pure(op, answer)``: which answered calls change nothing (the
    HTML report draws no lease for them); None for a report read back from JSON."""

    def count(self, status: str) -> int:
        return sum(1 for v in self.verdicts if v.status == status)

    @property
    def exit_code(self) -> int:
        """0 all applicable clauses pass, 1 a clause failed, 3 none failed but one is unknown
        (the run did not conclude: an adapter fault that follows, such as a ``discard`` failing
        against the same unreachable backend, is listed, not what the run is), 2 every clause
        concluded and none failed but the adapter failed outside the contract's calls
        (``close``, ``discard``)."""
        if self.count(FAIL):
            return 1
        if self.count(UNKNOWN):
            return 3
        if self.faults:
            return 2
        return 0

    def failed(self) -> list[ClauseVerdict]:
        return [v for v in self.verdicts if v.status == FAIL]

    def weak(self) -> list[ClauseVerdict]:
        """The clauses that passed without reaching every one of their situations."""
        return [v for v in self.verdicts if v.weak]

    def summary(self) -> dict[str, Any]:
        return {s: self.count(s) for s in (PASS, FAIL, UNKNOWN, UNSUPPORTED)}
