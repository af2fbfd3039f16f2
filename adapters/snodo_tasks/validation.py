"""What a snodo-tasks store refuses before it stores anything (the SNODO-ARG clauses).

In the seed the Store functions' guards stand in front of every store and refuse, with
FunctionClauseError, the arguments the callbacks' types exclude; the stores then validate the
task and work they create (Task.validate!, Work.validate) and the events they apply
(Event.validate). A Python store has nothing in front of it, so it does both itself. These are
plain predicates; :class:`~.core.TasksCore` decides where each is checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.errors import ContractError

_PAYLOAD = {  # what each status must carry at creation: (result, error)
    spec.WORKING: (False, False),
    spec.COMPLETED: (True, False),
    spec.FAILED: (False, True),
    spec.CANCELLED: (False, False),
}


def whole(value: Any) -> TypeGuard[int]:
    """An integer, not a bool (``True`` is no lease_ms and no revision)."""
    return isinstance(value, int) and not isinstance(value, bool)


def positive(value: Any) -> bool:
    return whole(value) and value > 0


def name(value: Any) -> bool:
    """A non-empty string: an id, an owner, a key."""
    return isinstance(value, str) and value != ""


def _time(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _optional_positive(value: Any) -> bool:
    return value is None or positive(value)


def task_error(task: spec.Task) -> str | None:
    """Why the seed's Task.validate! refuses ``task`` as created, or None."""
    if not name(task.id):
        return "the task id is not a non-empty string"
    if task.status not in _PAYLOAD:
        return f"status {task.status!r} cannot be created"  # input_required needs requests
    if task.status_message is not None and not isinstance(task.status_message, str):
        return "status_message is neither None nor a string"
    if not (_time(task.created_at) and _time(task.last_updated_at)):
        return "the task's times are not numbers"
    if task.last_updated_at < task.created_at:
        return "last_updated_at precedes created_at"
    if not (_optional_positive(task.ttl_ms) and _optional_positive(task.poll_interval_ms)):
        return "ttl_ms and poll_interval_ms must be None or positive integers"
    if not isinstance(task.input_requests, Mapping) or len(task.input_requests) > 0:
        return "a task is created with no input requests"
    result, error = task.result, task.error
    if any(v is not None and not (isinstance(v, Mapping) and spec.json_safe(v))
           for v in (result, error)):
        return "result and error must be None or JSON-safe mappings"
    if (result is not None, error is not None) != _PAYLOAD[task.status]:
        return f"a {task.status} task cannot carry that result and error"
    return None


def work_error(work: spec.Work) -> str | None:
    """Why the seed's Work.validate refuses ``work``, or None."""
    if not (name(work.idempotency_key) and name(work.type)):
        return "idempotency_key and type must be non-empty strings"
    if not (isinstance(work.input, Mapping) and spec.json_safe(work.input)):
        return "the work input is not a JSON-safe mapping"
    if not all(whole(d) and 0 <= d <= spec.MAX_RETRY_DELAY_MS for d in work.retry_policy):
        return f"retry delays are integers from 0 to {spec.MAX_RETRY_DELAY_MS}"
    return None


def _json_mapping(value: Any) -> bool:
    return isinstance(value, Mapping) and spec.json_safe(value)


def _request_ok(request: Any) -> bool:
    """The seed's Task.valid_input_request?: a JSON-safe mapping with a non-empty method."""
    return _json_mapping(request) and name(request.get("method"))


def _responses_error(responses: Any) -> ContractError | None:
    if not _json_mapping(responses):
        return spec.InvalidInputResponses("responses are a JSON-safe mapping")
    if not all(name(k) for k in responses):
        return spec.InvalidInputResponses("response keys are non-empty strings")
    if not all(isinstance(r, Mapping) for r in responses.values()):
        return spec.InvalidInputResponses("each response is a mapping")
    return None


def _failure_error(data: Mapping[str, Any]) -> ContractError | None:
    if not _json_mapping(data["error"]):
        return spec.InvalidTaskError("an error is a JSON-safe mapping")
    message = data["statusMessage"]
    if message is not None and not isinstance(message, str):
        return spec.InvalidStatusMessage("statusMessage is None or a string")
    return None


def _data_error(kind: str, data: Mapping[str, Any]) -> ContractError | None:
    """The values of data whose fields are exactly the kind's, in the seed's order."""
    if kind == "input_requested":
        if not name(data["key"]):
            return spec.InvalidInputKey("an input key is a non-empty string")
        if not _request_ok(data["request"]):
            return spec.InvalidInputRequest("a request is a JSON-safe mapping with a method")
        return None
    if kind == "input_responses_accepted":
        return _responses_error(data["responses"])
    if kind == "completed":
        if not _json_mapping(data["result"]):
            return spec.InvalidTaskResult("a result is a JSON-safe mapping")
        return None
    if kind in ("retry_requested", "failed"):
        return _failure_error(data)
    return None


def event_error(event: spec.Event) -> ContractError | None:
    """What the seed's Event.validate answers for ``event`` (of a kind its authority may
    send), in its order: the id, the kind, the data's shape, then its values; or None."""
    if not name(event.id):
        return spec.InvalidEventId("an event id is a non-empty string")
    if event.kind not in spec.EVENT_FIELDS:
        return spec.UnsupportedEventKind(f"no event kind {event.kind!r}", payload=event.kind)
    data = event.data
    if not isinstance(data, Mapping) or set(data) != spec.EVENT_FIELDS[event.kind]:
        return spec.InvalidEventData(f"{event.kind} data holds exactly its own fields")
    return _data_error(event.kind, data)
