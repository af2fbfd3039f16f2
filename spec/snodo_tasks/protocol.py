"""snodo-tasks: the contract's name, the capabilities a store may declare, and the protocol
(:class:`TasksStore`, the ten methods an adapter implements, :data:`PROTOCOL_METHODS`)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .data import (
    Action,
    Claimed,
    Context,
    Event,
    RequestAuthority,
    Snapshot,
    Task,
    Transition,
    Work,
    WorkerAuthority,
)

CONTRACT = "snodo-tasks"

CAPABILITIES = {
    "durable": "calling the factory again with the same env, once every store it made for that "
    "env is closed, reopens the same data as a restart: every access and lease issued before is "
    "void, and the claims made before stay live until their deadline or are released "
    "(reopen_claims); stores made while another is open share its values",
    "concurrency": "the store may be called from several threads at once (race checks)",
    "fault_injection": "found, not declared: the store's `engine` attribute is the SQLAlchemy "
    "Engine all its transactions run on; the kit injects database failures through its event "
    "hooks (the FAULT clauses)",
}


@runtime_checkable
class TasksStore(Protocol):
    """The ten operations of ``Snodo.Extensions.Tasks.Store``, one to one.

    Arguments at their edges: in the seed every call goes through the Store functions, whose
    guards refuse what the callbacks' types exclude before a store is reached. Here nothing
    stands in front of the store, so it refuses them itself, first: :class:`FunctionClause`
    for a task id or owner that is not a non-empty string (get, worker_snapshot and
    transition take any string, ``""`` is simply no task), a ``lease_ms`` that is not a
    positive integer, an ``expected_revision`` that is not a non-negative integer, an
    authority that is neither :class:`RequestAuthority` nor :class:`WorkerAuthority`, an
    action kind not in ``ACTIONS``, a work that is no :class:`Work`; then, as the seed's
    stores do, :class:`InvalidTask` from create and, from transition, what Event.validate
    answers in its order: :class:`InvalidEventId`, :class:`InvalidEventData`,
    :class:`InvalidInputKey`, :class:`InvalidInputRequest`, :class:`InvalidInputResponses`,
    :class:`InvalidTaskResult`, :class:`InvalidTaskError`, :class:`InvalidStatusMessage`
    (the SNODO-ARG clauses say exactly when; :class:`UnsupportedEventKind` is never due).
    """

    def authorize(self, context: Context, action: Action) -> Any: ...

    def create(self, task: Task, work: Work, access: Any) -> Snapshot: ...

    def get(self, task_id: str, access: Any) -> Snapshot: ...

    def claim(self, task_id: str, owner_id: str, lease_ms: int) -> Claimed: ...

    def claim_next(self, owner_id: str, lease_ms: int) -> Claimed | None: ...

    def renew(self, lease: Any, lease_ms: int) -> Any: ...

    def release(self, lease: Any) -> None: ...

    def transition(
        self,
        task_id: str,
        expected_revision: int,
        event: Event,
        authority: RequestAuthority | WorkerAuthority,
    ) -> Transition: ...

    def worker_snapshot(self, task_id: str, lease: Any) -> Snapshot: ...

    def reap(self) -> list[str]: ...


PROTOCOL_METHODS = ("authorize", "create", "get", "claim", "claim_next", "renew", "release",
                    "transition", "worker_snapshot", "reap")
