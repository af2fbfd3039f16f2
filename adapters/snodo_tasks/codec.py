"""Exact JSON text for a task aggregate, for stores that keep it in a column.

Plain JSON would lose what the contract compares: tuples (``retry_policy``) would come back as
lists and non-string mapping keys as strings. So values are written as JSON where JSON is
exact, and tagged (``{"__t__": ...}``) where it is not; ints stay ints, floats stay floats.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.spec import snodo_tasks as spec

from .core import Aggregate, Claim

TAG = "__t__"
_CLASSES: dict[str, type] = {
    c.__name__: c
    for c in (spec.Task, spec.Work, spec.Snapshot, spec.Event, spec.Transition, Claim)
}


def dump_value(value: Any) -> Any:
    """JSON-ready data that :func:`load_value` turns back into an equal value of equal types."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    name = type(value).__name__
    if _CLASSES.get(name) is type(value):
        fields = {f: dump_value(getattr(value, f)) for f in _names(type(value))}
        return {TAG: name, "v": fields}
    if isinstance(value, list):
        return [dump_value(v) for v in value]
    if isinstance(value, tuple):
        return {TAG: "tuple", "v": [dump_value(v) for v in value]}
    if isinstance(value, Mapping):
        if TAG not in value and all(isinstance(k, str) for k in value):
            return {k: dump_value(v) for k, v in value.items()}
        return {TAG: "dict", "v": [[dump_value(k), dump_value(v)] for k, v in value.items()]}
    raise TypeError(f"cannot store a {type(value).__name__} in a snodo task; use JSON data")


def _names(cls: type) -> list[str]:
    return [a.name for a in attrs.fields(cls)]


def load_value(data: Any) -> Any:
    if isinstance(data, list):
        return [load_value(v) for v in data]
    if not isinstance(data, dict):
        return data
    tag = data.get(TAG)
    if tag is None:
        return {k: load_value(v) for k, v in data.items()}
    if tag == "tuple":
        return tuple(load_value(v) for v in data["v"])
    if tag == "dict":
        return {load_value(k): load_value(v) for k, v in data["v"]}
    return _CLASSES[tag](**{k: load_value(v) for k, v in data["v"].items()})


def dump_aggregate(aggregate: Aggregate) -> str:
    return json.dumps(
        {
            "scope": aggregate.scope,
            "snapshot": dump_value(aggregate.snapshot),
            "claim": dump_value(aggregate.claim),
            "generation": aggregate.generation,
            "seen": {k: dump_value(v) for k, v in aggregate.seen.items()},
        },
        separators=(",", ":"),
    )


def load_aggregate(text: str) -> Aggregate:
    data = json.loads(text)
    return Aggregate(
        scope=data["scope"],
        snapshot=load_value(data["snapshot"]),
        claim=load_value(data["claim"]),
        generation=data["generation"],
        seen={k: load_value(v) for k, v in data["seen"].items()},
    )


def dump_scope(scope: str | None) -> str:
    """The scope as JSON text: ``null`` is a scope of its own, distinct from ``"null"``."""
    return json.dumps(scope)
