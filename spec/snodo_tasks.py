"""The ``snodo-tasks`` contract: the snodo Tasks store (revisioned tasks, worker leases).

Time is store-authoritative: the store reads ``env.clock()`` (integer ms); no operation takes a
time argument. Accesses and leases are opaque values the store mints; the kit only hands back
what it was given (or values nobody issued, to attack). Capacity limits arrive in
``env.options`` as ``max_tasks`` and ``max_active_tasks_per_scope`` (an integer or
``infinity``). Where the seed's own stores disagree, ``CHOICES`` names the options (in
``env.options`` as strings, defaults filled in; :func:`option` reads one).

This module is long by design: the protocol, every shape the kit compares (with examples),
the options and the clauses are declared in one place, so an author reads one file.

Example (the shape of an adapter)::

    from fencepost.spec.snodo_tasks import NotFound, Snapshot

    class MyTasks:
        def get(self, task_id, access) -> Snapshot:
            row = self._load(task_id)
            if row is None or not self._may_read(access, row):
                raise NotFound(task_id)       # never reveal a foreign tenant's task
            ...
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from .clauses import Catalogue, Choice, Clause, Setting, Situation, situation
from .errors import ContractError
from .ops import Op, operation
from .values import value_class

CONTRACT = "snodo-tasks"

WORKING, INPUT_REQUIRED = "working", "input_required"
COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"
STATUSES = (WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED)
TERMINAL = (COMPLETED, FAILED, CANCELLED)
ACTIONS = ("create", "get", "update", "cancel")
WORKER_KINDS = ("input_requested", "retry_requested", "completed", "failed")
REQUEST_KINDS = {"input_responses_accepted": "update", "cancelled": "cancel"}
APPLIED, UNCHANGED, DUPLICATE = "applied", "unchanged", "duplicate"
CANCEL_MESSAGE = "Cancellation requested"

CAPABILITIES = {
    "durable": "calling the factory again with the same env reopens the same data, and every "
    "lease and access issued before stays exactly as valid as it was",
    "concurrency": "the store may be called from several threads at once (race checks)",
    "fault_injection": "found, not declared: the store's `engine` attribute is the SQLAlchemy "
    "Engine all its transactions run on; the kit injects database failures through its event "
    "hooks (the FAULT clauses)",
}

_MEMORY = "extensions/tasks/lib/snodo/extensions/tasks/store/memory.ex@986ac838"
_SQLITE = "extensions/tasks_sqlite/lib/snodo/extensions/tasks/store/sqlite.ex@50c2cd0e"
_TIMESTAMP = "extensions/tasks_sqlite/lib/snodo/extensions/tasks/store/sqlite/timestamp.ex@84bf1943"
# The Store functions every call goes through (their guards), and the values the stores validate.
_STORE = "extensions/tasks/lib/snodo/extensions/tasks/store.ex@098b4783"
_TASK = "extensions/tasks/lib/snodo/extensions/tasks/task.ex@c924739c"
_WORK = "extensions/tasks/lib/snodo/extensions/tasks/work.ex@84bf1943"
_RETRY = "extensions/tasks/lib/snodo/extensions/tasks/retry_policy.ex@c924739c"
_EVENT = "extensions/tasks/lib/snodo/extensions/tasks/event.ex@c924739c"
_SNAPSHOT = "extensions/tasks/lib/snodo/extensions/tasks/snapshot.ex@84bf1943"
_JSON = "lib/snodo/json_value.ex@78304a5a"


def microsecond_after(ms: float) -> float:
    """The time 1 us after ``ms``, in ms: the seed SQLite store's step (its timestamps count
    whole microseconds, timestamp.ex:44). Computed from the whole number of microseconds, so
    that any number of steps gives the float nearest the exact decimal (``1000.002``, never
    the running sum ``1000.0020000000001``), as an adapter counting microseconds answers."""
    return (round(ms * 1000) + 1) / 1000


MAX_RETRY_DELAY_MS = 4_294_967_295
"""The longest retry delay the seed's RetryPolicy accepts (retry_policy.ex:17)."""

# Where the seed's own stores disagree. Each default is what the upstream stores share or,
# failing that, the reference store's reading (the upstream Memory store); it says which.
CHOICES = (
    Choice(
        name="same_expiry_renewal",
        doc_says="Memory: a renewal whose new expiry (now + lease_ms) equals the old one hands "
        "back the identical lease, and the value renewed stays valid",
        implementation_does="SQLite: such a renewal moves the expiry to its successor (1 us "
        "later), so the value renewed goes stale",
        default="identical",
        values=(
            ("identical", "default, the reference (Memory) store's reading: the same lease "
             "comes back; the old value stays valid"),
            ("successor", "the SQLite store's reading: the expiry moves 1 us (0.001 ms) past "
             "the old one; the old value is stale, the new one is live through the old "
             "expiry's ms"),
        ),
        source=f"{_MEMORY}:253-265 (Memory: the lease with expires_at = now + lease_ms); "
        f"{_SQLITE}:549-587 (SQLite: renewal_expiry at 584-587); {_TIMESTAMP}:44 (successor "
        "= +1 us)",
    ),
    Choice(
        name="forged_request_authority",
        doc_says="the notes (SNODO-AUTH-004 before): a value the store never minted, used as "
        "request authority in transition, is not_found",
        implementation_does="both upstream stores answer unauthorized_action (a value that is "
        "not the store's access type falls to a catch-all); an access of the same type minted "
        "by another store of the same kind is not_found in both",
        default="unauthorized_action",
        values=(
            ("unauthorized_action", "default, what both upstream stores do"),
            ("not_found", "the kit's former reading: a forged request authority is not_found"),
        ),
        source=f"{_MEMORY}:419-421 (Memory: authorize_transition's catch-all), 382-383 "
        f"(another store's access: not_found); {_SQLITE}:690-691 (SQLite: prepare_authority's "
        "catch-all), 667-668 (another store's access: not_found)",
    ),
    Choice(
        name="transition_check_order",
        doc_says="Memory: transition reads the task first (missing -> not_found), then checks "
        "the authority against it",
        implementation_does="SQLite: transition checks the authority's shape (its type, store, "
        "action, task id and event kind; a lease's store and task id) before it reads the "
        "task, so those refusals do not depend on whether the task exists or whose it is",
        default="row_first",
        values=(
            ("row_first", "default, the reference (Memory) store's order: missing -> "
             "not_found; request authority: other store or scope, or expired -> not_found, "
             "then action and event kind -> unauthorized_action; worker authority: invalid "
             "or expired lease -> stale_lease, then a request kind -> unauthorized_action"),
            ("authority_first", "the SQLite store's order: first, without reading the task, "
             "request authority: not an access -> forged_request_authority's answer, "
             "another store's -> not_found, action not update/cancel on this id or event "
             "kind not the action's -> unauthorized_action; worker authority: not a lease -> "
             "unauthorized_action, another store's or another task's -> stale_lease, a "
             "request kind -> unauthorized_action; then missing -> not_found, then the "
             "scope and expiry (not_found) or the lease's claim and expiry (stale_lease)"),
        ),
        source=f"{_MEMORY}:315-325 (Memory: the row is fetched at 317 before "
        f"authorize_transition at 318), 373-431; {_SQLITE}:212-228 (SQLite: "
        "prepare_authority before the transaction), 660-691 (prepare_authority), 693-725 "
        "(the row, then scope, expiry or lease)",
    ),
    Choice(
        name="create_check_order",
        doc_says="Memory: create of an existing id answers already_exists before capacity is "
        "counted",
        implementation_does="SQL: create counts capacity first and inserts after, so a full "
        "store answers capacity_exceeded even for an id that exists",
        default="exists_first",
        values=(
            ("exists_first", "default, the reference (Memory) store's order: already_exists, "
             "then capacity_exceeded"),
            ("capacity_first", "the SQLite store's order: capacity_exceeded, then "
             "already_exists"),
        ),
        source=f"{_MEMORY}:164-173 (Memory: has_key at 169 before exceeded_limit at 172); "
        f"{_SQLITE}:346-383 (SQLite: insert_bounded checks capacity at 367, the insert's "
        "conflict answers already_exists at 359)",
    ),
    Choice(
        name="committed_at_step",
        doc_says="Memory: when the clock did not move past last_updated_at, committed_at is "
        "last_updated_at + 1 ms",
        implementation_does="SQLite: it is last_updated_at + 1 us (its timestamps are in us)",
        default="millisecond",
        values=(
            ("millisecond", "default, the reference (Memory) store's step: last_updated_at + 1"),
            ("microsecond", "the SQLite store's step: last_updated_at + 0.001 (a float ms "
             "value); retry_at = committed_at + delay follows, and deferred stays the "
             "remaining ms rounded up"),
        ),
        source=f"{_MEMORY}:632-639 (Memory: monotonic_timestamp adds 1 ms); {_SQLITE}:937-947 "
        f"(SQLite: monotonic_microseconds takes the successor); {_TIMESTAMP}:44",
    ),
    Choice(
        name="reap_order",
        doc_says="Memory: reap answers the reaped ids sorted",
        implementation_does="SQLite: reap answers them in expiry order (created_at + ttl_ms, "
        "then id), at most a batch per call",
        default="task_id",
        values=(
            ("task_id", "default, the reference (Memory) store's order: the ids sorted"),
            ("expiry", "the SQLite store's order: by created_at + ttl_ms, ties by id"),
        ),
        source=f"{_MEMORY}:278-287, 538-543 (Memory: expired_task_ids sorts the ids); "
        f"{_SQLITE}:622-649 (SQLite: ordered by expires_at_us, then task_id, at 628)",
    ),
    Choice(
        name="create_validation_order",
        doc_says="Memory: create validates the task and its work (Task.validate! and "
        "Work.validate, through Snapshot.new) last, after already_exists and capacity: an "
        "invalid task under an existing id answers already_exists, into a full store "
        "capacity_exceeded",
        implementation_does="SQLite: create validates them right after the access check, "
        "before its transaction counts capacity or inserts: an invalid task answers "
        "invalid_task whatever the store holds",
        default="last",
        values=(
            ("last", "default, the reference (Memory) store's order: unauthorized_action, "
             "already_exists and capacity_exceeded (in create_check_order's order), then "
             "invalid_task"),
            ("after_access", "the SQLite store's order: unauthorized_action, invalid_task, "
             "then already_exists and capacity_exceeded (in create_check_order's order)"),
        ),
        source=f"{_MEMORY}:164-191 (Memory: Snapshot.new at 176, in the branch after has_key "
        f"at 169 and exceeded_limit at 172; the rescue at 189-190 answers invalid_task); "
        f"{_SQLITE}:151-162 (SQLite: Snapshot.new at 153, after authorize_create at 152 and "
        f"before transact_write at 156; the rescue at 160-161); {_SNAPSHOT}:48-56 "
        "(Snapshot.new runs Task.validate! at 49 and Work.validate through validate at 52)",
    ),
)


def option(options: Mapping[str, Any], name: str) -> str:
    """The value of choice ``name`` in ``options`` (a store's ``env.options``), or its
    default when it is not given.

    Example::

        if option(env.options, "reap_order") == "expiry": ...
    """
    value = options.get(name)
    if value is None:
        return next(c.default for c in CHOICES if c.name == name)
    return str(value)

SETTINGS = (
    Setting("max_tasks", "infinity", "stored tasks (terminal and expired count until reaped)"),
    Setting("max_active_tasks_per_scope", "infinity",
            "working or input_required tasks per scope"),
)


# --- errors: the seed's terms -----------------------------------------------------------------


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


# --- data ---------------------------------------------------------------------------------------


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


# --- the protocol ------------------------------------------------------------------------------


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


# --- operations as data ------------------------------------------------------------------------


class _Keyed(Op):
    task_id: str

    def key(self) -> str | None:
        return self.task_id


@operation(CONTRACT, "authorize")
@attrs.frozen
class Authorize(Op):
    context: Context
    action: Action


@operation(CONTRACT, "create")
@attrs.frozen
class Create(Op):
    task: Task
    work: Work
    access: Any

    def key(self) -> str | None:
        return self.task.id


@operation(CONTRACT, "get")
@attrs.frozen
class Get(_Keyed):
    task_id: str
    access: Any


@operation(CONTRACT, "claim")
@attrs.frozen
class Claim(_Keyed):
    task_id: str
    owner_id: str
    lease_ms: int


@operation(CONTRACT, "claim_next")
@attrs.frozen
class ClaimNext(Op):
    owner_id: str
    lease_ms: int


@operation(CONTRACT, "renew")
@attrs.frozen
class Renew(Op):
    lease: Any
    lease_ms: int


@operation(CONTRACT, "release")
@attrs.frozen
class Release(Op):
    lease: Any


@operation(CONTRACT, "transition")
@attrs.frozen
class TransitionOp(_Keyed):
    task_id: str
    expected_revision: int
    event: Event
    authority: Any


@operation(CONTRACT, "worker_snapshot")
@attrs.frozen
class WorkerSnapshot(_Keyed):
    task_id: str
    lease: Any


@operation(CONTRACT, "reap")
@attrs.frozen
class Reap(Op):
    pass


# --- the clause catalogue ----------------------------------------------------------------------

M = "machine"
FAULT_CHECKS = tuple(f"fault:{name}" for name in (
    "create", "claim", "claim_next", "renew", "release", "transition"))


def _c(id: str, title: str, text: str, *checks: str, requires: tuple[str, ...] = (),
       choice: str | None = None, situations: tuple[str | Situation, ...] = ()) -> Clause:
    return Clause(id, title, text, checks, frozenset(requires), choice, situations)


def _each(template: str, *values: str) -> tuple[str, ...]:
    return tuple(template.format(v) for v in values)


def _readings(case: str, option: str) -> tuple[Situation, ...]:
    """``case`` once per reading of the named option, each reachable only under its own:
    ``"a still clock (millisecond)"`` under committed_at_step=millisecond..."""
    choice = next(c for c in CHOICES if c.name == option)
    return tuple(situation(f"{case} ({value})", **{option: value}) for value, _ in choice.values)


# The seed's guards (store.ex) and validations at every argument's edges: the empty string, 0,
# negative numbers, a value of the wrong type (a float, a bool, a string for a number).
EDGE = "scenario:arguments_at_their_edges"


def integer(value: Any) -> bool:
    """An integer as the seed's guards mean it (``is_integer``): ``True`` is none."""
    return isinstance(value, int) and not isinstance(value, bool)


def _a(arg: str) -> str:
    return f"an {arg}" if arg[0] in "aeiou" else f"a {arg}"


def text_edge(arg: str, value: Any) -> str | None:
    """None when ``value`` is a non-empty string; else the edge it is, as the catalogue's
    situations say it: ``"an empty owner"``, ``"an owner that is no string"``."""
    if isinstance(value, str) and value:
        return None
    return f"an empty {arg}" if value == "" else f"{_a(arg)} that is no string"


def count_edge(arg: str, value: Any) -> str | None:
    """None when ``value`` is a positive integer; else ``"a lease_ms of 0"``, ``"a negative
    lease_ms"`` or ``"a lease_ms that is no integer"`` (a float, a bool, a string)."""
    if not integer(value):
        return f"{_a(arg)} that is no integer"
    if value > 0:
        return None
    return f"{_a(arg)} of 0" if value == 0 else f"a negative {arg}"


def _edges(arg: str, prefix: str = "", count: bool = False) -> tuple[str, ...]:
    """Every edge of one argument, as situations: ``claim with an empty owner``..."""
    if count:
        return tuple(f"{prefix}{count_edge(arg, v)}" for v in (0, -1, 1.5))
    return tuple(f"{prefix}{text_edge(arg, v)}" for v in ("", 7))


ARGUMENT_CLAUSES = (
    _c("SNODO-ARG-001", "claim and claim_next take only the seed's argument types",
       "claim with a task id or owner id, or claim_next with an owner id, that is not a "
       "non-empty string, or either with a lease_ms that is not a positive integer (0, "
       "negative, a float, a bool, a string), answers function_clause before anything is "
       "read or claimed: the seed's Store.claim/4 and claim_next/3 have no function clause "
       f"for them ({_STORE}:164-166, 177-179). (Behind that guard the seed's stores differ: "
       f"Memory would grant a claim already expired, {_MEMORY}:222-234, 611-621; SQLite "
       f"refuses a negative one, {_TIMESTAMP}:36-41.)", M, EDGE,
       situations=(*_edges("task id", "claim with "), *_edges("owner", "claim with "),
                   *_edges("lease_ms", "claim with ", count=True),
                   *_edges("owner", "claim_next with "),
                   *_edges("lease_ms", "claim_next with ", count=True))),
    _c("SNODO-ARG-002", "renew takes only a positive lease_ms",
       "renew with a lease_ms that is not a positive integer answers function_clause, "
       "whatever the lease (live, stale or forged), and the claim stays as it was "
       f"({_STORE}:186-187; a live lease renewed by 0 would expire at once, "
       f"{_MEMORY}:253-265).", M, EDGE,
       situations=(*_edges("lease_ms", count=True), "of a live lease")),
    _c("SNODO-ARG-003", "transition takes only the seed's argument types",
       "transition with a task id that is not a string, an expected_revision that is not a "
       "non-negative integer (-1, a float, a bool, a string) or an authority that is neither "
       "request nor worker authority (a bare lease) answers function_clause before the task "
       f"is read, on a missing task too ({_STORE}:210-218). The empty task id passes the "
       "guard: no task has it (not_found; under transition_check_order=authority_first the "
       "authority's refusal may come first).", M, EDGE,
       situations=("a task id that is no string", "a negative expected_revision",
                   "an expected_revision that is no integer",
                   "an authority neither request nor worker", "on a missing task")),
    _c("SNODO-ARG-004", "authorize, get and worker_snapshot take only the seed's types",
       "authorize with an action kind other than create, get, update and cancel, or a task "
       "id that is not a non-empty string, answers function_clause and mints nothing; get "
       "and worker_snapshot with a task id that is not a string answer function_clause "
       f"({_STORE}:137-139, 151, 157-158). The empty task id passes get's and "
       "worker_snapshot's guard (SNODO-GET-002, SNODO-WS-001).", M, EDGE,
       situations=("authorize an empty action kind", "authorize an unknown action kind",
                   *_edges("task id", "authorize "),
                   "get of a task id that is no string",
                   "worker_snapshot of a task id that is no string")),
    _c("SNODO-ARG-005", "create takes only a task and work the seed's validation accepts",
       f"create with a work that is no Work answers function_clause ({_STORE}:145-146). "
       "create of a task whose status is not one of the five, whose status_message is "
       "neither None nor a string, whose times are not numbers or last_updated_at precedes "
       "created_at, whose ttl_ms or poll_interval_ms is neither None nor a positive integer, "
       "that holds input requests (at creation no key is in use), whose result or error is "
       "neither None nor a JSON-safe mapping (spec.json_safe), or whose payload is not its "
       "status's (working and cancelled: neither; completed: a result, no error; failed: an "
       "error, no result; input_required: impossible without requests); or of work whose "
       "idempotency_key or type is not a non-empty string, whose input is not a JSON-safe "
       f"mapping or whose retry delays are not integers from 0 to {MAX_RETRY_DELAY_MS}, "
       f"answers invalid_task and stores nothing ({_TASK}:163-171, 190-248, 311-343; "
       f"{_WORK}:91-108; {_RETRY}:17 and valid_delay?). Under create_validation_order=last "
       "(default) it comes after unauthorized_action, already_exists and "
       "capacity_exceeded; under after_access right after unauthorized_action. A task may "
       "be created completed (with a result), and a retry delay may be 0.", M, EDGE,
       choice="create_validation_order",
       situations=("a work that is no Work", "an empty status", "an unknown status",
                   "a status_message that is no string", "a time that is no number",
                   "last_updated_at before created_at",
                   *_edges("ttl_ms", count=True), *_edges("poll_interval_ms", count=True),
                   "a task created with input requests", "a result or error that is no mapping",
                   "a result or error that is not JSON-safe", "a work input that is not JSON-safe",
                   "a payload that is not its status's",
                   *_edges("idempotency key"), *_edges("work type"),
                   "a work input that is no mapping", "a negative retry delay",
                   "a retry delay that is no integer", f"a retry delay over {MAX_RETRY_DELAY_MS}",
                   situation("an invalid task over an existing id (after_access)",
                             create_validation_order="after_access"))),
    _c("SNODO-ARG-006", "transition takes only an event the seed's validation accepts",
       "Once the authority passed, transition of an event whose id is not a non-empty string "
       "answers invalid_event_id; of an input_requested whose key is not a non-empty string, "
       "invalid_input_key; of an input_responses_accepted with a response key that is not a "
       "non-empty string, invalid_input_responses: before a replay, a reused id, the "
       "revision or a terminal task is looked at, and nothing is stored "
       f"({_MEMORY}:319, {_SQLITE}:693-725 (Event.validate after the authority); "
       f"{_EVENT}:83-100, 171-185, 212-218). An event kind no authority may send, the empty "
       "one included, is unauthorized_action (SNODO-AUTH-001, SNODO-LEASE-006).", M, EDGE,
       situations=(*_edges("event id"), *_edges("input key"),
                   "an empty response key", "over a stale expected_revision",
                   "under an id seen before", "on a terminal task")),
    _c("SNODO-ARG-007", "transition takes only event data the seed's validation accepts",
       "Once the authority passed and the event id is valid, transition answers, in this "
       "order: invalid_event_data for data that is no mapping or whose fields are not "
       "exactly its kind's (input_requested: key, request; input_responses_accepted: "
       "responses; completed: result; retry_requested and failed: error, statusMessage; "
       "cancelled: none), checked before the input key (SNODO-ARG-006); "
       "invalid_input_request for a request that is not a JSON-safe mapping with a "
       "non-empty string method; invalid_input_responses for responses that are not a "
       "JSON-safe mapping, or a response that is no mapping; invalid_task_result for a "
       "result, and invalid_task_error for an error, that is not a JSON-safe mapping; "
       "invalid_status_message for a statusMessage neither None nor a string (after the "
       "error). As SNODO-ARG-006, before a replay, a reused id, the revision or a terminal "
       f"task is looked at, and nothing is stored ({_MEMORY}:319 before apply_or_replay "
       f"at 320, which checks the id at 328-334 and the revision at 336; {_EVENT}:83-100, "
       f"171-247; {_TASK}:174-180; {_JSON}:67-77). JSON-safe: None, a bool, a string, an "
       "integer, a finite float, a list or a string-keyed mapping of them (spec.json_safe; "
       "no tuple). A kind outside the six is {:unsupported_event_kind, kind} in Event."
       "validate (unsupported_event_kind, payload the kind), but both upstream stores "
       "refuse it at the authority first (unauthorized_action, SNODO-AUTH-001, "
       "SNODO-LEASE-006), so no store answers it from transition.", M, EDGE,
       situations=("event data that is no mapping", "event data missing a field",
                   "event data with an extra field", "an input request that is no mapping",
                   "an input request without a string method",
                   "an input request with an empty method",
                   "an input request that is not JSON-safe", "responses that are no mapping",
                   "responses that are not JSON-safe", "a response that is no mapping",
                   "a result that is no mapping", "a result that is not JSON-safe",
                   "an error that is no mapping", "an error that is not JSON-safe",
                   "a status message that is no string", "over a stale expected_revision",
                   "under an id seen before", "on a terminal task")),
)

VALUE_CLAUSES = (
    _c("SNODO-VALUE-001", "stored values read back exactly",
       "Every value a store keeps from its caller reads back exactly as given, in type and "
       "value, within the seed's JSON-safe domain (spec.json_safe): work.input; a completed "
       "event's result; a failed or retry_requested event's error and statusMessage "
       "(task.error, last_failure); input requests (task.input_requests, input_history); "
       "accepted responses (accepted_input_responses and the transition's effects). 1 and "
       "1.0 are different values; an integer past 2**53 keeps every digit; -0.0 stays -0.0; "
       "non-ASCII and empty strings stay as they are; lists and mappings keep their nesting. "
       f"JSONValue.valid? admits every number and integer size and sets no depth limit "
       f"({_JSON}:67-77; its decoder refuses integers over 64 digits, 22 and 55-61, so the "
       "kit's stay within 20); the Memory store keeps the terms it is given "
       f"({_MEMORY}:176, 344-371), and Erlang keeps -0.0 apart from 0.0 (OTP 27). The kit "
       "nests 64 levels deep.", "scenario:values_read_back_exactly",
       situations=("work input", "a result", "an error and its status message",
                   "a retry's last_failure", "an input request", "an accepted response")),
)

# The catalogue's version (fencepost.reports.baseline compares reports of one MAJOR only):
# MINOR grows when clauses are added, MAJOR when an existing clause id changes meaning or is
# removed.
CATALOGUE_VERSION = "2.0"  # 2.0: the seed callers' value domain, its refusals as codes

CLAUSES = Catalogue([
    _c("SNODO-AUTH-001", "an access is bound to its action",
       "An access authorizes only its own action: create-access cannot read; get-access cannot "
       "send events; only update-access sends input_responses_accepted and only cancel-access "
       "sends cancelled (else unauthorized_action).", M, "scenario:access_bound_to_action",
       situations=("a create-access reads", "a get or create access sends an event",
                   "an update-access cancels", "a cancel-access answers input",
                   "an empty event kind")),
    _c("SNODO-AUTH-002", "an access is bound to its task id",
       "An access for one task id neither reads nor changes another task (not_found for get, "
       "unauthorized_action for create and request transitions).",
       M, "scenario:cross_task_access",
       situations=("get with another task's access", "create with another task's access",
                   "a request with another task's access")),
    _c("SNODO-AUTH-003", "tenants are concealed from each other",
       "A task created in one scope is not_found for every access of another scope, for get "
       "and for request transitions; never data, and never an answer that depends on the "
       "task. Under transition_check_order=row_first (default) a request transition from "
       "another scope is not_found whatever its action; under authority_first an access whose "
       "action or event kind is wrong answers unauthorized_action before the task is read "
       "(the same answer whether the task exists or whose it is), and a right one not_found.",
       M, "scenario:foreign_scope_sees_not_found", "scenario:authority_checked_against_row",
       choice="transition_check_order",
       situations=("get from another scope", "a request from another scope",
                   "between no tenant and a named one", "between the empty tenant and no tenant",
                   *_readings("a wrong action from another scope", "transition_check_order"))),
    _c("SNODO-AUTH-004", "forged and foreign-store values are refused",
       "An access or lease the store never issued, or issued by another store, is refused: "
       "not_found for reads, unauthorized_action for create, stale_lease for worker use "
       "(under transition_check_order=authority_first a value that is no lease at all is "
       "unauthorized_action in a worker transition). In a request transition another "
       "store's access is not_found; a value that is no access at all answers "
       "forged_request_authority's value: unauthorized_action (default) or not_found "
       "(under row_first, a missing task is not_found first).",
       "scenario:forged_and_cross_store_values", "scenario:forged_access_in_transition",
       choice="forged_request_authority",
       situations=("a forged access", "another store's access", "a forged lease",
                   "another store's lease", "a forged request authority on a missing task",
                   *_readings("a forged request authority", "forged_request_authority"))),
    _c("SNODO-CREATE-001", "create stores the task at revision 0",
       "create with a create-access for the task's id stores the task and its work in one step "
       "and returns the snapshot at revision 0 with no retries, inputs or failures.",
       M, "scenario:create_get_claim_complete"),
    _c("SNODO-CREATE-002", "create never overwrites",
       "create of an existing id answers already_exists and changes nothing; when the store "
       "is also at a capacity limit, already_exists comes first under "
       "create_check_order=exists_first (default) and capacity_exceeded under capacity_first; "
       "for an invalid task, already_exists comes first under create_validation_order=last "
       "(default), invalid_task under after_access.",
       M, "scenario:create_get_claim_complete", "scenario:create_in_a_full_store",
       choice="create_check_order",
       situations=("over an active task", "over a terminal task", "over an expired task",
                   situation("an existing id in a full store (exists_first)",
                             create_check_order="exists_first"),
                   situation("an invalid task over an existing id (last)",
                             create_validation_order="last"))),
    _c("SNODO-CREATE-003", "create needs a create-access for that id",
       "create with any other access answers unauthorized_action and stores nothing.",
       M, "scenario:access_bound_to_action",
       situations=("with a get-access", "with an update or cancel access")),
    _c("SNODO-CAP-001", "max_tasks bounds the store",
       "create answers capacity_exceeded(max_tasks) when the stored count (terminal and expired "
       "tasks included until reaped) is at max_tasks; for an id that exists too, only under "
       "create_check_order=capacity_first (else already_exists).", "scenario:capacity_limits",
       "scenario:create_in_a_full_store",
       situations=("the create that fills the store", "a create into a full store",
                   "a terminal task counts", "an expired task counts",
                   situation("an existing id in a full store (capacity_first)",
                             create_check_order="capacity_first"))),
    _c("SNODO-CAP-002", "max_active_tasks_per_scope bounds a tenant",
       "create answers capacity_exceeded(max_active_tasks_per_scope) when the scope's working "
       "and input_required tasks reach the limit; other scopes are unaffected.",
       "scenario:capacity_limits",
       situations=("the create that fills the scope", "a create into a full scope",
                   "another scope at its limit", "a terminal task no longer counts")),
    _c("SNODO-CAP-003", "capacity holds under concurrent creates",
       "Of N concurrent creates against a limit of k free places, exactly k succeed.",
       "race:creates_at_capacity", requires=("concurrency",),
       situations=("racing for max_tasks", "racing for a scope's limit", "a place already taken")),
    _c("SNODO-GET-001", "get returns the current snapshot",
       "get with a get, update or cancel access of the task's scope returns the snapshot the "
       "accepted operations so far imply.", M, "scenario:create_get_claim_complete",
       situations=("through an update or cancel access", "1 ms before the TTL")),
    _c("SNODO-GET-002", "get of a missing task is not_found",
       "get of a task that does not exist (never created or reaped) answers not_found; so "
       "does get of the empty task id, which passes get's guard and no task can have.", M,
       "scenario:ttl_hides_then_reaps", "scenario:arguments_at_their_edges",
       situations=("never created", "a reaped task", "the empty task id")),
    _c("SNODO-TTL-001", "an expired task is hidden from requests",
       "At now >= created_at + ttl_ms, get and request transitions answer not_found, until and "
       "after reaping.", M, "scenario:ttl_hides_then_reaps",
       situations=("get at the TTL exactly", "a request at the TTL exactly", "after the TTL")),
    _c("SNODO-TTL-002", "reap removes exactly the expired aggregates",
       "reap deletes every task with now >= created_at + ttl_ms, whatever its status or claim, "
       "and nothing else; a second reap returns none of them. It returns their ids sorted "
       "under reap_order=task_id (default), or by expiry (created_at + ttl_ms, ties by id) "
       "under reap_order=expiry.", "scenario:ttl_hides_then_reaps",
       "scenario:reap_answers_in_order", choice="reap_order",
       situations=("at the TTL exactly", "1 ms before the TTL", "a claimed task reaped",
                   "a terminal task reaped",
                   *_readings("expiry order differs from id order", "reap_order"),
                   situation("an expiry tie broken by id (expiry)", reap_order="expiry"))),
    _c("SNODO-TTL-003", "a reaped aggregate is gone entirely",
       "After reaping, the id can be created again from scratch: no old claim, generation, "
       "seen event ids or input history survive.", "scenario:ttl_hides_then_reaps",
       situations=("a reaped id created again", "an old lease of a reaped task",
                   "an event id seen before the reap")),
    _c("SNODO-CLAIM-001", "claim of a missing task is not_found",
       "claim of a task that does not exist answers not_found.", M),
    _c("SNODO-CLAIM-002", "terminal tasks are unavailable",
       "claim of a completed, failed or cancelled task answers unavailable.",
       M, "scenario:create_get_claim_complete",
       situations=_each("a {} task", *TERMINAL)),
    _c("SNODO-CLAIM-003", "a due task with no live claim is claimable",
       "claim succeeds on a non-terminal task with work, no retry pending and no live claim; "
       "it returns the snapshot at an unchanged revision and a new lease.",
       M, "scenario:create_get_claim_complete",
       situations=("a released task", "a task whose retry fell due")),
    _c("SNODO-CLAIM-004", "a live claim makes the task unavailable",
       "While a claim is live (now < its expiry), claim answers unavailable.",
       M, "scenario:create_get_claim_complete",
       situations=("1 ms before expiry", "by the same owner")),
    _c("SNODO-CLAIM-005", "a claim expires exactly at its expiry",
       "At now >= expiry the task can be claimed again, at a higher generation.",
       M, "scenario:renew_boundary_exact",
       situations=("at the expiry exactly", "after the expiry")),
    _c("SNODO-CLAIM-006", "a pending retry defers claim by the exact remaining ms",
       "While now < retry_at, claim answers deferred(ceil(retry_at - now)) (deferred(1) one ms "
       "before; a retry_at with a us part rounds up too), checked before the live-claim "
       "check; at retry_at the task is due.",
       M, "scenario:retry_defers_claims",
       situations=("1 ms before retry_at", "at retry_at exactly", "over a live claim",
                   situation("a retry_at with a us part (microsecond)",
                             committed_at_step="microsecond"))),
    _c("SNODO-CLAIM-007", "claim_next picks only recoverable tasks",
       "claim_next returns a task that is non-terminal, has work, has its retry due and no live "
       "claim (any such task; the order is the store's), or nothing when none is.",
       M, "scenario:release_then_claim_next", "scenario:claim_next_among_several",
       situations=("nothing recoverable", "several recoverable, id order not creation order",
                   "passes a deferred task over", "passes a claimed task over",
                   "takes an expired claim")),
    _c("SNODO-CLAIM-008", "racing claimers have one winner",
       "Of N concurrent claims of one task exactly one succeeds; the rest answer unavailable.",
       "race:racing_claimers", requires=("concurrency",),
       situations=("a fresh task", "an expired claim", "a released task", "a retry just due")),
    _c("SNODO-LEASE-001", "every claim raises the generation and fences earlier leases",
       "After a re-claim, every lease of an earlier claim is stale_lease for renew, release, "
       "worker_snapshot and worker transitions. A worker transition of such a lease with a "
       "request kind is stale_lease under transition_check_order=row_first (default) and "
       "unauthorized_action under authority_first (the kind is checked before the claim); on "
       "a missing task it is not_found under row_first.", M, "scenario:old_lease_is_stale",
       "scenario:authority_checked_against_row", choice="transition_check_order",
       situations=(*_each("{} by a fenced lease", "renew", "release", "a worker event"),
                   "the same owner's older lease",
                   *_readings("a fenced lease sends a request kind", "transition_check_order"))),
    _c("SNODO-LEASE-002", "renew replaces the lease",
       "renew of a valid, unexpired lease returns a lease with expiry now + lease_ms (which may "
       "shorten it) and leaves the task and revision unchanged; the lease it replaced is "
       "stale. When now + lease_ms equals the old expiry, under "
       "same_expiry_renewal=identical (default) the same lease comes back and the old value "
       "stays valid; under successor the expiry moves 1 us (0.001 ms) past the old one, so "
       "the old value is stale and the claim stays live through the old expiry's ms.",
       M, "scenario:renew_boundary_exact", "scenario:renew_to_the_same_expiry",
       choice="same_expiry_renewal",
       situations=("shortens the lease", "extends the lease", "the replaced value used",
                   *_readings("a renewal to the same expiry", "same_expiry_renewal"),
                   situation("live in the old expiry's ms (successor)",
                             same_expiry_renewal="successor"))),
    _c("SNODO-LEASE-003", "an expired lease cannot be renewed",
       "At now >= expiry, renew, worker_snapshot and worker transitions answer stale_lease.",
       M, "scenario:renew_boundary_exact",
       situations=("renew at the expiry exactly", "a worker event at the expiry exactly",
                   "after the expiry")),
    _c("SNODO-LEASE-004", "release needs identity only",
       "release of the current claim's lease succeeds even after expiry and frees the task; a "
       "second release, or a release by a replaced lease, answers stale_lease.",
       M, "scenario:release_then_claim_next",
       situations=("after the expiry", "a second release")),
    _c("SNODO-LEASE-005", "a lease binds its task",
       "A lease for one task is stale_lease for worker_snapshot and transitions of another.",
       M, "scenario:forged_and_cross_store_values",
       situations=("worker_snapshot of another task", "a worker event on another task",
                   "a worker event on a missing task")),
    _c("SNODO-LEASE-006", "a lease is not request access",
       "A worker lease cannot send input_responses_accepted or cancelled (unauthorized_action).",
       M, "scenario:access_bound_to_action",
       situations=("a lease answers input", "a lease cancels", "a lease sends an empty kind")),
    _c("SNODO-WS-001", "worker_snapshot reads through a live lease",
       "worker_snapshot with the current, unexpired lease returns the snapshot; missing task "
       "-> not_found (the empty task id included).", M, "scenario:old_lease_is_stale",
       "scenario:arguments_at_their_edges",
       situations=("a missing task", "1 ms before expiry", "the empty task id")),
    _c("SNODO-TX-001", "a stale expected revision conflicts",
       "transition with expected_revision != the current revision answers conflict carrying "
       "the current snapshot, and changes nothing.", M, "scenario:two_writers_one_revision",
       situations=("a revision behind", "a revision ahead")),
    _c("SNODO-TX-002", "an applied event adds exactly one revision",
       "An applied event raises the revision by exactly 1 and sets last_updated_at = "
       "committed_at; event_revision is the new revision.", M,
       "scenario:create_get_claim_complete"),
    _c("SNODO-TX-003", "a replayed event is a duplicate with the original result",
       "An event id seen before with the identical event answers duplicate with the original "
       "event_revision, effects and committed_at, whatever expected_revision is.",
       M, "scenario:create_get_claim_complete",
       situations=("the same expected_revision", "a different expected_revision",
                   "a request event replayed")),
    _c("SNODO-TX-004", "an event id is never reused for another event",
       "An event id seen before with a different event answers event_id_reused. Events are "
       "compared exactly, as the seed's pin (^event, memory.ex:329): data with 1.0 where the "
       "first had 1, or true where it had 1, is another event.", M,
       "scenario:event_ids_compared_exactly",
       situations=("another kind", "the same kind, other data",
                   "data equal only loosely (1 and 1.0)")),
    _c("SNODO-TX-005", "committed_at never goes backwards",
       "committed_at = now, or, when the clock did not move past last_updated_at, "
       "last_updated_at + 1 (committed_at_step=millisecond, default) or last_updated_at + "
       "0.001 (microsecond).", M, "scenario:commits_past_a_still_clock",
       choice="committed_at_step",
       situations=("the clock moved on", *_readings("a still clock", "committed_at_step"))),
    _c("SNODO-TX-006", "concurrent writers at one revision: one applies",
       "Two writers with the same expected revision: exactly one is applied, the other "
       "answers conflict.", "race:two_writers_one_revision", requires=("concurrency",),
       situations=("an input answer among them", "a cancel among them")),
    _c("SNODO-RED-001", "terminal tasks never change",
       "Any event on a completed, failed or cancelled task is unchanged: no revision, no "
       "history, no field changes.", M, "scenario:create_get_claim_complete",
       situations=_each("a {} task", *TERMINAL)),
    _c("SNODO-RED-002", "input requests open once per key",
       "input_requested with a key never used sets status input_required and records the "
       "request; a key used before answers duplicate_input_key.", M,
       "scenario:input_round_trip",
       situations=("a key still open", "a key answered before")),
    _c("SNODO-RED-003", "input responses close outstanding requests",
       "input_responses_accepted takes only outstanding keys (none -> unchanged); when none "
       "remain outstanding the status returns to working.", M, "scenario:input_round_trip",
       situations=("no outstanding key matched", "some keys left open",
                   "the last open key answered")),
    _c("SNODO-RED-004", "retry follows the exact delay list",
       "retry_requested with a delay left: retry_count + 1, retry_at = committed_at + "
       "delays[retry_count], last_failure set, status unchanged. A delay of 0 is a delay "
       "(the retry is due at committed_at), not an exhausted policy.", M,
       "scenario:retry_defers_claims", "scenario:arguments_at_their_edges",
       situations=("the first delay", "a later delay", "a delay of 0")),
    _c("SNODO-RED-005", "an exhausted retry fails the task",
       "retry_requested with no delay left fails the task with the event's error and status "
       "message; retry_at is cleared and retry_count unchanged.", M,
       "scenario:retry_defers_claims",
       situations=("no policy at all", "the policy used up")),
    _c("SNODO-RED-006", "terminal events set exactly their payload",
       "completed sets the result (status message cleared), failed the error and message, "
       "cancelled the message 'Cancellation requested'; each clears retry_at and inputs.",
       M, "scenario:create_get_claim_complete",
       situations=("with an open input request", "with a retry pending")),
    *ARGUMENT_CLAUSES,
    *VALUE_CLAUSES,
    _c("SNODO-LIN-001", "concurrent calls are linearizable",
       "Every answer of a run where several clients call the store at once is the answer "
       "the model gives in one order of the calls that respects real time (a call that "
       "returned before another began comes first): nothing is lost, granted twice or seen "
       "half-done. A call whose connection was lost may have taken effect or not.",
       "concurrent", requires=("concurrency",),
       situations=("a change overlapped another call on its record",)),
    _c("SNODO-DURABLE-001", "reopening keeps everything and keeps fences",
       "After a reopen every task, claim, generation and seen event is as before; old leases "
       "stay stale and live ones stay valid.", M, "scenario:reopen_keeps_fences",
       requires=("durable",),
       situations=("a live lease kept", "a fenced lease kept stale")),
    _c("SNODO-FAULT-001", "a database failure surfaces as backend_unavailable",
       "When a statement of an operation fails, or its connection drops before COMMIT or after "
       "COMMIT was sent, the operation answers backend_unavailable, never an answer it would "
       "not give otherwise (not_found, unavailable, stale_lease, an empty claim_next...); ok "
       "only if it is exactly the answer due and its effect is stored.",
       *FAULT_CHECKS, requires=("fault_injection",)),
    _c("SNODO-FAULT-002", "a failed operation leaves its before or its after",
       "After an operation met a database failure, every task reads back as it was either "
       "before the operation or after it (after, when it answered ok): never part of it.",
       *FAULT_CHECKS, requires=("fault_injection",)),
])
