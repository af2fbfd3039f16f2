"""ledgence-tasks: validation of the delivery commands (acquire, renew, settle), before any
storage is touched, and the canonical form two settlements are matched on
(:func:`same_settlement`). Import these through :mod:`fencepost.spec.ledgence_tasks`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .delivery import (
    CONFIRMED,
    DISPATCH,
    FAILURE_KINDS,
    FAILURE_PHASES,
    KEEP_ALIVE,
    UNCONFIRMED,
    AcquireCommand,
    ExecutionContext,
    ExecutionFailure,
    ExecutionReport,
    LeaseOwner,
    RenewCommand,
    SettleCommand,
)
from .errors import Conflict, InvalidInput
from .submission import (
    MAX_DATA_DEPTH,
    SETTLEMENT_MAX_BYTES,
    U32_MAX,
    U64_MAX,
    Program,
    ProgramDescriptor,
    canonical_json,
    json_depth,
    validate_scope,
    validate_text,
)

# --- validation of the delivery commands (before any storage is touched) -----------------------
#
# The seed's commands are Rust types: a negative number, one past its type's largest (a u32's
# 2^32 - 1, a u64's 2^64 - 1), a non-integer, an unknown intent, quiescence, failure kind or
# phase cannot be decoded at all, so the kit refuses them first (invalid_input). Values those
# types can hold are checked where the seed checks them: an owner's ids only by lookup and
# comparison (crates/ledgence-orchestration-api/src/delivery.rs LeaseOwner 124-132 at 1c9ece5
# has no validation of its own), an operation id after the owner is found
# (crates/ledgence-orchestration-core/src/lifecycle.rs:80-81, 283-306 at 3abb9ee).


def _count(value: Any, what: str, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not (
            minimum <= value <= maximum):
        raise InvalidInput(f"{what} must be an integer in {minimum}..={maximum}")
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
    _count(owner.generation, "generation", 0, U32_MAX)
    _count(owner.consumer_id, "consumer_id", 0, U32_MAX)
    return owner


def validate_acquire_types(command: Any) -> AcquireCommand:
    """What the seed's types decode before any call runs: an AcquireCommand whose consumer_id
    and sequence are integers >= 0 (u32, u64) and whose queue and session id are strings. The
    rest (:func:`validate_acquire`) is checked inside the call, after probe_acquisition's
    deadline: the seed's ``probe_acquisition`` is ``run_until(deadline, ...)`` around
    ``probe_acquisition_once``, which validates (crates/ledgence-adapter-postgres/src/
    storage.rs at ea82c32; delivery.rs:11-13 at 50df11a)."""
    if not isinstance(command, AcquireCommand):
        raise InvalidInput("command must be an AcquireCommand")
    for what in ("queue", "worker_session_id"):
        if not isinstance(getattr(command, what), str):
            raise InvalidInput(f"{what} must be a string")
    _count(command.consumer_id, "consumer_id", 0, U32_MAX)
    _count(command.sequence, "sequence", 0, U64_MAX)
    return command


def validate_acquire(command: Any) -> AcquireCommand:
    """Scope, then the session id and queue as text (an empty one is invalid_input:
    crates/ledgence-adapter-postgres/src/delivery.rs:11-13 at 50df11a); consumer_id and
    sequence integers >= 0 (u32, u64). Sequence 0 is well formed here (it answers out_of_order
    once the session is checked)."""
    checked = validate_acquire_types(command)
    validate_scope(checked.scope)
    validate_text(checked.queue, "queue")
    validate_text(checked.worker_session_id, "worker_session_id")
    return checked


def validate_renew(command: Any) -> RenewCommand:
    """The owner (:func:`validate_owner`) and its session id as text: renew checks that one
    before it locks the session (delivery.rs:199-200 at 50df11a); a sequence >= 0 (u64) and
    an intent of the seed's enum (the empty one is not)."""
    if not isinstance(command, RenewCommand):
        raise InvalidInput("command must be a RenewCommand")
    validate_owner(command.owner)
    validate_text(command.owner.worker_session_id, "worker_session_id")
    _count(command.sequence, "sequence", 0, U64_MAX)
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
    a failure report's kind and phase of the seed's enums (execution.rs:44-52; lib.rs:51-65 at
    00ac07f), the empty ones included; its message any text, "" too. A completed report's
    application failure is the program's own: its kind and message any text, "" included
    (``ProgramOutcome::Failure { kind: String, message: String }`` in crates/ledgence-worker-
    api/src/lib.rs at 00ac07f; "Application error identifiers are user-defined, unlike worker
    error kinds": ``ApplicationError`` in crates/ledgence-orchestration-api/src/observation.rs
    at bd50243; the core's validate_report and finish never look at it: lifecycle.rs at
    3abb9ee)."""
    if isinstance(report, ExecutionReport):
        _validate_context(report.context)
        validate_text(report.process_id, "process_id")
        if not isinstance(report.reused_process, bool):
            raise InvalidInput("reused_process must be a bool")
        _count(report.elapsed_ms, "elapsed_ms", 0, U64_MAX)
        outcome = report.outcome
        if not isinstance(outcome, Mapping):
            raise InvalidInput("outcome must be a mapping")
        if outcome.get("status") == "success" and set(outcome) == {"status", "output"}:
            canonical_json(outcome["output"])
        elif outcome.get("status") == "failure" and set(outcome) == {"status", "kind",
                                                                       "message"}:
            if not isinstance(outcome["kind"], str) or not isinstance(outcome["message"], str):
                raise InvalidInput("a failure outcome's kind and message must be text")
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


def check_settlement_size(command: SettleCommand, canonical: str | None = None) -> None:
    """At most 8 MiB canonically (``canonical``: its :func:`canonical_settlement`, when the
    caller has it); the seed checks it after the report's identity (lifecycle.rs:301-306 at
    3abb9ee)."""
    text = canonical_settlement(command) if canonical is None else canonical
    if len(text.encode("utf-8")) > SETTLEMENT_MAX_BYTES:
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
