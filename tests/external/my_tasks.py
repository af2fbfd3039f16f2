"""A snodo-tasks factory defined outside fencepost, as an adapter author's module would be.

    PYTHONPATH=tests/external fencepost check snodo-tasks --adapter my_tasks:make_tasks

It builds on the kit's in-memory store to keep the example short; your factory returns your
own store object with the ten methods of ``fencepost.spec.snodo_tasks.TasksStore``.
"""

from __future__ import annotations

from fencepost import AdapterEnv
from fencepost.adapters.snodo_tasks.memory import MemoryTasks


def make_tasks(env: AdapterEnv) -> MemoryTasks:
    return MemoryTasks(env)


class LeakyTasks(MemoryTasks):
    """A store whose get ignores the tenant: foreign scopes read each other's tasks."""

    def _same_scope(self, access, aggregate) -> bool:  # type: ignore[no-untyped-def]
        return True


def make_leaky_tasks(env: AdapterEnv) -> LeakyTasks:
    return LeakyTasks(env)
