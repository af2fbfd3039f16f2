"""The ``memory`` snodo-tasks store: a thread-safe in-process store.

Durable within the process: a store opened again with the same ``env.namespace`` sees the same
aggregates and honours the accesses and leases it issued, which is what lets the kit check the
``durable`` clauses without a database. Every operation holds the namespace's one lock.
Aggregates are copied in (:func:`detached`: what a save brings that is not already stored) and
every answer out (:class:`CopiedOut`), so that no caller can change stored data by mutating a
value; the store's own code gets a stored aggregate as a new shell with its own ``seen`` map
(it sets an aggregate's fields and adds to that map, never changes a value inside them).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import attrs

from fencepost.adapters.memory import CopiedOut, detached, forget, shelf
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.env import AdapterEnv

from .core import TasksCore
from .records import ACTIVE, Aggregate, Predicate


@attrs.define
class _MemoryTxn:
    tasks: dict[str, Aggregate]

    def load(self, task_id: str) -> Aggregate | None:
        found = self.tasks.get(task_id)
        if found is None:
            return None
        return Aggregate(found.scope, found.snapshot, found.claim, found.generation,
                         dict(found.seen))

    def insert(self, aggregate: Aggregate) -> None:
        if aggregate.task_id in self.tasks:
            raise spec.AlreadyExists(aggregate.task_id)
        self.tasks[aggregate.task_id] = detached(aggregate)

    def save(self, aggregate: Aggregate) -> None:
        self.tasks[aggregate.task_id] = _stored(aggregate, self.tasks.get(aggregate.task_id))

    def delete(self, task_id: str) -> None:
        self.tasks.pop(task_id, None)

    def lock_for_create(self) -> None:
        """The shelf's lock is already held."""

    def count_tasks(self) -> int:
        return len(self.tasks)

    def count_active(self, scope: str | None) -> int:
        return sum(
            1 for a in self.tasks.values()
            if a.scope == scope and a.snapshot.task.status in ACTIVE
        )

    def count_active_everywhere(self) -> int:
        return sum(1 for a in self.tasks.values() if a.snapshot.task.status in ACTIVE)

    def find_recoverable(self, now: int, recoverable: Predicate) -> str | None:
        candidates = [a for a in self.tasks.values() if recoverable(a, now)]
        if not candidates:
            return None
        first = min(candidates, key=lambda a: (a.snapshot.task.created_at, a.task_id))
        return first.task_id

    def expired_ids(self, now: int, expired: Predicate) -> list[str]:
        gone = [a for a in self.tasks.values() if expired(a, now)]
        gone.sort(key=lambda a: (a.snapshot.task.created_at + (a.snapshot.task.ttl_ms or 0),
                                 a.task_id))
        return [a.task_id for a in gone]


def _stored(aggregate: Aggregate, before: Aggregate | None) -> Aggregate:
    """``aggregate`` as it is stored: the values it still shares with the stored one it was
    loaded from (``before``: no caller holds them) kept, the rest copied. ``seen`` only grows,
    one entry per applied event, and each entry is a snapshot of the task: copying every
    entry on every save made a task's saves cost as much as its history."""
    if before is None:
        return detached(aggregate)
    old = before.seen
    return Aggregate(
        aggregate.scope,
        aggregate.snapshot if aggregate.snapshot is before.snapshot
        else detached(aggregate.snapshot),
        detached(aggregate.claim),
        aggregate.generation,
        {k: v if v is old.get(k) else detached(v) for k, v in aggregate.seen.items()})


class MemoryTasks(TasksCore, CopiedOut):
    """A ``snodo-tasks`` store in a dict under one lock."""

    PROTOCOL_METHODS = spec.PROTOCOL_METHODS

    def __init__(self, env: AdapterEnv) -> None:
        super().__init__(env)
        self._shelf = shelf(spec.CONTRACT, env.namespace)

    def _identity(self) -> str:
        return f"memory:{self.env.namespace}"

    @contextmanager
    def _transaction(self) -> Iterator[_MemoryTxn]:
        with self._shelf.lock:
            yield _MemoryTxn(self._shelf.records)


class MemoryTasksFactory:
    """``factory(env)`` for the built-in ``memory`` adapter; ``discard(env)`` forgets the run's
    tasks.

    Example::

        factory = MemoryTasksFactory()
        store = factory(AdapterEnv(clock=clock.now, namespace="run1"))
    """

    def __init__(self, store_class: type[MemoryTasks] = MemoryTasks) -> None:
        self.store_class = store_class

    def __call__(self, env: AdapterEnv) -> MemoryTasks:
        return self.store_class(env)

    def discard(self, env: AdapterEnv) -> None:
        forget(spec.CONTRACT, env.namespace)

