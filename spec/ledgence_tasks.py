"""The ``ledgence-tasks`` contract: the ledgence ``TaskStore`` + ``RecoveryStore`` traits.

Work in progress (issue 4): the types, constants, errors, submission validation and canonical
matching are here; the clause catalogue, model, adapters and checks are not yet, so the CLI does
not offer this contract. Identifiers (task, run, attempt, lease, session ids) are minted by the
store; time is the store's (``env.clock()``, integer ms).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import attrs

from .clauses import Catalogue, Clause
from .ledgence_delivery import *  # noqa: F403 - this module is the contract's public face
from .ledgence_delivery import (
    AcquireCommand,
    AttemptSnapshot,
    Authority,
    LeaseOwner,
    RecordedHistoryEvent,
    RecoveryProgress,
    RenewCommand,
    SettleCommand,
    SettleReply,
    TaskResult,
    TaskSnapshot,
    TaskStatus,
    WorkerSession,
)
from .ledgence_submission import *  # noqa: F403
from .ledgence_submission import CONTRACT, ProgramDescriptor, Scope, SubmitCommand
from .ops import Op, operation


@runtime_checkable
class TaskStore(Protocol):
    """The seed's ``TaskStore`` trait, one method per operation (``claim_dispatch`` and
    ``list_tasks`` arrive with issue 5). Errors are this module's :class:`ContractError`
    subclasses; ``probe_acquisition`` takes the caller's deadline as ms of store time."""

    def open_session(self, scope: Scope, queue: str, concurrency: int) -> WorkerSession: ...

    def extend_session(self, worker_session_id: str) -> WorkerSession: ...

    def lookup_submission(self, scope: Scope, idempotency_key: str) -> TaskSnapshot | None: ...

    def accept_resolved_submission(
        self, command: SubmitCommand, descriptor: ProgramDescriptor
    ) -> TaskSnapshot: ...

    def status(self, scope: Scope, task_id: str) -> TaskStatus: ...

    def result(self, scope: Scope, task_id: str) -> TaskResult: ...

    def inspect(self, scope: Scope, task_id: str) -> TaskSnapshot: ...

    def inspect_attempt(self, scope: Scope, task_id: str, attempt_id: str) -> AttemptSnapshot: ...

    def history(
        self, scope: Scope, task_id: str, after_sequence: int
    ) -> list[RecordedHistoryEvent]: ...

    def probe_acquisition(
        self, command: AcquireCommand, finish_empty: bool, deadline_ms: int
    ) -> Any: ...

    def acquire(self, command: AcquireCommand) -> Any: ...

    def renew(self, command: RenewCommand) -> Authority: ...

    def settle(self, command: SettleCommand) -> SettleReply: ...

    def confirm_quiescence(self, owner: LeaseOwner) -> str: ...

    def cancel(self, scope: Scope, task_id: str) -> str: ...


@runtime_checkable
class RecoveryStore(Protocol):
    """The seed's ``RecoveryStore``: ``1 <= limit <= MAX_RECOVERY_BATCH``."""

    def expire_batch(self, limit: int) -> RecoveryProgress: ...


PROTOCOL_METHODS = ("open_session", "extend_session", "lookup_submission",
                    "accept_resolved_submission", "status", "result", "inspect",
                    "inspect_attempt", "history", "probe_acquisition", "acquire", "renew",
                    "settle", "confirm_quiescence", "cancel", "expire_batch")


# --- operations as data (this slice: sessions, submissions, reads, history, cancel) -------------


class _TaskOp(Op):
    task_id: Any

    def key(self) -> str | None:
        tid = self.task_id
        return getattr(tid, "name", tid) if tid is not None else None


@operation(CONTRACT, "open_session")
@attrs.frozen
class OpenSession(Op):
    scope: Scope
    queue: str
    concurrency: int


@operation(CONTRACT, "extend_session")
@attrs.frozen
class ExtendSession(Op):
    worker_session_id: Any


@operation(CONTRACT, "lookup_submission")
@attrs.frozen
class LookupSubmission(Op):
    scope: Scope
    idempotency_key: str


@operation(CONTRACT, "accept_resolved_submission")
@attrs.frozen
class AcceptResolvedSubmission(Op):
    command: SubmitCommand
    descriptor: ProgramDescriptor


@operation(CONTRACT, "status")
@attrs.frozen
class Status(_TaskOp):
    scope: Scope
    task_id: Any


@operation(CONTRACT, "result")
@attrs.frozen
class Result(_TaskOp):
    scope: Scope
    task_id: Any


@operation(CONTRACT, "inspect")
@attrs.frozen
class Inspect(_TaskOp):
    scope: Scope
    task_id: Any


@operation(CONTRACT, "history")
@attrs.frozen
class History(_TaskOp):
    scope: Scope
    task_id: Any
    after_sequence: int


@operation(CONTRACT, "cancel")
@attrs.frozen
class Cancel(_TaskOp):
    scope: Scope
    task_id: Any


# --- the clause catalogue (this slice) -------------------------------------------------------

M = "machine"

CAPABILITIES = {
    "durable": "calling the factory again with the same env reopens the same sessions, tasks "
    "and history",
    "concurrency": "the store may be called from several threads at once (race checks)",
}


def _c(id: str, title: str, text: str, *checks: str, requires: tuple[str, ...] = ()) -> Clause:
    return Clause(id, title, text, checks, frozenset(requires))


CLAUSES = Catalogue([
    _c("LDG-SESSION-001", "a session lasts 24 hours",
       "open_session returns a new session of the given scope, queue and concurrency expiring "
       "at now + 86 400 000.", M, "scenario:sessions_expire_and_never_revive"),
    _c("LDG-SESSION-002", "open_session validates its input",
       "A bad scope or queue, or concurrency 0, answers invalid_input.",
       M, "scenario:sessions_expire_and_never_revive"),
    _c("LDG-SESSION-003", "extend_session knows its sessions",
       "extend_session of an unknown id answers unknown_session; of a malformed id "
       "invalid_input.", M, "scenario:sessions_expire_and_never_revive"),
    _c("LDG-SESSION-004", "an expired session is never revived",
       "extend_session before expires_at sets expires_at = now + 24 h; at or after it answers "
       "session_expired.", M, "scenario:sessions_expire_and_never_revive"),
    _c("LDG-SUBMIT-001", "a submission creates one queued task",
       "accept_resolved_submission of a new key creates a queued task with submitted_at = "
       "available_at = now, no attempts, and exactly one `submitted` history event.",
       M, "scenario:submission_replay_ignores_key_order"),
    _c("LDG-SUBMIT-002", "a replay returns the winner unchanged",
       "A canonically identical submission (key order ignored, defaults explicit) returns the "
       "accepted task as it is now, with its own descriptor; the caller's descriptor never "
       "replaces it, and nothing is written.", M,
       "scenario:submission_replay_ignores_key_order"),
    _c("LDG-SUBMIT-003", "another input under a key conflicts",
       "A different canonical input under an accepted key answers conflict; 1 and 1.0 differ, "
       "and so do 0.0 and -0.0.", M, "scenario:changed_submission_conflicts"),
    _c("LDG-SUBMIT-004", "submissions are validated first",
       "A malformed command or descriptor answers invalid_input, and a descriptor for another "
       "program answers conflict, before anything is read or written.", M,
       "scenario:changed_submission_conflicts"),
    _c("LDG-SUBMIT-005", "keys are scoped",
       "The same idempotency key in another scope makes another task.", M,
       "scenario:submission_replay_ignores_key_order"),
    _c("LDG-SUBMIT-006", "concurrent submissions bind once",
       "Of N concurrent identical submissions of one key, all return the same task and one "
       "`submitted` event is written.", "race:concurrent_submissions",
       requires=("concurrency",)),
    _c("LDG-LOOKUP-001", "lookup reads the binding",
       "lookup_submission returns the task accepted under (scope, key), or none.", M,
       "scenario:submission_replay_ignores_key_order"),
    _c("LDG-READ-001", "reads agree with the task",
       "status, result and inspect of a task in its scope return what the accepted operations "
       "imply (result's outcome: none while queued, cancelled once cancelled).", M,
       "scenario:queued_cancel_is_terminal_and_idempotent"),
    _c("LDG-READ-002", "other scopes see not_found",
       "A missing task, or one of another scope, is not_found for every read and for cancel.",
       M, "scenario:queued_cancel_is_terminal_and_idempotent"),
    _c("LDG-HISTORY-001", "history is contiguous and paged",
       "history returns the task's events with sequence > after, ascending, at most 100; "
       "sequences start at 1 and have no gaps; replays and no-ops write nothing.", M,
       "scenario:queued_cancel_is_terminal_and_idempotent"),
    _c("LDG-CANCEL-001", "a queued task is cancelled at once",
       "cancel of a queued task makes it cancelled now (terminal_at, cancel_requested_at) and "
       "writes `cancel_requested` then `cancelled`.", M,
       "scenario:queued_cancel_is_terminal_and_idempotent"),
    _c("LDG-CANCEL-002", "cancel of a terminal task changes nothing",
       "cancel of a terminal or already cancel-requested task returns its state and writes "
       "nothing.", M, "scenario:queued_cancel_is_terminal_and_idempotent"),
    _c("LDG-ID-001", "minted identifiers are unique",
       "Every session, task and run id the store mints is new.", M),
    _c("LDG-DURABLE-001", "reopening keeps everything",
       "After a reopen every session, task, binding and history event is as before.", M,
       "scenario:reopen_keeps_everything", requires=("durable",)),
])

PROTOCOL_SLICE = ("open_session", "extend_session", "lookup_submission",
                  "accept_resolved_submission", "status", "result", "inspect", "history",
                  "cancel")
