"""snodo-tasks: the operations as data, one frozen :class:`~fencepost.spec.ops.Op` class per
protocol method, registered for the contract on import (:func:`~fencepost.spec.ops.operation`)."""

from __future__ import annotations

from typing import Any

import attrs

from ..ops import Op, operation
from .data import Action, Context, Event, Task, Work
from .protocol import CONTRACT


class _Keyed(Op):
    task_id: str

    def key(self) -> str | None:
        # An id that is no string (an argument edge sends one) names no record.
        return self.task_id if isinstance(self.task_id, str) else None


@operation(CONTRACT, "authorize")
@attrs.frozen
class Authorize(Op):
    context: Context
    action: Action


@operation(CONTRACT, "create")
@attrs.frozen
class Create(Op):
    task: Task
    work: Work
    access: Any

    def key(self) -> str | None:
        return self.task.id if isinstance(self.task.id, str) else None


@operation(CONTRACT, "get")
@attrs.frozen
class Get(_Keyed):
    task_id: str
    access: Any


@operation(CONTRACT, "claim")
@attrs.frozen
class Claim(_Keyed):
    task_id: str
    owner_id: str
    lease_ms: int


@operation(CONTRACT, "claim_next")
@attrs.frozen
class ClaimNext(Op):
    owner_id: str
    lease_ms: int


@operation(CONTRACT, "renew")
@attrs.frozen
class Renew(Op):
    lease: Any
    lease_ms: int


@operation(CONTRACT, "release")
@attrs.frozen
class Release(Op):
    lease: Any


@operation(CONTRACT, "transition")
@attrs.frozen
class TransitionOp(_Keyed):
    task_id: str
    expected_revision: int
    event: Event
    authority: Any


@operation(CONTRACT, "worker_snapshot")
@attrs.frozen
class WorkerSnapshot(_Keyed):
    task_id: str
    lease: Any


@operation(CONTRACT, "reap")
@attrs.frozen
class Reap(Op):
    pass
