"""Progress on stderr for long runs.

On a terminal, one line rewritten in place: the phase, the check done of the phase's total, the
current check and the time since the run began (``scenario 7/40:
stale_token_cannot_commit_after_takeover (12.3 s)``). Elsewhere (a CI log, a pipe) one line per
phase, when it begins, after ``... ``, and the latest again whenever
:data:`PIPE_EVERY_S` have passed without a line (a slow store: a log that stops looks like a
hung run). Nothing with ``--quiet``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from fencepost.scenarios.said import Said

PIPE_EVERY_S = 10.0
"""In a pipe, the longest time without a progress line while a run goes on."""

_beating: set[threading.Event] = set()
"""The stop event of each heartbeat whose printer is not done (:func:`stop_all` sets them)."""
_printing: dict[threading.Thread, threading.Lock] = {}
"""Each heartbeat thread not ended yet, with the lock it holds while it prints."""
_held: list[threading.Lock] = []


def progress_printer(enabled: bool, *, every_s: float = PIPE_EVERY_S,
                     clock: Callable[[], float] = time.monotonic, beat: bool = True) -> Any:
    """A ``progress(said)`` callable (:class:`~fencepost.scenarios.said.Said`) as the module's
    docstring says (a pipe's line printed when the said phase changes), with ``done()`` to
    clear the terminal's line and stop the pipe's heartbeat at the end, and ``beat()``, what
    the heartbeat thread calls every ``every_s / 20`` (with ``beat`` False no thread is
    started: a test calls it)."""
    tty = sys.stderr.isatty()
    state: dict[str, Any] = {"latest": "", "printed": clock()}
    begun: set[str] = set()  # the phases said already: with --jobs, parts interleave theirs
    began = clock()
    lock = threading.Lock()

    from .supervisor import STATUS

    def emit(message: str) -> None:
        state["printed"] = clock()
        print(f"... {message} ({clock() - began:.1f} s)", file=sys.stderr, flush=True)

    def show(said: Said) -> None:
        message = str(said)
        STATUS.say("phase", message)
        if not enabled:
            return
        if tty:
            line = f"{message} ({clock() - began:.1f} s)"
            sys.stderr.write("\r\033[K" + line[:150])
            sys.stderr.flush()
            return
        phase = said.phase
        with lock:
            state["latest"] = message
            if phase not in begun:
                begun.add(phase)
                emit(message)

    slice_s = every_s / 20  # how often the heartbeat looks: never more than every_s apart

    def heartbeat() -> None:
        with lock:
            if state["latest"] and clock() - float(state["printed"]) >= every_s - slice_s:
                emit(str(state["latest"]))

    stop = threading.Event()

    def done() -> None:
        stop.set()
        _beating.discard(stop)
        if enabled and tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()

    if enabled and not tty and beat:
        _beating.add(stop)

        def run() -> None:
            try:
                while not stop.wait(slice_s):
                    try:
                        heartbeat()
                    except (OSError, ValueError):  # stderr closed
                        return
            finally:
                _printing.pop(threading.current_thread(), None)

        thread = threading.Thread(target=run, daemon=True, name="fencepost-heartbeat")
        _printing[thread] = lock
        thread.start()
    show.done = done  # type: ignore[attr-defined]
    show.beat = heartbeat  # type: ignore[attr-defined]
    return show


def stop_all() -> None:
    """Stop every heartbeat still going (a command that ended before its ``done()``)."""
    for stop in list(_beating):
        stop.set()
    _beating.clear()


def quiet_at_fork() -> bool:
    """Does no thread but the calling one run here, other than heartbeats? A heartbeat prints
    only while it holds its printer's lock, and a fork waits for every such lock (the hooks
    below), so a process forked then holds no lock a thread of this one took: no print of
    the child's can wait on stderr for ever. Another thread could hold any lock."""
    me = threading.current_thread()
    return all(t is me or t in _printing for t in threading.enumerate())


def _before_fork() -> None:
    _held[:] = list(_printing.values())
    for lock in _held:
        lock.acquire()


def _after_fork() -> None:
    for lock in _held:
        lock.release()
    _held.clear()


def _after_fork_in_child() -> None:
    _after_fork()
    _beating.clear()  # their threads stayed with the parent
    _printing.clear()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork,
                    after_in_child=_after_fork_in_child)
