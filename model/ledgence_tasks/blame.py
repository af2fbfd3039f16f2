"""The blame rules of ``ledgence-tasks``: which clause a differing answer breaks.

The model's step names the clause that decided its own answer; when the store answers
otherwise, that clause is not always the one the store broke. :func:`answer_clause` (the
model's ``answer_clause``) reads the difference itself and names the broken rule where it tells:
a listing's order or filters (``LDG-LIST-*``), an expiry boundary the store judged live
(``LDG-LIVE-001``, or the operation's own rule for a lost attempt), a new acquisition of
another task (``LDG-ACQ-001``), a history with gaps or repeats (``LDG-HISTORY-*``,
``LDG-RENEW-007``), an attempt read back wrong in one field (``LDG-ACQ-002``,
``LDG-SETTLE-001``). They read only the spec's values: no model record is needed.
"""

from __future__ import annotations

from typing import Any

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Opaque
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Ok, Outcome
from fencepost.spec.shapes import answer_hints, holds

from ..base import field_diff


def _claimed_task(outcome: Outcome) -> Any:
    """The task id an acquisition answer assigns, or None."""
    reply = getattr(outcome, "value", None)
    reply = getattr(reply, "reply", reply)
    assignment = getattr(reply, "assignment", None)
    return getattr(getattr(assignment, "event", None), "task_id", None)


_ANSWERS = answer_hints(spec)
"""What each operation answers (the protocol's declared types)."""

_FRESH_ACQUISITION = frozenset({"LDG-ACQ-002", "LDG-ACQ-003", "LDG-ACQ-013", "LDG-ACQ-014",
                                "LDG-ACQ-016", "LDG-FINISH-007"})
# What each operation answers when it judges an attempt not live (the equality rule is at
# stake only when the store judged it live at the exact boundary).
_NOT_LIVE_CLAUSE = {spec.Acquire: "LDG-ACQ-011", spec.ProbeAcquisition: "LDG-ACQ-011",
                    spec.Renew: "LDG-RENEW-002", spec.Settle: "LDG-SETTLE-002",
                    spec.ConfirmQuiescence: "LDG-QUIESCE-004", spec.Cancel: "LDG-CANCEL-004",
                    spec.ExpireBatch: "LDG-RECOVER-001"}


def _reply(outcome: Outcome) -> Any:
    value = getattr(outcome, "value", None)
    return getattr(value, "reply", value) if isinstance(value, spec.ProbeCompleted) else value


def _judged_live(op: Op, expected: Outcome, actual: Outcome) -> bool:
    """Did the store treat the attempt at the boundary as still live?"""
    if isinstance(op, spec.Acquire | spec.ProbeAcquisition):
        return isinstance(_reply(actual), spec.AcquireAssigned)
    if isinstance(op, spec.Cancel):
        return isinstance(actual, Ok) and actual.value == "active"
    if isinstance(op, spec.ExpireBatch):
        mine, theirs = getattr(expected, "value", None), getattr(actual, "value", None)
        return isinstance(theirs, spec.RecoveryProgress) and isinstance(
            mine, spec.RecoveryProgress) and theirs.expired < mine.expired
    return isinstance(actual, Ok)


def _fresh_claim_for(op: Any, outcome: Outcome) -> bool:
    """Is ``outcome`` a new claim for the op's own consumer (not a replay of another
    consumer's assignment, not an OwnershipLost reply)?"""
    reply = _reply(outcome)
    if not isinstance(reply, spec.AcquireAssigned):
        return False
    kind = getattr(getattr(outcome, "value", None), "kind", "claimed")
    owner = reply.assignment.lease.owner
    command = op.command
    return kind == "claimed" and owner.consumer_id == command.consumer_id and (
        owner.worker_session_id == command.worker_session_id)


def _page_clause(op: spec.ListTasks, expected: Outcome, actual: Outcome) -> str | None:
    """What a differing page shows: a task of another scope (LIST-010), an item outside the
    filters (LIST-002, LIST-003 for the empty key), the right tasks in the wrong order
    (LIST-001), the right items with a wrong next_cursor presence (LIST-005)."""
    mine, theirs = getattr(expected, "value", None), getattr(actual, "value", None)
    if not isinstance(theirs, spec.TaskPage) or not isinstance(mine, spec.TaskPage):
        return None
    items = [i for i in theirs.items if isinstance(i, spec.TaskStatus)]
    if any(i.scope != op.scope for i in items):
        return "LDG-LIST-010"
    filters = getattr(op.query, "filters", spec.TaskFilters())
    if any(not spec.matches_filters(i, filters) for i in items):
        return "LDG-LIST-003" if filters.correlation_key == "" else "LDG-LIST-002"
    ids = [getattr(i, "task_id", None) for i in theirs.items]
    expected_ids = [getattr(i, "task_id", None) for i in mine.items]
    if ids != expected_ids and sorted(map(str, ids)) == sorted(map(str, expected_ids)):
        return "LDG-LIST-001"
    if ids == expected_ids and (mine.next_cursor is None) != (theirs.next_cursor is None):
        return "LDG-LIST-005"
    return None


def _attempt_clause(expected: Outcome, actual: Outcome) -> str | None:
    """What an attempt read back with one wrong field shows: a quiescence other than
    unconfirmed before any settlement breaks the claim's rule (LDG-ACQ-002); a missing
    execution_may_have_started that the accepted settlement owes breaks LDG-SETTLE-001."""
    mine, theirs = getattr(expected, "value", None), getattr(actual, "value", None)
    if not isinstance(mine, spec.AttemptSnapshot) or not isinstance(theirs,
                                                                     spec.AttemptSnapshot):
        return None
    fields = field_diff(mine, theirs)
    if fields == ("quiescence",) and mine.settlement is None:
        return "LDG-ACQ-002"
    if fields == ("execution_may_have_started",) and mine.settlement is not None and (
            mine.execution_may_have_started and not theirs.execution_may_have_started):
        report = mine.settlement.report
        if isinstance(report, spec.ExecutionReport) or getattr(
                report, "execution_may_have_started", False):
            return "LDG-SETTLE-001"
    return None


def answer_clause(op: Op, clause: str, expected: Outcome, actual: Outcome) -> str | None:
    """The rule a differing answer breaks, where the difference itself tells (``clause`` is
    the model's step clause; empty for a read-back).

    - A recovery scan answering other counts breaks the scan's rule the model named.
    - At an exact expiry boundary the equality rule (LIVE-001) is broken only if the store
      treated the attempt as live; a store that saw it expired but answered in the wrong form
      breaks the operation's own rule for a lost attempt.
    - A new acquisition (not a replay, not busy) that claims another task than the model, or
      claims where the model finds none eligible, or none where one is: the eligibility and
      order rule, LDG-ACQ-001.
    - A history read with gaps or repeats in its sequences, or not starting right after
      the sequence asked (a page from event 1 after 2^63: an after cast to an i64):
      HISTORY-001; a repeated
      `dispatch_authorized`: RENEW-007 (dispatch is authorized once); another repeated event:
      HISTORY-001; any other wrong history: HISTORY-002 (the events a transition writes).
    - An attempt read back wrong in its quiescence alone before any settlement: ACQ-002; in
      an execution_may_have_started its accepted settlement owes: SETTLE-001.

    An answer not of the shape the protocol declares (``spec.shapes``) tells nothing more: its
    fields are not read, and the step's own clause is broken."""
    if isinstance(actual, Ok) and not holds(_ANSWERS.get(op.name, Any), actual.value):
        return None  # an answer of another shape than declared: the step's own rule
    if isinstance(op, spec.ListTasks):
        return _page_clause(op, expected, actual)
    if clause == "LDG-LIVE-001" and not _judged_live(op, expected, actual):
        return _NOT_LIVE_CLAUSE.get(type(op))
    if isinstance(op, spec.ExpireBatch) and isinstance(actual, Ok) and isinstance(
            actual.value, spec.RecoveryProgress):
        return clause  # other counts: the scan's own rule (due, bounded, once, boundary)
    if isinstance(op, spec.Acquire | spec.ProbeAcquisition):
        if clause not in _FRESH_ACQUISITION or not isinstance(actual, Ok):
            return None
        mine, theirs = _claimed_task(expected), _claimed_task(actual)
        if isinstance(mine, Opaque) or mine == theirs:
            return None
        if theirs is None and not isinstance(_reply(actual), spec.AcquireOwnershipLost):
            return "LDG-ACQ-001"  # Empty or Pending where a task was eligible
        return "LDG-ACQ-001" if _fresh_claim_for(op, actual) else None
    if isinstance(op, spec.InspectAttempt):
        return _attempt_clause(expected, actual)
    if not isinstance(op, spec.History) or not isinstance(actual, Ok):
        return None
    if not isinstance(expected, Ok):
        return None  # a page where the model refuses: the refusal's own rule was broken
    records = actual.value if isinstance(actual.value, list) else []
    if len(records) > 100:
        return "LDG-HISTORY-001"  # a page holds at most 100 events
    sequences = [getattr(r, "sequence", None) for r in records]
    after = op.after_sequence
    first = after + 1 if type(after) is int and after >= 0 else 1
    if sequences != list(range(first, first + len(sequences))):
        return "LDG-HISTORY-001"  # not the events right after `after`, in order, no gaps
    reasons = [getattr(getattr(r, "event", None), "reason", None) for r in records]
    if len(records) > len(getattr(expected, "value", [])):
        if reasons.count("dispatch_authorized") > 1:
            return "LDG-RENEW-007"
        for a, b in zip(reasons, reasons[1:], strict=False):
            if a == b:
                return "LDG-HISTORY-001"
    return "LDG-HISTORY-002"
