"""The linearizability search over one segment of one partition.

The search is Wing & Gong's, made "just in time" by Lowe (as in Porcupine): the events' calls and
returns form one list sorted by time; the candidates to linearize next are the calls before the
first return still in the list (a return there belongs to an event that must come before
everything invoked after it). A candidate the model accepts is lifted out of the list (call and
return) and the search goes on from the top; when the first return is reached, the last choice
is undone (the links are restored, dancing-links style) and the next candidate is tried. A set
of configurations already seen (the linearized events as a bitmask, the model state, the bound
names) prunes every path that reaches one again. The search is a loop with an explicit stack: no
recursion, whatever the number of events.

**Indeterminate events** (:attr:`Event.indeterminate`: no answer, timed out, connection lost)
may take effect at any point after their invocation, with whatever answer the model gives
there, or never: they have no return in the list (nothing has to wait for them) and the search
succeeds once every determinate event is placed. Placing one that leaves the state as it was is
skipped: leaving it out is the same.

The wall clock is not read here: the caller passes ``clock`` (seconds, monotonic) and a
deadline on it, so the model layer stays free of real time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import attrs

from fencepost.spec.opaque import harvest, known
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome, agrees

from ..base import ContractModel, Ctx, OneOf, Step
from ..history import Event
from .bindings import Bindings, BindingsKey, Unbound, has_refs
from .keys import Key, digest, digest_from, same
from .verdict import (
    LINEARIZABLE,
    NOT_LINEARIZABLE,
    UNKNOWN,
    CheckResult,
    Counterexample,
)

_CHECK_CLOCK_EVERY = 64  # search iterations between looks at the clock


@attrs.frozen
class CheckContext:
    """What every step of one check shares: the model and the context it steps in."""

    model: ContractModel
    options: Mapping[str, str]
    capabilities: frozenset[str]
    dead: frozenset[str]


class Partition:
    """One partition's events and how the model answers them under some bindings."""

    def __init__(self, world: CheckContext, events: list[Event],
                 digests: dict[int, tuple[Any, int]]) -> None:
        self.world = world
        order = sorted(range(len(events)), key=lambda k: (events[k].invoked, k))
        self.events = [events[k] for k in order]
        self.determinate = [not e.indeterminate for e in self.events]
        pure = world.model.pure
        self.pure = [bool(d and pure is not None and pure(e.op, e.outcome))
                     for d, e in zip(self.determinate, self.events, strict=True)]
        self.refs = [has_refs(e.op) for e in self.events]
        self.unique = world.model.mint_clause is not None
        self.digests = digests
        # per event: the state and bindings it was last tried in and what that gave (states are
        # immutable, so the same objects give the same answer: reads and refusals in between
        # leave the state object as it was)
        self.last: list[tuple[Any, Any, list[tuple[Any, Bindings]]] | None] = [None] * len(
            self.events)

    def model_op(self, i: int, b: Bindings) -> Op | None:
        if not self.refs[i] and not b.meanings:
            return self.events[i].op
        if i not in b.ops:
            try:
                b.ops[i] = b.to_model(self.events[i].op, self.digests)
            except Unbound:
                b.ops[i] = None
        return b.ops[i]

    def ctx(self, i: int, b: Bindings) -> Ctx:
        at = self.events[i].at
        ctx = b.ctxs.get(at)
        if ctx is None:
            w = self.world
            ctx = Ctx(now=at, dead=w.dead, options=w.options, capabilities=w.capabilities,
                      minted=b.names)
            b.ctxs[at] = ctx
        return ctx

    def answers(self, i: int, state: Any, b: Bindings) -> tuple[Step, ...] | None:
        """The model's allowed steps for event ``i`` now (bound names filled in); None when
        the op names something this order has not bound."""
        op = self.model_op(i, b)
        if op is None:
            return None
        answer: Step | OneOf = self.world.model.step(state, op, self.ctx(i, b))
        steps = answer.options if isinstance(answer, OneOf) else (answer,)
        if b.names:
            steps = tuple(attrs.evolve(s, outcome=known(s.outcome, b.real)) for s in steps)
        return steps

    def successors(self, i: int, state: Any, b: Bindings) -> list[tuple[Any, Bindings]]:
        """The (state, bindings) event ``i`` can lead to from here."""
        last = self.last[i]
        if last is not None and last[0] is state and last[1] is b:
            return last[2]
        out = self._successors(i, state, b)
        self.last[i] = (state, b, out)
        return out

    def _successors(self, i: int, state: Any, b: Bindings) -> list[tuple[Any, Bindings]]:
        steps = self.answers(i, state, b)
        if not steps:
            return []
        event = self.events[i]
        out: list[tuple[Any, Bindings]] = []
        if not self.determinate[i]:
            for s in steps:  # no effect is the same as never taking effect: skipped
                if s.state is not state and (
                        digest_from(s.state, state, self.digests) != digest(state, self.digests)
                        or not same(s.state, state)):
                    out.append((s.state, b))
            return out
        actual = event.outcome
        assert actual is not None
        for s in steps:
            if not agrees(s.outcome, actual):
                continue
            pairs = harvest(getattr(s.outcome, "value", None), getattr(actual, "value", None))
            nb = b.extend(pairs, self.unique, self.digests) if pairs else b
            if nb is not None:
                out.append((s.state, nb))
        return out


_CALL, _RETURN = 0, 1

# A configuration the search can start a segment from: the model state, the bindings, the
# indeterminate events of earlier segments not placed yet (they may still take effect), and the
# trail that led there: None, or (the previous trail, the events it placed in order).
_Trail = tuple[Any, tuple[Event, ...]] | None
Start = tuple[Any, Bindings, tuple[Event, ...], _Trail]
# The memo of configurations: the events placed (a bitmask), the state, the bindings.
SeenStates = set[tuple[int, Key, BindingsKey | None]]
# Where the orders of a segment end: keyed by state, bindings and the unplaced events' ids.
Ends = dict[tuple[Key, BindingsKey | None, tuple[int, ...]], Start]
# The longest path found: the events placed in order, the state and bindings after them, and
# the event that could not be placed next.
_Best = tuple[list[int], Any, Bindings, int]


def unwind(trail: _Trail) -> tuple[Event, ...]:
    """The events a trail placed, in order, over every segment it went through."""
    out: list[tuple[Event, ...]] = []
    while trail is not None:
        trail, placed = trail
        out.append(placed)
    return tuple(e for placed in reversed(out) for e in placed)


class _Search:
    """One search of a segment (``part``) from one configuration: the entry list of calls and
    returns as doubly linked lists, the stack of choices, and the moves that walk them. See
    :func:`search` for what ``seen``, ``ends`` and ``trail`` are."""

    __slots__ = ("part", "seen", "ends", "trail", "kind", "event_of", "ret_of", "nxt", "prv",
                 "state", "b", "linearized", "remaining", "found", "stack", "path", "best",
                 "entry", "scan")

    def __init__(self, part: Partition, state: Any, b: Bindings, seen: SeenStates,
                 ends: Ends | None, trail: _Trail) -> None:
        self.part, self.seen, self.ends, self.trail = part, seen, ends, trail
        self._link_entries()
        self.state, self.b = state, b
        self.linearized = 0  # the events placed, as a bitmask
        self.remaining = sum(part.determinate)  # determinate events not placed yet
        self.found = False  # some order placed every determinate event (collecting ends)
        # frames: (call entry, state, bindings, linearized, successors, next successor, forced)
        self.stack: list[tuple[int, Any, Bindings, int, list[tuple[Any, Bindings]], int,
                               bool]] = []
        self.path: list[int] = []  # the events placed, in order
        self.best: _Best | None = None
        self.entry = self.nxt[0]  # the entry looked at next
        self.scan = True  # a configuration not looked at yet: is a pure call forced here?

    def _link_entries(self) -> None:
        """The entry list: 0 is the head, m - 1 the tail; calls before returns at equal times
        (two events whose times touch count as concurrent)."""
        part = self.part
        raw: list[tuple[int, int, int]] = []
        for i, e in enumerate(part.events):
            raw.append((e.invoked, _CALL, i))
            if part.determinate[i]:
                assert e.completed is not None
                raw.append((e.completed, _RETURN, i))
        raw.sort()
        m = len(raw) + 2
        self.kind = [_RETURN] + [r[1] for r in raw] + [_RETURN]
        self.event_of = [-1] + [r[2] for r in raw] + [-1]
        self.ret_of = [-1] * m  # call entry -> its return entry (-1: none, indeterminate)
        call_at = [0] * len(part.events)
        for j in range(1, m - 1):
            if self.kind[j] == _CALL:
                call_at[self.event_of[j]] = j
        for j in range(1, m - 1):
            if self.kind[j] == _RETURN:
                self.ret_of[call_at[self.event_of[j]]] = j
        self.nxt = list(range(1, m)) + [-1]
        self.prv = [-1] + list(range(0, m - 1))

    def run(self, deadline: float, clock: Callable[[], float]) -> CheckResult:
        """Move until the search has an answer, or ``clock()`` passes ``deadline``
        (unknown). Each move places an event or undoes a choice."""
        kind, event_of, nxt = self.kind, self.event_of, self.nxt
        successors, push = self.part.successors, self._push
        steps = 0
        while True:
            if steps % _CHECK_CLOCK_EVERY == 0 and clock() >= deadline:
                return UNKNOWN
            steps += 1
            if self.remaining == 0:
                answer = self._complete()
            elif self.scan and (move := self._scan()) is not None:
                answer = self._place_forced(*move)
            elif kind[entry := self.entry] == _CALL:
                if not push(entry, successors(event_of[entry], self.state, self.b), 0):
                    self.entry = nxt[entry]
                continue
            else:
                answer = self._blocked()
            if answer is not None:
                return answer

    def _scan(self) -> tuple[int, tuple[Any, Bindings]] | None:
        """Once per configuration: the forced call here, if any (see :meth:`_forced`)."""
        self.scan = False
        return self._forced()

    def _complete(self) -> CheckResult | None:
        """Every determinate event is placed: linearizable, or (collecting ends) note where
        this order ends and look for the next one."""
        ends = self.ends
        if ends is None:
            return LINEARIZABLE
        self.found = True
        evs, det, linearized = self.part.events, self.part.determinate, self.linearized
        unplaced = tuple(evs[i] for i in range(len(evs)) if not det[i]
                         and not linearized >> i & 1)
        ekey = (Key(self.state, self.part.digests), self.b.key, tuple(id(e) for e in unplaced))
        if ekey not in ends:
            ends[ekey] = (self.state, self.b, unplaced,
                          (self.trail, tuple(evs[i] for i in self.path)))
        return None if self._pop() else LINEARIZABLE

    def _place_forced(self, c: int, succ: tuple[Any, Bindings]) -> CheckResult | None:
        """Place the forced call ``c``; if that configuration was seen, everything from here
        was explored already: undo."""
        if not self._push(c, [succ], 0, forced=True) and not self._pop():
            return self._exhausted()
        return None

    def _blocked(self) -> CheckResult | None:
        """The first return left: its event could not be placed before it. Keep the longest
        path for the counterexample, and undo the last choice."""
        entry, path, best = self.entry, self.path, self.best
        assert self.event_of[entry] >= 0, "a determinate event is left, so its return comes first"
        if best is None or len(path) > len(best[0]):
            self.best = (path[:], self.state, self.b, self.event_of[entry])
        return None if self._pop() else self._exhausted()

    def _exhausted(self) -> CheckResult:
        """Every order was tried."""
        return LINEARIZABLE if self.found else NOT_LINEARIZABLE

    def _lift(self, c: int) -> None:
        """Take call entry ``c`` and its return out of the list."""
        nxt, prv = self.nxt, self.prv
        nxt[prv[c]], prv[nxt[c]] = nxt[c], prv[c]
        r = self.ret_of[c]
        if r >= 0:
            nxt[prv[r]], prv[nxt[r]] = nxt[r], prv[r]

    def _unlift(self, c: int) -> None:
        """Put call entry ``c`` and its return back where they were."""
        nxt, prv = self.nxt, self.prv
        r = self.ret_of[c]
        if r >= 0:
            nxt[prv[r]] = r
            prv[nxt[r]] = r
        nxt[prv[c]] = c
        prv[nxt[c]] = c

    def _push(self, c: int, succ: list[tuple[Any, Bindings]], k: int,
              forced: bool = False) -> bool:
        """Take the first successor from ``k`` on that leads somewhere new."""
        i = self.event_of[c]
        bit = self.linearized | (1 << i)
        seen, digests, state = self.seen, self.part.digests, self.state
        for idx in range(k, len(succ)):
            s2, b2 = succ[idx]
            config = (bit, Key(s2, digests, state), b2.key)
            if config in seen:
                continue
            seen.add(config)
            self.stack.append((c, state, self.b, self.linearized, succ, idx + 1, forced))
            self.path.append(i)
            self.state, self.b, self.linearized = s2, b2, bit
            self.remaining -= self.part.determinate[i]
            self._lift(c)
            self.entry = self.nxt[0]
            self.scan = True
            return True
        return False

    def _pop(self) -> bool:
        """Undo the last choice and take the same event's next answer, else move past it; a
        forced placement has no alternative: undo the one before it too."""
        stack, det = self.stack, self.part.determinate
        while stack:
            c, self.state, self.b, self.linearized, succ, k, forced = stack.pop()
            self.remaining += det[self.path.pop()]
            self._unlift(c)
            if forced:
                continue
            self.scan = False
            if not self._push(c, succ, k):  # the same event's other answers first, then the next
                self.entry = self.nxt[c]
            return True
        return False

    def _forced(self) -> tuple[int, tuple[Any, Bindings]] | None:
        """A pure call that fits here and changes nothing (a read, a refusal): placing it now
        loses no order (wherever else it could go it changes nothing either), so the search
        places it without trying the other candidates (a partial-order reduction)."""
        part, kind, event_of, nxt = self.part, self.kind, self.event_of, self.nxt
        state, b, pure = self.state, self.b, part.pure
        j = nxt[0]
        while kind[j] == _CALL:
            i = event_of[j]
            if pure[i]:
                succ = part.successors(i, state, b)
                if len(succ) == 1 and succ[0][1] is b and (
                        succ[0][0] is state or same(succ[0][0], state)):
                    return j, succ[0]
            j = nxt[j]
        return None


def search(part: Partition, state: Any, b: Bindings, deadline: float,
           clock: Callable[[], float], seen: SeenStates, ends: Ends | None,
           trail: _Trail = None) -> tuple[CheckResult, _Best | None]:
    """Search ``part`` from ``state``/``b`` until ``clock()`` reaches ``deadline``. Without
    ``ends``: stop at the first order that places every determinate event (linearizable). With
    ``ends``: visit every such order and record where each ends (its state, bindings, unplaced
    indeterminate events, and ``trail`` extended by its order) in ``ends``; the answer is
    linearizable when one was found. ``seen`` is the memo of configurations (shared by searches
    of one partition from several starts). Also gives the longest path."""
    walk = _Search(part, state, b, seen, ends, trail)
    return walk.run(deadline, clock), walk.best


def counterexample(part: Partition, key: Hashable | None, best: _Best,
                   before: tuple[Event, ...] = ()) -> Counterexample:
    """The counterexample the longest path ``best`` of a failed search shows."""
    path, state, b, blocked = best
    steps = part.answers(blocked, state, b)
    expected: list[Outcome] = []
    for s in steps or ():
        if not any(same(s.outcome, o) for o in expected):
            expected.append(s.outcome)
    return Counterexample(
        partition=key,
        events=tuple(part.events),
        prefix=tuple(part.events[i] for i in path),
        blocked=part.events[blocked],
        expected=tuple(expected),
        before=before,
    )
