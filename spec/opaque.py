"""Values only a store can mint (accesses, leases) and how the kit refers to them.
Over 500 lines: the walks over values every step makes (agree, harvest, known, resolve and
the rebuilds under them) live here together, each with the hot-path inlines it documents.

A store hands out opaque values; the model cannot predict their bytes, only what they stand
for. So the model answers with :class:`Opaque` placeholders that match any real value, the
harness binds each real value to the model's meaning under a name, and later operations name it
with :class:`Ref`. :class:`Forged` asks for a value nobody issued (an attacker's guess).
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs

T = TypeVar("T")


@attrs.frozen
class Opaque:
    """In a model's answer: "some value the store mints here", standing for ``meaning``."""

    meaning: Any

    def __repr__(self) -> str:
        # How a counterexample shows it: any value of the store's own (not none), the same
        # wherever this meaning comes back.
        return f"<store's value: {self.meaning}>"


class Shown(str):
    """An :class:`Opaque` meaning for a value a store shows but the kit never sends back (adk's
    ``owner_node``): bound like any name, so that it must read back the same, but never taken
    for the meaning of an argument that happens to equal it (a claimant named ``c1`` whose store
    shows ``c1`` as its node)."""

    __slots__ = ()


@attrs.frozen
class Ref:
    """In an operation: the value bound earlier under ``name``."""

    name: str


@attrs.frozen
class Forged:
    """In an operation: a value nobody issued, labelled for the trace."""

    label: str


class ForgedValue:
    """What a store receives for :class:`Forged`: an object it never minted."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return f"<forged {self.label}>"


@attrs.frozen
class Minted:
    """A value a store behind the wire minted (an access, a lease): the text it sent as
    ``{"__opaque__": text}``, sent back to it unchanged (see ``docs/protocol.md``)."""

    text: str


class Foreign:
    """A value of a store's own class in an answer (an access, a lease), as the kit holds it.

    The store's object (``obj``) is handed back to the store unchanged. Its ``repr`` and hash
    are taken once, when it is wrapped (:meth:`of`); after the call returned the kit asks it
    only ``__eq__``: two are equal only when each object says it equals the other (an
    ``__eq__`` that lies or raises can make the store's own values unequal, never a wrong
    answer right), and that question is timed as a store call is (:func:`time_store_eq`: one
    that never returns stops the run, as a call would).
    """

    __slots__ = ("obj", "text", "_hash")

    TEXT_LIMIT = 200
    """Longer ``repr`` texts are cut to their head and a digest of the whole."""

    def __init__(self, obj: Any, text: str, hash_: int) -> None:
        self.obj, self.text, self._hash = obj, text, hash_

    @classmethod
    def of(cls, obj: Any) -> Foreign:
        """``obj`` wrapped; :class:`NotAValue` when it cannot be a value: its ``repr`` or
        hash raises, or it says it equals an object it has never seen."""
        try:
            lies = (obj == _Stranger()) is not False
        except BaseException as e:  # noqa: BLE001 - any exception: its __eq__ cannot be used
            raise NotAValue(f"a {_class(obj)} whose __eq__ raised {_class(e)}") from None
        if lies:
            raise NotAValue(f"a {_class(obj)} that says it equals an object it has never seen")
        try:
            hash_ = hash(obj)
        except BaseException as e:  # noqa: BLE001
            raise NotAValue(f"a {_class(obj)} whose __hash__ raised {_class(e)}") from None
        try:
            text = repr(obj)
            if type(text) is not str:
                raise TypeError("not a str")
        except BaseException as e:  # noqa: BLE001
            raise NotAValue(f"a {_class(obj)} whose __repr__ raised {_class(e)}") from None
        if len(text) > cls.TEXT_LIMIT:
            digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
            text = f"{text[:cls.TEXT_LIMIT // 2]}... ({len(text)} characters, sha256 {digest})"
        return cls(obj, text, hash_)

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if type(other) is not Foreign:
            return False
        if self.obj is other.obj:
            return True
        if _EQ_TIMER is None:
            return _both_say_equal(self.obj, other.obj)
        return _EQ_TIMER(functools.partial(_both_say_equal, self.obj, other.obj))

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return self.text

    def __reduce__(self) -> tuple[Any, ...]:
        """Sent to another process (a ``--jobs`` part's result) as it is, or, when the
        store's object cannot be pickled and read back (a generator, a lock), with its text
        in its place."""
        return (Foreign, (_shippable(self.obj, self.text), self.text, self._hash))


class Unshipped:
    """A store's object that could not leave the process that held it (``Foreign.obj`` in a
    result sent back by a ``--jobs`` part): its text, equal to nothing but itself."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


_STAND_INS: dict[int, tuple[Any, Unshipped]] = {}
"""id of an object that cannot be pickled -> (it, its stand-in): every Foreign of one object
ships one stand-in, so they stay equal (pickle keeps one object once)."""


def _shippable(obj: Any, text: str) -> Any:
    try:
        pickle.loads(pickle.dumps(obj))  # what cannot be read back there is not sent either
        return obj
    except BaseException:  # noqa: BLE001 - any failure: the object stays in this process
        held = _STAND_INS.get(id(obj))
        if held is None or held[0] is not obj:
            held = _STAND_INS[id(obj)] = (obj, Unshipped(text))
        return held[1]


def _both_say_equal(a: Any, b: Any) -> bool:
    try:
        return (a == b) is True and (b == a) is True
    except BaseException:  # noqa: BLE001 - an __eq__ that raises makes no two values equal
        return False


_EQ_TIMER: Callable[[Callable[[], bool]], bool] | None = None


def time_store_eq(timer: Callable[[Callable[[], bool]], bool]) -> None:
    """Have every comparison of two store objects (``Foreign.__eq__``) run as
    ``timer(ask)``: the run's guard times it as a store call (set by
    :mod:`fencepost.scenarios.guard`, which this layer does not import)."""
    global _EQ_TIMER
    _EQ_TIMER = timer


class NotAValue(Exception):
    """An answer holds something that cannot be a contract value (see :class:`Foreign`)."""


class _Stranger:
    """An object no store has seen: nothing of a store's equals it."""

    __slots__ = ()


def _class(obj: Any) -> str:
    return type(obj).__name__


@attrs.frozen
class ForgedMeaning:
    """What the model receives for :class:`Forged`: a meaning that validates nowhere."""

    label: str


_EQ_FIELDS: dict[type, tuple[str, ...] | None] = {}
_INIT_FIELDS: dict[type, tuple[str, ...] | None] = {}
_ALL_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type, cache: dict[type, tuple[str, ...] | None],
                 keep: Callable[[Any], bool]) -> tuple[str, ...] | None:
    """The names of ``cls``'s attrs fields that ``keep`` (None: not an attrs class), cached
    per class: the walks below run on every answer and operation the kit compares."""
    try:
        return cache[cls]
    except KeyError:
        names = tuple(f.name for f in attrs.fields(cls) if keep(f)) if attrs.has(cls) else None
        cache[cls] = names
        return names


def init_fields(cls: type) -> tuple[str, ...] | None:
    """The names of ``cls``'s attrs init fields (None: not an attrs class), cached."""
    return _field_names(cls, _INIT_FIELDS, _init)


def all_fields(cls: type) -> tuple[str, ...] | None:
    """The names of all of ``cls``'s attrs fields (None: not an attrs class), cached."""
    return _field_names(cls, _ALL_FIELDS, _any)


def _eq(f: Any) -> bool:
    return bool(f.eq)


def _init(f: Any) -> bool:
    return bool(f.init)


def _any(_f: Any) -> bool:
    return True


def init_call(cls: type, values: list[str]) -> str:
    """Source text building ``cls`` from ``values`` (the source of one value per init field,
    in order): by position, or by keyword (each field's alias) where the class takes some by
    keyword only. For the walks written out per class below."""
    fields = [f for f in attrs.fields(cls) if f.init]
    if any(f.kw_only for f in fields):
        return f"cls({', '.join(f'{f.alias}={v}' for f, v in zip(fields, values, strict=True))})"
    return f"cls({', '.join(values)})"


def written(lines: list[str], scope: dict[str, Any]) -> Callable[..., Any]:
    """The function whose source is ``lines`` (its first line ``def NAME(...):``), made with
    the names of ``scope``: a walk written out once for one class (each field read by its own
    attribute access, no loop over names and no call per field that needs none) runs on every
    answer and operation the kit compares."""
    name = lines[0].removeprefix("def ").partition("(")[0]
    exec("\n".join(lines), scope)  # noqa: S102 - source the kit wrote from a class's fields
    made: Callable[..., Any] = scope[name]
    return made


def fields_walk(cls: type, keep: frozenset[object], extra: int = 0
                ) -> Callable[..., Any] | None:
    """A function ``walk(value, rebuild, *extra)`` (``extra`` more arguments) giving a value of
    the attrs class ``cls`` with ``rebuild(field, *extra)`` applied to each init field whose
    type is not in ``keep``: ``value`` itself when no field changed (values are frozen: an
    unchanged copy would be equal, only slower), else a new one built from the new fields.
    Written out once per class, ``keep`` and ``extra`` (None: ``cls`` is not an attrs
    class)."""
    key = (cls, keep, extra)
    try:
        return _WALKS[key]
    except KeyError:
        pass
    names = init_fields(cls)
    if names is None:
        _WALKS[key] = None
        return None
    more = "".join(f", x{i}" for i in range(extra))
    lines = [f"def walk(value, rebuild{more}):"]
    for i, name in enumerate(names):
        lines += [f"    f{i} = value.{name}",
                  f"    g{i} = f{i} if type(f{i}) in keep else rebuild(f{i}{more})"]
    same = " and ".join(f"g{i} is f{i}" for i in range(len(names))) or "True"
    built = init_call(cls, [f"g{i}" for i in range(len(names))])
    lines.append(f"    return value if {same} else {built}")
    walk = _WALKS[key] = written(lines, {"keep": keep, "cls": cls})
    return walk


_WALKS: dict[tuple[type, frozenset[object], int], Callable[..., Any] | None] = {}
"""The :func:`fields_walk` functions made so far (the kit's own classes and frozensets: a
handful)."""


class ByIdentity:
    """What was worked out from frozen values, kept by each value's identity (the value kept
    too, so that its id is not reused while it is here), at most ``kept`` of them (then it
    starts over): the kit's walks meet the same model records step after step.

    Example::

        memo = ByIdentity(256)
        found = memo.get(record)
        if found is MISSING:
            found = memo.put(record, walk(record))
    """

    __slots__ = ("_found", "kept", "misses")

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._found: dict[int, tuple[Any, Any]] = {}
        self.misses = 0
        """Walks that met something they could not work out yet (:func:`known`: a name not
        minted yet): what a walk found is kept only when this did not grow during it."""

    def get(self, value: Any) -> Any:
        """What was kept for ``value``, or :data:`MISSING`."""
        seen = self._found.get(id(value))
        return seen[1] if seen is not None and seen[0] is value else MISSING

    def put(self, value: Any, found: T) -> T:
        """Keep ``found`` for ``value``; returns ``found``."""
        if len(self._found) >= self.kept:
            self._found.clear()
        self._found[id(value)] = (value, found)
        return found

    def clear(self) -> None:
        self._found.clear()

    def __len__(self) -> int:
        return len(self._found)


MISSING: Any = object()
"""What :meth:`ByIdentity.get` answers for a value it does not hold."""

_LEAVES = frozenset({str, int, float, bool, type(None)})
"""Types the walks below return at once (most of what they visit)."""


def agree(expected: Any, actual: Any) -> bool:
    """Structural equality where an :class:`Opaque` matches any real (non-forged) value."""
    kind = type(expected)
    if kind in _LEAVES:
        if kind is str or expected is None:
            return bool(expected == actual)
        if kind is bool or isinstance(actual, bool):
            return expected is actual
        # 1 and 1.0 are different JSON values; so are 0.0 and -0.0 (compare the text).
        if kind is int:
            return type(actual) is int and expected == actual
        return type(actual) is float and repr(expected) == repr(actual)
    if kind is Opaque:
        return actual is not None and not isinstance(actual, ForgedValue)
    same = _AGREERS.get(kind, MISSING)
    if same is MISSING:
        same = _AGREERS[kind] = _agreer(kind)
    if same is not None:
        return kind is type(actual) and bool(same(expected, actual))
    if kind is dict and type(actual) is dict:  # the plain case of the Mapping one below
        if len(expected) != len(actual):  # keys are unique: equal lengths and each key found
            return False                  # is the same set of keys
        for key, field in expected.items():
            if key not in actual:
                return False
            other = actual[key]
            if type(field) is str or field is None:
                if not field == other:
                    return False
            elif type(field) is int:
                if type(other) is not int or field != other:
                    return False
            elif not agree(field, other):  # as in the field loop above
                return False
        return True
    if isinstance(expected, tuple | list):
        return (
            isinstance(actual, tuple | list)
            and len(expected) == len(actual)
            and all(agree(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(expected, Mapping):
        return (
            isinstance(actual, Mapping)
            and set(expected) == set(actual)
            and all(agree(expected[k], actual[k]) for k in expected)
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return type(expected) is type(actual) and repr(expected) == repr(actual)
    return bool(expected == actual)


def _agreer(cls: type) -> Callable[[Any, Any], bool] | None:
    """:func:`agree` of two values of the attrs class ``cls``, field by eq field (None: not
    an attrs class): a ``str``, None or ``int`` field compared in line, as :func:`agree`
    compares them, anything else by :func:`agree`. Written out once per class."""
    names = _field_names(cls, _EQ_FIELDS, _eq)
    if names is None:
        return None
    lines = ["def same(expected, actual):"]
    for name in names:
        lines += [f"    field = expected.{name}",
                  f"    other = actual.{name}",
                  "    kind = type(field)",
                  "    if kind is str or field is None:",
                  "        if not field == other:",
                  "            return False",
                  "    elif kind is int:",
                  "        if type(other) is not int or field != other:",
                  "            return False",
                  "    elif not agree(field, other):",
                  "        return False"]
    lines.append("    return True")
    return written(lines, {"agree": agree})


_AGREERS: dict[type, Callable[[Any, Any], bool] | None] = {}
"""Each class :func:`agree` met, with its :func:`_agreer` (the kit's own classes: a model's
answers; a store's are compared only against them)."""


def harvest(expected: Any, actual: Any) -> list[tuple[Any, Any]]:
    """The (meaning, real value) pairs at the :class:`Opaque` places, in traversal order."""
    if isinstance(expected, Opaque):
        return [(expected.meaning, actual)]
    out: list[tuple[Any, Any]] = []
    kind = type(expected)
    if kind is str or expected is None:
        return out
    names = all_fields(kind)
    if names is not None and kind is type(actual):
        for name in names:
            field = getattr(expected, name)
            if type(field) not in _LEAVES:
                out += harvest(field, getattr(actual, name))
    elif isinstance(expected, tuple | list) and isinstance(actual, tuple | list):
        for e, a in zip(expected, actual, strict=False):
            out += harvest(e, a)
    return out


def names_opaque(value: Any, memo: ByIdentity) -> bool:
    """Is there an :class:`Opaque` whose meaning is a name (a ``str``) where :func:`harvest`
    looks (in attrs values, tuples and lists)? No harvest of ``value`` finds such a pair when
    there is not. ``memo`` keeps the answer for each attrs value (frozen: it cannot change): a
    model answers with the same records step after step."""
    kind = type(value)
    if kind in _LEAVES:
        return False
    if kind is Opaque or isinstance(value, Opaque):
        return isinstance(value.meaning, str)
    names = all_fields(kind)
    if names is not None:
        found = memo.get(value)
        if found is MISSING:
            found = memo.put(value, any(
                type(field) not in _LEAVES and names_opaque(field, memo)
                for field in map(value.__getattribute__, names)))
        return bool(found)
    if isinstance(value, tuple | list):
        return any(type(v) not in _LEAVES and names_opaque(v, memo) for v in value)
    return False


_ALIASES: dict[type, tuple[tuple[str, ...] | None, tuple[tuple[str, str], ...]]] = {}


def evolved(value: Any, changes: Mapping[str, Any]) -> Any:
    """``attrs.evolve(value, **changes)`` (``changes`` by field name), with the class's init
    fields looked up once per class: ``attrs.evolve`` looks them up on every call, and the
    walks here rebuild thousands of values per run."""
    cls = type(value)
    try:
        names, pairs = _ALIASES[cls]
    except KeyError:
        fields = [f for f in attrs.fields(cls) if f.init]
        if any(f.kw_only for f in fields):
            names, pairs = None, tuple((f.name, f.alias) for f in fields)
        else:  # by position: no keywords to build
            names, pairs = tuple(f.name for f in fields), ()
        _ALIASES[cls] = names, pairs
    if names is not None:
        return cls(*[changes[name] if name in changes else getattr(value, name)
                     for name in names])
    return cls(**{alias: changes[name] if name in changes else getattr(value, name)
                  for name, alias in pairs})


def known(value: Any, minted: Callable[[str], Any], memo: ByIdentity | None = None) -> Any:
    """Replace every :class:`Opaque` whose meaning is a name already minted (``minted(name)``
    returns the real value, or raises KeyError) by that real value: an identifier a store
    minted once must come back unchanged everywhere. Parts with nothing to replace are
    returned as they are (not copied).

    ``memo`` (a frozen attrs value -> what it became) lets a caller skip the walk of a value it
    met before: a model answers with the same records step after step. A value naming what is
    not minted yet is not kept (``memo.misses``), so what is kept stays right as names are
    minted; the caller empties it when a name it bound comes to mean another value."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is Opaque or isinstance(value, Opaque):
        if isinstance(value.meaning, str):
            try:
                return minted(value.meaning)
            except KeyError:
                if memo is not None:
                    memo.misses += 1
                return value
        return value
    walk = _KNOWN_WALKS.get(kind, MISSING)
    if walk is MISSING:
        walk = _KNOWN_WALKS[kind] = fields_walk(kind, _LEAVES, 2)
    if walk is not None:
        if memo is None:
            return walk(value, known, minted, None)
        found = memo.get(value)
        if found is MISSING:
            misses = memo.misses
            found = walk(value, known, minted, memo)
            if memo.misses == misses:
                memo.put(value, found)
        return found
    if kind is tuple or kind is list:
        items = [v if type(v) in _LEAVES else known(v, minted, memo) for v in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return tuple(items) if kind is tuple else items
    if kind is dict:
        pairs = {k: v if type(v) in _LEAVES else known(v, minted, memo)
                 for k, v in value.items()}
        return value if all(pairs[k] is v for k, v in value.items()) else pairs
    if isinstance(value, tuple):
        return tuple(known(v, minted, memo) for v in value)
    if isinstance(value, list):
        return [known(v, minted, memo) for v in value]
    if isinstance(value, dict):
        return {k: known(v, minted, memo) for k, v in value.items()}
    return value


def resolve(value: Any, replace: Callable[[Any], Any], copy: bool = True) -> Any:
    """Rebuild ``value`` with every :class:`Ref`/:class:`Forged` replaced by ``replace(it)``.

    Lists and dicts are always copied (a store may keep or change what it is given, never the
    kit's op); frozen values and tuples with nothing to replace inside are passed as they are.
    With ``copy`` False (for the model, which changes nothing it is given) lists and dicts with
    nothing to replace inside are passed as they are too.
    """
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is Ref or kind is Forged:
        return replace(value)
    walk = _RESOLVE_WALKS.get(kind, MISSING)
    if walk is MISSING:
        walk = _RESOLVE_WALKS[kind] = fields_walk(kind, _LEAVES, 2)
    if walk is not None:
        return walk(value, resolve, replace, copy)
    if kind is tuple:
        items = tuple(v if type(v) in _LEAVES else resolve(v, replace, copy) for v in value)
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if isinstance(value, tuple):
        return tuple(resolve(v, replace, copy) for v in value)
    if isinstance(value, list):
        listed = [resolve(v, replace, copy) for v in value]
        if not copy and all(new is old for new, old in zip(listed, value, strict=True)):
            return value
        return listed
    if isinstance(value, dict):
        mapped = {k: resolve(v, replace, copy) for k, v in value.items()}
        if not copy and all(mapped[k] is v for k, v in value.items()):
            return value
        return mapped
    return value


_KNOWN_WALKS: dict[type, Callable[..., Any] | None] = {}
_RESOLVE_WALKS: dict[type, Callable[..., Any] | None] = {}
"""Each class :func:`known` and :func:`resolve` met, with its :func:`fields_walk` (None: not
an attrs class): looked up by class alone on every value walked."""
