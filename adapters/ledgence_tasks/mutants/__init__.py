"""The ledgence-tasks mutants: the correct core with one bug each.

Sessions, submission, reads and history here; acquisition and renewal in
:mod:`.delivery`; settlement, the finish rules, cancel and recovery in
:mod:`.recovery`; listing and targeted dispatch in :mod:`.discovery` (the page cursor's
checks in :mod:`.cursors`); the stores wrong only at an argument's edge in :mod:`.edges`.
``MUTANTS`` lists them all."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import attrs

from fencepost.adapters.ledgence_tasks.core import (
    CANCELLED,
    LedgenceCore,
    TaskRecord,
    Txn,
)
from fencepost.adapters.mutants import flaky as _flaky
from fencepost.adapters.mutants.base import Mutant, lossy_json, round_trip
from fencepost.spec import ledgence_tasks as spec

from . import db_failures as _faults
from . import delivery as _delivery
from . import discovery as _discovery
from . import edges as _edges
from . import recovery as _recovery


class SessionsLastOneHour(LedgenceCore):
    def open_session(self, scope: spec.Scope, queue: str, concurrency: int) -> spec.WorkerSession:
        session = super().open_session(scope, queue, concurrency)
        with self._transaction() as txn:
            short = attrs.evolve(session, expires_at=session.expires_at - spec.SESSION_MS
                                 + 3_600_000)
            txn.save_session(short)
        return short


class ZeroConcurrencyAccepted(LedgenceCore):
    """open_session takes concurrency 0 for 1 (a "no limit given" read as one consumer); any
    other value is checked as the correct store checks it."""

    def open_session(self, scope: spec.Scope, queue: str, concurrency: int) -> spec.WorkerSession:
        one = 1 if _edges.is_zero(concurrency) else concurrency
        return super().open_session(scope, queue, one)


class UnknownSessionIsExpired(LedgenceCore):
    def extend_session(self, worker_session_id: str) -> spec.WorkerSession:
        with self._transaction() as txn:
            if spec.validate_text(worker_session_id, "id") and txn.load_session(
                    worker_session_id) is None:
                raise spec.SessionExpired(worker_session_id)
        return super().extend_session(worker_session_id)


class ExpiredSessionRevived(LedgenceCore):
    """extend_session compares the session's expiry with >: at exactly expires_at it extends
    (revives) the session. Acquire, renew and claims compare exactly, as the correct store."""

    def _session_expired(self, session: spec.WorkerSession, now: int) -> bool:
        return now > session.expires_at

    def _usable_session(self, txn: Txn, worker_session_id: str,
                        now: int) -> spec.WorkerSession:
        session = super()._usable_session(txn, worker_session_id, now)
        if super()._session_expired(session, now):
            raise spec.SessionExpired(
                f"worker session {worker_session_id!r} expired at {session.expires_at}")
        return session


class ExtensionNotStored(LedgenceCore):
    """extend_session answers the extended session but never stores it: the session still
    expires at its old expires_at."""

    def _store_extension(self, txn: Txn, extended: spec.WorkerSession) -> None:
        return None


class InputThroughLossyJson(LedgenceCore):
    """Task input data stored through binary64 JSON: what is read back is not what was
    given."""

    def _new_task(self, command: spec.SubmitCommand, descriptor: spec.ProgramDescriptor,
                  now: int) -> TaskRecord:
        record = super()._new_task(command, descriptor, now)
        task_input = record.snapshot.input
        return attrs.evolve(record, snapshot=attrs.evolve(
            record.snapshot, input=attrs.evolve(task_input, data=lossy_json(task_input.data))))


class IntegerBeyondU64Accepted(LedgenceCore):
    """Submission data is checked for depth and size but not for the integers the seed's
    JSON holds: 2^64 is accepted (and kept as a Python int)."""

    def _check_submission(self, command: spec.SubmitCommand,
                          descriptor: spec.ProgramDescriptor) -> None:
        if isinstance(command, spec.SubmitCommand) and isinstance(command.input,
                                                                  spec.TaskInput):
            command = attrs.evolve(command, input=attrs.evolve(
                command.input, data=_clamped(command.input.data)))
        super()._check_submission(command, descriptor)


def _clamped(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return max(spec.JSON_INTEGERS[0], min(value, spec.JSON_INTEGERS[1]))
    if isinstance(value, Mapping):
        return {k: _clamped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clamped(v) for v in value]
    return value


class CorrelationKeyCheckedAsAnId(LedgenceCore):
    """The correlation key gets an identifier's rules: a key holding a Unicode noncharacter,
    which the seed accepts, is refused."""

    def _check_submission(self, command: spec.SubmitCommand,
                          descriptor: spec.ProgramDescriptor) -> None:
        key = getattr(getattr(command, "input", None), "correlation_key", None)
        if key is not None:
            spec.validate_text(key, "correlation_key", spec.MAX_CORRELATION_KEY_BYTES,
                               allow_empty=True)
        super()._check_submission(command, descriptor)


class DataDepthUnchecked(LedgenceCore):
    """Submission data is taken at any depth (the seed refuses more than 64 containers)."""

    def _check_submission(self, command: spec.SubmitCommand,
                          descriptor: spec.ProgramDescriptor) -> None:
        data = getattr(getattr(command, "input", None), "data", None)
        if spec.json_depth(data) > spec.MAX_DATA_DEPTH:
            # only the depth goes unchecked: the data's integers and size still are
            if len(spec.canonical_json(data).encode("utf-8")) > spec.MAX_DATA_BYTES:
                raise spec.InvalidInput("data is larger than 1 MiB")
            command = attrs.evolve(command, input=attrs.evolve(command.input, data=None))
        super()._check_submission(command, descriptor)


class RetryDelayUnbounded(LedgenceCore):
    """A retry delay is only checked for being >= 0 (the seed caps it at a day)."""

    def _check_submission(self, command: spec.SubmitCommand,
                          descriptor: spec.ProgramDescriptor) -> None:
        policy = getattr(getattr(command, "input", None), "retry_policy", None)
        delay = getattr(policy, "retry_delay_ms", None)
        if isinstance(policy, spec.RetryPolicy) and isinstance(delay, int) and (
                delay > spec.RETRY_DELAY_MS[1]):
            command = attrs.evolve(command, input=attrs.evolve(
                command.input, retry_policy=attrs.evolve(policy, retry_delay_ms=0)))
        super()._check_submission(command, descriptor)


class SubmissionAvailableLater(LedgenceCore):
    def _new_task(self, command: spec.SubmitCommand, descriptor: spec.ProgramDescriptor,
                  now: int) -> TaskRecord:
        record = super()._new_task(command, descriptor, now)
        return attrs.evolve(record, snapshot=attrs.evolve(record.snapshot,
                                                          available_at=now + 1))


class LoserDescriptorReplacesWinner(LedgenceCore):
    def _replay(self, winner: TaskRecord, command: spec.SubmitCommand) -> spec.TaskSnapshot:
        snapshot = super()._replay(winner, command)
        return attrs.evolve(snapshot, descriptor=self._last_descriptor)

    def accept_resolved_submission(self, command: spec.SubmitCommand,
                                   descriptor: spec.ProgramDescriptor) -> spec.TaskSnapshot:
        self._last_descriptor = descriptor
        return super().accept_resolved_submission(command, descriptor)


class OneEqualsOnePointZero(LedgenceCore):
    """Matches submissions on json.dumps with sorted keys after a float round trip."""

    def _same_submission(self, a: spec.TaskInput, b: spec.TaskInput) -> bool:
        import json

        def loose(t: Any) -> str:
            return json.dumps(json.loads(json.dumps(attrs.asdict(t)), parse_int=float),
                              sort_keys=True)
        return loose(a) == loose(b)


class ProgramMismatchAccepted(LedgenceCore):
    def accept_resolved_submission(self, command: spec.SubmitCommand,
                                   descriptor: spec.ProgramDescriptor) -> spec.TaskSnapshot:
        if (isinstance(descriptor, spec.ProgramDescriptor)
                and isinstance(command, spec.SubmitCommand)
                and isinstance(command.input, spec.TaskInput)):
            descriptor = attrs.evolve(descriptor, program=command.input.program)
        return super().accept_resolved_submission(command, descriptor)


class KeysAcrossScopes(LedgenceCore):
    def _accepted(self, txn: Txn, scope: spec.Scope, idempotency_key: str) -> TaskRecord | None:
        for other in (scope, *self._scopes_seen):
            found = super()._accepted(txn, other, idempotency_key)
            if found is not None:
                return found
        self._scopes_seen.add(scope)
        return None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._scopes_seen: set[Any] = set()


class SubmissionCheckThenInsert(LedgenceCore):
    """Looks the key up in one transaction and inserts in another, and does not expect the
    insert to lose: on SQL the unique index refuses the second insert, and the store answers
    that refusal instead of replaying the winner (the core's submission, past the SQL store's
    handling of a lost race)."""

    def accept_resolved_submission(self, command: spec.SubmitCommand,
                                   descriptor: spec.ProgramDescriptor) -> spec.TaskSnapshot:
        return LedgenceCore.accept_resolved_submission(self, command, descriptor)

    def _look_up_then_insert(
        self,
        look_up: Callable[[Txn], spec.TaskSnapshot | None],
        insert: Callable[[Txn], spec.TaskSnapshot],
    ) -> spec.TaskSnapshot:
        with self._transaction() as txn:
            found = look_up(txn)
        if found is not None:
            return found
        round_trip(self.env)  # a second submission of the key can look up here too
        with self._transaction() as txn:
            return insert(txn)


class LookupOnlyQueued(LedgenceCore):
    """lookup_submission filters on the queued state (a copy of the acquisition query)."""

    def lookup_submission(self, scope: spec.Scope,
                          idempotency_key: str) -> spec.TaskSnapshot | None:
        found = super().lookup_submission(scope, idempotency_key)
        return found if found is not None and found.state == "queued" else None


class ResultHidesCancellation(LedgenceCore):
    """result of a cancelled task answers no outcome (the cancelled one is not written where
    result reads it); a succeeded or failed task's outcome is answered as stored."""

    def result(self, scope: spec.Scope, task_id: str) -> spec.TaskResult:
        answer = super().result(scope, task_id)
        if answer.task.state != CANCELLED:
            return answer
        return attrs.evolve(answer, outcome=None)


class ForeignScopeReads(LedgenceCore):
    """The reads (status, result, inspect, inspect_attempt, history) find a task by its id
    alone, whatever its scope; every write (cancel, a claim, an owner call) still looks it up
    in its own scope."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._foreign_reading = threading.local()

    @contextmanager
    def _reading(self) -> Iterator[Txn]:
        self._foreign_reading.active = True
        try:
            with super()._reading() as txn:
                yield txn
        finally:
            self._foreign_reading.active = False

    def _visible(self, record: TaskRecord, scope: spec.Scope) -> bool:
        reading = bool(getattr(self._foreign_reading, "active", False))
        return reading or super()._visible(record, scope)


class HistoryOffByOne(LedgenceCore):
    def _history_page(self, txn: Txn, task_id: str,
                      after_sequence: int) -> list[spec.RecordedHistoryEvent]:
        return super()._history_page(txn, task_id, max(after_sequence - 1, 0))


class CancelOnlyRequests(LedgenceCore):
    """Writes cancel_requested but leaves the queued task queued."""

    def _cancel_queued(self, txn: Txn, record: TaskRecord, now: int) -> TaskRecord:
        snapshot = attrs.evolve(record.snapshot, cancel_requested_at=now)
        requested = attrs.evolve(record, snapshot=snapshot)
        txn.save_task(requested)
        self._record(txn, record.task_id, "cancel_requested", now)
        return requested


class CancelTwiceRestamps(LedgenceCore):
    """A second cancel stamps terminal_at again."""

    def cancel(self, scope: spec.Scope, task_id: str) -> str:
        self._check_task_ref(scope, task_id)
        with self._transaction() as txn:
            record = self._require(txn, scope, task_id)
            if record.snapshot.state == "cancelled":
                snapshot = attrs.evolve(record.snapshot, terminal_at=self.env.clock())
                txn.save_task(attrs.evolve(record, snapshot=snapshot))
                return "cancelled"
        return super().cancel(scope, task_id)


class RecycledIds(LedgenceCore):
    """Run and lease ids from a counter that restarts with every store object."""

    def _new_id(self, prefix: str) -> str:
        if prefix not in ("run", "lease"):
            return super()._new_id(prefix)
        self._n = getattr(self, "_n", 0) + 1
        return f"{prefix}_{self._n % 2}"


class _SessionOverlay:
    """A storage transaction whose sessions live in a dict of the store object."""

    def __init__(self, txn: Any, sessions: dict[str, Any]) -> None:
        self._txn, self._sessions = txn, sessions

    def __getattr__(self, name: str) -> Any:
        return getattr(self._txn, name)

    def load_session(self, worker_session_id: str) -> Any:
        return self._sessions.get(worker_session_id)

    read_session = load_session

    def save_session(self, session: Any) -> None:
        self._sessions[session.id] = session


class SessionsInProcess(LedgenceCore):
    """Worker sessions kept in the process (a registry in the worker host), never stored."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sessions: dict[str, Any] = {}

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with super()._transaction() as txn:
            yield _SessionOverlay(txn, self._sessions)



_SLICE = (
    Mutant("sessions_last_one_hour", "a session expires after one hour", "LDG-SESSION-001",
           SessionsLastOneHour),
    Mutant("zero_concurrency_accepted", "open_session accepts concurrency 0", "LDG-SESSION-002",
           ZeroConcurrencyAccepted),
    Mutant("unknown_session_is_expired", "an unknown session id answers session_expired",
           "LDG-SESSION-003", UnknownSessionIsExpired),
    Mutant("expired_session_revived", "extend at exactly expires_at revives the session",
           "LDG-SESSION-004", ExpiredSessionRevived),
    Mutant("extension_not_stored", "extend_session answers the extended session without "
           "storing it", "LDG-SESSION-004", ExtensionNotStored),
    Mutant("input_through_lossy_json", "task input data is stored through binary64 JSON "
           "(1.0 reads back 1, -0.0 reads 0)", "LDG-READ-005", InputThroughLossyJson),
    Mutant("integer_beyond_u64_accepted", "submission data holding 2^64 is accepted",
           "LDG-SUBMIT-004", IntegerBeyondU64Accepted),
    Mutant("correlation_key_checked_as_an_id", "a correlation key holding a Unicode "
           "noncharacter is refused", "LDG-SUBMIT-001", CorrelationKeyCheckedAsAnId),
    Mutant("data_depth_unchecked", "submission data nested 65 deep is accepted",
           "LDG-SUBMIT-004", DataDepthUnchecked),
    Mutant("retry_delay_unbounded", "a retry delay longer than a day is accepted",
           "LDG-SUBMIT-004", RetryDelayUnbounded),
    Mutant("submission_available_later", "a new task is available 1 ms after submission",
           "LDG-SUBMIT-001", SubmissionAvailableLater),
    Mutant("loser_descriptor_replaces_winner", "a replay answers with the loser's descriptor",
           "LDG-SUBMIT-002", LoserDescriptorReplacesWinner),
    Mutant("one_equals_one_point_zero", "submissions matched with 1 == 1.0", "LDG-SUBMIT-003",
           OneEqualsOnePointZero),
    Mutant("program_mismatch_accepted", "a descriptor for another program is accepted",
           "LDG-SUBMIT-004", ProgramMismatchAccepted),
    Mutant("keys_across_scopes", "idempotency keys are global, not per scope", "LDG-SUBMIT-005",
           KeysAcrossScopes),
    Mutant("submission_check_then_insert", "the key is looked up and inserted in two "
           "transactions", "LDG-SUBMIT-006", SubmissionCheckThenInsert,
           crashes=("sqlite",)),
    Mutant("lookup_only_queued", "lookup_submission finds only queued tasks", "LDG-LOOKUP-001",
           LookupOnlyQueued),
    Mutant("result_hides_cancellation", "result of a cancelled task has no outcome",
           "LDG-READ-001", ResultHidesCancellation),
    Mutant("foreign_scope_reads", "another scope reads the task", "LDG-READ-002",
           ForeignScopeReads),
    Mutant("history_off_by_one", "history includes the event at after_sequence",
           "LDG-HISTORY-001", HistoryOffByOne),
    Mutant("cancel_only_requests", "cancel of a queued task only requests it", "LDG-CANCEL-001",
           CancelOnlyRequests),
    Mutant("cancel_twice_restamps", "a second cancel stamps terminal_at again", "LDG-CANCEL-002",
           CancelTwiceRestamps),
    Mutant("recycled_ids", "run and lease ids come from a counter that wraps", "LDG-ID-001",
           RecycledIds),
    Mutant("sessions_in_process", "worker sessions kept in the process are lost on reopen",
           "LDG-DURABLE-001", SessionsInProcess),
    Mutant("acquire_race_in_history", "the candidate is read and claimed in two transactions "
           "(the same non-atomic acquisition), to be caught by the linearizability check of a "
           "concurrent run: two consumers are handed the same task", "LDG-LIN-001",
           _delivery.ClaimReadThenWrite),
)

MUTANTS = (_SLICE + _delivery.MUTANTS + _recovery.MUTANTS + _discovery.MUTANTS
           + _edges.MUTANTS + _faults.MUTANTS + _flaky.flaky_mutants(spec))
