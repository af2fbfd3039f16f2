"""A faulted call in the concurrent run is not an answer (issue 25, item 6): the run counts its
answered and faulted calls, the report gives both, and a history with more faulted calls than
the profile allows leaves the linearizability clauses unknown, never pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

import fencepost
from fencepost.adapters.mutants.base import Expected
from fencepost.cli import main
from fencepost.model.answers import Answers, answers_of, faulted
from fencepost.model.history import Event
from fencepost.model.linearizability import UNKNOWN as UNKNOWN_RESULT
from fencepost.model.linearizability.verdict import PartitionResult, Verdict
from fencepost.mutants import caught, run_mutants
from fencepost.registry import contract_named
from fencepost.reports.html import to_html
from fencepost.reports.json_report import report_from_json, to_json
from fencepost.reports.markdown import to_markdown
from fencepost.reports.render import summary_table
from fencepost.reports.summary import to_summary
from fencepost.reports.verdict import PASS, UNKNOWN, ClauseVerdict, RunReport
from fencepost.scenarios.concurrent import ConcurrentRun, run_concurrent
from fencepost.scenarios.evidence import CONCURRENT, Evidence, merged
from fencepost.scenarios.harness import StoreLost
from fencepost.scenarios.phases import no_evidence
from fencepost.scenarios.profiles import MAX_FAULTED, PROFILES
from fencepost.scenarios.races import release_together
from fencepost.spec import adk_ledger as spec
from fencepost.spec.errors import BackendUnavailable
from fencepost.spec.outcome import Crash, Err, Ok

LIN = {"adk-ledger": "ADK-LIN-001", "snodo-tasks": "SNODO-LIN-001",
       "ledgence-tasks": "LDG-LIN-001"}
GET = spec.Get("inv-1")


def _event(outcome: Any, completed: int | None = 2) -> Event:
    return Event("w1", GET, 1, completed, outcome, 1000)


# -- counting ----------------------------------------------------------------------------------

def test_a_call_is_answered_faulted_or_crashed() -> None:
    events = [
        _event(Ok(None)),
        _event(Err("not_found", "no such invocation")),
        _event(Err("backend_unavailable", "away")),
        _event(Crash("ConnectionError", "dropped")),
        _event(None, completed=None),
        _event(Crash("RuntimeError", "a bug")),
    ]
    answers = answers_of(events, 0.01)
    assert answers == Answers(6, 2, 3, 1, (("backend_unavailable", 1), ("ConnectionError", 1),
                                           ("without an answer", 1)), allowed=0)
    assert answers.exceeded
    assert answers.describe() == ("6 calls: 2 answered, 3 faulted (1 backend_unavailable, "
                                  "1 ConnectionError, 1 without an answer), 1 crashed")
    assert [faulted(e.outcome) for e in events] == [False, False, True, True, True, False]


def test_one_percent_of_the_calls_may_fault_at_every_profile() -> None:
    assert MAX_FAULTED == 0.01
    assert {p.name: p.concurrent_max_faulted for p in PROFILES.values()} == {
        "quick": 0.01, "standard": 0.01, "thorough": 0.01}
    three = [_event(Err("backend_unavailable", ""))] * 3
    assert answers_of([_event(Ok(None))] * 300 + three, 0.01).exceeded is False
    assert answers_of([_event(Ok(None))] * 299 + three + three[:1], 0.01).exceeded is True
    assert answers_of(three, None).exceeded is False  # no limit: a history checked offline


def test_the_reason_names_the_faulted_calls_and_the_profiles_limit() -> None:
    answers = Answers(303, 250, 53, 0, (("backend_unavailable", 40), ("ConnectionError", 13)),
                      allowed=3)
    assert no_evidence(answers, PROFILES["quick"]) == (
        "53 of 303 calls faulted (40 backend_unavailable, 13 ConnectionError), more than the 3 "
        "(1% of the calls) the quick profile allows: a faulted call is not an answer, so the "
        "history was not checked for linearizability")
    assert no_evidence(attrs.evolve(answers, faulted=3, answered=300), PROFILES["quick"]) is None
    assert no_evidence(Answers(0, 0, 0, allowed=0), PROFILES["quick"]) == (
        "the concurrent run made no call")


# -- the flaky backend: never a pass ------------------------------------------------------------

def _lin_only(name: str, adapter: str) -> RunReport:
    """``check`` of the concurrent run first, stopped once it has judged."""
    return fencepost.check(name, adapter, profile="quick", seed=1, first=(CONCURRENT,),
                           stop_when=lambda evidence: CONCURRENT in evidence.ended)


def test_a_flaky_backend_leaves_linearizability_unknown_with_the_faulted_count() -> None:
    report = _lin_only("adk-ledger", "mutant:flaky_backend")
    [lin] = [v for v in report.verdicts if v.clause.id == "ADK-LIN-001"]
    answers = report.concurrent
    assert answers is not None and lin.concurrent == answers
    faults = sum(1 for e in report.history.events if e.indeterminate)
    assert (answers.calls, answers.faulted, answers.allowed) == (
        len(report.history.events), faults, answers.calls // 100)
    assert answers.exceeded and answers.crashed == 0
    assert answers.answered == answers.calls - answers.faulted
    assert {kind for kind, _ in answers.kinds} <= {"backend_unavailable", "ConnectionError"}
    assert (lin.status, lin.evidence) == (UNKNOWN, 0)
    assert lin.reason == (
        f"concurrent: {answers.faulted} of {answers.calls} calls faulted "
        f"({answers.faulted_by()}), more than the {answers.allowed} (1% of the calls) the "
        "quick profile allows: a faulted call is not an answer, so the history was not "
        "checked for linearizability")
    assert report.failed() == []

    data = to_json(report)
    assert data["concurrent"] == {
        "calls": answers.calls, "answered": answers.answered, "faulted": answers.faulted,
        "crashed": 0, "faulted_by": dict(answers.kinds), "allowed": answers.allowed}
    [clause] = [c for c in data["clauses"] if c["id"] == "ADK-LIN-001"]
    assert (clause["status"], clause["faulted"], clause["evidence"]) == (
        "unknown", answers.faulted, 0)
    assert {c["faulted"] for c in data["clauses"] if c["id"] != "ADK-LIN-001"} == {None}
    again = report_from_json(data)
    assert again.concurrent == answers
    assert [v.concurrent for v in again.verdicts if v.clause.id == "ADK-LIN-001"] == [answers]

    cell = f"0 ({answers.faulted} of {answers.calls} calls faulted)"
    line = (f"{answers.calls} calls: {answers.answered} answered, {answers.faulted} faulted "
            f"({answers.faulted_by()}); at most {answers.allowed} may fault")
    markdown = to_markdown(report)
    assert f"| concurrent run     | {line}" in markdown.replace("\\", "")
    [row] = [r for r in markdown.splitlines() if r.startswith("| ADK-LIN-001")]
    assert f"| {cell} |" in row
    html = to_html(report)
    assert f"<td>{cell}</td>" in html and f"<dd>{line}</dd>" in html
    assert f"Concurrent run: {line}" in to_summary(report).replace("\\", "")
    [row] = [r for r in summary_table(report).splitlines() if r.startswith("ADK-LIN-001")]
    assert f" {cell} " in row


def test_the_checker_alone_would_pass_the_flaky_history(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its faulted calls may each have taken effect or not, so the search explains every answer:
    only the rule that a faulted call is not an answer keeps LIN-001 from passing."""
    report = _lin_only("adk-ledger", "mutant:flaky_backend")
    assert report.concurrent is not None and report.concurrent.exceeded
    report.history.save(tmp_path / "history.jsonl")
    assert main(["analyze", str(tmp_path / "history.jsonl"), "--budget", "inf"]) == 0
    verdict, counts = capsys.readouterr().out.splitlines()
    assert verdict.startswith(f"linearizable: {report.concurrent.calls} events")
    assert counts == attrs.evolve(report.concurrent, allowed=None).describe()


@pytest.mark.parametrize("name", sorted(LIN))
def test_the_flaky_backend_is_caught_as_an_expected_unknown(name: str) -> None:
    [mutant] = [m for m in contract_named(name).mutants if m.name == "flaky_backend"]
    assert (mutant.expected, mutant.expected_clause) == (Expected.UNKNOWN, LIN[name])
    [row] = run_mutants(name, base="memory", only=["flaky_backend"])
    assert (row.caught, row.caught_by, row.expected, row.steps) == (
        True, [LIN[name]], "unknown", 0)


def test_a_correct_store_passes_with_no_call_faulted() -> None:
    report = _lin_only("adk-ledger", "memory")
    [lin] = [v for v in report.verdicts if v.clause.id == "ADK-LIN-001"]
    answers = report.concurrent
    calls = len(report.history.events)
    assert answers == Answers(calls, calls, 0, 0, (), allowed=calls // 100)
    assert (lin.status, lin.reason, lin.evidence, lin.concurrent) == (PASS, "", calls, answers)
    [clause] = [c for c in to_json(report)["clauses"] if c["id"] == "ADK-LIN-001"]
    assert (clause["status"], clause["faulted"], clause["evidence"]) == ("pass", 0, calls)


def test_a_search_out_of_budget_says_how_many_calls_faulted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Faulted calls within the limit are searched; when the search runs out of its budget
    (faulted calls widen it), the reason gives their count too."""
    from fencepost.scenarios import phases

    def out_of_budget(*args: Any, **kwargs: Any) -> ConcurrentRun:
        run = run_concurrent(*args, **kwargs)
        part = PartitionResult(None, UNKNOWN_RESULT, run.answers.calls, 1.0, 10)
        return attrs.evolve(run, verdict=Verdict(UNKNOWN_RESULT, (part,), 1.0),
                            answers=attrs.evolve(run.answers, answered=run.answers.calls - 2,
                                                 faulted=2, kinds=(("backend_unavailable", 2),)))

    monkeypatch.setattr(phases, "run_concurrent", out_of_budget)
    report = _lin_only("adk-ledger", "memory")
    [lin] = [v for v in report.verdicts if v.clause.id == "ADK-LIN-001"]
    calls = len(report.history.events)
    assert (lin.status, lin.reason) == (UNKNOWN, (
        f"concurrent: unknown: {calls} events in 1 partition(s), checked in 1.000 s; 1 unknown "
        f"(budget exhausted); {calls} calls: {calls - 2} answered, 2 faulted "
        "(2 backend_unavailable)"))


# -- what counts as caught ----------------------------------------------------------------------

def _report(status: str, answers: Answers | None, failed_too: bool = False) -> RunReport:
    entry = contract_named("adk-ledger")
    lin = ClauseVerdict(entry.clauses["ADK-LIN-001"], status, "why", 0, None, {}, answers)
    other = ClauseVerdict(entry.clauses["ADK-FENCE-001"], "fail" if failed_too else "pass")
    return RunReport("adk-ledger", "mutant:flaky_backend", "0", "quick", 1, {}, frozenset(),
                     {}, 0, 0, (lin, other), "", concurrent=answers)


@pytest.mark.parametrize(("status", "answers", "failed_too", "expected"), [
    ("unknown", Answers(303, 250, 53, allowed=3), False, (True, ["ADK-LIN-001"])),
    ("pass", Answers(303, 303, 0, allowed=3), False, (False, [])),
    ("unknown", Answers(303, 303, 0, allowed=3), False, (False, [])),  # budget, not faults
    ("unknown", Answers(303, 250, 53, allowed=3), True, (False, ["ADK-FENCE-001",
                                                                  "ADK-LIN-001"])),
])
def test_an_expected_unknown_is_caught_only_for_its_faults(
        status: str, answers: Answers, failed_too: bool, expected: tuple[bool, list[str]]
        ) -> None:
    [mutant] = [m for m in contract_named("adk-ledger").mutants if m.name == "flaky_backend"]
    assert caught(mutant, _report(status, answers, failed_too)) == expected


# -- a race whose racer faulted shows nothing ---------------------------------------------------

class _Dropping:
    """Answers every get, then loses the connection on the second one."""

    def __init__(self) -> None:
        self.calls = 0

    def get(self, invocation_id: str) -> None:
        self.calls += 1
        if self.calls == 2:
            raise BackendUnavailable("the database is away")


def test_a_race_with_a_faulted_racer_is_lost_not_judged() -> None:
    with pytest.raises(StoreLost) as lost:
        release_together(_Dropping(), [GET, GET, GET])
    assert str(lost.value) == ("get: store unavailable (error backend_unavailable: the "
                               "database is away): a racing call faulted, so the race shows "
                               "nothing")


def test_evidence_of_parts_keeps_the_concurrent_runs_count() -> None:
    answers = Answers(10, 9, 1, allowed=0)
    assert merged([Evidence(), Evidence(concurrent=answers), Evidence()]).concurrent == answers
