"""The snodo event reducer: what one event does to a snapshot, as a pure function.

``reduce_event`` answers ``(new_snapshot, effects)``, or ``(None, effects)`` when the event
leaves the task unchanged. Revision and ``last_updated_at`` are the caller's business (only an
applied event moves them), so the reducer never sees the clock except as ``committed_at``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.spec import snodo_tasks as spec

Reduced = tuple[spec.Snapshot | None, Mapping[str, Any]]


def reduce_event(snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
    """Apply ``event`` to ``snapshot`` (see the seed's reducer; order of cases matters)."""
    if snapshot.task.status in spec.TERMINAL:
        return None, {}
    reducer = _REDUCERS[event.kind]
    return reducer(snapshot, event.data, committed_at)


def _input_requested(snap: spec.Snapshot, data: Mapping[str, Any], _at: float) -> Reduced:
    key: Any = data.get("key")
    request: Any = data.get("request")
    if key in snap.input_history:
        raise spec.DuplicateInputKey(f"input key {key!r} was requested before")
    task = attrs.evolve(
        snap.task,
        status=spec.INPUT_REQUIRED,
        input_requests={**snap.task.input_requests, key: request},
    )
    history = {**snap.input_history, key: request}
    return attrs.evolve(snap, task=task, input_history=history), {}


def _input_responses_accepted(
    snap: spec.Snapshot, data: Mapping[str, Any], _at: float
) -> Reduced:
    responses: Mapping[str, Any] = data.get("responses") or {}
    outstanding = snap.task.input_requests
    matched = {k: v for k, v in responses.items() if k in outstanding}
    if not matched:
        return None, {"accepted_input_responses": {}}
    remaining = {k: v for k, v in outstanding.items() if k not in matched}
    task = attrs.evolve(
        snap.task,
        status=spec.INPUT_REQUIRED if remaining else spec.WORKING,
        input_requests=remaining,
    )
    accepted = {**snap.accepted_input_responses, **matched}
    new = attrs.evolve(snap, task=task, accepted_input_responses=accepted)
    return new, {"accepted_input_responses": dict(matched)}


def _retry_requested(snap: spec.Snapshot, data: Mapping[str, Any], at: float) -> Reduced:
    error, message = data.get("error"), data.get("statusMessage")
    failure = {"error": error, "statusMessage": message}
    delays = tuple(snap.work.retry_policy) if snap.work is not None else ()
    if snap.retry_count < len(delays):
        delay = delays[snap.retry_count]
        count = snap.retry_count + 1
        retry_at = at + delay
        new = attrs.evolve(snap, retry_count=count, retry_at=retry_at, last_failure=failure)
        retry = {"disposition": "scheduled", "retry_at": retry_at, "delay_ms": delay,
                 "retry_count": count}
        return new, {"retry": retry}
    task = attrs.evolve(
        snap.task,
        status=spec.FAILED,
        error=error,
        status_message=message,
        result=None,
        input_requests={},
    )
    new = attrs.evolve(snap, task=task, retry_at=None, last_failure=failure)
    retry = {"disposition": "exhausted", "retry_at": None, "delay_ms": None,
             "retry_count": snap.retry_count}
    return new, {"retry": retry}


def _completed(snap: spec.Snapshot, data: Mapping[str, Any], _at: float) -> Reduced:
    return _terminal(snap, spec.COMPLETED, result=data.get("result"), error=None, message=None)


def _failed(snap: spec.Snapshot, data: Mapping[str, Any], _at: float) -> Reduced:
    return _terminal(snap, spec.FAILED, result=None, error=data.get("error"),
                     message=data.get("statusMessage"))


def _cancelled(snap: spec.Snapshot, _data: Mapping[str, Any], _at: float) -> Reduced:
    return _terminal(snap, spec.CANCELLED, result=None, error=None, message=spec.CANCEL_MESSAGE)


def _terminal(snap: spec.Snapshot, status: str, result: Any, error: Any, message: Any) -> Reduced:
    task = attrs.evolve(
        snap.task,
        status=status,
        status_message=message,
        result=result,
        error=error,
        input_requests={},
    )
    return attrs.evolve(snap, task=task, retry_at=None), {}


_REDUCERS = {
    "input_requested": _input_requested,
    "input_responses_accepted": _input_responses_accepted,
    "retry_requested": _retry_requested,
    "completed": _completed,
    "failed": _failed,
    "cancelled": _cancelled,
}
