"""Outcomes as values: every call the kit makes becomes ``Ok(value)``, ``Err(code)`` or ``Crash``.

Comparing values (not exceptions) is what lets the kit diff a store against its model, save a
run as JSON and replay it.
"""

from __future__ import annotations

from typing import Any

import attrs

from .opaque import agree
from .values import decode, encode


@attrs.frozen
class Ok:
    """The operation succeeded and returned ``value`` (``None`` for ``ok`` without a payload)."""

    value: Any = None

    @property
    def code(self) -> str:
        return "ok"

    def __str__(self) -> str:
        return "ok" if self.value is None else f"ok({self.value!r})"


@attrs.frozen
class Err:
    """The operation was refused with the contract error ``code`` (the seed's own word)."""

    code: str
    detail: str = attrs.field(default="", eq=False)
    payload: Any = None

    def __str__(self) -> str:
        if self.payload is None:
            return f"error {self.code}"
        return f"error {self.code}({self.payload!r})"


@attrs.frozen
class Crash:
    """The adapter raised something that is not a contract error (a bug or a lost store)."""

    kind: str
    message: str = attrs.field(eq=False)

    @property
    def code(self) -> str:
        return f"crash:{self.kind}"

    def __str__(self) -> str:
        if self.kind == NOT_A_VALUE:
            return f"answered {self.message}"
        return f"raised {self.kind}: {self.message}" if self.message else f"raised {self.kind}"


NOT_A_VALUE = "NotAValue"
"""The kind of :class:`Crash` for an answer that holds no contract value (an object whose
``__eq__`` lies, say): the store did not answer in the contract's terms."""


Outcome = Ok | Err | Crash


def answered(name: str, outcome: Outcome) -> str:
    """``name answered <outcome>`` in words, or ``name raised <kind>: ...`` for a crash."""
    return f"{name} {outcome}" if isinstance(outcome, Crash) else f"{name} answered {outcome}"


def agrees(expected: Outcome, actual: Outcome) -> bool:
    """Does the store's answer match the model's? Opaque values in the model's answer match
    any real value (see :mod:`fencepost.spec.opaque`); numbers must match in type too."""
    return agree(expected, actual)


def outcome_to_json(outcome: Outcome) -> dict[str, Any]:
    """Serialize an outcome to a JSON-ready dict."""
    if isinstance(outcome, Ok):
        return {"ok": encode(outcome.value)}
    if isinstance(outcome, Err):
        return {"err": outcome.code, "detail": outcome.detail, "payload": encode(outcome.payload)}
    return {"crash": outcome.kind, "message": outcome.message}


def outcome_from_json(data: Any) -> Outcome:
    """Inverse of :func:`outcome_to_json`; ``ValueError`` for data it never writes."""
    if not isinstance(data, dict):
        raise ValueError(f"an outcome is a JSON object, not {data!r}")
    if "ok" in data:
        return Ok(decode(data["ok"]))
    if "err" in data:
        if not isinstance(data["err"], str):
            raise ValueError(f"error code {data['err']!r} is not a string")
        return Err(data["err"], str(data.get("detail", "")), decode(data.get("payload")))
    if "crash" in data:
        return Crash(str(data["crash"]), str(data.get("message", "")))
    raise ValueError(f"an outcome has one of ok, err, crash: {data!r}")
