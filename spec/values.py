"""JSON encoding of the contracts' value classes (frozen attrs classes registered by name)."""

from __future__ import annotations

from typing import Any, TypeVar

import attrs

_TYPES: dict[str, type] = {}
T = TypeVar("T", bound=type)


def value_class(cls: T) -> T:
    """Register an attrs class so that :func:`encode`/:func:`decode` round-trip it."""
    _TYPES[cls.__name__] = cls
    return cls


def encode(value: Any) -> Any:
    """Turn a value (attrs instances, tuples, dicts, scalars) into JSON-ready data."""
    if attrs.has(type(value)):
        fields = {a.name: encode(getattr(value, a.name)) for a in attrs.fields(type(value))}
        return {"__type__": type(value).__name__, **fields}
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return {"__opaque__": repr(value)}


def decode(data: Any) -> Any:
    """Inverse of :func:`encode` for registered classes; lists stay lists."""
    if isinstance(data, dict):
        if "__opaque__" in data:
            return data["__opaque__"]
        name = data.get("__type__")
        if name is not None:
            cls = _TYPES[name]
            return cls(**{k: decode(v) for k, v in data.items() if k != "__type__"})
        return {k: decode(v) for k, v in data.items()}
    if isinstance(data, list):
        return [decode(v) for v in data]
    return data
