"""What a run shares between its checks, and how a check ends other than by passing.

:class:`World` holds the clock, the adapter env and the open store of one run (with its forks);
:class:`ClauseViolation` (one class per clause, see :func:`violation`) is a broken clause;
:class:`StoreLost` and its kinds are a check that cannot conclude. The harness that drives a
store through a world is :mod:`fencepost.scenarios.harness`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import attrs

from fencepost.model.base import ContractModel
from fencepost.spec.env import AdapterEnv
from fencepost.spec.errors import ConfigurationError, ContractError, exception_said, told
from fencepost.spec.outcome import Err, Outcome

from .clock import SimClock
from .evidence import Evidence
from .guard import DEFAULT_CALL_TIMEOUT_S, Guard, RunStopped
from .trace import TraceStep, render_trace

LOST_EXCEPTIONS = frozenset({"ConnectionError", "BrokenPipeError", "TimeoutError"})
"""The exception names that mean the connection to the store was lost."""

class ClauseViolation(AssertionError):
    """A store broke a clause. ``trace`` ends with the step that showed it."""

    clause: str = ""

    def __init__(self, clause: str, message: str, trace: tuple[TraceStep, ...],
                 after: tuple[str, ...] = ()) -> None:
        super().__init__(f"{clause}: {message}")
        self.clause = clause
        self.message = message
        self.trace = trace
        # The clauses whose differences the check had gone on past before this one (see
        # Harness.go_on): this difference may follow from theirs, so it proves nothing alone.
        self.after = after

    def render(self) -> str:
        return f"{self.clause}: {self.message}\n{render_trace(self.trace)}"


_VIOLATION_TYPES: dict[str, type[ClauseViolation]] = {}
_VIOLATION_TYPES_LOCK = threading.Lock()


def violation(clause: str, message: str, trace: tuple[TraceStep, ...],
              after: tuple[str, ...] = ()) -> ClauseViolation:
    """A violation of ``clause`` as an instance of a class of its own.

    Hypothesis tells bugs apart by exception type; one class per clause lets one run report
    several broken clauses, each shrunk on its own.
    """
    with _VIOLATION_TYPES_LOCK:
        cls = _VIOLATION_TYPES.get(clause)
        if cls is None:
            name = "Violation_" + clause.replace("-", "_")
            cls = type(name, (ClauseViolation,), {"clause": clause})
            _VIOLATION_TYPES[clause] = cls
    made = cls(clause, message, trace, after)
    seen: Seen | None = getattr(_seen, "log", None)
    if seen is not None:
        seen.first.setdefault(clause, (seen.marks[-1] if seen.marks else None, made))
    return made


_seen = threading.local()


@attrs.define
class Seen:
    """What :func:`violations_seen` kept: each clause's first violation made on the thread,
    with the mark that was last when it was made, the first :class:`StoreLost`, and the last
    ``keep`` marks (a state machine's examples, as they start)."""

    keep: int = 200
    first: dict[str, tuple[Any, ClauseViolation]] = attrs.Factory(dict)
    marks: deque[Any] = attrs.Factory(deque)
    lost: StoreLost | None = None

    def mark(self, marker: Any) -> None:
        self.marks.append(marker)
        if len(self.marks) > self.keep:
            self.marks.popleft()


def mark_seen(marker: Any) -> None:
    """Mark the :func:`violations_seen` active on this thread, if any, with ``marker``."""
    seen: Seen | None = getattr(_seen, "log", None)
    if seen is not None:
        seen.mark(marker)


@contextmanager
def violations_seen(keep: int = 200) -> Iterator[Seen]:
    """Keep each clause's first violation and the first lost store made on this thread
    meanwhile (a state machine's: Hypothesis keeps only what it could replay), and the
    caller's last ``keep`` marks."""
    previous = getattr(_seen, "log", None)
    _seen.log = seen = Seen(keep)
    try:
        yield seen
    finally:
        _seen.log = previous


class StoreLost(Exception):
    """The store answered ``unavailable`` or lost its connection: the check is ``unknown``."""

    def __init__(self, message: str, trace: tuple[TraceStep, ...]) -> None:
        super().__init__(message)
        self.trace = trace
        seen: Seen | None = getattr(_seen, "log", None)
        if seen is not None and seen.lost is None:
            seen.lost = self


class NotRunnable(StoreLost):
    """A check cannot go on under the run's options (a value it needs was never minted): the
    clauses at stake are ``unknown``, as when the store is lost, never pass or fail."""


class AdapterFault(StoreLost):
    """The adapter failed outside a contract call (its factory, ``close`` or ``discard``): the
    check cannot conclude, and the fault is the adapter's (never reported as the kit's)."""


@attrs.define
class World:
    """What a run shares between its checks: the clock, the env, the open store."""

    model: ContractModel
    factory: Callable[[AdapterEnv], Any]
    clock: SimClock
    namespace: str
    options: Mapping[str, str]
    capabilities: frozenset[str] = frozenset()
    dead: set[str] = attrs.Factory(set)
    evidence: Evidence = attrs.Factory(Evidence)
    store: Any = None
    guard: Guard = attrs.Factory(lambda: Guard(DEFAULT_CALL_TIMEOUT_S))
    live: list[World] = attrs.Factory(list)
    """Every world of the run with data not yet discarded (shared by forks): what a stopped run
    must still drop."""
    check: str = ""
    """The check running now (the clauses at stake if the run stops)."""
    env: AdapterEnv = attrs.field(init=False)
    _dropping: threading.Lock = attrs.field(init=False, factory=threading.Lock)
    _first: Any = attrs.field(init=False, default=None)
    """While a store is open beside the first (:meth:`open_beside`): the first."""
    _dropped: bool = attrs.field(init=False, default=False)

    def __attrs_post_init__(self) -> None:
        self.env = AdapterEnv(
            clock=self.clock.now,
            namespace=self.namespace,
            is_alive=self.is_alive,
            dead_owners=lambda: frozenset(self.dead),
            options=dict(self.options),
        )

    def is_alive(self, owner: str) -> bool:
        return owner not in self.dead

    def open(self) -> Any:
        if self.store is None:
            if self not in self.live:
                self.live.append(self)
                self._dropped = False
            try:
                self.store = self.guard.run("the adapter factory", self.factory, self.env)
            except (StoreLost, ConfigurationError, RunStopped):
                raise
            except BaseException as e:  # noqa: BLE001 - even SystemExit: the adapter's fault
                raise AdapterFault(f"the adapter factory raised {exception_said(e)}", ()) from e
        return self.store

    def open_beside(self) -> Any:
        """Open another store from the factory beside the open one, on the same env (another
        connection to the same data, as a pool opens one): calls go to it until
        :meth:`close_beside`."""
        if self._first is not None:
            raise RuntimeError("a store is already open beside the first")
        first = self.open()
        self.store = None
        try:
            beside = self.open()
        except BaseException:
            self.store = first
            raise
        self._first = first
        return beside

    def close_beside(self) -> None:
        """Close the store :meth:`open_beside` opened; calls go to the first again."""
        first, self._first = self._first, None
        try:
            self.close()
        finally:
            self.store = first

    def close(self) -> None:
        if self._first is not None:
            self.close_beside()
        if self.store is not None:
            store, self.store = self.store, None
            try:
                close = getattr(store, "close", None)
                if close is not None:
                    self.guard.run("store.close", close, cleanup=True)
            except RunStopped:
                raise
            except BaseException as e:  # noqa: BLE001 - even SystemExit: the adapter's
                raise AdapterFault(f"store.close raised {exception_said(e)}", ()) from e

    def reopen(self) -> Any:
        self.close()
        return self.open()

    def forget_store(self) -> None:
        """A check lost the store: close what can still be closed and open it again at the
        next check (an out-of-process adapter whose child was lost then starts a new one), so
        that one lost check does not take every later check with it."""
        try:
            self.close()
        except AdapterFault as e:
            self.evidence.faults.append(f"{self.namespace}: {told(e)}")
        self.store = None

    def fork(self, suffix: str, options: Mapping[str, str] | None = None,
             clock: SimClock | None = None) -> World:
        """A world with a store of its own (namespace + ``suffix``), sharing the clock (unless
        given one), the guard and the evidence: for checks that must not see each other's
        records (capacity, reap), and for each part of a run."""
        world = World(
            model=self.model,
            factory=self.factory,
            clock=self.clock if clock is None else clock,
            namespace=f"{self.namespace}{suffix}",
            options=dict(options if options is not None else self.options),
            capabilities=self.capabilities,
            evidence=self.evidence,
            guard=self.guard,
            live=self.live,
        )
        return world

    def discard(self) -> None:
        """Close the store and drop its data (the factory's ``discard``, if any). Both run even
        if one fails; a failure is the adapter's fault, noted in the evidence (the report lists
        it), not the check's: the check was over."""
        try:
            self.close()
        except AdapterFault as e:
            self.evidence.faults.append(f"{self.namespace}: {told(e)}")
        discard = getattr(self.factory, "discard", None)
        try:
            if discard is not None:
                self.guard.run("the adapter factory's discard", self.drop_data, discard,
                               cleanup=True)
        except RunStopped:
            raise
        except BaseException as e:  # noqa: BLE001 - even SystemExit: the adapter's fault
            self.evidence.faults.append(
                f"{self.namespace}: the factory's discard raised {exception_said(e)}; the "
                "namespace's data may be left in the store")
        finally:
            # Only now is the data gone: a run abandoned while this discard is under way still
            # finds the world in ``live`` and waits for it in drop_data.
            if self in self.live:
                self.live.remove(self)

    def drop_data(self, discard: Callable[[AdapterEnv], Any]) -> None:
        """``discard(env)`` once, whichever thread asks first; a second caller waits for the
        first (a stopped run's supervisor must not exit while the run's thread drops)."""
        with self._dropping:
            if not self._dropped:
                discard(self.env)
                self._dropped = True


def unavailable(name: str, outcome: Outcome) -> str:
    """``<name>: store unavailable (<outcome>)`` for a call the store could not answer, with an
    error's detail when it says more than its code (a crash's message is in its words)."""
    said = outcome.detail if isinstance(outcome, Err) and outcome.detail != outcome.code else ""
    return f"{name}: store unavailable ({outcome}{': ' + said if said else ''})"


def backend_away(e: BaseException) -> bool:
    """Is ``e`` the store saying its backend is away (not a wrong answer)?"""
    return (isinstance(e, ContractError) and e.code == "backend_unavailable"
            or type(e).__name__ in LOST_EXCEPTIONS)
