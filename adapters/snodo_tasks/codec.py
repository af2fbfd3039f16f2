"""Exact JSON text for a task aggregate, for stores that keep it in a column.

Plain JSON would lose what the contract compares: tuples (``retry_policy``) would come back as
lists and non-string mapping keys as strings. So values are written as JSON where JSON is
exact, and tagged (``{"__tuple__": ...}``, see :mod:`fencepost.spec.values`) where it is not;
ints stay ints, floats stay floats.
"""

from __future__ import annotations

import json

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.values import Codec

from .records import Aggregate, Claim

CODEC = Codec([spec.Task, spec.Work, spec.Snapshot, spec.Event, spec.Transition, Claim])
dump_value, load_value = CODEC.dump_value, CODEC.load_value


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
