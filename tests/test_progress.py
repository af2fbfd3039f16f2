"""Progress on stderr (fencepost/progress.py): a rewritten line on a terminal, one line per
phase elsewhere, nothing when quiet; each with the time since the run began."""

from __future__ import annotations

import io
import re
import sys

import pytest

from fencepost.progress import progress_printer

MESSAGES = ("scenario 1/3: a", "scenario 2/3: b", "scenario 3/3: c",
            "state machine: example 1/60", "state machine: example 2/60",
            "race claimants: round 1/20")


class Err(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def _shown(monkeypatch: pytest.MonkeyPatch, tty: bool, enabled: bool) -> str:
    err = Err(tty)
    monkeypatch.setattr(sys, "stderr", err)
    show = progress_printer(enabled)
    for message in MESSAGES:
        show(message)
    show.done()
    return err.getvalue()


def test_elsewhere_one_line_per_phase_with_the_time(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _shown(monkeypatch, tty=False, enabled=True).splitlines()
    assert [re.sub(r" \(\d+\.\d s\)$", " (T)", line) for line in lines] == [
        "... scenario 1/3: a (T)", "... state machine: example 1/60 (T)",
        "... race claimants: round 1/20 (T)"]


def test_on_a_terminal_every_check_rewrites_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _shown(monkeypatch, tty=True, enabled=True)
    shown = [re.sub(r" \(\d+\.\d s\)$", "", part) for part in text.split("\r\033[K") if part]
    assert shown == list(MESSAGES)
    assert text.endswith("\r\033[K") and "\n" not in text


@pytest.mark.parametrize("tty", [True, False])
def test_quiet_shows_nothing(monkeypatch: pytest.MonkeyPatch, tty: bool) -> None:
    assert _shown(monkeypatch, tty=tty, enabled=False) == ""
