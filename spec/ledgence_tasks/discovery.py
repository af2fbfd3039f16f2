"""ledgence-tasks: paginated discovery (``list_tasks``) and targeted dispatch
(``claim_dispatch``).

The seed's types, one frozen class each, with the seed's field names; the dispositions of a
dispatch claim are one class per variant. Import these through
:mod:`fencepost.spec.ledgence_tasks`.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..values import value_class
from .delivery import (
    AcquireAssigned,
    AcquireCommand,
    AcquireOwnershipLost,
    AttemptRef,
    TaskStatus,
)
from .delivery_validation import validate_acquire
from .errors import InvalidInput
from .submission import (
    MAX_TIMESTAMP_MS,
    TASK_STATES,
    Scope,
    validate_correlation_key,
    validate_scope,
    validate_text,
)

DEFAULT_LIST_LIMIT = 50
MAX_LIST_LIMIT = 100
MAX_GENERATION = 1000
UNSUPPORTED_DISPATCH = "targeted dispatch claims are unsupported"
"""The seed's default ``claim_dispatch``: an ``InvalidInput`` with this text."""
ROUTED_QUEUE = "dispatched"
"""The queue that a store declaring ``dispatch`` routes to external dispatch, in every scope.

The seed binds a route to (scope, queue) with ``configure_route`` (not an operation of the
traits, and only while the queue holds no queued or active task:
crates/ledgence-adapter-postgres/src/dispatch_intents.rs at 50df11a); a task takes its queue's
route when it is submitted (``submission_destination``, same file). Acquisition on a routed
queue answers ``ExternalDispatchRequired`` and never scans it (delivery.rs
``probe_acquisition_once`` at 50df11a), and only a routed task can be claimed: another answers
``InvalidInput("task does not use external dispatch")`` once it is found (dispatch_claim.rs
``claim_dispatch_once`` at 62b9783). The kit routes this one queue by convention: an adapter of
a store with configurable routes binds it before the scope's first task (at its first session
or submission), and no other queue."""
UNROUTED_CLAIM = "task does not use external dispatch"
"""The seed's answer (``InvalidInput``) to a claim of a task whose queue is not routed."""


# --- discovery -------------------------------------------------------------------------------


@value_class
@attrs.frozen
class TaskFilters:
    """Every filter optional. ``submitted_from`` is inclusive, ``submitted_until`` exclusive;
    ``correlation_key=""`` matches only tasks whose key is exactly ``""`` (not those without
    one); None applies no filter."""

    state: str | None = None
    queue: str | None = None
    submitted_from: int | None = None
    submitted_until: int | None = None
    correlation_key: str | None = None


@value_class
@attrs.frozen
class TaskListQuery:
    """``cursor`` is the opaque ``next_cursor`` of an earlier page with the same scope and
    filters (the limit may change between pages)."""

    filters: TaskFilters = TaskFilters()
    limit: int = DEFAULT_LIST_LIMIT
    cursor: Any = None


@value_class
@attrs.frozen
class TaskPage:
    """Items in descending (submitted_at, task_id) order, task ids compared as bytes;
    ``next_cursor`` only when more rows existed past the last item."""

    items: tuple[TaskStatus, ...]
    next_cursor: Any


def _bound(value: Any, what: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not (
            0 <= value <= MAX_TIMESTAMP_MS):
        raise InvalidInput(f"{what} must be a timestamp in 0..={MAX_TIMESTAMP_MS}")


def validate_list_query(scope: Any, query: Any) -> TaskListQuery:
    """The seed's order: scope, filters, limit (the cursor is the store's to decode)."""
    validate_scope(scope)
    if not isinstance(query, TaskListQuery) or not isinstance(query.filters, TaskFilters):
        raise InvalidInput("query must be a TaskListQuery")
    f = query.filters
    if f.state is not None and f.state not in TASK_STATES:
        raise InvalidInput(f"state filter must be one of {', '.join(TASK_STATES)}")
    if f.queue is not None:
        validate_text(f.queue, "queue filter")
    if f.correlation_key is not None:
        validate_correlation_key(f.correlation_key, "correlation key filter")
    _bound(f.submitted_from, "submitted_from")
    _bound(f.submitted_until, "submitted_until")
    if (f.submitted_from is not None and f.submitted_until is not None
            and f.submitted_from >= f.submitted_until):
        raise InvalidInput("invalid submission time range: submitted_from >= submitted_until")
    limit = query.limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not (
            1 <= limit <= MAX_LIST_LIMIT):
        raise InvalidInput(f"task list limit must be between 1 and {MAX_LIST_LIMIT}")
    return query


def matches_filters(status: TaskStatus, filters: TaskFilters) -> bool:
    """Does a task (its status) match every given filter?"""
    f = filters
    return ((f.state is None or status.state == f.state)
            and (f.queue is None or status.queue == f.queue)
            and (f.submitted_from is None or status.submitted_at >= f.submitted_from)
            and (f.submitted_until is None or status.submitted_at < f.submitted_until)
            and (f.correlation_key is None or status.correlation_key == f.correlation_key))


# --- targeted dispatch -----------------------------------------------------------------------


@value_class
@attrs.frozen
class DispatchRef:
    """One task at one generation (attempt number, 1..1000)."""

    scope: Scope
    queue: str
    task_id: str
    generation: int


@value_class
@attrs.frozen
class ClaimCommand:
    """A consumer's sequenced claim (the same sequence space as ``acquire``) of one task."""

    acquisition: AcquireCommand
    dispatch: DispatchRef


@value_class
@attrs.frozen
class ClaimClaimed:
    reply: AcquireAssigned | AcquireOwnershipLost  # the latter replayed after it was lost


@value_class
@attrs.frozen
class ClaimAlreadyHandedOff:
    attempt: AttemptRef


@value_class
@attrs.frozen
class ClaimTerminalOrSuperseded:
    pass


@value_class
@attrs.frozen
class ClaimDeferred:
    available_at: int


@value_class
@attrs.frozen
class ClaimReply:
    command: ClaimCommand
    disposition: ClaimClaimed | ClaimAlreadyHandedOff | ClaimTerminalOrSuperseded | ClaimDeferred


def validate_claim(command: Any) -> ClaimCommand:
    """Shape; a nonzero sequence; the dispatch in the consumer's scope and queue; generation
    in 1..1000."""
    if not isinstance(command, ClaimCommand) or not isinstance(command.dispatch, DispatchRef):
        raise InvalidInput("command must be a ClaimCommand")
    validate_acquire(command.acquisition)
    if command.acquisition.sequence == 0:
        raise InvalidInput("a claim's sequence must not be 0")
    d = command.dispatch
    validate_scope(d.scope)
    validate_text(d.queue, "queue")
    validate_text(d.task_id, "task_id")
    if isinstance(d.generation, bool) or not isinstance(d.generation, int) or not (
            1 <= d.generation <= MAX_GENERATION):
        raise InvalidInput(f"generation must be in 1..={MAX_GENERATION}")
    if (d.scope, d.queue) != (command.acquisition.scope, command.acquisition.queue):
        raise InvalidInput("claim consumer and dispatch scope/queue differ")
    return command
