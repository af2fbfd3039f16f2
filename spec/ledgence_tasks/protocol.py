"""ledgence-tasks: the contract's name, the capabilities a store may declare, and the protocol:
the seed's ``TaskStore`` and ``RecoveryStore`` traits (:class:`TaskStore`,
:class:`RecoveryStore`; one object implements both) and :data:`PROTOCOL_METHODS`."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .delivery import (
    AcquireCommand,
    AcquireReply,
    AttemptSnapshot,
    Authority,
    LeaseOwner,
    ProbeCompleted,
    ProbePending,
    RecordedHistoryEvent,
    RecoveryProgress,
    RenewCommand,
    SettleCommand,
    SettleReply,
    TaskResult,
    TaskSnapshot,
    TaskStatus,
    WorkerSession,
)
from .discovery import ClaimCommand, ClaimReply, TaskListQuery, TaskPage
from .submission import ProgramDescriptor, Scope, SubmitCommand

CONTRACT = "ledgence-tasks"

CAPABILITIES = {
    "durable": "calling the factory again with the same env reopens the same sessions, tasks "
    "and history",
    "concurrency": "the store may be called from several threads at once (race checks)",
    "dispatch": "claim_dispatch implements targeted claims, and the queue `dispatched` of every "
    "scope is routed to external dispatch (acquisition on it answers "
    "external_dispatch_required; only its tasks are claimed: a store with configurable routes "
    "binds that one before the scope's first task); without it, claim_dispatch must reject "
    "every claim with invalid_input and claim nothing, and `dispatched` is a queue like another",
    "fault_injection": "found, not declared: the store's `engine` attribute is the SQLAlchemy "
    "Engine all its transactions run on; the kit injects database failures through its event "
    "hooks (the FAULT clauses)",
}


@runtime_checkable
class TaskStore(Protocol):
    """The seed's ``TaskStore`` trait, one method per operation. Errors are this contract's
    :class:`ContractError` subclasses; ``probe_acquisition`` takes the caller's deadline as ms
    of store time. A store without targeted dispatch defines ``claim_dispatch`` to raise
    ``InvalidInput(UNSUPPORTED_DISPATCH)`` and does not declare the ``dispatch`` capability."""

    def claim_dispatch(self, command: ClaimCommand) -> ClaimReply: ...

    def list_tasks(self, scope: Scope, query: TaskListQuery) -> TaskPage: ...

    def open_session(self, scope: Scope, queue: str, concurrency: int) -> WorkerSession: ...

    def extend_session(self, worker_session_id: str) -> WorkerSession: ...

    def lookup_submission(self, scope: Scope, idempotency_key: str) -> TaskSnapshot | None: ...

    def accept_resolved_submission(
        self, command: SubmitCommand, descriptor: ProgramDescriptor
    ) -> TaskSnapshot: ...

    def status(self, scope: Scope, task_id: str) -> TaskStatus: ...

    def result(self, scope: Scope, task_id: str) -> TaskResult: ...

    def inspect(self, scope: Scope, task_id: str) -> TaskSnapshot: ...

    def inspect_attempt(self, scope: Scope, task_id: str, attempt_id: str) -> AttemptSnapshot: ...

    def history(
        self, scope: Scope, task_id: str, after_sequence: int
    ) -> list[RecordedHistoryEvent]: ...

    def probe_acquisition(
        self, command: AcquireCommand, finish_empty: bool, deadline_ms: int
    ) -> ProbeCompleted | ProbePending: ...

    def acquire(self, command: AcquireCommand) -> AcquireReply: ...

    def renew(self, command: RenewCommand) -> Authority: ...

    def settle(self, command: SettleCommand) -> SettleReply: ...

    def confirm_quiescence(self, owner: LeaseOwner) -> str: ...

    def cancel(self, scope: Scope, task_id: str) -> str: ...


@runtime_checkable
class RecoveryStore(Protocol):
    """The seed's ``RecoveryStore``: ``1 <= limit <= MAX_RECOVERY_BATCH``."""

    def expire_batch(self, limit: int) -> RecoveryProgress: ...


PROTOCOL_METHODS = ("claim_dispatch", "list_tasks", "open_session", "extend_session",
                    "lookup_submission",
                    "accept_resolved_submission", "status", "result", "inspect",
                    "inspect_attempt", "history", "probe_acquisition", "acquire", "renew",
                    "settle", "confirm_quiescence", "cancel", "expire_batch")
