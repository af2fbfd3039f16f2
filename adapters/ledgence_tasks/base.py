"""What every operation family of the ledgence core shares.

The store's environment and options, the storage seam (``_transaction``, ``_reading``), new
ids, the session and task lookups, history writes, and liveness and authority: the rules every
owner call is judged by. The families (:mod:`.submission`, :mod:`.reads`, :mod:`.listing`,
:mod:`.acquisition`, :mod:`.dispatch`, :mod:`.renewal`, :mod:`.settlement`, :mod:`.cancel`,
:mod:`.recovery`) build on :class:`LedgenceBase`, and :class:`~.core.LedgenceCore` joins them.
"""

from __future__ import annotations

import uuid
from contextlib import AbstractContextManager
from typing import Any

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.env import AdapterEnv

from .records import ACTIVE, DISPATCH, StoredAttempt, TaskRecord, status_of
from .storage import Txn


def require_count(value: Any, what: str, minimum: int, maximum: int) -> int:
    """``value`` when it is an integer (not a bool) in ``minimum..=maximum`` (the largest
    value of the seed's type for it), else invalid_input naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int) or not (
            minimum <= value <= maximum):
        raise spec.InvalidInput(
            f"{what} must be an integer in {minimum}..={maximum}, not {value!r}")
    return value


class LedgenceBase:
    """The environment, the storage seam and the steps every operation family uses (a
    storage subclass of :class:`~.core.LedgenceCore` provides :meth:`_transaction`)."""

    capabilities: frozenset[str] = frozenset({"durable", "concurrency", DISPATCH})

    def __init__(self, env: AdapterEnv) -> None:
        self.env = env
        self.options = {c.name: str(env.options.get(c.name, c.default)) for c in spec.CHOICES}

    # -- storage, provided by subclasses --------------------------------------------------------

    def _transaction(self) -> AbstractContextManager[Txn]:
        raise NotImplementedError

    def _reading(self) -> AbstractContextManager[Txn]:
        """A unit of work for the reads (status, result, inspect, inspect_attempt, history):
        by default a :meth:`_transaction`. A storage may read without locks, one statement at
        a time: each of those reads one changing row or page (the task, the attempt, or the
        history after a sequence) beside the task's existence and scope, which never change."""
        return self._transaction()

    def close(self) -> None:
        """Release connections; the data stays (see the ``durable`` capability)."""

    # -- helpers the mutants bend: ids, sessions, tasks, history ------------------------

    def _new_id(self, prefix: str) -> str:
        """A new unique id, ``<prefix>_<32 hex>``."""
        return f"{prefix}_{uuid.uuid4().hex}"

    def _session_expired(self, session: spec.WorkerSession, now: int) -> bool:
        """Expiry is exact: at ``expires_at`` the session is expired."""
        return now >= session.expires_at

    def _usable_session(self, txn: Txn, worker_session_id: str,
                        now: int) -> spec.WorkerSession:
        """The (read-locked) session, or unknown_session / session_expired."""
        session = txn.read_session(worker_session_id)
        if session is None:
            raise spec.UnknownSession(f"no worker session {worker_session_id!r}")
        if self._session_expired(session, now):
            raise spec.SessionExpired(
                f"worker session {worker_session_id!r} expired at {session.expires_at}")
        return session

    def _visible(self, record: TaskRecord, scope: spec.Scope) -> bool:
        """A task is seen only from its own scope."""
        return record.scope == scope

    def _check_task_ref(self, scope: spec.Scope, task_id: str) -> None:
        spec.validate_scope(scope)
        spec.validate_text(task_id, "task_id")

    def _require(self, txn: Txn, scope: spec.Scope, task_id: str) -> TaskRecord:
        """The task, or ``not_found`` when it is missing or belongs to another scope."""
        record = txn.load_task(task_id)
        if record is None or not self._visible(record, scope):
            raise spec.NotFound(f"no task {task_id!r} in scope "
                                f"({scope.tenant_id!r}, {scope.namespace!r})")
        return record

    @staticmethod
    def _lost(owner: spec.LeaseOwner) -> str:
        return (f"attempt {owner.attempt_id!r} of task {owner.task_id!r} is not held by this "
                "owner (another lease, expired, finished or superseded)")

    def _record(self, txn: Txn, task_id: str, reason: str, at: int,
                attempt_id: str | None = None) -> None:
        """Append one history event at the task's next sequence (1, 2, 3... with no gaps)."""
        sequence = txn.last_sequence(task_id) + 1
        event = spec.HistoryEvent(task_id, attempt_id, at, reason)
        txn.append_history(spec.RecordedHistoryEvent(sequence, event))

    def _status(self, record: TaskRecord) -> spec.TaskStatus:
        """The task's status: its snapshot's fields plus the latest attempt ever claimed
        (``status`` answers it, and so does every item of a ``list_tasks`` page)."""
        return status_of(record)

    # -- helpers the mutants bend: liveness, authority, leases --------------------------

    def _live(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        """LDG-LIVE-001: the task is active with this attempt current and active, and ``now``
        is before both the lease expiry and the authority deadline (equality is expired)."""
        snap, att = task.snapshot, attempt.snapshot
        return (snap.state == ACTIVE
                and snap.current_attempt_id == attempt.attempt_id
                and att.state == ACTIVE
                and now < att.lease.expires_at
                and now < att.authority_deadline)

    def _cancel_requested(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        """Authority's ``cancel_requested``: the task's cancel was requested, or the attempt's
        execution deadline has passed."""
        return task.snapshot.cancel_requested_at is not None or now >= attempt.snapshot.deadline

    def _dispatch_allowed(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> bool:
        """Authority's ``dispatch_allowed``: live, no cancel, no settlement, and the last
        accepted renewal asked for dispatch."""
        att = attempt.snapshot
        last = att.last_renewal
        return (self._live(task, attempt, now)
                and not self._cancel_requested(task, attempt, now)
                and att.settlement is None
                and last is not None and last.intent == spec.DISPATCH)

    def _authority(self, task: TaskRecord, attempt: StoredAttempt, now: int) -> spec.Authority:
        """LDG-AUTH-001: the attempt's authority computed at ``now`` (never stored)."""
        att = attempt.snapshot
        live = self._live(task, attempt, now)
        last = att.last_renewal
        return spec.Authority(
            expires_at=att.lease.expires_at,
            remaining_ms=att.lease.expires_at - now if live else 0,
            # execution time ends with the cancel flag (a requested cancel or the deadline)
            execution_remaining_ms=(att.deadline - now if live and not self._cancel_requested(
                task, attempt, now) else 0),
            renew_sequence=last.sequence if last is not None else 0,
            cancel_requested=self._cancel_requested(task, attempt, now),
            dispatch_allowed=self._dispatch_allowed(task, attempt, now),
        )

    def _owner_matches(self, attempt: StoredAttempt, owner: spec.LeaseOwner) -> bool:
        """The caller's owner equals the attempt's lease owner in every field."""
        return attempt.owner == owner

    def _lease_expiry(self, now: int, authority_deadline: int,
                      session: spec.WorkerSession) -> int:
        """LDG-ACQ-003: a granted or renewed lease expires at min(now + LEASE_MS, authority
        deadline, session expiry)."""
        return min(now + spec.LEASE_MS, authority_deadline, session.expires_at)
