"""The guard and the supervisor on their own: a stopped run unwinds at once, whenever the stop
came; an abandoned thread is let finish its call before its data is dropped; a child that
ignores the signal passed on is killed."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator

import pytest

from fencepost import supervisor
from fencepost.scenarios.guard import Guard, RunAbandoned, RunStopped


@pytest.fixture
def hung() -> Iterator[tuple[Guard, threading.Event]]:
    """A guard (0.5 s timeout) with one call in flight on another thread until released."""
    guard = Guard(0.5)
    started, release = threading.Event(), threading.Event()

    def call() -> None:
        try:
            guard.run("a call", lambda: (started.set(), release.wait()))
        except RunStopped:
            pass

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    started.wait()
    yield guard, release
    release.set()
    thread.join()


def test_a_wait_begun_after_the_stop_raises_at_once(hung: tuple[Guard, threading.Event]) -> None:
    """Not a wait until the call in flight overruns (that would be CallTimedOut)."""
    guard, _ = hung
    guard.stop("interrupted (SIGINT)")
    with pytest.raises(RunStopped) as stopped:
        guard.await_done(threading.Event())
    assert type(stopped.value) is RunStopped and str(stopped.value) == "interrupted (SIGINT)"


def test_a_wait_woken_by_the_stop_raises_rather_than_returning() -> None:
    """stop() wakes the waiter by setting its event; the waiter must not take that for done."""
    guard = Guard(60)
    done = threading.Event()
    raised: list[BaseException] = []

    def wait() -> None:
        try:
            guard.await_done(done)
        except BaseException as e:  # noqa: BLE001 - what the test looks at
            raised.append(e)

    waiter = threading.Thread(target=wait)
    waiter.start()
    with guard._changed:  # the waiter has registered: stop() will wake it
        guard._changed.wait_for(lambda: done in guard._waiting)
    guard.stop("interrupted (SIGTERM)")
    waiter.join()
    assert [type(e) for e in raised] == [RunStopped]


def test_a_wait_after_abandoning_raises_abandoned(hung: tuple[Guard, threading.Event]) -> None:
    guard, _ = hung
    guard.abandon("interrupted (SIGINT)")
    with pytest.raises(RunAbandoned):
        guard.await_done(threading.Event())


def test_quiesce_waits_for_the_call_in_flight(hung: tuple[Guard, threading.Event]) -> None:
    guard, release = hung
    [thread] = guard._inflight
    guard.abandon("interrupted (SIGTERM)")
    assert guard.quiesce(thread, 0.01) is False
    release.set()
    assert guard.quiesce(thread, 30) is True


def test_a_child_that_ignores_the_signal_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervisor, "CHILD_GRACE_S", 0.2)
    child = subprocess.Popen([sys.executable, "-c", (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n")], stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    child.send_signal(signal.SIGTERM)
    code = supervisor._wait(child, [signal.SIGTERM], [supervisor.time.monotonic()])
    child.stdout.close()
    assert code == -signal.SIGKILL


def test_a_signal_sent_while_the_run_waits_stops_the_run() -> None:
    """Ctrl-C (a signal to the process) while the run's thread waits and the supervising thread
    sleeps until the next call deadline (an hour here) stops the run at once. The signal is
    sent to the process, as a terminal or ``kill`` sends it (Linux hands it to the main thread
    first). The child inherits SIGINT's disposition, and a suite started in the background by
    a non-interactive shell (``.ci/run &``) has SIGINT ignored, as POSIX shells do for
    background commands: the child sets Python's own handler, and the test warns with what the
    test process had. The 60 s bound only stops a broken kit hanging, and prints every
    thread's stack when it does."""
    inherited = (signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, []))
    if inherited != (signal.default_int_handler, set()):  # what the child would inherit
        warnings.warn(f"this test process has SIGINT's handler, blocked signals: {inherited}",
                      stacklevel=1)
    code = (
        "import faulthandler, os, signal, threading\n"
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"  # not as inherited
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "faulthandler.dump_traceback_later(60, exit=True)\n"
        "from fencepost.scenarios.guard import Guard, supervise\n"
        "guard = Guard(3600)\n"
        "never = threading.Event()\n"
        "def body():\n"
        "    threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT)).start()\n"
        "    guard.await_done(never)\n"
        "ended = supervise(guard, body)\n"
        "print(type(ended.interrupted).__name__, type(ended.error).__name__, ended.abandoned)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr  # a hang: the stacks faulthandler printed
    assert result.stdout.split() == ["KeyboardInterrupt", "RunStopped", "None"]
