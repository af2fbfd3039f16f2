"""ledgence-tasks: sessions, leases, authority, acquisition, renewal, settlement, reads, history.

The seed's Rust types, one frozen class each, with the seed's field names. Tagged enums become
one class per variant (``AcquireEmpty``, ``AcquireAssigned``, ``AcquireOwnershipLost``...).
Import these through :mod:`fencepost.spec.ledgence_tasks`. The module is long for its
docstrings: every value the kit compares exactly shows its shape with an example. The commands'
validation is in :mod:`.delivery_validation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..values import value_class
from .submission import (
    Program,
    ProgramDescriptor,
    Scope,
    TaskInput,
)

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
    """A task as ``inspect`` (and submission) answers it, compared field by field.

    A new submission reads ``state="queued"``, ``submitted_at == available_at == now``,
    ``terminal_at=None``, ``current_attempt_id=None``, ``attempt_count=0``,
    ``cancel_requested_at=None``, with ``input`` and ``descriptor`` as accepted (a replay
    answers the winner as it is now, never the loser's descriptor)::

        TaskSnapshot("task_1", "run_1", "key-1", input, descriptor, "queued", 1000, 1000,
                     None, None, 0, None)

    A claim makes it ``active`` with ``current_attempt_id`` the new attempt and
    ``attempt_count`` + 1; finishing clears ``current_attempt_id`` and sets ``terminal_at``
    (terminal states) or ``available_at = now + retry_delay_ms`` (a retry, back to queued).
    """

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
    """Computed fresh on every reply (acquire, a replay, renew), never stored.

    - ``expires_at``: the lease's expiry.
    - ``remaining_ms``: ``expires_at - now`` while the attempt is live, else 0.
    - ``cancel_requested``: a cancel was requested or ``now >= deadline``.
    - ``execution_remaining_ms``: ``deadline - now`` while live and not ``cancel_requested``,
      else 0 (the lease may last on for cleanup: the seed's ``authority()``).
    - ``renew_sequence``: the last accepted renewal's sequence, 0 before any.
    - ``dispatch_allowed``: live, not ``cancel_requested``, no settlement, and the last
      accepted renewal's intent was ``dispatch``.

    A claim at 1000 of a task with attempt_timeout_ms 300 000, then a live cancel at 2000::

        Authority(expires_at=61000, remaining_ms=60000, execution_remaining_ms=300000,
                  renew_sequence=0, cancel_requested=False, dispatch_allowed=False)
        Authority(expires_at=32000, remaining_ms=30000, execution_remaining_ms=0,  # renew
                  renew_sequence=1, cancel_requested=True, dispatch_allowed=False)
    """

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

    reply: AcquireReply
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
    """A failed execution. ``execution_may_have_started`` is the worker's word: an accepted
    failure with it true marks the attempt's own flag (see :class:`AttemptSnapshot`).
    ``cleanup_error`` is None or a second error of the seed's own shape, ``{"kind": <a
    failure kind>, "message": <text>}`` (``Option<Error>``:
    crates/ledgence-worker-api/src/execution.rs:54-64 at 1c9ece5, ``Error`` at lib.rs:67-71
    at 00ac07f); the task's outcome carries it back (:class:`TaskResult`)."""

    context: ExecutionContext
    kind: str
    message: str
    phase: str
    execution_may_have_started: bool
    cleanup_error: Mapping[str, Any] | None = None


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
    """``task_state`` is the task's state after the call (a replay: as it is now), e.g.
    ``SettleReply(SettleReceipt("op-1", "task_1", "att_1", 5000), False, "succeeded")``."""

    receipt: SettleReceipt
    already_accepted: bool
    task_state: str


# --- reads ------------------------------------------------------------------------------------


@value_class
@attrs.frozen
class TaskStatus:
    """``status`` (and each ``list_tasks`` item): the task's scheduling fields;
    ``latest_attempt_id`` is the last attempt made (it stays after the attempt finishes,
    None before the first claim)."""

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
    """``result``: the status and the task's logical outcome, a plain mapping compared
    exactly, as the seed's API serializes it (``TaskOutcome`` and ``TaskFailure`` tagged by
    ``kind``, variants in snake_case:
    crates/ledgence-orchestration-api/src/observation.rs:96-138 at bd50243). None while
    queued or active (a retry waiting included); once terminal::

        {"kind": "succeeded", "attempt_id": "att_1", "quiescence": "confirmed",
         "execution_may_have_started": True, "output": {"sent": 1}}
        {"kind": "failed", "attempt_id": "att_1", "quiescence": "confirmed",
         "execution_may_have_started": True,
         "failure": {"kind": "application",
                     "error": {"kind": "runtime", "message": "bounced"}}}
        {"kind": "failed", "attempt_id": "att_2", "quiescence": "unconfirmed",
         "execution_may_have_started": False,
         "failure": {"kind": "execution",
                     "error": {"kind": "integrity", "message": "integrity failed"},
                     "phase": "admission", "cleanup_error": None}}
        {"kind": "failed", "attempt_id": "att_3", "quiescence": "unconfirmed",
         "execution_may_have_started": True, "failure": {"kind": "attempt_lost"}}
        {"kind": "cancelled"}

    A finished outcome names the task's last attempt and that attempt's ``quiescence`` and
    ``execution_may_have_started`` as it ended (what :class:`AttemptSnapshot` reads; the
    seed's core takes them from the latest attempt: crates/ledgence-orchestration-core/src/
    observation.rs:96-99 at 3abb9ee). The failure is the completed report's application
    failure (observation.rs:120-138), the failure report's error, phase and cleanup error
    (``None`` when it had none; :class:`ExecutionFailure`; observation.rs:140-151), or
    ``{"kind": "attempt_lost"}`` for an attempt that expired without a report, which never
    carries quiescence confirmed (observation.rs:152-157). A cancelled task's outcome names
    no attempt (observation.rs:94).
    """

    task: TaskStatus
    outcome: Mapping[str, Any] | None


@value_class
@attrs.frozen
class AttemptSnapshot:
    """``inspect_attempt``: one attempt, compared field by field.

    A claim at 1000 (attempt_timeout_ms 300 000, a session far from expiry) makes::

        AttemptSnapshot(event, descriptor, Lease(owner, 61000), deadline=301000,
                        authority_deadline=331000, state="active",
                        execution_may_have_started=False, last_renewal=None,
                        quiescence="unconfirmed", settlement=None, finished_at=None)

    - ``quiescence`` is ``"unconfirmed"`` from the claim on (never None); an accepted
      settlement sets its own quiescence; ``confirm_quiescence`` sets ``"confirmed"``.
    - ``execution_may_have_started`` turns true on the first authorizing dispatch renewal,
      or when a settlement is accepted with a completed report (an
      :class:`ExecutionReport`), or with an :class:`ExecutionFailure` whose own flag is
      true; once true it stays true.
    - ``last_renewal`` is the last accepted :class:`RenewCommand`; ``settlement`` the
      accepted :class:`SettleCommand` as sent.
    - ``state`` ends as succeeded, failed, cancelled or lost, with ``finished_at = now``.
    """

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


@attrs.frozen
class StoredAttempt:
    """What a store keeps for one attempt (the record schema, declared once for the stores and
    the model): the snapshot ``inspect_attempt`` answers and the receipt of its accepted
    settlement (``None`` until one is accepted), which a replayed settlement answers again."""

    snapshot: AttemptSnapshot
    receipt: SettleReceipt | None = None

    @property
    def task_id(self) -> str:
        return self.snapshot.event.task_id

    @property
    def attempt_id(self) -> str:
        return self.snapshot.event.attempt_id

    @property
    def owner(self) -> LeaseOwner:
        return self.snapshot.lease.owner


@value_class
@attrs.frozen
class HistoryEvent:
    """One transition: ``reason`` is one of :data:`HISTORY_REASONS`, ``at`` the store time
    of the transition, ``attempt_id`` the attempt it concerns (None for ``submitted`` and
    for a queued task's ``cancel_requested`` and ``cancelled``). A claim at 1000 then a
    confirmed success at 5000 read::

        RecordedHistoryEvent(1, HistoryEvent("task_1", None, 0, "submitted"))
        RecordedHistoryEvent(2, HistoryEvent("task_1", "att_1", 1000, "claimed"))
        RecordedHistoryEvent(3, HistoryEvent("task_1", "att_1", 5000, "report_accepted"))
        RecordedHistoryEvent(4, HistoryEvent("task_1", "att_1", 5000, "succeeded"))
    """

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
