"""The snodo-tasks model's answers to arguments at their edges, as the seed gives them.

Two layers, as in the seed:

- the Store functions' guards (``store.ex``): a call whose arguments no function clause takes
  raises FunctionClauseError before any store is reached. :func:`guard` names the clause and
  the situation (the answer is ``function_clause``, before anything else is checked);
- the stores' own validation of what they persist: create runs the task's and the work's
  (``invalid_task``, :func:`task_problem`), transition the event's once its authority passed
  (``invalid_event_id``, ``invalid_event_data``, ``invalid_input_key``,
  ``invalid_input_request``, ``invalid_input_responses``, ``invalid_task_result``,
  ``invalid_task_error``, ``invalid_status_message``: :func:`event_refusal`).

Every answer comes with the situation it is (``"claim with a lease_ms of 0"``), named by
``spec.text_edge`` and ``spec.count_edge`` as the catalogue declares them. Seed lines are cited
in the SNODO-ARG clauses' texts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.ops import Op

Problem = tuple[str, str]
"""(clause, situation): which rule refuses, and the edge it refuses."""


def number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _prefixed(prefix: str, *edges: str | None) -> str | None:
    bad = next((e for e in edges if e is not None), None)
    return None if bad is None else prefix + bad


def _claim(op: spec.Claim) -> Problem | None:
    bad = _prefixed("claim with ", spec.text_edge("task id", op.task_id),
                    spec.text_edge("owner", op.owner_id), spec.count_edge("lease_ms", op.lease_ms))
    return None if bad is None else ("SNODO-ARG-001", bad)


def _claim_next(op: spec.ClaimNext) -> Problem | None:
    bad = _prefixed("claim_next with ", spec.text_edge("owner", op.owner_id),
                    spec.count_edge("lease_ms", op.lease_ms))
    return None if bad is None else ("SNODO-ARG-001", bad)


def _renew(op: spec.Renew) -> Problem | None:
    bad = spec.count_edge("lease_ms", op.lease_ms)
    return None if bad is None else ("SNODO-ARG-002", bad)


def _transition(op: spec.TransitionOp) -> Problem | None:
    rev = op.expected_revision
    if not isinstance(op.task_id, str):
        return "SNODO-ARG-003", "a task id that is no string"
    if not spec.integer(rev):
        return "SNODO-ARG-003", "an expected_revision that is no integer"
    if rev < 0:
        return "SNODO-ARG-003", "a negative expected_revision"
    if not isinstance(op.authority, spec.RequestAuthority | spec.WorkerAuthority):
        return "SNODO-ARG-003", "an authority neither request nor worker"
    return None


def _authorize(op: spec.Authorize) -> Problem | None:
    kind = op.action.kind
    if kind not in spec.ACTIONS or not isinstance(kind, str):
        return "SNODO-ARG-004", ("authorize an empty action kind" if kind == ""
                                 else "authorize an unknown action kind")
    bad = _prefixed("authorize ", spec.text_edge("task id", op.action.task_id))
    return None if bad is None else ("SNODO-ARG-004", bad)


def _read(op: spec.Get | spec.WorkerSnapshot) -> Problem | None:
    if isinstance(op.task_id, str):
        return None
    return "SNODO-ARG-004", f"{op.name} of a task id that is no string"


def _create(op: spec.Create) -> Problem | None:
    if isinstance(op.work, spec.Work):
        return None
    return "SNODO-ARG-005", "a work that is no Work"


_GUARDS: dict[type, Callable[[Any], Problem | None]] = {
    spec.Claim: _claim,
    spec.ClaimNext: _claim_next,
    spec.Renew: _renew,
    spec.TransitionOp: _transition,
    spec.Authorize: _authorize,
    spec.Get: _read,
    spec.WorkerSnapshot: _read,
    spec.Create: _create,
}


def guard(op: Op) -> Problem | None:
    """The clause and situation of the first argument of ``op`` the seed's Store functions
    have no clause for (the answer is ``function_clause``), or None when every one passes."""
    check = _GUARDS.get(type(op))
    return None if check is None else check(op)


# --- what create validates (Task.validate!, Work.validate) --------------------------------------


def _payload(task: spec.Task) -> bool:
    """Does the task carry exactly its status's payload (task.ex:311-343)?"""
    result, error = task.result is not None, task.error is not None
    return {
        spec.WORKING: not result and not error,
        spec.INPUT_REQUIRED: False,  # needs input requests, which no task is created with
        spec.COMPLETED: result and not error,
        spec.FAILED: error and not result,
        spec.CANCELLED: not result and not error,
    }[task.status]


def _task(task: spec.Task) -> str | None:
    if task.status not in spec.STATUSES:
        return "an empty status" if task.status == "" else "an unknown status"
    if not (task.status_message is None or isinstance(task.status_message, str)):
        return "a status_message that is no string"
    if not (number(task.created_at) and number(task.last_updated_at)):
        return "a time that is no number"
    if task.last_updated_at < task.created_at:
        return "last_updated_at before created_at"
    for arg in ("ttl_ms", "poll_interval_ms"):
        value = getattr(task, arg)
        if value is not None and spec.count_edge(arg, value) is not None:
            return spec.count_edge(arg, value)
    if task.input_requests or not isinstance(task.input_requests, Mapping):
        return "a task created with input requests"  # no key is in use yet (task.ex:235)
    if any(v is not None and not isinstance(v, Mapping) for v in (task.result, task.error)):
        return "a result or error that is no mapping"
    if any(v is not None and not spec.json_safe(v) for v in (task.result, task.error)):
        return "a result or error that is not JSON-safe"  # task.ex validate_result_payloads!
    if not _payload(task):
        return "a payload that is not its status's"
    return None


def _work(work: spec.Work) -> str | None:
    bad = spec.text_edge("idempotency key", work.idempotency_key) or spec.text_edge(
        "work type", work.type)
    if bad is not None:
        return bad
    if not isinstance(work.input, Mapping):
        return "a work input that is no mapping"
    if not spec.json_safe(work.input):
        return "a work input that is not JSON-safe"  # work.ex:99-100
    for delay in work.retry_policy:
        if not spec.integer(delay):
            return "a retry delay that is no integer"
        if delay < 0:
            return "a negative retry delay"
        if delay > spec.MAX_RETRY_DELAY_MS:
            return f"a retry delay over {spec.MAX_RETRY_DELAY_MS}"
    return None


def task_problem(task: spec.Task, work: spec.Work) -> str | None:
    """The situation of the first thing create's validation refuses (the task's rules, then
    the work's), or None when the seed would store them."""
    if spec.text_edge("task id", task.id) is not None:  # no access for such an id is minted
        return str(spec.text_edge("task id", task.id))
    return _task(task) or _work(work)


# --- what transition validates once the authority passed (Event.validate) ---------------------

EventProblem = tuple[str, str, str]
"""(error code, clause, situation) of an event the seed's validation refuses."""

_ID, _DATA = "SNODO-ARG-006", "SNODO-ARG-007"


def _mapping(value: Any, what: str) -> str | None:
    """None for a JSON-safe mapping, else ``"<what> that is no mapping"`` or ``"... that is
    not JSON-safe"``."""
    if not isinstance(value, Mapping):
        return f"{what} that is no mapping"
    return None if spec.json_safe(value) else f"{what} that is not JSON-safe"


def _request(request: Any) -> str | None:
    """Task.valid_input_request? (task.ex:174-180): a mapping with a non-empty string
    method, JSON-safe as a whole."""
    if not isinstance(request, Mapping):
        return "an input request that is no mapping"
    method = request.get("method")
    if not isinstance(method, str):
        return "an input request without a string method"
    if method == "":
        return "an input request with an empty method"
    return None if spec.json_safe(request) else "an input request that is not JSON-safe"


def _responses(responses: Any) -> tuple[str, str] | None:
    """(clause, situation) of what valid_input_responses? refuses (event.ex:212-220): the
    whole must be JSON-safe, then every key a non-empty string and every response a
    mapping."""
    if not isinstance(responses, Mapping):
        return _DATA, "responses that are no mapping"
    if not spec.json_safe(responses):
        return _DATA, "responses that are not JSON-safe"
    if any(k == "" for k in responses):
        return _ID, "an empty response key"
    if not all(isinstance(r, Mapping) for r in responses.values()):
        return _DATA, "a response that is no mapping"
    return None


def _failure(data: Mapping[str, Any]) -> EventProblem | None:
    """validate_failure_data (event.ex:236-247): the error, then the status message."""
    bad = _mapping(data["error"], "an error")
    if bad is not None:
        return "invalid_task_error", _DATA, bad
    message = data["statusMessage"]
    if message is not None and not isinstance(message, str):
        return "invalid_status_message", _DATA, "a status message that is no string"
    return None


def _data(kind: str, data: Any) -> EventProblem | None:
    """validate_data (event.ex:171-210): each kind's fields exactly, then their values."""
    if not isinstance(data, Mapping):
        return "invalid_event_data", _DATA, "event data that is no mapping"
    fields, wanted = set(data), spec.EVENT_FIELDS[kind]
    if fields != wanted:
        return "invalid_event_data", _DATA, ("event data missing a field" if wanted - fields
                                             else "event data with an extra field")
    if kind == "input_requested":
        bad = spec.text_edge("input key", data["key"])
        if bad is not None:
            return "invalid_input_key", _ID, bad
        bad = _request(data["request"])
        return None if bad is None else ("invalid_input_request", _DATA, bad)
    if kind == "input_responses_accepted":
        found = _responses(data["responses"])
        return None if found is None else ("invalid_input_responses", *found)
    if kind == "completed":
        bad = _mapping(data["result"], "a result")
        return None if bad is None else ("invalid_task_result", _DATA, bad)
    if kind in ("retry_requested", "failed"):
        return _failure(data)
    return None


def event_refusal(event: spec.Event) -> EventProblem | None:
    """What Event.validate (event.ex:83-100) refuses in ``event``, in its order: the id, the
    kind (unsupported_event_kind, which the authority check always answers first, so the
    model never reaches it), the data; or None."""
    bad = spec.text_edge("event id", event.id)
    if bad is not None:
        return "invalid_event_id", _ID, bad
    if event.kind not in spec.EVENT_KINDS:
        return "unsupported_event_kind", _DATA, "an unsupported event kind"
    return _data(event.kind, event.data)
