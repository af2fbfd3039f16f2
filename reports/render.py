"""Render a :class:`RunReport`: JSON, Markdown (tabulate), JUnit XML, and terminal text."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from typing import Any

from tabulate import tabulate  # type: ignore[import-untyped]

from fencepost.scenarios.trace import render_trace, trace_to_code
from fencepost.spec.outcome import agrees

from .verdict import FAIL, PASS, UNKNOWN, UNSUPPORTED, ClauseVerdict, RunReport

MARK = {PASS: "pass", FAIL: "FAIL", UNKNOWN: "unknown", UNSUPPORTED: "unsupported"}


def mark(v: ClauseVerdict) -> str:
    """The verdict as a table shows it (``pass (weak)`` for a pass that missed a situation)."""
    return "pass (weak)" if v.weak else MARK[v.status]


def _reason(v: ClauseVerdict) -> str:
    if v.weak:
        return "situations never reached: " + "; ".join(v.unreached)
    return v.reason


def _counterexample(v: ClauseVerdict, report: RunReport) -> dict[str, Any] | None:
    if v.failure is None:
        return None
    trace = v.failure.trace
    differing = [
        s for s in trace
        if s.expected is not None and s.actual is not None and not agrees(s.expected, s.actual)
    ]
    last = differing[-1] if differing else (trace[-1] if trace else None)
    return {
        "check": v.failure.check,
        "message": v.failure.message,
        "steps": [s.to_json() for s in trace],
        "expected": str(last.expected) if last and last.expected is not None else None,
        "actual": str(last.actual) if last and last.actual is not None else None,
        "rendered": render_trace(trace),
        "code": replay_code(v, report),
        "reproduce": report.replay,
    }


def replay_code(v: ClauseVerdict, report: RunReport) -> str | None:
    """The counterexample as a script, for sequential checks (a race is not replayable)."""
    if v.failure is None or v.failure.check.startswith(("race:", "concurrent")):
        return None
    return trace_to_code(v.failure.trace, report.contract, report.adapter)


def to_json(report: RunReport) -> dict[str, Any]:
    """The report as JSON-ready data (the schema of ``report.json``)."""
    return {
        "contract": report.contract,
        "adapter": report.adapter,
        "kit_version": report.kit_version,
        "profile": report.profile,
        "seed": report.seed,
        "options": dict(report.options),
        "capabilities": sorted(report.capabilities),
        "timings": {k: round(v, 3) for k, v in report.timings.items()},
        "steps": report.steps,
        "examples": report.examples,
        "summary": report.summary(),
        "exit_code": report.exit_code,
        "reproduce": report.replay,
        "clauses": [
            {
                "id": v.clause.id,
                "title": v.clause.title,
                "text": v.clause.text,
                "checks": list(v.clause.checks),
                "status": v.status,
                "weak": v.weak,
                "reason": _reason(v),
                "evidence": v.evidence,
                "situations": dict(v.situations),
                "counterexample": _counterexample(v, report),
            }
            for v in report.verdicts
        ],
    }


def summary_table(report: RunReport, *, all_rows: bool = True) -> str:
    rows = [
        (v.clause.id, mark(v), v.evidence, _clip(_reason(v) or v.clause.title, 90))
        for v in report.verdicts
        if all_rows or v.status != PASS or v.weak
    ]
    return str(tabulate(rows, headers=("clause", "verdict", "evidence", "title / reason")))


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def headline(report: RunReport) -> str:
    s = report.summary()
    weak = len(report.weak())
    passed = f"{s[PASS]} pass ({weak} weak)" if weak else f"{s[PASS]} pass"
    return (
        f"{report.contract} on {report.adapter}: {passed}, {s[FAIL]} fail, "
        f"{s[UNKNOWN]} unknown, {s[UNSUPPORTED]} unsupported of {len(report.verdicts)} clauses "
        f"({report.steps} steps, {report.examples} state-machine examples, "
        f"{report.timings.get('total', 0.0):.1f} s, profile {report.profile}, seed {report.seed})"
    )


def render_failures(report: RunReport) -> str:
    """Every failed or unknown clause, with its numbered counterexample and the replay line."""
    parts = [headline(report)]
    for v in report.verdicts:
        if v.status == FAIL and v.failure is not None:
            parts.append(
                f"\n{v.clause.id} FAILED ({v.clause.title}) in {v.failure.check}\n"
                f"  rule: {v.clause.text}\n  {v.failure.message}\n{render_trace(v.failure.trace)}"
            )
            code = replay_code(v, report)
            if code:
                parts.append("  replay as code:\n" + _indent(code, "    "))
        elif v.status == UNKNOWN:
            parts.append(f"\n{v.clause.id} unknown: {v.reason}")
    parts.append(f"\nreplay: {report.replay}")
    return "\n".join(parts)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def to_markdown(report: RunReport) -> str:
    lines = [
        f"# Compliance report: {report.contract} on {report.adapter}",
        "",
        tabulate(
            [
                ("kit version", report.kit_version),
                ("profile / seed", f"{report.profile} / {report.seed}"),
                ("capabilities", ", ".join(sorted(report.capabilities)) or "none"),
                ("options", ", ".join(f"{k}={v}" for k, v in sorted(report.options.items()))),
                ("steps / examples", f"{report.steps} / {report.examples}"),
                ("wall time", f"{report.timings.get('total', 0.0):.2f} s"),
                ("verdict", "; ".join(f"{n} {k}" for k, n in report.summary().items())),
            ],
            tablefmt="github",
        ),
        "",
        "## Clauses",
        "",
        tabulate(
            [
                (v.clause.id, mark(v), v.clause.title, v.evidence, _situation_cell(v),
                 _reason(v))
                for v in report.verdicts
            ],
            headers=("clause", "verdict", "title", "evidence", "situations reached", "reason"),
            tablefmt="github",
        ),
    ]
    for v in report.verdicts:
        if v.failure is not None:
            lines += [
                "",
                f"## {v.clause.id}: {v.clause.title}",
                "",
                f"> {v.clause.text}",
                "",
                f"Found by `{v.failure.check}`: {v.failure.message}",
                "",
                "```",
                render_trace(v.failure.trace),
                "```",
                "",
                f"Reproduce: `{report.replay}`",
            ]
    return "\n".join(lines) + "\n"


def _situation_cell(v: ClauseVerdict) -> str:
    if not v.situations:
        return "-"
    return f"{len(v.situations) - len(v.unreached)} of {len(v.situations)}"


def to_junit(report: RunReport) -> str:
    """JUnit XML: one testcase per clause; unsupported clauses are skipped, unknown ones errors."""
    suite = ET.Element(
        "testsuite",
        name=f"fencepost.{report.contract}",
        tests=str(len(report.verdicts)),
        failures=str(report.count(FAIL)),
        errors=str(report.count(UNKNOWN)),
        skipped=str(report.count(UNSUPPORTED)),
        time=f"{report.timings.get('total', 0.0):.3f}",
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (("adapter", report.adapter), ("seed", str(report.seed)),
                        ("profile", report.profile)):
        ET.SubElement(props, "property", name=name, value=value)
    for v in report.verdicts:
        case = ET.SubElement(
            suite, "testcase", classname=f"{report.contract}.{report.adapter}", name=v.clause.id
        )
        if v.status == FAIL and v.failure is not None:
            node = ET.SubElement(case, "failure", message=v.failure.message)
            node.text = render_trace(v.failure.trace) + f"\nreplay: {report.replay}"
        elif v.status == UNKNOWN:
            ET.SubElement(case, "error", message=v.reason)
        elif v.status == UNSUPPORTED:
            ET.SubElement(case, "skipped", message=v.reason)
        elif v.weak:
            ET.SubElement(case, "system-out").text = f"weak pass: {_reason(v)}"
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def write_reports(report: RunReport, directory: str) -> list[str]:
    """Write report.json, report.md and junit.xml into ``directory`` (created if missing), and
    history.jsonl when the run was concurrent (``fencepost analyze`` re-checks it)."""
    os.makedirs(directory, exist_ok=True)
    files = {
        "report.json": json.dumps(to_json(report), indent=2) + "\n",
        "report.md": to_markdown(report),
        "junit.xml": to_junit(report) + "\n",
    }
    paths = []
    for name, text in files.items():
        path = os.path.join(directory, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        paths.append(path)
    if report.history is not None:
        path = os.path.join(directory, "history.jsonl")
        report.history.save(path)
        paths.append(path)
    return paths
