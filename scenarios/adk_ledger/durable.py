"""Reopening the store, with the situations of ADK-DURABLE-001 it puts to the test."""

from __future__ import annotations

from fencepost.spec import adk_ledger as spec

from ..harness import Harness


def reopen(h: Harness) -> None:
    """Close and reopen the store (every record read back), and count what was kept across:
    a live lease, whose owner must keep writing, and a finished record, whose outcome (the
    store's own, when normalized) must read back the same."""
    records = list(h.state.values())
    h.reopen()
    if any(r.token is not None and h.now < r.lease_until for r in records):
        h.reached("ADK-DURABLE-001", "a live lease kept")
    if any(r.phase in spec.FINISH_PHASES for r in records):
        h.reached("ADK-DURABLE-001", "a finished record kept")
