"""The ``memory`` ledger: a thread-safe in-process store.

Durable within the process: a store opened again with the same ``env.namespace`` sees the same
records, which is what lets the kit check the ``durable`` clauses without a database. Records
are copied in and every answer out (:func:`detached`: a checkpoint, metadata or outcome nested to
any depth; an answer is a record's view), so that no caller can change stored data by mutating a
value; the store's own code reads them as stored (it never changes a record, it stores a new
one).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import attrs

from fencepost.adapters.memory import detached, forget, shelf
from fencepost.spec.adk_ledger import CONTRACT, StoredInvocation
from fencepost.spec.env import AdapterEnv

from .core import LedgerCore


@attrs.define
class _MemorySlot:
    rows: dict[str, StoredInvocation]
    invocation_id: str
    row: StoredInvocation | None

    def insert(self, row: StoredInvocation) -> None:
        self.rows[self.invocation_id] = detached(row)

    def update(self, row: StoredInvocation) -> None:
        self.rows[self.invocation_id] = detached(row)

    def remove(self) -> None:
        del self.rows[self.invocation_id]


class MemoryLedger(LedgerCore):
    """An ``adk-ledger`` store in a dict under one lock."""

    _copied = staticmethod(detached)  # its records are objects: every view copies them deep

    def __init__(self, env: AdapterEnv) -> None:
        super().__init__(env)
        self._shelf = shelf(CONTRACT, env.namespace)

    @contextmanager
    def _locked(self, invocation_id: str) -> Iterator[_MemorySlot]:
        with self._shelf.lock:
            yield _MemorySlot(self._shelf.records, invocation_id,
                              self._shelf.records.get(invocation_id))


class MemoryLedgerFactory:
    """``factory(env)`` for the built-in ``memory`` adapter; ``discard(env)`` forgets the run's
    records."""

    def __init__(self, store_class: type[MemoryLedger] = MemoryLedger) -> None:
        self.store_class = store_class

    def __call__(self, env: AdapterEnv) -> MemoryLedger:
        return self.store_class(env)

    def discard(self, env: AdapterEnv) -> None:
        forget(CONTRACT, env.namespace)

