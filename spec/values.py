"""The one exact JSON codec of the kit: values in histories, reports, stores and on the wire.

Everything comes back exactly: JSON ints stay ints and floats floats (``-0.0``, ``nan`` and
``inf`` included, the last two tagged ``{"__float__": "nan"}`` because strict JSON readers refuse
``NaN``), tuples are tagged ``{"__tuple__": [...]}``, bytes ``{"__bytes__": "<hex>"}``, a dict
whose keys are not all strings (or that holds a reserved key) is ``{"__dict__": [[key, value],
...]}``, a registered value class is ``{"__type__": name, field: value, ...}`` and the kit's
opaque stand-ins (:class:`~fencepost.spec.opaque.Ref`, ``Forged``, ``ForgedValue``) have their own
tags. Example::

    >>> decode(encode({"t": (1, -0.0), 3: b"\\x00"}))
    {'t': (1, -0.0), 3: b'\\x00'}

Two readings of a value the codec does not know:

- :func:`encode` (histories, reports, the wire) writes its ``repr`` as ``{"__opaque__": ...}``,
  which loads as that string: equal values stay equal, which is all an opaque token needs (a
  :class:`~fencepost.spec.opaque.Minted`, a value minted by a store behind the wire, is written
  as its own text);
- a :class:`Codec` (the SQL stores' column text) knows only the classes it was built with and
  refuses anything else with ``TypeError``: a store must never keep what it cannot read back.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

import attrs

from .opaque import (
    Foreign,
    Forged,
    ForgedValue,
    Minted,
    NotAValue,
    Opaque,
    Ref,
    fields_walk,
    init_call,
    init_fields,
    written,
)

_TYPES: dict[str, type] = {}
T = TypeVar("T", bound=type)

TAGS = frozenset({"__type__", "__tuple__", "__dict__", "__ref__", "__forged__",
                  "__forged_value__", "__bytes__", "__opaque__", "__float__"})
"""The reserved keys: a plain dict holding one of them is written as ``__dict__`` pairs."""

_STAND_INS: dict[type, str] = {Ref: "__ref__", Forged: "__forged__",
                               ForgedValue: "__forged_value__"}


def value_class(cls: T) -> T:
    """Register an attrs class so that :func:`encode`/:func:`decode` round-trip it."""
    _TYPES[cls.__name__] = cls
    return cls


def value_classes() -> dict[str, type]:
    """The registered value classes by name (a copy)."""
    return dict(_TYPES)


def value_classes_in(module: Any) -> list[tuple[str, type]]:
    """The registered value classes ``module`` holds (a contract's spec package: the shapes
    its answers carry), by name, sorted."""
    held = {id(v) for v in vars(module).values()}
    return [(name, cls) for name, cls in sorted(_TYPES.items()) if id(cls) in held]


# A model's placeholder for a value the store chooses (in reports' expected answers): saved and
# loaded as itself, so that a reloaded counterexample compares and renders as the live one.
value_class(Opaque)


class _Strict(Exception):
    """Inside :class:`Codec`: the value is not one the codec may write."""


def _encode(value: Any, classes: Mapping[str, type], strict: bool,
            unknown: Callable[[Any], str] = repr) -> Any:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    cls = type(value)
    if (cls is Minted or cls is Foreign) and not strict:
        return {"__opaque__": value.text}
    if cls in _STAND_INS and not strict:
        return {_STAND_INS[cls]: value.name if cls is Ref else value.label}
    if attrs.has(cls):
        if classes.get(cls.__name__) is cls:
            fields = {f.name: _encode(getattr(value, f.name), classes, strict, unknown)
                      for f in attrs.fields(cls) if f.init}
            return {"__type__": cls.__name__, **fields}
    elif isinstance(value, tuple):
        return {"__tuple__": [_encode(v, classes, strict, unknown) for v in value]}
    elif isinstance(value, list):
        return [_encode(v, classes, strict, unknown) for v in value]
    elif isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value) and not TAGS.intersection(value):
            return {k: _encode(v, classes, strict, unknown) for k, v in value.items()}
        return {"__dict__": [[_encode(k, classes, strict, unknown),
                              _encode(v, classes, strict, unknown)] for k, v in value.items()]}
    elif isinstance(value, bytes):
        return {"__bytes__": value.hex()}
    if strict:
        raise TypeError(f"cannot store a {cls.__name__}; use JSON data")
    return {"__opaque__": unknown(value)}


def _decode(data: Any, classes: Mapping[str, type], opaque: Callable[[str], Any] = str) -> Any:
    if isinstance(data, list):
        return [_decode(v, classes, opaque) for v in data]
    if not isinstance(data, dict):
        return data
    return _tagged({k: _decode(v, classes, opaque) for k, v in data.items()}, classes, opaque)


def _tagged(data: dict[str, Any], classes: Mapping[str, type],
            opaque: Callable[[str], Any] = str) -> Any:
    """What one JSON object of :func:`_encode`'s stands for, its members already decoded (so
    that it serves as ``json.loads``' object hook too, which calls it innermost first)."""
    if len(data) == 1:
        (tag, inner), = data.items()
        if tag == "__tuple__":
            return tuple(_list(inner, tag))
        if tag == "__dict__":
            out: dict[Any, Any] = {}
            for pair in _list(inner, tag):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise ValueError(f"__dict__ holds [key, value] pairs, not {pair!r}")
                try:
                    out[pair[0]] = pair[1]
                except TypeError:
                    raise ValueError(f"unhashable dict key {pair[0]!r}") from None
            return out
        if tag == "__ref__":
            return Ref(_str(inner, tag))
        if tag == "__forged__":
            return Forged(_str(inner, tag))
        if tag == "__forged_value__":
            return ForgedValue(_str(inner, tag))
        if tag == "__bytes__":
            try:
                return bytes.fromhex(_str(inner, tag))
            except ValueError:
                raise ValueError(f"__bytes__ holds hex digits, not {inner!r}") from None
        if tag == "__opaque__":
            return opaque(_str(inner, tag))
        if tag == "__float__":
            try:
                return float(_str(inner, tag))
            except ValueError:
                raise ValueError(f"__float__ holds nan, inf or -inf, not {inner!r}") from None
    name = data.get("__type__")
    if name is None:
        return data
    del data["__type__"]
    cls = classes.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"unknown value class {name!r}")
    try:
        return cls(**data)
    except TypeError as e:
        raise ValueError(f"bad fields for {name}: {e}") from None


def _list(value: Any, tag: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{tag} holds a list, not {value!r}")
    return value


def _str(value: Any, tag: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{tag} holds a string, not {value!r}")
    return value


def encode(value: Any, unknown: Callable[[Any], str] = repr) -> Any:
    """A value as JSON-ready data that :func:`decode` turns back into an equal value of the
    same types; a value of an unregistered class is written as ``{"__opaque__":
    unknown(value)}``, its ``repr`` by default (see the module doc)."""
    return _encode(value, _TYPES, strict=False, unknown=unknown)


def decode(data: Any, opaque: Callable[[str], Any] = str) -> Any:
    """Inverse of :func:`encode`; ``ValueError`` for data no :func:`encode` writes. An
    ``__opaque__`` text becomes ``opaque(text)``: the text itself (a history, a report), or a
    :class:`~fencepost.spec.opaque.Minted` (a store's value read off the wire, handed back to it
    as it came); ``ValueError`` too for data nested too deeply to read."""
    try:
        return _decode(data, _TYPES, opaque)
    except RecursionError:
        raise ValueError("a value nested too deeply to read") from None


MAX_DEPTH = 100
"""How deep a store's answer may nest (no contract value comes near it)."""

MAX_ITEMS = 100_000
"""How many items a list, tuple or mapping in a store's answer may hold (no contract value the
kit makes comes near it: a page, a history, a reap are the kit's few records); a mapping whose
items never end is read no further than this."""

CUT_BYTES = 16 << 20
"""Text or bytes longer than this in an answer is kept as a :class:`Cut` (16 MiB: the kit
sends no value near it, ledgence's largest, a settlement, is 8 MiB)."""


@value_class
@attrs.frozen
class Cut:
    """What the kit keeps of a huge text or bytes value in an answer: its kind, its size, a
    digest of the whole and its first and last characters. No value the kit sends is so
    large, so a cut value never agrees with the contract's; two cuts are equal when their
    digests are (a huge id a store mints still reads back the same)."""

    kind: str
    size: int
    sha256: str
    head: Any
    tail: Any

    SHOWN = 40

    @classmethod
    def of(cls, value: str | bytes) -> Cut:
        data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
        return cls(type(value).__name__, len(value), hashlib.sha256(data).hexdigest(),
                   value[:cls.SHOWN], value[-cls.SHOWN:])

    @classmethod
    def of_int(cls, value: int) -> Cut:
        """A huge integer: its size in bits, a digest of its hexadecimal text and that text's
        ends (no decimal text: Python may refuse to write one so long)."""
        text = hex(value)
        return cls("int", value.bit_length(), hashlib.sha256(text.encode()).hexdigest(),
                   text[:cls.SHOWN], text[-cls.SHOWN:])

    def __repr__(self) -> str:
        unit = {"str": "characters", "int": "bits"}.get(self.kind, "bytes")
        return (f"<{self.kind} of {self.size} {unit}, cut: sha256 {self.sha256[:16]}, "
                f"{self.head!r} ... {self.tail!r}>")

_EXACT = frozenset({str, int, float, bool, type(None), bytes})
_SMALL = frozenset({float, bool, type(None)})
"""The plain types whose values are never cut (see :data:`CUT_BYTES`; an ``int`` is, past
:data:`INT_BITS`)."""
INT_BITS = 2048
"""An integer in an answer longer than this many bits is kept as a :class:`Cut`: no contract
value comes near, and Python writes such a number in decimal only up to a limit a program may
set as low as 640 digits (about 2,100 bits), which the kit's texts and reports need."""
_INT_TOP = 1 << INT_BITS
_KIT_OWN = frozenset({Minted, ForgedValue, Foreign})
_CONVERT: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (str, str.__str__), (int, int.__int__), (float, float.__float__), (bytes, bytes.__bytes__))
"""A subclass of a plain type is read as its plain value by the plain type's own method (a
``str`` subclass's ``__eq__``, ``__str__`` or ``__hash__`` is never asked)."""


SNAPSHOT_TAKEN: ContextVar[object] = ContextVar("fencepost_snapshot_taken", default=None)
"""The store (in the calling thread) whose method the kit is calling and whose answer it will
take a :func:`snapshot` of as it returns: a store of the kit's own that is that object may then
answer with what it holds instead of a copy (the snapshot shares nothing with it), for that
one call, not for the calls it makes inside, nor for a store wrapping it (see
:class:`~fencepost.adapters.memory.CopiedOut`)."""


def snapshot(value: Any) -> Any:
    """A store's answer as a value of the kit's own: plain types exactly (a subclass of
    ``str``, ``int``, ``float``, ``bytes``, ``list``, ``tuple`` or ``dict`` read as its plain
    value), containers and registered value classes copied, and an object of any other class
    wrapped as a :class:`~fencepost.spec.opaque.Foreign` (its ``repr`` and hash taken now).
    Nothing in it is shared with the store: what the store changes later is not in it.
    Text or bytes longer than :data:`CUT_BYTES` is kept as a :class:`Cut`.
    :class:`~fencepost.spec.opaque.NotAValue` says why an answer cannot be one (nested deeper
    than :data:`MAX_DEPTH`, an object whose ``__eq__``, ``__hash__`` or ``__repr__`` lies or
    raises, a value class that will not rebuild), with where in the answer."""
    return _snapshot(value, 0)


def _snapshot(value: Any, depth: int) -> Any:
    cls = type(value)
    if cls in _EXACT or cls in _KIT_OWN:  # a huge one cut (inline: this runs on every leaf)
        if cls is str or cls is bytes:
            if len(value) > CUT_BYTES:
                return Cut.of(value)
        elif cls is int and not -_INT_TOP < value < _INT_TOP:
            return Cut.of_int(value)
        return value
    if depth >= MAX_DEPTH:
        raise NotAValue(f"a value nested more than {MAX_DEPTH} deep")
    depth += 1
    try:
        if (cls is dict or cls is list or cls is tuple) and len(value) > MAX_ITEMS:
            raise _too_many(cls)
        if cls is dict:
            return {k if type(k) in _SMALL or type(k) is int and -_INT_TOP < k < _INT_TOP
                    else _snapshot(k, depth):
                    v if type(v) in _SMALL or type(v) is int and -_INT_TOP < v < _INT_TOP
                    else _snapshot(v, depth) for k, v in value.items()}
        if cls is list:
            return [v if type(v) in _SMALL or type(v) is int and -_INT_TOP < v < _INT_TOP
                    else _snapshot(v, depth) for v in value]
        if cls is tuple:
            return tuple([v if type(v) in _SMALL or type(v) is int and -_INT_TOP < v < _INT_TOP
                          else _snapshot(v, depth) for v in value])
        rebuild = _REGISTERED.get(cls, _UNSEEN)
        if rebuild is _UNSEEN:
            rebuild = _registered(cls)
        if rebuild is not None:
            return _rebuilt(value, cls, rebuild, depth)
        return _converted(value, cls, depth)
    except NotAValue:
        raise
    except RecursionError:
        raise NotAValue("a value nested too deeply to read") from None
    except Exception as e:  # noqa: BLE001 - a container of the store's that will not be read
        raise NotAValue(f"a {cls.__name__} that could not be read ({type(e).__name__})") from None


def _too_many(cls: type) -> NotAValue:
    return NotAValue(f"a {cls.__name__} of more than {MAX_ITEMS:,} items")


def _converted(value: Any, cls: type, depth: int) -> Any:
    """A value of a class other than the plain ones and the registered value classes."""
    for plain, read in _CONVERT:
        if isinstance(value, plain):
            return _snapshot(read(value), depth)  # a plain value now: cut if huge
    if isinstance(value, list | tuple):
        size = list.__len__(value) if isinstance(value, list) else tuple.__len__(value)
        if size > MAX_ITEMS:
            raise _too_many(cls)
        items = [_snapshot(v, depth) for v in (list.__iter__(value) if isinstance(value, list)
                                               else tuple.__iter__(value))]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        if dict.__len__(value) > MAX_ITEMS:
            raise _too_many(cls)
        return {_snapshot(k, depth): _snapshot(v, depth) for k, v in dict.items(value)}
    if isinstance(value, Mapping):  # read once, now: what it says later is not asked
        pairs: dict[Any, Any] = {}
        for n, (k, v) in enumerate(itertools.islice(value.items(), MAX_ITEMS + 1)):
            if n == MAX_ITEMS:
                raise _too_many(cls)
            pairs[_snapshot(k, depth)] = _snapshot(v, depth)
        return pairs
    return Foreign.of(value)


_UNSEEN: Any = object()
_REGISTERED: dict[type, Callable[[Any, int], Any] | None] = {}
"""The registered value classes seen in answers, each with its :func:`_rebuilder`."""


def _registered(cls: type) -> Callable[[Any, int], Any] | None:
    """``cls``'s :func:`_rebuilder` if it is a registered value class, else None. Only
    registered classes are remembered: a store minting a class per answer must not grow the
    kit."""
    if _TYPES.get(cls.__name__) is not cls:
        return None
    rebuild = _REGISTERED[cls] = _rebuilder(cls)
    return rebuild


def _rebuilder(cls: type) -> Callable[[Any, int], Any]:
    """A function taking a snapshot of a value of the registered class ``cls`` (and the depth
    it is at): each init field read once, a ``str`` no longer than :data:`CUT_BYTES`, a
    float, bool, None or not too long ``int`` kept in line, anything else snapshot, and the
    class built anew from them by position (by keyword for a class taking some by keyword
    only), its validators run. Written out for the class once: every answer of every store is
    snapshot, and a call per field was most of the snapshot's time."""
    names = init_fields(cls) or ()
    lines = ["def rebuild(value, depth):"]
    for i, name in enumerate(names):
        lines += [f"    f{i} = value.{name}",
                  f"    t = type(f{i})",
                  "    if t is str:",
                  f"        if len(f{i}) > cut:",
                  f"            f{i} = cut_of(f{i})",
                  f"    elif not (t in small or t is int and -top < f{i} < top):",
                  f"        f{i} = inner(f{i}, depth)"]
    lines.append(f"    return {init_call(cls, [f'f{i}' for i in range(len(names))])}")
    return written(lines, {"cls": cls, "cut": CUT_BYTES, "cut_of": Cut.of, "small": _SMALL,
                           "top": _INT_TOP, "inner": _snapshot})


def _rebuilt(value: Any, cls: type, rebuild: Callable[[Any, int], Any], depth: int) -> Any:
    try:
        return rebuild(value, depth)
    except NotAValue:
        raise
    except Exception as e:  # noqa: BLE001 - its validators refused what the store put in it
        raise NotAValue(f"a {cls.__name__} that does not rebuild ({type(e).__name__})") from None


def handed(value: Any) -> Any:
    """An argument as the store receives it: the kit's lists, dicts and tuples copied (the
    store may keep or change them, never the kit's), a
    :class:`~fencepost.spec.opaque.Foreign` as the store's own object."""
    cls = type(value)
    if cls in _EXACT:
        return value
    if cls is Foreign:
        return value.obj
    if cls is dict:
        return {k if type(k) in _EXACT else handed(k): v if type(v) in _EXACT else handed(v)
                for k, v in value.items()}
    if cls is list:
        return [v if type(v) in _EXACT else handed(v) for v in value]
    if cls is tuple:
        return tuple([v if type(v) in _EXACT else handed(v) for v in value])
    walk = fields_walk(cls, _EXACT)
    if walk is not None:  # an attrs value: rebuilt when a field was copied
        return walk(value, handed)
    return value


def handed_all(values: Iterable[Any]) -> list[Any]:
    """:func:`handed` of each of ``values`` (an op's arguments)."""
    return [v if type(v) in _EXACT else handed(v) for v in values]


COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
"""The kit's JSON text: compact, ASCII, NaN and the infinities refused. One encoder for every
stored record and every protocol line (``json.dumps`` with an argument builds a new one per
call: about 1 µs of a round trip's few tens)."""


class Codec:
    """The same codec for a store's own columns, over exactly the attrs ``classes`` given:
    anything else (an unknown class, a kit stand-in) raises ``TypeError`` when written.

    Example::

        >>> codec = Codec([])
        >>> codec.loads(codec.dumps({"t": (1, 2.0), 3: None}))
        {'t': (1, 2.0), 3: None}
    """

    def __init__(self, classes: Iterable[type]) -> None:
        self.classes = {c.__name__: c for c in classes}
        self._decoder = json.JSONDecoder(object_hook=self._hook)

    def dump_value(self, value: Any) -> Any:
        return _encode(value, self.classes, strict=True)

    def load_value(self, data: Any) -> Any:
        return _decode(data, self.classes)

    def dumps(self, value: Any) -> str:
        """Exact JSON text (ASCII, so that any string survives every backend's text type)."""
        return COMPACT_JSON.encode(self.dump_value(value))

    def loads(self, text: str) -> Any:
        """:meth:`dumps`' value back: each JSON object turned into what it stands for as the
        parser makes it (its object hook), no second walk over the parsed document (a SQL
        store's every read decodes its records)."""
        return self._decoder.decode(text)

    def _hook(self, data: dict[str, Any]) -> Any:
        return _tagged(data, self.classes)
