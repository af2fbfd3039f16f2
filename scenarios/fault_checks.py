"""The checks under injected database faults: a contract's fault cases, each run cleanly once to
learn how many statements and COMMITs its call makes, then once per fault (see
:mod:`fencepost.scenarios.injection`) on a fresh setup, and judged against the model:

- the answer is a database failure the contract allows, or exactly the model's answer (the
  ``surfaces`` clause);
- the records read back as the model's state before the call or after it, after for an ok
  answer (the ``state`` clause);
- where the contract has one (``retry``), the same command repeated after the error answers
  what the model answers from the state the failure left, with its effect once.

Example (a contract's cases)::

    FAULTS = Faults("ADK-FAULT-001", "ADK-FAULT-002", errors=("backend_unavailable",))

    @FAULTS.register("claim")
    def _claim(h: Harness, p: str) -> Target:
        h.apply("client", Create(f"{p}-a", {}, {}))
        return Target("c1", Claim(f"{p}-a", "c1", "t1", h.now, 30_000))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from fencepost.model.base import OneOf, Step, attribute_outcome
from fencepost.spec.opaque import known
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Crash, Err, Outcome, agrees, answered

from .harness import READ_BACK, Harness, StoreLost, World, blamed_on, violation
from .injection import COMMIT_FAULTS, STATEMENT, Fault, FaultInjector, Tally, engine_of
from .trace import TraceStep
from .world import LOST_EXCEPTIONS


@attrs.frozen
class Target:
    """The call a fault case puts under fault: ``op`` by ``actor``; ``reads`` are extra reads
    that show its effect where the model's own read-back cannot (a submission's lookup)."""

    actor: str
    op: Op
    reads: tuple[Op, ...] = ()


FaultSetup = Callable[[Harness, str], Target]


class Faults(dict[str, FaultSetup]):
    """A contract's fault cases: name -> ``setup(harness, prefix) -> Target`` (the setup builds
    state through the harness, so that the model knows it, and names the call), the clauses
    they prove and the error codes a database failure may answer.

    - ``surfaces``: a fault surfaces as one of ``errors``, never as another answer;
    - ``state``: afterwards the records are the model's before or after state (after, for an
      ok answer);
    - ``retry`` (optional): repeating the command after the error gives the committed answer,
      with its effect once.
    """

    def __init__(self, surfaces: str, state: str, errors: Iterable[str],
                 retry: str | None = None) -> None:
        super().__init__()
        self.surfaces = surfaces
        self.state = state
        self.retry = retry
        self.errors = frozenset(errors)
        self.isolated: set[str] = set()

    @property
    def clauses(self) -> tuple[str, ...]:
        return (self.surfaces, self.state) + ((self.retry,) if self.retry else ())

    def register(self, name: str, *, isolated: bool = False) -> Callable[[FaultSetup], FaultSetup]:
        """Register a case; ``isolated`` runs each of its runs on a store of its own (calls
        that see the whole store: a queue scan, a recovery batch)."""

        def add(fn: FaultSetup) -> FaultSetup:
            self[name] = fn
            if isolated:
                self.isolated.add(name)
            return fn

        return add


def fault_check(faults: Faults, name: str, prefix: str) -> Callable[[Harness], None]:
    """The check ``fault:<name>``: a clean run learns how many statements and COMMITs the
    case's call makes; then one run per fault (each statement failing, the connection dropped
    before each COMMIT, each COMMIT's acknowledgement lost), each on a fresh setup."""

    def body(h: Harness) -> None:
        clean = _run(h.world, faults, name, f"{prefix}c", None)
        plan = [Fault(STATEMENT, k) for k in range(1, clean.statements + 1)]
        plan += [Fault(kind, j) for kind in COMMIT_FAULTS for j in range(1, clean.commits + 1)]
        for i, fault in enumerate(plan):
            _run(h.world, faults, name, f"{prefix}x{i}", fault)

    return body


def _run(world: World, faults: Faults, name: str, prefix: str, fault: Fault | None) -> Tally:
    own = world.fork(prefix) if name in faults.isolated else world
    try:
        h = Harness(own)
        target = faults[name](h, prefix)
        engine = engine_of(own.open())
        if engine is None:
            raise StoreLost("the store has no SQLAlchemy engine to inject faults through", ())
        with FaultInjector(engine) as injector:
            return _call(h, faults, target, injector, fault)
    finally:
        if own is not world:
            own.discard()


def _call(h: Harness, faults: Faults, target: Target, injector: FaultInjector,
          fault: Fault | None) -> Tally:
    before, answer = h.state, h.expect(target.op)
    if fault is not None:
        h.note("kit", f"fault armed: {fault}", "fault")
    with injector.armed(fault) as tally:
        actual = h.run(h.world.open(), target.op)
    if fault is None:
        _clean(h, target, before, answer, actual)
    else:
        _judge(h, faults, target, fault, tally, before, _options(h, answer), actual)
    return tally


def _clean(h: Harness, target: Target, before: Any, answer: Step | OneOf,
           actual: Outcome) -> None:
    """The call without a fault, checked as every check checks a step."""
    op = target.op
    step = _matching(h, answer, actual)
    if step is None:
        expected = _options(h, answer)[0]
        h._record(target.actor, op, expected.outcome, actual)
        raise violation(
            attribute_outcome(h.model, expected, actual, op.name, h.real(op)),
            f"{answered(op.name, actual)}; the contract requires {expected.outcome}",
            tuple(h.trace))
    h._record(target.actor, op, step.outcome, actual)
    _adopt(h, step, actual)
    h.check_record(op, step, keys=h._changed(before, step.state))
    h.exercised(step.clause, step.effect_clause, *step.also)


def _judge(h: Harness, faults: Faults, target: Target, fault: Fault, tally: Tally,
           before: Any, options: tuple[Step, ...], actual: Outcome) -> None:
    """FAULT-001 on the answer, FAULT-002 on the records, then the retry clause, if any."""
    op = target.op
    met = f"{op.name} met a fault ({fault}{'' if tally.fired else ', not reached'})"
    surfaced = _surfaced(actual, faults.errors)
    matching = [] if surfaced else [o for o in options if agrees(o.outcome, actual)]
    shown_as = None if surfaced else (matching or options)[0].outcome
    h.trace.append(TraceStep(target.actor, h.now, op, "", shown_as, actual))
    h.world.evidence.steps += 1
    if not surfaced and not matching:
        codes = " or ".join(sorted(faults.errors))
        answered = f"and {actual}" if isinstance(actual, Crash) else f"and answered {actual}"
        raise violation(
            faults.surfaces,
            f"{met} {answered}: a database failure must answer {codes}, never an answer the "
            f"model does not give (the model: {options[0].outcome})",
            tuple(h.trace))
    h.exercised(faults.surfaces)
    if surfaced:
        candidates = [before, *(o.state for o in options if o.outcome.code == "ok")]
    else:
        candidates = [o.state for o in matching]
    shown = _shown(h, target, before, candidates)
    if not shown:
        raise violation(
            faults.state,
            f"after {met} and answered {actual}, the store's records are "
            + ("neither the state before the call nor the state after it" if surfaced
               else "not the state after it, which an ok answer requires"),
            tuple(h.trace))
    h.exercised(faults.state)
    if not surfaced:
        _adopt(h, next(o for o in matching if o.state is shown[0]), actual)
    elif faults.retry is not None:
        _retry(h, faults.retry, target, shown)


def _retry(h: Harness, clause: str, target: Target, states: list[Any]) -> None:
    """Repeat the command; its answer must be the model's from the state the records show
    (several when the reads cannot tell), and its effect must be there exactly once."""
    op = target.op
    h.note(target.actor, f"repeats {op.name} after the error", "retry")
    actual = h.run(h.world.open(), op)
    step: Step | None = None
    for state in states:
        h.state = state
        step = _matching(h, h.expect(op), actual)
        if step is not None:
            break
    if step is None:
        expected = _options(h, h.expect(op))[0].outcome
        h._record(target.actor, op, expected, actual)
        raise violation(
            clause,
            f"repeated after the error, {answered(op.name, actual)}; from the records the "
            f"first call left, the contract requires {expected}",
            tuple(h.trace))
    base = h.state
    h._record(target.actor, op, step.outcome, actual)
    _adopt(h, step, actual)
    with blamed_on(h, clause):
        h.check_record(op, step, keys=h._changed(base, step.state))


def _adopt(h: Harness, step: Step, actual: Outcome) -> None:
    h.state = step.state
    h.bind_minted(step.outcome, actual)


def _options(h: Harness, answer: Step | OneOf) -> tuple[Step, ...]:
    """The model's allowed answers with the identifiers already bound filled in."""
    steps = answer.options if isinstance(answer, OneOf) else (answer,)
    return tuple(attrs.evolve(s, outcome=known(s.outcome, h._minted)) for s in steps)


def _matching(h: Harness, answer: Step | OneOf, actual: Outcome) -> Step | None:
    if isinstance(answer, OneOf):
        return h.pick(answer, actual)
    step = _options(h, answer)[0]
    return step if agrees(step.outcome, actual) else None


def _surfaced(actual: Outcome, errors: frozenset[str]) -> bool:
    """Did the store answer with a database failure the contract allows?"""
    if isinstance(actual, Err):
        return actual.code in errors
    return isinstance(actual, Crash) and actual.kind in LOST_EXCEPTIONS


def _shown(h: Harness, target: Target, before: Any, states: list[Any]) -> list[Any]:
    """The states among ``states`` that the store's records show: every read (the model's
    read-back of each record the call may change, and the case's own reads) is run once and
    compared with the model's answer in each state. Records the reads in the trace and binds
    identifiers they reveal (a submitted task's id)."""
    own = target.op.key()
    keys = [own] if own is not None else []
    for state in states:
        keys += h._changed(before, state)
    reads: list[Op] = []
    for key in dict.fromkeys(keys):
        for state in states:
            reads += [r for r in h._observations(key, state) if r not in reads]
    reads += [r for r in target.reads if r not in reads]
    answers = [h.run(h.world.open(), read) for read in reads]

    def expected(state: Any, read: Op) -> Outcome:
        step = h.model.step(state, h.for_model(read), h.ctx())
        assert isinstance(step, Step), f"{read.name} has several allowed answers"
        outcome: Outcome = known(step.outcome, h._minted)
        return outcome

    agreeing = [s for s in states
                if all(agrees(expected(s, r), a) for r, a in zip(reads, answers, strict=True))]
    shown = agreeing[0] if agreeing else states[-1]
    for read, actual in zip(reads, answers, strict=True):
        h._record(READ_BACK, read, expected(shown, read), actual)
        if agreeing:
            h.bind_minted(expected(shown, read), actual)
    return agreeing
