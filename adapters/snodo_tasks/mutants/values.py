"""The snodo-tasks mutants at the value boundary: each takes one kind of event data
the seed's Event.validate refuses (SNODO-ARG-007) or work its Work.validate refuses
(SNODO-ARG-005), or keeps stored values through lossy JSON (SNODO-VALUE-001). Each overrides
one hook of the correct core, as in :mod:`fencepost.adapters.snodo_tasks.mutants`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.adapters.mutants.base import Mutant, lossy_json
from fencepost.adapters.snodo_tasks.core import TasksCore
from fencepost.adapters.snodo_tasks.records import Aggregate, Txn
from fencepost.adapters.snodo_tasks.reducer import Reduced
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.errors import ContractError


class _Letting(TasksCore):
    """A store whose ``_event_problem`` lets through every event the seed refuses with the
    code ``letting``."""

    letting = ""

    def _event_problem(self, event: spec.Event) -> ContractError | None:
        problem = super()._event_problem(event)
        return None if problem is not None and problem.code == self.letting else problem


class RequestWithoutMethodOpened(_Letting):
    """input_requested takes any request: one without a method, or not JSON-safe, opens."""

    letting = "invalid_input_request"


class ResponsesOfAnyShapeAccepted(TasksCore):
    """Only the response keys are checked: a response that is no mapping, or not JSON-safe,
    is accepted."""

    def _event_problem(self, event: spec.Event) -> ContractError | None:
        problem = super()._event_problem(event)
        data = event.data if isinstance(event.data, Mapping) else {}
        responses = data.get("responses")
        if (problem is not None and problem.code == "invalid_input_responses"
                and isinstance(responses, Mapping)
                and all(isinstance(k, str) and k for k in responses)):
            return None
        return problem


class EventDataOfAnyShapeApplied(TasksCore):
    """Each kind reads the fields it needs from any mapping: data with a field missing or
    extra is applied (a missing one read as None)."""

    def _event_problem(self, event: spec.Event) -> ContractError | None:
        problem = super()._event_problem(event)
        if problem is not None and problem.code == "invalid_event_data" and \
                isinstance(event.data, Mapping):
            return None
        return problem


class ResultOfAnyValueStored(_Letting):
    """completed stores any result, a string or a mapping with a non-string key."""

    letting = "invalid_task_result"


class ErrorOfAnyValueStored(TasksCore):
    """failed and retry_requested store any error; the status message beside it is still
    checked (the seed checks it after the error)."""

    def _event_problem(self, event: spec.Event) -> ContractError | None:
        problem = super()._event_problem(event)
        if problem is not None and problem.code == "invalid_task_error":
            return super()._event_problem(attrs.evolve(event, data={**event.data, "error": {}}))
        return problem


class StatusMessageOfAnyValueStored(_Letting):
    """failed and retry_requested store a status message that is no string."""

    letting = "invalid_status_message"


class EventValidatedBeforeAuthority(TasksCore):
    """transition validates the event before its authority (the seed validates after,
    memory.ex:318-319): an empty kind from a get-access answers unsupported_event_kind, not
    unauthorized_action."""

    def _check_authority(self, aggregate: Aggregate, event: spec.Event, authority: Any,
                         now: int) -> None:
        problem = self._event_problem(event)
        if problem is not None:
            raise problem
        super()._check_authority(aggregate, event, authority, now)


class WorkInputOfAnyValueStored(TasksCore):
    """create checks only that work.input is a mapping: one that is not JSON-safe (a key
    that is no string) is stored."""

    def _task_problem(self, task: spec.Task, work: spec.Work) -> str | None:
        if isinstance(work.input, Mapping) and not spec.json_safe(work.input):
            work = attrs.evolve(work, input={})
        return super()._task_problem(task, work)




class EventDataThroughLossyJson(TasksCore):
    """Event data kept through JSON as JavaScript reads it: results, errors, requests and
    responses lose 1.0 (now 1), -0.0 and every digit past 2**53."""

    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        lossy = attrs.evolve(event, data=lossy_json(event.data))
        return super()._reduce(snapshot, lossy, committed_at)


class WorkInputThroughLossyJson(TasksCore):
    """create keeps work.input through JSON as JavaScript reads it."""

    def _insert_task(self, txn: Txn, task: spec.Task, work: spec.Work,
                     scope: str | None) -> spec.Snapshot:
        lossy = attrs.evolve(work, input=lossy_json(work.input))
        return super()._insert_task(txn, task, lossy, scope)


def _m(name: str, bug: str, clause: str, mixin: type) -> Mutant:
    return Mutant(name, bug, clause, mixin)


MUTANTS = (
    _m("request_without_method_opened", "input_requested opens a request without a method "
       "or not JSON-safe (invalid_input_request)", "SNODO-ARG-007", RequestWithoutMethodOpened),
    _m("responses_of_any_shape_accepted", "input_responses_accepted takes a response that is "
       "no mapping, or responses not JSON-safe (invalid_input_responses)", "SNODO-ARG-007",
       ResponsesOfAnyShapeAccepted),
    _m("event_data_of_any_shape_applied", "an event whose data has a field missing or extra "
       "is applied (invalid_event_data)", "SNODO-ARG-007", EventDataOfAnyShapeApplied),
    _m("result_of_any_value_stored", "completed stores a result that is no JSON-safe mapping "
       "(invalid_task_result)", "SNODO-ARG-007", ResultOfAnyValueStored),
    _m("error_of_any_value_stored", "failed and retry_requested store an error that is no "
       "JSON-safe mapping (invalid_task_error)", "SNODO-ARG-007", ErrorOfAnyValueStored),
    _m("status_message_of_any_value_stored", "failed and retry_requested store a status "
       "message that is no string (invalid_status_message)", "SNODO-ARG-007",
       StatusMessageOfAnyValueStored),
    _m("event_validated_before_authority", "transition validates the event before its "
       "authority: a kind no authority may send answers unsupported_event_kind",
       "SNODO-AUTH-001", EventValidatedBeforeAuthority),
    _m("work_input_of_any_value_stored", "create stores a work input that is not JSON-safe "
       "(invalid_task)", "SNODO-ARG-005", WorkInputOfAnyValueStored),
    _m("event_data_through_lossy_json", "event data stored through JSON as JavaScript reads "
       "it: 1.0 comes back 1, -0.0 as 0, 2**53 + 1 as 2**53", "SNODO-VALUE-001",
       EventDataThroughLossyJson),
    _m("work_input_through_lossy_json", "work input stored through JSON as JavaScript reads "
       "it", "SNODO-VALUE-001", WorkInputThroughLossyJson),
)
