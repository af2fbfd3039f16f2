"""The ``ledgence-tasks`` contract: the ledgence ``TaskStore`` + ``RecoveryStore`` traits.

Work in progress (issue 4): the types, constants, errors, submission validation and canonical
matching are here; the clause catalogue, model, adapters and checks are not yet, so the CLI does
not offer this contract. Identifiers (task, run, attempt, lease, session ids) are minted by the
store; time is the store's (``env.clock()``, integer ms).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .ledgence_delivery import *  # noqa: F403 - this module is the contract's public face
from .ledgence_delivery import (
    AcquireCommand,
    AttemptSnapshot,
    Authority,
    LeaseOwner,
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
from .ledgence_submission import *  # noqa: F403
from .ledgence_submission import ProgramDescriptor, Scope, SubmitCommand


@runtime_checkable
class TaskStore(Protocol):
    """The seed's ``TaskStore`` trait, one method per operation (``claim_dispatch`` and
    ``list_tasks`` arrive with issue 5). Errors are this module's :class:`ContractError`
    subclasses; ``probe_acquisition`` takes the caller's deadline as ms of store time."""

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
    ) -> Any: ...

    def acquire(self, command: AcquireCommand) -> Any: ...

    def renew(self, command: RenewCommand) -> Authority: ...

    def settle(self, command: SettleCommand) -> SettleReply: ...

    def confirm_quiescence(self, owner: LeaseOwner) -> str: ...

    def cancel(self, scope: Scope, task_id: str) -> str: ...


@runtime_checkable
class RecoveryStore(Protocol):
    """The seed's ``RecoveryStore``: ``1 <= limit <= MAX_RECOVERY_BATCH``."""

    def expire_batch(self, limit: int) -> RecoveryProgress: ...


PROTOCOL_METHODS = ("open_session", "extend_session", "lookup_submission",
                    "accept_resolved_submission", "status", "result", "inspect",
                    "inspect_attempt", "history", "probe_acquisition", "acquire", "renew",
                    "settle", "confirm_quiescence", "cancel", "expire_batch")
