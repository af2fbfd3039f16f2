"""Process-wide shelves for the in-memory stores: data that outlives one store object.

A memory store opened again with the same namespace must see the same records (the ``durable``
capability); the shelf is where they live, with the one lock every operation holds.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, cast

import attrs

from fencepost.spec.opaque import fields_walk, init_fields
from fencepost.spec.values import SNAPSHOT_TAKEN


@attrs.define
class Shelf:
    """The records of one store (one contract, one namespace) and their lock."""

    records: dict[str, Any] = attrs.Factory(dict)
    lock: threading.Lock = attrs.Factory(threading.Lock)


_SHELVES: dict[tuple[str, str], Shelf] = {}
_SHELVES_LOCK = threading.Lock()


def shelf(contract: str, namespace: str) -> Shelf:
    """The shelf of ``contract``'s store in ``namespace``, made on first use."""
    with _SHELVES_LOCK:
        return _SHELVES.setdefault((contract, namespace), Shelf())


def forget(contract: str, namespace: str) -> None:
    """Drop a namespace's records (the end of a run, or of one check)."""
    with _SHELVES_LOCK:
        _SHELVES.pop((contract, namespace), None)


T = TypeVar("T")
_IMMUTABLE = frozenset({str, int, float, bool, bytes, type(None)})
_FROZEN_SETATTR = getattr(attrs.frozen(type("_Probe", (), {})), "__setattr__", None)
"""What a frozen attrs class's ``__setattr__`` is (attrs has no public test of frozenness)."""


def detached(value: T) -> T:
    """``value`` sharing nothing mutable with what it was: its dicts, lists and mutable attrs
    values copied, a frozen attrs value or tuple rebuilt only when something inside it was
    (``copy.deepcopy`` rebuilds everything; a memory store copies every record in and out, so
    this is its hot path). Anything else is deep-copied."""
    return cast(T, _detached(value))


def _detached(value: Any) -> Any:
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if kind is dict:
        return {k: _detached(v) for k, v in value.items()}
    if kind is list:
        return [_detached(v) for v in value]
    if kind is tuple:
        items = tuple(_detached(v) for v in value)
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    try:
        names, frozen = _SHAPES[kind]
    except KeyError:
        names, frozen = _SHAPES[kind] = _shape(kind)
    if names is None:
        return copy.deepcopy(value)
    if frozen:
        return fields_walk(kind, _IMMUTABLE)(value, _detached)  # type: ignore[misc]
    return attrs.evolve(value, **{name: _detached(getattr(value, name)) for name in names})


_SHAPES: dict[type, tuple[tuple[str, ...] | None, bool]] = {}
"""Per class: its fields when all are init fields (None: deep-copy it), and whether it is a
frozen attrs class; looked up once per class (this runs on every record a store copies)."""


def _shape(kind: type) -> tuple[tuple[str, ...] | None, bool]:
    names = init_fields(kind)
    if names is None or len(names) != len(attrs.fields(kind)):
        return None, False
    return names, getattr(kind, "__setattr__", None) is _FROZEN_SETATTR


class CopiedOut:
    """Base of a memory store whose storage hands its records to the store's own code as they
    are stored (no copy per load: that code never changes a record in place, it saves a new
    one, and every save copies what it is given): each method of ``PROTOCOL_METHODS`` returns a
    :func:`detached` answer instead, so that no caller holds a part of what is stored. A
    subclass that overrides one of them (a mutant) gets its override wrapped too. The one
    exception is a call the kit's guard makes on this very store, whose answer the guard
    snapshots as it returns (:data:`~fencepost.spec.values.SNAPSHOT_TAKEN`): that call's
    answer is not copied twice, while the calls it makes inside (a mutant's ``super()``) and
    the calls of a store wrapping this one still get copies."""

    PROTOCOL_METHODS: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in cls.PROTOCOL_METHODS:
            method = getattr(cls, name, None)
            if method is not None and not getattr(method, "copies_out", False):
                setattr(cls, name, _copying_out(method))


def _copying_out(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def answer(self: Any, *args: Any, **kwargs: Any) -> Any:
        if SNAPSHOT_TAKEN.get() is self:  # the guard's call: it snapshots the answer
            inside = SNAPSHOT_TAKEN.set(None)
            try:
                return method(self, *args, **kwargs)
            finally:
                SNAPSHOT_TAKEN.reset(inside)
        return _detached(method(self, *args, **kwargs))

    answer.copies_out = True  # type: ignore[attr-defined]
    return answer
