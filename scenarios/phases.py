"""The built-in kinds of check (see :mod:`.kinds`), each run over every check of its kind in a
part: the scripted scenarios, the fault cases, the state machine (through :mod:`.machine`), the
races and the concurrent run with its linearizability check. :mod:`.runner` runs the parts in
order; each kind records what it found in the world's evidence: a failure, or a loss
(``backend_unavailable``, a stopped run) against every clause the check covers."""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable
from collections.abc import Set as AbstractSet
from typing import Any

from fencepost.model.answers import Answers
from fencepost.model.history import History
from fencepost.model.linearizability import (
    NOT_LINEARIZABLE,
    UNKNOWN,
    Verdict,
    render_counterexample,
)
from fencepost.scenarios.concurrent import run_concurrent
from fencepost.scenarios.evidence import CONCURRENT, HELD, Ending, Evidence, Failure
from fencepost.scenarios.fault_checks import fault_check
from fencepost.scenarios.harness import ClauseViolation, Harness, StoreLost, World
from fencepost.scenarios.injection import FAULT_INJECTION
from fencepost.scenarios.kinds import CheckKind, PartRun, clauses_of, declare
from fencepost.scenarios.machine import run_machine
from fencepost.scenarios.profiles import Profile
from fencepost.scenarios.said import MACHINE_PHASE, Progress, Said
from fencepost.scenarios.suite import Suite
from fencepost.scenarios.tour import TOUR, TourRun, run_tour, tour_clauses
from fencepost.scenarios.trace import TraceStep
from fencepost.spec.errors import ConfigurationError
from fencepost.spec.ops import Op


def first_of(names: Collection[str], first: AbstractSet[str]) -> list[str]:
    """``names`` in order, those in ``first`` moved to the front (each group keeps its order)."""
    return sorted(names, key=lambda name: name not in first)


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


def run_concurrent_check(suite: Suite, world: World, profile: Profile, seed: int,
                    progress: Progress) -> History | None:
    """The concurrent run (on a store of its own: its workload sees whole queues) and the
    linearizability check of its history; the history, or None when there was no run."""
    if (suite.workload is None or profile.concurrency < 1 or profile.concurrent_ops < 1
            or "concurrency" not in world.capabilities):
        return None
    world.evidence.checks_run.add(CONCURRENT)
    world.check = CONCURRENT
    fork = world.fork("c")
    clauses = clauses_of(suite, CONCURRENT)
    try:
        progress(Said(CONCURRENT, f"concurrent: {profile.concurrency} workers, "
                      f"{profile.concurrent_ops} calls"))
        run = run_concurrent(fork, suite.workload("c"), threads=profile.concurrency,
                             ops=profile.concurrent_ops, seed=seed, partition=suite.partition,
                             max_faulted=profile.concurrent_max_faulted, progress=progress)
    except StoreLost as lost:
        for clause in clauses:
            world.evidence.mark_unknown(clause, f"{CONCURRENT}: {lost}")
        world.evidence.ended[CONCURRENT] = Ending.unknown_for(lost)
        world.forget_store()
        return None
    finally:
        if not world.guard.abandoned:
            fork.discard()
    answers = run.answers
    world.evidence.concurrent = answers
    verdict = run.verdict
    why = no_evidence(answers, profile)
    if why is None and verdict is not None and verdict.result == UNKNOWN:
        why = verdict.summary() + (f"; {answers.describe()}" if answers.faulted else "")
    failure = None
    if verdict is not None and verdict.result == NOT_LINEARIZABLE:
        workers = profile.concurrency
        message = (f"a concurrent run of {len(run.history.events)} calls by {workers} "
                   f"worker{'s' if workers > 1 else ''} is not linearizable\n\n"
                   + render_counterexample(verdict))
        failure = Failure(CONCURRENT, message, _trace(verdict), verdict.counterexample)
    for clause in clauses:
        if failure is not None:
            world.evidence.fail(clause, failure)
        elif why is not None:
            world.evidence.mark_unknown(clause, f"{CONCURRENT}: {why}")
        else:
            world.evidence.exercised[clause] = (world.evidence.exercised.get(clause, 0)
                                                + answers.answered)
            if changes_overlapped(run.history, suite.partition, suite.model.pure):
                world.evidence.reach(clause, OVERLAPPED)
    world.evidence.ended[CONCURRENT] = (
        Ending.failing(clauses) if failure is not None
        else Ending.unknown_for(why) if why is not None else HELD)
    world.evidence.steps += len(run.history.events)
    return run.history


def no_evidence(answers: Answers, profile: Profile) -> str | None:
    """Why a concurrent history whose calls ended as ``answers`` is no evidence for its
    clauses, or None. Only answered calls are evidence (see :mod:`fencepost.model.answers`):
    a history with no call proves nothing, and one in which more calls faulted than the
    profile allows (``concurrent_max_faulted``) is not checked."""
    if answers.calls == 0:
        return "the concurrent run made no call"
    if not answers.exceeded:
        return None
    return (f"{answers.faulted:,} of {answers.calls:,} calls faulted ({answers.faulted_by()}), "
            f"more than the {answers.allowed:,} ({profile.concurrent_max_faulted:.0%} of the "
            f"calls) the {profile.name} profile allows: a faulted call is not an answer, so "
            "the history was not checked for linearizability")


OVERLAPPED = "a change overlapped another call on its record"
"""The situation of the linearizability clauses: without it every order was forced."""


def changes_overlapped(history: History, partition: Callable[[Op], Hashable | None] | None,
                       pure: Callable[[Op, Any], bool] | None) -> bool:
    """Did a call that changed the store (answered, not pure) run at the same time as another
    answered call on its partition (its record, for a contract partitioned by record)? A
    faulted call is no answer: it overlaps nothing."""
    by_part: dict[Hashable | None, list[tuple[int, int, bool]]] = {}
    for e in history.events:
        if e.completed is None or e.outcome is None or e.indeterminate:
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


def unknown_check(suite: Suite, evidence: Evidence, check: str, reason: str) -> None:
    """Every clause ``check`` covers is unknown, for ``reason``."""
    for clause in clauses_of(suite, check):
        evidence.mark_unknown(clause, f"{check}: {reason}")


def run_one(suite: Suite, world: World, check: str, body: Callable[[Harness], None],
            go_on: bool = False) -> bool:
    """Run one check; record its failure, or its loss against every clause it covers.
    True when it passed. With ``go_on`` (scripted scenarios) a difference in fields alone
    fails its clause and the check goes on (see :mod:`.harness`)."""
    world.evidence.checks_run.add(check)
    world.check = check
    h = Harness(world)
    h.go_on = go_on
    try:
        body(h)
    except ClauseViolation as v:
        if v.after and v.clause not in v.after:
            # A difference after the check went on past another may follow from it.
            first = v.message.splitlines()[0] if v.message else ""
            world.evidence.mark_unknown(
                v.clause, f"{check}: not concluded: {first} (after the check went on past a "
                f"difference that failed {', '.join(v.after)}, which it may follow from)")
            world.evidence.ended.setdefault(
                check, Ending.unknown_for(f"after {', '.join(v.after)} failed"))
            return False
        world.evidence.fail(v.clause, Failure(check, v.message, v.trace))
        world.evidence.ended.setdefault(check, Ending.failing([v.clause]))
        return False
    except StoreLost as lost:
        unknown_check(suite, world.evidence, check, str(lost))
        world.evidence.ended.setdefault(check, Ending.unknown_for(lost))
        world.forget_store()
        return False
    finally:
        h.settle_repeats()
    world.evidence.ended.setdefault(check, HELD)
    return not h.masked


def run_scenarios(
    suite: Suite, world: World, progress: Progress, done: Callable[[Evidence], bool],
    first: AbstractSet[str] = frozenset(),
) -> None:
    names = [n for n, req in suite.scenarios.requires.items() if req <= world.capabilities]
    number = {name: k for k, name in enumerate(names, 1)}  # the ids' prefix: as in any order
    for name in first_of(names, {c.removeprefix("scenario:") for c in first}):
        if done(world.evidence):
            return
        k = number[name]
        progress(Said("scenario", f"scenario {k}/{len(names)}: {name}"))
        run_one(suite, world, f"scenario:{name}", _scenario_body(suite.scenarios[name], f"s{k}"),
                 go_on=True)


def _scenario_body(fn: Callable[..., None], prefix: str) -> Callable[[Harness], None]:
    return lambda h: fn(h, prefix)


def _race_body(
    fn: Callable[..., None], prefix: str, profile: Profile, round_no: int
) -> Callable[[Harness], None]:
    return lambda h: fn(h, prefix, profile.racers, round_no)


def run_faults(
    suite: Suite, world: World, progress: Progress, done: Callable[[Evidence], bool],
    first: AbstractSet[str] = frozenset(),
) -> None:
    """Each fault case under every fault (see :mod:`.fault_checks`), when the store exposes its
    SQLAlchemy engine; without it the fault clauses are unsupported."""
    faults = suite.faults
    if faults is None or FAULT_INJECTION not in world.capabilities:
        return
    number = {name: k for k, name in enumerate(faults, 1)}
    for name in first_of(list(faults), {c.removeprefix("fault:") for c in first}):
        if done(world.evidence):
            return
        k = number[name]
        progress(Said("faults", f"faults {k}/{len(faults)}: {name}"))
        run_one(suite, world, f"fault:{name}", fault_check(faults, name, f"f{k}"))


def run_races(
    suite: Suite,
    world: World,
    profile: Profile,
    progress: Progress,
    done: Callable[[Evidence], bool],
    first: AbstractSet[str] = frozenset(),
    only: str | None = None,
) -> dict[str, str]:
    """Each race of ``suite`` (``only`` that one) for the profile's rounds, a race stopping at
    its first failing round; the clauses whose race an option of the run turns off, with
    why."""
    gated_off: dict[str, str] = {}
    for clause in suite.clauses:
        for check in clause.checks:
            gate = suite.race_gates.get(check.removeprefix("race:"))
            if gate and world.options.get(gate[0]) != gate[1]:
                value = world.options[gate[0]]
                gated_off[clause.id] = f"not checked under option {gate[0]}={value}"
    if "concurrency" not in world.capabilities:
        return gated_off
    index = {name: k for k, name in enumerate(suite.races)}
    names = list(suite.races) if only is None else [only]
    for name in first_of(names, {c.removeprefix("race:") for c in first}):
        fn = suite.races[name]
        gate = suite.race_gates.get(name)
        if gate and world.options.get(gate[0]) != gate[1]:
            continue
        for r in range(profile.race_rounds):
            if done(world.evidence):
                return gated_off
            progress(Said("race", f"race {name}: round {r + 1}/{profile.race_rounds}"))
            prefix = f"r{index[name]}x{r}"
            if not run_one(suite, world, f"race:{name}", _race_body(fn, prefix, profile, r)):
                break
    return gated_off


def _scenario_kind(run: PartRun, _name: str | None) -> None:
    run_scenarios(run.suite, run.part, run.progress, run.done, run.first_for("scenario"))


def _fault_kind(run: PartRun, _name: str | None) -> None:
    run_faults(run.suite, run.part, run.progress, run.done, run.first_for("fault"))


def _machine_kind(run: PartRun, _name: str | None) -> None:
    profile, world = run.profile, run.part
    run.progress(Said(MACHINE_PHASE, f"state machine: {profile.examples} examples of up to "
                      f"{profile.steps} steps"))
    world.check = "machine"
    found = run_machine(run.suite.machine_for(world), examples=profile.examples,
                        steps=profile.steps, seed=run.seed, progress=run.progress,
                        shrinking=profile.shrink, database=run.example_db)
    run.examples += found.examples
    for v in found.violations:
        world.evidence.fail(v.clause, Failure("machine", v.message, v.trace,
                                              minimal=v.clause not in found.unshrunk))
    if found.lost is not None:
        unknown_check(run.suite, world.evidence, "machine", str(found.lost))
        world.forget_store()
    world.evidence.ended.setdefault("machine", (
        Ending.failing(v.clause for v in found.violations) if found.violations
        else Ending.unknown_for(found.lost) if found.lost is not None else HELD))


def _tour_kind(run: PartRun, _name: str | None) -> None:
    """The transition tour of the profile's scope (see :mod:`.tour`)."""
    suite, world = run.suite, run.part
    scope = suite.tours.get(run.profile.tour)
    if scope is None:
        raise ConfigurationError(
            f"{suite.model.name} has no tour scope {run.profile.tour!r}; it has "
            f"{', '.join(suite.tours) or 'none'}")
    world.evidence.checks_run.add(TOUR)
    world.check = TOUR
    run.progress(Said(TOUR, f"tour ({scope.name}): {scope.bound}"))

    def record(v: ClauseViolation, minimal: bool) -> None:
        world.evidence.fail(v.clause, Failure(TOUR, v.message, v.trace, minimal=minimal))

    def said(done: int, of: int) -> None:
        run.progress(Said(TOUR, f"tour ({scope.name}): sequence {done:,}/{of:,}"))

    so_far = TourRun()
    coverage = run_tour(scope, world, stop=lambda: run.done(world.evidence), record=record,
                        progress=said, shrinking=run.profile.shrink, so_far=so_far)
    world.evidence.tour = coverage
    failed = [c for c, f in world.evidence.failures.items() if f.check == TOUR]
    if so_far.lost is not None:  # the failures found before it are kept
        for clause in tour_clauses(scope, world):
            if clause not in world.evidence.failures:
                world.evidence.mark_unknown(clause, f"{TOUR}: {so_far.lost}")
        world.evidence.ended[TOUR] = (Ending.failing(failed) if failed
                                      else Ending.unknown_for(so_far.lost))
        world.forget_store()
        return
    world.evidence.ended.setdefault(TOUR, Ending.failing(failed) if failed else (
        HELD if coverage.finished else Ending.unknown_for(coverage.shortfall)))


def _race_kind(run: PartRun, name: str | None) -> None:
    run.gated_off.update(run_races(run.suite, run.part, run.profile, run.progress, run.done,
                                   only=name))


def _concurrent_kind(run: PartRun, _name: str | None) -> None:
    run.history = run_concurrent_check(run.suite, run.part, run.profile, run.seed,
                                       run.progress)
    if run.history is None and run.profile.concurrency < 1:
        for clause in clauses_of(run.suite, CONCURRENT):
            run.gated_off[clause] = "not checked: no concurrent run (--concurrency 0)"


SCENARIO = declare(CheckKind(
    "scenario", _scenario_kind, timing="scenarios",
    summary="a scripted scenario: fixed steps, each answer and read-back compared with the "
            "model's"))
FAULT = declare(CheckKind("fault", _fault_kind, requires=frozenset({FAULT_INJECTION}),
                          joins="scenario", applies=lambda suite: suite.faults is not None,
                          timing="faults",
                          summary="a case run under injected database faults (stores that "
                                  "expose their SQLAlchemy engine)"))
MACHINE = declare(CheckKind(
    "machine", _machine_kind,
    summary="the state machine: generated steps compared with the model's after each, a "
            "failure shrunk to its shortest"))
TOUR_KIND = declare(CheckKind(
    TOUR, _tour_kind, applies=lambda suite: bool(suite.tours),
    wanted=lambda profile: bool(profile.tour),
    summary="the transition tour: every edge of the model's bounded state graph run on the "
            "store, each answer and read-back compared (--tour)"))
RACE = declare(CheckKind("race", _race_kind, requires=frozenset({"concurrency"}),
                         split=lambda suite: tuple(suite.races), timing="races",
                         replayable=False,
                         summary="a race: rounds of real threads on the same records"))
CONCURRENT_KIND = declare(CheckKind(CONCURRENT, _concurrent_kind,
                                    requires=frozenset({"concurrency"}), replayable=False,
                                    summary="the concurrent run: workers' calls, their history "
                                            "checked for linearizability"))
