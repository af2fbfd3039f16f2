"""Sessions and submission: ``open_session``, ``extend_session``, ``lookup_submission`` and
``accept_resolved_submission`` (an idempotency key binds once per scope; a replay answers the
winner unchanged, another input under the key conflicts)."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from fencepost.spec import ledgence_tasks as spec

from .base import LedgenceBase, require_count
from .records import QUEUED, TaskRecord
from .storage import Txn


class Submission(LedgenceBase):
    """The session and submission operations of :class:`~.core.LedgenceCore`."""

    def open_session(self, scope: spec.Scope, queue: str, concurrency: int) -> spec.WorkerSession:
        spec.validate_scope(scope)
        spec.validate_text(queue, "queue")
        require_count(concurrency, "concurrency", 1, spec.U32_MAX)
        with self._transaction() as txn:
            now = self.env.clock()
            session = spec.WorkerSession(self._new_id("ws"), scope, queue, concurrency,
                                         now + spec.SESSION_MS)
            txn.save_session(session)
            return session

    def extend_session(self, worker_session_id: str) -> spec.WorkerSession:
        spec.validate_text(worker_session_id, "worker_session_id")
        with self._transaction() as txn:
            session = txn.load_session(worker_session_id)
            if session is None:
                raise spec.UnknownSession(
                    f"no worker session {worker_session_id!r}; open one with open_session")
            now = self.env.clock()
            if self._session_expired(session, now):
                raise spec.SessionExpired(
                    f"worker session {worker_session_id!r} expired at {session.expires_at};"
                    " open a new one")
            extended = attrs.evolve(session, expires_at=now + spec.SESSION_MS)
            self._store_extension(txn, extended)
            return extended

    def lookup_submission(self, scope: spec.Scope,
                          idempotency_key: str) -> spec.TaskSnapshot | None:
        self._check_lookup(scope, idempotency_key)
        with self._transaction() as txn:
            winner = self._accepted(txn, scope, idempotency_key)
            return winner.snapshot if winner is not None else None

    def accept_resolved_submission(self, command: spec.SubmitCommand,
                                   descriptor: spec.ProgramDescriptor) -> spec.TaskSnapshot:
        self._check_submission(command, descriptor)
        return self._look_up_then_insert(
            lambda txn: self._replay_accepted(txn, command),
            lambda txn: self._insert_submission(txn, command, descriptor))

    # -- helpers the mutants bend -------------------------------------------------------

    def _store_extension(self, txn: Txn, extended: spec.WorkerSession) -> None:
        """LDG-SESSION-004: an extension is stored: every later call (acquire, renew, a
        reopen) meets the new expires_at."""
        txn.save_session(extended)

    def _look_up_then_insert(
        self,
        look_up: Callable[[Txn], spec.TaskSnapshot | None],
        insert: Callable[[Txn], spec.TaskSnapshot],
    ) -> spec.TaskSnapshot:
        """The accepted task for the key if there is one, else a new one: both in one
        transaction, so two submissions of one key cannot both insert."""
        with self._transaction() as txn:
            found = look_up(txn)
            return found if found is not None else insert(txn)

    def _check_lookup(self, scope: spec.Scope, idempotency_key: str) -> None:
        spec.validate_scope(scope)
        spec.validate_text(idempotency_key, "idempotency_key", spec.MAX_IDEMPOTENCY_KEY_BYTES)

    def _check_submission(self, command: spec.SubmitCommand,
                          descriptor: spec.ProgramDescriptor) -> None:
        spec.validate_submission(command, descriptor)

    def _accepted(self, txn: Txn, scope: spec.Scope, idempotency_key: str) -> TaskRecord | None:
        task_id = txn.find_submission(scope, idempotency_key)
        return txn.load_task(task_id) if task_id is not None else None

    def _same_submission(self, a: spec.TaskInput, b: spec.TaskInput) -> bool:
        """Does ``b`` replay ``a``: canonical equality (1 is not 1.0)."""
        return spec.same_submission(a, b)

    def _replay_accepted(self, txn: Txn,
                         command: spec.SubmitCommand) -> spec.TaskSnapshot | None:
        """LDG-SUBMIT-002/003: the answer of a key already bound in the command's scope (the
        winner's snapshot, or conflict, by :meth:`_replay`); ``None`` when it is free."""
        winner = self._accepted(txn, command.input.scope, command.idempotency_key)
        return self._replay(winner, command) if winner is not None else None

    def _insert_submission(self, txn: Txn, command: spec.SubmitCommand,
                           descriptor: spec.ProgramDescriptor) -> spec.TaskSnapshot:
        """LDG-SUBMIT-001: bind the key to a new queued task (:meth:`_new_task`, at the
        store's clock) and write `submitted`; answers the task's snapshot."""
        record = self._new_task(command, descriptor, self.env.clock())
        txn.insert_task(record)
        self._record(txn, record.task_id, "submitted", record.snapshot.submitted_at)
        return record.snapshot

    def _new_task(self, command: spec.SubmitCommand, descriptor: spec.ProgramDescriptor,
                  now: int) -> TaskRecord:
        """A new queued task: submitted and available at ``now``, no attempts."""
        snapshot = spec.TaskSnapshot(
            task_id=self._new_id("task"), run_id=self._new_id("run"),
            idempotency_key=command.idempotency_key, input=command.input, descriptor=descriptor,
            state=QUEUED, submitted_at=now, available_at=now, terminal_at=None,
            current_attempt_id=None, attempt_count=0, cancel_requested_at=None,
        )
        return TaskRecord(snapshot)

    def _replay(self, winner: TaskRecord, command: spec.SubmitCommand) -> spec.TaskSnapshot:
        """The winner's current snapshot, unchanged, for a submission that matches it."""
        if not self._same_submission(winner.snapshot.input, command.input):
            raise spec.Conflict(
                f"idempotency key {command.idempotency_key!r} was accepted for another input;"
                " resend that input or use a new key"
            )
        return winner.snapshot
