"""``fencepost check --baseline``, ``fencepost diff``, ``--summary`` and the plugin's
``--fencepost-baseline``: a CI gate that fails on a regression and not on a known failure.

The baseline is one run of a mutant holding one known failure (claim_completed
fails ADK-CLAIM-002); the regression is another mutant's (zombie_checkpoint fails
ADK-FENCE-001 and ADK-FENCE-003, which passed in the baseline, and leaves ADK-DELETE-005
unknown; its run is the slowest, Hypothesis shrinking its failure, so it runs once). The
stores of these runs declare no ``concurrency`` (the correct one runs with
``--concurrency 0``), so no verdict depends on thread timing and every run of a seed gives
the same verdicts. Each run is made once per module and shared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# One worker runs this module (its module-scoped fixture is costly): see pyproject's --dist.
pytestmark = pytest.mark.xdist_group("cli_baseline")

BASE = ["--profile", "quick", "--seed", "1", "--quiet"]
STORES = '''\
from fencepost.registry import contract_named

e = contract_named("adk-ledger")


def _sequential(name):
    """The mutant NAME on memory, declaring no concurrency."""
    mutant = e.mutant(name).store_class(e.store_class("memory"))
    return e.memory_factory(type(mutant.__name__, (mutant,),
                                 {"capabilities": mutant.capabilities - {"concurrency"}}))


zombie = _sequential("zombie_checkpoint")
claim_completed = _sequential("claim_completed")
'''
HEAD = ("against the baseline (mutant_stores:claim_completed, profile quick, seed 1, catalogue "
        "2.0):")
CLAIMED = ("claim answered ok(Invocation(invocation_id='s12-a', workflow_id='wf-1', "
           "workflow_version=3, kind='agent', checkpoint={'step': 2}, phase='runnin...")
WRITE = "fencepost check adk-ledger --report DIR writes DIR/report.json"


def fencepost(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cwd), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "fencepost.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def comparison_lines(stdout: str) -> list[str]:
    """What the run printed from the comparison's heading on."""
    lines = stdout.splitlines()
    return lines[lines.index(HEAD):]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the mutants' module and the baseline run's report."""
    path = tmp_path_factory.mktemp("baseline")
    (path / "mutant_stores.py").write_text(STORES)
    made = fencepost("check", "adk-ledger", "--adapter", "mutant_stores:claim_completed", *BASE,
                     "--report", "base", cwd=path)
    assert made.returncode == 1, made.stdout + made.stderr
    failed = [c["id"] for c in json.loads((path / "base" / "report.json").read_text())["clauses"]
              if c["status"] == "fail"]
    assert failed == ["ADK-CLAIM-002"]
    return path


def gated(work: Path, name: str, adapter: str, *more: str) -> subprocess.CompletedProcess[str]:
    """A run gated on the baseline, its report in ``name/`` and its summary appended to
    ``name.md`` (which holds a line of an earlier step already)."""
    (work / f"{name}.md").write_text("# an earlier step\n")
    return fencepost("check", "adk-ledger", "--adapter", adapter, *BASE, *more,
                     "--baseline", "base/report.json", "--report", name,
                     "--summary", f"{name}.md", cwd=work)


@pytest.fixture(scope="module")
def known(work: Path) -> subprocess.CompletedProcess[str]:
    return gated(work, "known", "mutant_stores:claim_completed")


@pytest.fixture(scope="module")
def regression(work: Path) -> subprocess.CompletedProcess[str]:
    """Shrunk to the end (``--shrink-budget none``): the failures its shrinking meets on the
    way do not depend on the machine's speed, and neither does the text of ADK-DELETE-005's
    reason, which names them."""
    return gated(work, "regression", "mutant_stores:zombie", "--shrink-budget", "none")


@pytest.fixture(scope="module")
def improvement(work: Path) -> subprocess.CompletedProcess[str]:
    return gated(work, "improvement", "memory", "--concurrency", "0")


def test_the_same_failures_again_are_known_and_pass_the_gate(
        known: subprocess.CompletedProcess[str]) -> None:
    assert known.returncode == 0, known.stdout + known.stderr
    assert comparison_lines(known.stdout) == [
        HEAD,
        f"known  ADK-CLAIM-002  fail -> fail: {CLAIMED}",
        "0 regressions, 1 known failure, 44 unchanged",
    ]
    assert "ADK-CLAIM-002 FAILED" in known.stdout  # the usual output comes first, unchanged


DELETE_005 = ("not put to the test: each of its 2 checks stopped before reaching it (failed "
              "ADK-FENCE-001; failed ADK-FENCE-001, ADK-FENCE-003)")
"""Why the zombie's run does not conclude ADK-DELETE-005: only its state machine and one
scenario reach it, and both stop at failures before (the runs that shrink those failures
reach it, but are no evidence: how far they get is the machine's speed)."""


def test_a_clause_that_passed_in_the_baseline_and_fails_now_is_a_regression(
        regression: subprocess.CompletedProcess[str]) -> None:
    assert regression.returncode == 1, regression.stdout + regression.stderr
    assert comparison_lines(regression.stdout) == [
        HEAD,
        "regression   ADK-FENCE-001   pass -> fail: checkpoint answered ok; the contract requires "
        "error stale_owner",
        "regression   ADK-FENCE-003   pass -> fail: checkpoint answered error lease_expired; the "
        "contract requires error stale_owner",
        f"regression   ADK-DELETE-005  pass -> unknown: {DELETE_005}",
        "improvement  ADK-CLAIM-002   fail -> pass",
        "3 regressions, 1 improvement, 41 unchanged",
    ]


def test_the_correct_store_shows_improvements_and_passes_the_gate(
        improvement: subprocess.CompletedProcess[str]) -> None:
    assert improvement.returncode == 0, improvement.stdout + improvement.stderr
    # the races ran on the correct store (it declares concurrency); the mutants did not
    assert comparison_lines(improvement.stdout) == [
        HEAD,
        "improvement  ADK-CREATE-004  unsupported -> pass",
        "improvement  ADK-CLAIM-002   fail -> pass",
        "improvement  ADK-CLAIM-008   unsupported -> pass",
        "improvement  ADK-RENEW-002   unsupported -> pass",
        "0 regressions, 4 improvements, 41 unchanged",
    ]


@pytest.mark.parametrize(("name", "code"), [("known", 0), ("regression", 1), ("improvement", 0)])
def test_diff_of_the_saved_reports_gives_the_same_comparison(
        work: Path, request: pytest.FixtureRequest, name: str, code: int) -> None:
    run: subprocess.CompletedProcess[str] = request.getfixturevalue(name)
    diffed = fencepost("diff", "base/report.json", f"{name}/report.json", cwd=work)
    assert diffed.returncode == code, diffed.stdout + diffed.stderr
    assert diffed.stdout.splitlines() == comparison_lines(run.stdout)
    assert diffed.stderr == ""


def test_the_summary_is_appended_with_the_counts_and_the_regressions(
        work: Path, regression: subprocess.CompletedProcess[str]) -> None:
    assert f"wrote regression.md\n\n{HEAD}" in regression.stdout
    report = json.loads((work / "regression" / "report.json").read_text())
    s, weak = report["summary"], sum(c["weak"] for c in report["clauses"])
    assert (s["pass"], s["fail"], s["unknown"], s["unsupported"]) == (36, 2, 1, 6)
    lines = (work / "regression.md").read_text().splitlines()
    assert lines[:19] == [
        "# an earlier step",
        "",
        "## fencepost: adk-ledger on mutant\\_stores:zombie",
        "",
        "Profile quick, seed 1, catalogue 2.0, kit 0.1.0.",
        "",
        f"**36 pass{f' ({weak} weak)' if weak else ''}, 2 fail, 1 unknown, 6 unsupported** of "
        "45 clauses.",
        "",
        "Unknown: `ADK-DELETE-005`",
        "",
        "### Against the baseline: 3 regressions, the gate fails",
        "",
        "Baseline: mutant\\_stores:claim\\_completed, profile quick, seed 1, catalogue 2.0. "
        "3 regressions, 1 improvement, 41 unchanged.",
        "",
        "- **Regression** `ADK-FENCE-001`: pass -\\> fail: checkpoint answered ok; the contract "
        "requires error stale\\_owner",
        "- **Regression** `ADK-FENCE-003`: pass -\\> fail: checkpoint answered error "
        "lease\\_expired; the contract requires error stale\\_owner",
        f"- **Regression** `ADK-DELETE-005`: pass -\\> unknown: {DELETE_005}",
        "- Improvements (write a new baseline to keep them): `ADK-CLAIM-002`",
        "",
    ]
    assert [line for line in lines if line.startswith("#")] == [
        "# an earlier step",
        "## fencepost: adk-ledger on mutant\\_stores:zombie",
        "### Against the baseline: 3 regressions, the gate fails",
        "### Failed clauses",
        "#### ADK-FENCE-001: a replaced owner is fenced (regression)",
        "#### ADK-FENCE-003: a wrong token on an expired lease is stale, not expired (regression)",
    ]
    # each failure: its message and the first 5 lines of its steps, in a fenced block
    fence = next(c["counterexample"] for c in report["clauses"] if c["id"] == "ADK-FENCE-001")
    steps = fence["rendered"].splitlines()
    first = lines.index("```")
    assert lines[first - 2:first + 10] == [
        "Found by `scenario:stale_token_cannot_commit_after_takeover`:",
        "",
        "```",
        fence["message"],
        *steps[:5],
        f"... {len(steps) - 5} more lines in report.md",
        "```",
        "",
    ]
    assert lines[-1] == ("Replay: `fencepost check adk-ledger --adapter mutant_stores:zombie "
                         "--profile quick --seed 1 --shrink-budget none`")


def test_the_known_runs_summary_lists_its_known_failure(
        work: Path, known: subprocess.CompletedProcess[str]) -> None:
    lines = (work / "known.md").read_text().splitlines()
    assert "### Against the baseline: no regression, the gate passes" in lines
    assert "- Known failures (failing in the baseline too): `ADK-CLAIM-002`" in lines
    assert [line for line in lines if line.startswith("#### ")] == [
        "#### ADK-CLAIM-002: completed is final for claim (known)"]


# --- refused before the run -------------------------------------------------------------------

def _edited(work: Path, name: str, edit: Any) -> str:
    data = json.loads((work / "base" / "report.json").read_text())
    edit(data)
    (work / name).write_text(json.dumps(data))
    return name


REFUSED = [
    ("snodo.json", lambda d: d.update(contract="snodo-tasks"),
     "{flag}snodo.json is a report of snodo-tasks, {now} of adk-ledger: a baseline compares "
     f"with runs of its own contract; name a report.json of adk-ledger ({WRITE})"),
    ("major.json", lambda d: d.update(catalogue_version="1.0"),
     "{flag}major.json was judged by catalogue 1.0 of adk-ledger, {now} by 2.0: between MAJOR "
     "versions a clause id can change meaning or go, so their verdicts do not compare; write a "
     f"new baseline with this kit ({WRITE})"),
    ("old.json", lambda d: d.pop("catalogue_version"),
     "{flag}old.json has no catalogue version (it was written before reports carried one); "
     f"write a new baseline with this kit ({WRITE})"),
    ("missing.json", None, "{flag}missing.json: no such file; name a report.json written by "
     "fencepost check CONTRACT --report DIR"),
]


@pytest.mark.parametrize(("name", "edit", "message"), REFUSED)
def test_a_baseline_that_does_not_compare_is_refused_before_the_run(
        work: Path, name: str, edit: Any, message: str) -> None:
    if edit is not None:
        _edited(work, name, edit)
    out = f"refused-{name}"
    result = fencepost("check", "adk-ledger", "--adapter", "mutant_stores:claim_completed",
                       *BASE, "--baseline", name, "--report", out, cwd=work)
    assert result.returncode == 2, result.stdout + result.stderr
    said = message.format(flag="--baseline ", now="this run")
    assert result.stderr.splitlines() == [f"fencepost: error: {said}"]
    assert result.stdout == "" and not (work / out).exists()  # no check ran
    diffed = fencepost("diff", name, "base/report.json", cwd=work)
    assert diffed.returncode == 2, diffed.stdout + diffed.stderr
    said = message.format(flag="baseline ", now="report base/report.json")
    assert diffed.stderr.splitlines() == [f"fencepost: error: {said}"]
    assert diffed.stdout == ""


def test_a_summary_path_that_cannot_be_written_is_refused_before_the_run(work: Path) -> None:
    result = fencepost("check", "adk-ledger", "--adapter", "mutant_stores:claim_completed",
                       *BASE, "--summary", "no/such/dir/summary.md", "--report", "nosummary",
                       cwd=work)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        f"fencepost: error: --summary no/such/dir/summary.md: directory {work}/no/such/dir does "
        "not exist; create it first"]
    assert not (work / "nosummary").exists()


def test_diff_of_a_file_that_is_not_a_report_exits_2(work: Path) -> None:
    (work / "junk.json").write_text("{}")
    result = fencepost("diff", "base/report.json", "junk.json", cwd=work)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        "fencepost: error: report junk.json: not a fencepost report.json (KeyError: "
        "'contract'); name a report.json written by fencepost check CONTRACT --report DIR"]


# --- the pytest plugin ------------------------------------------------------------------------

def plugin(work: Path, baseline: str, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in a directory of its own under ``work`` (its rootdir), the stores importable,
    gated on ``work/baseline``."""
    here = work / "plugin"
    here.mkdir(exist_ok=True)
    env = dict(os.environ, COLUMNS="200")  # the short summary's lines whole
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(work), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfsx", "--rootdir",
         str(here), "--fencepost-contract", "adk-ledger", "--fencepost-seed", "1",
         "--fencepost-baseline", str(work / baseline), *args],
        cwd=here, env=env, capture_output=True, text=True, timeout=600)


def test_the_plugin_shows_a_known_failure_as_xfailed_and_passes(work: Path) -> None:
    result = plugin(work, "base/report.json", "--fencepost-adapter",
                    "mutant_stores:claim_completed")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "38 passed, 6 skipped, 1 xfailed" in result.stdout, result.stdout
    assert ("XFAIL fencepost::adk-ledger::ADK-CLAIM-002 - known: failing in the baseline"
            in result.stdout.splitlines()), result.stdout
    assert (f"fencepost: against --fencepost-baseline {work}/base/report.json: 0 regressions, 1 "
            "known failure, 44 unchanged") in result.stdout.splitlines()


def test_the_plugin_fails_a_regression_saying_so(
        work: Path, regression: subprocess.CompletedProcess[str]) -> None:
    """Against the zombie store's report, in which ADK-CLAIM-002 passed."""
    result = plugin(work, "regression/report.json", "--fencepost-adapter",
                    "mutant_stores:claim_completed")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 38 passed, 6 skipped" in result.stdout, result.stdout
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED ")]
    assert failed == ["FAILED fencepost::adk-ledger::ADK-CLAIM-002 - regression: passed in the "
                      "baseline"], result.stdout
    assert ("regression: passed in the baseline\nADK-CLAIM-002 (completed is final for claim) "
            "failed in scenario:pause_resume_complete\n") in result.stdout
    for clause, was in (("ADK-FENCE-001", "fail"), ("ADK-FENCE-003", "fail"),
                        ("ADK-DELETE-005", "unknown")):
        assert (f"{clause} passes now; it was {was} in the baseline (an improvement: write a "
                "new baseline to keep it)") in result.stdout, result.stdout
    assert (f"fencepost: against --fencepost-baseline {work}/regression/report.json: 1 "
            "regression, 3 improvements, 41 unchanged") in result.stdout.splitlines()


@pytest.mark.parametrize(("name", "edit", "message"), [REFUSED[1], REFUSED[3]])
def test_the_plugin_refuses_a_bad_baseline_as_a_usage_error(
        work: Path, name: str, edit: Any, message: str) -> None:
    if edit is not None:
        _edited(work, name, edit)
    result = plugin(work, name, "--fencepost-adapter", "mutant_stores:claim_completed")
    assert result.returncode == 4, result.stdout + result.stderr
    said = message.format(flag=f"--fencepost-baseline {work}/", now="this run")
    assert result.stderr.strip().splitlines() == [f"ERROR: fencepost: {said}"]
    assert "passed" not in result.stdout and "failed" not in result.stdout, result.stdout


def test_the_plugin_baseline_flag_needs_a_contract(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
         "--fencepost-baseline", "base/report.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 4, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        "ERROR: fencepost: --fencepost-baseline given without --fencepost-contract; add "
        "--fencepost-contract NAME (one of adk-ledger, ledgence-tasks, snodo-tasks)"]
