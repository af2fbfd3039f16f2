"""snodo-tasks: the values the contract speaks of: statuses, actions and event kinds, what an
event's data holds (:data:`EVENT_FIELDS`), the seed's JSON-safe domain (:func:`json_safe`), the
longest retry delay, and every shape the kit compares, one frozen class each with an example
(:class:`Task`, :class:`Work`, :class:`Snapshot`, :class:`Event`, :class:`Transition`...)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from ..values import value_class

WORKING, INPUT_REQUIRED = "working", "input_required"
COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"
STATUSES = (WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED)
TERMINAL = (COMPLETED, FAILED, CANCELLED)
ACTIONS = ("create", "get", "update", "cancel")
WORKER_KINDS = ("input_requested", "retry_requested", "completed", "failed")
REQUEST_KINDS = {"input_responses_accepted": "update", "cancelled": "cancel"}
APPLIED, UNCHANGED, DUPLICATE = "applied", "unchanged", "duplicate"
CANCEL_MESSAGE = "Cancellation requested"

MAX_RETRY_DELAY_MS = 4_294_967_295
"""The longest retry delay the seed's RetryPolicy accepts (retry_policy.ex:17)."""


EVENT_KINDS = (*WORKER_KINDS, *REQUEST_KINDS)
EVENT_FIELDS = {
    "input_requested": frozenset({"key", "request"}),
    "input_responses_accepted": frozenset({"responses"}),
    "retry_requested": frozenset({"error", "statusMessage"}),
    "completed": frozenset({"result"}),
    "failed": frozenset({"error", "statusMessage"}),
    "cancelled": frozenset(),
}
"""Exactly the fields each kind's data holds (event.ex:171-210: each kind's clause matches
these keys and checks ``map_size``; anything else is invalid_event_data)."""


def json_safe(value: Any) -> bool:
    """Is ``value`` a JSON value as the seed's JSONValue.valid? means it (json_value.ex:67-77):
    None, a bool, a string, a number, a list of JSON values, or a mapping whose keys are
    strings and whose values are JSON values. No depth limit. Python's readings: a tuple is
    no list (Elixir tuples are refused), bytes are no string (no JSON form here), and a float
    is finite (Erlang has no nan or inf).

    Example: ``json_safe({"n": [1, 1.0, None]})`` is true; ``json_safe({7: "x"})`` false.
    """
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(json_safe(v) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and json_safe(v) for k, v in value.items())
    return False


@value_class
@attrs.frozen
class Context:
    """A request context; the store derives the scope (tenant) from it.

    The scope is ``tenant`` exactly: ``Context("acme")`` and ``Context("acme", "bob")`` share
    a scope, and ``Context(None)`` is a scope of its own (not the same as any named tenant);
    ``principal`` does not take part. ``authorize`` binds the scope into the access, and
    ``create`` stores it with the task (the seed's stores take a scope function; the kit's is
    ``lambda context: context.tenant``).
    """

    tenant: str | None
    principal: str = "user"


@value_class
@attrs.frozen
class Action:
    """What an access is for: ``kind`` in create/get/update/cancel, on ``task_id``."""

    kind: str
    task_id: str


@value_class
@attrs.frozen
class Task:
    """The task as the caller created it, then as events change it.

    Times are integer ms of ``env.clock()``; ``last_updated_at`` may carry a us part (a float,
    ``1_000.001``) under ``committed_at_step=microsecond``. ``create`` stores the task exactly
    as given (the kit compares every field); events change ``status``, ``status_message``,
    ``input_requests``, ``result``, ``error`` and ``last_updated_at`` (= the transition's
    ``committed_at``), never the others.

    Example: ``Task("t1", "working", None, 1_000, 1_000, 60_000, 250, {}, None, None)``.
    """

    id: str
    status: str
    status_message: str | None
    created_at: int
    last_updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None
    input_requests: Mapping[str, Any]
    result: Mapping[str, Any] | None
    error: Mapping[str, Any] | None


@value_class
@attrs.frozen
class Work:
    """What the worker runs; stored with the task and returned unchanged (``input`` a
    JSON-safe mapping, read back exactly: SNODO-VALUE-001; ``retry_policy`` stays a tuple of
    ms delays)."""

    idempotency_key: str
    type: str
    input: Mapping[str, Any]
    retry_policy: tuple[int, ...]


@value_class
@attrs.frozen
class Snapshot:
    """Everything ``get``, ``worker_snapshot``, ``claim`` and ``transition`` show of a task;
    the kit compares it field by field.

    At create: ``Snapshot(task, work, revision=0, retry_count=0, retry_at=None,
    last_failure=None, input_history={}, accepted_input_responses={})``. Then ``revision``
    +1 per applied event; ``retry_count``, ``retry_at`` (``committed_at + delay``) and
    ``last_failure`` (``{"error": ..., "statusMessage": ...}`` of the last retry_requested)
    follow retry_requested, and terminal events clear ``retry_at``; ``input_history`` maps
    every key ever requested to its request (never shrinks); ``accepted_input_responses``
    maps every accepted key to its response. Claims do not change the snapshot.

    Example, after input_requested ``k`` (a request carries a non-empty ``"method"``) then
    responses ``{"k": {"name": "Ada"}}`` (each response is a mapping)::

        Snapshot(task, work, 2, 0, None, None,
                 {"k": {"method": "elicitation/create", "message": "Name?"}},
                 {"k": {"name": "Ada"}})
    """

    task: Task
    work: Work | None
    revision: int
    retry_count: int
    retry_at: float | None
    last_failure: Mapping[str, Any] | None
    input_history: Mapping[str, Any]
    accepted_input_responses: Mapping[str, Any]


@value_class
@attrs.frozen
class Event:
    """``kind`` in input_requested, retry_requested, completed, failed (worker) or
    input_responses_accepted, cancelled (request). ``data`` per kind, exactly these fields
    (:data:`EVENT_FIELDS`): ``{"key", "request"}``; ``{"error", "statusMessage"}``;
    ``{"result"}``; ``{"error", "statusMessage"}``; ``{"responses"}``; ``{}``. A request is a
    JSON-safe mapping with a non-empty string ``"method"``, each response a mapping, a result
    and an error JSON-safe mappings, a statusMessage None or a string (SNODO-ARG-007).

    Example: ``Event("e1", "input_requested", {"key": "k", "request": {"method":
    "elicitation/create", "message": "Name?"}})``."""

    id: str
    kind: str
    data: Mapping[str, Any]


@value_class
@attrs.frozen
class Transition:
    """transition's success; the kit compares every field.

    ``outcome``: ``"applied"`` (``snapshot`` is the new one, ``event_revision`` its revision),
    ``"unchanged"`` (a valid no-op: ``snapshot`` and ``event_revision`` are the current ones,
    nothing is stored, ``committed_at`` is still computed) or ``"duplicate"`` (an event id seen
    before with the identical event: the original ``effects``, ``event_revision`` and
    ``committed_at``, with the current ``snapshot``). ``committed_at`` is ``now``, or one step
    past ``last_updated_at`` when the clock did not move past it (``committed_at_step``).

    ``effects`` by event (``{}`` for input_requested, completed, failed, cancelled, and for
    any event on a terminal task)::

        retry_requested, a delay left:
            {"retry": {"disposition": "scheduled", "retry_at": committed_at + delay,
                       "delay_ms": delay, "retry_count": <the new retry_count>}}
        retry_requested, none left (the task fails):
            {"retry": {"disposition": "exhausted", "retry_at": None, "delay_ms": None,
                       "retry_count": <retry_count, unchanged>}}
        input_responses_accepted, some keys outstanding (applied):
            {"accepted_input_responses": {<the outstanding keys it answered>: <response>}}
        input_responses_accepted, none outstanding (unchanged):
            {"accepted_input_responses": {}}

    Example: ``Transition("applied", snap, {}, 1, 1_005)`` for a first input_requested at
    1_005 ms.
    """

    outcome: str
    snapshot: Snapshot
    effects: Mapping[str, Any]
    event_revision: int
    committed_at: float


@value_class
@attrs.frozen
class Claimed:
    """claim's and claim_next's success: the snapshot (revision unchanged) and the new lease."""

    snapshot: Snapshot
    lease: Any


@value_class
@attrs.frozen
class RequestAuthority:
    access: Any


@value_class
@attrs.frozen
class WorkerAuthority:
    lease: Any
