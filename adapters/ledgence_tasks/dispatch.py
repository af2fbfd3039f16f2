"""Targeted dispatch: ``claim_dispatch``.

A claim names a task and a generation and takes the consumer's next acquisition sequence; its
disposition (claimed, already handed off, deferred, terminal or superseded) is kept as a
receipt at that (session, consumer, sequence) and answered again to a re-sent claim."""

from __future__ import annotations

from typing import Any

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import ContractError

from .acquisition import Acquisition
from .records import ACTIVE, DISPATCH, ClaimReceipt, Cursor, TaskRecord
from .storage import Txn


class Dispatch(Acquisition):
    """The ``claim_dispatch`` operation of :class:`~.core.LedgenceCore` (a claim is an
    acquisition of one named task, so it builds on :class:`~.acquisition.Acquisition`)."""

    def claim_dispatch(self, command: spec.ClaimCommand) -> spec.ClaimReply:
        if not self._dispatch_supported():
            return self._claim_unsupported(command)
        self._check_claim(command)
        with self._transaction() as txn:
            return self._claim_dispatch_in(txn, command)

    def _claim_dispatch_in(self, txn: Txn, command: spec.ClaimCommand) -> spec.ClaimReply:
        """Steps 2-8 in one transaction: locks (session, cursor), the receipt (replay or
        conflict), session, fit, sequence, busy, the task (locked), the disposition (a claim,
        or a handled one that moves the cursor), the receipt."""
        now = self.env.clock()
        acq, dispatch = command.acquisition, command.dispatch
        cursor = self._lock_claimant(txn, acq)
        receipt = self._claim_receipt(txn, command)
        if receipt is not None:
            return self._claim_replay(txn, receipt, command, now)
        session = self._usable_session(txn, acq.worker_session_id, now)
        if not self._fits_session(session, acq):
            raise spec.InvalidInput(
                "the claim's scope, queue or consumer id does not fit the session "
                f"{session.id!r} (consumers 0..{session.concurrency - 1})")
        self._claim_sequence(cursor, acq.sequence)
        if cursor is not None and self._busy(txn, cursor, now):
            raise spec.Busy(f"consumer {acq.consumer_id} still holds a live assignment "
                            f"(sequence {cursor.sequence})")
        task = self._dispatch_task(txn, dispatch)
        if not self._generation_issued(task, dispatch.generation):
            raise spec.InvalidInput("dispatch generation has never been issued")
        disposition = self._disposition(task, dispatch.generation, now)
        if disposition is None:
            disposition = self._claim_target(txn, task, session, command, now)
        else:
            disposition = self._claim_handled(txn, session, command, disposition)
        self._store_receipt(txn, command, disposition)
        return spec.ClaimReply(command, disposition)

    def _check_claim(self, command: spec.ClaimCommand) -> None:
        spec.validate_claim(command)

    # -- helpers the mutants bend -------------------------------------------------------

    def _dispatch_supported(self) -> bool:
        """LDG-DISPATCH-008: does this store implement targeted claims (it declares the
        ``dispatch`` capability)?"""
        return DISPATCH in self.capabilities

    def _claim_unsupported(self, command: Any) -> spec.ClaimReply:
        """A store without targeted dispatch: every claim, valid or not, is invalid_input
        (UNSUPPORTED_DISPATCH) and nothing changes (never a fallback to a queue scan)."""
        raise spec.InvalidInput(spec.UNSUPPORTED_DISPATCH)

    def _claim_key(self, acquisition: spec.AcquireCommand) -> tuple[str, int]:
        """The (session id, consumer id) of a claim's cursor and receipts, as the command
        names them (receipts are looked up before the session is checked)."""
        return acquisition.worker_session_id, acquisition.consumer_id

    def _lock_claimant(self, txn: Txn, acquisition: spec.AcquireCommand) -> Cursor | None:
        """Take a claim's locks before any check, in the lock order: the session (read), then
        the consumer's cursor (insert-or-lock), so that claims and acquisitions of one
        consumer serialize and a claim sees the receipt of one that committed while it
        waited. A missing session, or a consumer the session does not have, locks no cursor
        (no receipt or cursor can exist for it). Answers the cursor."""
        session = txn.read_session(acquisition.worker_session_id)
        if session is None or not self._fits_session(session, acquisition):
            return None
        return txn.lock_cursor(*self._claim_key(acquisition))

    def _claim_receipt(self, txn: Txn, command: spec.ClaimCommand) -> ClaimReceipt | None:
        """LDG-DISPATCH-005: the receipt at the claim's (session, consumer, sequence)."""
        acq = command.acquisition
        return txn.load_receipt(*self._claim_key(acq), acq.sequence)

    def _same_claim(self, stored: spec.ClaimCommand, command: spec.ClaimCommand) -> bool:
        """Is ``command`` a re-send of the stored claim (equal in every field)?"""
        return stored == command

    def _claim_replay(self, txn: Txn, receipt: ClaimReceipt, command: spec.ClaimCommand,
                      now: int) -> spec.ClaimReply:
        """LDG-DISPATCH-005: a claim's sequence again, writing nothing: another command is a
        conflict; the same one answers the stored disposition, except that Claimed is
        answered fresh (:meth:`_claimed_replay`). Even after the session expired."""
        if not self._same_claim(receipt.command, command):
            raise spec.Conflict(
                f"sequence {command.acquisition.sequence} of consumer "
                f"{command.acquisition.consumer_id} was used by another dispatch claim")
        disposition = receipt.disposition
        if isinstance(disposition, spec.ClaimClaimed):
            disposition = spec.ClaimClaimed(self._claimed_replay(
                txn, command.acquisition.sequence, self._claimed_attempt(disposition), now))
        return spec.ClaimReply(command, disposition)

    @staticmethod
    def _claimed_attempt(disposition: spec.ClaimClaimed) -> spec.AttemptRef:
        """The attempt a stored Claimed disposition assigned."""
        reply = disposition.reply
        if isinstance(reply, spec.AcquireAssigned):
            event = reply.assignment.event
            return spec.AttemptRef(event.task_id, event.attempt_id)
        lost: spec.AttemptRef = reply.assignment  # an AcquireOwnershipLost
        return lost

    def _claimed_replay(self, txn: Txn, sequence: int, ref: spec.AttemptRef, now: int) -> Any:
        """A replayed Claimed: the stored attempt's assignment with authority at ``now`` while
        it is live, else OwnershipLost of that attempt."""
        task = txn.load_task(ref.task_id)
        attempt = txn.load_attempt(ref.task_id, ref.attempt_id)
        if task is None or attempt is None:
            raise RuntimeError(f"the store lost attempt {ref.attempt_id!r} of {ref.task_id!r}")
        if self._live(task, attempt, now):
            return spec.AcquireAssigned(sequence, self._assignment(task, attempt, now))
        return spec.AcquireOwnershipLost(sequence, ref)

    def _claim_sequence(self, cursor: Cursor | None, sequence: int) -> None:
        """LDG-DISPATCH-006: a claim takes the consumer's next sequence as acquire does
        (:meth:`_acquire_sequence`: out_of_order, obsolete_operation); its cursor's own
        sequence, used by an acquisition (no receipt), is a conflict."""
        if self._acquire_sequence(cursor, sequence):
            raise spec.Conflict(
                f"sequence {sequence} was used by an acquisition; claim at the next one")

    def _dispatch_task(self, txn: Txn, dispatch: spec.DispatchRef) -> TaskRecord:
        """LDG-DISPATCH-007: the task (locked): not_found when missing or of another scope,
        invalid_input when its queue is not routed (LDG-DISPATCH-009), conflict when it is of
        another queue than the claim names."""
        task = self._require(txn, dispatch.scope, dispatch.task_id)
        if not self._routed(task.snapshot.input.queue):
            raise spec.InvalidInput(spec.UNROUTED_CLAIM)
        if task.snapshot.input.queue != dispatch.queue:
            raise spec.Conflict(f"task {dispatch.task_id!r} is not in queue {dispatch.queue!r}")
        return task

    def _generation_issued(self, task: TaskRecord, generation: int) -> bool:
        """LDG-DISPATCH-007: a generation up to attempt_count + 1 has been issued (the next
        attempt's is, as soon as the task is queued)."""
        return generation <= task.snapshot.attempt_count + 1

    def _superseded(self, task: TaskRecord) -> bool:
        """LDG-DISPATCH-003: a terminal or cancel-requested task is never claimed again."""
        snap = task.snapshot
        return snap.state in spec.TERMINAL_TASK_STATES or snap.cancel_requested_at is not None

    def _disposition(self, task: TaskRecord, generation: int, now: int) -> Any:
        """Rule 7 for an issued generation ``g`` of a task with ``n`` attempts: terminal or
        cancel-requested -> TerminalOrSuperseded; active: g == n -> AlreadyHandedOff (current
        attempt), g < n -> TerminalOrSuperseded, g == n + 1 -> invalid_input; queued: g <= n ->
        TerminalOrSuperseded, not yet available -> Deferred(available_at); else ``None``:
        claim it."""
        snap = task.snapshot
        n = snap.attempt_count
        if self._superseded(task):
            return spec.ClaimTerminalOrSuperseded()
        if snap.state == ACTIVE:
            if generation == n + 1:
                raise self._next_generation_while_active(task, generation)
            if generation == n:
                return spec.ClaimAlreadyHandedOff(
                    spec.AttemptRef(task.task_id, snap.current_attempt_id or ""))
            return spec.ClaimTerminalOrSuperseded()
        if generation <= n:
            return spec.ClaimTerminalOrSuperseded()
        if snap.available_at > now:
            return spec.ClaimDeferred(snap.available_at)
        return None

    def _next_generation_while_active(self, task: TaskRecord,
                                      generation: int) -> ContractError:
        """LDG-DISPATCH-007: the next generation of an active task has not been issued yet:
        invalid_input, as the seed's classify_dispatch answers for an active task
        (crates/ledgence-orchestration-core/src/dispatch.rs:36-39 at cf91d0d)."""
        return spec.InvalidInput(
            f"task {task.task_id!r} is active with attempt {task.snapshot.attempt_count}; "
            f"dispatch generation {generation} has never been issued")

    def _claim_handled(self, txn: Txn, session: spec.WorkerSession,
                       command: spec.ClaimCommand, disposition: Any) -> Any:
        """A handled (not claimed) disposition: the cursor moves to the sequence with no
        attempt; no history, nothing else."""
        txn.save_cursor(*self._cursor_key(session, command.acquisition),
                        Cursor(command.acquisition.sequence, None))
        return disposition

    def _claim_target(self, txn: Txn, task: TaskRecord, session: spec.WorkerSession,
                      command: spec.ClaimCommand, now: int) -> spec.ClaimClaimed:
        """LDG-DISPATCH-001: exactly acquire's claim (:meth:`_claim`) of this task."""
        acq = command.acquisition
        assignment = self._claim(txn, task, session, acq, now)
        return spec.ClaimClaimed(spec.AcquireAssigned(acq.sequence, assignment))

    def _store_receipt(self, txn: Txn, command: spec.ClaimCommand, disposition: Any) -> None:
        """Keep the claim's receipt at its (session, consumer, sequence) for replays."""
        acq = command.acquisition
        txn.insert_receipt(*self._claim_key(acq), acq.sequence,
                           ClaimReceipt(command, disposition))
