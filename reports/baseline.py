"""A run against a baseline: each clause's verdict then and now, classified, for a CI gate
that fails on what got worse and not on the failures a project already knows.

:func:`compare` classifies every clause id of two reports of one contract:

============ ===================================================================================
regression   passed in the baseline (a weak pass counts as a pass) and now fails, is unknown
             or unsupported (a clause no longer put to the test is a regression too); or now
             fails where the baseline had it unknown or unsupported
known        failed in the baseline and does not pass now (fails, unknown or unsupported); or
             neither passes nor fails in either (unknown or unsupported; not unsupported in
             both), shown as ``still unknown``
improvement  failed, unknown or unsupported in the baseline, passes now
new          not in the baseline (a clause added since): never a regression, whatever its verdict
removed      in the baseline, not in this run
unchanged    pass and pass, or unsupported and unsupported
============ ===================================================================================

Two reports compare only when they are of one contract, judged by catalogues of one MAJOR
version (:attr:`fencepost.contract.Contract.catalogue_version`): else :func:`compare` raises
:class:`~fencepost.spec.errors.ConfigurationError`, one line saying why and what to do. A
report without a catalogue version was written before reports carried one and is no baseline.

Example::

    comparison = compare(load_baseline("old/report.json"), report)
    print(render(comparison)); comparison.exit_code   # 1 when something regressed
"""

from __future__ import annotations

import os
import re
from enum import StrEnum

import attrs

from fencepost.spec.errors import ConfigurationError

from .json_report import load_report
from .text import clean_line
from .verdict import FAIL, PASS, UNSUPPORTED, ClauseVerdict, RunReport, Status
from .views import reason_of

DETAIL = 160
"""Characters of a clause's line of the comparison after its id (verdicts and reason)."""

_VERSION = re.compile(r"(\d+)\.(\d+)")
_WRITE_ONE = "fencepost check {contract} --report DIR writes DIR/report.json"


class Kind(StrEnum):
    """How a clause's verdict moved from the baseline to this run."""

    REGRESSION = "regression"
    KNOWN = "known"
    IMPROVEMENT = "improvement"
    NEW = "new"
    REMOVED = "removed"
    UNCHANGED = "unchanged"


ORDER = tuple(Kind)
"""The order the comparison lists its lines in (regressions first)."""


def classify(was: Status | None, now: Status | None) -> Kind:
    """The kind of change from verdict ``was`` (None: not in the baseline) to ``now`` (None:
    not in this run); see the module's table."""
    if was is None:
        return Kind.NEW
    if now is None:
        return Kind.REMOVED
    if was == now and was in (PASS, UNSUPPORTED):
        return Kind.UNCHANGED
    if now == PASS:
        return Kind.IMPROVEMENT
    if was == PASS:
        return Kind.REGRESSION
    if now == FAIL and was != FAIL:
        return Kind.REGRESSION
    return Kind.KNOWN


@attrs.frozen
class Change:
    """One clause id: its verdict in the baseline (``was``) and in this run (``now``)."""

    clause: str
    kind: Kind
    was: ClauseVerdict | None
    now: ClauseVerdict | None

    @property
    def label(self) -> str:
        """What the comparison calls it: the kind, except a known clause that failed in
        neither report is ``still unknown``."""
        if self.kind == Kind.KNOWN and FAIL not in (self.was_status, self.now_status):
            return "still unknown"
        return str(self.kind)

    @property
    def was_status(self) -> Status | None:
        return None if self.was is None else self.was.status

    @property
    def now_status(self) -> Status | None:
        return None if self.now is None else self.now.status

    @property
    def title(self) -> str:
        shown = self.now or self.was
        return "" if shown is None else shown.clause.title

    @property
    def detail(self) -> str:
        """The current verdict's reason or failure message (uncleaned; "" for a pass)."""
        if self.now is None or self.now.status == PASS:
            return ""
        return reason_of(self.now)


@attrs.frozen
class Comparison:
    """Every clause id of the baseline and of this run, classified (:func:`compare`)."""

    contract: str
    baseline: RunReport = attrs.field(eq=False, repr=False)
    current: RunReport = attrs.field(eq=False, repr=False)
    changes: tuple[Change, ...]
    """In this run's clause order, then the removed clauses in the baseline's."""
    notes: tuple[str, ...] = ()
    """How the two runs differ besides their verdicts (options, profile, catalogue MINOR)."""

    def of(self, kind: Kind) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    def change(self, clause_id: str) -> Change:
        """The change of ``clause_id`` (KeyError when neither report has it)."""
        for c in self.changes:
            if c.clause == clause_id:
                return c
        raise KeyError(clause_id)

    @property
    def regressions(self) -> list[Change]:
        return self.of(Kind.REGRESSION)

    @property
    def exit_code(self) -> int:
        """1 when a clause regressed, else 0 (known failures, improvements, new clauses)."""
        return 1 if self.regressions else 0

    def counts(self) -> str:
        """``1 regression, 1 known failure, 1 improvement, 2 new, 40 unchanged``: regressions
        and unchanged always, the others when there are any."""
        known = self.of(Kind.KNOWN)
        failing = sum(1 for c in known if c.label == "known")
        parts = [_plural(len(self.regressions), "regression")]
        if failing:
            parts.append(_plural(failing, "known failure"))
        if len(known) - failing:
            parts.append(f"{len(known) - failing} still unknown")
        if self.of(Kind.IMPROVEMENT):
            parts.append(_plural(len(self.of(Kind.IMPROVEMENT)), "improvement"))
        for kind in (Kind.NEW, Kind.REMOVED):
            if self.of(kind):
                parts.append(f"{len(self.of(kind))} {kind}")
        parts.append(f"{len(self.of(Kind.UNCHANGED))} unchanged")
        return ", ".join(parts)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _major(version: str, what: str, fix: str) -> int:
    if version == "":
        raise ConfigurationError(
            f"{what} has no catalogue version (it was written before reports carried one); "
            f"{fix}")
    match = _VERSION.fullmatch(version)
    if match is None:
        raise ConfigurationError(
            f"{what} has catalogue version {clean_line(version, 40)!r}, not MAJOR.MINOR; {fix}")
    return int(match[1])


def comparable(baseline: RunReport, contract: str, version: str, *,
               what: str = "the baseline", now: str = "this run") -> None:
    """Raise ConfigurationError (one line: why, and what to do) unless ``baseline`` can be
    compared with a run of ``contract`` judged by catalogue ``version``. ``what`` and
    ``now`` name the two in the message (a path, a flag)."""
    theirs, ours = clean_line(baseline.contract, 80), clean_line(contract, 80)
    write = _WRITE_ONE.format(contract=ours)
    if baseline.contract != contract:
        raise ConfigurationError(
            f"{what} is a report of {theirs}, {now} of {ours}: a baseline compares with runs "
            f"of its own contract; name a report.json of {ours} ({write})")
    was = _major(baseline.catalogue_version, what,
                 f"write a new baseline with this kit ({write})")
    is_ = _major(version, now, f"write it again with this kit ({write})")
    if was != is_:
        raise ConfigurationError(
            f"{what} was judged by catalogue {clean_line(baseline.catalogue_version, 40)} of "
            f"{ours}, {now} by {clean_line(version, 40)}: between MAJOR versions a clause id "
            f"can change meaning or go, so their verdicts do not compare; write a new "
            f"baseline with this kit ({write})")


def compare(baseline: RunReport, current: RunReport) -> Comparison:
    """Classify each clause id of ``baseline`` and ``current`` (see the module's table).
    Raises ConfigurationError when the two do not compare (:func:`comparable`)."""
    comparable(baseline, current.contract, current.catalogue_version)
    before = {v.clause.id: v for v in baseline.verdicts}
    after = {v.clause.id: v for v in current.verdicts}
    changes = [
        Change(v.clause.id, classify(_status(before.get(v.clause.id)), v.status),
               before.get(v.clause.id), v)
        for v in current.verdicts
    ]
    changes += [Change(v.clause.id, Kind.REMOVED, v, None)
                for v in baseline.verdicts if v.clause.id not in after]
    return Comparison(current.contract, baseline, current, tuple(changes),
                      _notes(baseline, current))


def _status(v: ClauseVerdict | None) -> Status | None:
    return None if v is None else v.status


def _notes(baseline: RunReport, current: RunReport) -> tuple[str, ...]:
    notes = []
    if baseline.catalogue_version != current.catalogue_version:
        notes.append(f"catalogue {baseline.catalogue_version} in the baseline, "
                     f"{current.catalogue_version} now: clauses added since are new, not "
                     "regressions")
    if baseline.profile != current.profile:
        notes.append(f"profile {baseline.profile} in the baseline, {current.profile} now: a "
                     "smaller profile can leave a clause unknown")
    if dict(baseline.options) != dict(current.options):
        notes.append(f"options differ: {_options(baseline)} in the baseline, "
                     f"{_options(current)} now")
    return tuple(notes)


def _options(report: RunReport) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(report.options.items())) or "none"


def render(comparison: Comparison) -> str:
    """The comparison for the terminal: a heading, one line per clause that did not stay as
    it was (regressions first), then the counts. Every string is cleaned."""
    baseline = comparison.baseline
    lines = [f"against the baseline ({clean_line(baseline.adapter, 120)}, profile "
             f"{clean_line(baseline.profile, 40)}, seed {baseline.seed}, catalogue "
             f"{clean_line(baseline.catalogue_version, 40)}):"]
    lines += [f"note: {clean_line(note, 400)}" for note in comparison.notes]
    shown = sorted((c for c in comparison.changes if c.kind != Kind.UNCHANGED),
                   key=lambda c: ORDER.index(c.kind))
    label_width = max((len(c.label) for c in shown), default=0)
    id_width = max((len(clean_line(c.clause, 40)) for c in shown), default=0)
    for c in shown:
        lines.append(f"{c.label:<{label_width}}  {clean_line(c.clause, 40):<{id_width}}  "
                     f"{moved(c)}")
    lines.append(comparison.counts())
    return "\n".join(lines)


def moved(change: Change) -> str:
    """``pass -> fail: <the failure's first line>`` (cleaned, one line)."""
    was = "" if change.was is None else change.was.label
    now = "" if change.now is None else change.now.label
    if change.kind == Kind.NEW:
        text = now
    elif change.kind == Kind.REMOVED:
        text = f"{was} -> not in this run"
    else:
        text = f"{was} -> {now}"
    if change.detail:
        text += f": {change.detail}"
    return clean_line(text, DETAIL)


def load_baseline(path: str, what: str = "--baseline") -> RunReport:
    """The report at ``path`` (a ``report.json``), or ConfigurationError in one line saying
    what is wrong with the file and what to name instead."""
    shown = clean_line(path, 300)
    hint = "name a report.json written by fencepost check CONTRACT --report DIR"
    if not os.path.exists(path):
        raise ConfigurationError(f"{what} {shown}: no such file; {hint}")
    if os.path.isdir(path):
        raise ConfigurationError(f"{what} {shown} is a directory; name the report.json in it")
    if not os.path.isfile(path):  # a device or a pipe: read, it may never end
        raise ConfigurationError(f"{what} {shown} is not a regular file; {hint}")
    try:
        return load_report(path)
    except OSError as e:
        raise ConfigurationError(f"{what} {shown} cannot be read ({e.strerror}); {hint}") \
            from None
    except ValueError as e:
        raise ConfigurationError(f"{what} {clean_line(str(e), 400)}; {hint}") from None


def gate_exit_code(report: RunReport, comparison: Comparison) -> int:
    """The exit code of ``fencepost check --baseline``: 1 when a clause regressed; else 2
    when the adapter failed outside the contract's calls (``close``, ``discard``: a fault the
    baseline cannot excuse); else 0, known failures, still-unknown clauses, improvements and
    new clauses included."""
    if comparison.regressions:
        return 1
    if report.faults:
        return 2
    return 0


__all__ = [
    "ORDER", "Change", "Comparison", "Kind", "classify", "comparable", "compare",
    "gate_exit_code", "load_baseline", "moved", "render",
]
