"""Progress on stderr (fencepost/progress.py): a rewritten line on a terminal, one line per
phase elsewhere, nothing when quiet; each with the time since the run began."""

from __future__ import annotations

import io
import re
import sys

import pytest

from fencepost.progress import progress_printer
from fencepost.scenarios.said import Said

MESSAGES = (Said("scenario", "scenario 1/3: a"), Said("scenario", "scenario 2/3: b"),
            Said("scenario", "scenario 3/3: c"), Said.of("state machine", "example 1/60"),
            Said.of("state machine", "example 2/60"), Said("race", "race claimants: round 1/20"))


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
    assert shown == [str(said) for said in MESSAGES]
    assert text.endswith("\r\033[K") and "\n" not in text


@pytest.mark.parametrize("tty", [True, False])
def test_quiet_shows_nothing(monkeypatch: pytest.MonkeyPatch, tty: bool) -> None:
    assert _shown(monkeypatch, tty=tty, enabled=False) == ""


def test_in_a_pipe_a_long_phase_is_said_again_every_ten_seconds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    err = Err(False)
    monkeypatch.setattr(sys, "stderr", err)
    now = [100.0]
    show = progress_printer(True, clock=lambda: now[0], beat=False)
    show(Said.of("state machine", "example 1/60"))
    for seconds in (9.4, 0.1, 3.0, 2.0, 4.5, 0.5):  # a slow store: no new phase for 19.5 s
        now[0] += seconds
        show.beat()
    show(Said.of("state machine", "example 2/60"))
    now[0] += 10.0
    show.beat()
    show.done()
    assert err.getvalue().splitlines() == [
        "... state machine: example 1/60 (0.0 s)",
        "... state machine: example 1/60 (9.5 s)",  # looked at every 0.5 s: at most 10 s apart
        "... state machine: example 1/60 (19.0 s)",
        "... state machine: example 2/60 (29.5 s)",  # the latest message, not the phase's first
    ]


def test_in_a_pipe_phases_that_interleave_are_each_said_once_as_they_begin(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With --jobs, two parts' phases alternate: a log gets a line as each phase begins, not
    one per alternation (the heartbeat says the latest line meanwhile)."""
    err = Err(False)
    monkeypatch.setattr(sys, "stderr", err)
    show = progress_printer(True, beat=False)
    for k in range(1, 4):
        show(Said("scenario", f"scenario {k}/3: s{k}"))
        show(Said.of("state machine", f"example {k}/60"))
    show.done()
    lines = [re.sub(r" \(\d+\.\d s\)$", "", line) for line in err.getvalue().splitlines()]
    assert lines == ["... scenario 1/3: s1", "... state machine: example 1/60"]


def test_a_phase_is_what_the_event_says_not_a_word_of_its_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Events within a larger job (a coverage seed) are printed once per phase of each seed,
    whatever their lines begin with."""
    err = Err(False)
    monkeypatch.setattr(sys, "stderr", err)
    show = progress_printer(True, beat=False)
    for seed in ("seed 1/2", "seed 2/2"):
        for said in MESSAGES:
            show(said.within(seed))
    show.done()
    lines = [re.sub(r" \(\d+\.\d s\)$", "", line) for line in err.getvalue().splitlines()]
    assert lines == [f"... {seed}: {line}" for seed in ("seed 1/2", "seed 2/2")
                     for line in ("scenario 1/3: a", "state machine: example 1/60",
                                  "race claimants: round 1/20")]


def test_the_heartbeat_stops_with_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that ended without its done() (an error) leaves no heartbeat running."""
    from fencepost.progress import _beating, stop_all

    monkeypatch.setattr(sys, "stderr", Err(False))
    progress_printer(True)(Said("scenario", "scenario 1/3: a"))
    assert len(_beating) == 1
    stop_all()
    assert _beating == set()
