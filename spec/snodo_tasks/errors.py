"""snodo-tasks: the errors, one :class:`~fencepost.spec.errors.ContractError` subclass per
term the seed answers with (``code`` is the seed's word; ``payload`` where the seed carries
one)."""

from __future__ import annotations

from ..errors import ContractError


class NotFound(ContractError):
    code = "not_found"


class AlreadyExists(ContractError):
    code = "already_exists"


class UnauthorizedAction(ContractError):
    code = "unauthorized_action"


class CapacityExceeded(ContractError):
    """create's answer at a capacity limit; payload: the limit's name, exactly
    ``"max_tasks"`` or ``"max_active_tasks_per_scope"`` (the kit compares it).

    Example: ``raise CapacityExceeded("4 tasks stored", payload="max_tasks")``.
    """

    code = "capacity_exceeded"


class StaleLease(ContractError):
    code = "stale_lease"


class Unavailable(ContractError):
    """claim's answer when the task is terminal, has no work, or holds a live claim."""

    code = "unavailable"


class Deferred(ContractError):
    """claim's answer while a retry is not due; payload: the remaining ms as an ``int``,
    rounded up (``math.ceil(retry_at - now)``; the kit compares it).

    Example: retry_at 3_000, now 2_999 -> ``raise Deferred("...", payload=1)``.
    """

    code = "deferred"


class Conflict(ContractError):
    """transition's answer to a stale expected revision; payload: the current
    :class:`Snapshot`, exactly what ``get`` would return now (the kit compares it).

    Example: ``raise Conflict("revision is 2", payload=current_snapshot)``.

    Every other error carries no payload; the kit compares an error's ``code`` and payload,
    never its message.
    """

    code = "conflict"


class EventIdReused(ContractError):
    code = "event_id_reused"


class DuplicateInputKey(ContractError):
    code = "duplicate_input_key"


class FunctionClause(ContractError):
    """The answer to arguments the seed's Store functions have no clause for: their guards
    (store.ex) take task ids and owners that are non-empty strings, a ``lease_ms`` that is a
    positive integer, an ``expected_revision`` that is a non-negative integer, an authority
    that is request or worker authority, an action whose kind is create, get, update or
    cancel. Elixir raises FunctionClauseError (reason ``function_clause``) before any store is
    reached; a Python store, which nothing stands in front of, raises this before it reads or
    changes anything. ``bool`` is no integer here (``True`` is not a revision).

    Example: ``claim("t1", "w1", 0)`` -> ``raise FunctionClause("lease_ms must be > 0")``.
    """

    code = "function_clause"


class InvalidTask(ContractError):
    """create's answer to a task or work the seed's own validation refuses (Task.validate!,
    Work.validate): an empty status, a ttl_ms or poll_interval_ms of 0, an empty work type,
    a negative retry delay... (SNODO-ARG-005 lists them). Nothing is stored."""

    code = "invalid_task"


class InvalidEventId(ContractError):
    code = "invalid_event_id"


class InvalidInputKey(ContractError):
    code = "invalid_input_key"


class InvalidInputResponses(ContractError):
    code = "invalid_input_responses"


class InvalidInputRequest(ContractError):
    """transition's answer to an input_requested whose request is no mapping with a
    non-empty string ``"method"``, or is not JSON-safe (:func:`json_safe`)."""

    code = "invalid_input_request"


class InvalidEventData(ContractError):
    """transition's answer to event data that is no mapping, or whose fields are not
    exactly its kind's (:data:`EVENT_FIELDS`)."""

    code = "invalid_event_data"


class InvalidTaskResult(ContractError):
    """transition's answer to a completed event whose result is no JSON-safe mapping."""

    code = "invalid_task_result"


class InvalidTaskError(ContractError):
    """transition's answer to a retry_requested or failed event whose error is no JSON-safe
    mapping."""

    code = "invalid_task_error"


class InvalidStatusMessage(ContractError):
    """transition's answer to a retry_requested or failed event whose statusMessage is
    neither None nor a string."""

    code = "invalid_status_message"


class UnsupportedEventKind(ContractError):
    """The seed's ``{:unsupported_event_kind, kind}``; payload: the kind exactly as sent.

    Event.validate answers it for a kind outside the six, but in both upstream stores the
    authority check refuses such a kind first (unauthorized_action: no access or lease may
    send it), so no conforming store answers it from ``transition``: the kit never expects
    it. It has a code so that a store relaying the seed's refusal says it in the contract's
    words, and a store that validates the event before its authority is caught
    (SNODO-AUTH-001, SNODO-LEASE-006).

    Example: ``raise UnsupportedEventKind("no kind 'paused'", payload="paused")``.
    """

    code = "unsupported_event_kind"
