"""``junit.xml``, written with junitparser: one testcase per clause, for CI dashboards.

A failed clause is a ``failure``, an unknown one an ``error``, an unsupported one ``skipped``;
a weak pass says so in ``system-out``. Every testcase's ``classname`` is
``fencepost.<contract>``, short and the same from run to run; the adapter, seed and profile are
properties of the suite. Every string is cleaned (:mod:`fencepost.reports.text`), which is what
keeps the file well-formed XML: junitparser writes what it is given.
"""

from __future__ import annotations

import io
from pathlib import Path

from junitparser import Error, Failure, Skipped, TestCase, TestSuite

from .text import clean, clean_block, clean_line
from .verdict import FAIL, UNKNOWN, UNSUPPORTED, ClauseVerdict, RunReport
from .views import reason_of, render_trace


def classname(report: RunReport) -> str:
    """The ``classname`` of every testcase of the report."""
    return f"fencepost.{clean_line(report.contract, 200)}"


def junit_suite(report: RunReport) -> TestSuite:
    """The report as a junitparser ``TestSuite`` (see the module's docstring)."""
    suite = TestSuite(classname(report))
    for name, value in (("contract", report.contract), ("adapter", report.adapter),
                        ("seed", str(report.seed)), ("profile", report.profile),
                        ("kit_version", report.kit_version), ("reproduce", report.replay)):
        suite.add_property(name, clean_line(value))
    suite.add_testcases([_case(v, report) for v in report.verdicts])
    suite.time = round(report.timings.get("total", 0.0), 3)
    return suite


def _case(v: ClauseVerdict, report: RunReport) -> TestCase:
    case = TestCase(name=clean_line(v.clause.id, 200), classname=classname(report))
    if v.status == FAIL and v.failure is not None:
        failure = Failure(clean(v.failure.message), "fail")
        failure.text = clean_block(
            f"{render_trace(v.failure.trace)}\nreplay: {clean(report.replay)}")
        case.result = [failure]
    elif v.status == FAIL:
        case.result = [Failure(clean(v.reason), "fail")]
    elif v.status == UNKNOWN:
        case.result = [Error(clean(v.reason), "unknown")]
    elif v.status == UNSUPPORTED:
        case.result = [Skipped(clean(v.reason), "unsupported")]
    elif v.weak:
        case.system_out = f"weak pass: {clean(reason_of(v))}"
    return case


def to_junit(report: RunReport) -> str:
    """The text of ``junit.xml``."""
    buffer = io.BytesIO()
    junit_suite(report).write(buffer)
    return buffer.getvalue().decode("utf-8")


def write_junit(report: RunReport, path: str | Path) -> None:
    """Write ``junit.xml`` (UTF-8, with its XML declaration) to ``path``."""
    junit_suite(report).write(str(path))
