"""The records of the ``snodo-tasks`` reference model: its state and what it stores.

State: ``task_id -> Agg`` (scope, snapshot, claim, generation, seen events), with the count of
creates and the event ids of reaped tasks. Accesses and leases are represented by their meaning
(:class:`AccessM`, :class:`LeaseM`); the harness binds them to the store's real opaque values.
The rules that step this state are in :mod:`.steps`; the time predicates every rule and
situation reads (:func:`expired`, :func:`live`, :func:`recoverable`) are here with the records.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from fencepost.spec import snodo_tasks as spec

MAIN = "main"  # the store under test; leases/accesses of another store carry another name
BEFORE_REOPEN = "main, before a reopen"
"""The store of an access or lease the store under test issued before it was last reopened:
void, as another store's (the seed's durable store fences every value of an earlier boot)."""


def foreign_clause(store: str) -> str:
    """The clause a store breaks by taking a value of ``store`` (not the current ``MAIN``)."""
    return "SNODO-DURABLE-001" if store == BEFORE_REOPEN else "SNODO-AUTH-004"


@attrs.frozen
class AccessM:
    store: str
    scope: str | None
    kind: str
    task_id: str


@attrs.frozen
class LeaseM:
    store: str
    task_id: str
    owner_id: str
    generation: int
    expires_at: float  # integer ms; 1 us past one after same_expiry_renewal=successor
    incarnation: int = 0  # which creation of task_id (a reaped id can be created again)


@attrs.frozen
class ClaimM:
    owner_id: str
    generation: int
    expires_at: float


@attrs.frozen
class Agg:
    scope: str | None
    snapshot: spec.Snapshot
    claim: ClaimM | None = None
    generation: int = 0
    seen: Mapping[str, tuple[spec.Event, spec.Transition]] = attrs.field(factory=dict)
    incarnation: int = 0


class State(dict[str, Agg]):
    """``task_id -> Agg``, plus how many creates ever happened (incarnation numbers). Treated
    as immutable: every step returns a new one."""

    creates: int = 0
    # event ids seen by reaped incarnations, per task id: a store that keeps them is caught
    ghosts: Mapping[str, frozenset[str]] = {}

    def with_(self, changes: Mapping[str, Agg], drop: tuple[str, ...] = (),
              creates: int | None = None) -> State:
        new = State({k: v for k, v in self.items() if k not in drop})
        new.update(changes)
        new.creates = self.creates if creates is None else creates
        new.ghosts = {**self.ghosts, **{t: frozenset(self[t].seen) for t in drop}}
        return new


EMPTY = State()


def expired(snap: spec.Snapshot, now: int) -> bool:
    ttl = snap.task.ttl_ms
    return ttl is not None and now >= snap.task.created_at + ttl


def live(agg: Agg, now: int) -> bool:
    return agg.claim is not None and now < agg.claim.expires_at


def recoverable(agg: Agg, now: int) -> bool:
    s = agg.snapshot
    due = s.retry_at is None or now >= s.retry_at
    return s.task.status not in spec.TERMINAL and s.work is not None and due and not live(agg, now)
