"""The pytest plugin runs the conformance suite against an external MODULE:FACTORY adapter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXTERNAL = str(Path(__file__).parent / "external")


def run_pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=EXTERNAL)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfs", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )


def test_plugin_reports_one_test_per_clause(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "my_ledger:make_ledger", "--fencepost-seed", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "33 passed, 5 skipped" in result.stdout
    assert "adapter lacks capability owner_liveness" in result.stdout


def test_plugin_fails_the_broken_clause_with_its_counterexample(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "my_ledger:make_zombie_ledger",
                        "--fencepost-seed", "5")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED fencepost::adk-ledger::ADK-FENCE-001" in result.stdout
    assert "model: error stale_owner" in result.stdout


def test_plugin_only_deselects_the_projects_own_tests(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    assert True\n")
    both = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                      "--fencepost-adapter", "my_ledger:make_ledger", "--fencepost-seed", "3")
    assert "34 passed, 5 skipped" in both.stdout, both.stdout
    only = run_pytest(tmp_path, "--fencepost-only", "--fencepost-contract", "adk-ledger",
                      "--fencepost-adapter", "my_ledger:make_ledger", "--fencepost-seed", "3")
    assert "33 passed, 5 skipped, 1 deselected" in only.stdout, only.stdout


def test_plugin_bad_adapter_is_a_usage_error(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--fencepost-contract", "adk-ledger",
                        "--fencepost-adapter", "no.such.module:factory")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "cannot import module 'no.such.module'" in result.stderr


def test_assert_conforms_from_a_users_own_test() -> None:
    import fencepost

    sys.path.insert(0, EXTERNAL)
    try:
        from my_ledger import make_ledger, make_zombie_ledger  # type: ignore[import-not-found]

        report = fencepost.assert_conforms("adk-ledger", make_ledger, seed=2)
        assert report.count("pass") == 33
        try:
            fencepost.assert_conforms("adk-ledger", make_zombie_ledger, seed=2)
        except AssertionError as e:
            assert "ADK-FENCE-001 FAILED" in str(e)
        else:
            raise AssertionError("the zombie ledger must not conform")
    finally:
        sys.path.remove(EXTERNAL)
