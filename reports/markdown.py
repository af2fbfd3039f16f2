"""``report.md``: the report for people, in GitHub-flavoured Markdown (tables via tabulate).

Every table has a header row (GitHub renders no table without one), every cell is one line
with ``|`` and Markdown's markup characters escaped, and the adapter's words in prose go into
code blocks whose fence no backtick run inside can close. So a store's ``<script>``, ``|``,
backticks or newlines show as text and never change the document's structure. A reason cut
short in the clause table is given whole in a section of its own.
"""

from __future__ import annotations

import re

from tabulate import tabulate

from .text import clean, clean_block, clean_line
from .verdict import FAIL, ClauseVerdict, RunReport
from .views import concurrent_line, evidence_of, failure_steps, mark, reason_of, tour_line

CELL = 160
"""Characters of a reason shown in the clause table; the whole reason has its own section."""

_MARKUP = re.compile(r"([\\`*_{}\[\]<>|~#&!])")
_TICKS = re.compile(r"`+")


def md_cell(text: str, width: int = CELL) -> str:
    """``text`` as one table cell (or one line of prose): one line, cut to ``width``, with
    ``|`` and Markdown's markup characters backslash-escaped.

    >>> md_cell("a | <b>\\nsecond line")
    'a \\\\| \\\\<b\\\\> ...'
    """
    return _MARKUP.sub(r"\\\1", clean_line(text, width))


def md_fenced(text: str) -> str:
    """``text`` as a fenced code block, with a fence longer than any backtick run in it."""
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def md_code(text: str) -> str:
    """``text`` (one line) as an inline code span that no backtick in it can end."""
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _table(rows: list[tuple[object, ...]], headers: tuple[str, ...]) -> str:
    return str(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))


def to_markdown(report: RunReport) -> str:
    """The text of ``report.md``."""
    options = ", ".join(f"{k}={v}" for k, v in sorted(report.options.items())) or "none"
    lines = [
        f"# Compliance report: {md_cell(report.contract, 200)} on {md_cell(report.adapter, 200)}",
        "",
        _table(
            [
                ("kit version", md_cell(report.kit_version)),
                ("profile / seed", md_cell(f"{report.profile} / {report.seed}")),
                ("capabilities",
                 md_cell(", ".join(sorted(str(c) for c in report.capabilities)) or "none")),
                ("options", md_cell(options, 1000)),
                ("steps", f"{report.steps:,}"),
                ("state-machine runs", f"{report.examples:,} (examples and shrink replays)"),
                ("wall time", f"{report.timings.get('total', 0.0):.2f} s"),
                ("verdict", "; ".join(f"{n} {k}" for k, n in report.summary().items())),
                *_concurrent_row(report),
                *([("stopped early", md_cell(report.stopped, 1000))] if report.stopped else []),
                *[("adapter fault", md_cell(f, 1000)) for f in report.faults],
            ],
            ("field", "value"),
        ),
        *_tour_section(report),
        "",
        "## Clauses",
        "",
        _table(
            [
                (md_cell(v.clause.id), mark(v), md_cell(v.clause.title), evidence_of(v),
                 _situation_cell(v), md_cell(reason_of(v)))
                for v in report.verdicts
            ],
            ("clause", "verdict", "title", "evidence", "situations reached", "reason"),
        ),
    ]
    for v in report.verdicts:
        lines += _section(v, report)
    return "\n".join(lines) + "\n"


def _concurrent_row(report: RunReport) -> list[tuple[str, str]]:
    line = concurrent_line(report)
    tour = tour_line(report)
    return [*([] if line is None else [("concurrent run", md_cell(line, 1000))]),
            *([] if tour is None else [("transition tour", md_cell(tour, 1000))])]


def _tour_section(report: RunReport) -> list[str]:
    """The transition tour's bound and, per clause, the edges whose decision names it and
    how many of them ran on the store."""
    tour = report.tour
    if tour is None:
        return []
    return ["", "## Transition tour", "", md_cell(tour.describe(), 2000), "",
            f"Bound: {md_cell(tour.bound, 2000)}", "",
            _table([(md_cell(c), f"{n:,}", f"{r:,}") for c, (n, r) in tour.clauses.items()],
                   ("clause", "edges deciding it", "run on the store"))]


def _section(v: ClauseVerdict, report: RunReport) -> list[str]:
    head = ["", f"## {md_cell(v.clause.id)}: {md_cell(v.clause.title, 200)}", ""]
    rule = [f"> {md_cell(line, 1000)}" for line in clean(v.clause.text).splitlines()]
    if v.status == FAIL and v.failure is not None:
        return [
            *head, *rule, "",
            f"Found by {md_code(clean_line(v.failure.check))}:", "",
            md_fenced(clean(v.failure.message)), "",
            "Steps:", "",
            md_fenced(failure_steps(v.failure)), "",
            f"Reproduce: {md_code(clean_line(report.replay))}",
        ]
    reason = reason_of(v)
    if clean_line(reason, CELL) != clean(reason):  # the table showed less than all of it
        return [*head, *rule, "", f"Verdict {mark(v)}:", "", md_fenced(clean_block(reason))]
    return []


def _situation_cell(v: ClauseVerdict) -> str:
    if not v.situations:
        return "-"
    return f"{len(v.situations) - len(v.unreached)} of {len(v.situations)}"
