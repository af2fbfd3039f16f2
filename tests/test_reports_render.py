"""Report files are whole or absent, and a report directory never mixes two runs."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fencepost import cli
from fencepost.api import check
from fencepost.reports import render
from fencepost.reports.render import REPORT_FILES, ReportsNotWritten, write_reports
from fencepost.reports.verdict import RunReport


@pytest.fixture(scope="module")
def report() -> RunReport:
    return check("adk-ledger", "memory", profile="quick", seed=1, concurrency=0)


def test_the_command_line_names_the_same_report_files() -> None:
    assert cli.REPORT_FILES == REPORT_FILES


def test_a_file_that_cannot_be_written_is_absent_and_named(
        report: RunReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replace = os.replace

    def full_disk(src: Any, dst: Any) -> None:
        if str(dst).endswith("report.html"):
            raise OSError(errno.ENOSPC, "No space left on device")
        replace(src, dst)

    monkeypatch.setattr(render.os, "replace", full_disk)
    with pytest.raises(ReportsNotWritten) as refused:
        write_reports(report, str(tmp_path))
    assert str(refused.value) == (
        f"report.html not written in {tmp_path}: No space left on device")
    assert refused.value.written == [str(tmp_path / n)
                                     for n in ("report.json", "report.md", "junit.xml")]
    assert sorted(os.listdir(tmp_path)) == ["junit.xml", "report.json", "report.md"]
    assert json.loads((tmp_path / "report.json").read_text())["contract"] == "adk-ledger"


def test_a_directory_that_cannot_be_made_is_said_with_no_report_written(
        report: RunReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(path: Any, exist_ok: bool = False) -> None:
        raise OSError(errno.ENOENT, "No such file or directory", path)

    monkeypatch.setattr(render.os, "makedirs", read_only)
    with pytest.raises(ReportsNotWritten) as refused:
        write_reports(report, str(tmp_path / "R"))
    assert str(refused.value) == f"no report written in {tmp_path / 'R'}: No such file or directory"
    assert refused.value.written == []
    assert os.listdir(tmp_path) == []


def test_a_directory_holding_another_runs_report_keeps_none_of_its_files(
        report: RunReport, tmp_path: Path) -> None:
    (tmp_path / "history.jsonl").write_text('{"fencepost": "another run"}\n')
    (tmp_path / "report.md").write_text("another run")
    (tmp_path / "notes.txt").write_text("mine")
    written = write_reports(report, str(tmp_path))
    assert report.history is None
    assert sorted(os.listdir(tmp_path)) == [
        "junit.xml", "notes.txt", "report.html", "report.json", "report.md"]
    assert written == [str(tmp_path / n) for n in REPORT_FILES[:4]]
    assert "another run" not in (tmp_path / "report.md").read_text()
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A 64 KiB tmpfs: a report does not fit on it."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must be able to mount a small tmpfs: {made.stderr.strip()}")
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {made.stderr.strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_is_one_line_and_the_verdict_keeps_its_exit_code(
        small_disk: Path) -> None:
    target = small_disk / "r"
    ran = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter", "memory",
         "--seed", "1", "--concurrency", "0", "--quiet", "--report", str(target)],
        capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    [line] = ran.stderr.splitlines()
    assert line.startswith("fencepost: ") and line.endswith(
        f"not written in {target}: No space left on device")
    left = sorted(os.listdir(target))
    assert left and not [n for n in left if n not in REPORT_FILES]  # no temporary files
    assert sorted(f"wrote {target / n}" for n in left) == sorted(
        s for s in ran.stdout.splitlines() if s.startswith("wrote "))
    if "report.json" in left:
        assert json.loads((target / "report.json").read_text())["contract"] == "adk-ledger"
