"""The ``snodo-tasks`` contract: the snodo Tasks store (revisioned tasks, worker leases).

Time is store-authoritative: the store reads ``env.clock()`` (integer ms); no operation takes a
time argument. Accesses and leases are opaque values the store mints; the kit only hands back
what it was given (or values nobody issued, to attack). Capacity limits arrive in
``env.options`` as ``max_tasks`` and ``max_active_tasks_per_scope`` (an integer or
``infinity``). Where the seed's own stores disagree, ``CHOICES`` names the options (in
``env.options`` as strings, defaults filled in; :func:`option` reads one).

This package is the contract's public face: import every name from here. Its modules split the
contract along its parts: :mod:`.protocol` (the name, the capabilities and the methods of
:class:`TasksStore`), :mod:`.data` (every shape the kit compares, with examples, and the values
they hold), :mod:`.errors` (the seed's terms), :mod:`.ops` (the operations as data, registered
for the contract when this package is imported), :mod:`.options` (``CHOICES``, ``SETTINGS``),
:mod:`.edges` (the argument edges the situations name), :mod:`.sources` (the seed files cited)
and :mod:`.catalogue` (``CLAUSES``).

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

from ..clauses import Catalogue, Choice, Clause, Setting, Situation, situation
from ..errors import ContractError
from ..ops import Op, operation
from ..values import value_class
from .catalogue import (
    ARGUMENT_CLAUSES,
    CATALOGUE_VERSION,
    CLAUSES,
    EDGE,
    FAULT_CHECKS,
    VALUE_CLAUSES,
    M,
)
from .data import (
    ACTIONS,
    APPLIED,
    CANCEL_MESSAGE,
    CANCELLED,
    COMPLETED,
    DUPLICATE,
    EVENT_FIELDS,
    EVENT_KINDS,
    FAILED,
    INPUT_REQUIRED,
    MAX_RETRY_DELAY_MS,
    REQUEST_KINDS,
    STATUSES,
    TERMINAL,
    UNCHANGED,
    WORKER_KINDS,
    WORKING,
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
    json_safe,
)
from .edges import count_edge, integer, text_edge
from .errors import (
    AlreadyExists,
    CapacityExceeded,
    Conflict,
    Deferred,
    DuplicateInputKey,
    EventIdReused,
    FunctionClause,
    InvalidEventData,
    InvalidEventId,
    InvalidInputKey,
    InvalidInputRequest,
    InvalidInputResponses,
    InvalidStatusMessage,
    InvalidTask,
    InvalidTaskError,
    InvalidTaskResult,
    NotFound,
    StaleLease,
    UnauthorizedAction,
    Unavailable,
    UnsupportedEventKind,
)
from .ops import (
    Authorize,
    Claim,
    ClaimNext,
    Create,
    Get,
    Reap,
    Release,
    Renew,
    TransitionOp,
    WorkerSnapshot,
)
from .options import CHOICES, SETTINGS, microsecond_after, option
from .protocol import CAPABILITIES, CONTRACT, PROTOCOL_METHODS, TasksStore

# Every public name of the contract (the kit's own helpers it uses included, as before the
# split): what ``from fencepost.spec.snodo_tasks import *`` gives (a replay script's first line).
__all__ = [
    "ACTIONS",
    "APPLIED",
    "ARGUMENT_CLAUSES",
    "Action",
    "AlreadyExists",
    "Authorize",
    "CANCELLED",
    "CANCEL_MESSAGE",
    "CAPABILITIES",
    "CATALOGUE_VERSION",
    "CHOICES",
    "CLAUSES",
    "COMPLETED",
    "CONTRACT",
    "CapacityExceeded",
    "Catalogue",
    "Choice",
    "Claim",
    "ClaimNext",
    "Claimed",
    "Clause",
    "Conflict",
    "Context",
    "ContractError",
    "Create",
    "DUPLICATE",
    "Deferred",
    "DuplicateInputKey",
    "EDGE",
    "EVENT_FIELDS",
    "EVENT_KINDS",
    "Event",
    "EventIdReused",
    "FAILED",
    "FAULT_CHECKS",
    "FunctionClause",
    "Get",
    "INPUT_REQUIRED",
    "InvalidEventData",
    "InvalidEventId",
    "InvalidInputKey",
    "InvalidInputRequest",
    "InvalidInputResponses",
    "InvalidStatusMessage",
    "InvalidTask",
    "InvalidTaskError",
    "InvalidTaskResult",
    "M",
    "MAX_RETRY_DELAY_MS",
    "NotFound",
    "Op",
    "PROTOCOL_METHODS",
    "REQUEST_KINDS",
    "Reap",
    "Release",
    "Renew",
    "RequestAuthority",
    "SETTINGS",
    "STATUSES",
    "Setting",
    "Situation",
    "Snapshot",
    "StaleLease",
    "TERMINAL",
    "Task",
    "TasksStore",
    "Transition",
    "TransitionOp",
    "UNCHANGED",
    "UnauthorizedAction",
    "Unavailable",
    "UnsupportedEventKind",
    "VALUE_CLAUSES",
    "WORKER_KINDS",
    "WORKING",
    "Work",
    "WorkerAuthority",
    "WorkerSnapshot",
    "count_edge",
    "integer",
    "json_safe",
    "microsecond_after",
    "operation",
    "option",
    "situation",
    "text_edge",
    "value_class",
]
