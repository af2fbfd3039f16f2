"""Run every check of a suite against one adapter and gather the evidence.

Order: scripted scenarios and the checks under injected database faults (stores that expose
their SQLAlchemy engine), both fast and pointed; then the state machine (broad); then the
real-thread races; then the concurrent run, whose history is checked for linearizability. Each
check runs on ids of its own (a prefix), against one store opened once per run (the fault cases
and the concurrent run that see whole queues on stores of their own), under one simulated clock
that only moves forward.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import attrs

from fencepost.env import AdapterEnv
from fencepost.errors import ConfigurationError
from fencepost.model.base import options_with_defaults
from fencepost.spec.ops import Op

from .clock import SimClock
from .concurrent import run_concurrent
from .evidence import Evidence, Failure
from .fault_checks import fault_check
from .faults import FAULT_INJECTION, found_capabilities
from .harness import ClauseViolation, Harness, StoreLost, World
from .history import History
from .linearizability import NOT_LINEARIZABLE, UNKNOWN, Verdict, render_counterexample
from .machine import run_machine
from .suite import Suite
from .trace import TraceStep

Progress = Callable[[str], None]
CLOCK_START = 1_000_000


@attrs.frozen
class Profile:
    """How hard to look: state-machine examples and steps, race rounds and racers, and the
    concurrent run's workers and calls (``concurrency`` 0: no concurrent run)."""

    name: str
    examples: int
    steps: int
    race_rounds: int
    racers: int
    concurrency: int = 0
    concurrent_ops: int = 0


PROFILES = {
    p.name: p
    for p in (
        Profile("quick", examples=60, steps=30, race_rounds=20, racers=8,
                concurrency=4, concurrent_ops=300),
        Profile("standard", examples=300, steps=50, race_rounds=60, racers=8,
                concurrency=8, concurrent_ops=2000),
        Profile("thorough", examples=1500, steps=80, race_rounds=200, racers=12,
                concurrency=8, concurrent_ops=6000),
    )
}


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


def _quiet(_: str) -> None:
    pass


def open_checked(suite: Suite, world: World) -> Any:
    """Open the store once and check it has every protocol method."""
    try:
        store = world.open()
    except ConfigurationError:
        raise
    except Exception as e:
        raise ConfigurationError(
            f"the adapter factory failed: {type(e).__name__}: {str(e).strip().splitlines()[0]}"
        ) from e
    missing = [m for m in suite.protocol_methods if not callable(getattr(store, m, None))]
    if missing:
        raise ConfigurationError(
            f"{type(store).__name__} lacks protocol methods {', '.join(missing)} of "
            f"{suite.model.name}; see fencepost.spec.{suite.model.name.replace('-', '_')}"
        )
    return store


def run_suite(
    suite: Suite,
    factory: Callable[[AdapterEnv], Any],
    *,
    profile: Profile,
    seed: int,
    options: Mapping[str, str] | None = None,
    namespace: str | None = None,
    progress: Progress = _quiet,
    stop_when: Callable[[Evidence], bool] | None = None,
) -> RunResult:
    """Check ``factory``'s store against ``suite``; never raises for a contract violation.

    ``stop_when(evidence)``, checked between checks, ends the run early once it is true (the
    mutants command stops as soon as the expected clause has failed)."""
    done = stop_when or (lambda _: False)
    try:
        opts = options_with_defaults(suite.model.choices, options or {}, suite.model.settings)
    except ValueError as e:
        raise ConfigurationError(str(e)) from e
    world = World(
        model=suite.model,
        factory=factory,
        clock=SimClock(CLOCK_START),
        namespace=namespace or f"r{uuid.uuid4().hex[:10]}",
        options=opts,
    )
    timings: dict[str, float] = {}
    examples = 0
    try:
        store = open_checked(suite, world)
        world.capabilities = (frozenset(getattr(store, "capabilities", frozenset()))
                              | found_capabilities(store))
        t0 = time.perf_counter()
        _run_scenarios(suite, world, progress, done)
        timings["scenarios"] = time.perf_counter() - t0
        if done(world.evidence):
            return _result(world, opts, {}, timings, 0)

        t0 = time.perf_counter()
        _run_faults(suite, world, progress, done)
        timings["faults"] = time.perf_counter() - t0
        if done(world.evidence):
            return _result(world, opts, {}, timings, 0)

        t0 = time.perf_counter()
        progress(f"state machine: {profile.examples} examples of up to {profile.steps} steps")
        run = run_machine(
            suite.machine_for(world), examples=profile.examples, steps=profile.steps, seed=seed
        )
        examples = run.examples
        for v in run.violations:
            world.evidence.fail(v.clause, Failure("machine", v.message, v.trace))
        if run.lost is not None:
            _lost(suite, world.evidence, "machine", str(run.lost))
        timings["machine"] = time.perf_counter() - t0
        if done(world.evidence):
            return _result(world, opts, {}, timings, examples)

        t0 = time.perf_counter()
        gated_off = _run_races(suite, world, profile, progress, done)
        timings["races"] = time.perf_counter() - t0
        if done(world.evidence):
            return _result(world, opts, gated_off, timings, examples)

        t0 = time.perf_counter()
        history = _run_concurrent(suite, world, profile, seed, progress)
        timings["concurrent"] = time.perf_counter() - t0
        if history is None and profile.concurrency < 1:
            for clause in suite.clauses:
                if CONCURRENT in clause.checks:
                    gated_off[clause.id] = "not checked: no concurrent run (--concurrency 0)"
        return _result(world, opts, gated_off, timings, examples, history)
    finally:
        world.discard()
        close = getattr(factory, "close", None)
        if close is not None:
            close()


def _result(
    world: World,
    opts: Mapping[str, str],
    gated_off: Mapping[str, str],
    timings: dict[str, float],
    examples: int,
    history: History | None = None,
) -> RunResult:
    timings["total"] = sum(timings.values())
    return RunResult(
        world.evidence, world.capabilities, opts, gated_off, timings, world.evidence.steps,
        examples, history,
    )


def _trace(verdict: Verdict) -> tuple[TraceStep, ...]:
    """The counterexample as trace steps: the last earlier events, the longest prefix of its
    segment, then the event that could not be placed (the model's first allowed answer as
    expected)."""
    cx = verdict.counterexample
    if cx is None:
        return ()
    steps = [TraceStep(e.process, e.at, e.op, "", e.outcome, e.outcome)
             for e in (*cx.before[-10:], *cx.prefix)]
    b = cx.blocked
    steps.append(TraceStep(b.process, b.at, b.op, "could not be placed",
                           cx.expected[0] if cx.expected else None, b.outcome))
    return tuple(steps)


CONCURRENT = "concurrent"
"""The check name of the concurrent run (the linearizability clauses name it)."""


def _run_concurrent(suite: Suite, world: World, profile: Profile, seed: int,
                    progress: Progress) -> History | None:
    """The concurrent run (on a store of its own: its workload sees whole queues) and the
    linearizability check of its history; the history, or None when there was no run."""
    if (suite.workload is None or profile.concurrency < 1 or profile.concurrent_ops < 1
            or "concurrency" not in world.capabilities):
        return None
    world.evidence.checks_run.add(CONCURRENT)
    fork = world.fork("c")
    try:
        progress(f"concurrent: {profile.concurrency} workers, {profile.concurrent_ops} calls")
        run = run_concurrent(fork, suite.workload("c"), threads=profile.concurrency,
                             ops=profile.concurrent_ops, seed=seed, partition=suite.partition,
                             progress=progress)
    finally:
        fork.discard()
    verdict = run.verdict
    for clause in (c.id for c in suite.clauses if CONCURRENT in c.checks):
        if verdict.result == NOT_LINEARIZABLE:
            message = (f"a concurrent run of {len(run.history.events)} calls by "
                       f"{profile.concurrency} workers is not linearizable\n\n"
                       + render_counterexample(verdict))
            world.evidence.fail(clause, Failure(CONCURRENT, message, _trace(verdict)))
        elif verdict.result == UNKNOWN or run.stuck:
            world.evidence.lost(clause, f"{CONCURRENT}: {run.stuck or verdict.summary()}")
        else:
            world.evidence.exercised[clause] = (world.evidence.exercised.get(clause, 0)
                                                + len(run.history.events))
            if changes_overlapped(run.history, suite.partition, suite.model.pure):
                world.evidence.reach(clause, OVERLAPPED)
    world.evidence.steps += len(run.history.events)
    return run.history


OVERLAPPED = "a change overlapped another call on its record"
"""The situation of the linearizability clauses: without it every order was forced."""


def changes_overlapped(history: History, partition: Callable[[Op], Hashable | None] | None,
                       pure: Callable[[Op, Any], bool] | None) -> bool:
    """Did a call that changed the store (answered, not pure) run at the same time as another
    answered call on its partition (its record, for a contract partitioned by record)?"""
    by_part: dict[Hashable | None, list[tuple[int, int, bool]]] = {}
    for e in history.events:
        if e.completed is None or e.outcome is None:
            continue
        key = partition(e.op) if partition is not None else e.op.key()
        change = pure is None or not pure(e.op, e.outcome)
        by_part.setdefault(key, []).append((e.invoked, e.completed, change))
    for spans in by_part.values():
        spans.sort()
        any_end = change_end = -1  # the latest end among earlier calls / earlier changes
        for start, end, change in spans:
            if start < change_end or (change and start < any_end):
                return True
            any_end = max(any_end, end)
            if change:
                change_end = max(change_end, end)
    return False


def _lost(suite: Suite, evidence: Evidence, check: str, reason: str) -> None:
    for clause in suite.clauses:
        if check in clause.checks or check.split(":")[0] in clause.checks:
            evidence.lost(clause.id, f"{check}: {reason}")


def _run_one(suite: Suite, world: World, check: str, body: Callable[[Harness], None]) -> bool:
    """Run one check; record its failure, or its loss against every clause it covers.
    True when it passed."""
    world.evidence.checks_run.add(check)
    h = Harness(world)
    try:
        body(h)
    except ClauseViolation as v:
        world.evidence.fail(v.clause, Failure(check, v.message, v.trace))
        return False
    except StoreLost as lost:
        _lost(suite, world.evidence, check, str(lost))
        return False
    return True


def _run_scenarios(
    suite: Suite, world: World, progress: Progress, done: Callable[[Evidence], bool]
) -> None:
    names = [n for n, req in suite.scenarios.requires.items() if req <= world.capabilities]
    for k, name in enumerate(names, 1):
        if done(world.evidence):
            return
        progress(f"scenario {k}/{len(names)}: {name}")
        _run_one(suite, world, f"scenario:{name}", _scenario_body(suite.scenarios[name], f"s{k}"))


def _scenario_body(fn: Callable[..., None], prefix: str) -> Callable[[Harness], None]:
    return lambda h: fn(h, prefix)


def _race_body(
    fn: Callable[..., None], prefix: str, profile: Profile, round_no: int
) -> Callable[[Harness], None]:
    return lambda h: fn(h, prefix, profile.racers, round_no)


def _run_faults(
    suite: Suite, world: World, progress: Progress, done: Callable[[Evidence], bool]
) -> None:
    """Each fault case under every fault (see :mod:`.fault_checks`), when the store exposes its
    SQLAlchemy engine; without it the fault clauses are unsupported."""
    faults = suite.faults
    if faults is None or FAULT_INJECTION not in world.capabilities:
        return
    for k, name in enumerate(faults, 1):
        if done(world.evidence):
            return
        progress(f"faults {k}/{len(faults)}: {name}")
        _run_one(suite, world, f"fault:{name}", fault_check(faults, name, f"f{k}"))


def _run_races(
    suite: Suite,
    world: World,
    profile: Profile,
    progress: Progress,
    done: Callable[[Evidence], bool],
) -> dict[str, str]:
    gated_off: dict[str, str] = {}
    for clause in suite.clauses:
        for check in clause.checks:
            gate = suite.race_gates.get(check.removeprefix("race:"))
            if gate and world.options.get(gate[0]) != gate[1]:
                value = world.options[gate[0]]
                gated_off[clause.id] = f"not checked under option {gate[0]}={value}"
    if "concurrency" not in world.capabilities:
        return gated_off
    for index, (name, fn) in enumerate(suite.races.items()):
        gate = suite.race_gates.get(name)
        if gate and world.options.get(gate[0]) != gate[1]:
            continue
        for r in range(profile.race_rounds):
            if done(world.evidence):
                return gated_off
            progress(f"race {name}: round {r + 1}/{profile.race_rounds}")
            prefix = f"r{index}x{r}"
            if not _run_one(suite, world, f"race:{name}", _race_body(fn, prefix, profile, r)):
                break
    return gated_off
