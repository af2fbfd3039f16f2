"""``report.html`` and ``mutants.html``: one self-contained file each, for a reviewer.

No network and nothing external: the styles, the pictures (SVG, laid out by
:mod:`fencepost.reports.timeline`) and the one small script (copy buttons, the verdict filter)
are in the file, which opens from disk and from a CI artifact viewer. The pages are rendered by
Jinja2 templates (``reports/templates``) with autoescaping on: every string, the store's error
texts included, is cleaned (:mod:`fencepost.reports.text`) and then escaped, so a store that
answers ``<script>...`` shows that text and runs nothing. The page's Content-Security-Policy
lets only its own script (by a nonce made for each page) run, as a second guard.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import jinja2

from fencepost.model.base import Pure
from fencepost.scenarios.evidence import NOT_MINIMAL
from fencepost.scenarios.trace import TraceStep
from fencepost.spec.outcome import agrees

from .text import clean_block, clean_line
from .timeline import EARLIER, Picture, differing, intervals, timeline
from .verdict import FAIL, PASS, UNKNOWN, UNSUPPORTED, ClauseVerdict, RunReport
from .views import concurrent_line, evidence_of, mark, reason_of, replay_code, tour_line


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("fencepost.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def to_html(report: RunReport) -> str:
    """The text of ``report.html``. ``report.pure(op, answer)`` (the contract model's) tells
    which calls change nothing: their answers never draw a lease."""
    counts = [(str(s), report.count(s)) for s in (FAIL, UNKNOWN, UNSUPPORTED, PASS)
              if report.count(s)]
    view = {
        "contract": clean_line(report.contract, 200),
        "adapter": clean_line(report.adapter, 300),
        "kit_version": clean_line(report.kit_version, 60),
        "headline": ", ".join(f"{n} {s}" for s, n in counts),
        "counts": counts,
        "total": len(report.verdicts),
        "meta": _meta(report),
        "replay": clean_line(report.replay, 2000),
        "stopped": clean_line(report.stopped, 600),
        "faults": [clean_line(f, 600) for f in report.faults],
        "rows": [_row(v) for v in report.verdicts],
        "failures": [_failure(v, report, report.pure) for v in report.verdicts
                     if v.status == FAIL and v.failure is not None],
    }
    return _environment().get_template("report.html.j2").render(r=view, nonce=_nonce())


def mutants_html(contract: str, rows: Sequence[Any], meta: Mapping[str, str]) -> str:
    """The text of ``mutants.html``: ``rows`` are :class:`~fencepost.mutants.MutantRow`s,
    ``meta`` what the run was (base, profile, seed)."""
    shown = []
    for row in rows:
        options = " ".join(f"--option {k}={v}" for k, v in sorted(row.options.items()))
        shown.append({
            "name": clean_line(row.name, 200), "bug": clean_line(row.bug, 600),
            "expected": clean_line(row.expected_clause + (
                "" if row.expected == "fail" else f" ({row.expected})"), 100),
            "options": clean_line(options, 600) or "-",
            "caught": row.caught, "status": "caught" if row.caught else "escaped",
            "verdict": "caught" if row.caught else (
                "ESCAPED (it crashed)" if row.crashed and row.caught_by else "ESCAPED"),
            "caught_by": clean_line(", ".join(row.caught_by), 600) or "-",
            "steps": row.steps, "seconds": f"{row.seconds:g}",
            "command": clean_line(
                f"fencepost check {contract} --adapter mutant:{row.name} {options}".strip(), 600),
        })
    view = {
        "contract": clean_line(contract, 200),
        "caught": sum(1 for row in rows if row.caught),
        "total": len(rows),
        "meta": [(clean_line(k, 60), clean_line(v, 600)) for k, v in meta.items()],
        "rows": shown,
    }
    return _environment().get_template("mutants.html.j2").render(m=view, nonce=_nonce())


def _nonce() -> str:
    return secrets.token_urlsafe(18)


def _meta(report: RunReport) -> list[tuple[str, str]]:
    options = ", ".join(f"{k}={v}" for k, v in sorted(report.options.items())) or "none"
    timings = ", ".join(f"{k} {v:.2f} s" for k, v in report.timings.items()) or "-"
    return [(label, clean_line(value, 2000)) for label, value in (
        ("contract", report.contract),
        ("adapter", report.adapter),
        ("kit version", report.kit_version),
        ("profile", report.profile),
        ("seed", str(report.seed)),
        ("options", options),
        ("capabilities", ", ".join(sorted(report.capabilities)) or "none"),
        ("steps", f"{report.steps:,} ({report.examples:,} state-machine runs)"),
        ("timings", timings),
        *_concurrent(report),
    )]


def _concurrent(report: RunReport) -> list[tuple[str, str]]:
    line = concurrent_line(report)
    tour = tour_line(report)
    return [*([] if line is None else [("concurrent run", line)]),
            *([] if tour is None else [("transition tour", tour)])]


def _row(v: ClauseVerdict) -> dict[str, Any]:
    situations = v.situations
    reached = sum(1 for count in situations.values() if count)
    return {
        "id": clean_line(v.clause.id, 100),
        "title": clean_line(v.clause.title, 300),
        "status": str(v.status),
        "label": mark(v),
        "failed": v.status == FAIL and v.failure is not None,
        "situations": f"{reached} of {len(situations)}" if situations else "-",
        "evidence": evidence_of(v),
        "reason": clean_line(reason_of(v).split("\n")[0], 400),
    }


def _failure(v: ClauseVerdict, report: RunReport, pure: Pure | None) -> dict[str, Any]:
    failure = v.failure
    assert failure is not None
    cx = failure.intervals
    out: dict[str, Any] = {
        "id": clean_line(v.clause.id, 100),
        "title": clean_line(v.clause.title, 300),
        "rule": clean_line(v.clause.text, 2000),
        "check": clean_line(failure.check, 200),
        "message": clean_line(failure.message.split("\n")[0], 1000),
        "steps": _steps(failure.trace),
        "code": replay_code(v, report),
        "full": clean_block(failure.message) if "\n" in failure.message else "",
        "not_minimal": "" if failure.minimal else NOT_MINIMAL.strip(),
    }
    picture: Picture | None
    if cx is not None:
        picture = intervals(cx)
        earlier = min(len(cx.before), EARLIER)
        out.update(kind="intervals", prefix=len(cx.prefix), events=len(cx.events),
                   before=len(cx.before), earlier=earlier,
                   blocked=earlier + len(cx.prefix) + 1)
    else:
        picture = timeline(failure.trace, pure) if failure.trace else None
        out.update(kind="timeline")
    out["picture"] = picture
    return out


def _steps(trace: Sequence[TraceStep]) -> list[dict[str, Any]]:
    worst = differing(trace)
    steps = []
    for number, s in enumerate(trace, 1):
        head = f"[{s.at} ms] {s.actor}: "
        text = head + (s.op.describe() if s.op is not None else s.note)
        answers: list[str] = []
        if s.expected is not None and s.actual is not None and not agrees(s.expected, s.actual):
            answers = [f"model: {s.expected}", f"store: {s.actual}   <-- differs"]
        elif s.actual is not None:
            answers = [f"-> {s.actual}"]
        steps.append({"number": number, "text": clean_line(text, 2000),
                      "answers": [clean_line(a, 2000) for a in answers],
                      "differs": number == worst})
    return steps


__all__ = ["mutants_html", "to_html"]
