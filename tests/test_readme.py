"""The README's Quickstart is exactly two command lines, and CI runs the second one."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _quickstart() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Quickstart", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line for line in block.strip().splitlines() if line.strip()]


def test_quickstart_is_two_lines_main_job_then_tests() -> None:
    run, test = _quickstart()
    assert run.endswith("fencepost check adk-ledger")
    assert "pytest" in test and "[test]" in test


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _quickstart()[1] in ci
