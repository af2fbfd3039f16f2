"""Exact structural keys for model states and values, for the linearizability search's memo.

Model states are immutable values but often unhashable (the ledger is a dict, records hold
dicts). The configuration set of :mod:`fencepost.model.linearizability.search` keys a state by
a 64-bit structural digest (cached per attrs instance and mapping, so records shared between
states are digested once) that tells 1, 1.0 and True apart (as
:func:`~fencepost.spec.outcome.agrees` does): dicts by items, attrs instances by their ``eq``
fields, other unhashable values by ``repr``. On a digest match the states' own ``==`` decides
(so two states the model holds equal but that differ only in such types would also need equal
64-bit digests to be confused).

``digests`` maps ``id(value)`` to ``(value, digest)``: it holds the value, so an id is not
reused while cached; one cache serves one partition's searches.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping
from typing import Any

import attrs

MISSING = object()


class Key:
    """A value as a hashable, exactly compared key (see the module doc)."""

    __slots__ = ("value", "h")

    def __init__(self, value: Any, digests: dict[int, tuple[Any, int]],
                 parent: Any = MISSING) -> None:
        self.value = value
        self.h = digest(value, digests) if parent is MISSING else digest_from(
            value, parent, digests)

    def __hash__(self) -> int:
        return self.h

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Key) or self.h != other.h:
            return False
        if self.value is other.value:
            return True
        # The digests already tell 1, 1.0 and True apart, so the values' own == (fast, in C
        # for dicts and attrs) decides; same when == cannot.
        try:
            equal = self.value == other.value
        except Exception:  # noqa: BLE001 - a value whose == raises: compare structurally
            return same(self.value, other.value)
        return equal if isinstance(equal, bool) else same(self.value, other.value)


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


def digest(value: Any, digests: dict[int, tuple[Any, int]]) -> int:
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
    if cls is Key:
        return int(value.h)
    kind, fields = _kind(cls)
    if kind == _ATTRS or kind == _MAPPING:
        cached = digests.get(id(value))
        if cached is not None and cached[0] is value:
            return int(cached[1])
    if kind == _ATTRS:
        h = hash((cls, *(digest(getattr(value, n), digests) for n in fields)))
    elif kind == _MAPPING:
        total = hash(cls)
        get = digests.get
        for k, v in value.items():
            kh = hash(k) if type(k) is str else digest(k, digests)
            cached = get(id(v))
            vh = cached[1] if cached is not None and cached[0] is v else digest(v, digests)
            total += hash((kh, vh))
        extra = getattr(value, "__dict__", None)  # a dict subclass with attributes of its own
        if extra:
            total += digest(dict(extra), digests)
        h = total & 0xFFFF_FFFF_FFFF_FFFF
    elif kind == _SEQUENCE:
        return hash((cls, *(digest(v, digests) for v in value)))
    elif kind == _SET:
        return hash((cls, sum(digest(v, digests) for v in value) & 0xFFFF_FFFF_FFFF_FFFF))
    else:
        try:
            return hash((cls, value))
        except TypeError:
            return hash((cls, repr(value)))
    digests[id(value)] = (value, h)
    return h


def _item(k: Any, v: Any, digests: dict[int, tuple[Any, int]]) -> int:
    return hash((hash(k) if type(k) is str else digest(k, digests), digest(v, digests)))


def digest_from(value: Any, parent: Any, digests: dict[int, tuple[Any, int]]) -> int:
    """:func:`digest` of ``value``, a step's new state, from its ``parent`` (the state before,
    already digested): a mapping with the parent's keys in the parent's order is updated by the
    items whose values are not the parent's objects (found at C speed), not re-hashed whole;
    attrs instances go field by field. Anything else is digested afresh."""
    if value is parent:
        return digest(value, digests)
    cls = type(value)
    if cls is not type(parent):
        return digest(value, digests)
    cached = digests.get(id(value))
    if cached is not None and cached[0] is value:
        return int(cached[1])
    kind, fields = _kind(cls)
    if kind == _ATTRS:
        h = hash((cls, *(digest_from(getattr(value, n), getattr(parent, n), digests)
                         for n in fields)))
    elif kind == _MAPPING:
        before = digests.get(id(parent))
        if (before is None or before[0] is not parent
                or getattr(value, "__dict__", None) or getattr(parent, "__dict__", None)):
            return digest(value, digests)
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
                w = parent.get(k, MISSING)
                if w is not v:
                    total += _item(k, v, digests)
                    if w is not MISSING:
                        total -= _item(k, w, digests)
        h = total & 0xFFFF_FFFF_FFFF_FFFF
    else:
        return digest(value, digests)
    digests[id(value)] = (value, h)
    return h


def same(a: Any, b: Any) -> bool:
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
        return all(same(getattr(a, n), getattr(b, n)) for n in fields)
    if kind == _MAPPING:
        if len(a) != len(b) or not same(getattr(a, "__dict__", None),
                                         getattr(b, "__dict__", None)):
            return False
        # keys by ==, as the dict finds them (a digest match already told 1, 1.0 and True
        # apart in all but freak cases)
        for k, v in a.items():
            w = b.get(k, MISSING)
            if v is not w and (w is MISSING or not same(v, w)):
                return False
        return True
    if kind == _SEQUENCE:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if kind == _SET:
        return len(a) == len(b) and all(any(same(x, y) for y in b) for x in a)
    try:
        hash(a)
    except TypeError:
        return repr(a) == repr(b)
    return bool(a == b)
