"""How the linearizability checker cuts a history: by record, then by quiescent instants.

**Partitions** (P-compositionality): linearizability is local, so when every op touches one
record the history splits by record and each part is checked on its own, from the model's
initial state, with its own time budget. ``partition(op)`` gives the part (default
``op.key()``: the invocation or task id). An op whose key is None touches more than one record
(a ``claim_next``, a submission that mints an id, a recovery scan): then the whole history is
one partition, ``key`` None ("global"). A custom ``partition`` must only split a history where
the contract's records are independent: adk-ledger by invocation id is; ledgence-tasks is not
(ids are minted from one counter).

**Segments**: within a partition, the history is cut where it is quiescent (every call made
before the cut has returned), so the search goes segment by segment from every state the
previous segment can end in, instead of over the whole partition at once.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from fencepost.spec.ops import Op

from ..history import Event, History


def default_partition(op: Op) -> Hashable | None:
    """The record ``op`` touches (``op.key()``); None: more than one (the whole history)."""
    return op.key()


def partitions(history: History | Sequence[Event],
               partition: Callable[[Op], Hashable | None] | None = None
               ) -> dict[Hashable | None, list[Event]]:
    """The history split by ``partition(op)`` (in order of first appearance); one partition
    keyed None when any op's key is None."""
    events = history.events if isinstance(history, History) else tuple(history)
    key_of = partition or default_partition
    parts: dict[Hashable | None, list[Event]] = {}
    for event in events:
        key = key_of(event.op)
        if key is None:
            return {None: list(events)}
        parts.setdefault(key, []).append(event)
    return parts


def segments(events: Sequence[Event]) -> list[list[Event]]:
    """``events`` cut where the history is quiescent: a cut goes before an event invoked after
    every determinate event invoked before it has returned (indeterminate events never return;
    they are carried over the cut). The bursts of a concurrent run are such segments."""
    ordered = sorted(events, key=lambda e: e.invoked)
    out: list[list[Event]] = []
    open_until: int | None = None
    for e in ordered:
        if not out or (open_until is not None and e.invoked > open_until):
            out.append([])
            open_until = None
        out[-1].append(e)
        if not e.indeterminate:
            assert e.completed is not None
            open_until = e.completed if open_until is None else max(open_until, e.completed)
    return out
