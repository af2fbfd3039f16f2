"""What the snodo-tasks stores keep and the storage interface the rules run on.

:class:`Aggregate` is everything stored for one task; :class:`Access` and :class:`Lease` are the
values a store mints (and recognises by exact type and ``store_id``); :class:`Txn` is the unit of
work a storage provides to :class:`~.core.TasksCore`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import attrs

from fencepost.spec import snodo_tasks as spec

ACTIVE = (spec.WORKING, spec.INPUT_REQUIRED)


@attrs.frozen
class Access:
    """What ``authorize`` mints: one action on one task id, in one scope, at one store."""

    store_id: str
    scope: str | None
    kind: str
    task_id: str


@attrs.frozen
class Lease:
    """What ``claim`` mints: the claim it stands for, fenced by generation and token."""

    store_id: str
    task_id: str
    owner_id: str
    token: str = attrs.field(repr=False)
    generation: int
    expires_at: float


@attrs.frozen
class Claim:
    """The stored side of a lease; ``store_id``: the boot of the store that granted it (a claim
    of an earlier boot is no longer live)."""

    owner_id: str
    token: str
    generation: int
    expires_at: float
    store_id: str = ""


@attrs.define
class Aggregate:
    """Everything stored for one task: removed as a whole by ``reap``."""

    scope: str | None
    snapshot: spec.Snapshot
    claim: Claim | None = None
    generation: int = 0
    seen: dict[str, tuple[spec.Event, spec.Transition]] = attrs.Factory(dict)

    @property
    def task_id(self) -> str:
        return self.snapshot.task.id


Predicate = Callable[[Aggregate, int], bool]


class Txn(Protocol):
    """One atomic unit of work on the store; every read holds its lock until the end."""

    def load(self, task_id: str) -> Aggregate | None: ...

    def insert(self, aggregate: Aggregate) -> None: ...

    def save(self, aggregate: Aggregate) -> None: ...

    def delete(self, task_id: str) -> None: ...

    def lock_for_create(self) -> None:
        """Serialize concurrent creates so that capacity is counted race-free."""

    def count_tasks(self) -> int: ...

    def count_active(self, scope: str | None) -> int: ...

    def count_active_everywhere(self) -> int:
        """The active tasks of every scope (what a faulty store's capacity check counts)."""

    def find_recoverable(self, now: int, recoverable: Predicate) -> str | None:
        """One recoverable task id (any scope), skipping rows other transactions hold."""

    def expired_ids(self, now: int, expired: Predicate) -> list[str]:
        """The expired ids in expiry order (created_at + ttl_ms, then id)."""


def parse_limit(options: Mapping[str, Any], name: str) -> int | None:
    """A capacity option: ``"infinity"`` (or missing) is ``None``, else an integer."""
    raw = str(options.get(name, "infinity")).strip()
    if raw == "infinity":
        return None
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"option {name}={raw!r}: use 'infinity' or a positive integer") from None
