"""snodo-tasks: the seed's guards at an argument's edges: what its ``is_integer`` admits
(:func:`integer`), and the words the catalogue's situations give a text or count argument's
edge values (:func:`text_edge`, :func:`count_edge`), which the model and scenarios name too."""

from __future__ import annotations

from typing import Any


def integer(value: Any) -> bool:
    """An integer as the seed's guards mean it (``is_integer``): ``True`` is none."""
    return isinstance(value, int) and not isinstance(value, bool)


def _a(arg: str) -> str:
    return f"an {arg}" if arg[0] in "aeiou" else f"a {arg}"


def text_edge(arg: str, value: Any) -> str | None:
    """None when ``value`` is a non-empty string; else the edge it is, as the catalogue's
    situations say it: ``"an empty owner"``, ``"an owner that is no string"``."""
    if isinstance(value, str) and value:
        return None
    return f"an empty {arg}" if value == "" else f"{_a(arg)} that is no string"


def count_edge(arg: str, value: Any) -> str | None:
    """None when ``value`` is a positive integer; else ``"a lease_ms of 0"``, ``"a negative
    lease_ms"`` or ``"a lease_ms that is no integer"`` (a float, a bool, a string)."""
    if not integer(value):
        return f"{_a(arg)} that is no integer"
    if value > 0:
        return None
    return f"{_a(arg)} of 0" if value == 0 else f"a negative {arg}"
