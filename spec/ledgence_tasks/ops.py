"""ledgence-tasks: the operations as data, one frozen :class:`~fencepost.spec.ops.Op` class per
protocol method, registered for the contract on import (:func:`~fencepost.spec.ops.operation`)."""

from __future__ import annotations

from typing import Any

import attrs

from ..opaque import Ref
from ..ops import Op, operation
from .delivery import AcquireCommand, LeaseOwner, RenewCommand, SettleCommand
from .discovery import ClaimCommand, TaskListQuery
from .protocol import CONTRACT
from .submission import ProgramDescriptor, Scope, SubmitCommand


class _TaskOp(Op):
    task_id: Any

    def key(self) -> str | None:
        tid = self.task_id.name if isinstance(self.task_id, Ref) else self.task_id
        # An id that is no string (an argument edge sends one) names no record.
        return tid if isinstance(tid, str) else None


@operation(CONTRACT, "open_session")
@attrs.frozen
class OpenSession(Op):
    scope: Scope
    queue: str
    concurrency: int


@operation(CONTRACT, "extend_session")
@attrs.frozen
class ExtendSession(Op):
    worker_session_id: Any


@operation(CONTRACT, "lookup_submission")
@attrs.frozen
class LookupSubmission(Op):
    scope: Scope
    idempotency_key: str


@operation(CONTRACT, "accept_resolved_submission")
@attrs.frozen
class AcceptResolvedSubmission(Op):
    command: SubmitCommand
    descriptor: ProgramDescriptor


@operation(CONTRACT, "status")
@attrs.frozen
class Status(_TaskOp):
    scope: Scope
    task_id: Any


@operation(CONTRACT, "result")
@attrs.frozen
class Result(_TaskOp):
    scope: Scope
    task_id: Any


@operation(CONTRACT, "inspect")
@attrs.frozen
class Inspect(_TaskOp):
    scope: Scope
    task_id: Any


@operation(CONTRACT, "history")
@attrs.frozen
class History(_TaskOp):
    scope: Scope
    task_id: Any
    after_sequence: int


@operation(CONTRACT, "cancel")
@attrs.frozen
class Cancel(_TaskOp):
    scope: Scope
    task_id: Any


@operation(CONTRACT, "inspect_attempt")
@attrs.frozen
class InspectAttempt(_TaskOp):
    scope: Scope
    task_id: Any
    attempt_id: Any


@operation(CONTRACT, "probe_acquisition")
@attrs.frozen
class ProbeAcquisition(Op):
    """``deadline_ms`` is store time: a deadline at or before now answers unavailable."""

    command: AcquireCommand
    finish_empty: bool
    deadline_ms: int


@operation(CONTRACT, "acquire")
@attrs.frozen
class Acquire(Op):
    command: AcquireCommand


class _OwnerOp(Op):
    def owner_of(self) -> Any:
        raise NotImplementedError

    def key(self) -> str | None:
        tid = getattr(self.owner_of(), "task_id", None)
        if isinstance(tid, Ref):
            return tid.name
        return tid if isinstance(tid, str) else None


@operation(CONTRACT, "renew")
@attrs.frozen
class Renew(_OwnerOp):
    command: RenewCommand

    def owner_of(self) -> Any:
        return getattr(self.command, "owner", None)


@operation(CONTRACT, "settle")
@attrs.frozen
class Settle(_OwnerOp):
    command: SettleCommand

    def owner_of(self) -> Any:
        return getattr(self.command, "owner", None)


@operation(CONTRACT, "confirm_quiescence")
@attrs.frozen
class ConfirmQuiescence(_OwnerOp):
    owner: LeaseOwner

    def owner_of(self) -> Any:
        return self.owner


@operation(CONTRACT, "list_tasks")
@attrs.frozen
class ListTasks(Op):
    scope: Scope
    query: TaskListQuery


@operation(CONTRACT, "claim_dispatch")
@attrs.frozen
class ClaimDispatch(_TaskOp):
    command: ClaimCommand

    @property
    def task_id(self) -> Any:
        return getattr(getattr(self.command, "dispatch", None), "task_id", None)


@operation(CONTRACT, "expire_batch")
@attrs.frozen
class ExpireBatch(Op):
    limit: int
