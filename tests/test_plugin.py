"""The pytest plugin runs the conformance suite against an external MODULE:FACTORY adapter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fencepost.spec import adk_ledger
from fencepost.spec.adk_ledger import CLAUSES

EXTERNAL = str(Path(__file__).parent / "external")
ADK = len(CLAUSES)
LACKING = sum(1 for c in CLAUSES if c.requires - {"concurrency"})  # my_ledger: concurrency only
PASSING = ADK - LACKING
OPTION_NAMES = sorted(c.name for c in (*adk_ledger.CHOICES, *getattr(adk_ledger, "SETTINGS", ())))


def run_pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in ``tmp_path``, with ``tmp_path/tmp`` as its private temporary directory (what a
    run leaves there is its own, whatever else runs alongside)."""
    private = tmp_path / "tmp"
    private.mkdir(exist_ok=True)
    path = [EXTERNAL, str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), TMPDIR=str(private))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfs", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )


def test_plugin_reports_one_test_per_clause(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "my_ledger:make_ledger", "--fencepost-seed", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{PASSING} passed, {LACKING} skipped" in result.stdout
    assert "adapter lacks capability owner_liveness" in result.stdout


@pytest.mark.long
def test_plugin_fails_the_broken_clause_with_its_counterexample(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "my_ledger:make_zombie_ledger",
                        "--fencepost-seed", "5")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED fencepost::adk-ledger::ADK-FENCE-001" in result.stdout
    assert "model: error stale_owner" in result.stdout


def test_plugin_passes_the_shrink_budget_and_runs_the_parts_in_processes(
        tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "my_ledger:make_zombie_ledger",
                        "--fencepost-seed", "5", "--fencepost-shrink-budget", "0",
                        "--fencepost-jobs", "2")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED fencepost::adk-ledger::ADK-FENCE-001" in result.stdout
    assert "--fencepost-seed" not in result.stdout  # the replay is the command's
    assert "--seed 5 --shrink-budget 0" in result.stdout, result.stdout


def test_plugin_only_deselects_the_projects_own_tests(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    assert True\n")
    both = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                      "--fencepost-adapter", "my_ledger:make_ledger", "--fencepost-seed", "3")
    assert f"{PASSING + 1} passed, {LACKING} skipped" in both.stdout, both.stdout
    only = run_pytest(tmp_path, "--fencepost-only", "--fencepost-contract", "adk-ledger",
                      "--fencepost-adapter", "my_ledger:make_ledger", "--fencepost-seed", "3")
    assert f"{PASSING} passed, {LACKING} skipped, 1 deselected" in only.stdout, only.stdout


def test_plugin_bad_adapter_is_a_usage_error(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "no.such.module:factory")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "cannot import module 'no.such.module'" in result.stderr


def assert_one_usage_error(result: subprocess.CompletedProcess[str], message: str) -> None:
    """pytest's usage error (exit 4), one line, before anything was collected or run."""
    assert result.returncode == 4, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [f"ERROR: fencepost: {message}"], result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "passed" not in result.stdout and "failed" not in result.stdout, result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--fencepost-option", "nosuch=1"],
     f"unknown option 'nosuch'; this contract has {', '.join(OPTION_NAMES)}"),
    (["--fencepost-option", "finish_phases=sometimes"],
     "option finish_phases='sometimes' is not supported; use one of strict, any"),
    (["--fencepost-option", "finish_phases"],
     "--fencepost-option takes NAME=VALUE, not 'finish_phases'"),
    (["--fencepost-shrink-budget", "fast"],
     "--fencepost-shrink-budget: a shrink budget is SECONDS or SECONDS/TOTAL_SECONDS (or "
     "none), not 'fast'"),
    (["--fencepost-jobs", "0"], "--fencepost-jobs must be 1 or more, not 0"),
])
def test_plugin_bad_option_is_one_usage_error_before_collection(
        tmp_path: Path, args: list[str], message: str) -> None:
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "my_ledger:make_ledger", *args)
    assert_one_usage_error(result, message)


@pytest.mark.parametrize("args", [["--fencepost-adapter", "memory"],
                                  ["--fencepost-option", "finish_phases=any"],
                                  ["--fencepost-only"]])
def test_plugin_flag_without_a_contract_is_a_usage_error(tmp_path: Path,
                                                         args: list[str]) -> None:
    result = run_pytest(tmp_path, *args)
    assert_one_usage_error(result, f"{args[0]} given without --fencepost-contract; add "
                                   "--fencepost-contract NAME (one of adk-ledger, "
                                   "ledgence-tasks, snodo-tasks)")


def test_plugin_unknown_contract_is_a_usage_error(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--fencepost-contract", "nope")
    assert_one_usage_error(result, "unknown contract 'nope'; choose one of adk-ledger, "
                                   "ledgence-tasks, snodo-tasks")


def test_plugin_runs_a_failing_check_once_and_fails_each_clause_in_one_line(
        tmp_path: Path) -> None:
    """A store missing its methods is found when the check opens it: every clause fails with
    that one line, and the factory was called once, not once per clause."""
    (tmp_path / "counting_store.py").write_text(
        "from pathlib import Path\n\n"
        "def make(env):\n"
        "    with open(Path(__file__).with_name('calls.txt'), 'a') as f:\n"
        "        f.write('call\\n')\n"
        "    return object()\n")
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "counting_store:make")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{ADK} failed" in result.stdout, result.stdout
    assert (tmp_path / "calls.txt").read_text() == "call\n"
    # one line per clause in its failure section (the short summary truncates it)
    assert result.stdout.count("\nfencepost: object lacks protocol methods create") == ADK
    assert "Traceback" not in result.stdout + result.stderr


def test_plugin_runs_a_check_that_raises_once(tmp_path: Path) -> None:
    """A check that raised (a bug of the kit) is not run again for every clause: the first
    clause shows the traceback, the others one line."""
    (tmp_path / "conftest.py").write_text(
        "import fencepost.api\n\n"
        "def broken_check(*args, **kwargs):\n"
        "    with open('calls.txt', 'a') as f:\n"
        "        f.write('call\\n')\n"
        "    raise RuntimeError('boom')\n\n"
        "fencepost.api.check = broken_check\n")
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "memory")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{ADK} failed" in result.stdout, result.stdout
    assert (tmp_path / "calls.txt").read_text() == "call\n"
    assert "raise RuntimeError('boom')" in result.stdout
    assert result.stdout.count("the conformance check raised RuntimeError: boom (its traceback "
                               "is the first clause's failure)") >= ADK - 1


def test_plugin_on_sqlite_leaves_no_temporary_directory(tmp_path: Path) -> None:
    collected = run_pytest(tmp_path, "--collect-only", "--fencepost-contract", "adk-ledger")
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert all(f"fencepost::adk-ledger::{c.id}\n" in collected.stdout for c in CLAUSES), (
        collected.stdout)
    assert list((tmp_path / "tmp").iterdir()) == []
    refused = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                         "--fencepost-option", "nosuch=1")
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert list((tmp_path / "tmp").iterdir()) == []
    ran = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger", "--fencepost-seed", "3")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"{ADK} passed" in ran.stdout, ran.stdout
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.long
def test_assert_conforms_from_a_users_own_test() -> None:
    import fencepost

    sys.path.insert(0, EXTERNAL)
    try:
        from my_ledger import make_ledger, make_zombie_ledger  # type: ignore[import-not-found]

        report = fencepost.assert_conforms("adk-ledger", make_ledger, seed=2)
        assert report.count("pass") == PASSING
        try:
            fencepost.assert_conforms("adk-ledger", make_zombie_ledger, seed=2)
        except AssertionError as e:
            assert "ADK-FENCE-001 FAILED" in str(e)
        else:
            raise AssertionError("the zombie ledger must not conform")
    finally:
        sys.path.remove(EXTERNAL)


@pytest.mark.long
def test_plugin_checks_a_store_over_the_wire_protocol(tmp_path: Path) -> None:
    """``--fencepost-adapter exec:COMMAND``: the same tests, the store in another process."""
    command = f"exec:{sys.executable} -m fencepost.cli serve adk-ledger --mutant claim_completed"
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", command, "--fencepost-seed", "3")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED fencepost::adk-ledger::ADK-CLAIM-002" in result.stdout
    unsupported = sum(1 for c in CLAUSES if "fault_injection" in c.requires)
    assert f"{unsupported} skipped" in result.stdout
