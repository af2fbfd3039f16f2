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
from fencepost.scenarios import guard as guard_module
from fencepost.scenarios.guard import CallTimedOut, Guard, InFlight, RunAbandoned, RunStopped


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
    """stop() wakes the waiter by setting its event; the waiter must not take that for done.
    With no call in flight the waiter would otherwise sleep out the timeout (an hour here);
    the 60 s bound on the join only stops a broken kit hanging the suite."""
    guard = Guard(3600)
    done = threading.Event()
    raised: list[BaseException] = []

    def wait() -> None:
        try:
            guard.await_done(done)
        except BaseException as e:  # noqa: BLE001 - what the test looks at
            raised.append(e)

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    with guard._changed:  # the waiter has registered: stop() will wake it
        guard._changed.wait_for(lambda: done in guard._waiting)
    guard.stop("interrupted (SIGTERM)")
    waiter.join(60)
    assert not waiter.is_alive() and [type(e) for e in raised] == [RunStopped]


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


# --- the watchdog on a clock of the test's own ---------------------------------------------------


class _Clock:
    """The guard's monotonic clock, moved by the test alone."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(guard_module, "_monotonic", fake)
    return fake


def _in_flight(guard: Guard, thread: int, started: float, what: str) -> InFlight:
    """A call of ``thread`` in flight since ``started``, as ``_begin`` records one."""
    token = InFlight(thread, started, what)
    guard._inflight[thread] = token
    return token


def test_a_call_is_overdue_from_the_moment_its_timeout_has_passed_and_the_oldest_first(
        clock: _Clock) -> None:
    guard = Guard(10)
    _in_flight(guard, 1, 100.0, "get")
    _in_flight(guard, 2, 103.0, "claim")
    clock.now = 109.999
    assert guard.overdue() is None
    clock.now = 110.0
    assert guard.overdue() == InFlight(1, 100.0, "get")
    clock.now = 114.0
    assert guard.overdue() == InFlight(1, 100.0, "get")
    assert guard.overdue(thread=2) == InFlight(2, 103.0, "claim")
    clock.now = 112.0
    assert guard.overdue(thread=2) is None and guard.overdue(thread=3) is None


def test_the_next_deadline_is_the_earliest_calls_of_the_thread_asked_about(clock: _Clock) -> None:
    guard = Guard(10)
    assert guard._next_deadline() == 10
    _in_flight(guard, 1, 100.0, "get")
    _in_flight(guard, 2, 96.0, "claim")
    clock.now = 104.0
    assert guard._next_deadline() == pytest.approx(2.001)
    assert guard._next_deadline(thread=1) == pytest.approx(6.001)
    assert guard._next_deadline(thread=3) == 10
    clock.now = 200.0
    assert guard._next_deadline() == pytest.approx(0.001)


def test_a_wait_raises_call_timed_out_for_an_overdue_call_and_stops_the_run(
        clock: _Clock) -> None:
    guard = Guard(10)
    _in_flight(guard, 1, 100.0, "renew")
    clock.now = 110.0
    with pytest.raises(CallTimedOut) as timed_out:
        guard.await_done(threading.Event())
    said = "renew did not return in 10 s (--call-timeout); the run stopped there"
    assert str(timed_out.value) == said and guard.stopped == said
    assert not guard.abandoned and guard._waiting == set()


def test_a_wait_whose_event_is_set_returns_even_with_a_call_overdue(clock: _Clock) -> None:
    guard = Guard(10)
    _in_flight(guard, 1, 0.0, "renew")
    done = threading.Event()
    done.set()
    guard.await_done(done)
    assert guard.stopped is None and guard._waiting == set()


def test_abandon_if_overdue_abandons_only_for_the_threads_own_late_call(clock: _Clock) -> None:
    guard = Guard(10)
    _in_flight(guard, 1, 100.0, "finish")
    _in_flight(guard, 2, 90.0, "get")
    waiting = threading.Event()
    guard._waiting.add(waiting)
    clock.now = 109.0
    assert guard.abandon_if_overdue(None) is None
    assert guard.abandon_if_overdue(1) is None and guard.abandon_if_overdue(3) is None
    assert not guard.abandoned and guard.stopped is None and not waiting.is_set()
    clock.now = 110.0
    said = "finish did not return in 10 s (--call-timeout); the run stopped there"
    assert guard.abandon_if_overdue(1) == said
    assert guard.abandoned and guard.stopped == said and waiting.is_set()


def test_abandon_if_overdue_keeps_the_first_reason_to_stop(clock: _Clock) -> None:
    guard = Guard(10)
    _in_flight(guard, 1, 100.0, "finish")
    guard.stop("interrupted (SIGINT)")
    clock.now = 200.0
    assert guard.abandon_if_overdue(1) == (
        "finish did not return in 10 s (--call-timeout); the run stopped there")
    assert guard.abandoned and guard.stopped == "interrupted (SIGINT)"


def test_a_call_begins_unless_the_run_stops_and_a_cleanup_one_until_it_is_abandoned(
        clock: _Clock) -> None:
    guard = Guard(10)
    token = guard._begin("get")
    assert guard._inflight == {threading.get_ident(): InFlight(threading.get_ident(), 100.0,
                                                                 "get")}
    guard._end(token)
    assert guard._inflight == {}
    guard.stop("interrupted (SIGINT)")
    with pytest.raises(RunStopped) as stopped:
        guard._begin("get")
    assert type(stopped.value) is RunStopped and str(stopped.value) == "interrupted (SIGINT)"
    guard._end(guard._begin("store.close", cleanup=True))
    guard.abandon("interrupted (SIGTERM)")
    with pytest.raises(RunAbandoned) as abandoned:
        guard._begin("store.close", cleanup=True)
    assert str(abandoned.value) == "interrupted (SIGINT)"  # the first reason to stop


def test_a_call_that_ends_after_the_thread_began_another_leaves_the_other_in_flight(
        clock: _Clock) -> None:
    """Only a call's own token is taken out: an older token of the thread ending late (its
    thread has begun a newer call since) leaves the newer one in flight."""
    guard = Guard(10)
    old = guard._begin("get")
    clock.now = 101.0
    new = guard._begin("claim")
    guard._end(old)
    assert list(guard._inflight.values()) == [new]


def test_a_call_that_returns_once_the_run_is_abandoned_raises_abandoned(clock: _Clock) -> None:
    guard = Guard(10)
    token = guard._begin("get")
    guard.abandon("finish did not return")
    with pytest.raises(RunAbandoned) as abandoned:
        guard._end(token)
    assert str(abandoned.value) == "finish did not return" and guard._inflight == {}
