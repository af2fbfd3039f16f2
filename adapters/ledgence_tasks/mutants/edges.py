"""The ledgence-tasks mutants wrong only at an argument's edge.
Over 500 lines: a catalogue of small one-bug classes, one per edge value, grouped by the
operations they bend; the rest of the ledgence mutants are in modules of their own.

Each answers one edge value other than the seed does: an empty string taken for a missing
value, a zero read as "not given", a negative number the seed's unsigned types could not hold,
a bool taken for an integer, or an owner or report checked as text where the seed only
compares it. Every edge is sent by the ``edges_of_*`` scenarios
(:mod:`fencepost.scenarios.ledgence_tasks.edges`), so each store is caught by its clause at
every profile. Most bend one of the correct core's ``_check_*`` hooks: they check a stand-in
for the edge value and then carry on with the value itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs

from fencepost.adapters.ledgence_tasks.core import (
    Cursor,
    LedgenceCore,
    StoredAttempt,
    Txn,
)
from fencepost.adapters.mutants.base import Mutant
from fencepost.spec import ledgence_tasks as spec


def _negative(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


def _past(value: Any, maximum: int) -> bool:
    """An integer past ``maximum``, the largest value of the seed's type for it."""
    return isinstance(value, int) and not isinstance(value, bool) and value > maximum


def _past_u32(value: Any) -> bool:
    return _past(value, spec.U32_MAX)


def is_zero(value: Any) -> bool:
    """An integer 0: not False, not 0.0 (each equal to 0, and refused by the correct store)."""
    return isinstance(value, int) and not isinstance(value, bool) and value == 0


# --- sessions and submission -------------------------------------------------------------------


class _OpensAsGiven(LedgenceCore):
    """A store whose open_session checks stand-ins for some values and keeps the values
    given."""

    def _open_as_given(self, scope: Any, queue: Any, concurrency: Any, *,
                       checked_queue: Any = None,
                       checked_concurrency: Any = None) -> spec.WorkerSession:
        """The session open_session makes of the checked queue or concurrency (by default the
        one given), stored with ``queue`` and ``concurrency``."""
        session = attrs.evolve(super().open_session(
            scope, queue if checked_queue is None else checked_queue,
            concurrency if checked_concurrency is None else checked_concurrency),
            queue=queue, concurrency=concurrency)
        with self._transaction() as txn:
            txn.save_session(session)
        return session


class NegativeConcurrencyAccepted(_OpensAsGiven):
    """Refuses concurrency 0 only, the seed's check ported without its u32."""

    def open_session(self, scope: Any, queue: str, concurrency: Any) -> spec.WorkerSession:
        if not _negative(concurrency):
            return super().open_session(scope, queue, concurrency)
        return self._open_as_given(scope, queue, concurrency, checked_concurrency=1)


class ConcurrencyPastU32Accepted(_OpensAsGiven):
    """Takes any concurrency >= 1 (a JavaScript number, Python's int): 2^32, past the seed's
    u32, opens a session."""

    def open_session(self, scope: Any, queue: str, concurrency: Any) -> spec.WorkerSession:
        if not _past_u32(concurrency):
            return super().open_session(scope, queue, concurrency)
        return self._open_as_given(scope, queue, concurrency, checked_concurrency=1)


class NumericStringConcurrency(LedgenceCore):
    """Coerces concurrency with int(), as a value read from a configuration file."""

    def open_session(self, scope: Any, queue: str, concurrency: Any) -> spec.WorkerSession:
        # isdecimal: the digits int() reads ("²" is a digit int() refuses)
        if isinstance(concurrency, str) and concurrency.isdecimal():
            concurrency = int(concurrency)
        return super().open_session(scope, queue, concurrency)


class SessionIdTypeUnchecked(LedgenceCore):
    """Checks a session id as text only when it is a string; anything else is taken for an id
    no session has (every session's id is a string)."""

    def extend_session(self, worker_session_id: Any) -> spec.WorkerSession:
        if not isinstance(worker_session_id, str):
            raise spec.UnknownSession(f"no worker session {worker_session_id!r}")
        return super().extend_session(worker_session_id)


class EmptyKeyLookedUp(LedgenceCore):
    """lookup_submission checks the key's length, not that it has one."""

    def _check_lookup(self, scope: Any, idempotency_key: Any) -> None:
        super()._check_lookup(scope, "k" if idempotency_key == "" else idempotency_key)


def _submission_standing_in(command: Any, **changes: Any) -> Any:
    """``command`` with its input's fields changed (a stand-in that passes the checks)."""
    return attrs.evolve(command, input=attrs.evolve(command.input, **changes))


class EmptyKeyAccepted(LedgenceCore):
    """accept_resolved_submission checks the key's length, not that it has one."""

    def _check_submission(self, command: Any, descriptor: Any) -> None:
        if isinstance(command, spec.SubmitCommand) and command.idempotency_key == "":
            command = attrs.evolve(command, idempotency_key="k")
        super()._check_submission(command, descriptor)


def _counted_in_characters(value: Any, limit: int) -> Any:
    """What a store counting characters takes ``value`` for: as many "k"s as it has characters
    when those fit ``limit`` and its UTF-8 bytes do not; else ``value`` itself."""
    if isinstance(value, str) and len(value) <= limit < len(value.encode()):
        return "k" * len(value)
    return value


class KeyLengthInCharacters(LedgenceCore):
    """Counts an idempotency key's length in characters (a VARCHAR(255) column's limit): a
    key of 255 characters or fewer is accepted, and looked up, however many bytes it takes."""

    def _check_lookup(self, scope: Any, idempotency_key: Any) -> None:
        super()._check_lookup(scope, _counted_in_characters(
            idempotency_key, spec.MAX_IDEMPOTENCY_KEY_BYTES))

    def _check_submission(self, command: Any, descriptor: Any) -> None:
        if isinstance(command, spec.SubmitCommand):
            command = attrs.evolve(command, idempotency_key=_counted_in_characters(
                command.idempotency_key, spec.MAX_IDEMPOTENCY_KEY_BYTES))
        super()._check_submission(command, descriptor)


class IdLengthInCharacters(LedgenceCore):
    """Counts a submission's identifiers in characters (a JavaScript string's length): a
    queue, tenant, namespace, program id or version of 128 characters or fewer is accepted
    however many bytes it takes."""

    def _check_submission(self, command: Any, descriptor: Any) -> None:
        task = getattr(command, "input", None)
        if isinstance(task, spec.TaskInput) and isinstance(task.scope, spec.Scope) and (
                isinstance(task.program, spec.Program)):
            def fit(value: Any) -> Any:
                return _counted_in_characters(value, spec.MAX_ID_BYTES)
            program = spec.Program(fit(task.program.id), fit(task.program.version))
            command = _submission_standing_in(
                command, queue=fit(task.queue), program=program,
                scope=spec.Scope(fit(task.scope.tenant_id), fit(task.scope.namespace)))
            if isinstance(descriptor, spec.ProgramDescriptor) and (
                    descriptor.program == task.program):
                descriptor = attrs.evolve(descriptor, program=program)
        super()._check_submission(command, descriptor)


class SessionQueueLengthInCharacters(_OpensAsGiven):
    """open_session counts the queue's 128 in characters: a longer queue in two-byte
    characters opens a session."""

    def open_session(self, scope: Any, queue: str, concurrency: Any) -> spec.WorkerSession:
        counted = _counted_in_characters(queue, spec.MAX_ID_BYTES)
        if counted is queue:
            return super().open_session(scope, queue, concurrency)
        return self._open_as_given(scope, queue, concurrency, checked_queue=counted)


class CorrelationKeyLengthInCharacters(LedgenceCore):
    """Counts a correlation key's 512 in characters: a longer key in two-byte characters is
    accepted."""

    def _check_submission(self, command: Any, descriptor: Any) -> None:
        task = getattr(command, "input", None)
        if isinstance(task, spec.TaskInput):
            command = _submission_standing_in(command, correlation_key=_counted_in_characters(
                task.correlation_key, spec.MAX_CORRELATION_KEY_BYTES))
        super()._check_submission(command, descriptor)


class EmptyProgramPartAccepted(LedgenceCore):
    """Program id and version matched with [a-z0-9._-]* (a star for a plus)."""

    def _check_submission(self, command: Any, descriptor: Any) -> None:
        program: Any = getattr(getattr(command, "input", None), "program", None)
        if isinstance(program, spec.Program) and "" in (program.id, program.version):
            stand_in = spec.Program("p" if program.id == "" else program.id,
                                    "1" if program.version == "" else program.version)
            command = _submission_standing_in(command, program=stand_in)
            if isinstance(descriptor, spec.ProgramDescriptor) and descriptor.program == program:
                descriptor = attrs.evolve(descriptor, program=stand_in)
        super()._check_submission(command, descriptor)


class ZeroMaxAttemptsAccepted(LedgenceCore):
    """max_attempts checked as 0..=1000: a task no claim can ever take."""

    def _check_submission(self, command: Any, descriptor: Any) -> None:
        policy: Any = getattr(getattr(command, "input", None), "retry_policy", None)
        if isinstance(policy, spec.RetryPolicy) and is_zero(policy.max_attempts):
            command = _submission_standing_in(
                command, retry_policy=attrs.evolve(policy, max_attempts=1))
        super()._check_submission(command, descriptor)


class NegativeRetryDelayAccepted(LedgenceCore):
    """retry_delay_ms checked against its upper bound only (the seed's u64 has no lower)."""

    def _check_submission(self, command: Any, descriptor: Any) -> None:
        policy: Any = getattr(getattr(command, "input", None), "retry_policy", None)
        if isinstance(policy, spec.RetryPolicy) and _negative(policy.retry_delay_ms):
            command = _submission_standing_in(
                command, retry_policy=attrs.evolve(policy, retry_delay_ms=0))
        super()._check_submission(command, descriptor)


class ZeroTimeoutIsTheDefault(LedgenceCore):
    """attempt_timeout_ms 0 read as "not given" (``timeout or 300_000``)."""

    def accept_resolved_submission(self, command: Any, descriptor: Any) -> spec.TaskSnapshot:
        if is_zero(getattr(getattr(command, "input", None), "attempt_timeout_ms", None)):
            command = _submission_standing_in(command, attempt_timeout_ms=300_000)
        return super().accept_resolved_submission(command, descriptor)


class EmptyArchiveAccepted(LedgenceCore):
    """A descriptor's size checked for < 0: an empty program archive passes."""

    def _check_submission(self, command: Any, descriptor: Any) -> None:
        if isinstance(descriptor, spec.ProgramDescriptor) and is_zero(descriptor.size):
            descriptor = attrs.evolve(descriptor, size=1)
        super()._check_submission(command, descriptor)


class EmptyDigestAccepted(LedgenceCore):
    """A descriptor's digest checked only when it has one."""

    def _check_submission(self, command: Any, descriptor: Any) -> None:
        if isinstance(descriptor, spec.ProgramDescriptor) and descriptor.digest == "":
            descriptor = attrs.evolve(descriptor, digest="sha256:" + "0" * 64)
        super()._check_submission(command, descriptor)


# --- reads -------------------------------------------------------------------------------------


class EmptyTaskIdNotFound(LedgenceCore):
    """Reads, history and cancel check the scope, not the task id: "" finds no task."""

    def _check_task_ref(self, scope: Any, task_id: Any) -> None:
        spec.validate_scope(scope)


class InspectAttemptRefsUnchecked(LedgenceCore):
    """inspect_attempt checks the attempt id only and looks the task up as named: a bad scope
    or an empty task id is not_found."""

    def inspect_attempt(self, scope: Any, task_id: Any, attempt_id: Any) -> Any:
        if isinstance(task_id, str) and isinstance(scope, spec.Scope):
            try:
                spec.validate_scope(scope)
                spec.validate_text(task_id, "task_id")
            except spec.InvalidInput:
                self._check_attempt_ref(attempt_id)
                raise spec.NotFound(f"no task {task_id!r}") from None
        return super().inspect_attempt(scope, task_id, attempt_id)


class EmptyAttemptIdNotFound(LedgenceCore):
    """inspect_attempt looks an empty attempt id up: not_found."""

    def _check_attempt_ref(self, attempt_id: Any) -> None:
        if attempt_id != "":
            super()._check_attempt_ref(attempt_id)


def as_i64(value: Any) -> Any:
    """``value`` cast to an i64 (Rust's ``as i64``, a BIGINT parameter): a u64 from 2^63 on
    wraps negative; anything else is left as it is."""
    if isinstance(value, int) and not isinstance(value, bool) and 2**63 <= value < 2**64:
        return value - 2**64
    return value


class AfterSequenceAsI64(LedgenceCore):
    """Pages history after after_sequence cast to an i64: from 2^63 on it wraps negative, and
    the page starts at the first event."""

    def _history_page(self, txn: Txn, task_id: str,
                      after_sequence: int) -> list[spec.RecordedHistoryEvent]:
        return super()._history_page(txn, task_id, max(as_i64(after_sequence), 0))


class AfterPastU64Accepted(LedgenceCore):
    """history takes any integer after_sequence >= 0 (Python's int has no top): after 2^64 it
    answers an empty page where the seed cannot decode the request."""

    def _check_after(self, after_sequence: Any) -> None:
        super()._check_after(0 if _past(after_sequence, spec.U64_MAX) else after_sequence)


class HistoryAfterTrueIsOne(LedgenceCore):
    """after_sequence checked with isinstance(after, int), which True passes (as 1)."""

    def _check_after(self, after_sequence: Any) -> None:
        if not (isinstance(after_sequence, int) and after_sequence >= 0):
            super()._check_after(after_sequence)


# --- acquisition and targeted dispatch ---------------------------------------------------------


class NegativeConsumerAccepted(LedgenceCore):
    """Checks consumer_id < concurrency only: consumer -1 gets a cursor of its own."""

    def _check_acquire(self, command: Any) -> None:
        if _negative(getattr(command, "consumer_id", None)):
            command = attrs.evolve(command, consumer_id=0)
        super()._check_acquire(command)


class ConsumerAsU32(LedgenceCore):
    """Keeps a consumer id in a u32 by wrapping it (Go's ``uint32(x)``, a cast into a 32-bit
    column): consumer 2^32, which the seed cannot decode, acquires as consumer 0."""

    def acquire(self, command: Any) -> Any:
        consumer: Any = getattr(command, "consumer_id", None)
        if _past_u32(consumer):
            command = attrs.evolve(command, consumer_id=consumer % 2**32)
        return super().acquire(command)


class NegativeSequenceOrdered(LedgenceCore):
    """A negative acquisition sequence is ordered against the cursor like any other."""

    def _check_acquire(self, command: Any) -> None:
        if _negative(getattr(command, "sequence", None)):
            command = attrs.evolve(command, sequence=0)
        super()._check_acquire(command)


class SequencePastU64Ordered(LedgenceCore):
    """An acquisition sequence past the u64s is ordered against the cursor like any other
    (out_of_order) instead of refused."""

    def _check_acquire(self, command: Any) -> None:
        if _past(getattr(command, "sequence", None), spec.U64_MAX):
            command = attrs.evolve(command, sequence=1)
        super()._check_acquire(command)


class EmptySessionIdLookedUp(LedgenceCore):
    """acquire looks an empty session id up (unknown_session) instead of refusing it."""

    def _check_acquire(self, command: Any) -> None:
        if getattr(command, "worker_session_id", None) == "":
            command = attrs.evolve(command, worker_session_id="ws")
        super()._check_acquire(command)


class ProbeChecksTypesOnly(LedgenceCore):
    """probe_acquisition decodes the command's types but skips the checks of its values
    acquire makes: an empty session id is looked up (unknown_session)."""

    _probing = threading.local()

    def probe_acquisition(self, command: Any, finish_empty: bool, deadline_ms: int) -> Any:
        self._probing.on = True
        try:
            return super().probe_acquisition(command, finish_empty, deadline_ms)
        finally:
            self._probing.on = False

    def _check_acquire(self, command: Any) -> None:
        if not getattr(self._probing, "on", False):
            super()._check_acquire(command)


class ProbeArgumentsCoerced(LedgenceCore):
    """probe_acquisition reads its deadline with int() and finish_empty with bool(): a float
    or a True deadline, finish_empty 1, are taken."""

    def probe_acquisition(self, command: Any, finish_empty: Any, deadline_ms: Any) -> Any:
        if isinstance(deadline_ms, float | bool):
            deadline_ms = int(deadline_ms)
        if isinstance(finish_empty, int) and not isinstance(finish_empty, bool):
            finish_empty = bool(finish_empty)
        return super().probe_acquisition(command, finish_empty, deadline_ms)


class ZeroDeadlineIsNoDeadline(LedgenceCore):
    """probe_acquisition reads deadline 0 as "no deadline" (``if deadline and ...``)."""

    def _deadline_passed(self, deadline_ms: int, now: int) -> bool:
        return bool(deadline_ms) and super()._deadline_passed(deadline_ms, now)


class ValuesCheckedBeforeDeadline(LedgenceCore):
    """probe_acquisition validates the whole command before it looks at its deadline: a passed
    deadline with an empty queue answers invalid_input."""

    def probe_acquisition(self, command: Any, finish_empty: bool, deadline_ms: int) -> Any:
        self._check_acquire(command)
        return super().probe_acquisition(command, finish_empty, deadline_ms)


class DeadlineBeforeTypes(LedgenceCore):
    """probe_acquisition looks at its deadline first: a command the seed's types cannot hold
    (consumer -1 or 2^32, sequence -1 or 2^64, a session id that is no string), or
    finish_empty 1, sent with a passed deadline answers unavailable."""

    def probe_acquisition(self, command: Any, finish_empty: Any, deadline_ms: Any) -> Any:
        if (type(deadline_ms) is int
                and self._deadline_passed(deadline_ms, self.env.clock())):
            raise spec.Unavailable(f"the acquisition deadline {deadline_ms} has passed")
        return super().probe_acquisition(command, finish_empty, deadline_ms)


class NegativeGenerationAccepted(LedgenceCore):
    """A claim's generation checked as != 0 and <= 1000: -1 is an older generation."""

    def _check_claim(self, command: Any) -> None:
        dispatch: Any = getattr(command, "dispatch", None)
        if _negative(getattr(dispatch, "generation", None)):
            command = attrs.evolve(command, dispatch=attrs.evolve(dispatch, generation=1))
        super()._check_claim(command)


class EmptyDispatchTaskLookedUp(LedgenceCore):
    """A claim's task id is looked up unchecked: an empty one is not_found."""

    def _check_claim(self, command: Any) -> None:
        dispatch: Any = getattr(command, "dispatch", None)
        if getattr(dispatch, "task_id", None) == "":
            command = attrs.evolve(command, dispatch=attrs.evolve(dispatch, task_id="t"))
        super()._check_claim(command)


class NegativeClaimSequenceOrdered(LedgenceCore):
    """A claim refuses sequence 0 only; a negative one is ordered against the cursor."""

    def _check_claim(self, command: Any) -> None:
        acquisition: Any = getattr(command, "acquisition", None)
        if _negative(getattr(acquisition, "sequence", None)):
            command = attrs.evolve(command, acquisition=attrs.evolve(acquisition, sequence=1))
        super()._check_claim(command)


class ClaimSequencePastU64Ordered(LedgenceCore):
    """A claim's acquisition sequence past the u64s is ordered against the cursor like any
    other (out_of_order) instead of refused."""

    def _check_claim(self, command: Any) -> None:
        acquisition: Any = getattr(command, "acquisition", None)
        if _past(getattr(acquisition, "sequence", None), spec.U64_MAX):
            command = attrs.evolve(command, acquisition=attrs.evolve(acquisition, sequence=1))
        super()._check_claim(command)


class SequenceAsI64(LedgenceCore):
    """Orders an acquisition's or a claim's sequence against the cursor as an i64: from 2^63
    on it wraps negative, below the cursor (obsolete_operation where the seed answers
    out_of_order)."""

    def _acquire_sequence(self, cursor: Cursor | None, sequence: int) -> bool:
        return bool(super()._acquire_sequence(cursor, as_i64(sequence)))


# --- owner calls -------------------------------------------------------------------------------


class RenewSequenceAsI64(LedgenceCore):
    """Orders a renewal's sequence against the last renewal as an i64: from 2^63 on it wraps
    negative, below the last one (obsolete_operation where the seed answers out_of_order)."""

    def _renew_sequence(self, attempt: StoredAttempt, command: spec.RenewCommand) -> bool:
        return bool(super()._renew_sequence(
            attempt, attrs.evolve(command, sequence=as_i64(command.sequence))))


class EmptyIntentIsKeepAlive(LedgenceCore):
    """A renewal without an intent ("") is a keep-alive (a default for a missing field)."""

    def renew(self, command: Any) -> spec.Authority:
        if getattr(command, "intent", None) == "":
            command = attrs.evolve(command, intent=spec.KEEP_ALIVE)
        return super().renew(command)


class RenewSessionIdLookedUp(LedgenceCore):
    """renew looks the owner's empty session id up (unknown_session) instead of refusing it."""

    def _check_renew(self, command: Any) -> None:
        owner: Any = getattr(command, "owner", None)
        if getattr(owner, "worker_session_id", None) == "":
            command = attrs.evolve(command, owner=attrs.evolve(owner, worker_session_id="ws"))
        super()._check_renew(command)


class RenewSequencePastU64Ordered(LedgenceCore):
    """A renewal's sequence past the u64s is ordered against the last renewal like any other
    instead of refused."""

    def _check_renew(self, command: Any) -> None:
        if _past(getattr(command, "sequence", None), spec.U64_MAX):
            command = attrs.evolve(command, sequence=1)
        super()._check_renew(command)


def _owner_standing_in(owner: Any, past: Callable[[Any], bool]) -> Any:
    """``owner`` with its generation and consumer id that ``past`` picks replaced by valid
    ones (1 and 0): a stand-in that passes the checks."""
    stand_in = {what: number for what, number in (("generation", 1), ("consumer_id", 0))
                if past(getattr(owner, what, None))}
    return attrs.evolve(owner, **stand_in) if stand_in else owner


def _owner_of_standing_in(command: Any, past: Callable[[Any], bool]) -> Any:
    """``command`` (a settle or a renew) with its owner's numbers ``past`` picks stood in."""
    owner: Any = getattr(command, "owner", None)
    if not isinstance(owner, spec.LeaseOwner):
        return command
    return attrs.evolve(command, owner=_owner_standing_in(owner, past))


class ConfirmOwnerPastU32Compared(LedgenceCore):
    """confirm_quiescence compares a generation or consumer id past the u32s with the
    attempt's owner (ownership_lost) instead of refusing it."""

    def _check_owner(self, owner: Any) -> None:
        super()._check_owner(_owner_standing_in(owner, _past_u32))


class RenewOwnerPastU32Compared(LedgenceCore):
    """renew compares a generation or consumer id past the u32s with the attempt's owner
    (ownership_lost) instead of refusing it."""

    def _check_renew(self, command: Any) -> None:
        super()._check_renew(_owner_of_standing_in(command, _past_u32))


class NegativeOwnerNumbersCompared(LedgenceCore):
    """settle compares a negative generation or consumer id with the attempt's owner
    (ownership_lost) instead of refusing it."""

    def _check_settle(self, command: Any) -> None:
        super()._check_settle(_owner_of_standing_in(command, _negative))


class OwnerNumbersPastU32Compared(LedgenceCore):
    """settle compares a generation or consumer id past the u32s with the attempt's owner
    (ownership_lost) instead of refusing it."""

    def _check_settle(self, command: Any) -> None:
        super()._check_settle(_owner_of_standing_in(command, _past_u32))


class OwnerCheckedAsText(LedgenceCore):
    """settle refuses an owner whose ids are not valid text, or whose generation is 0, as
    malformed (invalid_input) before looking it up, where the seed compares them
    (ownership_lost, not_found)."""

    def _check_settle(self, command: Any) -> None:
        owner: Any = getattr(command, "owner", None)
        if isinstance(owner, spec.LeaseOwner):
            for what in ("task_id", "attempt_id", "lease_id", "worker_session_id"):
                spec.validate_text(getattr(owner, what), what)
            if owner.generation == 0:
                raise spec.InvalidInput("generation must be at least 1")
        super()._check_settle(command)


def _report_standing_in(command: Any, **changes: Any) -> Any:
    report: Any = getattr(command, "report", None)
    return attrs.evolve(command, report=attrs.evolve(report, **changes))


class FailurePhaseUnchecked(LedgenceCore):
    """A failure's phase is stored as given, never checked against the seed's phases."""

    def _check_settle(self, command: Any) -> None:
        report: Any = getattr(command, "report", None)
        if isinstance(report, spec.ExecutionFailure) and report.phase not in spec.FAILURE_PHASES:
            command = _report_standing_in(command, phase="execution")
        super()._check_settle(command)


class CleanupErrorAsText(LedgenceCore):
    """A failure's cleanup error is taken as the text it once was, not checked as the seed's
    Error {kind, message}: text is accepted."""

    def _check_settle(self, command: Any) -> None:
        report: Any = getattr(command, "report", None)
        if isinstance(report, spec.ExecutionFailure) and isinstance(report.cleanup_error, str):
            command = _report_standing_in(command, cleanup_error=None)
        super()._check_settle(command)


class EmptyFailureKindIsRuntime(LedgenceCore):
    """A failure without a kind ("") is recorded as a runtime failure (retried)."""

    def settle(self, command: Any) -> spec.SettleReply:
        report: Any = getattr(command, "report", None)
        if isinstance(report, spec.ExecutionFailure) and report.kind == "":
            command = _report_standing_in(command, kind="runtime")
        return super().settle(command)


class EmptyProcessIdAccepted(LedgenceCore):
    """A report's process id is stored as given, "" included."""

    def _check_settle(self, command: Any) -> None:
        if getattr(getattr(command, "report", None), "process_id", None) == "":
            command = _report_standing_in(command, process_id="p")
        super()._check_settle(command)


class NegativeElapsedAccepted(LedgenceCore):
    """A report's elapsed_ms is stored as given, a negative one included."""

    def _check_settle(self, command: Any) -> None:
        if _negative(getattr(getattr(command, "report", None), "elapsed_ms", None)):
            command = _report_standing_in(command, elapsed_ms=0)
        super()._check_settle(command)


class ElapsedPastU64Accepted(LedgenceCore):
    """A report's elapsed_ms is stored as given, 2^64 (past the seed's u64) included: checked
    as >= 0, and left out of the size it measures."""

    @staticmethod
    def _standing_in(command: Any) -> Any:
        if _past(getattr(getattr(command, "report", None), "elapsed_ms", None), spec.U64_MAX):
            return _report_standing_in(command, elapsed_ms=0)
        return command

    def _check_settle(self, command: Any) -> None:
        super()._check_settle(self._standing_in(command))

    def _check_size(self, command: Any) -> None:
        super()._check_size(self._standing_in(command))


class EmptyOperationIdAccepted(LedgenceCore):
    """A settlement's operation id is stored as given, "" included."""

    def _check_operation(self, command: Any) -> None:
        return None


class ReportContextCheckedAsText(LedgenceCore):
    """A report's context ids and digest are refused as malformed text (invalid_input), where
    the seed compares them with the attempt (conflict)."""

    def _check_report(self, command: Any, task: Any) -> None:
        context = command.report.context
        for what in ("task_id", "attempt_id", "digest"):
            spec.validate_text(getattr(context, what), f"context.{what}")
        super()._check_report(command, task)


# --- listing and recovery ----------------------------------------------------------------------


def _query_standing_in(query: Any, **changes: Any) -> Any:
    return attrs.evolve(query, filters=attrs.evolve(query.filters, **changes))


class NegativePageLimitAccepted(LedgenceCore):
    """A page limit checked as != 0 and <= 100: -1 reads no row."""

    def _check_list_query(self, scope: Any, query: Any) -> None:
        if _negative(getattr(query, "limit", None)):
            query = attrs.evolve(query, limit=1)
        super()._check_list_query(scope, query)


def _filter_texts_standing_in(query: Any, stand_in: Any) -> Any:
    """``query`` with its queue and correlation key filters replaced by ``stand_in`` of each
    (a value that passes the checks)."""
    f: Any = getattr(query, "filters", None)
    if not isinstance(f, spec.TaskFilters):
        return query
    return _query_standing_in(query, queue=stand_in(f.queue, "q"),
                              correlation_key=stand_in(f.correlation_key, ""))


class FilterTextUnchecked(LedgenceCore):
    """The queue and correlation key filters are matched as given, checked only for a queue
    filter that is empty: one holding a noncharacter or a control character, or a byte past
    its limit, lists the tasks that have it (none) where the seed refuses it."""

    def _check_list_query(self, scope: Any, query: Any) -> None:
        def unchecked(value: Any, valid: str) -> Any:
            return valid if isinstance(value, str) and value != "" else value
        super()._check_list_query(scope, _filter_texts_standing_in(query, unchecked))


class FilterLengthsInCharacters(LedgenceCore):
    """Counts the queue filter's 128 and the correlation key filter's 512 in characters: a
    longer filter in two-byte characters lists the tasks that have it (none)."""

    def _check_list_query(self, scope: Any, query: Any) -> None:
        limits = {"q": spec.MAX_ID_BYTES, "": spec.MAX_CORRELATION_KEY_BYTES}

        def counted(value: Any, valid: str) -> Any:
            return _counted_in_characters(value, limits[valid])
        super()._check_list_query(scope, _filter_texts_standing_in(query, counted))


class EmptyCursorIsTheFirstPage(LedgenceCore):
    """An empty cursor read as none (``if query.cursor:``): the first page again."""

    def list_tasks(self, scope: Any, query: Any) -> spec.TaskPage:
        if getattr(query, "cursor", None) == "":
            query = attrs.evolve(query, cursor=None)
        return super().list_tasks(scope, query)


class EmptyStateFilterIsNone(LedgenceCore):
    """An empty state filter read as none (``if filters.state:``): every state listed."""

    def list_tasks(self, scope: Any, query: Any) -> spec.TaskPage:
        if getattr(getattr(query, "filters", None), "state", None) == "":
            query = _query_standing_in(query, state=None)
        return super().list_tasks(scope, query)


class ZeroUntilIsNoBound(LedgenceCore):
    """submitted_until 0 read as none (``if filters.submitted_until:``): nothing is cut."""

    def list_tasks(self, scope: Any, query: Any) -> spec.TaskPage:
        if is_zero(getattr(getattr(query, "filters", None), "submitted_until", None)):
            query = _query_standing_in(query, submitted_until=None)
        return super().list_tasks(scope, query)


class NegativeSubmittedFromAccepted(LedgenceCore):
    """Submission bounds checked against the largest timestamp only: -1 passes."""

    def _check_list_query(self, scope: Any, query: Any) -> None:
        if _negative(getattr(getattr(query, "filters", None), "submitted_from", None)):
            query = _query_standing_in(query, submitted_from=0)
        super()._check_list_query(scope, query)


class NegativeBatchLimitAccepted(LedgenceCore):
    """expire_batch refuses 0 and more than 100 only: -1 drops the last candidate (memory)
    or lifts the LIMIT (SQLite)."""

    def _valid_limit(self, limit: Any) -> bool:
        return super()._valid_limit(limit) or _negative(limit)


class TrueBatchLimitIsOne(LedgenceCore):
    """expire_batch checks isinstance(limit, int), which True passes (as 1)."""

    def _valid_limit(self, limit: Any) -> bool:
        return isinstance(limit, int) and 1 <= limit <= spec.MAX_RECOVERY_BATCH


class DeepOutputAccepted(LedgenceCore):
    """A success output is taken at any depth (the seed refuses more than 64 containers)."""

    def _check_output(self, command: spec.SettleCommand) -> None:
        return None


MUTANTS = (
    Mutant("negative_concurrency_accepted", "open_session refuses concurrency 0 only, so -1 "
           "opens a session", "LDG-SESSION-002", NegativeConcurrencyAccepted),
    Mutant("concurrency_past_u32_accepted", "open_session with concurrency 2^32 opens a "
           "session", "LDG-SESSION-002", ConcurrencyPastU32Accepted),
    Mutant("session_queue_length_in_characters", "open_session counts a queue's 128 in "
           "characters: a longer queue in two-byte characters opens a session",
           "LDG-SESSION-002", SessionQueueLengthInCharacters),
    Mutant("numeric_string_concurrency", 'open_session coerces concurrency with int(): "2" '
           "opens a session of two", "LDG-SESSION-002", NumericStringConcurrency),
    Mutant("session_id_type_unchecked", "extend_session of a non-string id answers "
           "unknown_session", "LDG-SESSION-003", SessionIdTypeUnchecked),
    Mutant("empty_key_looked_up", "lookup_submission of an empty key answers none",
           "LDG-LOOKUP-001", EmptyKeyLookedUp),
    Mutant("empty_key_accepted", "a submission with an empty idempotency key is accepted",
           "LDG-SUBMIT-004", EmptyKeyAccepted),
    Mutant("key_length_in_characters", "an idempotency key's 255 are counted in characters: "
           "a longer key in two-byte characters is accepted", "LDG-SUBMIT-004",
           KeyLengthInCharacters),
    Mutant("id_length_in_characters", "a submission's identifiers' 128 are counted in "
           "characters: a longer queue, tenant or program id in two-byte characters is "
           "accepted", "LDG-SUBMIT-004", IdLengthInCharacters),
    Mutant("correlation_key_length_in_characters", "a correlation key's 512 are counted in "
           "characters: a longer key in two-byte characters is accepted", "LDG-SUBMIT-004",
           CorrelationKeyLengthInCharacters),
    Mutant("empty_program_part_accepted", "an empty program id or version is accepted",
           "LDG-SUBMIT-004", EmptyProgramPartAccepted),
    Mutant("zero_max_attempts_accepted", "a retry policy of 0 attempts is accepted (a task no "
           "claim can take)", "LDG-SUBMIT-004", ZeroMaxAttemptsAccepted),
    Mutant("negative_retry_delay_accepted", "a negative retry delay is accepted",
           "LDG-SUBMIT-004", NegativeRetryDelayAccepted),
    Mutant("zero_timeout_is_the_default", "attempt_timeout_ms 0 is taken as the default "
           "300 000", "LDG-SUBMIT-004", ZeroTimeoutIsTheDefault),
    Mutant("empty_archive_accepted", "a descriptor of size 0 is accepted", "LDG-SUBMIT-004",
           EmptyArchiveAccepted),
    Mutant("empty_digest_accepted", "a descriptor with an empty digest is accepted",
           "LDG-SUBMIT-004", EmptyDigestAccepted),
    Mutant("empty_task_id_not_found", "a read, history or cancel of an empty task id answers "
           "not_found", "LDG-READ-001", EmptyTaskIdNotFound),
    Mutant("inspect_attempt_refs_unchecked", "inspect_attempt of an empty namespace or task "
           "id answers not_found", "LDG-READ-001", InspectAttemptRefsUnchecked),
    Mutant("empty_attempt_id_not_found", "inspect_attempt of an empty attempt id answers "
           "not_found", "LDG-READ-003", EmptyAttemptIdNotFound),
    Mutant("after_past_u64_accepted", "history after 2^64 answers an empty page",
           "LDG-HISTORY-001", AfterPastU64Accepted),
    Mutant("history_after_true_is_one", "history(after_sequence=True) pages after event 1",
           "LDG-HISTORY-001", HistoryAfterTrueIsOne),
    Mutant("after_sequence_as_i64", "history casts after_sequence to an i64: after 2^63 and "
           "more it pages from the first event", "LDG-HISTORY-001", AfterSequenceAsI64),
    Mutant("sequence_as_i64", "acquire and claim order a sequence as an i64: 2^63 and more "
           "past the cursor answer obsolete_operation", "LDG-ACQ-008", SequenceAsI64),
    Mutant("negative_consumer_accepted", "acquire by consumer -1 claims a task",
           "LDG-ACQ-005", NegativeConsumerAccepted),
    Mutant("consumer_as_u32", "acquire wraps a consumer id to a u32: consumer 2^32 claims a "
           "task as consumer 0", "LDG-ACQ-005", ConsumerAsU32),
    Mutant("negative_sequence_ordered", "a negative acquisition sequence answers out_of_order "
           "or obsolete_operation", "LDG-ACQ-005", NegativeSequenceOrdered),
    Mutant("sequence_past_u64_ordered", "an acquisition sequence of 2^64 answers out_of_order",
           "LDG-ACQ-005", SequencePastU64Ordered),
    Mutant("empty_session_id_looked_up", "acquire with an empty session id answers "
           "unknown_session", "LDG-ACQ-005", EmptySessionIdLookedUp),
    Mutant("probe_checks_types_only", "probe_acquisition with an empty session id and a "
           "deadline to come answers unknown_session", "LDG-ACQ-005", ProbeChecksTypesOnly),
    Mutant("probe_arguments_coerced", "probe_acquisition takes a float or True deadline and "
           "finish_empty 1", "LDG-ACQ-005", ProbeArgumentsCoerced),
    Mutant("zero_deadline_is_no_deadline", "probe_acquisition with deadline 0 claims as if no "
           "deadline were given", "LDG-ACQ-015", ZeroDeadlineIsNoDeadline),
    Mutant("values_checked_before_deadline", "probe_acquisition with a passed deadline and an "
           "empty queue answers invalid_input", "LDG-ACQ-015", ValuesCheckedBeforeDeadline),
    Mutant("deadline_before_types", "probe_acquisition with a passed deadline and a consumer "
           "of -1 answers unavailable", "LDG-ACQ-005", DeadlineBeforeTypes),
    Mutant("negative_generation_accepted", "a claim at generation -1 answers a disposition",
           "LDG-DISPATCH-007", NegativeGenerationAccepted),
    Mutant("empty_dispatch_task_looked_up", "a claim of an empty task id answers not_found",
           "LDG-DISPATCH-007", EmptyDispatchTaskLookedUp),
    Mutant("negative_claim_sequence_ordered", "a claim at a negative sequence answers "
           "out_of_order", "LDG-DISPATCH-007", NegativeClaimSequenceOrdered),
    Mutant("claim_sequence_past_u64_ordered", "a claim at sequence 2^64 answers "
           "out_of_order", "LDG-DISPATCH-007", ClaimSequencePastU64Ordered),
    Mutant("empty_intent_is_keep_alive", 'a renewal with intent "" is a keep-alive',
           "LDG-RENEW-008", EmptyIntentIsKeepAlive),
    Mutant("renew_sequence_as_i64", "renew orders its sequence as an i64: 2^63 and more past "
           "the last renewal answer obsolete_operation", "LDG-RENEW-004", RenewSequenceAsI64),
    Mutant("renew_session_id_looked_up", "renew with an owner's empty session id answers "
           "unknown_session", "LDG-OWNER-001", RenewSessionIdLookedUp),
    Mutant("renew_sequence_past_u64_ordered", "a renewal at sequence 2^64 is ordered "
           "against the last renewal", "LDG-RENEW-008", RenewSequencePastU64Ordered),
    Mutant("confirm_owner_past_u32_compared", "confirm_quiescence with generation or "
           "consumer id 2^32 answers ownership_lost", "LDG-OWNER-001",
           ConfirmOwnerPastU32Compared),
    Mutant("renew_owner_past_u32_compared", "renew with generation or consumer id 2^32 "
           "answers ownership_lost", "LDG-OWNER-001", RenewOwnerPastU32Compared),
    Mutant("negative_owner_numbers_compared", "settle with consumer id -1 answers "
           "ownership_lost", "LDG-OWNER-001", NegativeOwnerNumbersCompared),
    Mutant("owner_numbers_past_u32_compared", "settle with generation or consumer id 2^32 "
           "answers ownership_lost", "LDG-OWNER-001", OwnerNumbersPastU32Compared),
    Mutant("owner_checked_as_text", "settle refuses an owner with an empty lease id or "
           "generation 0 as malformed, where the seed answers ownership_lost",
           "LDG-SETTLE-002", OwnerCheckedAsText),
    Mutant("failure_phase_unchecked", "a failure report with an empty phase is accepted",
           "LDG-SETTLE-006", FailurePhaseUnchecked),
    Mutant("cleanup_error_as_text", "a failure report whose cleanup error is text is "
           "accepted", "LDG-SETTLE-006", CleanupErrorAsText),
    Mutant("empty_failure_kind_is_runtime", "a failure report with an empty kind is taken "
           "as a runtime failure", "LDG-SETTLE-006", EmptyFailureKindIsRuntime),
    Mutant("empty_process_id_accepted", "a report with an empty process id is accepted",
           "LDG-SETTLE-006", EmptyProcessIdAccepted),
    Mutant("negative_elapsed_accepted", "a report with a negative elapsed_ms is accepted",
           "LDG-SETTLE-006", NegativeElapsedAccepted),
    Mutant("elapsed_past_u64_accepted", "a report with elapsed_ms 2^64 is accepted",
           "LDG-SETTLE-006", ElapsedPastU64Accepted),
    Mutant("deep_output_accepted", "a success output nested 65 deep is accepted",
           "LDG-SETTLE-006", DeepOutputAccepted),
    Mutant("empty_operation_id_accepted", "a settlement with an empty operation id is "
           "accepted", "LDG-SETTLE-006", EmptyOperationIdAccepted),
    Mutant("report_context_checked_as_text", "a report naming an empty digest is refused as "
           "malformed, where the seed answers conflict", "LDG-SETTLE-005",
           ReportContextCheckedAsText),
    Mutant("negative_page_limit_accepted", "list_tasks with limit -1 answers an empty page",
           "LDG-LIST-004", NegativePageLimitAccepted),
    Mutant("filter_text_unchecked", "a list filter's queue or correlation key is matched "
           "unchecked: one a byte too long or holding a control character lists nothing",
           "LDG-LIST-004", FilterTextUnchecked),
    Mutant("filter_lengths_in_characters", "a list filter's queue and correlation key limits "
           "are counted in characters: a longer one in two-byte characters lists nothing",
           "LDG-LIST-004", FilterLengthsInCharacters),
    Mutant("empty_cursor_is_the_first_page", 'list_tasks with cursor "" answers the first '
           "page", "LDG-LIST-007", EmptyCursorIsTheFirstPage),
    Mutant("empty_state_filter_is_none", 'a state filter "" lists every state',
           "LDG-LIST-004", EmptyStateFilterIsNone),
    Mutant("zero_until_is_no_bound", "submitted_until 0 cuts nothing", "LDG-LIST-002",
           ZeroUntilIsNoBound),
    Mutant("negative_submitted_from_accepted", "submitted_from -1 is accepted",
           "LDG-LIST-004", NegativeSubmittedFromAccepted),
    Mutant("negative_batch_limit_accepted", "expire_batch(-1) scans", "LDG-RECOVER-002",
           NegativeBatchLimitAccepted),
    Mutant("true_batch_limit_is_one", "expire_batch(True) scans one candidate",
           "LDG-RECOVER-002", TrueBatchLimitIsOne),
)
