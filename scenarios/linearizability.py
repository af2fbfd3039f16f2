"""Is a concurrent history linearizable against a contract's reference model?

:func:`check_history` searches for an order of the history's events that (1) respects real time
(an event that returned before another was invoked comes first), (2) gives every event the
answer the store gave, when the model steps the events in that order from its initial state.

The search is Wing & Gong's, made "just in time" by Lowe (as in Porcupine): the events' calls and
returns form one list sorted by time; the candidates to linearize next are the calls before the
first return still in the list (a return there belongs to an event that must come before
everything invoked after it). A candidate the model accepts is lifted out of the list (call and
return) and the search goes on from the top; when the first return is reached, the last choice
is undone (the links are restored, dancing-links style) and the next candidate is tried. A set
of configurations already seen (the linearized events as a bitmask, the model state, the bound
names) prunes every path that reaches one again. The search is a loop with an explicit stack: no
recursion, whatever the number of events.

**Partitions** (P-compositionality): linearizability is local, so when every op touches one
record the history splits by record and each part is checked on its own, from the model's
initial state, with its own time budget. ``partition(op)`` gives the part (default
``op.key()``: the invocation or task id). An op whose key is None touches more than one record
(a ``claim_next``, a submission that mints an id, a recovery scan): then the whole history is
one partition, ``key`` None ("global"). A custom ``partition`` must only split a history where
the contract's records are independent: adk-ledger by invocation id is; ledgence-tasks is not
(ids are minted from one counter).

**Indeterminate events** (:attr:`Event.indeterminate`: no answer, timed out, connection lost)
may take effect at any point after their invocation, with whatever answer the model gives
there, or never: they have no return in the list (nothing has to wait for them) and the search
succeeds once every determinate event is placed. Placing one that leaves the state as it was is
skipped: leaving it out is the same.

**Minted names.** The models answer ``Opaque("task#1")`` where a store mints an id; the checker
binds each name to the real value the first time an answer shows it, exactly like the harness
(``harvest`` on the agreeing answer, str meanings only; ``known`` puts bound values back into
the model's later answers; ``Ctx.minted`` gives them to the model). The bindings are part of the
search state (each order binds its own). A candidate is rejected when its answer would bind a
name to a second value, or (when the contract has a ``mint_clause``, as the harness checks) one
value to a second name.

The history holds ops **as the store received them**, with real ids, while the model knows only
its names. So before an op is stepped, every value in it that equals a bound real value (same
type, same value) is replaced by the model's meaning for it: the reverse map ``real value ->
meaning``, built from the same harvests (for non-str meanings, such as snodo's leases, the last
harvest of a real value wins). Numbers are never translated (a lease of 5 ms is not the id 5):
a store that mints numbers needs its ops recorded with ``Ref`` to those ids. A
:class:`~fencepost.spec.opaque.Ref` left in a recorded op is resolved to its name (an unbound
name: not placeable in that order), a ``Forged`` or ``ForgedValue`` to a
:class:`~fencepost.spec.opaque.ForgedMeaning`.

**State keys.** Model states are immutable values but often unhashable (the ledger is a dict,
records hold dicts). The configuration set keys a state by a 64-bit structural digest (cached per
attrs instance and mapping, so records shared between states are digested once) that tells 1,
1.0 and True apart (as :func:`agrees` does): dicts by items, attrs instances by their ``eq``
fields, other unhashable values by ``repr``. On a digest match the states' own ``==`` decides
(so two states the model holds equal but that differ only in such types would also need equal
64-bit digests to be confused).

**Budget.** Each partition gets ``budget_s`` seconds of search; a partition whose search runs
out is ``unknown``, and a history with an unknown partition (and none proven non-linearizable)
is ``unknown``: never linearizable.
"""

from __future__ import annotations

import itertools
import operator
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from fencepost.model.base import ContractModel, Ctx, OneOf, Step, options_with_defaults
from fencepost.spec.opaque import Forged, ForgedMeaning, ForgedValue, Ref, harvest, known
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome, agrees

from .history import Event, History

LINEARIZABLE = "linearizable"
NOT_LINEARIZABLE = "not_linearizable"
UNKNOWN = "unknown"

DEFAULT_BUDGET_S = 10.0
_CHECK_CLOCK_EVERY = 64  # search iterations between looks at the clock


# --- results -----------------------------------------------------------------------------------


@attrs.frozen
class Counterexample:
    """Why one partition is not linearizable.

    ``events`` are the partition's events in invocation order; ``prefix`` the longest sequence
    of them the search could linearize (in that order); ``blocked`` the event that had to come
    next (the first to return among those left) and could not be placed after ``prefix``;
    ``expected`` the model's allowed answers for it there (bound names shown as real values),
    empty when the model could not even read its op (a reference to an id not minted yet).
    ``before`` is an order of the partition's earlier events (its earlier segments, see
    :func:`segments`) that linearizes and ends where the search of ``events`` started; then
    ``events`` is the one segment that cannot go on from there.
    """

    partition: Hashable | None
    events: tuple[Event, ...]
    prefix: tuple[Event, ...]
    blocked: Event
    expected: tuple[Outcome, ...]
    before: tuple[Event, ...] = ()

    def by_process(self) -> dict[str, tuple[Event, ...]]:
        """The partition's events as intervals per process (processes by first invocation)."""
        out: dict[str, list[Event]] = {}
        for event in self.events:
            out.setdefault(event.process, []).append(event)
        return {p: tuple(sorted(es, key=lambda e: e.invoked)) for p, es in out.items()}

    def render(self) -> str:
        return render_counterexample(self)


@attrs.frozen
class PartitionResult:
    """The verdict on one partition: ``result`` is ``linearizable``, ``not_linearizable`` or
    ``unknown`` (its budget ran out); ``explored`` counts the configurations the search
    visited."""

    key: Hashable | None
    result: str
    events: int
    elapsed_s: float
    explored: int
    counterexample: Counterexample | None = None


@attrs.frozen
class Verdict:
    """The verdict on a history: ``not_linearizable`` if any partition is, else ``unknown`` if
    any partition's budget ran out, else ``linearizable``. ``counterexample`` is the smallest
    non-linearizable partition's."""

    result: str
    partitions: tuple[PartitionResult, ...]
    elapsed_s: float

    @property
    def linearizable(self) -> bool:
        return self.result == LINEARIZABLE

    @property
    def failed(self) -> tuple[PartitionResult, ...]:
        return tuple(p for p in self.partitions if p.result == NOT_LINEARIZABLE)

    @property
    def unknown(self) -> tuple[PartitionResult, ...]:
        return tuple(p for p in self.partitions if p.result == UNKNOWN)

    @property
    def counterexample(self) -> Counterexample | None:
        failed = [p for p in self.failed if p.counterexample is not None]
        if not failed:
            return None
        return min(failed, key=lambda p: p.events).counterexample

    def summary(self) -> str:
        events = sum(p.events for p in self.partitions)
        line = (f"{self.result}: {events} events in {len(self.partitions)} partition(s), "
                f"checked in {self.elapsed_s:.3f} s")
        if self.failed:
            line += f"; {len(self.failed)} not linearizable"
        if self.unknown:
            line += f"; {len(self.unknown)} unknown (budget exhausted)"
        return line


# --- the check ---------------------------------------------------------------------------------


def default_partition(op: Op) -> Hashable | None:
    """The record ``op`` touches (``op.key()``); None: more than one (the whole history)."""
    return op.key()


def partitions(history: History | Sequence[Event],
               partition: Callable[[Op], Hashable | None] | None = None
               ) -> dict[Hashable | None, list[Event]]:
    """The history split by ``partition(op)`` (in order of first appearance); one partition
    keyed None when any op's key is None."""
    events = history.events if isinstance(history, History) else tuple(history)
    key_of = partition or default_partition
    parts: dict[Hashable | None, list[Event]] = {}
    for event in events:
        key = key_of(event.op)
        if key is None:
            return {None: list(events)}
        parts.setdefault(key, []).append(event)
    return parts


def check_history(
    model: ContractModel,
    history: History | Sequence[Event],
    partition: Callable[[Op], Hashable | None] | None = None,
    budget_s: float = DEFAULT_BUDGET_S,
    *,
    options: Mapping[str, str] | None = None,
    capabilities: Iterable[str] = (),
    dead: Iterable[str] = (),
) -> Verdict:
    """Check ``history`` against ``model`` partition by partition (see the module doc).

    ``options`` are the contract's choices (defaults filled in), ``capabilities`` and ``dead``
    go into every step's :class:`Ctx`. ``budget_s`` is the search time allowed per partition.
    """
    if isinstance(history, History) and history.contract != model.name:
        raise ValueError(f"a {history.contract} history cannot be checked against the "
                         f"{model.name} model")
    started = time.perf_counter()
    world = _World(
        model=model,
        options=options_with_defaults(model.choices, dict(options or {}), model.settings),
        capabilities=frozenset(capabilities),
        dead=frozenset(dead),
    )
    results = [
        _check_partition(world, key, events, budget_s)
        for key, events in partitions(history, partition).items()
    ]
    if any(r.result == NOT_LINEARIZABLE for r in results):
        verdict = NOT_LINEARIZABLE
    elif any(r.result == UNKNOWN for r in results):
        verdict = UNKNOWN
    else:
        verdict = LINEARIZABLE
    return Verdict(verdict, tuple(results), time.perf_counter() - started)


@attrs.frozen
class _World:
    model: ContractModel
    options: Mapping[str, str]
    capabilities: frozenset[str]
    dead: frozenset[str]


# --- exact structural keys for states and values -----------------------------------------------

_MISSING = object()


class _Key:
    """A value as a hashable, exactly compared key (see the module doc, "State keys")."""

    __slots__ = ("value", "h")

    def __init__(self, value: Any, digests: dict[int, tuple[Any, int]],
                 parent: Any = _MISSING) -> None:
        self.value = value
        self.h = _digest(value, digests) if parent is _MISSING else _digest_from(
            value, parent, digests)

    def __hash__(self) -> int:
        return self.h

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Key) or self.h != other.h:
            return False
        if self.value is other.value:
            return True
        # The digests already tell 1, 1.0 and True apart, so the values' own == (fast, in C
        # for dicts and attrs) decides; _same when == cannot.
        try:
            equal = self.value == other.value
        except Exception:  # noqa: BLE001 - a value whose == raises: compare structurally
            return _same(self.value, other.value)
        return equal if isinstance(equal, bool) else _same(self.value, other.value)


_ATTRS, _MAPPING, _SEQUENCE, _SET, _OTHER = range(5)
_KINDS: dict[type, tuple[int, tuple[str, ...]]] = {}


def _kind(cls: type) -> tuple[int, tuple[str, ...]]:
    """How to take ``cls`` apart (and, for attrs classes, the fields equality looks at)."""
    found = _KINDS.get(cls)
    if found is None:
        if attrs.has(cls):
            found = (_ATTRS, tuple(f.name for f in attrs.fields(cls) if f.eq))
        elif issubclass(cls, Mapping):
            found = (_MAPPING, ())
        elif issubclass(cls, tuple | list):
            found = (_SEQUENCE, ())
        elif issubclass(cls, set | frozenset):
            found = (_SET, ())
        else:
            found = (_OTHER, ())
        _KINDS[cls] = found
    return found


def _digest(value: Any, digests: dict[int, tuple[Any, int]]) -> int:
    """A structural hash that tells 1, 1.0 and True apart. Attrs instances and mappings are
    cached by id (the cache holds them, so an id is not reused while cached): a record shared
    by many states is digested once, a state met again costs a lookup."""
    cls = type(value)
    if cls is str or cls is int or value is None:
        return hash(value)
    if cls is bool:
        return hash(("bool", value))
    if cls is float:
        return hash(("float", repr(value)))
    if cls is _Key:
        return int(value.h)
    kind, fields = _kind(cls)
    if kind == _ATTRS or kind == _MAPPING:
        cached = digests.get(id(value))
        if cached is not None and cached[0] is value:
            return int(cached[1])
    if kind == _ATTRS:
        h = hash((cls, *(_digest(getattr(value, n), digests) for n in fields)))
    elif kind == _MAPPING:
        total = hash(cls)
        get = digests.get
        for k, v in value.items():
            kh = hash(k) if type(k) is str else _digest(k, digests)
            cached = get(id(v))
            vh = cached[1] if cached is not None and cached[0] is v else _digest(v, digests)
            total += hash((kh, vh))
        extra = getattr(value, "__dict__", None)  # a dict subclass with attributes of its own
        if extra:
            total += _digest(dict(extra), digests)
        h = total & 0xFFFF_FFFF_FFFF_FFFF
    elif kind == _SEQUENCE:
        return hash((cls, *(_digest(v, digests) for v in value)))
    elif kind == _SET:
        return hash((cls, sum(_digest(v, digests) for v in value) & 0xFFFF_FFFF_FFFF_FFFF))
    else:
        try:
            return hash((cls, value))
        except TypeError:
            return hash((cls, repr(value)))
    digests[id(value)] = (value, h)
    return h


def _item(k: Any, v: Any, digests: dict[int, tuple[Any, int]]) -> int:
    return hash((hash(k) if type(k) is str else _digest(k, digests), _digest(v, digests)))


def _digest_from(value: Any, parent: Any, digests: dict[int, tuple[Any, int]]) -> int:
    """:func:`_digest` of ``value``, a step's new state, from its ``parent`` (the state before,
    already digested): a mapping with the parent's keys in the parent's order is updated by the
    items whose values are not the parent's objects (found at C speed), not re-hashed whole;
    attrs instances go field by field. Anything else is digested afresh."""
    if value is parent:
        return _digest(value, digests)
    cls = type(value)
    if cls is not type(parent):
        return _digest(value, digests)
    cached = digests.get(id(value))
    if cached is not None and cached[0] is value:
        return int(cached[1])
    kind, fields = _kind(cls)
    if kind == _ATTRS:
        h = hash((cls, *(_digest_from(getattr(value, n), getattr(parent, n), digests)
                         for n in fields)))
    elif kind == _MAPPING:
        before = digests.get(id(parent))
        if (before is None or before[0] is not parent
                or getattr(value, "__dict__", None) or getattr(parent, "__dict__", None)):
            return _digest(value, digests)
        total = int(before[1])
        if len(value) >= len(parent) and all(map(operator.eq, value, parent)):
            # the parent's keys in order (map stops at the shorter), maybe some added after
            for k in itertools.compress(value, map(operator.is_not, value.values(),
                                                    parent.values())):
                total += _item(k, value[k], digests) - _item(k, parent[k], digests)
            for k in itertools.islice(value, len(parent), None):
                total += _item(k, value[k], digests)
        else:  # keys removed or reordered: compare item by item
            for k in parent.keys() - value.keys():
                total -= _item(k, parent[k], digests)
            for k, v in value.items():
                w = parent.get(k, _MISSING)
                if w is not v:
                    total += _item(k, v, digests)
                    if w is not _MISSING:
                        total -= _item(k, w, digests)
        h = total & 0xFFFF_FFFF_FFFF_FFFF
    else:
        return _digest(value, digests)
    digests[id(value)] = (value, h)
    return h


def _same(a: Any, b: Any) -> bool:
    """Exact structural equality: types must match all the way down."""
    if a is b:
        return True
    cls = type(a)
    if cls is not type(b):
        return False
    if cls is float:
        return repr(a) == repr(b)
    if cls is str or cls is int or cls is bool:
        return bool(a == b)
    kind, fields = _kind(cls)
    if kind == _ATTRS:
        return all(_same(getattr(a, n), getattr(b, n)) for n in fields)
    if kind == _MAPPING:
        if len(a) != len(b) or not _same(getattr(a, "__dict__", None),
                                         getattr(b, "__dict__", None)):
            return False
        # keys by ==, as the dict finds them (a digest match already told 1, 1.0 and True
        # apart in all but freak cases)
        for k, v in a.items():
            w = b.get(k, _MISSING)
            if v is not w and (w is _MISSING or not _same(v, w)):
                return False
        return True
    if kind == _SEQUENCE:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if kind == _SET:
        return len(a) == len(b) and all(any(_same(x, y) for y in b) for x in a)
    try:
        hash(a)
    except TypeError:
        return repr(a) == repr(b)
    return bool(a == b)


# --- bindings of minted names ------------------------------------------------------------------


_MASK = (1 << 64) - 1


def _name_item(name: str, value: Any, digests: dict[int, tuple[Any, int]]) -> int:
    return hash((0, name, _digest(value, digests)))


def _meaning_item(vkey: _Key, meaning: Any, digests: dict[int, tuple[Any, int]]) -> int:
    return hash((1, vkey.h, _digest(meaning, digests)))


class _BKey:
    """Bindings as a configuration key: the hash is kept up to date as names are bound (a sum
    over the items, so binding one more costs one item, not the whole map); equal keys have
    exactly equal maps."""

    __slots__ = ("b", "h")

    def __init__(self, b: _Bindings, h: int) -> None:
        self.b = b
        self.h = h

    def __hash__(self) -> int:
        return self.h

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _BKey):
            return NotImplemented
        if self.b is other.b:
            return True
        return (self.h == other.h and _same(self.b.names, other.b.names)
                and _same(self.b.meanings, other.b.meanings))


class _Unbound(Exception):
    """An op refers to a name this order has not bound."""


class _Bindings:
    """Names bound so far in one order of the search. Immutable: binding more makes a new one
    (copy on write), so the orders share the common ones.

    ``names``: model name -> real value (str meanings, ``Ctx.minted``); ``meanings``: real
    value (as a :class:`_Key`) -> the model's meaning, to translate recorded ops."""

    __slots__ = ("names", "meanings", "digests", "key", "ops", "ctxs")

    def __init__(self, names: dict[str, Any], meanings: dict[_Key, Any],
                 digests: dict[int, tuple[Any, int]], h: int | None = None) -> None:
        self.names = names
        self.meanings = meanings
        self.digests = digests
        if h is None:
            h = sum(_name_item(n, v, digests) for n, v in names.items()) + sum(
                _meaning_item(k, m, digests) for k, m in meanings.items())
        self.key: _BKey | None = _BKey(self, h & _MASK) if names or meanings else None
        self.ops: dict[int, Op | None] = {}  # event index -> the op as the model sees it
        self.ctxs: dict[int, Ctx] = {}  # store time -> the step's context

    def real(self, name: str) -> Any:
        return self.names[name]

    def fresh(self) -> _Bindings:
        """The same bindings with empty caches (its ``ops`` cache is per partition)."""
        return _Bindings(self.names, self.meanings, self.digests,
                         self.key.h if self.key is not None else 0)

    def extend(self, pairs: list[tuple[Any, Any]], unique: bool,
               digests: dict[int, tuple[Any, int]]) -> _Bindings | None:
        """These bindings plus ``pairs`` (meaning, real value) from an agreeing answer; None if
        a name would get a second value, or (``unique``) a value a second name."""
        names: dict[str, Any] | None = None
        meanings: dict[_Key, Any] | None = None
        h = self.key.h if self.key is not None else 0
        for meaning, value in pairs:
            vkey = _Key(value, digests)
            if isinstance(meaning, str):
                bound = (names if names is not None else self.names).get(meaning, _MISSING)
                if bound is not _MISSING:
                    if not _same(bound, value):
                        return None
                    continue
                twin = (meanings if meanings is not None else self.meanings).get(vkey, _MISSING)
                if twin is not _MISSING and twin != meaning and unique and isinstance(twin, str):
                    return None
                if names is None:
                    names = dict(self.names)
                names[meaning] = value
                h += _name_item(meaning, value, digests)
                if twin is _MISSING:
                    if meanings is None:
                        meanings = dict(self.meanings)
                    meanings[vkey] = meaning
                    h += _meaning_item(vkey, meaning, digests)
            else:
                current = (meanings if meanings is not None else self.meanings).get(vkey, _MISSING)
                if current is not _MISSING and _same(current, meaning):
                    continue
                if meanings is None:
                    meanings = dict(self.meanings)
                if current is not _MISSING:
                    h -= _meaning_item(vkey, current, digests)
                meanings[vkey] = meaning
                h += _meaning_item(vkey, meaning, digests)
        if names is None and meanings is None:
            return self
        return _Bindings(names if names is not None else self.names,
                         meanings if meanings is not None else self.meanings, digests, h)

    def to_model(self, value: Any, digests: dict[int, tuple[Any, int]]) -> Any:
        """``value`` as the model knows it: bound real values replaced by their meanings,
        references by their names; raises :class:`_Unbound` for a name not bound here."""
        if isinstance(value, Ref):
            if value.name not in self.names:
                raise _Unbound(value.name)
            return value.name
        if isinstance(value, Forged | ForgedValue):
            return ForgedMeaning(value.label)
        if value is None or isinstance(value, bool | int | float):
            return value  # numbers are never translated: too many coincide with arguments
        if self.meanings:
            meaning = self.meanings.get(_Key(value, digests), _MISSING)
            if meaning is not _MISSING:
                return meaning
        cls = type(value)
        if attrs.has(cls):
            changes = {}
            for f in attrs.fields(cls):
                if f.init:
                    old = getattr(value, f.name)
                    new = self.to_model(old, digests)
                    if new is not old:
                        changes[f.name] = new
            return attrs.evolve(value, **changes) if changes else value
        if isinstance(value, tuple | list):
            items = [self.to_model(v, digests) for v in value]
            if all(x is y for x, y in zip(items, value, strict=True)):
                return value
            return tuple(items) if isinstance(value, tuple) else items
        if isinstance(value, dict):
            pairs = [(self.to_model(k, digests), self.to_model(v, digests))
                     for k, v in value.items()]
            if all(k2 is k and v2 is v for (k2, v2), (k, v) in zip(pairs, value.items(),
                                                                   strict=True)):
                return value
            return dict(pairs)
        return value


def _has_refs(value: Any) -> bool:
    if isinstance(value, Ref | Forged | ForgedValue):
        return True
    if attrs.has(type(value)):
        return any(_has_refs(getattr(value, f.name)) for f in attrs.fields(type(value)))
    if isinstance(value, tuple | list):
        return any(_has_refs(v) for v in value)
    if isinstance(value, dict):
        return any(_has_refs(k) or _has_refs(v) for k, v in value.items())
    return False


# --- the search --------------------------------------------------------------------------------


class _Partition:
    """One partition's events and how the model answers them under some bindings."""

    def __init__(self, world: _World, events: list[Event],
                 digests: dict[int, tuple[Any, int]]) -> None:
        self.world = world
        order = sorted(range(len(events)), key=lambda k: (events[k].invoked, k))
        self.events = [events[k] for k in order]
        self.determinate = [not e.indeterminate for e in self.events]
        pure = world.model.pure
        self.pure = [bool(d and pure is not None and pure(e.op, e.outcome))
                     for d, e in zip(self.determinate, self.events, strict=True)]
        self.refs = [_has_refs(e.op) for e in self.events]
        self.unique = world.model.mint_clause is not None
        self.digests = digests
        # per event: the state and bindings it was last tried in and what that gave (states are
        # immutable, so the same objects give the same answer: reads and refusals in between
        # leave the state object as it was)
        self.last: list[tuple[Any, Any, list[tuple[Any, _Bindings]]] | None] = [None] * len(
            self.events)

    def model_op(self, i: int, b: _Bindings) -> Op | None:
        if not self.refs[i] and not b.meanings:
            return self.events[i].op
        if i not in b.ops:
            try:
                b.ops[i] = b.to_model(self.events[i].op, self.digests)
            except _Unbound:
                b.ops[i] = None
        return b.ops[i]

    def ctx(self, i: int, b: _Bindings) -> Ctx:
        at = self.events[i].at
        ctx = b.ctxs.get(at)
        if ctx is None:
            w = self.world
            ctx = Ctx(now=at, dead=w.dead, options=w.options, capabilities=w.capabilities,
                      minted=b.names)
            b.ctxs[at] = ctx
        return ctx

    def answers(self, i: int, state: Any, b: _Bindings) -> tuple[Step, ...] | None:
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

    def successors(self, i: int, state: Any, b: _Bindings) -> list[tuple[Any, _Bindings]]:
        """The (state, bindings) event ``i`` can lead to from here."""
        last = self.last[i]
        if last is not None and last[0] is state and last[1] is b:
            return last[2]
        out = self._successors(i, state, b)
        self.last[i] = (state, b, out)
        return out

    def _successors(self, i: int, state: Any, b: _Bindings) -> list[tuple[Any, _Bindings]]:
        steps = self.answers(i, state, b)
        if not steps:
            return []
        event = self.events[i]
        out: list[tuple[Any, _Bindings]] = []
        if not self.determinate[i]:
            for s in steps:  # no effect is the same as never taking effect: skipped
                if s.state is not state and (
                        _digest_from(s.state, state, self.digests) != _digest(state, self.digests)
                        or not _same(s.state, state)):
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
_Start = tuple[Any, "_Bindings", tuple[Event, ...], _Trail]


def _unwind(trail: _Trail) -> tuple[Event, ...]:
    out: list[tuple[Event, ...]] = []
    while trail is not None:
        trail, placed = trail
        out.append(placed)
    return tuple(e for placed in reversed(out) for e in placed)


def segments(events: Sequence[Event]) -> list[list[Event]]:
    """``events`` cut where the history is quiescent: a cut goes before an event invoked after
    every determinate event invoked before it has returned (indeterminate events never return;
    they are carried over the cut). The bursts of a concurrent run are such segments."""
    ordered = sorted(events, key=lambda e: e.invoked)
    out: list[list[Event]] = []
    open_until: int | None = None
    for e in ordered:
        if not out or (open_until is not None and e.invoked > open_until):
            out.append([])
            open_until = None
        out[-1].append(e)
        if not e.indeterminate:
            assert e.completed is not None
            open_until = e.completed if open_until is None else max(open_until, e.completed)
    return out


def _check_partition(world: _World, key: Hashable | None, events: list[Event],
                     budget_s: float) -> PartitionResult:
    """Check one partition segment by segment (see :func:`segments`): the search of a segment
    starts from every configuration the previous segment can end in, and a partition is
    linearizable when the last segment can end somewhere."""
    started = time.perf_counter()
    deadline = started + budget_s
    digests: dict[int, tuple[Any, int]] = {}
    frontier: list[_Start] = [(world.model.initial, _Bindings({}, {}, digests), (), None)]
    explored = [0]  # configurations visited, over every search

    def result(verdict: str, cx: Counterexample | None = None) -> PartitionResult:
        return PartitionResult(key, verdict, len(events), time.perf_counter() - started,
                               explored[0], cx)

    parts = segments(events)
    for number, segment in enumerate(parts):
        last = number == len(parts) - 1
        ends: dict[tuple[_Key, _BKey | None, tuple[int, ...]], _Start] = {}
        by_pending: dict[tuple[int, ...], list[_Start]] = {}
        for start in frontier:
            by_pending.setdefault(tuple(id(e) for e in start[2]), []).append(start)
        for group in by_pending.values():
            part = _Partition(world, list(group[0][2]) + segment, digests)
            seen: set[tuple[int, _Key, _BKey | None]] = set()
            for state, b, _pending, trail in group:
                verdict, _best = _search(part, state, b.fresh(), deadline, seen,
                                         None if last else ends, trail)
                if verdict == UNKNOWN or (last and verdict == LINEARIZABLE):
                    explored[0] += len(seen)
                    return result(verdict)
            explored[0] += len(seen)
        if not last and ends:
            frontier = list(ends.values())
            continue
        # Nowhere to go: the smallest story is this segment from one of its starts.
        state, b, pending, trail = frontier[0]
        part = _Partition(world, list(pending) + segment, digests)
        _verdict, best = _search(part, state, b.fresh(), float("inf"), set(), None, trail)
        assert best is not None
        return result(NOT_LINEARIZABLE, _counterexample(part, key, best, _unwind(trail)))
    return result(LINEARIZABLE)


def _search(part: _Partition, state: Any, b: _Bindings, deadline: float,
            seen: set[tuple[int, _Key, _BKey | None]],
            ends: dict[tuple[_Key, _BKey | None, tuple[int, ...]], _Start] | None,
            trail: _Trail = None,
            ) -> tuple[str, tuple[list[int], Any, _Bindings, int] | None]:
    """Search ``part`` from ``state``/``b``. Without ``ends``: stop at the first order that
    places every determinate event (linearizable). With ``ends``: visit every such order and
    record where each ends (its state, bindings, unplaced indeterminate events, and ``trail``
    extended by its order) in ``ends``;
    the answer is linearizable when one was found. ``seen`` is the memo of configurations
    (shared by searches of one partition from several starts). Also gives the longest path."""
    evs = part.events
    n = len(evs)

    # The entry list: 0 is the head, m - 1 the tail; calls before returns at equal times (two
    # events whose times touch count as concurrent).
    raw: list[tuple[int, int, int]] = []
    for i, e in enumerate(evs):
        raw.append((e.invoked, _CALL, i))
        if part.determinate[i]:
            assert e.completed is not None
            raw.append((e.completed, _RETURN, i))
    raw.sort()
    m = len(raw) + 2
    kind = [_RETURN] + [r[1] for r in raw] + [_RETURN]
    event_of = [-1] + [r[2] for r in raw] + [-1]
    ret_of = [-1] * m
    call_at = [0] * n
    for j in range(1, m - 1):
        if kind[j] == _CALL:
            call_at[event_of[j]] = j
    for j in range(1, m - 1):
        if kind[j] == _RETURN:
            ret_of[call_at[event_of[j]]] = j
    nxt = list(range(1, m)) + [-1]
    prv = [-1] + list(range(0, m - 1))

    def lift(c: int) -> None:
        nxt[prv[c]], prv[nxt[c]] = nxt[c], prv[c]
        r = ret_of[c]
        if r >= 0:
            nxt[prv[r]], prv[nxt[r]] = nxt[r], prv[r]

    def unlift(c: int) -> None:
        r = ret_of[c]
        if r >= 0:
            nxt[prv[r]] = r
            prv[nxt[r]] = r
        nxt[prv[c]] = c
        prv[nxt[c]] = c

    digests = part.digests
    linearized = 0
    det = part.determinate
    remaining = sum(det)
    found = False
    # frames: (call entry, state, bindings, linearized, successors, next successor, forced)
    stack: list[tuple[int, Any, _Bindings, int, list[tuple[Any, _Bindings]], int, bool]] = []
    path: list[int] = []
    best: tuple[list[int], Any, _Bindings, int] | None = None
    entry = nxt[0]
    steps = 0
    scan = True  # a configuration not looked at yet: is a pure call forced here?

    def push(c: int, succ: list[tuple[Any, _Bindings]], k: int, forced: bool = False) -> bool:
        """Take the first successor from ``k`` on that leads somewhere new."""
        nonlocal state, b, linearized, remaining, entry, scan
        i = event_of[c]
        bit = linearized | (1 << i)
        for idx in range(k, len(succ)):
            s2, b2 = succ[idx]
            config = (bit, _Key(s2, digests, state), b2.key)
            if config in seen:
                continue
            seen.add(config)
            stack.append((c, state, b, linearized, succ, idx + 1, forced))
            path.append(i)
            state, b, linearized = s2, b2, bit
            remaining -= det[i]
            lift(c)
            entry = nxt[0]
            scan = True
            return True
        return False

    def pop() -> bool:
        """Undo the last choice and take the same event's next answer, else move past it; a
        forced placement has no alternative: undo the one before it too."""
        nonlocal state, b, linearized, remaining, entry, scan
        while stack:
            c, state, b, linearized, succ, k, forced = stack.pop()
            remaining += det[path.pop()]
            unlift(c)
            if forced:
                continue
            scan = False
            if not push(c, succ, k):  # the same event's other answers first, then the next one
                entry = nxt[c]
            return True
        return False

    pure = part.pure

    def forced() -> tuple[int, tuple[Any, _Bindings]] | None:
        """A pure call that fits here and changes nothing (a read, a refusal): placing it now
        loses no order (wherever else it could go it changes nothing either), so the search
        places it without trying the other candidates (a partial-order reduction)."""
        j = nxt[0]
        while kind[j] == _CALL:
            i = event_of[j]
            if pure[i]:
                succ = part.successors(i, state, b)
                if len(succ) == 1 and succ[0][1] is b and (
                        succ[0][0] is state or _same(succ[0][0], state)):
                    return j, succ[0]
            j = nxt[j]
        return None

    while True:
        if steps % _CHECK_CLOCK_EVERY == 0 and time.perf_counter() >= deadline:
            return UNKNOWN, best
        steps += 1
        if remaining == 0:
            if ends is None:
                return LINEARIZABLE, best
            found = True
            unplaced = tuple(evs[i] for i in range(n) if not det[i]
                             and not linearized >> i & 1)
            ekey = (_Key(state, digests), b.key, tuple(id(e) for e in unplaced))
            if ekey not in ends:
                ends[ekey] = (state, b, unplaced, (trail, tuple(evs[i] for i in path)))
            if not pop():
                return LINEARIZABLE, best
            continue
        if scan:
            scan = False
            move = forced()
            if move is not None:
                if not push(move[0], [move[1]], 0, forced=True) and not pop():
                    # seen with that call placed: explored already, and so is this one
                    return (LINEARIZABLE if found else NOT_LINEARIZABLE), best
                continue
        if kind[entry] == _CALL:
            c = entry
            if not push(c, part.successors(event_of[c], state, b), 0):
                entry = nxt[c]
            continue
        # The first return left: its event could not be placed before it. Undo the last choice.
        assert event_of[entry] >= 0, "a determinate event is left, so its return comes first"
        if best is None or len(path) > len(best[0]):
            best = (path[:], state, b, event_of[entry])
        if not pop():
            return (LINEARIZABLE if found else NOT_LINEARIZABLE), best


def _counterexample(part: _Partition, key: Hashable | None,
                    best: tuple[list[int], Any, _Bindings, int],
                    before: tuple[Event, ...] = ()) -> Counterexample:
    path, state, b, blocked = best
    steps = part.answers(blocked, state, b)
    expected: list[Outcome] = []
    for s in steps or ():
        if not any(_same(s.outcome, o) for o in expected):
            expected.append(s.outcome)
    return Counterexample(
        partition=key,
        events=tuple(part.events),
        prefix=tuple(part.events[i] for i in path),
        blocked=part.events[blocked],
        expected=tuple(expected),
        before=before,
    )


# --- rendering ---------------------------------------------------------------------------------

_BAR = 40
_BEFORE_SHOWN = 12


def render_counterexample(target: Verdict | Counterexample) -> str:
    """A readable account of a counterexample (or of a verdict's smallest one): the partition's
    intervals per process on a common time line, the longest linearizable prefix, and the event
    that could not be placed after it with what the model allowed there."""
    if isinstance(target, Verdict):
        cx = target.counterexample
        if cx is None:
            return target.summary()
        head = target.summary() + "\n\n"
    else:
        cx, head = target, ""
    events = cx.events
    number = {id(e): k for k, e in enumerate(events, 1)}
    start = min(e.invoked for e in events)
    end = max(max(e.invoked, e.completed or e.invoked) for e in events)
    span = max(end - start, 1)

    def col(t: int) -> int:
        return min(_BAR - 1, (t - start) * (_BAR - 1) // span)

    def bar(e: Event) -> str:
        cells = [" "] * _BAR
        first = col(e.invoked)
        last = _BAR - 1 if e.completed is None else col(e.completed)
        for x in range(first, last + 1):
            cells[x] = "="
        cells[first] = "["
        if e.completed is None or e.indeterminate:
            cells[last] = ">" if last > first else "?"
        else:
            cells[last] = "]" if last > first else "|"
        return "".join(cells)

    def when(e: Event) -> str:
        done = "never" if e.completed is None else str(e.completed - start)
        return f"{e.invoked - start:>8} .. {done:<8}"

    def answer(e: Event) -> str:
        if e.outcome is None:
            return "(no answer: indeterminate)"
        return str(e.outcome) + ("  (indeterminate)" if e.indeterminate else "")

    where = "the whole history" if cx.partition is None else f"partition {cx.partition!r}"
    if cx.before:
        where += f", the segment after its first {len(cx.before)} events"
    lines = [
        f"{head}Not linearizable: {where} ({len(events)} events, "
        f"{len(cx.by_process())} processes)",
        "",
        "Intervals per process (ns since the first invocation; [===] call to return, "
        "===> no return or indeterminate):",
    ]
    width = max(len(p) for p in cx.by_process())
    for process, mine in cx.by_process().items():
        for e in mine:
            mark = "  <-- could not be placed" if e is cx.blocked else ""
            lines.append(f"  {process:<{width}}  #{number[id(e)]:<3} |{bar(e)}| {when(e)} "
                         f"{e.op.describe()}{mark}")
            lines.append(f"  {'':<{width}}        -> {answer(e)}")
    if cx.before:
        shown = cx.before[-_BEFORE_SHOWN:]
        lines += ["", f"Before this segment, {len(cx.before)} earlier events linearize in this "
                  f"order (the last {len(shown)} shown), ending where the segment starts:"]
        for k, e in enumerate(shown, len(cx.before) - len(shown) + 1):
            lines.append(f"  {k:>5}. {e.process}: {e.op.describe()} -> {answer(e)}")
    lines += ["", f"Longest linearizable prefix ({len(cx.prefix)} of {len(events)} events):"]
    if not cx.prefix:
        lines.append("  (none: not even the first event can be placed)")
    for k, e in enumerate(cx.prefix, 1):
        lines.append(f"  {k:>3}. #{number[id(e)]} {e.process}: {e.op.describe()} -> "
                     f"{answer(e)}")
    b = cx.blocked
    lines += [
        "",
        f"Could not be placed next: #{number[id(b)]} {b.process}: {b.op.describe()}",
        f"  the store answered: {answer(b)}",
    ]
    if cx.expected:
        allowed = " | ".join(str(o) for o in cx.expected)
        lines.append(f"  after the prefix the model allows: {allowed}")
    else:
        lines.append("  after the prefix the model cannot read this op (it names an id not "
                     "minted yet)")
    pending = [e for e in events if e is not b and all(e is not p for p in cx.prefix)
               and e.invoked <= (b.completed if b.completed is not None else e.invoked)]
    if pending:
        lines.append("  other events not in the prefix that could go before it (every order of "
                     "them was tried): " + ", ".join(f"#{number[id(e)]}" for e in pending))
    return "\n".join(lines)
