"""Exact JSON text for stored values, shared by the SQL stores.

Plain JSON would lose what the contracts compare: tuples would come back as lists and
non-string mapping keys as strings. A :class:`Codec` writes JSON where JSON is exact and tags
(``{"__t__": ...}``) where it is not; ints stay ints, floats stay floats (``-0.0`` included),
and only the value classes it was built with can come back.

Example::

    >>> codec = Codec([])
    >>> codec.loads(codec.dumps({"t": (1, 2.0), 3: None}))
    {'t': (1, 2.0), 3: None}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

TAG = "__t__"


class Codec:
    """Tagged JSON for plain data plus the attrs ``classes`` given (by class name)."""

    def __init__(self, classes: Iterable[type]) -> None:
        self.classes = {c.__name__: c for c in classes}

    def dump_value(self, value: Any) -> Any:
        """JSON-ready data that :meth:`load_value` turns back into an equal value of equal
        types; anything else raises ``TypeError``."""
        if value is None or isinstance(value, bool | int | float | str):
            return value
        cls = type(value)
        if self.classes.get(cls.__name__) is cls:
            fields = {a.name: self.dump_value(getattr(value, a.name)) for a in attrs.fields(cls)}
            return {TAG: cls.__name__, "v": fields}
        if isinstance(value, list):
            return [self.dump_value(v) for v in value]
        if isinstance(value, tuple):
            return {TAG: "tuple", "v": [self.dump_value(v) for v in value]}
        if isinstance(value, Mapping):
            if TAG not in value and all(isinstance(k, str) for k in value):
                return {k: self.dump_value(v) for k, v in value.items()}
            pairs = [[self.dump_value(k), self.dump_value(v)] for k, v in value.items()]
            return {TAG: "dict", "v": pairs}
        raise TypeError(f"cannot store a {cls.__name__}; use JSON data")

    def load_value(self, data: Any) -> Any:
        """The inverse of :meth:`dump_value`."""
        if isinstance(data, list):
            return [self.load_value(v) for v in data]
        if not isinstance(data, dict):
            return data
        tag = data.get(TAG)
        if tag is None:
            return {k: self.load_value(v) for k, v in data.items()}
        if tag == "tuple":
            return tuple(self.load_value(v) for v in data["v"])
        if tag == "dict":
            return {self.load_value(k): self.load_value(v) for k, v in data["v"]}
        return self.classes[tag](**{k: self.load_value(v) for k, v in data["v"].items()})

    def dumps(self, value: Any) -> str:
        """Exact JSON text (ASCII, so that any string survives every backend's text type)."""
        return json.dumps(self.dump_value(value), separators=(",", ":"), allow_nan=False)

    def loads(self, text: str) -> Any:
        return self.load_value(json.loads(text))
