"""Values only a store can mint (accesses, leases) and how the kit refers to them.

A store hands out opaque values; the model cannot predict their bytes, only what they stand
for. So the model answers with :class:`Opaque` placeholders that match any real value, the
harness binds each real value to the model's meaning under a name, and later operations name it
with :class:`Ref`. :class:`Forged` asks for a value nobody issued (an attacker's guess).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs


@attrs.frozen
class Opaque:
    """In a model's answer: "some value the store mints here", standing for ``meaning``."""

    meaning: Any


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
class ForgedMeaning:
    """What the model receives for :class:`Forged`: a meaning that validates nowhere."""

    label: str


def agree(expected: Any, actual: Any) -> bool:
    """Structural equality where an :class:`Opaque` matches any real (non-forged) value."""
    if isinstance(expected, Opaque):
        return actual is not None and not isinstance(actual, ForgedValue)
    if attrs.has(type(expected)):
        return type(expected) is type(actual) and all(
            agree(getattr(expected, f.name), getattr(actual, f.name))
            for f in attrs.fields(type(expected))
            if f.eq
        )
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
        # 1 and 1.0 are different JSON values; so are 0.0 and -0.0 (compare the text).
        return type(expected) is type(actual) and repr(expected) == repr(actual)
    return bool(expected == actual)


def harvest(expected: Any, actual: Any) -> list[tuple[Any, Any]]:
    """The (meaning, real value) pairs at the :class:`Opaque` places, in traversal order."""
    if isinstance(expected, Opaque):
        return [(expected.meaning, actual)]
    out: list[tuple[Any, Any]] = []
    if attrs.has(type(expected)) and type(expected) is type(actual):
        for f in attrs.fields(type(expected)):
            out += harvest(getattr(expected, f.name), getattr(actual, f.name))
    elif isinstance(expected, tuple | list) and isinstance(actual, tuple | list):
        for e, a in zip(expected, actual, strict=False):
            out += harvest(e, a)
    return out


def known(value: Any, minted: Callable[[str], Any]) -> Any:
    """Replace every :class:`Opaque` whose meaning is a name already minted (``minted(name)``
    returns the real value, or raises KeyError) by that real value: an identifier a store
    minted once must come back unchanged everywhere."""
    if isinstance(value, Opaque):
        if isinstance(value.meaning, str):
            try:
                return minted(value.meaning)
            except KeyError:
                return value
        return value
    if attrs.has(type(value)):
        changes = {f.name: known(getattr(value, f.name), minted) for f in attrs.fields(
            type(value)) if f.init}
        return attrs.evolve(value, **changes)
    if isinstance(value, tuple):
        return tuple(known(v, minted) for v in value)
    if isinstance(value, list):
        return [known(v, minted) for v in value]
    if isinstance(value, dict):
        return {k: known(v, minted) for k, v in value.items()}
    return value


def resolve(value: Any, replace: Callable[[Any], Any]) -> Any:
    """Rebuild ``value`` with every :class:`Ref`/:class:`Forged` replaced by ``replace(it)``."""
    if isinstance(value, Ref | Forged):
        return replace(value)
    if attrs.has(type(value)):
        changes = {
            f.name: resolve(getattr(value, f.name), replace)
            for f in attrs.fields(type(value))
            if f.init
        }
        return attrs.evolve(value, **changes)
    if isinstance(value, tuple):
        return tuple(resolve(v, replace) for v in value)
    if isinstance(value, list):
        return [resolve(v, replace) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, replace) for k, v in value.items()}
    return value
