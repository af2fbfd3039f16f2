"""A short Markdown summary of a run, for a CI job's summary page (``$GITHUB_STEP_SUMMARY``):
what was run, the verdict counts, the comparison with a baseline when there is one, each
failed clause with the first lines of its counterexample, and the replay command.

Written by ``fencepost check --summary FILE``, appended to the file when it exists (a job's
summary file is shared by its steps). Every string from the adapter, the user or a baseline
file is cleaned (:mod:`fencepost.reports.text`) and put in a cell, a code span or a fenced
block (:mod:`fencepost.reports.markdown`), so it cannot change the document's structure.
"""

from __future__ import annotations

from .baseline import Change, Comparison, Kind, moved
from .markdown import md_cell, md_code, md_fenced
from .text import clean_line
from .verdict import FAIL, PASS, UNKNOWN, UNSUPPORTED, ClauseVerdict, RunReport
from .views import concurrent_line, failure_steps, tour_line

TRACE_LINES = 5
"""Lines of each failed clause's counterexample shown (the whole one is in report.md)."""

LISTED = 20
"""Clause ids listed on one line (known failures, improvements...) before ``and N more``."""


def to_summary(report: RunReport, comparison: Comparison | None = None) -> str:
    """The summary's Markdown text (ending in a newline)."""
    s = report.summary()
    weak = len(report.weak())
    lines = [
        f"## fencepost: {md_cell(report.contract, 80)} on {md_cell(report.adapter, 200)}",
        "",
        f"Profile {md_cell(report.profile, 40)}, seed {report.seed}, catalogue "
        f"{md_cell(report.catalogue_version or 'unknown', 40)}, kit "
        f"{md_cell(report.kit_version, 40)}.",
        "",
        f"**{s[PASS]} pass{f' ({weak} weak)' if weak else ''}, {s[FAIL]} fail, "
        f"{s[UNKNOWN]} unknown, {s[UNSUPPORTED]} unsupported** of {len(report.verdicts)} "
        "clauses.",
    ]
    if report.stopped:
        lines += ["", f"Stopped early: {md_cell(report.stopped, 400)}"]
    concurrent = concurrent_line(report)
    if concurrent is not None:
        lines += ["", f"Concurrent run: {md_cell(concurrent, 400)}"]
    tour = tour_line(report)
    if tour is not None:
        lines += ["", f"Transition tour: {md_cell(tour, 400)}"]
    for fault in report.faults:
        lines += ["", f"Adapter fault: {md_cell(fault, 400)}"]
    unknown = [v.clause.id for v in report.verdicts if v.status == UNKNOWN]
    if unknown:
        lines += ["", f"Unknown: {_ids(unknown)}"]
    if comparison is not None:
        lines += _against(comparison)
    failed = report.failed()
    if failed:
        lines += ["", "### Failed clauses"]
        for v in failed:
            lines += _failure(v, comparison)
    lines += ["", f"Replay: {md_code(clean_line(report.replay, 2000))}"]
    return "\n".join(lines) + "\n"


def _ids(ids: list[str]) -> str:
    shown = ", ".join(md_code(clean_line(i, 60)) for i in ids[:LISTED])
    return shown + (f" and {len(ids) - LISTED} more" if len(ids) > LISTED else "")


def _against(comparison: Comparison) -> list[str]:
    baseline = comparison.baseline
    regressions = comparison.regressions
    verdict = (f"{len(regressions)} regression{'s' if len(regressions) != 1 else ''}, the "
               "gate fails" if regressions else "no regression, the gate passes")
    lines = [
        "", f"### Against the baseline: {verdict}", "",
        f"Baseline: {md_cell(baseline.adapter, 200)}, profile {md_cell(baseline.profile, 40)}, "
        f"seed {baseline.seed}, catalogue {md_cell(baseline.catalogue_version, 40)}. "
        f"{md_cell(comparison.counts(), 400)}.",
    ]
    if comparison.notes:
        lines += ["", *(f"- Note: {md_cell(note, 400)}" for note in comparison.notes)]
    bullets = [f"- **Regression** {md_code(clean_line(c.clause, 60))}: {md_cell(moved(c), 400)}"
               for c in regressions]
    known = comparison.of(Kind.KNOWN)
    for label, changes in (
        ("Known failures (failing in the baseline too)", [c for c in known
                                                           if c.label == "known"]),
        ("Still unknown", [c for c in known if c.label != "known"]),
        ("Improvements (write a new baseline to keep them)", comparison.of(Kind.IMPROVEMENT)),
        ("New clauses", comparison.of(Kind.NEW)),
        ("Removed clauses", comparison.of(Kind.REMOVED)),
    ):
        if changes:
            bullets.append(f"- {label}: {_listed(changes)}")
    return [*lines, "", *bullets] if bullets else lines


def _listed(changes: list[Change]) -> str:
    words = [md_code(clean_line(c.clause, 60))
             + (f" ({md_cell(c.now.label, 20)})" if c.kind == Kind.NEW and c.now else "")
             for c in changes[:LISTED]]
    more = f" and {len(changes) - LISTED} more" if len(changes) > LISTED else ""
    return ", ".join(words) + more


def _failure(v: ClauseVerdict, comparison: Comparison | None) -> list[str]:
    kind = ""
    if comparison is not None:
        try:
            kind = f" ({comparison.change(v.clause.id).label})"
        except KeyError:
            kind = ""
    head = ["", f"#### {md_cell(v.clause.id, 60)}: {md_cell(v.clause.title, 200)}{kind}", ""]
    shown = [clean_line(v.reason, 300)]
    if v.failure is not None:
        found = md_code(clean_line(v.failure.check, 200))
        head[-1:] = ["", f"Found by {found}:", ""]
        steps = failure_steps(v.failure).splitlines()
        shown += [clean_line(line, 300) for line in steps[:TRACE_LINES]]
        if len(steps) > TRACE_LINES:
            shown.append(f"... {len(steps) - TRACE_LINES} more lines in report.md")
    return [*head, md_fenced("\n".join(shown))]


def write_summary(path: str, text: str) -> None:
    """Append ``text`` to ``path`` (created when missing), after a blank line when the file
    already holds something."""
    with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
        if f.tell() > 0:
            f.write("\n")
        f.write(text)


__all__ = ["to_summary", "write_summary"]
