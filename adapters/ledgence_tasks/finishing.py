"""How an attempt finishes: the finish rules shared by settlement, quiescence, cancel and
recovery (a requested cancel wins; a report succeeds or fails; a retryable failure or a lost
attempt retries while attempts are left)."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec

from .base import LedgenceBase
from .records import (
    CANCELLED,
    CANCELLED_OUTCOME,
    FAILED,
    LOST,
    LOST_FAILURE,
    QUEUED,
    SUCCEEDED,
    Ending,
    StoredAttempt,
    TaskRecord,
)
from .storage import Txn


class Finishing(LedgenceBase):
    """The finish rules of :class:`~.core.LedgenceCore`: :meth:`_finish` and its hooks."""

    def _finish(self, txn: Txn, task: TaskRecord, attempt: StoredAttempt,
                now: int) -> TaskRecord:
        """Finish the task's current attempt at ``now`` by :meth:`_ending`: the attempt's state
        and finished_at, the task's state, outcome, available_at and terminal_at, no current
        attempt; one finishing event. Answers the task as saved."""
        ending = self._ending(task, attempt, now)
        snap = task.snapshot
        terminal = ending.task_state in spec.TERMINAL_TASK_STATES
        finished = attrs.evolve(
            task, outcome=ending.outcome,
            snapshot=attrs.evolve(snap, state=ending.task_state, current_attempt_id=None,
                                  available_at=ending.available_at,
                                  terminal_at=now if terminal else snap.terminal_at),
        )
        txn.save_attempt(attrs.evolve(attempt, snapshot=attrs.evolve(
            attempt.snapshot, state=ending.attempt_state, finished_at=now)))
        txn.save_task(finished)
        self._record(txn, task.task_id, ending.reason, now, attempt.attempt_id)
        return finished

    # -- helpers the mutants bend -------------------------------------------------------

    def _ending(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> Ending:
        """The finish rules: cancel wins; a completed report succeeds or fails; a final
        failure fails; a retryable failure or a lost attempt retries while attempts are left,
        else fails."""
        att = attempt.snapshot
        report = att.settlement.report if att.settlement is not None else None
        available_at = task.snapshot.available_at
        if self._cancel_wins(task):
            attempt_state = CANCELLED if att.quiescence == spec.CONFIRMED else LOST
            return Ending(CANCELLED, attempt_state, CANCELLED_OUTCOME, CANCELLED, available_at)
        if isinstance(report, spec.ExecutionReport) and report.outcome["status"] == "success":
            return Ending(SUCCEEDED, SUCCEEDED,
                          self._outcome(attempt, SUCCEEDED, output=report.outcome["output"]),
                          SUCCEEDED, available_at)
        if isinstance(report, spec.ExecutionReport) or (
                isinstance(report, spec.ExecutionFailure) and not self._retryable(report)):
            return Ending(FAILED, FAILED, self._outcome(attempt, FAILED,
                                                        failure=self._failure(report)),
                          FAILED, available_at)
        attempt_state = FAILED if report is not None else LOST
        if self._attempts_left(task):
            return Ending(QUEUED, attempt_state, None, "retry_scheduled",
                          self._retry_at(task, now))
        return Ending(FAILED, attempt_state,
                      self._outcome(attempt, FAILED, failure=self._failure(report)),
                      FAILED, available_at)

    def _outcome(self, attempt: StoredAttempt, kind: str, **rest: Any) -> dict[str, Any]:
        """A finished task's outcome: its last attempt and that attempt's quiescence and
        execution_may_have_started as it ends, then the output or the failure (the seed's
        ``TaskOutcome``: crates/ledgence-orchestration-core/src/observation.rs:96-157 at
        3abb9ee)."""
        att = attempt.snapshot
        return {"kind": kind, "attempt_id": attempt.attempt_id, "quiescence": att.quiescence,
                "execution_may_have_started": att.execution_may_have_started, **rest}

    def _failure(self, report: spec.ExecutionReport | spec.ExecutionFailure | None,
                 ) -> dict[str, Any]:
        """The outcome's failure: a completed report's application error, a failure report's
        error, phase and cleanup error, or a lost attempt (observation.rs:120-157)."""
        if isinstance(report, spec.ExecutionReport):
            outcome = report.outcome
            return {"kind": "application",
                    "error": {"kind": outcome["kind"], "message": outcome["message"]}}
        if isinstance(report, spec.ExecutionFailure):
            cleanup = report.cleanup_error
            return {"kind": "execution",
                    "error": {"kind": report.kind, "message": report.message},
                    "phase": report.phase,
                    "cleanup_error": dict(cleanup) if cleanup is not None else None}
        return dict(LOST_FAILURE)

    def _cancel_wins(self, task: TaskRecord) -> bool:
        """LDG-FINISH-006: a requested cancel decides a finishing attempt, whatever its report."""
        return task.snapshot.cancel_requested_at is not None

    def _retryable(self, report: spec.ExecutionFailure) -> bool:
        """An execution failure of a retryable kind (unavailable, io, capacity...)."""
        return report.kind in spec.RETRYABLE_FAILURE_KINDS

    def _attempts_left(self, task: TaskRecord) -> bool:
        """LDG-FINISH-004: the attempt budget: attempt_count < max_attempts."""
        snap = task.snapshot
        return snap.attempt_count < snap.input.retry_policy.max_attempts

    def _retry_at(self, task: TaskRecord, now: int) -> int:
        """When a retried task is claimable again: now + retry_delay_ms."""
        return now + task.snapshot.input.retry_policy.retry_delay_ms
