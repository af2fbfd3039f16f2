"""``junit.xml``: one ``<testsuite>`` with one testcase per clause, for CI dashboards.

The file follows the common JUnit schema (Apache Ant's, as published by Windy Road;
``tests/data/junit.xsd`` restates it and the tests validate against it):

- the root is a ``<testsuite>`` named ``fencepost.<contract>``, with its ``timestamp`` (UTC, to
  the second, no zone), ``hostname``, ``time`` (the run's total) and counts: ``tests`` the
  clauses, ``failures`` the failed and unknown ones, ``errors`` 0, ``skipped`` the unsupported
  ones;
- its ``<properties>`` give the contract, adapter, seed, profile, kit version and the command
  that reproduces the run; every testcase's ``classname`` is ``fencepost.<contract>``, short
  and the same from run to run, and its ``time`` is 0 (a check serves many clauses);
- a failed clause holds ``<failure type="fail" message=...>`` whose text is the numbered
  counterexample and the replay command; an unknown one ``<failure type="unknown"
  message=reason>``; an unsupported one ``<skipped message=reason/>``; a pass holds nothing;
- the suite's ``<system-out>`` has one line per weak pass (the clause and the situations it
  never reached); ``<system-err>`` is empty.

Every string is cleaned (:mod:`fencepost.reports.text`), which is what keeps the file
well-formed XML: ElementTree escapes markup but writes any character it is given.
"""

from __future__ import annotations

import math
import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from .text import clean, clean_block, clean_line
from .verdict import FAIL, UNKNOWN, UNSUPPORTED, ClauseVerdict, RunReport
from .views import failure_steps, reason_of


def classname(report: RunReport) -> str:
    """The ``classname`` of every testcase of the report."""
    return f"fencepost.{clean_line(report.contract, 200)}"


def hostname() -> str:
    """The machine's name for the suite's ``hostname`` (``localhost`` when it has none)."""
    return clean_line(socket.gethostname().strip(), 200) or "localhost"


def junit_suite(report: RunReport, *, now: datetime | None = None) -> ET.Element:
    """The report as the ``<testsuite>`` element of ``junit.xml`` (see the module's
    docstring); ``now`` (default: the current time) is its timestamp."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    failures = report.count(FAIL) + report.count(UNKNOWN)
    suite = ET.Element("testsuite", {
        "name": classname(report),
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S"),
        "hostname": hostname(),
        "tests": str(len(report.verdicts)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(report.count(UNSUPPORTED)),
        "time": _seconds(report.timings.get("total", 0.0)),
    })
    properties = ET.SubElement(suite, "properties")
    for name, value in (("contract", report.contract), ("adapter", report.adapter),
                        ("seed", str(report.seed)), ("profile", report.profile),
                        ("kit_version", report.kit_version), ("reproduce", report.replay)):
        ET.SubElement(properties, "property", {"name": name, "value": clean_line(value)})
    for v in report.verdicts:
        suite.append(_case(v, report))
    weak = [clean_line(f"{v.clause.id}: weak pass: {reason_of(v)}") for v in report.weak()]
    ET.SubElement(suite, "system-out").text = "".join(f"{line}\n" for line in weak)
    ET.SubElement(suite, "system-err").text = ""
    return suite


def _seconds(value: float) -> str:
    """A duration as ``xs:decimal`` (no exponent, never negative, nan or infinite)."""
    return f"{value:.3f}" if math.isfinite(value) and value > 0 else "0"


def _case(v: ClauseVerdict, report: RunReport) -> ET.Element:
    case = ET.Element("testcase", {"name": clean_line(v.clause.id, 200),
                                   "classname": classname(report), "time": "0"})
    replay = f"replay: {clean(report.replay)}"
    if v.status == FAIL:
        message = v.failure.message if v.failure is not None else v.reason
        trace = f"{failure_steps(v.failure)}\n" if v.failure is not None else ""
        failure = ET.SubElement(case, "failure", {"type": "fail", "message": clean(message)})
        failure.text = clean_block(trace + replay)
    elif v.status == UNKNOWN:
        failure = ET.SubElement(case, "failure", {"type": "unknown", "message": clean(v.reason)})
        failure.text = clean_block(replay)
    elif v.status == UNSUPPORTED:
        ET.SubElement(case, "skipped", {"message": clean(v.reason)})
    return case


def _document(report: RunReport, now: datetime | None) -> bytes:
    suite = junit_suite(report, now=now)
    ET.indent(suite)
    text: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return text + b"\n"


def to_junit(report: RunReport, *, now: datetime | None = None) -> str:
    """The text of ``junit.xml``."""
    return _document(report, now).decode("utf-8")


def write_junit(report: RunReport, path: str | Path, *, now: datetime | None = None) -> None:
    """Write ``junit.xml`` (UTF-8, with its XML declaration) to ``path``."""
    Path(path).write_bytes(_document(report, now))
