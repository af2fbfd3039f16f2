"""Run a contract's Hypothesis state machine and collect every clause it shows broken."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import attrs
import hypothesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import ExampleDatabase
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from .evidence import Evidence
from .harness import READ_BACK, ClauseViolation, Harness, StoreLost, World
from .hypothesis_compat import no_local_constants, private_home
from .said import MACHINE_PHASE, Progress, Said
from .shrinking import UNLIMITED, Shrinking, budgeted
from .trace import TraceStep
from .world import Seen, mark_seen, violation, violations_seen


class WorldMachine(RuleBasedStateMachine):
    """Base of the contracts' state machines: bound to a :class:`World` by :meth:`bound_to`;
    Hypothesis makes one instance per example, each with an id prefix of its own. With
    ``own_store`` an example runs on a store of its own (checks that see the whole store:
    reap, capacity, claim_next); it is discarded at teardown."""

    world: World
    examples = 0
    own_store = False
    started: Callable[[int], None] | None = None
    """Told the number of each example as it starts (progress), when set."""

    def __init__(self) -> None:
        super().__init__()
        cls = type(self)
        cls.examples += 1
        if cls.started is not None:
            cls.started(cls.examples)
        self.prefix = f"x{cls.examples}"
        self.own = self.world.fork(f"m{cls.examples}") if self.own_store else self.world
        self.h = Harness(self.own)
        self.began = self.h.now
        """The clock as the example began (the run's clock goes on from one example to the
        next: the same steps replayed later carry later times)."""
        mark_seen(self)

    def teardown(self) -> None:
        if self.own_store:
            self.own.discard()

    @classmethod
    def bound_to(cls, world: World) -> type[WorldMachine]:
        """A subclass bound to ``world`` with its own example counter."""
        made: type[WorldMachine] = subclass(cls, {"world": world, "examples": 0})
        return made


def subclass(cls: type, namespace: dict[str, Any]) -> Any:
    """``type(cls.__name__, (cls,), namespace)``, in a module that does not exist.

    Hypothesis digests a state machine's class by its source on every run (the example
    database's key). For a class made by ``type``, ``inspect`` parsed the whole module it was
    made in and then found no definition: 2.9 ms a run for scenarios/machine.py, 7.7 ms for the
    bench's module. With no module to read, the digest falls back at once to what it came to
    anyway: the class's name and signature."""
    return type(cls.__name__, (cls,), {"__module__": f"{cls.__module__}.<made>", **namespace})


@attrs.frozen
class MachineRun:
    """What one state-machine run found: violations (one per clause; those of ``unshrunk``
    not shrunk to the minimum: a budget stopped it, or there was no shrinking) or a lost
    store."""

    violations: tuple[ClauseViolation, ...]
    lost: StoreLost | None
    examples: int
    unshrunk: frozenset[str] = frozenset()


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for e in error.exceptions for leaf in _leaves(e)]
    return [error]


def run_machine(machine: Any, *, examples: int, steps: int, seed: int,
                progress: Progress | None = None,
                shrinking: Shrinking = UNLIMITED,
                database: ExampleDatabase | None = None) -> MachineRun:
    """Run ``machine`` for ``examples`` examples of up to ``steps`` rules each, seeded;
    ``progress`` is told as each example starts (past ``examples``, the runs that shrink a
    failure) and as each broken clause's shrinking begins. Only the examples generated count
    as evidence that a clause held, not the runs that shrink a failure (see :mod:`.shrinking`).

    Hypothesis shrinks each failure separately (one exception class per clause), so one run can
    report several broken clauses, each with its own trace, minimal unless ``shrinking`` cut
    it short (see :mod:`.shrinking`). With a ``database`` (Hypothesis' example database), the
    failures it holds are replayed first and those found are saved to it; without one nothing
    is written to disk.
    """
    phases = [Phase.generate, Phase.shrink]
    if database is not None:
        phases.insert(0, Phase.reuse)
    config = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=database,
        report_multiple_bugs=True,
        print_blob=False,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )
    shrink_started = None
    if progress is not None:
        def started(k: int) -> None:
            progress(Said(MACHINE_PHASE, f"state machine: example {k}/{examples}"
                          if k <= examples else f"state machine: shrinking, run "
                          f"{k - examples} after {examples} examples"))

        def shrink_started(clause: str) -> None:
            progress(Said(MACHINE_PHASE, "state machine: shrinking the counterexample of "
                          f"{clause}"))

        machine.started = started
    seeded = hypothesis.seed(seed)(machine)
    world: World | None = getattr(machine, "world", None)
    evidence = world.evidence if world is not None else Evidence()
    violations: list[ClauseViolation] = []
    lost: StoreLost | None = None
    unshrunk: set[str] = set()
    try:
        with (ExitStack() as generated, private_home(), no_local_constants(),
              hypothesis.reporting.with_reporter(lambda _t: None),
              budgeted(shrinking, shrink_started,
                       lambda: generated.enter_context(evidence.uncounted())) as cut,
              violations_seen() as seen):
            run_state_machine_as_test(seeded, settings=config)
    except BaseException as error:  # noqa: BLE001 - sorted below; anything else re-raised
        if _flaky(error):
            violations, lost = _not_replayed(seen)
            unshrunk.update(v.clause for v in violations)
        else:
            for leaf in _leaves(error):
                if isinstance(leaf, ClauseViolation):
                    violations.append(leaf)
                elif isinstance(leaf, StoreLost):
                    lost = leaf
                else:
                    raise
    return MachineRun(tuple(violations), lost, int(getattr(machine, "examples", 0)),
                      frozenset(cut.clauses) | unshrunk)


NOT_REPLAYED = "the store answered differently to the same steps when they were replayed"


def _flaky(error: BaseException) -> bool:
    """Did Hypothesis give up because replaying the same steps went another way (a
    :class:`~hypothesis.errors.Flaky` anywhere in ``error``)?"""
    if isinstance(error, Flaky):
        return True
    return isinstance(error, BaseExceptionGroup) and any(_flaky(e) for e in error.exceptions)


def _not_replayed(seen: Seen) -> tuple[list[ClauseViolation], StoreLost | None]:
    """The verdicts of a run Hypothesis could not replay: each clause's first violation,
    unshrunk (a wrong answer is wrong whatever the store answers the next time), told where
    the last example got another answer to the same steps than an earlier one; with none, the
    run cannot conclude (why the store was lost first, if it was)."""
    examples = [m for m in seen.marks if isinstance(m, WorldMachine)]
    where = _where(examples)
    violations = [
        violation(v.clause, f"{v.message}\n({where}; this counterexample is the first "
                  "run's, not shrunk)", v.trace, v.after)
        for _, v in seen.first.values()]
    if violations:
        return violations, None
    if seen.lost is not None:  # what went wrong first (a lost child) says more than the replay
        return [], type(seen.lost)(f"{seen.lost} (and then {where})", seen.lost.trace)
    last = tuple(examples[-1].h.trace) if examples else ()
    return [], StoreLost(f"{where}, before any clause failed: the state machine cannot "
                         "conclude", last)


def _where(examples: list[WorldMachine]) -> str:
    """Where the last of ``examples`` first got another answer to the same steps than an
    earlier one kept (each example's id prefix read as the same), if it did. A read-back is
    in a trace only when it differed, so one an example went on past without a line answered
    what the contract requires there."""
    if not examples:
        return NOT_REPLAYED
    last = examples[-1]
    replay = [_step(s, last.prefix, last.began) for s in last.h.trace]
    for earlier in reversed(examples[:-1]):
        steps = [_step(s, earlier.prefix, earlier.began) for s in earlier.h.trace]
        n = next((k for k, (a, b) in enumerate(zip(steps, replay, strict=False)) if a != b),
                 min(len(steps), len(replay)))
        if n >= len(steps):
            continue
        done, first, _ = steps[n]
        if n >= len(replay) or done != replay[n][0]:
            if earlier.h.trace[n].actor == READ_BACK:  # the replay's read-back had no line
                return (f"{NOT_REPLAYED}: step {n + 1}, {done}, {first} the first time and "
                        "what the contract requires in the replay")
            if n >= len(replay):
                continue
        again_done, again, required = replay[n]
        if done == again_done:
            return (f"{NOT_REPLAYED}: step {n + 1}, {done}, {first} the first time and "
                    f"{again} in the replay")
        if required and required != again:
            return (f"{NOT_REPLAYED}: step {n + 1}, {again_done}, {required} the first time "
                    f"(as the contract requires) and {again} in the replay")
    return NOT_REPLAYED


_INSTANT = re.compile(r"\b\d{7,}\b")
"""A number that is an instant of the run's clock (it starts at 1,000,000 ms)."""


def _step(step: TraceStep, prefix: str, began: int) -> tuple[str, str, str]:
    """A step of an example's trace as what was done, what the store answered and what the
    contract required, the example's id prefix written ``x`` and each instant from its start
    on as ``t+ms`` (so that the same steps replayed later read the same)."""
    def since(found: re.Match[str]) -> str:
        at = int(found[0])
        return f"t+{at - began}" if at >= began else found[0]

    def same(text: str) -> str:
        return _INSTANT.sub(since, text.replace(f"{prefix}-", "x-"))

    done = f"[{step.at} ms] {step.actor}: " + (step.op.describe() if step.op else step.note)
    answered = same(str(step.actual)) if step.actual is not None else ""
    required = same(str(step.expected)) if step.expected is not None else ""
    return same(done), answered, required
