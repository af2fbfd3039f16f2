"""Bounded store calls: every call into a store is timed, and a run can be stopped.

A store is untrusted code. It may never return (a lost lock, an infinite loop), raise
``SystemExit``, or be slow only on a loaded machine. The kit must end every run with verdicts,
so every call into a store goes through the run's :class:`Guard`:

- **calls** (``guard.call(store, op)``) turn whatever the store does into an outcome, including
  ``SystemExit`` and ``KeyboardInterrupt`` raised by the store (a store fault, not the kit's
  exit), and register themselves as *in flight* while they run;
- **waits** for other threads (racers, concurrent workers) go through :meth:`Guard.await_done`,
  which raises :class:`CallTimedOut` once any call in flight has run longer than the timeout;
- **the supervisor** (:func:`supervise`, on the thread that started the run) watches the run's
  own thread: when *its* call overruns, the run is abandoned (that thread is left behind,
  and every later store call it makes raises :class:`RunAbandoned` without reaching the store);
  on Ctrl-C or SIGTERM it stops the run (:meth:`Guard.cancel`) and waits a short grace for it
  to clean up.

Why a supervising thread rather than the store in a child process: an in-process store's
objects (a connection, its engine for fault injection) must stay callable by the checks, and a
thread can be abandoned at no cost per call; the out-of-process adapter protocol kills its child
instead.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import attrs

from fencepost.spec.errors import ContractError, told
from fencepost.spec.opaque import NotAValue, time_store_eq
from fencepost.spec.ops import Op
from fencepost.spec.outcome import NOT_A_VALUE, Crash, Err, Ok, Outcome
from fencepost.spec.values import SNAPSHOT_TAKEN, handed, handed_all, snapshot

T = TypeVar("T")

_monotonic = time.monotonic
"""The clock the guard times calls by, taken at import: a store (or a library it uses, such
as one that freezes time in tests) that replaces ``time.monotonic`` cannot stop the timer."""

CALL_TIMEOUT_ENV = "FENCEPOST_CALL_TIMEOUT"
FALLBACK_S = 10.0


def seconds_from_env(name: str, fallback: float) -> float:
    """The environment variable ``name`` as a positive number of seconds, else ``fallback``
    (unset, not a number, or not positive)."""
    raw = os.environ.get(name, "")
    try:
        value = float(raw) if raw else fallback
    except ValueError:
        return fallback
    return value if value > 0 else fallback


def default_call_timeout() -> float:
    """How long one store call may take before the run stops with the clauses at stake
    unknown: ``FENCEPOST_CALL_TIMEOUT`` seconds if set (a CI machine under heavy load may want
    more), else 10 (a correct SQLite store on a 2-core machine at load 13 has been seen to
    take more than 5 s over one call)."""
    return seconds_from_env(CALL_TIMEOUT_ENV, FALLBACK_S)


DEFAULT_CALL_TIMEOUT_S = default_call_timeout()
"""The default call timeout, as :func:`default_call_timeout` found it at import."""

SIGNAL_SLICE_S = 0.5
"""The supervising thread waits in slices this long. A signal may be delivered to any thread of
the process; Python runs its handler in the main thread, but only once that thread wakes, so a
main thread blocked until the next call deadline (up to the whole call timeout) would not see
Ctrl-C or SIGTERM until then."""

CANCEL_GRACE_S = 3.0
"""After Ctrl-C or SIGTERM: how long the run may take to stop and drop its data itself."""


class RunStopped(BaseException):
    """The run was stopped (a call overran, or the user interrupted it): unwind the check.

    A ``BaseException``, so that neither a check nor Hypothesis takes it for a store's answer."""


class CallTimedOut(RunStopped):
    """A store call did not return within the timeout."""


class RunAbandoned(RunStopped):
    """The supervisor gave up on this thread: it must not touch the store again."""


@attrs.frozen
class InFlight:
    """A store call that has started and not returned."""

    thread: int
    started: float
    what: str


def call(store: Any, op: Op) -> Outcome:
    """Run ``op`` on ``store`` and turn whatever happens into an outcome value (unguarded).

    The store gets copies of the op's arguments (:func:`handed`) and the outcome holds a
    snapshot of its answer taken as the call returned (:func:`snapshot`): values, never the
    store's objects, so nothing the store does later changes what the kit saw, and no
    ``__eq__`` of the store's decides a comparison. An answer that cannot be a value is a
    :data:`NOT_A_VALUE` crash of that call. A recursion limit the store set is put back as
    its method returns, before its answer is read."""
    try:
        limit = sys.getrecursionlimit()
        taken = SNAPSHOT_TAKEN.set(store)
        try:
            answer = getattr(store, op.name)(*handed_all(op.arguments().values()))
        finally:
            SNAPSHOT_TAKEN.reset(taken)
            now = sys.getrecursionlimit()
            if now != limit or now < _LIMIT_FLOOR:  # inline: this runs on every call
                _put_back_limit(limit)
        return Ok(snapshot(answer))
    except ContractError as e:
        refused: ContractError = e
    except NotAValue as e:
        return Crash(NOT_A_VALUE, f"something that is not a contract value: {e}")
    except RunStopped:
        raise
    except BaseException as e:  # noqa: BLE001 - a crash (even SystemExit) is the store's fault
        return Crash(type(e).__name__, told(e))
    try:
        return _refusal(refused)
    except BaseException as e:  # noqa: BLE001 - its code, detail or payload would not be read
        return Crash(NOT_A_VALUE, f"a refusal whose code, detail or payload could not be read "
                     f"({type(e).__name__})")


_LIMIT_FLOOR = sys.getrecursionlimit()
"""The recursion limit as the kit was imported: a store's call never leaves it lower."""


@contextmanager
def _own_recursion_limit() -> Iterator[None]:
    """A recursion limit a store's call changes is put back as the call returns (Hypothesis
    raises the limit while a test runs: put back to that one), and never left below
    :data:`_LIMIT_FLOOR` (two threads' calls may cross: the second found the first's store's
    limit): the store's for itself, not the kit's walks."""
    before = sys.getrecursionlimit()
    try:
        yield
    finally:
        now = sys.getrecursionlimit()
        if now != before or now < _LIMIT_FLOOR:
            _put_back_limit(before)


def _put_back_limit(before: int) -> None:
    sys.setrecursionlimit(max(before, _LIMIT_FLOOR))


def _refusal(e: ContractError) -> Outcome:
    """A store's refusal as a value: its code a plain ``str``, its payload a snapshot."""
    code, detail = getattr(e, "code", None), getattr(e, "detail", "")
    if not isinstance(code, str):
        return Crash(NOT_A_VALUE, f"a refusal whose code is a {type(code).__name__}, not text")
    try:
        payload = snapshot(getattr(e, "payload", None))
    except NotAValue as why:
        return Crash(NOT_A_VALUE, f"a refusal whose payload is not a contract value: {why}")
    return Err(str.__str__(code), detail if type(detail) is str else told(e), payload)


class Guard:
    """The timer and the stop switch of one run (see the module doc)."""

    def __init__(self, timeout_s: float = DEFAULT_CALL_TIMEOUT_S) -> None:
        if not timeout_s > 0:
            raise ValueError(f"the call timeout must be more than 0 s, not {timeout_s}")
        self.timeout_s = timeout_s
        self.stopped: str | None = None
        """Why the run is stopping (no new store call may start), or None."""
        self.abandoned = False
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        """Notified whenever a call ends (what :meth:`quiesce` waits for) or a wait begins
        (what a caller that must stop the run only once it waits can wait for)."""
        self._inflight: dict[int, InFlight] = {}
        self._waiting: set[threading.Event] = set()

    # -- calls ----------------------------------------------------------------------------------

    def call(self, store: Any, op: Op) -> Outcome:
        """``op`` on ``store`` as an outcome, timed."""
        token = self._begin(op.name)
        try:
            return call(store, op)
        finally:
            self._end(token)

    def run(self, what: str, fn: Callable[..., T], *args: Any, cleanup: bool = False) -> T:
        """``fn(*args)`` (a factory, ``close``, ``discard``), timed; its exceptions propagate.
        A ``cleanup`` call may still start once the run is stopping (not once abandoned)."""
        token = self._begin(what, cleanup=cleanup)
        try:
            with _own_recursion_limit():
                return fn(*args)
        finally:
            self._end(token)

    def _begin(self, what: str, *, cleanup: bool = False) -> InFlight:
        with self._lock:
            if self.abandoned:
                raise RunAbandoned(self.stopped or "the run was abandoned")
            if self.stopped is not None and not cleanup:
                raise RunStopped(self.stopped)
            token = InFlight(threading.get_ident(), _monotonic(), what)
            self._inflight[token.thread] = token
            return token

    def _end(self, token: InFlight) -> None:
        with self._lock:
            if self._inflight.get(token.thread) is token:
                del self._inflight[token.thread]
                self._changed.notify_all()
            if self.abandoned:
                raise RunAbandoned(self.stopped or "the run was abandoned")

    # -- watching -------------------------------------------------------------------------------

    def overdue(self, thread: int | None = None) -> InFlight | None:
        """The oldest call in flight longer than the timeout (of ``thread`` only, if given)."""
        limit = _monotonic() - self.timeout_s
        with self._lock:
            late = [c for c in self._inflight.values()
                    if c.started <= limit and (thread is None or c.thread == thread)]
        return min(late, key=lambda c: c.started) if late else None

    def _next_deadline(self, thread: int | None = None) -> float:
        """Seconds until the earliest call in flight (of ``thread``) would overrun."""
        now = _monotonic()
        with self._lock:
            starts = [c.started for c in self._inflight.values()
                      if thread is None or c.thread == thread]
        if not starts:
            return self.timeout_s
        return max(0.0, min(starts) + self.timeout_s - now) + 0.001

    def describe(self, late: InFlight) -> str:
        return (f"{late.what} did not return in {self.timeout_s:g} s "
                f"(--call-timeout); the run stopped there")

    def await_done(self, done: threading.Event) -> None:
        """Wait until ``done`` is set; raise :class:`CallTimedOut` when a call in flight on any
        thread overruns, :class:`RunStopped` (:class:`RunAbandoned`) when the run is stopping,
        whether it was before the wait or meanwhile: a stopped run unwinds, it does not go on
        to its next burst (whose threads may never come)."""
        with self._lock:
            self._waiting.add(done)
            self._changed.notify_all()
        try:
            while not self._woken(done):
                late = self.overdue()
                if late is not None:
                    self.stop(self.describe(late))
                    raise CallTimedOut(self.describe(late))
        finally:
            with self._lock:
                self._waiting.discard(done)

    def _woken(self, done: threading.Event) -> bool:
        """Wait for ``done`` until the next call could overrun; raise if the run is stopping."""
        if self.stopped is None:
            set_ = done.wait(self._next_deadline())
        else:
            set_ = True
        if self.stopped is not None:
            raise (RunAbandoned if self.abandoned else RunStopped)(self.stopped)
        return set_

    def stop(self, reason: str) -> None:
        """No new store call may start (cleanup calls excepted); wake every :meth:`await_done`
        (it raises :class:`RunStopped`)."""
        with self._lock:
            if self.stopped is None:
                self.stopped = reason
            waiting = list(self._waiting)
        for event in waiting:
            event.set()

    def abandon_if_overdue(self, thread: int | None) -> str | None:
        """Abandon the run if a call of ``thread`` has overrun and is still in flight (checked
        and decided at once: the thread cannot return from it in between); why, or None."""
        limit = _monotonic() - self.timeout_s
        with self._lock:
            late = self._inflight.get(thread) if thread is not None else None
            if late is None or late.started > limit:
                return None
            reason = self.describe(late)
            self.abandoned = True
            if self.stopped is None:
                self.stopped = reason
            waiting = list(self._waiting)
        for event in waiting:
            event.set()
        return reason

    def quiesce(self, thread: int | None, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s``) until ``thread`` has no store call in flight; True if
        so. After :meth:`abandon` it can start no other: its data can then be dropped without a
        factory call of the thread recreating tables behind the drop."""
        with self._changed:
            return self._changed.wait_for(lambda: thread not in self._inflight, timeout_s)

    def abandon(self, reason: str) -> None:
        """Give up on the run's threads: every later store call raises at once."""
        self.stop(reason)
        with self._lock:
            self.abandoned = True


class Guarded:
    """``store`` with every method call timed by ``guard``, its arguments copies and its
    answers snapshots as in :func:`call`: for the few checks that call a store's methods
    directly rather than through ops (a paging walk under writers)."""

    def __init__(self, store: Any, guard: Guard) -> None:
        self._store, self._guard = store, guard

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if not callable(attr):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            answer = self._guard.run(name, functools.partial(
                attr, *[handed(a) for a in args], **{k: handed(v) for k, v in kwargs.items()}))
            return snapshot(answer)  # NotAValue: the check that called says what broke
        return timed


_local = threading.local()


def current_guard() -> Guard:
    """The guard of the run this thread is running (a default one outside a run)."""
    guard: Guard | None = getattr(_local, "guard", None)
    return guard if guard is not None else _default()


def _default() -> Guard:
    global _DEFAULT_GUARD
    if _DEFAULT_GUARD is None:
        _DEFAULT_GUARD = Guard()
    return _DEFAULT_GUARD


_DEFAULT_GUARD: Guard | None = None


def _timed_store_eq(ask: Callable[[], bool]) -> bool:
    """A comparison of two of a store's objects, timed by this thread's run as a store call
    (directly, inside a call already timed)."""
    guard = current_guard()
    if threading.get_ident() in guard._inflight:
        return ask()
    return guard.run("a store value's __eq__", ask)


time_store_eq(_timed_store_eq)


@attrs.frozen
class Supervised:
    """How a supervised run ended: ``value`` if its thread returned, else why not."""

    value: Any = None
    error: BaseException | None = None
    abandoned: str | None = None
    interrupted: BaseException | None = None


def supervise(guard: Guard, body: Callable[[], T]) -> Supervised:
    """Run ``body`` on a thread of its own while this thread watches its store calls.

    - ``body`` returns or raises: that is the result (``value`` / ``error``);
    - a call of ``body``'s thread overruns ``guard.timeout_s``: the thread is abandoned
      (``abandoned`` says which call);
    - this thread is interrupted (Ctrl-C; SIGTERM where the CLI turns it into an exception):
      the run is stopped and given :data:`CANCEL_GRACE_S` (at most the timeout) to unwind and
      drop its data, then abandoned; ``interrupted`` holds the exception to re-raise.
    """
    box: dict[str, Any] = {}
    finished = threading.Event()

    def target() -> None:
        _local.guard = guard
        try:
            box["value"] = body()
        except BaseException as e:  # noqa: BLE001 - handed to the supervisor
            box["error"] = e
        finally:
            finished.set()

    worker = threading.Thread(target=target, daemon=True, name="fencepost-run")
    interrupted: BaseException | None = None
    try:
        worker.start()  # a signal may come while it starts, too
        ident = worker.ident
        while not finished.wait(min(guard._next_deadline(ident), SIGNAL_SLICE_S)):
            reason = guard.abandon_if_overdue(ident)
            if reason is not None:
                return Supervised(abandoned=reason)
    except BaseException as e:  # Ctrl-C, SIGTERM: stop the run, let it clean up, re-raise
        interrupted = e
        guard.stop(f"interrupted ({_signal_name(e)})")
        grace = min(CANCEL_GRACE_S, guard.timeout_s)
        deadline = _monotonic() + grace
        while not finished.is_set() and _monotonic() < deadline:
            try:
                finished.wait(max(0.0, deadline - _monotonic()))
            except BaseException:  # noqa: BLE001 - a second Ctrl-C: stop waiting
                break
        if not finished.is_set():
            guard.abandon(guard.stopped or "interrupted")
            guard.quiesce(worker.ident, grace)
            return Supervised(abandoned=guard.stopped, interrupted=interrupted)
    return Supervised(box.get("value"), box.get("error"), interrupted=interrupted)


def _signal_name(e: BaseException) -> str:
    name = getattr(e, "signal_name", None)
    return str(name) if name else type(e).__name__
