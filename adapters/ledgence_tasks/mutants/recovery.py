"""The ledgence-tasks mutants for settlement, quiescence, the finish rules, cancel,
recovery and attempt reads. Each is the correct core with one bug, caught by its expected
clause.
Over 500 lines: a catalogue of small one-bug classes, one per rule bent; the other ledgence
mutants are already split by area (delivery, discovery, edges)."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.adapters.ledgence_tasks.core import (
    ACTIVE,
    SUCCEEDED,
    Ending,
    LedgenceCore,
    StoredAttempt,
    TaskRecord,
    Txn,
)
from fencepost.adapters.ledgence_tasks.mutants.edges import as_i64
from fencepost.adapters.mutants.base import Mutant, lossy_json, round_trip
from fencepost.spec import ledgence_tasks as spec

# -- settlement -----------------------------------------------------------------------------------


class ReceiptInSeconds(LedgenceCore):
    """The receipt's accepted_at goes through a seconds-resolution column."""

    def _accept_settlement(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                           command: spec.SettleCommand, now: int) -> spec.SettleReply:
        reply = super()._accept_settlement(txn, task, attempt, command, now)
        receipt = attrs.evolve(reply.receipt, accepted_at=now // 1000 * 1000)
        stored = txn.load_attempt(task.task_id, attempt.attempt_id)
        assert stored is not None  # saved by this transaction
        txn.save_attempt(attrs.evolve(stored, receipt=receipt))
        return attrs.evolve(reply, receipt=receipt)


class OutputThroughLossyJson(LedgenceCore):
    """A success report's output is stored through binary64 JSON: the result reads back
    1 for 1.0, 0 for -0.0, 2^64 for 2^64 - 1."""

    def _accept_settlement(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                           command: spec.SettleCommand, now: int) -> spec.SettleReply:
        report = command.report
        if isinstance(report, spec.ExecutionReport) and "output" in report.outcome:
            outcome = {**report.outcome, "output": lossy_json(report.outcome["output"])}
            command = attrs.evolve(command, report=attrs.evolve(report, outcome=outcome))
        return super()._accept_settlement(txn, task, attempt, command, now)


class ElapsedAsI64(LedgenceCore):
    """Keeps a report's elapsed_ms as an i64 (a BIGINT column): from 2^63 on it is stored, and
    read back, negative."""

    def _accept_settlement(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                           command: spec.SettleCommand, now: int) -> spec.SettleReply:
        elapsed = getattr(command.report, "elapsed_ms", None)
        if as_i64(elapsed) != elapsed:
            command = attrs.evolve(command, report=attrs.evolve(command.report,
                                                                elapsed_ms=as_i64(elapsed)))
        return super()._accept_settlement(txn, task, attempt, command, now)


class SettleIgnoresExpiry(LedgenceCore):
    """A first settlement needs the attempt current and active; its lease is not looked at."""

    def _may_settle(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        return bool(task.snapshot.state == ACTIVE
                    and task.snapshot.current_attempt_id == attempt.attempt_id
                    and attempt.snapshot.state == ACTIVE)


class ReplayAnsweredAsNew(LedgenceCore):
    def _settle_replay(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                       command: spec.SettleCommand, now: int) -> spec.SettleReply:
        reply = super()._settle_replay(txn, task, attempt, command, now)
        return attrs.evolve(reply, already_accepted=False)


class OperationIdNotCompared(LedgenceCore):
    def _same_settlement(self, stored: spec.SettleCommand, command: spec.SettleCommand) -> bool:
        return spec.same_settlement(stored, attrs.evolve(command,
                                                         operation_id=stored.operation_id))


class DigestNotCompared(LedgenceCore):
    def _check_report(self, command: spec.SettleCommand, task: TaskRecord) -> None:
        digest = command.report.context.digest
        spec.check_report_identity(command, attrs.evolve(task.snapshot.descriptor,
                                                         digest=digest))


class ApplicationKindRestricted(LedgenceCore):
    """An application failure's kind must be one of the worker error kinds (the program's own
    kinds refused), as the kit itself required before the seed's types were read."""

    def _check_settle(self, command: spec.SettleCommand) -> None:
        super()._check_settle(command)
        report = command.report
        if (isinstance(report, spec.ExecutionReport) and report.outcome.get("status") == "failure"
                and report.outcome.get("kind") not in spec.FAILURE_KINDS):
            raise spec.InvalidInput("a failure outcome needs a known kind")


class OutputNotCounted(LedgenceCore):
    """The 8 MiB limit is measured without the success output (stored apart, as a blob)."""

    def _check_size(self, command: spec.SettleCommand) -> None:
        report = command.report
        if isinstance(report, spec.ExecutionReport) and report.outcome.get("status") == "success":
            blank = attrs.evolve(report, outcome={**report.outcome, "output": None})
            command = attrs.evolve(command, report=blank)
        spec.check_settlement_size(command)


class SettlementLeavesExecutionUnstarted(LedgenceCore):
    """Only a dispatch renewal marks execution_may_have_started; an accepted completed report
    (or a failure that says the work started) leaves it as it was."""

    def _started_after(self, attempt: StoredAttempt, report: Any) -> bool:
        return bool(attempt.snapshot.execution_may_have_started)


class MissingAttemptIsLost(LedgenceCore):
    """settle and confirm_quiescence answer ownership_lost for an attempt id the task never
    had (the seed answers not_found: it loads the attempt by task and id)."""

    def _owned_attempt(self, txn: Txn, owner: spec.LeaseOwner) -> StoredAttempt:
        if txn.load_attempt(owner.task_id, owner.attempt_id) is None:
            raise spec.OwnershipLost(self._lost(owner))
        return super()._owned_attempt(txn, owner)


class UnconfirmedFinishesAtOnce(LedgenceCore):
    """The quiescence flag is stored but an unconfirmed settlement finishes the attempt too."""

    def _accept_settlement(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                           command: spec.SettleCommand, now: int) -> spec.SettleReply:
        reply = super()._accept_settlement(txn, task, attempt, command, now)
        if command.quiescence == spec.CONFIRMED:
            return reply
        settled = txn.load_attempt(task.task_id, attempt.attempt_id)
        assert settled is not None  # saved by this transaction
        finished = self._finish(txn, task, settled, now)
        return attrs.evolve(reply, task_state=finished.snapshot.state)


# -- quiescence -----------------------------------------------------------------------------------


class ConfirmLooksUpSwapped(LedgenceCore):
    """Re-reads the settlement to confirm with the task and attempt ids swapped, finds none
    and answers invalid_input."""

    def _confirm(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt, now: int) -> str:
        settled = txn.load_attempt(attempt.attempt_id, task.task_id)
        if settled is None or settled.snapshot.settlement is None:
            raise spec.InvalidInput(
                f"attempt {attempt.attempt_id!r} has no accepted settlement to confirm")
        return str(super()._confirm(txn, task, settled, now))


class ConfirmedCheckedOnState(LedgenceCore):
    """The already-confirmed check reads the attempt's state, not its quiescence: a second
    confirmation finds the attempt finished and answers ownership_lost."""

    def _already_confirmed(self, attempt: StoredAttempt) -> bool:
        return bool(attempt.snapshot.state == spec.CONFIRMED)


class ConfirmWithoutReport(LedgenceCore):
    """Confirming an attempt that has no report finishes it as lost."""

    def _has_report(self, attempt: StoredAttempt) -> bool:
        return True


class LeaseIdNotCompared(LedgenceCore):
    """Owners are compared on every field but the lease id."""

    def _owner_matches(self, attempt: StoredAttempt, owner: spec.LeaseOwner) -> bool:
        return bool(attempt.owner == attrs.evolve(owner, lease_id=attempt.owner.lease_id))


# -- the finish rules -----------------------------------------------------------------------------


class SuccessKeepsCurrentAttempt(LedgenceCore):
    """The success path forgets to clear the task's current attempt."""

    def _finish(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                now: int) -> TaskRecord:
        finished: TaskRecord = super()._finish(txn, task, attempt, now)
        if finished.snapshot.state != SUCCEEDED:
            return finished
        kept = attrs.evolve(finished, snapshot=attrs.evolve(
            finished.snapshot, current_attempt_id=attempt.attempt_id))
        txn.save_task(kept)
        return kept


class ApplicationFailureRetried(LedgenceCore):
    """An application failure is mapped to an execution failure of its kind."""

    def _ending(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> Ending:
        settlement = attempt.snapshot.settlement
        report = settlement.report if settlement is not None else None
        if (settlement is not None and isinstance(report, spec.ExecutionReport)
                and report.outcome["status"] == "failure"):
            failure = spec.ExecutionFailure(report.context, report.outcome["kind"],
                                            report.outcome["message"], "execution", True)
            attempt = attrs.evolve(attempt, snapshot=attrs.evolve(
                attempt.snapshot, settlement=attrs.evolve(settlement, report=failure)))
        ending: Ending = super()._ending(task, attempt, now)
        return ending


class OutcomeStartedFromReport(LedgenceCore):
    """The outcome's execution_may_have_started is read off the report (true for a completed
    one, else the failure's own flag, false without one), not the attempt: a dispatch renewal
    that marked the attempt is forgotten."""

    def _outcome(self, attempt: StoredAttempt, kind: str, **rest: Any) -> dict[str, Any]:
        outcome: dict[str, Any] = super()._outcome(attempt, kind, **rest)
        settlement = attempt.snapshot.settlement
        report = settlement.report if settlement is not None else None
        started = isinstance(report, spec.ExecutionReport) or bool(
            getattr(report, "execution_may_have_started", False))
        return {**outcome, "execution_may_have_started": started}


class OutcomeTakenAsQuiescent(LedgenceCore):
    """A finished attempt is taken for quiescent: the outcome says confirmed even when the
    report was accepted unconfirmed and the attempt expired, or was lost."""

    def _outcome(self, attempt: StoredAttempt, kind: str, **rest: Any) -> dict[str, Any]:
        outcome: dict[str, Any] = super()._outcome(attempt, kind, **rest)
        return {**outcome, "quiescence": spec.CONFIRMED}


class CleanupErrorDropped(LedgenceCore):
    """The outcome keeps a failure's error and phase but not its cleanup error (a column the
    outcome's schema lacks)."""

    def _failure(self, report: spec.ExecutionReport | spec.ExecutionFailure | None,
                 ) -> dict[str, Any]:
        failure: dict[str, Any] = super()._failure(report)
        return {**failure, "cleanup_error": None} if "cleanup_error" in failure else failure


class LostFailureWithMessage(LedgenceCore):
    """A lost attempt's failure is written as an error of kind "lost" with an empty message
    (the kit's old reading), not the seed's attempt_lost."""

    def _failure(self, report: spec.ExecutionReport | spec.ExecutionFailure | None,
                 ) -> dict[str, Any]:
        if report is None:
            return {"kind": "lost", "message": ""}
        failure: dict[str, Any] = super()._failure(report)
        return failure


class RetryAvailableAtOnce(LedgenceCore):
    def _retry_at(self, task: TaskRecord, now: int) -> int:
        return now


class BudgetOffByOne(LedgenceCore):
    """attempt_count <= max_attempts: the last attempt's retryable end retries once more."""

    def _attempts_left(self, task: TaskRecord) -> bool:
        snap = task.snapshot
        return bool(snap.attempt_count <= snap.input.retry_policy.max_attempts)


class EveryKindRetryable(LedgenceCore):
    """The kind is looked up in FAILURE_KINDS instead of RETRYABLE_FAILURE_KINDS."""

    def _retryable(self, report: spec.ExecutionFailure) -> bool:
        return report.kind in spec.FAILURE_KINDS


class SuccessBeatsCancel(LedgenceCore):
    """A success report finishes succeeded even when cancel was requested."""

    def _ending(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> Ending:
        settlement = attempt.snapshot.settlement
        report = settlement.report if settlement is not None else None
        if isinstance(report, spec.ExecutionReport) and report.outcome["status"] == "success":
            task = attrs.evolve(task, snapshot=attrs.evolve(task.snapshot,
                                                            cancel_requested_at=None))
        ending: Ending = super()._ending(task, attempt, now)
        return ending


class RetryReusesGeneration(LedgenceCore):
    """The claim of a retried task numbers its attempt from the count before the retry: the
    new attempt repeats the old generation and the count stands still."""

    def _claim(self, txn: Txn, task: TaskRecord, session: spec.WorkerSession,
               command: spec.AcquireCommand, now: int) -> spec.Assignment:
        snap = task.snapshot
        if snap.attempt_count > 0:
            task = attrs.evolve(task, snapshot=attrs.evolve(
                snap, attempt_count=snap.attempt_count - 1))
        return super()._claim(txn, task, session, command, now)


# -- cancel ---------------------------------------------------------------------------------------


class CancelFinalizesLiveAttempt(LedgenceCore):
    def _cancel_live(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                     now: int) -> str:
        return str(self._cancel_expired(txn, task, attempt, now))


class CancelSetsDeadline(LedgenceCore):
    """A cancel sets the authority deadline to now + 30 000 instead of cutting it: a deadline
    already sooner is extended (the lease, capped by the smaller, is left as it was)."""

    def _cancel_live(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                     now: int) -> str:
        att = attempt.snapshot
        extended = attrs.evolve(att, authority_deadline=now + spec.CLEANUP_GRACE_MS)
        txn.save_attempt(attrs.evolve(attempt, snapshot=extended))
        return str(super()._cancel_live(txn, task, attrs.evolve(attempt, snapshot=extended),
                                        now))


class CancelOfExpiredOnlyRequests(LedgenceCore):
    """An expired attempt's cancel takes the live path: requested, the task left active."""

    def _cancel_expired(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                        now: int) -> str:
        return str(self._cancel_live(txn, task, attempt, now))


# -- recovery -------------------------------------------------------------------------------------


class RecoveryAssumesNoReport(LedgenceCore):
    """Recovery asserts that an expired attempt has no report: a candidate with an accepted,
    unconfirmed settlement fails the scan."""

    def _still_expired(self, task: TaskRecord, attempt: StoredAttempt | None,
                       now: int) -> bool:
        expired = bool(super()._still_expired(task, attempt, now))
        if expired and attempt is not None and attempt.snapshot.settlement is not None:
            raise RuntimeError(f"expired attempt {attempt.attempt_id!r} already has a report")
        return expired


class LimitHasNoUpperBound(LedgenceCore):
    """Only the lower bound of the batch limit is checked (the query's LIMIT would cap it)."""

    def _valid_limit(self, limit: Any) -> bool:
        return not isinstance(limit, bool) and isinstance(limit, int) and limit >= 1


class LimitCheckedAgainstBacklog(LedgenceCore):
    """The limit is validated against the number of attempts due: a batch smaller than the
    backlog answers invalid_input instead of taking the earliest."""

    def _shortlist(self, txn: Txn, now: int, limit: int) -> list[spec.AttemptRef]:
        due: list[spec.AttemptRef] = super()._shortlist(txn, now, spec.MAX_RECOVERY_BATCH)
        if len(due) > limit:
            raise spec.InvalidInput(f"limit {limit} is below the {len(due)} attempts due")
        return due


class CarriesLastShortlist(LedgenceCore):
    """Each scan re-examines the previous scan's candidates (meant for those it passed over
    as locked), whatever became of them."""

    def _expiry_shortlist(self, limit: int) -> list[spec.AttemptRef]:
        fresh: list[spec.AttemptRef] = super()._expiry_shortlist(limit)
        carried = [c for c in getattr(self, "_carried", []) if c not in fresh]
        self._carried = fresh
        return (fresh + carried)[:limit]


class RescuerRechecksLeaseOnly(LedgenceCore):
    """River's rescuer: a round trip after the shortlist each candidate is updated by its task
    id once its attempt's lease is seen expired; whether the task is still active with that
    attempt current is not re-checked, so an attempt finalized meanwhile is finalized again."""

    def _expire_one(self, candidate: spec.AttemptRef) -> bool:
        round_trip(self.env)
        return bool(super()._expire_one(candidate))

    def _still_expired(self, task: TaskRecord, attempt: StoredAttempt | None,
                       now: int) -> bool:
        return attempt is not None and bool(self._expired(attempt, now))


class RecoveryScansInIdOrder(LedgenceCore):
    """A bounded scan takes the due attempts by task id (the primary key's index), not by
    lease expiry: with more due than the limit it expires the wrong ones first."""

    def _shortlist(self, txn: Txn, now: int, limit: int) -> list[spec.AttemptRef]:
        due: list[spec.AttemptRef] = super()._shortlist(txn, now, spec.MAX_RECOVERY_BATCH)
        return sorted(due, key=lambda ref: ref.task_id)[:limit]


class RecheckThenWrite(LedgenceCore):
    """Re-checks a candidate in one transaction and expires it in the next."""

    def _expire_one(self, candidate: spec.AttemptRef) -> bool:
        with self._transaction() as txn:
            if self._recheck(txn, candidate) is None:
                return False
        round_trip(self.env)
        with self._transaction() as txn:
            now = self.env.clock()
            task = txn.load_task(candidate.task_id)
            attempt = txn.load_attempt(candidate.task_id, candidate.attempt_id)
            assert task is not None and attempt is not None  # tasks and attempts stay
            self._expire(txn, task, attempt, now)
            return True


# -- reads and history ----------------------------------------------------------------------------


class InspectAttemptReadsLatest(LedgenceCore):
    """inspect_attempt reads the task's latest attempt; the attempt id is not compared."""

    def _inspected_attempt(self, txn: Txn, task: TaskRecord,
                           attempt_id: str) -> StoredAttempt | None:
        latest = task.latest_attempt_id
        return txn.load_attempt(task.task_id, latest) if latest is not None else None


class StatusExpiresOnRead(LedgenceCore):
    """status finalizes an attempt it finds past its expiry (lazy expiry on read)."""

    def status(self, scope: spec.Scope, task_id: str) -> spec.TaskStatus:
        self._check_task_ref(scope, task_id)
        with self._transaction() as txn:
            task = self._require(txn, scope, task_id)
            if task.snapshot.state == ACTIVE:
                attempt = self._current_attempt(txn, task)
                now = self.env.clock()
                if not self._live(task, attempt, now):
                    task = self._expire(txn, task, attempt, now)
            return self._status(task)


class HistoryPageUnbounded(LedgenceCore):
    """history returns every event after ``after_sequence``: the page of 100 is not cut."""

    def _history_page(self, txn: Txn, task_id: str,
                      after_sequence: int) -> list[spec.RecordedHistoryEvent]:
        page: list[spec.RecordedHistoryEvent] = txn.history(task_id, after_sequence, 1 << 30)
        return page


class RetryWritesNoEvent(LedgenceCore):
    """The retry path requeues the task but writes no `retry_scheduled`."""

    def _record(self, txn: Txn, task_id: str, reason: str, at: int,
                attempt_id: str | None = None) -> None:
        if reason != "retry_scheduled":
            super()._record(txn, task_id, reason, at, attempt_id)



MUTANTS: tuple[Mutant, ...] = (
    # settlement
    Mutant("elapsed_as_i64", "a report's elapsed_ms of 2^63 and more is kept, and read back, "
           "negative", "LDG-READ-005", ElapsedAsI64),
    Mutant("output_through_lossy_json", "a success output is stored through binary64 JSON",
           "LDG-READ-005", OutputThroughLossyJson),
    Mutant("receipt_in_seconds", "a receipt's accepted_at is truncated to the second",
           "LDG-SETTLE-001", ReceiptInSeconds),
    Mutant("settlement_leaves_execution_unstarted", "an accepted completed report leaves "
           "execution_may_have_started false", "LDG-SETTLE-001",
           SettlementLeavesExecutionUnstarted),
    Mutant("missing_attempt_is_lost", "settle of an attempt id the task never had answers "
           "ownership_lost, not not_found", "LDG-OWNER-001", MissingAttemptIsLost),
    Mutant("settle_ignores_expiry", "settle is accepted from an expired owner",
           "LDG-SETTLE-002", SettleIgnoresExpiry),
    Mutant("replay_answered_as_new", "an identical re-send answers already_accepted false",
           "LDG-SETTLE-003", ReplayAnsweredAsNew),
    Mutant("operation_id_not_compared", "a settlement under another operation id replays instead "
           "of conflicting", "LDG-SETTLE-004", OperationIdNotCompared),
    Mutant("digest_not_compared", "a report naming another program digest is accepted",
           "LDG-SETTLE-005", DigestNotCompared),
    Mutant("output_not_counted", "a settlement over 8 MiB is accepted when the bulk is its output",
           "LDG-SETTLE-006", OutputNotCounted),
    Mutant("application_kind_restricted", "an application failure of the program's own kind is "
           "refused", "LDG-SETTLE-006", ApplicationKindRestricted),
    Mutant("unconfirmed_finishes_at_once", "an unconfirmed settlement finishes the attempt at once",
           "LDG-SETTLE-007", UnconfirmedFinishesAtOnce),
    # quiescence
    Mutant("confirm_looks_up_swapped", "confirm_quiescence of a settled attempt answers "
           "invalid_input", "LDG-QUIESCE-001", ConfirmLooksUpSwapped),
    Mutant("confirmed_checked_on_state", "a second confirm_quiescence answers ownership_lost",
           "LDG-QUIESCE-002", ConfirmedCheckedOnState),
    Mutant("confirm_without_report", "confirm_quiescence without a report finishes the attempt "
           "as lost", "LDG-QUIESCE-003", ConfirmWithoutReport),
    Mutant("lease_id_not_compared", "confirm_quiescence with a forged lease id is accepted",
           "LDG-QUIESCE-004", LeaseIdNotCompared),
    # the finish rules
    Mutant("success_keeps_current_attempt", "a succeeded task still names its current attempt",
           "LDG-FINISH-001", SuccessKeepsCurrentAttempt),
    Mutant("application_failure_retried", "an application failure is retried",
           "LDG-FINISH-002", ApplicationFailureRetried),
    Mutant("outcome_started_from_report", "a failed task's outcome forgets the dispatch "
           "renewal that marked its attempt started", "LDG-READ-001", OutcomeStartedFromReport),
    Mutant("outcome_taken_as_quiescent", "a finished task's outcome says quiescence confirmed "
           "for an attempt that never confirmed it", "LDG-READ-001", OutcomeTakenAsQuiescent),
    Mutant("cleanup_error_dropped", "a failed task's outcome drops the report's cleanup "
           "error", "LDG-READ-001", CleanupErrorDropped),
    Mutant("lost_failure_with_message", "a lost attempt's failure reads {kind: lost, message: "
           "\"\"}, not attempt_lost", "LDG-READ-001", LostFailureWithMessage),
    Mutant("retry_available_at_once", "a retry is available at once, not after retry_delay_ms",
           "LDG-FINISH-003", RetryAvailableAtOnce),
    Mutant("budget_off_by_one", "the last attempt's retryable failure retries once more",
           "LDG-FINISH-004", BudgetOffByOne),
    Mutant("every_kind_retryable", "an integrity failure is retried", "LDG-FINISH-005",
           EveryKindRetryable),
    Mutant("success_beats_cancel", "a success report wins over a requested cancel",
           "LDG-FINISH-006", SuccessBeatsCancel),
    Mutant("retry_reuses_generation", "a retried task's new attempt repeats the old generation",
           "LDG-FINISH-007", RetryReusesGeneration),
    # cancel
    Mutant("cancel_finalizes_live_attempt", "cancel of a live attempt finalizes it at once",
           "LDG-CANCEL-003", CancelFinalizesLiveAttempt),
    Mutant("cancel_sets_deadline", "cancel of a live attempt whose deadline is within 30 s "
           "extends it to now + 30 000", "LDG-CANCEL-003", CancelSetsDeadline),
    Mutant("cancel_of_expired_only_requests", "cancel of an expired attempt leaves it active",
           "LDG-CANCEL-004", CancelOfExpiredOnlyRequests),
    # recovery
    Mutant("recovery_assumes_no_report", "a recovery scan fails on an expired attempt that has "
           "an accepted report", "LDG-RECOVER-001", RecoveryAssumesNoReport,
           crashes=("memory", "sqlite")),
    Mutant("limit_has_no_upper_bound", "expire_batch(101) is accepted", "LDG-RECOVER-002",
           LimitHasNoUpperBound),
    Mutant("limit_checked_against_backlog", "expire_batch refuses a limit below the number of "
           "attempts due", "LDG-RECOVER-003", LimitCheckedAgainstBacklog),
    Mutant("carries_last_shortlist", "a scan re-examines the previous scan's candidates",
           "LDG-RECOVER-004", CarriesLastShortlist),
    Mutant("rescuer_rechecks_lease_only", "a scan re-finalizes an attempt another scan or a "
           "cancel already finalized", "LDG-RECOVER-005", RescuerRechecksLeaseOnly),
    Mutant("recovery_scans_in_id_order", "expire_batch with a limit takes the due attempts by "
           "task id, not earliest expiry first", "LDG-RECOVER-003", RecoveryScansInIdOrder),
    Mutant("recheck_then_write", "a scan re-checks a candidate and expires it in two "
           "transactions", "LDG-RECOVER-005", RecheckThenWrite),
    # reads and history
    Mutant("inspect_attempt_reads_latest", "inspect_attempt of an older attempt answers the "
           "latest", "LDG-READ-003", InspectAttemptReadsLatest),
    Mutant("status_expires_on_read", "status expires an attempt past its lease", "LDG-READ-004",
           StatusExpiresOnRead),
    Mutant("history_page_unbounded", "history returns every event after the given sequence, "
           "not at most 100", "LDG-HISTORY-001", HistoryPageUnbounded),
    Mutant("retry_writes_no_event", "a retry writes no retry_scheduled event", "LDG-HISTORY-002",
           RetryWritesNoEvent),
)
