"""Record what a state machine asks of its harnesses, and do it again three ways.

``fencepost bench`` compares one operation sequence run through the model alone, through the
kit (a :class:`Harness`: recording and checking on) and as plain calls on a fresh store. A
:class:`TapeHarness` is a harness that also writes down, per example, every operation and world
event the state machine asks of it and what the model made of each operation;
:func:`tape_machine` runs a contract's state machine with one per example. A :class:`Tape` then
replays through :func:`replay_model`, :func:`replay_kit` or :func:`replay_direct`.

Example::

    run, tapes = tape_machine(suite.machine_for, world, examples=20, steps=30, seed=1)
    steps = sum(replay_model(suite.model, tape) for tape in tapes)

A replay on a fresh store starts its clock where the example started (ops carry times), and a
value the store mints is found the way the harness finds it: at the ``Opaque`` places of the
model's answer (so a ``Ref`` in a later op means the fresh store's value).
"""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.model.base import ContractModel, Ctx, Step
from fencepost.scenarios.harness import Harness, World
from fencepost.scenarios.machine import MachineRun, run_machine
from fencepost.spec.errors import ContractError
from fencepost.spec.opaque import Forged, ForgedValue, Ref, harvest, resolve
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome


@attrs.frozen
class Applied:
    """One ``apply``: the op as the check wrote it (``Ref``/``Forged`` for minted values), the
    op as the model read it, the step's context, the model's answer as checked (``Opaque``
    where the store minted something new) and the model state afterwards (for a choice among
    several answers, the one the store's answer picked)."""

    actor: str
    op: Op
    bind: str | None
    model_op: Op
    ctx: Ctx
    answer: Outcome
    state: Any
    refs: bool  # the op holds a Ref or Forged to resolve against the store's values
    mints: bool  # the answer binds names (new minted ids, or ``bind``)


@attrs.frozen
class Clock:
    """The clock moved: ``advance`` by ``ms``, or ``set`` to ``ms``."""

    kind: str
    ms: int


@attrs.frozen
class Killed:
    """An owner died."""

    owner: str


@attrs.frozen
class Reopened:
    """The store was closed and reopened."""


@attrs.frozen
class Aliased:
    """``name`` was bound to what ``source`` is bound to (:meth:`Harness.alias`)."""

    name: str
    source: str


Entry = Applied | Clock | Killed | Reopened | Aliased


@attrs.frozen
class Tape:
    """What one example did, in order, from simulated time ``start``."""

    start: int
    entries: tuple[Entry, ...]

    @property
    def steps(self) -> int:
        """The operations applied (what ``Evidence.steps`` counts for them)."""
        return sum(1 for e in self.entries if isinstance(e, Applied))


def _holds_refs(op: Op) -> bool:
    found: list[Any] = []

    def note(ref: Any) -> Any:
        found.append(ref)
        return ref

    resolve(op, note)
    return bool(found)


class TapeHarness(Harness):
    """A :class:`Harness` that writes down what it is asked to do (see :meth:`tape`)."""

    def __init__(self, world: World) -> None:
        super().__init__(world)
        self.start = world.clock.now()
        self.entries: list[Entry] = []

    def tape(self) -> Tape:
        """Everything done so far."""
        return Tape(self.start, tuple(self.entries))

    def apply(self, actor: str, op: Op, bind: str | None = None) -> Outcome:
        """As :meth:`Harness.apply`; writes down the op, what the model read and answered."""
        model_op, ctx = self.for_model(op), self.ctx()
        actual = super().apply(actor, op, bind)
        checked = self.trace[-1]
        assert checked.op is op and checked.expected is not None
        value = getattr(checked.expected, "value", None)
        mints = bind is not None or any(isinstance(m, str) for m, _ in harvest(value, value))
        self.entries.append(Applied(actor, op, bind, model_op, ctx, checked.expected,
                                    self.state, _holds_refs(op), mints))
        return actual

    def advance(self, ms: int) -> None:
        """As :meth:`Harness.advance`, written down."""
        super().advance(ms)
        self.entries.append(Clock("advance", ms))

    def set_time(self, ms: int) -> None:
        """As :meth:`Harness.set_time`, written down."""
        super().set_time(ms)
        self.entries.append(Clock("set", ms))

    def kill(self, owner: str) -> None:
        """As :meth:`Harness.kill`, written down."""
        super().kill(owner)
        self.entries.append(Killed(owner))

    def reopen(self) -> None:
        """As :meth:`Harness.reopen`, written down."""
        super().reopen()
        self.entries.append(Reopened())

    def alias(self, name: str, source: str) -> None:
        """As :meth:`Harness.alias`, written down."""
        super().alias(name, source)
        self.entries.append(Aliased(name, source))

    def bind(self, name: str, meaning: Any, value: Any) -> None:
        """Refused: a fresh store could not be given the same value."""
        raise NotImplementedError(
            "a value bound from outside the store cannot be replayed on a fresh store; "
            "use Harness.alias for a second name of a value this store minted"
        )


def tape_machine(
    machine_for: Any, world: World, *, examples: int, steps: int, seed: int
) -> tuple[MachineRun, list[Tape]]:
    """Run the state machine ``machine_for(world)`` (as :func:`run_machine` does) with a
    :class:`TapeHarness` per example; return the run and one tape per example."""
    harnesses: list[TapeHarness] = []
    machine = machine_for(world)

    def __init__(self: Any) -> None:
        machine.__init__(self)
        self.h = TapeHarness(self.own)
        harnesses.append(self.h)

    taped = type(machine.__name__, (machine,), {"__init__": __init__})
    run = run_machine(taped, examples=examples, steps=steps, seed=seed)
    return run, [h.tape() for h in harnesses]


def replay_model(model: ContractModel, tape: Tape) -> int:
    """Step ``model`` alone through the tape's operations (no store, no checks): where the
    model allows several answers it follows the store's recorded pick. Returns the steps."""
    state = model.initial
    steps = 0
    for entry in tape.entries:
        if isinstance(entry, Applied):
            answer = model.step(state, entry.model_op, entry.ctx)
            state = answer.state if isinstance(answer, Step) else entry.state
            steps += 1
    return steps


def replay_kit(world: World, tape: Tape, harness: type[Harness] = Harness) -> Harness:
    """Do what the tape did through a fresh ``harness`` on ``world`` (its store opened,
    its clock at ``tape.start``): every answer and record is checked as in the run. Raises
    :class:`~fencepost.scenarios.harness.ClauseViolation` on a difference."""
    h = harness(world)
    for entry in tape.entries:
        if isinstance(entry, Applied):
            h.apply(entry.actor, entry.op, entry.bind)
        elif isinstance(entry, Clock) and entry.kind == "advance":
            h.advance(entry.ms)
        elif isinstance(entry, Clock):
            h.set_time(entry.ms)
        elif isinstance(entry, Killed):
            h.kill(entry.owner)
        elif isinstance(entry, Reopened):
            h.reopen()
        else:
            h.alias(entry.name, entry.source)
    return h


def replay_direct(world: World, tape: Tape) -> int:
    """Call the tape's operations straight on ``world``'s store (opened, clock at
    ``tape.start``): no model, no trace, no read-backs; a refusal is just caught. Minted
    values are picked out of each answer for later ops. Returns the calls made."""
    values: dict[str, Any] = {}

    def real(ref: Ref | Forged) -> Any:
        return ForgedValue(ref.label) if isinstance(ref, Forged) else values[ref.name]

    store = world.open()
    calls = 0
    for entry in tape.entries:
        if isinstance(entry, Applied):
            op = resolve(entry.op, real) if entry.refs else entry.op
            calls += 1
            try:
                result = op.invoke(store)
            except ContractError:
                continue
            if entry.mints:
                pairs = harvest(getattr(entry.answer, "value", None), result)
                for meaning, value in pairs:
                    if isinstance(meaning, str):
                        values.setdefault(meaning, value)
                if entry.bind is not None and pairs:
                    values[entry.bind] = pairs[0][1]
        elif isinstance(entry, Clock) and entry.kind == "advance":
            world.clock.advance(entry.ms)
        elif isinstance(entry, Clock):
            world.clock.set(entry.ms)
        elif isinstance(entry, Killed):
            world.dead.add(entry.owner)
        elif isinstance(entry, Reopened):
            store = world.reopen()
        else:
            values[entry.name] = values[entry.source]
    return calls
