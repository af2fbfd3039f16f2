"""``junit.xml`` validates against the common JUnit schema (tests/data/junit.xsd), with the
right counts and one exact result per clause; and the schema rejects what it should."""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import attrs
import pytest
import xmlschema

from fencepost.reports.junit import junit_suite, to_junit, write_junit
from fencepost.reports.verdict import FAIL, PASS, UNKNOWN, UNSUPPORTED, ClauseVerdict, RunReport
from fencepost.reports.views import render_trace

# One worker runs this module (its module-scoped fixture is costly): see pyproject's --dist.
pytestmark = pytest.mark.xdist_group("reports_junit")

SCHEMA = xmlschema.XMLSchema(Path(__file__).resolve().parent / "data" / "junit.xsd")
NOON = datetime(2024, 5, 6, 12, 34, 56, 789000, tzinfo=UTC)


@pytest.fixture(scope="module")
def run() -> RunReport:
    """A real run of a store that skips the token check of checkpoint, stopped at its first
    fence failure (a fraction of a second): fails, unknowns, unsupported clauses, weak passes
    and passes."""
    from fencepost.api import check
    from fencepost.mutants import mutant_factory
    from fencepost.registry import contract_named

    entry = contract_named("adk-ledger")
    mutant = next(m for m in entry.mutants if m.name == "zombie_checkpoint")
    report = check("adk-ledger", mutant_factory(entry, mutant, "memory"), profile="quick",
                   seed=1, concurrency=0,
                   stop_when=lambda evidence: "ADK-FENCE-001" in evidence.failures)
    assert {v.status for v in report.verdicts} == {PASS, FAIL, UNKNOWN, UNSUPPORTED}
    assert report.weak() and any(v.status == PASS and not v.weak for v in report.verdicts)
    assert all(v.failure is not None for v in report.failed())
    return report


@pytest.fixture(scope="module")
def small(run: RunReport) -> RunReport:
    """Five clauses, one of each kind, with known reasons: the real fence failure (its trace),
    and passes of the real run turned unknown, unsupported and weak."""
    fence = next(v for v in run.verdicts if v.clause.id == "ADK-FENCE-001")
    create, get, claim, lease = (next(v for v in run.verdicts if v.clause.id == name)
                                 for name in ("ADK-CREATE-001", "ADK-GET-001",
                                              "ADK-CLAIM-001", "ADK-LEASE-001"))
    verdicts = (
        fence,
        attrs.evolve(create, status=UNKNOWN, reason='store <lost> & "gone"\nline two'),
        attrs.evolve(get, status=UNSUPPORTED, reason="adapter lacks capability durable"),
        attrs.evolve(claim, status=PASS, reason="", situations={"a": 1, "b": 0, "c <d>": 0}),
        attrs.evolve(lease, status=PASS, reason="", situations={}),
    )
    return attrs.evolve(run, verdicts=verdicts, replay="fencepost check adk-ledger --seed 1")


def _results(root: ET.Element) -> list[tuple[str | None, list[tuple[str, dict[str, str]]]]]:
    """(name, [(tag, attributes)] of its children) of every testcase."""
    return [(case.get("name"), [(r.tag, dict(r.attrib)) for r in case])
            for case in root.iter("testcase")]


def _expected(v: ClauseVerdict) -> list[tuple[str, dict[str, str]]]:
    if v.status == FAIL:
        assert v.failure is not None
        return [("failure", {"type": "fail", "message": v.failure.message})]
    if v.status == UNKNOWN:
        return [("failure", {"type": "unknown", "message": v.reason})]
    if v.status == UNSUPPORTED:
        return [("skipped", {"message": v.reason})]
    return []


def test_a_real_run_validates_with_the_right_counts_and_one_result_per_clause(
        run: RunReport, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(run, path)
    SCHEMA.validate(str(path))
    root = ET.parse(path).getroot()
    assert (root.tag, root.get("name"), root.get("tests"), root.get("failures"),
            root.get("errors"), root.get("skipped")) == (
        "testsuite", "fencepost.adk-ledger", str(len(run.verdicts)),
        str(run.count(FAIL) + run.count(UNKNOWN)), "0", str(run.count(UNSUPPORTED)))
    assert _results(root) == [(v.clause.id, _expected(v)) for v in run.verdicts]
    assert {case.get("classname") for case in root.iter("testcase")} == {"fencepost.adk-ledger"}
    assert {case.get("time") for case in root.iter("testcase")} == {"0"}
    for v in run.failed():
        assert v.failure is not None
        text = root.find(f"testcase[@name='{v.clause.id}']/failure")
        assert text is not None and text.text == (
            f"{render_trace(v.failure.trace)}\nreplay: {run.replay}")
        assert text.text.startswith("  1. [")
    assert root.findtext("system-out") == "".join(
        f"{v.clause.id}: weak pass: situations never reached: {'; '.join(v.unreached)}\n"
        for v in run.weak())
    assert root.findtext("system-err") == ""


def test_each_kind_of_clause_has_its_exact_element_type_and_message(small: RunReport) -> None:
    xml = to_junit(small, now=NOON)
    SCHEMA.validate(xml)
    root = ET.fromstring(xml)
    fence = small.verdicts[0].failure
    assert fence is not None
    assert (root.get("tests"), root.get("failures"), root.get("errors"),
            root.get("skipped")) == ("5", "2", "0", "1")
    assert _results(root) == [
        ("ADK-FENCE-001", [("failure", {
            "type": "fail",
            "message": "checkpoint answered ok; the contract requires error stale_owner"})]),
        ("ADK-CREATE-001", [("failure", {
            "type": "unknown", "message": 'store <lost> & "gone"\nline two'})]),
        ("ADK-GET-001", [("skipped", {"message": "adapter lacks capability durable"})]),
        ("ADK-CLAIM-001", []),
        ("ADK-LEASE-001", []),
    ]
    failure, unknown = root.iter("failure")
    assert failure.text == (
        f"{render_trace(fence.trace)}\nreplay: fencepost check adk-ledger --seed 1")
    assert unknown.text == "replay: fencepost check adk-ledger --seed 1"
    assert root.findtext("system-out") == (
        "ADK-CLAIM-001: weak pass: situations never reached: b; c <d>\n")
    assert [(p.get("name"), p.get("value")) for p in root.iter("property")] == [
        ("contract", "adk-ledger"), ("adapter", small.adapter), ("seed", "1"),
        ("profile", "quick"), ("kit_version", small.kit_version),
        ("reproduce", "fencepost check adk-ledger --seed 1")]
    assert [child.tag for child in root] == [
        "properties", *["testcase"] * 5, "system-out", "system-err"]


def test_the_suite_says_when_where_and_how_long(small: RunReport, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = ET.fromstring(to_junit(small, now=NOON))
    assert root.get("timestamp") == "2024-05-06T12:34:56"
    assert root.get("hostname") == (socket.gethostname() or "localhost")
    assert root.get("time") == f"{small.timings['total']:.3f}"
    east = NOON.astimezone(timezone(timedelta(hours=9)))
    assert junit_suite(small, now=east).get("timestamp") == "2024-05-06T12:34:56"  # UTC

    before = datetime.now(UTC).replace(microsecond=0)
    stamp = datetime.fromisoformat(junit_suite(small).get("timestamp") or "")
    assert before <= stamp.replace(tzinfo=UTC) <= datetime.now(UTC)

    monkeypatch.setattr(socket, "gethostname", lambda: "")
    nameless = attrs.evolve(small, timings={"total": float("nan")})
    root = ET.fromstring(to_junit(nameless, now=NOON))
    assert (root.get("hostname"), root.get("time")) == ("localhost", "0")
    SCHEMA.validate(to_junit(nameless, now=NOON))

    write_junit(small, tmp_path / "junit.xml", now=NOON)
    assert (tmp_path / "junit.xml").read_text(encoding="utf-8") == to_junit(small, now=NOON)


# --- the schema rejects what the common JUnit schema rejects ---------------------------------


def _two_results(root: ET.Element) -> None:
    case = root.find("testcase[failure]")
    assert case is not None
    ET.SubElement(case, "skipped")


def _untyped_failure(root: ET.Element) -> None:
    failure = root.find("testcase/failure")
    assert failure is not None
    del failure.attrib["type"]


def _untyped_error(root: ET.Element) -> None:
    case = root.find("testcase[skipped]")
    assert case is not None
    case.remove(case[0])
    ET.SubElement(case, "error", {"message": "boom"})


def _without(tag: str) -> Callable[[ET.Element], None]:
    def drop(root: ET.Element) -> None:
        found = root.find(tag)
        assert found is not None
        root.remove(found)
    return drop


def _attribute(name: str, value: str | None, where: str = ".") -> Callable[[ET.Element], None]:
    def set_it(root: ET.Element) -> None:
        element = root.find(where)
        assert element is not None
        if value is None:
            del element.attrib[name]
        else:
            element.set(name, value)
    return set_it


def _case_output(root: ET.Element) -> None:
    case = root.find("testcase")
    assert case is not None
    ET.SubElement(case, "system-out").text = "weak pass"


def _out_after_err(root: ET.Element) -> None:
    out = root.find("system-out")
    assert out is not None
    root.remove(out)
    root.append(out)


def _nested_in_testsuites(root: ET.Element) -> ET.Element:
    suites = ET.Element("testsuites")
    suites.append(root)
    return suites


BROKEN = {
    "a testcase with two results": _two_results,
    "a failure without type": _untyped_failure,
    "an error without type": _untyped_error,
    "a missing system-out": _without("system-out"),
    "a missing system-err": _without("system-err"),
    "missing properties": _without("properties"),
    "system-out after system-err": _out_after_err,
    "a testcase's own system-out": _case_output,
    "a timestamp with a zone": _attribute("timestamp", "2024-05-06T12:34:56Z"),
    "a timestamp with a fraction": _attribute("timestamp", "2024-05-06T12:34:56.5"),
    "a timestamp that is no date": _attribute("timestamp", "2024-13-06T12:34:56"),
    "no timestamp": _attribute("timestamp", None),
    "no hostname": _attribute("hostname", None),
    "an empty hostname": _attribute("hostname", " "),
    "an empty suite name": _attribute("name", ""),
    "tests not an int": _attribute("tests", "4.0"),
    "no errors count": _attribute("errors", None),
    "skipped not an int": _attribute("skipped", "many"),
    "a time in exponent form": _attribute("time", "1e-3"),
    "a testcase without time": _attribute("time", None, "testcase"),
    "a testcase without classname": _attribute("classname", None, "testcase"),
    "an unknown suite attribute": _attribute("flaky", "1"),
    "an empty property name": _attribute("name", "", "properties/property"),
    "a property without value": _attribute("value", None, "properties/property"),
    "a suite in testsuites without package and id": _nested_in_testsuites,
    "another root": lambda root: ET.Element("testrun"),
}


@pytest.mark.parametrize("break_it", BROKEN.values(), ids=BROKEN.keys())
def test_the_schema_rejects_a_broken_file(
        small: RunReport, break_it: Callable[[ET.Element], ET.Element | None]) -> None:
    root = junit_suite(small, now=NOON)
    assert SCHEMA.is_valid(ET.tostring(root, encoding="unicode"))
    broken = break_it(root)
    assert not SCHEMA.is_valid(ET.tostring(root if broken is None else broken,
                                           encoding="unicode"))


def test_the_schema_accepts_the_other_forms_of_the_common_schema(small: RunReport) -> None:
    root = junit_suite(small, now=NOON)  # an error; anything in a skipped; no skipped count
    error_case, skipped_case = root.findall("testcase[failure]")[1], root.find("testcase[skipped]")
    assert skipped_case is not None
    error_case.remove(error_case[0])
    ET.SubElement(error_case, "error", {"type": "OSError"}).text = "Traceback ..."
    ET.SubElement(skipped_case[0], "anything", {"at": "all"}).text = "goes"
    del root.attrib["skipped"]
    assert SCHEMA.is_valid(ET.tostring(root, encoding="unicode"))

    suites = ET.Element("testsuites")  # numbered suites, or none
    assert SCHEMA.is_valid(ET.tostring(suites, encoding="unicode"))
    for n in range(2):
        suite = junit_suite(small, now=NOON)
        suite.attrib |= {"package": "fencepost", "id": str(n)}
        suites.append(suite)
    assert SCHEMA.is_valid(ET.tostring(suites, encoding="unicode"))
