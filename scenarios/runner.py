"""Run every check of a suite against one adapter and gather the evidence.

A run is made of parts, cut by the kinds of check (:mod:`.kinds`), in their order: scripted
scenarios and the checks under injected database faults (stores that expose their SQLAlchemy
engine), both fast and pointed; then the state machine (broad); then the real-thread races;
then the concurrent run, whose history is checked for linearizability; then the kinds from
outside the kit. Each check runs on ids of its own (a prefix), against one store opened once
per run (the fault cases and the concurrent run that see whole queues on stores of their own),
under one simulated clock that only moves forward. A run may name checks to run ``first``
(``fencepost mutants`` names the checks of the clause it expects to fail, and stops once it
has): their parts, and they within their part, go before the others; the rest keep this order.
"""

from __future__ import annotations

import functools
import signal
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import attrs
from hypothesis.database import ExampleDatabase

from fencepost.model.base import options_with_defaults
from fencepost.model.history import History
from fencepost.spec.env import AdapterEnv
from fencepost.spec.errors import ConfigurationError, exception_said, told

from .clock import SimClock
from .collector import collecting_less
from .evidence import Ending, Evidence
from .guard import (
    CANCEL_GRACE_S,
    DEFAULT_CALL_TIMEOUT_S,
    Guard,
    RunAbandoned,
    RunStopped,
    supervise,
)
from .harness import AdapterFault, World
from .injection import FAULT_INJECTION, found_capabilities
from .interrupt import Interrupted
from .kinds import parts_of, run_check, wanted
from .phases import first_of, unknown_check
from .profiles import Profile
from .said import Progress, quiet
from .suite import Suite

CLOCK_START = 1_767_225_600_000
"""Where the simulated clock starts, ms since the Unix epoch: 2026-01-01T00:00:00Z. A real
date, as the seeds' callers' clocks give (erlang:system_time(millisecond), the stores' own
clocks): a store that keeps times in 32-bit integers, or any type too narrow for today, fails
here as it would in production (at 1 000 000, the start until issue 29's stop 61, every time
the kit sent fitted one)."""


@attrs.frozen
class RunResult:
    evidence: Evidence
    capabilities: frozenset[str]
    options: Mapping[str, str]
    gated_off: Mapping[str, str]
    timings: Mapping[str, float]
    steps: int
    examples: int
    history: History | None = None
    unopened: str | None = None
    """A part of a run on several processes whose store would not open (the message of the
    ConfigurationError a run alone would raise there): its checks are unknown for the
    factory's error, as they are in a run on one process when a later open fails; a run whose
    every part is unopened could not open the store at all (see ``fencepost.parallel``)."""


def new_world(
    suite: Suite,
    factory: Callable[[AdapterEnv], Any],
    *,
    options: Mapping[str, str] | None = None,
    namespace: str | None = None,
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    start_ms: int = CLOCK_START,
) -> World:
    """The world of one run, not yet opened: the options with their defaults (a bad one is a
    ConfigurationError), the simulated clock, the call guard and a namespace of its own.

    Every way of running a store goes the same way (:func:`run_suite`, ``check_concurrent``,
    :class:`~fencepost.replay.Replay`): ``new_world``, :func:`open_checked`, the checks,
    :func:`drop_live`, :func:`close_factory`."""
    try:
        opts = options_with_defaults(suite.model.choices, options or {}, suite.model.settings)
        guard = Guard(call_timeout_s)
    except ValueError as e:
        raise ConfigurationError(str(e)) from e
    for setting in suite.model.settings:
        if opts[setting.name] != setting.default:
            # Every check of a run shares the store, and each check's model starts empty: a
            # limit reached by earlier checks' records would fail a correct store.
            raise ConfigurationError(
                f"option {setting.name}={opts[setting.name]} cannot be checked run-wide: every "
                f"check's records would count against it, each against a model that starts "
                f"empty; the kit checks {setting.name} itself on stores of its own, so leave it "
                f"at {setting.default} (run the store under test without the limit)")
    return World(model=suite.model, factory=factory, clock=SimClock(start_ms),
                 namespace=namespace or f"r{uuid.uuid4().hex[:10]}", options=opts,
                 guard=guard)


def drop_live(world: World) -> None:
    """Drop the data of every world of the run not yet discarded, the last opened first (a
    failure is noted in the evidence as the adapter's fault)."""
    for w in reversed(list(world.live)):
        w.discard()


def open_checked(suite: Suite, world: World) -> Any:
    """Open the store once and check it has every protocol method and declares its
    capabilities as a set of known names; ``world.capabilities`` is then what it declares and
    what is found (fault injection)."""
    try:
        store = world.open()
    except AdapterFault as e:
        raise ConfigurationError(str(e).replace("raised", "failed:", 1)) from e
    name = type(store).__name__
    try:
        missing = [m for m in suite.protocol_methods if not callable(getattr(store, m, None))]
        capabilities = declared_capabilities(suite, store) | found_capabilities(store)
    except ConfigurationError:
        raise
    except BaseException as e:  # noqa: BLE001 - even SystemExit: the store's attributes
        raise ConfigurationError(f"reading the attributes of the {name} the adapter factory "
                                 f"returned raised {exception_said(e)}") from None
    if missing:
        raise ConfigurationError(
            f"{name} lacks protocol methods {', '.join(missing)} of "
            f"{suite.model.name}; see fencepost.spec.{suite.model.name.replace('-', '_')}"
        )
    world.capabilities = capabilities
    return store


def required(store: Any, require: AbstractSet[str], capabilities: AbstractSet[str]) -> None:
    """ConfigurationError when the store lacks a capability the run requires (``--require``)."""
    missing = sorted(require - capabilities)
    if missing:
        declared = ", ".join(sorted(capabilities)) or "none"
        raise ConfigurationError(
            f"--require {', '.join(missing)}: {type(store).__name__} does not declare "
            f"{'it' if len(missing) == 1 else 'them'} (its capabilities: {declared})")


def declared_capabilities(suite: Suite, store: Any) -> frozenset[str]:
    """``store.capabilities``, which must be a set (or frozenset) of names the contract knows:
    an unknown name would silently make its clauses unsupported."""
    declared: Any = getattr(store, "capabilities", frozenset())
    known = sorted({*suite.capabilities, FAULT_INJECTION})
    name = type(store).__name__
    if not isinstance(declared, AbstractSet):
        raise ConfigurationError(
            f"{name}.capabilities must be a set of names such as "
            f"frozenset({{{known[0]!r}}}), not {type(declared).__name__} {declared!r}; "
            f"known: {', '.join(known)}")
    unknown = sorted(repr(c) for c in declared if c not in known)
    if unknown:
        raise ConfigurationError(
            f"{name}.capabilities names {', '.join(unknown)}, unknown to "
            f"{suite.model.name}; known: {', '.join(known)} (fencepost list {suite.model.name})")
    return frozenset(declared)


def run_suite(
    suite: Suite,
    factory: Callable[[AdapterEnv], Any],
    *,
    profile: Profile,
    seed: int,
    options: Mapping[str, str] | None = None,
    namespace: str | None = None,
    progress: Progress = quiet,
    stop_when: Callable[[Evidence], bool] | None = None,
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    first: Collection[str] = (),
    example_db: ExampleDatabase | None = None,
    parts: Collection[int] | None = None,
    require: Collection[str] = (),
    keep_open: bool = False,
) -> RunResult:
    """Check ``factory``'s store against ``suite``; never raises for a contract violation.

    Every store call is bounded by ``call_timeout_s``: a call that does not return stops the
    run, with the clauses at stake ``unknown`` and the verdicts reached so far kept. The data of
    the run is dropped on every path (the factory's ``discard``). Ctrl-C (or a signal the
    caller turns into :class:`Interrupted`) raises :class:`Interrupted` holding the partial
    result. ``stop_when(evidence)``, checked between checks, ends the run early once it is
    true (the mutants command stops as soon as the expected clause has failed); the checks named
in ``first`` (``"race:walk_under_submitters"``, ``"machine"``) run before the others. The
    state machine replays the failures Hypothesis' ``example_db`` holds first and saves those
    it finds there. ``parts`` (indexes of :func:`~.kinds.parts_of`; default all) runs only
    those parts. A capability in ``require`` the store does not declare is a
    ConfigurationError (a CI gate that insists on ``concurrency``), before any check runs.
    The factory is closed at the end (its ``close``), unless ``keep_open`` and the run ended
    as it should (not stopped, interrupted or failed): then the caller runs more on it and
    closes it (:func:`close_factory_into`)."""
    world = new_world(suite, factory, options=options, namespace=namespace,
                      call_timeout_s=call_timeout_s)
    guard = world.guard
    run = _Run(suite, world, profile, seed, progress, stop_when or (lambda _: False),
               frozenset(first), example_db=example_db, parts=parts,
               require=frozenset(require))
    with collecting_less():
        ended = supervise(guard, run.checks)
    if ended.abandoned is not None:
        _stopped(suite, run.current or world, ended.abandoned)
        # Interrupted: the user is waiting (and the command's supervisor kills a child that
        # takes more than CHILD_GRACE_S); a drop held up longer is noted as such.
        drop_abandoned(world, CANCEL_GRACE_S if ended.interrupted is not None
                       else guard.timeout_s)
    interrupted = ended.interrupted
    whole = (ended.abandoned is None and interrupted is None and ended.error is None
             and not world.evidence.stopped)
    if not guard.abandoned and not (keep_open and whole):
        interrupted = close_factory(world) or interrupted
    result = run.result()
    if interrupted is not None:
        signum = getattr(interrupted, "signum", signal.SIGINT)
        raise Interrupted(signum, result) from None
    if ended.error is not None:
        raise ended.error
    return result


def parts_in_order(parts: tuple[tuple[str, ...], ...], first: AbstractSet[str]) -> list[int]:
    """The indexes of ``parts`` (:func:`~.kinds.parts_of`), those holding a check named in
    ``first`` first."""
    return sorted(range(len(parts)),
                  key=lambda k: not any(wanted(check, first) for check in parts[k]))


@attrs.define
class _Run:
    """The checks of one run, in order, on the run's own thread (see :func:`run_suite`):
    ``world`` is the root world (the store opened once to check it, the evidence), ``current``
    the world of the part running now."""

    suite: Suite
    world: World
    profile: Profile
    seed: int
    progress: Progress
    done: Callable[[Evidence], bool]
    first: frozenset[str] = frozenset()
    timings: dict[str, float] = attrs.Factory(dict)
    examples: int = 0
    gated_off: dict[str, str] = attrs.Factory(dict)
    history: History | None = None
    example_db: ExampleDatabase | None = None
    parts: Collection[int] | None = None
    require: frozenset[str] = frozenset()
    current: World | None = None
    unopened: str | None = None

    def checks(self) -> None:
        suite, root = self.suite, self.world
        try:
            try:
                store = open_checked(suite, root)
            except ConfigurationError as e:
                if self.parts is None or not isinstance(e.__cause__, AdapterFault):
                    raise
                self._unopened(str(e), e.__cause__)
                return
            required(store, self.require, root.capabilities)
            parts = parts_of(suite, self.profile)
            for k in parts_in_order(parts, self.first):
                if self.parts is not None and k not in self.parts:
                    continue
                self.current = root.fork(f"u{k}", clock=SimClock(CLOCK_START))
                named = {check for check in parts[k] if wanted(check, self.first)}
                for check in first_of(parts[k], named):
                    t0 = time.perf_counter()
                    timing = run_check(self, check)
                    self.timings[timing] = (self.timings.get(timing, 0.0)
                                            + time.perf_counter() - t0)
                    if self.done(root.evidence):
                        return
                self.current.discard()
        except RunAbandoned:
            raise
        except RunStopped as stop:
            _stopped(suite, self.current or root, str(stop))
        finally:
            drop_live(root)

    def _unopened(self, said: str, fault: AdapterFault) -> None:
        """A part's store did not open (its factory raised): each of its checks is unknown
        for that, as a check whose store would not open is in a run on one process."""
        self.unopened = said
        parts, evidence = parts_of(self.suite, self.profile), self.world.evidence
        for k in sorted(self.parts or ()):
            for check in parts[k]:
                evidence.checks_run.add(check)
                unknown_check(self.suite, evidence, check, str(fault))
                evidence.ended.setdefault(check, Ending.unknown_for(fault))

    def result(self) -> RunResult:
        w = self.world
        self.timings["total"] = sum(self.timings.values())
        return RunResult(w.evidence, w.capabilities, w.options, dict(self.gated_off),
                         dict(self.timings), w.evidence.steps, self.examples, self.history,
                         self.unopened)

    @property
    def part(self) -> World:
        """The world the running part's checks run on."""
        assert self.current is not None
        return self.current

    def first_for(self, kind: str) -> frozenset[str]:
        return frozenset(check.removeprefix(f"{kind}:") for check in self.first)


def _stopped(suite: Suite, world: World, reason: str) -> None:
    """The run stopped in ``world.check``: its clauses are unknown, with the reason."""
    evidence = world.evidence
    if not evidence.stopped:
        evidence.stopped = reason
    if world.check:
        unknown_check(suite, evidence, world.check, reason)
        evidence.ended[world.check] = Ending.unknown_for(reason)


def close_factory(world: World) -> BaseException | None:
    """The end of a run: the factory's ``close``, if any, watched as a store call is (it may
    take the call timeout, then it is left behind). A failure or a close that did not return
    is noted in the evidence as the adapter's fault. Returns the interruption (Ctrl-C, a
    signal) that came meanwhile, if one did."""
    return close_factory_into(world.factory, world.evidence, world.guard)


def close_factory_into(factory: Any, evidence: Evidence, guard: Guard) -> BaseException | None:
    """:func:`close_factory` of ``factory``, watched by ``guard``, its faults noted in
    ``evidence`` (a factory several runs used, closed after the last: see ``keep_open``)."""
    close = getattr(factory, "close", None)
    if close is None:
        return None
    ended = supervise(guard, functools.partial(guard.run, "the adapter factory's close", close,
                                               cleanup=True))
    error = ended.error
    if ended.abandoned is not None:
        evidence.faults.append(f"the adapter factory's close did not return in "
                               f"{guard.timeout_s:g} s (--call-timeout); it was left behind")
    elif isinstance(error, RunStopped):
        evidence.faults.append(f"the adapter factory's close: {told(error)}")
    elif error is not None:  # even SystemExit: the adapter's fault, noted for the report
        evidence.faults.append(f"the adapter factory's close raised {type(error).__name__}: "
                               f"{told(error)}")
    return ended.interrupted


def drop_abandoned(world: World, timeout_s: float) -> None:
    """The run's thread is stuck in a store call: drop what it left from this thread, within
    ``timeout_s`` in all (a store stuck holding a lock may block a ``discard``)."""
    discard = getattr(world.factory, "discard", None)
    close = getattr(world.factory, "close", None)
    deadline = time.monotonic() + timeout_s
    for w in reversed(list(world.live)):
        left = max(0.0, deadline - time.monotonic())
        if discard is not None and not _bounded(w.drop_data, discard, left):
            world.evidence.faults.append(
                f"{w.namespace}: the factory's discard did not finish in {timeout_s:g} s after "
                "the run stopped; its data may be left behind")
    if close is not None:
        _bounded(close, None, max(0.0, deadline - time.monotonic()))


def _bounded(fn: Callable[..., Any], arg: Any, timeout_s: float) -> bool:
    """``fn(arg)`` (or ``fn()``) on a thread of its own; True when it finished in time."""
    finished = threading.Event()

    def target() -> None:
        try:
            fn() if arg is None else fn(arg)
        except BaseException:  # noqa: BLE001, S110 - best effort after an abandoned run
            pass
        finally:
            finished.set()

    threading.Thread(target=target, daemon=True, name="fencepost-cleanup").start()
    return finished.wait(timeout_s)


