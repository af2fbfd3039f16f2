"""Drive a store and its reference model through the same operations and compare every answer.
Over 500 lines: it is one class, :class:`Harness`, that every check drives; its steps (apply,
compare, read back, go on past a field difference) share its state and trace.

The harness is what every check uses: scripted scenarios, the state machines and the races.
After each operation it compares the outcomes, then reads the touched record back from both
(``get``) and compares again; the first difference raises :class:`ClauseViolation` naming the
clause the model says was broken, with the numbered trace so far.

A scripted check goes on past a difference in fields alone (``Harness.go_on``): when store and
model took the same decision (both ok, or the same error code) and differ only in some fields
of the answer, that field's clause fails with the trace so far, the check continues from the
model's state, and later differences in the same fields count as repeats of that failure. A
different decision still stops the check: what follows it would be guesswork.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from fencepost.model.base import (
    Ctx,
    OneOf,
    Step,
    attribute_effect,
    attribute_outcome,
    field_diff,
    leaf_fields,
)
from fencepost.spec.errors import exception_said
from fencepost.spec.opaque import (
    ByIdentity,
    Forged,
    ForgedMeaning,
    ForgedValue,
    Ref,
    Shown,
    harvest,
    known,
    names_opaque,
    resolve,
)
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Crash, Err, Ok, Outcome, agrees, answered

from .evidence import Failure
from .trace import TraceStep
from .world import (
    LOST_EXCEPTIONS,
    AdapterFault,
    ClauseViolation,
    NotRunnable,
    StoreLost,
    World,
    backend_away,
    unavailable,
    violation,
)

READ_BACK = "check"
"""The actor of a read-back's line in a trace (there is one only where it differed)."""
KNOWN_KEPT = 4_096
"""The values a harness remembers filling in (:meth:`Harness._known`) before it starts over."""

__all__ = [
    "AdapterFault", "ClauseViolation", "Harness", "NotRunnable", "StoreLost", "World",
    "blamed_on", "violation",
]


class Harness:
    """One check's view of the world: a fresh model state and the trace of what was done."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.model = world.model
        self.state: Any = world.model.initial
        self.trace: list[TraceStep] = []
        self.touched: set[str] = set()
        # name -> (what the model means by it, the value the store minted)
        self.bindings: dict[str, tuple[Any, Any]] = {}
        # what depends on the bindings alone, kept until they change (see _rebound)
        self._known_memo = ByIdentity(KNOWN_KEPT)
        self._opaque_memo = ByIdentity(KNOWN_KEPT)  # depends on nothing: never emptied
        self._minted_names: dict[str, Any] | None = None
        self._ctx: Ctx | None = None  # see ctx
        # Go on past a difference in fields alone (scripted checks); see the module doc.
        self.go_on = False
        # inside blamed_on: the clause a difference breaks (in these fields only, or any)
        self.blame: tuple[str, frozenset[str] | None] | None = None
        self.masked: dict[str, str] = {}  # field -> the clause its difference failed
        self.repeats: dict[str, int] = {}  # clause -> later differences in its fields
        # (model state, time, dead owners) at the last reopen: see reopen_would_tell
        self.reopened_at: tuple[Any, int, frozenset[str]] | None = None

    def on(self, world: World) -> Harness:
        """A harness on ``world`` (a fork: a store of its own) in the same check: it goes on
        past field differences as this one does, and shares its failed fields and repeats."""
        other = Harness(world)
        other.go_on, other.blame = self.go_on, self.blame
        other.masked, other.repeats = self.masked, self.repeats
        return other

    # -- the world --------------------------------------------------------------------------

    @property
    def now(self) -> int:
        return self.world.clock.now()

    def ctx(self) -> Ctx:
        """The world around a step now; the same object while nothing in it changed (owners
        only ever die, so their count tells a death)."""
        world, minted = self.world, self._minted_now()
        now, deaths = world.clock.now(), len(world.dead)
        made = self._ctx
        if (made is not None and made.now == now and len(made.dead) == deaths
                and made.options is world.options and made.capabilities is world.capabilities
                and made.minted is minted):
            return made
        made = self._ctx = Ctx(now=now, dead=frozenset(world.dead), options=world.options,
                               capabilities=world.capabilities, minted=minted)
        return made

    def _minted_now(self) -> dict[str, Any]:
        """Name -> real value of every identifier minted so far (the same dict until the
        bindings change: the model only reads it)."""
        if self._minted_names is None:
            self._minted_names = {name: value for name, (meaning, value)
                                  in self.bindings.items() if isinstance(meaning, str)}
        return self._minted_names

    def _rebound(self, replaced: bool = True) -> None:
        """The bindings changed: forget what was worked out from them. A new name only
        (``replaced`` False) leaves what was filled in right: :func:`known` keeps no value
        that named a name not minted yet."""
        if replaced:
            self._known_memo.clear()
        self._minted_names = None

    def note(self, actor: str, text: str, event: str = "", subject: str = "") -> None:
        self.trace.append(TraceStep(actor, self.now, note=text, event=event, subject=subject))

    def advance(self, ms: int) -> None:
        self.world.clock.advance(ms)
        self.note("clock", f"advance {ms} ms", "clock")

    def set_time(self, ms: int) -> None:
        self.world.clock.set(ms)
        self.note("clock", f"set to {ms} ms", "clock")

    def kill(self, owner: str) -> None:
        self.world.dead.add(owner)
        self.note("world", f"owner {owner} dies", "kill", owner)

    def reopen_would_tell(self) -> bool:
        """Would a reopen now show anything the last one did not? Not when no op changed the
        model's state, the clock stood still and no owner died since: every record would read
        back as it did then, at the same time. (The first reopen always tells: that the store
        opens again.) The state machines reopen only when it would."""
        last = self.reopened_at
        return (last is None or last[0] is not self.state or last[1] != self.now
                or last[2] != self.world.dead)

    def open_beside(self) -> None:
        """Open another store beside the open one (:meth:`World.open_beside`): the calls go
        to it until :meth:`close_beside`."""
        self.note("world", "another store opened beside the open one (calls go to it)",
                  "open_beside")
        self.world.open_beside()

    def close_beside(self) -> None:
        """Close the store opened beside; the calls go to the first again."""
        self.note("world", "the store opened beside closed (calls go to the first again)",
                  "close_beside")
        self.world.close_beside()

    def reopen(self) -> None:
        """Close and reopen the store; every record touched so far must read back the same
        (after what the model's ``reopen`` says a reopen changes, and the calls it asks for)."""
        self.note("world", "store closed and reopened", "reopen")
        try:
            self.world.reopen()
        except Exception as e:  # noqa: BLE001 - a store that cannot reopen breaks durability
            cause = e.__cause__ if isinstance(e, AdapterFault) and e.__cause__ else e
            if backend_away(cause):  # the backend was away: nothing is shown either way
                raise StoreLost(f"reopening the store: {exception_said(cause)}",
                                tuple(self.trace)) from e
            raise violation(
                self.model.durable_clause,
                f"reopening the store raised {exception_said(cause)}",
                tuple(self.trace),
            ) from e
        if self.model.reopen is not None:
            self.state, voided, again = self.model.reopen(self.state, self.bindings,
                                                          self.world.options)
            for name, meaning in voided.items():
                self.bindings[name] = (meaning, self.bindings[name][1])
            if voided:
                self._rebound()
            for op, name in again:
                self.apply("client", op, bind=name)
        self.reopened_at = (self.state, self.now, frozenset(self.world.dead))
        durable = self.model.durable_clause
        for key in sorted(self.touched):
            self._read_back(key, "after reopening", lambda _e, _a: durable)
        self.exercised(durable)

    # -- operations -------------------------------------------------------------------------

    def expect(self, op: Op) -> Step | OneOf:
        """The model's answer to ``op`` now, without applying it."""
        model_op = self.for_model(op)
        answer: Step | OneOf = self.model.step(self.state, model_op, self.ctx())
        return answer

    def expect_one(self, op: Op) -> Step:
        """The model's answer to a deterministic op (a read)."""
        answer = self.expect(op)
        assert isinstance(answer, Step), f"{op.name} has several allowed answers"
        return answer

    def for_model(self, op: Op) -> Op:
        """``op`` as the model reads it: references replaced by their meanings (nothing is
        copied: the model changes nothing it is given)."""
        resolved: Op = resolve(op, self._model_side, copy=False)
        return resolved

    def _model_side(self, ref: Ref | Forged) -> Any:
        if isinstance(ref, Forged):
            return ForgedMeaning(ref.label)
        return self._bound(ref)[0]

    def _store_side(self, ref: Ref | Forged) -> Any:
        if isinstance(ref, Forged):
            return ForgedValue(ref.label)
        return self._bound(ref)[1]

    def _bound(self, ref: Ref) -> tuple[Any, Any]:
        found = self.bindings.get(ref.name)
        if found is None:
            # The call that mints it was refused, as the model allowed (a capacity option of the
            # run, say): the check cannot go on, and so proves nothing either way.
            options = ", ".join(f"{k}={v}" for k, v in sorted(self.world.options.items()))
            raise NotRunnable(
                f"cannot go on: {ref.name!r} was never minted (a call the check needs was "
                f"refused, as the contract allows under the run's options: {options})",
                tuple(self.trace))
        return found

    def bind(self, name: str, meaning: Any, value: Any) -> None:
        """Bind ``name`` to a value minted outside an op (e.g. by another store)."""
        self._rebound(replaced=name in self.bindings)
        self.bindings[name] = (meaning, value)

    def alias(self, name: str, source: str) -> None:
        """Bind ``name`` to what ``source`` is bound to (one access read back under two
        names): later ops and observations may use either ``Ref``."""
        self._rebound(replaced=name in self.bindings)
        self.bindings[name] = self.bindings[source]

    def real(self, op: Op) -> Op:
        """``op`` as the store receives it: references replaced by the real values."""
        resolved: Op = resolve(op, self._store_side)
        return resolved

    def run(self, store: Any, op: Op) -> Outcome:
        """Call ``op`` on ``store`` with references resolved to the store's real values."""
        return self.world.guard.call(store, resolve(op, self._store_side, copy=False))

    def apply(self, actor: str, op: Op, bind: str | None = None) -> Outcome:
        """Run ``op`` on store and model; raise on the first difference; return the answer.

        With ``bind``, the first opaque value of the answer (an access, a lease) is bound to
        that name for later ops to use as ``Ref(name)``."""
        model_op, ctx = self.for_model(op), self.ctx()
        answer: Step | OneOf = self.model.step(self.state, model_op, ctx)
        actual = self.run(self.world.open(), op)
        step = self._choose(actor, op, answer, actual) if isinstance(answer, OneOf) else answer
        step = self._with_known(step)
        self._record(actor, op, step.outcome, actual, bind or "")
        if not agrees(step.outcome, actual):
            clause = attribute_outcome(self.model, step, actual, op.name, self.real(op))
            message = f"{answered(op.name, actual)}; the contract requires {step.outcome}"
            if not self._went_on(step.outcome, actual, clause, message):
                raise self._stop(clause, message)
        before, self.state = self.state, step.state
        self.bind_minted(step.outcome, actual)
        if bind is not None:
            self._bind_answer(bind, step.outcome, actual)
        # A read the model says changed nothing is not asked again: its own answer, just
        # checked, is that read-back (the others of its record are still read).
        self.check_record(op, step, keys=self._changed(before, step.state),
                          asked=op if step.state is before else None)
        self.exercised(step.clause, step.effect_clause, *step.also)
        if self.model.situations is not None:
            for clause, name in self.model.situations(before, model_op, ctx, step):
                self.world.evidence.reach(clause, name)
        return actual

    def _went_on(self, expected: Outcome, actual: Outcome, clause: str, message: str) -> bool:
        """Under ``go_on``, when ``actual`` took the decision ``expected`` did and differs in
        fields alone: fail ``clause`` for those fields (once; a repeat of masked fields only
        counts) and go on. False when the check must stop here."""
        fields = self._continuable(expected, actual)
        if not fields:
            return False
        new = [f for f in fields if f not in self.masked]
        if not new:
            for owner in {self.masked[f] for f in fields}:
                self.repeats[owner] = self.repeats.get(owner, 0) + 1
            return True
        if len(new) < len(fields):  # the known fields are blamed already: name the new ones'
            narrowed = {self.model.field_clauses.get(f) for f in new}
            if len(narrowed) == 1 and None not in narrowed:
                clause = str(narrowed.pop())
        if self.blame is not None and (self.blame[1] is None or set(new) <= self.blame[1]):
            clause = self.blame[0]
        self.world.evidence.fail(clause, Failure(self.world.check, message, tuple(self.trace)))
        for f in new:
            self.masked[f] = clause
        return True

    def _continuable(self, expected: Outcome, actual: Outcome) -> tuple[str, ...]:
        """The fields ``actual`` differs in, when the check may go on past them (``go_on``,
        the same decision, and every field not failed yet a read-back of its own: the model
        names its clause, or the blamed_on block is about it); else empty. Any other
        difference may be an effect the store got wrong, after which the model's state is no
        guide to the store's."""
        if not self.go_on:
            return ()
        fields = differing_fields(expected, actual)
        blamed = self.blame[1] if self.blame is not None else None
        if any(f not in self.masked and f not in self.model.field_clauses
               and (blamed is None or f not in blamed) for f in fields):
            return ()
        return fields

    def _stop(self, clause: str, message: str) -> ClauseViolation:
        """The violation that stops the check here, naming the clauses it went on past."""
        after = tuple(sorted(set(self.masked.values())))
        return violation(clause, message, tuple(self.trace), after)

    def settle_repeats(self) -> None:
        """Write into each failure this check found how often its difference came back."""
        failures = self.world.evidence.failures
        for clause, n in self.repeats.items():
            failure = failures.get(clause)
            if failure is not None and failure.check == self.world.check:
                failures[clause] = attrs.evolve(
                    failure, repeats=failure.repeats + n,
                    message=f"{failure.message}\n(the same fields differed in {n} later "
                    f"answer{'s' if n > 1 else ''} of this check, which went on from the "
                    "contract's state)")

    def reached(self, clause: str, situation: str) -> None:
        """Count a situation of ``clause`` a check put to the test and saw held (a race's
        variant, a scenario's hardest case); the model names the rest from each step."""
        self.world.evidence.reach(clause, situation)

    def _changed(self, before: Any, after: Any) -> list[str]:
        """The records a step changed beyond its op's own key (the model says which)."""
        return list(self.model.changed(before, after)) if self.model.changed else []

    def _minted(self, name: str) -> Any:
        return self.bindings[name][1]

    def _known(self, outcome: Outcome) -> Outcome:
        """``outcome`` with the identifiers minted so far filled in (nothing to fill in while
        nothing is bound, or in a model's answers that name nothing minted: the walk is
        skipped)."""
        if not self.bindings or not self.model.names_minted:
            return outcome
        filled: Outcome = known(outcome, self._minted, self._known_memo)
        return filled

    def _with_known(self, step: Step) -> Step:
        outcome = self._known(step.outcome)
        return step if outcome is step.outcome else attrs.evolve(step, outcome=outcome)

    def bind_minted(self, expected: Outcome, actual: Outcome) -> None:
        """Bind every value the store minted in this answer (or read-back) under the model's
        name for it (``Ref("task#1")`` then means that real id, and a normalized outcome must
        read back the same); one real id for two names breaks the model's ``mint_clause``."""
        value = getattr(expected, "value", None)
        if not self.model.names_minted or not names_opaque(value, self._opaque_memo):
            return
        pairs = harvest(value, getattr(actual, "value", None))
        unique = self.model.mint_clause
        for meaning, value in pairs:
            if not isinstance(meaning, str) or meaning in self.bindings:
                continue
            if value is None or isinstance(value, ForgedValue):  # a field that differed
                continue
            twin = None if unique is None or isinstance(meaning, Shown) else next(
                (n for n, (_, v) in self.bindings.items() if v == value), None)
            if unique is not None and twin is not None:
                raise violation(
                    unique,
                    f"the store minted {value!r} for {meaning} and for {twin} before",
                    tuple(self.trace),
                )
            self.bindings[meaning] = (meaning, value)
            self._rebound(replaced=False)  # a new name (see above)
            if unique is not None:
                self.exercised(unique)

    def pick(self, choice: OneOf, actual: Outcome) -> Step | None:
        """The option the store's answer matches (identifiers already bound must come back
        unchanged); when several answer alike but leave different states (which tasks a
        bounded scan took), the store's records decide."""
        options = tuple(self._with_known(o)
                        for o in choice.options)
        matching = [o for o in options if agrees(o.outcome, actual)]
        if len(matching) > 1:
            return next((o for o in matching if self._store_shows(o.state)), matching[0])
        return matching[0] if matching else None

    def _choose(self, actor: str, op: Op, choice: OneOf, actual: Outcome) -> Step:
        """The option the answer matches; else a violation of the rule the closest option
        says is broken (the store chose a tied task but got its deadline wrong: the deadline
        rule), or of the choice's own clause when no option is close."""
        picked = self.pick(choice, actual)
        if picked is None:
            options = [self._with_known(o)
                       for o in choice.options]
            closest = min(options, key=lambda o: _distance(o.outcome, actual))
            if _distance(closest, actual) < _FAR and self._continuable(closest.outcome, actual):
                return closest  # apply fails the fields' clause and goes on
            clause = choice.clause
            if _distance(closest, actual) < _FAR:
                clause = attribute_outcome(self.model, closest, actual, op.name, self.real(op))
            self._record(actor, op, closest.outcome, actual)
            message = f"{answered(op.name, actual)}; the contract allows {choice.description}"
            raise self._stop(clause, message)
        return picked

    def _store_shows(self, state: Any, keys: Iterable[str] = ()) -> bool:
        """Does every record ``state`` changed (and every one of ``keys``) read back from the
        store as in ``state``?"""
        for key in dict.fromkeys([*self._changed(self.state, state), *keys]):
            for observe in self._observations(key, state):
                expected = self.model.step(state, self.for_model(observe), self.ctx())
                assert isinstance(expected, Step), "a read has one answer"
                if not agrees(self._known(expected.outcome),
                              self.run(self.world.open(), observe)):
                    return False
        return True

    def _observations(self, key: str, state: Any) -> tuple[Op, ...]:
        found = self.model.observe(key, self.bindings, state)
        if found is None:
            return ()
        return tuple(found) if isinstance(found, tuple | list) else (found,)

    def _bind_answer(self, name: str, expected: Outcome, actual: Outcome) -> None:
        pairs = harvest(getattr(expected, "value", None), getattr(actual, "value", None))
        if pairs:
            self._rebound(replaced=name in self.bindings)
            self.bindings[name] = pairs[0]

    def exercised(self, *clauses: str) -> None:
        """Count evidence: these clauses were put to the test and held."""
        self.world.evidence.exercise(clauses)

    def linearize(self, actor: str, op: Op, actual: Outcome) -> Step:
        """Accept an answer the store gave concurrently: check it against the model as if the
        op had run alone now, then adopt the model's next state."""
        answer = self.expect(op)
        step = (self.pick(answer, actual) or answer.options[0]) if isinstance(
            answer, OneOf) else answer
        step = self._with_known(step)
        self._record(actor, op, step.outcome, actual)
        self.state = step.state
        if agrees(step.outcome, actual):
            self.bind_minted(step.outcome, actual)
        return step

    def check_record(self, op: Op, last: Step, clause: str | None = None,
                     keys: Iterable[str] = (), asked: Op | None = None) -> None:
        """Read the records ``op`` touched (its key, and ``keys`` the step changed) back from
        store and model; a difference fails the clause governing ``last``'s effect (for a
        refused op: that nothing changed). ``asked``: a read just answered and checked, in a
        state it left as it was, that is not made again (the same call, at the same time, on
        the same records)."""
        own = op.key()
        for key in dict.fromkeys([*([own] if own is not None else []), *keys]):
            agreed = self._read_back(
                key,
                f"after {op.name}",
                lambda e, a: clause or attribute_effect(self.model, last, e, a),
                asked,
            )
            if last.outcome.code == "ok":
                fields = leaf_fields(getattr(last.outcome, "value", None))
                for expected in agreed:
                    if isinstance(expected, Ok):
                        fields |= leaf_fields(expected.value)
                self.exercised(*(c for f, c in self.model.field_clauses.items() if f in fields))

    def _read_back(
        self, key: str, context: str, clause: Callable[[Outcome, Outcome], str],
        asked: Op | None = None,
    ) -> list[Outcome]:
        """Observe ``key`` on store and model (but for ``asked``); on a difference raise a
        violation of ``clause(expected, actual)`` (or of the clause the model names from the
        difference). Returns the agreed outcomes (none: not observable)."""
        agreed: list[Outcome] = []
        for observe in self._observations(key, self.state):
            if observe == asked:
                continue
            expected: Outcome = self._known(self.expect_one(observe).outcome)
            actual = self.run(self.world.open(), observe)
            if not agrees(expected, actual):
                self._record(READ_BACK, observe, expected, actual)
                named = (self.model.answer_clause(self.real(observe), "", expected, actual)
                         if self.model.answer_clause else None)
                blamed = named or clause(expected, actual)
                message = (f"{context}, {answered(observe.name, actual)}; the contract "
                           f"requires {expected}")
                if not self._went_on(expected, actual, blamed, message):
                    raise self._stop(blamed, message)
                self.bind_minted(expected, actual)
                continue
            self.bind_minted(expected, actual)
            agreed.append(expected)
        return agreed

    def _record(
        self, actor: str, op: Op, expected: Outcome, actual: Outcome, bind: str = ""
    ) -> None:
        blame = self.blame
        self.trace.append(TraceStep(
            actor, self.now, op, "", expected, actual, bind=bind,
            blamed_on=blame[0] if blame is not None else "",
            blamed_fields=(tuple(sorted(blame[1])) if blame is not None and blame[1] is not None
                           else None)))
        self.world.evidence.steps += 1
        key = op.key()
        if key is not None:
            self.touched.add(key)
        if isinstance(actual, Err) and actual.code == "backend_unavailable" or (
            isinstance(actual, Crash) and actual.kind in LOST_EXCEPTIONS
        ):
            raise StoreLost(unavailable(op.name, actual), tuple(self.trace))


@contextmanager
def blamed_on(h: Harness, clause: str, fields: Iterable[str] | None = None) -> Iterator[None]:
    """Report any difference inside the block as a violation of ``clause`` (after a reap or a
    reopen, what differs is what did not survive, or survived when it must not); a block that
    passes is evidence for ``clause``. With ``fields``, a check that goes on past differences
    in fields alone blames ``clause`` only for differences in those fields (a block about
    stored values does not take the blame for a wrong owner)."""
    outer, h.blame = h.blame, (clause, None if fields is None else frozenset(fields))
    try:
        yield
    except ClauseViolation as v:
        if v.clause == clause:
            raise
        raise violation(clause, v.message, v.trace, v.after) from v
    finally:
        h.blame = outer
    h.exercised(clause)


_FAR = 1 << 30


def _distance(expected: Any, actual: Any) -> int:
    """How many innermost fields two answers differ in (``_FAR``: not comparable), with
    identifiers the store minted counted as differing only when already bound."""
    expected = getattr(expected, "outcome", expected)
    if not (isinstance(expected, Ok) and isinstance(actual, Ok)):
        return _FAR
    return _leaf_distance(expected.value, actual.value)


def _leaf_distance(expected: Any, actual: Any) -> int:
    if attrs.has(type(expected)):
        if type(expected) is not type(actual):
            return _FAR
        return sum(_leaf_distance(getattr(expected, f.name), getattr(actual, f.name))
                   for f in attrs.fields(type(expected)))
    return 0 if agrees(Ok(expected), Ok(actual)) else 1


def differing_fields(expected: Outcome, actual: Outcome) -> tuple[str, ...]:
    """The fields in which ``actual`` differs from ``expected`` when both took the same
    decision (both ok, or the same error code) and their values are of one attrs class; empty
    when the decision differs or the values cannot be told apart field by field."""
    if isinstance(expected, Ok) and isinstance(actual, Ok):
        left, right = expected.value, actual.value
    elif isinstance(expected, Err) and isinstance(actual, Err) and expected.code == actual.code:
        left, right = expected.payload, actual.payload
    else:
        return ()
    if not attrs.has(type(left)) or type(left) is not type(right):
        return ()
    return field_diff(left, right)  # of one attrs class: names its fields, never "<value>"
