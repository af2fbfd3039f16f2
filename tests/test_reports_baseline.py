"""reports/baseline.py and reports/summary.py: each clause classified against a baseline, the
comparison's text and exit code, the refusals, and the CI summary; pure, on reports built from
the adk-ledger catalogue (no check runs)."""

from __future__ import annotations

import json
import re
import types
from collections.abc import Mapping
from pathlib import Path

import attrs
import pytest

from fencepost.errors import ConfigurationError
from fencepost.registry import contract_named, contract_names
from fencepost.reports.baseline import (
    Kind,
    classify,
    comparable,
    compare,
    gate_exit_code,
    load_baseline,
    render,
)
from fencepost.reports.json_report import dumps, report_from_json, to_json
from fencepost.reports.summary import to_summary, write_summary
from fencepost.reports.verdict import FAIL, PASS, UNKNOWN, UNSUPPORTED, ClauseVerdict, RunReport
from fencepost.scenarios.evidence import Failure
from fencepost.scenarios.trace import TraceStep
from fencepost.spec.adk_ledger import CLAUSES, Checkpoint, Claim
from fencepost.spec.clauses import Clause
from fencepost.spec.outcome import Err, Ok

CI_PAGE = Path(__file__).resolve().parents[1] / "docs" / "ci.md"
BY_ID = {c.id: c for c in CLAUSES}
OLD = Clause("ADK-OLD-001", "a clause since removed", "old.", ("machine",))
TRACE = (
    TraceStep("c1", 1000, Claim("s1-a", "c1", "t1", 1000, 50), expected=Ok(None),
              actual=Ok(None)),
    TraceStep("clock", 1050, note="advance 50 ms", event="clock"),
    TraceStep("c2", 1050, Claim("s1-a", "c2", "t2", 1050, 50), expected=Ok(None),
              actual=Ok(None)),
    TraceStep("c1", 1050, Checkpoint("s1-a", "t1", {"step": 1}, 1050, 50),
              expected=Err("stale_owner"), actual=Ok(None)),
)
FENCE_MESSAGE = "checkpoint answered ok; the contract requires error stale_owner"


def verdict(clause_id: str, status: str, reason: str = "",
            situations: Mapping[str, int] | None = None) -> ClauseVerdict:
    clause = BY_ID.get(clause_id, OLD)
    failure = Failure("scenario:takeover", reason, TRACE) if status == FAIL else None
    return ClauseVerdict(clause, status, reason, 1, failure, situations or {})


def run(changes: Mapping[str, ClauseVerdict] = {}, *, drop: tuple[str, ...] = (),
        add: tuple[ClauseVerdict, ...] = (), **fields: object) -> RunReport:
    """A report of adk-ledger in which every clause passed, but ``changes``, less ``drop``,
    plus ``add``."""
    verdicts = tuple(changes.get(c.id, verdict(c.id, PASS)) for c in CLAUSES
                     if c.id not in drop) + add
    report = RunReport("adk-ledger", "mutant_stores:zombie", "0.1.0", "quick", 1, {},
                       frozenset({"durable"}), {"total": 1.0}, 100, 10, verdicts,
                       "fencepost check adk-ledger --adapter mutant_stores:zombie --profile quick "
                       "--seed 1", catalogue_version="1.0")
    return attrs.evolve(report, **fields)  # type: ignore[misc]


# --- classification -------------------------------------------------------------------------

TABLE = {
    PASS: {PASS: Kind.UNCHANGED, FAIL: Kind.REGRESSION, UNKNOWN: Kind.REGRESSION,
           UNSUPPORTED: Kind.REGRESSION},
    FAIL: {PASS: Kind.IMPROVEMENT, FAIL: Kind.KNOWN, UNKNOWN: Kind.KNOWN, UNSUPPORTED: Kind.KNOWN},
    UNKNOWN: {PASS: Kind.IMPROVEMENT, FAIL: Kind.REGRESSION, UNKNOWN: Kind.KNOWN,
              UNSUPPORTED: Kind.KNOWN},
    UNSUPPORTED: {PASS: Kind.IMPROVEMENT, FAIL: Kind.REGRESSION, UNKNOWN: Kind.KNOWN,
                  UNSUPPORTED: Kind.UNCHANGED},
}


@pytest.mark.parametrize(("was", "now"), [(w, n) for w in TABLE for n in TABLE[w]])
def test_each_pair_of_verdicts_is_classified_as_the_table_says(was: str, now: str) -> None:
    assert classify(was, now) == TABLE[was][now]  # type: ignore[arg-type]
    assert classify(None, now) == Kind.NEW  # type: ignore[arg-type]
    assert classify(was, None) == Kind.REMOVED  # type: ignore[arg-type]


def test_the_docs_table_is_the_classification() -> None:
    """docs/ci.md's "Gating on a baseline" table says what classify() does, cell by cell."""
    section = CI_PAGE.read_text().split("## Gating on a baseline", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (pass|fail|unknown|unsupported) +\|(.*)\|$", section, re.M)
    header = re.search(r"^\| baseline \\ now +\|(.*)\|$", section, re.M)
    assert header is not None and len(rows) == 4, section
    columns = [c.strip() for c in header[1].split("|")]
    assert columns == ["pass", "fail", "unknown", "unsupported", "(not in this run)"]
    for was, cells in rows:
        said = [c.strip() for c in cells.split("|")]
        assert said == [_label(was, now) for now in columns[:4]] + ["removed"], was


def _label(was: str, now: str) -> str:
    """What the comparison calls a change: a known clause failing in neither is still
    unknown."""
    kind = TABLE[was][now]
    return "still unknown" if kind == Kind.KNOWN and FAIL not in (was, now) else kind.value


def test_render_lists_each_change_regressions_first_then_the_counts() -> None:
    baseline = run({"ADK-FENCE-003": verdict("ADK-FENCE-003", FAIL, "expired, not stale"),
                    "ADK-ARG-004": verdict("ADK-ARG-004", FAIL, "not_found first"),
                    "ADK-LIN-001": verdict("ADK-LIN-001", UNKNOWN, "budget spent")},
                   drop=("ADK-DELETE-005", "ADK-DURABLE-001"), add=(verdict("ADK-OLD-001", PASS),))
    current = run({"ADK-FENCE-001": verdict("ADK-FENCE-001", FAIL, FENCE_MESSAGE + "\nmore"),
                   "ADK-FENCE-003": verdict("ADK-FENCE-003", FAIL, "expired, not stale"),
                   "ADK-LIN-001": verdict("ADK-LIN-001", UNKNOWN, "budget spent again"),
                   "ADK-DELETE-005": verdict("ADK-DELETE-005", FAIL, "delete answered ok")})
    comparison = compare(baseline, current)
    assert render(comparison) == "\n".join([
        "against the baseline (mutant_stores:zombie, profile quick, seed 1, catalogue 1.0):",
        f"regression     ADK-FENCE-001    pass -> fail: {FENCE_MESSAGE} ...",
        "known          ADK-FENCE-003    fail -> fail: expired, not stale",
        "still unknown  ADK-LIN-001      unknown -> unknown: budget spent again",
        "improvement    ADK-ARG-004      fail -> pass",
        "new            ADK-DELETE-005   fail: delete answered ok",
        "new            ADK-DURABLE-001  pass",
        "removed        ADK-OLD-001      pass -> not in this run",
        "1 regression, 1 known failure, 1 still unknown, 1 improvement, 2 new, 1 removed, "
        "39 unchanged",
    ])
    assert [c.clause for c in comparison.regressions] == ["ADK-FENCE-001"]
    assert comparison.exit_code == 1 and gate_exit_code(current, comparison) == 1


def test_known_failures_new_clauses_and_improvements_pass_the_gate() -> None:
    baseline = run({"ADK-FENCE-001": verdict("ADK-FENCE-001", FAIL, FENCE_MESSAGE),
                    "ADK-ARG-004": verdict("ADK-ARG-004", FAIL, "not_found first")},
                   drop=("ADK-DELETE-005",))
    current = run({"ADK-FENCE-001": verdict("ADK-FENCE-001", FAIL, FENCE_MESSAGE),
                   "ADK-DELETE-005": verdict("ADK-DELETE-005", FAIL, "delete answered ok")})
    comparison = compare(baseline, current)
    assert comparison.counts() == "0 regressions, 1 known failure, 1 improvement, 1 new, " \
                                  "42 unchanged"
    assert comparison.exit_code == 0 and gate_exit_code(current, comparison) == 0
    # the adapter's own fault (close, discard) is not the baseline's to excuse
    faulty = attrs.evolve(current, faults=("close raised OSError: gone",))
    assert gate_exit_code(faulty, compare(baseline, faulty)) == 2


def test_a_weak_pass_is_a_pass() -> None:
    weak = verdict("ADK-FENCE-001", PASS, situations={"after a takeover": 0})
    assert weak.weak
    baseline = run({"ADK-FENCE-001": weak})
    failed = compare(baseline, run({"ADK-FENCE-001": verdict("ADK-FENCE-001", FAIL, "stale")}))
    assert render(failed).splitlines()[1] == "regression  ADK-FENCE-001  pass (weak) -> fail: stale"
    assert compare(baseline, run()).counts() == "0 regressions, 45 unchanged"
    assert compare(run(), baseline).counts() == "0 regressions, 45 unchanged"


def test_a_clause_no_longer_put_to_the_test_is_a_regression() -> None:
    gone = run({"ADK-LIN-001": verdict("ADK-LIN-001", UNSUPPORTED, "no concurrent run"),
                "ADK-GET-001": verdict("ADK-GET-001", UNKNOWN, "stopped before it")})
    comparison = compare(run(), gone)
    assert render(comparison).splitlines()[1:] == [
        "regression  ADK-GET-001  pass -> unknown: stopped before it",
        "regression  ADK-LIN-001  pass -> unsupported: no concurrent run",
        "2 regressions, 43 unchanged",
    ]
    assert comparison.exit_code == 1


# --- refusals --------------------------------------------------------------------------------

WRITE = "fencepost check adk-ledger --report DIR writes DIR/report.json"


@pytest.mark.parametrize(("fields", "message"), [
    ({"contract": "snodo-tasks"},
     "the baseline is a report of snodo-tasks, this run of adk-ledger: a baseline compares with "
     f"runs of its own contract; name a report.json of adk-ledger ({WRITE})"),
    ({"catalogue_version": "2.0"},
     "the baseline was judged by catalogue 2.0 of adk-ledger, this run by 1.0: between MAJOR "
     "versions a clause id can change meaning or go, so their verdicts do not compare; write a "
     f"new baseline with this kit ({WRITE})"),
    ({"catalogue_version": ""},
     "the baseline has no catalogue version (it was written before reports carried one); write "
     f"a new baseline with this kit ({WRITE})"),
    ({"catalogue_version": "one"},
     "the baseline has catalogue version 'one', not MAJOR.MINOR; write a new baseline with this "
     f"kit ({WRITE})"),
])
def test_a_baseline_that_does_not_compare_is_refused_in_one_line(
        fields: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        compare(run(**fields), run())
    assert str(caught.value) == message


def test_a_current_report_without_a_catalogue_version_is_refused_too() -> None:
    with pytest.raises(ConfigurationError) as caught:
        comparable(run(), "adk-ledger", "", what="baseline old.json", now="report new.json")
    assert str(caught.value) == (
        "report new.json has no catalogue version (it was written before reports carried one); "
        f"write it again with this kit ({WRITE})")


def test_another_minor_version_compares_with_a_note() -> None:
    comparison = compare(run(), run(catalogue_version="1.1", profile="standard",
                                    options={"finish_phases": "any"}))
    assert comparison.notes == (
        "catalogue 1.0 in the baseline, 1.1 now: clauses added since are new, not regressions",
        "profile quick in the baseline, standard now: a smaller profile can leave a clause "
        "unknown",
        "options differ: none in the baseline, finish_phases=any now",
    )
    assert render(comparison).splitlines()[1:] == [
        f"note: {note}" for note in comparison.notes] + ["0 regressions, 45 unchanged"]


# --- loading ---------------------------------------------------------------------------------

HINT = "name a report.json written by fencepost check CONTRACT --report DIR"


def test_load_baseline_says_in_one_line_what_is_wrong_with_the_file(tmp_path: Path) -> None:
    (tmp_path / "text.json").write_text("not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    cases = {
        "missing.json": f"--baseline {tmp_path}/missing.json: no such file; {HINT}",
        "": f"--baseline {tmp_path}/ is a directory; name the report.json in it",
        "text.json": f"--baseline {tmp_path}/text.json: not a report.json: Expecting value: "
                     f"line 1 column 1 (char 0); {HINT}",
        "list.json": f"--baseline {tmp_path}/list.json: not a fencepost report.json "
                     "(TypeError: list indices must be integers or slices, not str); " + HINT,
    }
    for name, message in cases.items():
        with pytest.raises(ConfigurationError) as caught:
            load_baseline(f"{tmp_path}/{name}")
        assert str(caught.value) == message


def test_a_baseline_that_never_ends_is_refused_not_read_until_memory_runs_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from fencepost.reports import json_report

    os.mkfifo(tmp_path / "pipe")  # opened, it would wait for a writer forever
    for path in (str(tmp_path / "pipe"), "/dev/zero"):
        if not os.path.exists(path):
            continue
        with pytest.raises(ConfigurationError) as caught:
            load_baseline(path)
        assert str(caught.value) == f"--baseline {path} is not a regular file; {HINT}"
    monkeypatch.setattr(json_report, "REPORT_CHARS", 3 << 20)
    (tmp_path / "big.json").write_text(" " * ((3 << 20) + 1))
    with pytest.raises(ConfigurationError) as caught:
        load_baseline(str(tmp_path / "big.json"))
    assert str(caught.value) == (f"--baseline {tmp_path}/big.json: not a report.json: longer "
                                 f"than 3 Mi characters; {HINT}")


def test_report_json_carries_the_catalogue_version_and_an_old_one_loads_without(
        tmp_path: Path) -> None:
    report = run(catalogue_version="1.3")
    assert to_json(report)["catalogue_version"] == "1.3"
    (tmp_path / "report.json").write_text(dumps(report))
    assert load_baseline(str(tmp_path / "report.json")).catalogue_version == "1.3"
    old = to_json(report)
    del old["catalogue_version"]
    assert report_from_json(json.loads(json.dumps(old))).catalogue_version == ""
    assert RunReport("t", "x", "0", "quick", 1, {}, frozenset(), {}, 0, 0, (),
                     "replay").catalogue_version == ""


@pytest.mark.parametrize("name", contract_names())
def test_each_contract_says_its_catalogue_version(name: str) -> None:
    # 2.0 for each: issue 25 changed what values are sent and which refusals are due;
    # ledgence-tasks 2.1: LDG-DISPATCH-009 added (the routed queue)
    assert contract_named(name).catalogue_version == {"ledgence-tasks": "2.1"}.get(name, "2.0")


def test_a_spec_without_a_catalogue_version_is_at_1_0() -> None:
    entry = contract_named("adk-ledger")
    bare = types.ModuleType("bare_spec")
    assert attrs.evolve(entry, spec=bare).catalogue_version == "1.0"
    bare.CATALOGUE_VERSION = "1.4"  # type: ignore[attr-defined]
    assert attrs.evolve(entry, spec=bare).catalogue_version == "1.4"


# --- hostile text ----------------------------------------------------------------------------

def test_what_a_store_says_cannot_break_the_comparison_or_the_summary() -> None:
    hostile = "\x1b[2J| <b>boom</b> `x` postgresql://alice:s3cret@db/test\nsecond line"
    current = run({"ADK-FENCE-001": verdict("ADK-FENCE-001", FAIL, hostile)},
                  adapter="postgresql://alice:s3cret@db/test")
    comparison = compare(run(), current)
    line = render(comparison).splitlines()[1]
    assert line == ("regression  ADK-FENCE-001  pass -> fail: \\x1b[2J| <b>boom</b> `x` "
                    "postgresql://alice:***@db/test ...")
    summary = to_summary(current, comparison)
    assert "s3cret" not in summary and "\x1b" not in summary
    assert ("- **Regression** `ADK-FENCE-001`: pass -\\> fail: \\\\x1b\\[2J\\| \\<b\\>boom\\</b\\> "
            "\\`x\\` postgresql://alice:\\*\\*\\*@db/test ...") in summary.splitlines()
    assert summary.splitlines()[0] == "## fencepost: adk-ledger on postgresql://alice:\\*\\*\\*@db/test"


# --- the summary -----------------------------------------------------------------------------

def test_the_summary_shows_the_counts_the_comparison_and_each_failure_briefly() -> None:
    baseline = run({"ADK-ARG-004": verdict("ADK-ARG-004", FAIL, "not_found first"),
                    "ADK-FENCE-003": verdict("ADK-FENCE-003", FAIL, "expired, not stale")})
    current = run({"ADK-FENCE-001": verdict("ADK-FENCE-001", FAIL, FENCE_MESSAGE),
                   "ADK-FENCE-003": verdict("ADK-FENCE-003", FAIL, "expired, not stale"),
                   "ADK-FAULT-001": verdict("ADK-FAULT-001", UNSUPPORTED, "no fault_injection")})
    trace = [
        "  1. [1000 ms] c1: claim(invocation_id='s1-a', owner='c1', owner_token='t1', "
        "now_ms=1000, lease_ms=50)",
        "       -> ok",
        "  2. [1050 ms] clock: advance 50 ms",
        "  3. [1050 ms] c2: claim(invocation_id='s1-a', owner='c2', owner_token='t2', "
        "now_ms=1050, lease_ms=50)",
        "       -> ok",
        "... 3 more lines in report.md",
    ]
    assert to_summary(current, compare(baseline, current)).splitlines() == [
        "## fencepost: adk-ledger on mutant\\_stores:zombie",
        "",
        "Profile quick, seed 1, catalogue 1.0, kit 0.1.0.",
        "",
        "**42 pass, 2 fail, 0 unknown, 1 unsupported** of 45 clauses.",
        "",
        "### Against the baseline: 2 regressions, the gate fails",
        "",
        "Baseline: mutant\\_stores:zombie, profile quick, seed 1, catalogue 1.0. 2 regressions, "
        "1 known failure, 1 improvement, 41 unchanged.",
        "",
        "- **Regression** `ADK-FENCE-001`: pass -\\> fail: " + FENCE_MESSAGE.replace("_", "\\_"),
        "- **Regression** `ADK-FAULT-001`: pass -\\> unsupported: no fault\\_injection",
        "- Known failures (failing in the baseline too): `ADK-FENCE-003`",
        "- Improvements (write a new baseline to keep them): `ADK-ARG-004`",
        "",
        "### Failed clauses",
        "",
        "#### ADK-FENCE-001: a replaced owner is fenced (regression)",
        "",
        "Found by `scenario:takeover`:",
        "",
        "```",
        FENCE_MESSAGE,
        *trace,
        "```",
        "",
        "#### ADK-FENCE-003: a wrong token on an expired lease is stale, not expired (known)",
        "",
        "Found by `scenario:takeover`:",
        "",
        "```",
        "expired, not stale",
        *trace,
        "```",
        "",
        "Replay: `fencepost check adk-ledger --adapter mutant_stores:zombie --profile quick "
        "--seed 1`",
    ]


def test_without_a_baseline_the_summary_has_no_comparison() -> None:
    text = to_summary(run({"ADK-LIN-001": verdict("ADK-LIN-001", UNKNOWN, "budget spent")}))
    assert "Against the baseline" not in text and "Failed clauses" not in text
    assert "**44 pass, 0 fail, 1 unknown, 0 unsupported** of 45 clauses." in text
    assert "Unknown: `ADK-LIN-001`" in text.splitlines()


def test_the_summary_is_appended_to_a_file_the_job_shares(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    write_summary(str(path), "## first\n")
    assert path.read_text() == "## first\n"
    write_summary(str(path), "## second\n")
    assert path.read_text() == "## first\n\n## second\n"
