"""Render a :class:`RunReport`: terminal text here; JSON, Markdown, HTML and JUnit XML in their
own modules, re-exported; :func:`write_reports` writes them all.

Every string a renderer emits passes through :mod:`fencepost.reports.text` (secrets masked,
invisible characters escaped, long strings cut), so what a store says cannot break a report,
move the terminal's cursor, or leak the password of a database URL.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tabulate import tabulate

from .html import mutants_html, to_html
from .json_report import dumps, load_report, report_from_json, to_json
from .junit import junit_suite, to_junit, write_junit
from .markdown import to_markdown
from .text import clean, clean_block, clean_line, mask_secrets
from .verdict import FAIL, PASS, UNKNOWN, UNSUPPORTED, RunReport
from .views import (
    MARK,
    evidence_of,
    examples_words,
    failure_steps,
    mark,
    reason_of,
    render_trace,
    replay_code,
)

REASON_WIDTH = 90
"""Characters of a reason in the terminal's summary table (its first line only)."""


def summary_table(report: RunReport, *, all_rows: bool = True) -> str:
    """One line per clause: id, verdict, evidence, and the title or the reason's first line."""
    rows = [
        (clean_line(v.clause.id, 40), mark(v), evidence_of(v),
         clean_line(reason_of(v) or v.clause.title, REASON_WIDTH))
        for v in report.verdicts
        if all_rows or v.status != PASS or v.weak
    ]
    return str(tabulate(rows, headers=("clause", "verdict", "evidence", "title / reason"),
                        disable_numparse=True))


def headline(report: RunReport) -> str:
    """The run in one line: the counts of each verdict and what was run."""
    s = report.summary()
    weak = len(report.weak())
    passed = f"{s[PASS]} pass ({weak} weak)" if weak else f"{s[PASS]} pass"
    return (
        f"{clean_line(report.contract, 200)} on {clean_line(report.adapter, 200)}: {passed}, "
        f"{s[FAIL]} fail, {s[UNKNOWN]} unknown, {s[UNSUPPORTED]} unsupported of "
        f"{len(report.verdicts)} clauses ({report.steps:,} steps, {examples_words(report)}, "
        f"{report.timings.get('total', 0.0):.1f} s, profile {clean_line(report.profile, 200)}, "
        f"seed {report.seed})"
    )


def render_failures(report: RunReport) -> str:
    """Every failed or unknown clause, with its numbered counterexample and the replay line."""
    parts = [headline(report)]
    for v in report.verdicts:
        if v.status == FAIL and v.failure is not None:
            parts.append(
                f"\n{clean_line(v.clause.id)} FAILED ({clean_line(v.clause.title)}) in "
                f"{clean_line(v.failure.check)}\n  rule: {clean(v.clause.text)}\n"
                f"  {clean(v.failure.message)}\n{failure_steps(v.failure)}"
            )
            code = replay_code(v, report)
            if code:
                parts.append("  replay as code:\n" + _indent(code, "    "))
        elif v.status == UNKNOWN:
            parts.append(f"\n{clean_line(v.clause.id)} unknown: {clean_block(v.reason)}")
    if report.stopped:
        parts.append(f"\nthe run stopped early: {clean_block(report.stopped)}")
    for fault in report.faults:
        parts.append(f"\nthe adapter's fault: {clean_block(fault)}")
    parts.append(f"\nreplay: {clean_line(report.replay)}")
    return "\n".join(parts)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def write_reports(report: RunReport, directory: str,
                  pure: Callable[[Any, Any], bool] | None = None) -> list[str]:
    """Write report.json, report.md, report.html and junit.xml into ``directory`` (created if
    missing), and history.jsonl when the run was concurrent (``fencepost analyze`` re-checks
    it). ``pure`` is the contract model's (see :func:`~fencepost.reports.html.to_html`)."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name, text in (("report.json", dumps(report)), ("report.md", to_markdown(report)),
                       ("report.html", to_html(report, pure))):
        path = os.path.join(directory, name)
        # Cleaned text encodes; backslashreplace is the last guard that a report is written.
        with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
        paths.append(path)
    path = os.path.join(directory, "junit.xml")
    write_junit(report, path)
    paths.append(path)
    if report.history is not None:
        path = os.path.join(directory, "history.jsonl")
        report.history.save(path)
        paths.append(path)
    return paths


__all__ = [
    "MARK", "clean", "headline", "junit_suite", "load_report", "mark", "mask_secrets",
    "mutants_html", "to_html",
    "reason_of", "render_failures", "render_trace", "replay_code", "report_from_json",
    "summary_table", "to_json", "to_junit", "to_markdown", "write_junit", "write_reports",
]
