"""Verdicts follow evidence: no evidence is unknown, never pass; exit codes follow verdicts."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from fencepost.reports.verdict import RunReport, judge
from fencepost.scenarios.evidence import Evidence, Failure
from fencepost.spec.clauses import Catalogue, Clause, situation

CLAUSES = Catalogue([
    Clause("T-A-001", "a", "a", ("machine",)),
    Clause("T-B-001", "b", "b", ("machine",), requires=frozenset({"durable"})),
    Clause("T-C-001", "c", "c", ("machine",)),
])


def _report(evidence: Evidence, caps: frozenset[str] = frozenset()) -> RunReport:
    verdicts = judge(CLAUSES, evidence, caps, {})
    return RunReport("t", "x", "0", "quick", 1, {}, caps, {}, 0, 0, tuple(verdicts), "replay")


def test_unexercised_clause_is_unknown_and_exits_3() -> None:
    report = _report(Evidence(exercised={"T-A-001": 2}))
    assert [v.status for v in report.verdicts] == ["pass", "unsupported", "unknown"]
    assert report.exit_code == 3


def test_any_failure_exits_1_even_with_unknowns() -> None:
    evidence = Evidence(exercised={"T-A-001": 2})
    evidence.fail("T-A-001", Failure("machine", "boom", ()))
    report = _report(evidence)
    assert report.verdicts[0].status == "fail"
    assert report.exit_code == 1


def test_all_exercised_and_capable_passes_with_exit_0() -> None:
    evidence = Evidence(exercised={"T-A-001": 1, "T-B-001": 1, "T-C-001": 1})
    report = _report(evidence, frozenset({"durable"}))
    assert {v.status for v in report.verdicts} == {"pass"}
    assert report.exit_code == 0


def test_an_adapter_fault_is_exit_2_only_when_every_clause_concluded() -> None:
    """A discard failing against the backend that made the run unknown leaves it unknown (3);
    after a run that concluded, the adapter's fault is 2; a failure is 1 whatever else."""
    import attrs

    concluded = Evidence(exercised={"T-A-001": 1, "T-B-001": 1, "T-C-001": 1})
    report = attrs.evolve(_report(concluded, frozenset({"durable"})), faults=("ns: discard",))
    assert report.exit_code == 2
    unknown = Evidence(exercised={"T-A-001": 1, "T-B-001": 1})
    unknown.mark_unknown("T-C-001", "machine: create: store unavailable (refused)")
    report = attrs.evolve(_report(unknown, frozenset({"durable"})), faults=("ns: discard",))
    assert report.exit_code == 3
    unknown.fail("T-A-001", Failure("machine", "boom", ()))
    report = attrs.evolve(_report(unknown, frozenset({"durable"})), faults=("ns: discard",))
    assert report.exit_code == 1


def test_lost_store_makes_a_clause_unknown_not_pass() -> None:
    evidence = Evidence(exercised={"T-A-001": 1, "T-B-001": 1, "T-C-001": 1})
    evidence.mark_unknown("T-C-001", "machine: store unavailable")
    report = _report(evidence, frozenset({"durable"}))
    assert report.verdicts[2].status == "unknown"
    assert report.exit_code == 3


def test_a_store_that_goes_away_is_unknown_never_pass_or_fail() -> None:
    from fencepost.adapters.adk_ledger.memory import MemoryLedger, MemoryLedgerFactory
    from fencepost.api import check
    from fencepost.spec.errors import BackendUnavailable

    class GoesAway(MemoryLedger):
        calls = 0

        def get(self, invocation_id: str):  # type: ignore[no-untyped-def]
            type(self).calls += 1
            if type(self).calls > 40:
                raise BackendUnavailable("connection refused")
            return super().get(invocation_id)

    report = check("adk-ledger", MemoryLedgerFactory(GoesAway), seed=3)
    statuses = {v.status for v in report.verdicts}
    assert "fail" not in statuses
    assert "unknown" in statuses
    assert report.exit_code == 3
    unknown = [v for v in report.verdicts if v.status == "unknown"]
    assert all("unavailable" in v.reason for v in unknown)


def test_a_wrongful_refusal_names_the_rule_at_stake() -> None:
    from fencepost.model.base import Step, attribute_outcome
    from fencepost.model.snodo_tasks import MODEL
    from fencepost.spec.outcome import Err, Ok

    allowed = Step(Ok("claimed"), {}, "SNODO-CLAIM-003", "SNODO-CLAIM-003")
    assert attribute_outcome(MODEL, allowed, Err("deferred", "", 1), "claim") == "SNODO-CLAIM-006"
    assert attribute_outcome(MODEL, allowed, Err("unavailable"), "claim") == "SNODO-CLAIM-003"
    created = Step(Ok("snapshot"), {}, "SNODO-CREATE-001", "SNODO-CREATE-001")
    refused = Err("capacity_exceeded", "", "max_active_tasks_per_scope")
    assert attribute_outcome(MODEL, created, refused, "create") == "SNODO-CAP-002"


SITUATED = Catalogue([
    Clause("T-S-001", "s", "s", ("machine",),
           situations=("at the boundary", situation("one ms before", mode="strict"))),
])


def test_a_pass_that_missed_a_situation_is_weak_and_strict_makes_it_unknown() -> None:
    evidence = Evidence(exercised={"T-S-001": 3})
    evidence.reach("T-S-001", "at the boundary")
    [weak] = judge(SITUATED, evidence, frozenset(), {}, {"mode": "strict"})
    assert (weak.status, weak.weak, weak.label) == ("pass", True, "pass (weak)")
    assert weak.situations == {"at the boundary": 1, "one ms before": 0}
    [strict] = judge(SITUATED, evidence, frozenset(), {}, {"mode": "strict"}, strict=True)
    assert (strict.status, strict.reason) == (
        "unknown", "--strict: situations never reached: one ms before")


def test_a_situation_of_another_option_reading_does_not_count() -> None:
    evidence = Evidence(exercised={"T-S-001": 1})
    evidence.reach("T-S-001", "at the boundary")
    [v] = judge(SITUATED, evidence, frozenset(), {}, {"mode": "loose"}, strict=True)
    assert (v.status, v.weak, v.situations) == ("pass", False, {"at the boundary": 1})


def test_a_weak_pass_is_shown_as_such_in_every_report() -> None:
    from fencepost.reports.render import headline, summary_table, to_json, to_junit

    evidence = Evidence(exercised={"T-S-001": 2})
    evidence.reach("T-S-001", "at the boundary")
    verdicts = judge(SITUATED, evidence, frozenset(), {}, {"mode": "strict"})
    report = RunReport("t", "x", "0", "quick", 1, {"mode": "strict"}, frozenset(), {}, 0, 0,
                       tuple(verdicts), "replay")
    row = next(line for line in summary_table(report).splitlines() if "T-S-001" in line)
    assert "pass (weak)" in row and "situations never reached: one ms before" in row
    [clause] = to_json(report)["clauses"]
    assert (clause["status"], clause["weak"], clause["situations"]) == (
        "pass", True, {"at the boundary": 1, "one ms before": 0})
    assert "1 pass (1 weak)" in headline(report)
    junit = ET.fromstring(to_junit(report))
    assert [list(case) for case in junit.iter("testcase")] == [[]]
    assert junit.findtext("system-out") == (
        "T-S-001: weak pass: situations never reached: one ms before\n")
    assert report.exit_code == 0


def test_a_counterexample_cut_short_says_so_in_every_writer_and_round_trips() -> None:
    from fencepost.reports.json_report import report_from_json, to_json
    from fencepost.reports.junit import to_junit
    from fencepost.reports.markdown import to_markdown
    from fencepost.reports.render import render_failures
    from fencepost.scenarios.evidence import NOT_MINIMAL

    evidence = Evidence(exercised={"T-A-001": 1, "T-C-001": 1})
    evidence.fail("T-A-001", Failure("machine", "boom", (), minimal=False))
    evidence.fail("T-C-001", Failure("machine", "bang", ()))
    report = _report(evidence)
    note = NOT_MINIMAL.strip()
    data = to_json(report)
    assert [c["counterexample"]["minimal"] for c in data["clauses"] if c["counterexample"]] == [
        False, True]
    assert [v.failure.minimal for v in report_from_json(data).verdicts if v.failure] == [
        False, True]
    for text in (render_failures(report), to_markdown(report), to_junit(report)):
        assert text.count(note) == 1, text
