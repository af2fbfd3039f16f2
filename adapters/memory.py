"""Process-wide shelves for the in-memory stores: data that outlives one store object.

A memory store opened again with the same namespace must see the same records (the ``durable``
capability); the shelf is where they live, with the one lock every operation holds.
"""

from __future__ import annotations

import threading
from typing import Any

import attrs


@attrs.define
class Shelf:
    """The records of one store (one contract, one namespace) and their lock."""

    records: dict[str, Any] = attrs.Factory(dict)
    lock: threading.Lock = attrs.Factory(threading.Lock)


_SHELVES: dict[tuple[str, str], Shelf] = {}
_SHELVES_LOCK = threading.Lock()


def shelf(contract: str, namespace: str) -> Shelf:
    """The shelf of ``contract``'s store in ``namespace``, made on first use."""
    with _SHELVES_LOCK:
        return _SHELVES.setdefault((contract, namespace), Shelf())


def forget(contract: str, namespace: str) -> None:
    """Drop a namespace's records (the end of a run, or of one check)."""
    with _SHELVES_LOCK:
        _SHELVES.pop((contract, namespace), None)
