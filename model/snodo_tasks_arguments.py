"""The snodo-tasks model's answers to arguments at their edges, as the seed gives them.

Two layers, as in the seed:

- the Store functions' guards (``store.ex``): a call whose arguments no function clause takes
  raises FunctionClauseError before any store is reached. :func:`guard` names the clause and
  the situation (the answer is ``function_clause``, before anything else is checked);
- the stores' own validation of what they persist: create runs the task's and the work's
  (``invalid_task``, :func:`task_problem`), transition the event's once its authority passed
  (``invalid_event_id``, ``invalid_input_key``, ``invalid_input_responses``,
  :func:`event_problem`).

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


def event_problem(event: spec.Event) -> tuple[str, str] | None:
    """(error code, situation) of what Event.validate refuses in ``event``, or None."""
    bad = spec.text_edge("event id", event.id)
    if bad is not None:
        return "invalid_event_id", bad
    data = event.data
    if event.kind == "input_requested":
        bad = spec.text_edge("input key", data.get("key"))
        if bad is not None:
            return "invalid_input_key", bad
    elif event.kind == "input_responses_accepted":
        responses = data.get("responses")
        if isinstance(responses, Mapping) and any(
                spec.text_edge("response key", k) is not None for k in responses):
            return "invalid_input_responses", "an empty response key"
    return None
