"""The ledgence-tasks mutants for acquisition, liveness, authority and renewal. Each is
the correct core with one bug, caught by its expected clause."""

from __future__ import annotations

import threading
from typing import Any

import attrs

from fencepost.adapters.ledgence_tasks.core import (
    ACTIVE,
    REPLAYED,
    CandidateQuery,
    Cursor,
    LedgenceCore,
    StoredAttempt,
    TaskRecord,
    Txn,
)
from fencepost.adapters.mutants.base import Mutant, int32, round_trip
from fencepost.spec import ledgence_tasks as spec

# -- acquisition ----------------------------------------------------------------------------------


class ClaimsInSubmissionOrder(LedgenceCore):
    """Claims go by (submitted_at, task_id) alone: a retry submitted earlier is taken before a
    newer task that became available sooner."""

    def _candidate_order(self) -> tuple[str, ...]:
        return ("submitted_at", "task_id")


class RetryClaimedDuringBackoff(LedgenceCore):
    """The candidate query has no available_at bound."""

    def _candidate_query(self, command: spec.AcquireCommand, now: int) -> CandidateQuery:
        return attrs.evolve(super()._candidate_query(command, now), available_by=None)


class AuthorityDeadlineWithoutGrace(LedgenceCore):
    def _authority_deadline(self, deadline: int) -> int:
        return deadline


class ClaimLeavesQuiescenceUnset(LedgenceCore):
    """A claimed attempt has no quiescence until a settlement sets one."""

    def _claim(self, txn: Txn, task: TaskRecord, session: spec.WorkerSession,
               command: spec.AcquireCommand, now: int) -> spec.Assignment:
        assignment = super()._claim(txn, task, session, command, now)
        attempt = txn.load_attempt(task.task_id, assignment.lease.owner.attempt_id)
        assert attempt is not None  # inserted by this transaction
        txn.save_attempt(attrs.evolve(attempt, snapshot=attrs.evolve(attempt.snapshot,
                                                                     quiescence=None)))
        return assignment


class RenewalOutlivesSession(LedgenceCore):
    """A renewal caps the lease by the authority deadline only (the claim caps it right)."""

    def _renew_extend(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                      session: spec.WorkerSession, command: spec.RenewCommand,
                      now: int) -> spec.Authority:
        authority_deadline = attempt.snapshot.authority_deadline
        uncapped = attrs.evolve(session, expires_at=max(session.expires_at, authority_deadline))
        return super()._renew_extend(txn, task, attempt, uncapped, command, now)


class ReplayBeforeSessionCheck(LedgenceCore):
    """A fast path answers a repeated sequence from the cursor before the session's expiry is
    checked (a sequence that holds a dispatch claim is no replay: the full path answers it)."""

    def _acquire_in(self, txn: Txn, command: spec.AcquireCommand, finish_empty: bool) -> Any:
        now = self.env.clock()
        session = txn.read_session(command.worker_session_id)
        if session is not None and self._fits_session(session, command):
            key = self._cursor_key(session, command)
            cursor = txn.lock_cursor(*key)
            if (cursor is not None and cursor.sequence == command.sequence
                    and not self._sequence_claimed(txn, key, command.sequence)):
                return spec.ProbeCompleted(self._acquire_replay(txn, cursor, now), REPLAYED)
        return super()._acquire_in(txn, command, finish_empty)


class ConsumerIdUnchecked(LedgenceCore):
    """Checks the command's scope and queue against the session, not its consumer id."""

    def _fits_session(self, session: spec.WorkerSession, command: spec.AcquireCommand) -> bool:
        return bool(session.scope == command.scope and session.queue == command.queue)


class AnyFirstSequence(LedgenceCore):
    """A consumer without a cursor starts at whatever sequence it sends."""

    def _acquire_sequence(self, cursor: Cursor | None, sequence: int) -> bool:
        if cursor is None and sequence != 0:
            return False
        return bool(super()._acquire_sequence(cursor, sequence))


class ZeroBelowCursorObsolete(LedgenceCore):
    """Sequence 0 is out of order only before a consumer's first acquisition; beside a cursor
    it is taken as below it: obsolete_operation (the seed refuses 0 before it reads the
    cursor)."""

    def _acquire_sequence(self, cursor: Cursor | None, sequence: int) -> bool:
        if cursor is not None and sequence == 0:
            raise spec.ObsoleteOperation(f"sequence 0 is below the cursor {cursor.sequence}")
        return bool(super()._acquire_sequence(cursor, sequence))


class SessionQueuePrefixFits(LedgenceCore):
    """A command fits a session whose queue starts with the command's queue: "email" is
    taken for "emails"."""

    def _fits_session(self, session: spec.WorkerSession, command: spec.AcquireCommand) -> bool:
        if isinstance(command.queue, str) and command.queue and isinstance(session.queue, str) \
                and session.queue.startswith(command.queue):
            command = attrs.evolve(command, queue=session.queue)
        return bool(super()._fits_session(session, command))


class ObsoleteSequenceReplays(LedgenceCore):
    """A sequence below the cursor is answered as a replay of the cursor's."""

    def _acquire_sequence(self, cursor: Cursor | None, sequence: int) -> bool:
        if cursor is not None and 0 < sequence < cursor.sequence:
            return True
        return bool(super()._acquire_sequence(cursor, sequence))


class SequenceGapsAccepted(LedgenceCore):
    def _acquire_sequence(self, cursor: Cursor | None, sequence: int) -> bool:
        if cursor is not None and sequence > cursor.sequence + 1:
            return False
        return bool(super()._acquire_sequence(cursor, sequence))


class EmptyCursorIsNoCursor(LedgenceCore):
    """An Empty cursor is taken for no cursor: its sequence again runs a fresh acquisition."""

    def _acquire_sequence(self, cursor: Cursor | None, sequence: int) -> bool:
        if cursor is not None and cursor.attempt is None and sequence == cursor.sequence:
            return False
        return bool(super()._acquire_sequence(cursor, sequence))


class ReplayExtendsLease(LedgenceCore):
    """A replayed live assignment is taken for a heartbeat: its lease is extended, as a
    renewal extends it (capped by the authority deadline and the session's expiry)."""

    def _acquire_replay(self, txn: Txn, cursor: Cursor, now: int) -> Any:
        found = self._cursor_attempt(txn, cursor)
        if found is not None and self._live(found[0], found[1], now):
            att = found[1].snapshot
            session = txn.read_session(att.lease.owner.worker_session_id)
            assert session is not None  # the replay's session, checked usable
            lease = attrs.evolve(att.lease, expires_at=self._lease_expiry(
                now, att.authority_deadline, session))
            txn.save_attempt(attrs.evolve(found[1], snapshot=attrs.evolve(att, lease=lease)))
        return super()._acquire_replay(txn, cursor, now)


class LostReplayClearsCursor(LedgenceCore):
    """The replay of a lost assignment drops it from the cursor, so the next replay of that
    sequence answers Empty."""

    def _acquire_replay(self, txn: Txn, cursor: Cursor, now: int) -> Any:
        reply = super()._acquire_replay(txn, cursor, now)
        if isinstance(reply, spec.AcquireOwnershipLost):
            lost = txn.load_attempt(reply.assignment.task_id, reply.assignment.attempt_id)
            assert lost is not None  # the replay just read it
            txn.save_cursor(lost.owner.worker_session_id, lost.owner.consumer_id,
                            Cursor(cursor.sequence, None))
        return reply


class OvertakingAllowed(LedgenceCore):
    def _busy(self, txn: Txn, cursor: Cursor, now: int) -> bool:
        return False


class PendingCommitsCursor(LedgenceCore):
    """Pending commits the Empty cursor instead of rolling back."""

    def _no_candidate(self, txn: Txn, session: spec.WorkerSession, command: spec.AcquireCommand,
                      finish_empty: bool, now: int) -> Any:
        if finish_empty:
            return super()._no_candidate(txn, session, command, finish_empty, now)
        txn.save_cursor(*self._cursor_key(session, command), Cursor(command.sequence, None))
        return self._pending(session, now)


class ProbeDropsFinishEmpty(LedgenceCore):
    """probe_acquisition does not pass finish_empty on: it answers Pending, never Empty (a
    finish_empty that is no bool is still refused)."""

    def probe_acquisition(self, command: spec.AcquireCommand, finish_empty: bool,
                          deadline_ms: int) -> Any:
        return super().probe_acquisition(command, False if finish_empty is True else finish_empty,
                                         deadline_ms)


class DeadlineAtNowStillRuns(LedgenceCore):
    def _deadline_passed(self, deadline_ms: int, now: int) -> bool:
        return deadline_ms < now


class BusyPerSession(LedgenceCore):
    """Before a claim, the busy check asks whether the session holds a live assignment, not
    whether the consumer does."""

    def _claim(self, txn: Txn, task: TaskRecord, session: spec.WorkerSession,
               command: spec.AcquireCommand, now: int) -> spec.Assignment:
        for consumer in range(session.concurrency):
            cursor = txn.lock_cursor(session.id, consumer)
            if (consumer != command.consumer_id and cursor is not None
                    and self._busy(txn, cursor, now)):
                raise spec.Busy(f"session {session.id!r} still holds a live assignment")
        return super()._claim(txn, task, session, command, now)


class ClaimReadThenWrite(LedgenceCore):
    """Reads the first candidate in one transaction and claims it in another, without
    re-checking it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stale = threading.local()

    def _acquire(self, command: spec.AcquireCommand, finish_empty: bool) -> Any:
        with self._transaction() as txn:
            query = self._candidate_query(command, self.env.clock())
            self._stale.candidate = super()._pick_candidate(txn, query)
        round_trip(self.env)
        return super()._acquire(command, finish_empty)

    def _pick_candidate(self, txn: Txn, query: CandidateQuery) -> TaskRecord | None:
        return self._stale.candidate  # type: ignore[no-any-return]


# -- liveness, authority, owners ------------------------------------------------------------------


class LiveAtExpiry(LedgenceCore):
    """Liveness compares with <=: at its expiry an attempt is still live."""

    def _live(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        snap, att = task.snapshot, attempt.snapshot
        return bool(snap.state == ACTIVE and snap.current_attempt_id == attempt.attempt_id
                    and att.state == ACTIVE and now <= att.lease.expires_at
                    and now <= att.authority_deadline)


class DispatchAllowedIgnoresCancel(LedgenceCore):
    """dispatch_allowed ignores the cancel request (and the passed deadline)."""

    def _dispatch_allowed(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        att = attempt.snapshot
        last = att.last_renewal
        return bool(self._live(task, attempt, now) and att.settlement is None
                    and last is not None and last.intent == spec.DISPATCH)


class RenewMissingTaskIsLost(LedgenceCore):
    """renew answers ownership_lost for a task it cannot find: the seed's own answer (its
    cursor comes first), wrong only where ``renew_lookup=task_first`` is the reading."""

    def renew(self, command: spec.RenewCommand) -> spec.Authority:
        try:
            return super().renew(command)
        except spec.NotFound as e:
            raise spec.OwnershipLost(str(e)) from None


class RenewTaskBeforeCursor(LedgenceCore):
    """Under the seed's order (``renew_lookup=cursor_first``) renew looks the task up before
    the consumer's cursor: a task never minted answers not_found."""

    def _check_renew_cursor(self, txn: Txn, owner: spec.LeaseOwner) -> None:
        self._require(txn, owner.scope, owner.task_id)
        super()._check_renew_cursor(txn, owner)


class ExecutionTimeOutlivesCancel(LedgenceCore):
    """Authority's execution_remaining_ms counts down to the deadline while the lease lives,
    ignoring a requested cancel (the lease's cleanup time is taken for execution time)."""

    def _authority(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> spec.Authority:
        authority = super()._authority(task, attempt, now)
        if authority.remaining_ms == 0:
            return authority
        return attrs.evolve(authority,
                            execution_remaining_ms=max(0, attempt.snapshot.deadline - now))


# -- renewal --------------------------------------------------------------------------------------


class KeepAliveDoesNotExtend(LedgenceCore):
    """A keep_alive renewal is recorded but the lease stays (only dispatch extends it)."""

    def _renewed_expiry(self, attempt: StoredAttempt, session: spec.WorkerSession,
                        command: spec.RenewCommand, now: int) -> int:
        if command.intent == spec.KEEP_ALIVE:
            return int(attempt.snapshot.lease.expires_at)
        return int(super()._renewed_expiry(attempt, session, command, now))


class RenewIgnoresCurrency(LedgenceCore):
    """Renewal checks the lease's timing, not that the attempt is still current and active."""

    def _may_renew(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        att = attempt.snapshot
        return bool(now < att.lease.expires_at and now < att.authority_deadline)


class RenewIgnoresSessionExpiry(LedgenceCore):
    """renew looks its session up but never compares its expiry."""

    def _renew_session(self, txn: Txn, owner: spec.LeaseOwner, now: int) -> spec.WorkerSession:
        session = txn.read_session(owner.worker_session_id)
        if session is None:
            raise spec.UnknownSession(f"no worker session {owner.worker_session_id!r}")
        return session


class RenewalGapsAccepted(LedgenceCore):
    def _renew_sequence(self, attempt: StoredAttempt, command: spec.RenewCommand) -> bool:
        last = attempt.snapshot.last_renewal
        if command.sequence > (last.sequence if last is not None else 0) + 1:
            return False
        return bool(super()._renew_sequence(attempt, command))


class RenewalReplayExtends(LedgenceCore):
    def _renew_replay(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                      session: spec.WorkerSession, command: spec.RenewCommand,
                      now: int) -> spec.Authority:
        super()._renew_replay(txn, task, attempt, session, command, now)
        return self._renew_extend(txn, task, attempt, session, command, now)


class RenewalIntentUnbound(LedgenceCore):
    """A repeated renewal sequence is a replay whatever its intent."""

    def _renew_replay(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                      session: spec.WorkerSession, command: spec.RenewCommand,
                      now: int) -> spec.Authority:
        return self._authority(task, attempt, now)


class KeepAliveAfterDispatchReplays(LedgenceCore):
    """A renewal sequence binds its intent one way only: a dispatch at a keep_alive's
    sequence conflicts, a keep_alive at a dispatch's is replayed (a keep_alive taken for the
    lesser request)."""

    def _renew_replay(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                      session: spec.WorkerSession, command: spec.RenewCommand,
                      now: int) -> spec.Authority:
        last = attempt.snapshot.last_renewal
        if last is not None and last.intent == spec.DISPATCH \
                and command.intent == spec.KEEP_ALIVE:
            return self._authority(task, attempt, now)
        return super()._renew_replay(txn, task, attempt, session, command, now)


class DispatchAuthorizedDespiteCancel(LedgenceCore):
    def _authorizes_dispatch(self, task: TaskRecord, attempt: StoredAttempt,
                             command: spec.RenewCommand, now: int) -> bool:
        att = attempt.snapshot
        return bool(command.intent == spec.DISPATCH and not att.execution_may_have_started
                    and now < att.deadline and att.settlement is None)


class DispatchAtDeadlineAuthorized(LedgenceCore):
    """The deadline compared with <=: a dispatch renewal at exactly the deadline (execution
    time already 0) still authorizes dispatch and writes `dispatch_authorized`."""

    def _authorizes_dispatch(self, task: TaskRecord, attempt: StoredAttempt,
                             command: spec.RenewCommand, now: int) -> bool:
        att = attempt.snapshot
        return (command.intent == spec.DISPATCH and not att.execution_may_have_started
                and now <= att.deadline and task.snapshot.cancel_requested_at is None
                and att.settlement is None)


class UnknownIntentIsKeepAlive(LedgenceCore):
    def renew(self, command: spec.RenewCommand) -> spec.Authority:
        if (isinstance(command, spec.RenewCommand) and isinstance(command.intent, str)
                and command.intent not in (spec.KEEP_ALIVE, spec.DISPATCH)):
            command = attrs.evolve(command, intent=spec.KEEP_ALIVE)
        return super().renew(command)


class LeaseExpiryAsI32(LedgenceCore):
    """Keeps a lease's expires_at (ms) in a 32-bit signed integer: at a real date it wraps,
    and the lease it grants or renews has ended long ago."""

    def _lease_expiry(self, now: int, authority_deadline: int,
                      session: spec.WorkerSession) -> int:
        expiry: int = int32(super()._lease_expiry(now, authority_deadline, session))
        return expiry


MUTANTS: tuple[Mutant, ...] = (
    Mutant("lease_expiry_as_i32", "a lease's expires_at is kept in a 32-bit signed integer: at "
           "a real date it wraps", "LDG-ACQ-002", LeaseExpiryAsI32),
    Mutant("claims_in_submission_order", "claims ignore available_at: a retry goes before a "
           "newer task available sooner", "LDG-ACQ-001", ClaimsInSubmissionOrder),
    Mutant("retry_claimed_during_backoff", "a retry is claimed before its available_at",
           "LDG-ACQ-001", RetryClaimedDuringBackoff),
    Mutant("authority_deadline_without_grace", "an attempt's authority deadline has no cleanup "
           "grace", "LDG-ACQ-002", AuthorityDeadlineWithoutGrace),
    Mutant("claim_leaves_quiescence_unset", "a claimed attempt reads no quiescence",
           "LDG-ACQ-002", ClaimLeavesQuiescenceUnset),
    Mutant("renewal_outlives_session", "a renewed lease is not capped by its session's expiry",
           "LDG-ACQ-003", RenewalOutlivesSession),
    Mutant("replay_before_session_check", "an expired session still gets its replays",
           "LDG-ACQ-004", ReplayBeforeSessionCheck),
    Mutant("consumer_id_unchecked", "a consumer id >= the session's concurrency is accepted",
           "LDG-ACQ-005", ConsumerIdUnchecked),
    Mutant("any_first_sequence", "a consumer's first sequence may be other than 1",
           "LDG-ACQ-006", AnyFirstSequence),
    Mutant("zero_below_cursor_obsolete", "sequence 0 beside a cursor answers "
           "obsolete_operation", "LDG-ACQ-006", ZeroBelowCursorObsolete),
    Mutant("session_queue_prefix_fits", "a command whose queue is a prefix of its session's "
           "queue fits the session", "LDG-ACQ-005", SessionQueuePrefixFits),
    Mutant("obsolete_sequence_replays", "a sequence below the cursor replays the cursor's answer",
           "LDG-ACQ-007", ObsoleteSequenceReplays),
    Mutant("sequence_gaps_accepted", "a sequence that skips past the cursor is accepted",
           "LDG-ACQ-008", SequenceGapsAccepted),
    Mutant("empty_cursor_is_no_cursor", "repeating an Empty sequence claims newly arrived work",
           "LDG-ACQ-009", EmptyCursorIsNoCursor),
    Mutant("replay_extends_lease", "replaying a live assignment extends its lease",
           "LDG-ACQ-010", ReplayExtendsLease),
    Mutant("lost_replay_clears_cursor", "a lost assignment replays as ownership_lost once, then "
           "as Empty", "LDG-ACQ-011", LostReplayClearsCursor),
    Mutant("overtaking_allowed", "the next sequence claims while the previous assignment is live",
           "LDG-ACQ-012", OvertakingAllowed),
    Mutant("pending_commits_cursor", "a Pending probe moves the cursor", "LDG-ACQ-013",
           PendingCommitsCursor),
    Mutant("probe_drops_finish_empty", "probe_acquisition with finish_empty answers Pending",
           "LDG-ACQ-014", ProbeDropsFinishEmpty),
    Mutant("deadline_at_now_still_runs", "a probe whose deadline is now still acquires",
           "LDG-ACQ-015", DeadlineAtNowStillRuns),
    Mutant("busy_per_session", "a consumer is busy while another consumer of its session works",
           "LDG-ACQ-016", BusyPerSession),
    Mutant("claim_read_then_write", "the candidate is read and claimed in two transactions",
           "LDG-ACQ-017", ClaimReadThenWrite),
    Mutant("live_at_expiry", "an attempt is still live at its exact lease expiry", "LDG-LIVE-001",
           LiveAtExpiry),
    Mutant("dispatch_allowed_ignores_cancel", "authority allows dispatch after a cancel request",
           "LDG-AUTH-001", DispatchAllowedIgnoresCancel),
    Mutant("renew_missing_task_is_lost", "under renew_lookup=task_first, renew of a missing "
           "task answers ownership_lost", "LDG-OWNER-001", RenewMissingTaskIsLost,
           options={spec.RENEW_LOOKUP: spec.TASK_FIRST}),
    Mutant("renew_task_before_cursor", "renew looks the task up before the consumer's cursor: "
           "a task never minted answers not_found", "LDG-OWNER-001", RenewTaskBeforeCursor),
    Mutant("execution_time_outlives_cancel", "after a cancel request, authority still counts "
           "execution time down to the deadline", "LDG-AUTH-001", ExecutionTimeOutlivesCancel),
    Mutant("keep_alive_does_not_extend", "a keep_alive renewal does not extend the lease",
           "LDG-RENEW-001", KeepAliveDoesNotExtend),
    Mutant("renew_ignores_currency", "a superseded attempt's owner can still renew",
           "LDG-RENEW-002", RenewIgnoresCurrency),
    Mutant("renew_ignores_session_expiry", "renew accepts an expired session", "LDG-RENEW-003",
           RenewIgnoresSessionExpiry),
    Mutant("renewal_gaps_accepted", "a renewal sequence that skips ahead is accepted",
           "LDG-RENEW-004", RenewalGapsAccepted),
    Mutant("renewal_replay_extends", "a renewal replay extends the lease", "LDG-RENEW-005",
           RenewalReplayExtends),
    Mutant("renewal_intent_unbound", "a renewal sequence repeated with another intent is "
           "accepted", "LDG-RENEW-006", RenewalIntentUnbound),
    Mutant("keep_alive_after_dispatch_replays", "a keep_alive at a dispatch renewal's "
           "sequence is replayed", "LDG-RENEW-006", KeepAliveAfterDispatchReplays),
    Mutant("dispatch_authorized_despite_cancel", "a dispatch renewal after a cancel request "
           "authorizes dispatch", "LDG-RENEW-007", DispatchAuthorizedDespiteCancel),
    Mutant("dispatch_at_deadline_authorized", "a dispatch renewal at exactly the deadline "
           "authorizes dispatch", "LDG-RENEW-007", DispatchAtDeadlineAuthorized),
    Mutant("unknown_intent_is_keep_alive", "an unknown renewal intent is taken for keep_alive",
           "LDG-RENEW-008", UnknownIntentIsKeepAlive),
)
