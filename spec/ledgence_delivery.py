"""ledgence-tasks: sessions, leases, authority, acquisition, renewal, settlement, reads, history.

The seed's Rust types, one frozen class each, with the seed's field names. Tagged enums become
one class per variant (``AcquireEmpty``, ``AcquireAssigned``, ``AcquireOwnershipLost``...).
Import these through :mod:`fencepost.spec.ledgence_tasks`. The module is long for its
docstrings: every value the kit compares exactly shows its shape with an example.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .ledgence_submission import (
    MAX_DATA_DEPTH,
    SETTLEMENT_MAX_BYTES,
    Conflict,
    InvalidInput,
    Program,
    ProgramDescriptor,
    Scope,
    TaskInput,
    canonical_json,
    json_depth,
    validate_scope,
    validate_text,
)
from .values import value_class

__all__ = [
    "StoredAttempt",
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
    "KEEP_ALIVE",
    "DISPATCH",
    "CONFIRMED",
    "UNCONFIRMED",
    "validate_owner",
    "validate_acquire",
    "validate_renew",
    "validate_settle",
    "check_operation_id",
    "check_report_identity",
    "check_report_output",
    "check_settlement_size",
    "canonical_settlement",
    "same_settlement",
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


# --- validation of the delivery commands (before any storage is touched) -----------------------
#
# The seed's commands are Rust types: a negative number, a non-integer, an unknown intent,
# quiescence, failure kind or phase cannot be decoded at all, so the kit refuses them first
# (invalid_input). Values those types can hold are checked where the seed checks them: an
# owner's ids only by lookup and comparison (crates/ledgence-orchestration-api/src/delivery.rs
# LeaseOwner 124-132 at 1c9ece5 has no validation of its own), an operation id after the owner
# is found (crates/ledgence-orchestration-core/src/lifecycle.rs:80-81, 283-306 at 3abb9ee).


def _count(value: Any, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidInput(f"{what} must be an integer >= {minimum}")
    return value


def validate_owner(owner: Any) -> LeaseOwner:
    """A lease owner the seed's types can hold, with a valid scope: every owner call checks
    the scope first (``require_scope``: crates/ledgence-adapter-postgres/src/instance.rs:106-107
    at 50df11a). The four ids need only be strings and generation and consumer_id integers
    >= 0 (u32): an empty task or attempt id finds nothing (not_found), an empty lease or
    session id or generation 0 matches no attempt's owner (ownership_lost), as the seed's
    settle and confirm_quiescence answer; renew checks its session id (:func:`validate_renew`).
    """
    if not isinstance(owner, LeaseOwner):
        raise InvalidInput("owner must be a LeaseOwner")
    validate_scope(owner.scope)
    for what in ("task_id", "attempt_id", "lease_id", "worker_session_id"):
        if not isinstance(getattr(owner, what), str):
            raise InvalidInput(f"owner.{what} must be a string")
    _count(owner.generation, "generation", 0)
    _count(owner.consumer_id, "consumer_id", 0)
    return owner


def validate_acquire(command: Any) -> AcquireCommand:
    """Scope, then the session id and queue as text (an empty one is invalid_input:
    crates/ledgence-adapter-postgres/src/delivery.rs:11-13 at 50df11a); consumer_id and
    sequence integers >= 0 (u32, u64). Sequence 0 is well formed here (it answers out_of_order
    once the session is checked)."""
    if not isinstance(command, AcquireCommand):
        raise InvalidInput("command must be an AcquireCommand")
    validate_scope(command.scope)
    validate_text(command.queue, "queue")
    validate_text(command.worker_session_id, "worker_session_id")
    _count(command.consumer_id, "consumer_id", 0)
    _count(command.sequence, "sequence", 0)
    return command


def validate_renew(command: Any) -> RenewCommand:
    """The owner (:func:`validate_owner`) and its session id as text: renew checks that one
    before it locks the session (delivery.rs:199-200 at 50df11a); a sequence >= 0 (u64) and
    an intent of the seed's enum (the empty one is not)."""
    if not isinstance(command, RenewCommand):
        raise InvalidInput("command must be a RenewCommand")
    validate_owner(command.owner)
    validate_text(command.owner.worker_session_id, "worker_session_id")
    _count(command.sequence, "sequence", 0)
    if command.intent not in (KEEP_ALIVE, DISPATCH):
        raise InvalidInput("intent must be keep_alive or dispatch")
    return command


def _validate_context(context: Any) -> None:
    """Only the shape: the seed compares a report's context with the attempt's event and
    descriptor without checking it as text, so an empty task, attempt id or digest is a
    conflict (lifecycle.rs:295-300 at 3abb9ee; InvocationIdentity and Digest decode any
    string: crates/ledgence-worker-api/src/invocation.rs:4-27 at 21577c4, lib.rs:120-122 at
    00ac07f)."""
    if not isinstance(context, ExecutionContext) or not isinstance(context.program, Program):
        raise InvalidInput("report.context must be an ExecutionContext")
    for what in ("task_id", "attempt_id", "digest"):
        if not isinstance(getattr(context, what), str):
            raise InvalidInput(f"context.{what} must be a string")


def _validate_report(report: Any) -> None:
    """A report the seed's types can hold: process_id non-empty text (the seed's is a u32)
    and elapsed_ms >= 0 (u64: crates/ledgence-worker-api/src/execution.rs:34-42 at 1c9ece5);
    a failure's kind and phase of the seed's enums (execution.rs:44-52; lib.rs:51-65 at
    00ac07f), the empty ones included; its message any text, "" too."""
    if isinstance(report, ExecutionReport):
        _validate_context(report.context)
        validate_text(report.process_id, "process_id")
        if not isinstance(report.reused_process, bool):
            raise InvalidInput("reused_process must be a bool")
        _count(report.elapsed_ms, "elapsed_ms", 0)
        outcome = report.outcome
        if not isinstance(outcome, Mapping):
            raise InvalidInput("outcome must be a mapping")
        if outcome.get("status") == "success" and set(outcome) == {"status", "output"}:
            canonical_json(outcome["output"])
        elif outcome.get("status") == "failure" and set(outcome) == {"status", "kind",
                                                                       "message"}:
            if outcome["kind"] not in FAILURE_KINDS or not isinstance(outcome["message"], str):
                raise InvalidInput("a failure outcome needs a known kind and a message")
        else:
            raise InvalidInput('outcome must be {"status": "success", "output": ...} or '
                               '{"status": "failure", "kind": ..., "message": ...}')
    elif isinstance(report, ExecutionFailure):
        _validate_context(report.context)
        if report.kind not in FAILURE_KINDS:
            raise InvalidInput(f"failure kind must be one of {', '.join(FAILURE_KINDS)}")
        if report.phase not in FAILURE_PHASES:
            raise InvalidInput(f"failure phase must be one of {', '.join(FAILURE_PHASES)}")
        if not isinstance(report.message, str) or not isinstance(
                report.execution_may_have_started, bool):
            raise InvalidInput("a failure needs a message and execution_may_have_started")
        cleanup = report.cleanup_error
        if cleanup is not None and not (
                isinstance(cleanup, Mapping) and set(cleanup) == {"kind", "message"}
                and cleanup["kind"] in FAILURE_KINDS and isinstance(cleanup["message"], str)):
            raise InvalidInput('cleanup_error must be None or {"kind": <a failure kind>, '
                               '"message": <text>}')
    else:
        raise InvalidInput("report must be an ExecutionReport or an ExecutionFailure")


def canonical_settlement(command: SettleCommand) -> str:
    """The canonical JSON a settlement is matched (and size-limited) on: every field, keys
    sorted, 1 and 1.0 apart."""
    return canonical_json(attrs.asdict(command, recurse=True))


def same_settlement(a: SettleCommand, b: SettleCommand) -> bool:
    """Is ``b`` a canonically identical re-send of ``a``?"""
    return canonical_settlement(a) == canonical_settlement(b)


def validate_settle(command: Any) -> SettleCommand:
    """Shape and vocabularies, before the owner is looked up: the owner
    (:func:`validate_owner`), a quiescence of the seed's enum and a report its types can hold.
    The operation id and the 8 MiB limit are checked once the owner's attempt is found
    (:func:`check_operation_id`, :func:`check_settlement_size`)."""
    if not isinstance(command, SettleCommand):
        raise InvalidInput("command must be a SettleCommand")
    validate_owner(command.owner)
    if not isinstance(command.operation_id, str):
        raise InvalidInput("operation_id must be a string")
    if command.quiescence not in (CONFIRMED, UNCONFIRMED):
        raise InvalidInput("quiescence must be confirmed or unconfirmed")
    _validate_report(command.report)
    return command


def check_operation_id(command: SettleCommand) -> None:
    """The operation id is non-empty text; the seed checks it first among the report's checks,
    after the owner matched (lifecycle.rs:284 at 3abb9ee)."""
    validate_text(command.operation_id, "operation_id")


def check_report_output(command: SettleCommand) -> None:
    """A success report's output holds at most 64 nested containers; the seed checks it right
    after the operation id, before the report's identity (lifecycle.rs:287-289 at 3abb9ee:
    validate_task_output, crates/ledgence-orchestration-api/src/workflow.rs:28-35, then
    crates/ledgence-worker-api/src/wire.rs:33-57 at 9f0c292)."""
    report = command.report
    if isinstance(report, ExecutionReport) and report.outcome.get("status") == "success" and (
            json_depth(report.outcome["output"]) > MAX_DATA_DEPTH):
        raise InvalidInput(f"a success output nests deeper than {MAX_DATA_DEPTH} containers")


def check_settlement_size(command: SettleCommand) -> None:
    """At most 8 MiB canonically; the seed checks it after the report's identity
    (lifecycle.rs:301-306 at 3abb9ee)."""
    if len(canonical_settlement(command).encode("utf-8")) > SETTLEMENT_MAX_BYTES:
        raise InvalidInput("the settlement is larger than 8 MiB")


def check_report_identity(command: SettleCommand, descriptor: ProgramDescriptor) -> None:
    """The report must name the owner's task and attempt and the task's program and digest,
    an empty one included (the seed compares them as they are: lifecycle.rs:295-300 at
    3abb9ee); else :class:`Conflict`."""
    context = command.report.context
    owner = command.owner
    if (context.task_id, context.attempt_id) != (owner.task_id, owner.attempt_id):
        raise Conflict("the report names another task or attempt than its owner")
    if context.program != descriptor.program or context.digest != descriptor.digest:
        raise Conflict("the report names another program or digest than the task runs")
