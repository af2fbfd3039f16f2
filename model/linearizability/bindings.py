"""Bindings of minted names in one order of the linearizability search.

The models answer ``Opaque("task#1")`` where a store mints an id; the checker binds each name
to the real value the first time an answer shows it, exactly like the harness (``harvest`` on
the agreeing answer, str meanings only; ``known`` puts bound values back into the model's later
answers; ``Ctx.minted`` gives them to the model). The bindings are part of the search state
(each order binds its own). A candidate is rejected when its answer would bind a name to a
second value, or (when the contract has a ``mint_clause``, as the harness checks) one value to a
second name.

The history holds ops **as the store received them**, with real ids, while the model knows only
its names. So before an op is stepped, every value in it that equals a bound real value (same
type, same value) is replaced by the model's meaning for it: the reverse map ``real value ->
meaning``, built from the same harvests (for non-str meanings, such as snodo's leases, the last
harvest of a real value wins). Numbers are never translated (a lease of 5 ms is not the id 5):
a store that mints numbers needs its ops recorded with ``Ref`` to those ids. A
:class:`~fencepost.spec.opaque.Ref` left in a recorded op is resolved to its name (an unbound
name: not placeable in that order), a ``Forged`` or ``ForgedValue`` to a
:class:`~fencepost.spec.opaque.ForgedMeaning`.
"""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec.opaque import Forged, ForgedMeaning, ForgedValue, Ref, Shown
from fencepost.spec.ops import Op

from ..base import Ctx
from .keys import MISSING, Key, digest, same

_MASK = (1 << 64) - 1


def _name_item(name: str, value: Any, digests: dict[int, tuple[Any, int]]) -> int:
    return hash((0, name, digest(value, digests)))


def _meaning_item(vkey: Key, meaning: Any, digests: dict[int, tuple[Any, int]]) -> int:
    return hash((1, vkey.h, digest(meaning, digests)))


class BindingsKey:
    """Bindings as a configuration key: the hash is kept up to date as names are bound (a sum
    over the items, so binding one more costs one item, not the whole map); equal keys have
    exactly equal maps."""

    __slots__ = ("b", "h")

    def __init__(self, b: Bindings, h: int) -> None:
        self.b = b
        self.h = h

    def __hash__(self) -> int:
        return self.h

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BindingsKey):
            return NotImplemented
        if self.b is other.b:
            return True
        return (self.h == other.h and same(self.b.names, other.b.names)
                and same(self.b.meanings, other.b.meanings))


class Unbound(Exception):
    """An op refers to a name this order has not bound."""


class Bindings:
    """Names bound so far in one order of the search. Immutable: binding more makes a new one
    (copy on write), so the orders share the common ones.

    ``names``: model name -> real value (str meanings, ``Ctx.minted``); ``meanings``: real
    value (as a :class:`Key`) -> the model's meaning, to translate recorded ops."""

    __slots__ = ("names", "meanings", "digests", "key", "ops", "ctxs")

    def __init__(self, names: dict[str, Any], meanings: dict[Key, Any],
                 digests: dict[int, tuple[Any, int]], h: int | None = None) -> None:
        self.names = names
        self.meanings = meanings
        self.digests = digests
        if h is None:
            h = sum(_name_item(n, v, digests) for n, v in names.items()) + sum(
                _meaning_item(k, m, digests) for k, m in meanings.items())
        self.key: BindingsKey | None = BindingsKey(self, h & _MASK) if names or meanings else None
        self.ops: dict[int, Op | None] = {}  # event index -> the op as the model sees it
        self.ctxs: dict[int, Ctx] = {}  # store time -> the step's context

    def real(self, name: str) -> Any:
        return self.names[name]

    def fresh(self) -> Bindings:
        """The same bindings with empty caches (its ``ops`` cache is per partition)."""
        return Bindings(self.names, self.meanings, self.digests,
                         self.key.h if self.key is not None else 0)

    def extend(self, pairs: list[tuple[Any, Any]], unique: bool,
               digests: dict[int, tuple[Any, int]]) -> Bindings | None:
        """These bindings plus ``pairs`` (meaning, real value) from an agreeing answer; None if
        a name would get a second value, or (``unique``) a value a second name."""
        names: dict[str, Any] | None = None
        meanings: dict[Key, Any] | None = None
        h = self.key.h if self.key is not None else 0
        for meaning, value in pairs:
            vkey = Key(value, digests)
            if isinstance(meaning, str):
                bound = (names if names is not None else self.names).get(meaning, MISSING)
                if bound is not MISSING:
                    if not same(bound, value):
                        return None
                    continue
                twin = (meanings if meanings is not None else self.meanings).get(vkey, MISSING)
                if twin is not MISSING and twin != meaning and unique and isinstance(twin, str):
                    return None
                if names is None:
                    names = dict(self.names)
                names[meaning] = value
                h += _name_item(meaning, value, digests)
                if twin is MISSING and not isinstance(meaning, Shown):
                    if meanings is None:
                        meanings = dict(self.meanings)
                    meanings[vkey] = meaning
                    h += _meaning_item(vkey, meaning, digests)
            else:
                current = (meanings if meanings is not None else self.meanings).get(vkey, MISSING)
                if current is not MISSING and same(current, meaning):
                    continue
                if meanings is None:
                    meanings = dict(self.meanings)
                if current is not MISSING:
                    h -= _meaning_item(vkey, current, digests)
                meanings[vkey] = meaning
                h += _meaning_item(vkey, meaning, digests)
        if names is None and meanings is None:
            return self
        return Bindings(names if names is not None else self.names,
                         meanings if meanings is not None else self.meanings, digests, h)

    def to_model(self, value: Any, digests: dict[int, tuple[Any, int]]) -> Any:
        """``value`` as the model knows it: bound real values replaced by their meanings,
        references by their names; raises :class:`Unbound` for a name not bound here."""
        if isinstance(value, Ref):
            if value.name not in self.names:
                raise Unbound(value.name)
            return value.name
        if isinstance(value, Forged | ForgedValue):
            return ForgedMeaning(value.label)
        if value is None or isinstance(value, bool | int | float):
            return value  # numbers are never translated: too many coincide with arguments
        if self.meanings:
            meaning = self.meanings.get(Key(value, digests), MISSING)
            if meaning is not MISSING:
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


def has_refs(value: Any) -> bool:
    if isinstance(value, Ref | Forged | ForgedValue):
        return True
    if attrs.has(type(value)):
        return any(has_refs(getattr(value, f.name)) for f in attrs.fields(type(value)))
    if isinstance(value, tuple | list):
        return any(has_refs(v) for v in value)
    if isinstance(value, dict):
        return any(has_refs(k) or has_refs(v) for k, v in value.items())
    return False
