"""ledgence-tasks: sessions, leases, authority, acquisition, renewal, settlement, reads, history.

The seed's Rust types, one frozen class each, with the seed's field names. Tagged enums become
one class per variant (``AcquireEmpty``, ``AcquireAssigned``, ``AcquireOwnershipLost``...).
Import these through :mod:`fencepost.spec.ledgence_tasks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .ledgence_submission import Program, ProgramDescriptor, Scope, TaskInput
from .values import value_class

__all__ = [
    "RETRYABLE_FAILURE_KINDS",
    "FAILURE_KINDS",
    "FAILURE_PHASES",
    "HISTORY_REASONS",
    "TaskSnapshot",
    "WorkerSession",
    "LeaseOwner",
    "Lease",
    "Authority",
    "AcquireCommand",
    "AttemptRef",
    "AssignmentEvent",
    "Assignment",
    "AcquireEmpty",
    "AcquireAssigned",
    "AcquireOwnershipLost",
    "AcquireReply",
    "ProbeCompleted",
    "ProbePending",
    "RenewCommand",
    "ExecutionContext",
    "ExecutionReport",
    "ExecutionFailure",
    "SettleCommand",
    "SettleReceipt",
    "SettleReply",
    "TaskStatus",
    "TaskResult",
    "AttemptSnapshot",
    "HistoryEvent",
    "RecordedHistoryEvent",
    "RecoveryProgress",
]

KEEP_ALIVE, DISPATCH = "keep_alive", "dispatch"
CONFIRMED, UNCONFIRMED = "confirmed", "unconfirmed"
RETRYABLE_FAILURE_KINDS = ("unavailable", "io", "capacity", "runtime", "timed_out", "cancelled")
FAILURE_KINDS = ("invalid_input", "not_found", "integrity", "incompatible", "unavailable",
                 "cancelled", "timed_out", "runtime", "protocol", "io", "capacity")
FAILURE_PHASES = ("admission", "preparation", "startup", "execution", "cleanup")
HISTORY_REASONS = ("submitted", "claimed", "dispatch_authorized", "cancel_requested",
                   "cancelled", "report_accepted", "cleanup_confirmed", "succeeded", "failed",
                   "retry_scheduled", "lease_expired")


# --- tasks and sessions ------------------------------------------------------------------------


@value_class
@attrs.frozen
class TaskSnapshot:
    task_id: str
    run_id: str
    idempotency_key: str
    input: TaskInput
    descriptor: ProgramDescriptor
    state: str
    submitted_at: int
    available_at: int
    terminal_at: int | None
    current_attempt_id: str | None
    attempt_count: int
    cancel_requested_at: int | None


@value_class
@attrs.frozen
class WorkerSession:
    """Consumers are numbered 0..concurrency-1; ``expires_at`` = open/extend time + 24 h."""

    id: str
    scope: Scope
    queue: str
    concurrency: int
    expires_at: int


# --- leases and authority ---------------------------------------------------------------------


@value_class
@attrs.frozen
class LeaseOwner:
    """Every owner-carrying call must match all of it exactly (else ownership_lost)."""

    scope: Scope
    task_id: str
    attempt_id: str
    lease_id: str
    generation: int
    worker_session_id: str
    consumer_id: int


@value_class
@attrs.frozen
class Lease:
    owner: LeaseOwner
    expires_at: int


@value_class
@attrs.frozen
class Authority:
    """Computed fresh on every reply (see the notes for each field's rule)."""

    expires_at: int
    remaining_ms: int
    execution_remaining_ms: int
    renew_sequence: int
    cancel_requested: bool
    dispatch_allowed: bool


# --- acquisition ------------------------------------------------------------------------------


@value_class
@attrs.frozen
class AcquireCommand:
    scope: Scope
    queue: str
    worker_session_id: str
    consumer_id: int
    sequence: int


@value_class
@attrs.frozen
class AttemptRef:
    task_id: str
    attempt_id: str


@value_class
@attrs.frozen
class AssignmentEvent:
    """The invocation event handed to the worker (the seed's CloudEvent, its Ledgence fields)."""

    id: str
    task_id: str
    run_id: str
    attempt_id: str
    attempt_no: int
    scope: Scope
    data: Any


@value_class
@attrs.frozen
class Assignment:
    descriptor: ProgramDescriptor
    event: AssignmentEvent
    lease: Lease
    authority: Authority
    attempt_deadline: int


@value_class
@attrs.frozen
class AcquireEmpty:
    sequence: int


@value_class
@attrs.frozen
class AcquireAssigned:
    sequence: int
    assignment: Assignment


@value_class
@attrs.frozen
class AcquireOwnershipLost:
    """A replay whose assignment is no longer live: a reply, not an error."""

    sequence: int
    assignment: AttemptRef


AcquireReply = AcquireEmpty | AcquireAssigned | AcquireOwnershipLost


@value_class
@attrs.frozen
class ProbeCompleted:
    """``kind``: replayed, claimed or finalized_empty."""

    reply: Any
    kind: str


@value_class
@attrs.frozen
class ProbePending:
    """Nothing to claim and ``finish_empty`` false: every mutation rolled back."""

    session_remaining_ms: int


# --- renewal and settlement -------------------------------------------------------------------


@value_class
@attrs.frozen
class RenewCommand:
    owner: LeaseOwner
    sequence: int
    intent: str  # keep_alive | dispatch


@value_class
@attrs.frozen
class ExecutionContext:
    """Identity a report must repeat exactly (else conflict)."""

    task_id: str
    attempt_id: str
    program: Program
    digest: str


@value_class
@attrs.frozen
class ExecutionReport:
    """A completed execution; ``outcome`` is ``{"status": "success", "output": ...}`` or
    ``{"status": "failure", "kind": ..., "message": ...}`` (an application failure)."""

    context: ExecutionContext
    process_id: str
    reused_process: bool
    outcome: Mapping[str, Any]
    elapsed_ms: int


@value_class
@attrs.frozen
class ExecutionFailure:
    context: ExecutionContext
    kind: str
    message: str
    phase: str
    execution_may_have_started: bool
    cleanup_error: str | None = None


@value_class
@attrs.frozen
class SettleCommand:
    """``report`` is an :class:`ExecutionReport` (completed) or :class:`ExecutionFailure`."""

    owner: LeaseOwner
    operation_id: str
    report: ExecutionReport | ExecutionFailure
    quiescence: str  # confirmed | unconfirmed


@value_class
@attrs.frozen
class SettleReceipt:
    operation_id: str
    task_id: str
    attempt_id: str
    accepted_at: int


@value_class
@attrs.frozen
class SettleReply:
    receipt: SettleReceipt
    already_accepted: bool
    task_state: str


# --- reads ------------------------------------------------------------------------------------


@value_class
@attrs.frozen
class TaskStatus:
    scope: Scope
    task_id: str
    run_id: str
    queue: str
    correlation_key: str | None
    state: str
    attempt_count: int
    current_attempt_id: str | None
    latest_attempt_id: str | None
    submitted_at: int
    available_at: int
    terminal_at: int | None
    cancel_requested_at: int | None


@value_class
@attrs.frozen
class TaskResult:
    """``outcome``: None while queued or active; else ``{"kind": "succeeded" | "failed" |
    "cancelled", ...}`` as the notes describe."""

    task: TaskStatus
    outcome: Mapping[str, Any] | None


@value_class
@attrs.frozen
class AttemptSnapshot:
    event: AssignmentEvent
    descriptor: ProgramDescriptor
    lease: Lease
    deadline: int
    authority_deadline: int
    state: str
    execution_may_have_started: bool
    last_renewal: RenewCommand | None
    quiescence: str | None
    settlement: SettleCommand | None
    finished_at: int | None


@value_class
@attrs.frozen
class HistoryEvent:
    task_id: str
    attempt_id: str | None
    at: int
    reason: str


@value_class
@attrs.frozen
class RecordedHistoryEvent:
    """Sequences are per task, start at 1 and are contiguous."""

    sequence: int
    event: HistoryEvent


@value_class
@attrs.frozen
class RecoveryProgress:
    examined: int
    expired: int
