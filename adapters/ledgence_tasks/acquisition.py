"""Acquisition: ``probe_acquisition`` and ``acquire``.

A consumer of a worker session acquires at sequences 1, 2, 3...: a new sequence claims the
head of its queue (or answers Empty, or, for a probe that keeps waiting, Pending with nothing
committed); its cursor's own sequence replays the answer it gave, writing nothing."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec

from .base import LedgenceBase
from .records import (
    ACTIVE,
    CANDIDATE_ORDER_FIELDS,
    CLAIMED,
    DISPATCH,
    FINALIZED_EMPTY,
    QUEUED,
    REPLAYED,
    CandidateQuery,
    Cursor,
    StoredAttempt,
    TaskRecord,
)
from .storage import Txn


class _Discard(Exception):
    """Ends a transaction without committing anything it did (a Pending probe) and carries
    the answer out of it."""

    def __init__(self, answer: Any) -> None:
        super().__init__("discarded")
        self.answer = answer


class Acquisition(LedgenceBase):
    """The acquisition operations of :class:`~.core.LedgenceCore`."""

    def probe_acquisition(self, command: spec.AcquireCommand, finish_empty: bool,
                          deadline_ms: int) -> Any:
        spec.validate_acquire_types(command)
        if not isinstance(finish_empty, bool):
            raise spec.InvalidInput("finish_empty must be a bool")
        if isinstance(deadline_ms, bool) or not isinstance(deadline_ms, int):
            raise spec.InvalidInput("deadline_ms must be an integer (ms of store time)")
        now = self.env.clock()
        if self._deadline_passed(deadline_ms, now):  # before the command's values are checked
            raise spec.Unavailable(f"the acquisition deadline {deadline_ms} has passed ({now})")
        self._check_acquire(command)
        return self._acquire(command, finish_empty)

    def acquire(self, command: spec.AcquireCommand) -> Any:
        self._check_acquire(command)
        completed = self._acquire(command, True)
        return completed.reply

    def _acquire(self, command: spec.AcquireCommand, finish_empty: bool) -> Any:
        """probe_acquisition's steps 2-9, its deadline checked (acquire has none)."""
        try:
            with self._transaction() as txn:
                return self._acquire_in(txn, command, finish_empty)
        except _Discard as discarded:
            return discarded.answer

    def _acquire_in(self, txn: Txn, command: spec.AcquireCommand, finish_empty: bool) -> Any:
        """Steps 2-9 in one transaction: session, fit, sequence, cursor (replay or busy),
        candidate, then the claim, the committed Empty or the rolled-back Pending."""
        now = self.env.clock()
        session = self._usable_session(txn, command.worker_session_id, now)
        if not self._fits_session(session, command):
            raise spec.InvalidInput(
                "the command's scope, queue or consumer id does not fit the session "
                f"{session.id!r} (consumers 0..{session.concurrency - 1})")
        key = self._cursor_key(session, command)
        cursor = txn.lock_cursor(*key)
        if self._acquire_sequence(cursor, command.sequence):
            assert cursor is not None
            if self._sequence_claimed(txn, key, command.sequence):
                raise spec.Conflict(
                    f"sequence {command.sequence} of consumer {command.consumer_id} holds a "
                    "dispatch claim; replay that claim or acquire at the next sequence")
            return spec.ProbeCompleted(self._acquire_replay(txn, cursor, now), REPLAYED)
        if cursor is not None and self._busy(txn, cursor, now):
            raise spec.Busy(f"consumer {command.consumer_id} still holds a live assignment "
                            f"(sequence {cursor.sequence})")
        if self._routed(command.queue):
            raise spec.ExternalDispatchRequired(
                f"queue {command.queue!r} is routed to external dispatch; claim its tasks")
        task = self._pick_candidate(txn, self._candidate_query(command, now))
        if task is None:
            return self._no_candidate(txn, session, command, finish_empty, now)
        assignment = self._claim(txn, task, session, command, now)
        return spec.ProbeCompleted(spec.AcquireAssigned(command.sequence, assignment), CLAIMED)

    def _check_acquire(self, command: spec.AcquireCommand) -> None:
        spec.validate_acquire(command)

    def _routed(self, queue: str) -> bool:
        """LDG-DISPATCH-009: the queue :data:`spec.ROUTED_QUEUE` of a store with targeted
        dispatch is routed: acquired from never, its tasks only claimed."""
        return queue == spec.ROUTED_QUEUE and DISPATCH in self.capabilities

    # -- helpers the mutants bend: sequences and cursors --------------------------------

    def _deadline_passed(self, deadline_ms: int, now: int) -> bool:
        """LDG-ACQ-015: a probe whose deadline is at or before now is unavailable."""
        return deadline_ms <= now

    def _cursor_key(self, session: spec.WorkerSession,
                    command: spec.AcquireCommand) -> tuple[str, int]:
        """LDG-ACQ-016: cursors are per (session, consumer)."""
        return session.id, command.consumer_id

    def _fits_session(self, session: spec.WorkerSession, command: spec.AcquireCommand) -> bool:
        """The command's scope and queue are the session's and its consumer is one of the
        session's ``concurrency`` consumers (else invalid_input)."""
        return (session.scope == command.scope and session.queue == command.queue
                and command.consumer_id < session.concurrency)

    def _acquire_sequence(self, cursor: Cursor | None, sequence: int) -> bool:
        """Order the command's sequence against the consumer's cursor: raise out_of_order
        (0, a first sequence other than 1, a gap) or obsolete_operation (below the cursor);
        answer True for a replay (the cursor's own sequence), False for the next one."""
        if sequence == 0:
            raise spec.OutOfOrder("acquisition sequences start at 1")
        if cursor is None:
            if sequence != 1:
                raise spec.OutOfOrder(f"the consumer's first sequence must be 1, not {sequence}")
            return False
        if sequence < cursor.sequence:
            raise spec.ObsoleteOperation(
                f"sequence {sequence} is below the consumer's cursor {cursor.sequence}")
        if sequence > cursor.sequence + 1:
            raise spec.OutOfOrder(
                f"sequence {sequence} skips past the consumer's cursor {cursor.sequence}")
        return sequence == cursor.sequence

    def _cursor_attempt(self, txn: Txn, cursor: Cursor
                        ) -> tuple[TaskRecord, StoredAttempt] | None:
        """The task and attempt the cursor's sequence assigned (locked), ``None`` for Empty."""
        ref = cursor.attempt
        if ref is None:
            return None
        task = txn.load_task(ref.task_id)
        attempt = txn.load_attempt(ref.task_id, ref.attempt_id)
        if task is None or attempt is None:
            raise RuntimeError(f"the store lost attempt {ref.attempt_id!r} of {ref.task_id!r}")
        return task, attempt

    def _acquire_replay(self, txn: Txn, cursor: Cursor, now: int) -> Any:
        """The reply a repeated sequence answers, writing nothing: Empty again after an Empty,
        the assignment with fresh authority while its attempt is live, else OwnershipLost."""
        found = self._cursor_attempt(txn, cursor)
        if found is None:
            return spec.AcquireEmpty(cursor.sequence)
        task, attempt = found
        if self._live(task, attempt, now):
            return spec.AcquireAssigned(cursor.sequence, self._assignment(task, attempt, now))
        return spec.AcquireOwnershipLost(
            cursor.sequence, spec.AttemptRef(attempt.task_id, attempt.attempt_id))

    def _busy(self, txn: Txn, cursor: Cursor, now: int) -> bool:
        """The next sequence is refused while the cursor's attempt is still live (an
        unconfirmed settlement included)."""
        ref = cursor.attempt
        if ref is None:
            return False
        found = txn.peek_assignment(ref.task_id, ref.attempt_id)
        if found is None:
            raise RuntimeError(f"the store lost attempt {ref.attempt_id!r} of {ref.task_id!r}")
        return self._live(found[0], found[1], now)

    def _sequence_claimed(self, txn: Txn, key: tuple[str, int], sequence: int) -> bool:
        """Acquisition step 6: does a dispatch claim's receipt hold this (session, consumer,
        sequence)? Then an acquire of it is a conflict, not a replay."""
        return txn.load_receipt(*key, sequence) is not None

    # -- helpers the mutants bend: the candidate and the claim --------------------------

    def _candidate_order(self) -> tuple[str, ...]:
        """The claim order: (available_at, submitted_at, task_id), task ids bytewise."""
        return CANDIDATE_ORDER_FIELDS

    def _candidate_query(self, command: spec.AcquireCommand, now: int) -> CandidateQuery:
        """LDG-ACQ-001: queued tasks of the command's scope and queue, not cancel-requested,
        available at ``now``, with attempts left, in :meth:`_candidate_order`."""
        return CandidateQuery(
            scope=command.scope, queue=command.queue, states=(QUEUED,), available_by=now,
            attempts_left=True, not_cancel_requested=True, order=self._candidate_order(),
        )

    def _claimable(self, record: TaskRecord, query: CandidateQuery) -> bool:
        """The re-check of a locked candidate: it still matches the query."""
        return query.matches(record)

    def _pick_candidate(self, txn: Txn, query: CandidateQuery) -> TaskRecord | None:
        """The first candidate that is still claimable once locked (the storage's order)."""
        passed_over: set[str] = set()
        while True:
            record = txn.next_candidate(query, frozenset(passed_over))
            if record is None or self._claimable(record, query):
                return record
            passed_over.add(record.task_id)

    def _attempt_deadline(self, task: TaskRecord, now: int) -> int:
        """An attempt's execution deadline: ``now + attempt_timeout_ms``."""
        return now + task.snapshot.input.attempt_timeout_ms

    def _authority_deadline(self, deadline: int) -> int:
        """An attempt's authority deadline: the execution deadline plus the cleanup grace."""
        return deadline + spec.CLEANUP_GRACE_MS

    def _claim(self, txn: Txn, task: TaskRecord, session: spec.WorkerSession,
               command: spec.AcquireCommand, now: int) -> spec.Assignment:
        """Start the task's next attempt for the (session, consumer): mint the attempt, lease
        and event ids, store the attempt, make the task active, write `claimed`, move the
        cursor; answer the assignment."""
        snap = task.snapshot
        attempt_id, lease_id, event_id = (self._new_id("att"), self._new_id("lease"),
                                          self._new_id("evt"))
        generation = snap.attempt_count + 1
        deadline = self._attempt_deadline(task, now)
        authority_deadline = self._authority_deadline(deadline)
        owner = spec.LeaseOwner(command.scope, snap.task_id, attempt_id, lease_id, generation,
                                session.id, command.consumer_id)
        lease = spec.Lease(owner, self._lease_expiry(now, authority_deadline, session))
        event = spec.AssignmentEvent(event_id, snap.task_id, snap.run_id, attempt_id,
                                     generation, command.scope, snap.input.data)
        attempt = StoredAttempt(spec.AttemptSnapshot(
            event=event, descriptor=snap.descriptor, lease=lease, deadline=deadline,
            authority_deadline=authority_deadline, state=ACTIVE,
            execution_may_have_started=False, last_renewal=None, quiescence=spec.UNCONFIRMED,
            settlement=None, finished_at=None,
        ))
        claimed = attrs.evolve(
            task, latest_attempt_id=attempt_id,
            snapshot=attrs.evolve(snap, state=ACTIVE, attempt_count=generation,
                                  current_attempt_id=attempt_id),
        )
        txn.insert_attempt(attempt)
        txn.save_task(claimed)
        self._record(txn, snap.task_id, CLAIMED, now, attempt_id)
        txn.save_cursor(*self._cursor_key(session, command),
                        Cursor(command.sequence, spec.AttemptRef(snap.task_id, attempt_id)))
        return self._assignment(claimed, attempt, now)

    def _assignment(self, task: TaskRecord, attempt: StoredAttempt,
                    now: int) -> spec.Assignment:
        """The assignment of a stored attempt: its descriptor, event, current lease and
        deadline, with authority computed at ``now``."""
        att = attempt.snapshot
        return spec.Assignment(att.descriptor, att.event, att.lease,
                               self._authority(task, attempt, now), att.deadline)

    # -- helpers the mutants bend: nothing to claim -------------------------------------

    def _finish_empty(self, txn: Txn, session: spec.WorkerSession,
                      command: spec.AcquireCommand) -> spec.ProbeCompleted:
        """Nothing to claim, and the caller finishes: the cursor moves to the sequence with no
        attempt, and the answer is Empty."""
        txn.save_cursor(*self._cursor_key(session, command), Cursor(command.sequence, None))
        return spec.ProbeCompleted(spec.AcquireEmpty(command.sequence), FINALIZED_EMPTY)

    def _pending(self, session: spec.WorkerSession, now: int) -> spec.ProbePending:
        """Nothing to claim and the caller keeps waiting: the session's remaining ms."""
        return spec.ProbePending(session.expires_at - now)

    def _no_candidate(self, txn: Txn, session: spec.WorkerSession,
                      command: spec.AcquireCommand, finish_empty: bool, now: int) -> Any:
        """Nothing to claim: with ``finish_empty`` the Empty answer is committed
        (:meth:`_finish_empty`); without, the transaction is rolled back (every mutation, the
        cursor's insert-or-lock placeholder included) and the answer is Pending."""
        if finish_empty:
            return self._finish_empty(txn, session, command)
        raise _Discard(self._pending(session, now))
