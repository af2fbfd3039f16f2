"""Does a value have the type the contract declares? Answers checked by their annotations.

The protocol classes of each contract (``spec/<contract>/protocol.py``) say what each method
answers, and the value classes what each field holds. Code that reads fields off a store's
answer before the model has judged it (a concurrent workload learning from its calls, a race
reading what its racers got) asks :func:`well_formed` first: a store's answer is hostile
until it has the declared shape, and one that does not is left for the model to judge, never
read (an ``AttributeError`` there would be the kit's crash, not the store's failure).

The forms understood: ``Any`` (anything), ``None``, ``bool``, ``int`` (not a bool),
``float`` (an ``int`` too; never NaN or infinite: JSON holds neither), ``str``, ``bytes``, an
attrs class (an instance of it whose fields hold theirs), a union, a ``Literal``,
``tuple[X, ...]``, ``tuple[X, Y]``, ``list[X]``, ``Sequence[X]``, ``Mapping[K, V]``,
``dict[K, V]``, any other class (an instance of it). A form not in this list holds
anything."""

from __future__ import annotations

import collections.abc
import functools
import math
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any

import attrs

from .ops import Op
from .outcome import Ok, Outcome

DEPTH = 64
"""How deep :func:`holds` follows a value (a deeper one does not hold)."""


def holds(hint: Any, value: Any, depth: int = DEPTH) -> bool:
    """Does ``value`` have the type ``hint``?"""
    if depth < 0:
        return False
    if hint is Any or hint is object:
        return True
    if hint is None or hint is type(None):
        return value is None
    if hint is bool:
        return type(value) is bool
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:  # an int is a float too (PEP 484's numeric tower); never NaN or inf
        return (isinstance(value, int) and not isinstance(value, bool)
                or isinstance(value, float) and math.isfinite(value))
    if hint in (str, bytes):
        return isinstance(value, hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(holds(a, value, depth) for a in args)
    if origin is typing.Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(holds(args[0], v, depth - 1) for v in value)
        return not args or (len(args) == len(value) and all(
            holds(a, v, depth - 1) for a, v in zip(args, value, strict=True)))
    if origin in (list, collections.abc.Sequence):
        kinds = list if origin is list else (list, tuple)
        return isinstance(value, kinds) and all(holds(args[0], v, depth - 1)
                                                for v in value) if args else isinstance(
            value, kinds)
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, Mapping):
            return False
        key, item = args if args else (Any, Any)
        return all(holds(key, k, depth - 1) and holds(item, v, depth - 1)
                   for k, v in value.items())
    if isinstance(hint, type):
        if not isinstance(value, hint):
            return False
        if attrs.has(hint):
            fields = _fields(hint)
            return all(holds(h, getattr(value, name, None), depth - 1)
                       for name, h in fields.items())
        return True
    return True


@functools.cache
def _fields(cls: type) -> dict[str, Any]:
    """An attrs class's fields and their types (annotations resolved in its module)."""
    module = sys.modules.get(cls.__module__)
    hints = typing.get_type_hints(cls, vars(module) if module is not None else None)
    return {f.name: hints.get(f.name, Any) for f in attrs.fields(cls)}


def answer_hints(spec: Any) -> dict[str, Any]:
    """What each protocol method of the ``spec`` package answers, by method name: the return
    annotations of its protocol classes."""
    found: dict[str, Any] = {}
    for value in vars(spec).values():
        if isinstance(value, type) and getattr(value, "_is_protocol", False):
            module = sys.modules.get(value.__module__)
            for name in spec.PROTOCOL_METHODS:
                method = getattr(value, name, None)
                if method is not None and name not in found:
                    hints = typing.get_type_hints(
                        method, vars(module) if module is not None else None)
                    found[name] = hints.get("return", Any)
    return found


def well_formed(answers: Mapping[str, Any], op: Op, outcome: Outcome) -> bool:
    """Is ``outcome`` of the declared shape: an ``Ok`` whose value has the type ``op``'s
    method answers (``answers``: :func:`answer_hints`), or any other outcome (a refusal's
    code and a crash are the kit's own values)?"""
    if not isinstance(outcome, Ok):
        return True
    return holds(answers.get(op.name, Any), outcome.value)
