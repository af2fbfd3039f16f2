"""What every reference model returns, and the context a step runs in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.spec.outcome import Outcome


@attrs.frozen
class Ctx:
    """The world around one step: the store's clock, the owners known dead, the options.

    ``now`` is the store-authoritative time (``env.clock()``) at the step; operations that take
    explicit time carry it in their own arguments.
    """

    now: int
    dead: frozenset[str] = frozenset()
    options: Mapping[str, str] = attrs.field(factory=dict)
    capabilities: frozenset[str] = frozenset()


@attrs.frozen
class Step:
    """The model's answer to one operation.

    ``clause`` decided the outcome (a mismatching outcome fails it); ``effect_clause`` governs
    the state afterwards (a mismatching observation after the step fails it).
    """

    outcome: Outcome
    state: Any
    clause: str
    effect_clause: str


def accepted(step: Step) -> bool:
    return step.outcome.code == "ok"


def field_diff(expected: Any, actual: Any) -> tuple[str, ...]:
    """Names of the attrs fields that differ between two values of the same class."""
    if type(expected) is not type(actual) or not attrs.has(type(expected)):
        return ("<value>",)
    return tuple(
        a.name
        for a in attrs.fields(type(expected))
        if getattr(expected, a.name) != getattr(actual, a.name)
    )


def options_with_defaults(choices: Any, given: Mapping[str, str]) -> dict[str, str]:
    """Fill in every choice's default and validate the given values."""
    known = {c.name: c for c in choices}
    for name in given:
        if name not in known:
            raise ValueError(
                f"unknown option {name!r}; this contract has {', '.join(sorted(known)) or 'none'}"
            )
    return {name: c.validate(given.get(name, c.default)) for name, c in known.items()}


def as_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return dict(value or {})
