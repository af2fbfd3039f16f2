"""The ledgence-tasks mutants of the page cursor's checks (LDG-LIST-006, LDG-LIST-007): a
cursor no page issued, or an issued one changed in a way the seed's ``decode_cursor``
refuses, taken as a position; or a cursor a page issued refused. Each is the correct core
with one bug, caught by its expected clause (listed among :mod:`.discovery`'s)."""

from __future__ import annotations

import json
from typing import Any

import attrs

from fencepost.adapters.ledgence_tasks.core import FILTER_FIELDS, LedgenceCore, PageCursor
from fencepost.adapters.mutants.base import Mutant
from fencepost.spec import ledgence_tasks as spec


class UnissuedCursorIsAPosition(LedgenceCore):
    """A well-formed cursor is read as a position whatever it holds: a timestamp -1 starts
    before every task (an empty page), a position outside the filters is walked from."""

    def _position_admitted(self, position: tuple[Any, ...],
                           filters: spec.TaskFilters) -> bool:
        return type(position[0]) is int and isinstance(position[1], str)


class CursorOutsideFiltersAccepted(LedgenceCore):
    """The cursor's position is checked alone, not against the filters' submission bounds."""

    def _position_admitted(self, position: tuple[Any, ...],
                           filters: spec.TaskFilters) -> bool:
        return super()._position_admitted(position, spec.TaskFilters(
            filters.state, filters.queue, None, None, filters.correlation_key))


class CursorHexCaseIgnored(LedgenceCore):
    """The cursor's hex is decoded by ``bytes.fromhex`` alone: an issued cursor in uppercase
    continues the walk (the seed takes lowercase digits only)."""

    def _cursor_bytes(self, value: str) -> bytes:
        return bytes.fromhex(value)


class CursorSpacesIgnored(LedgenceCore):
    """The cursor's hex is checked for its case only: ``bytes.fromhex`` skips whitespace, so
    an issued cursor with a space in it continues the walk."""

    def _cursor_bytes(self, value: str) -> bytes:
        return super()._cursor_bytes("".join(value.split()))


class CursorDuplicateKeysRead(LedgenceCore):
    """A cursor's JSON is read by ``json.loads``, whose last repeated key wins, and written
    back canonically before it is checked: a cursor that repeats its version continues the
    walk (the seed refuses a repeated key)."""

    def _decode_cursor(self, value: Any) -> PageCursor:
        try:
            document = json.loads(self._cursor_bytes(value).decode("utf-8"))
            value = spec.canonical_json(document).encode("utf-8").hex()
        except (TypeError, ValueError, RecursionError, spec.InvalidInput):
            pass
        return super()._decode_cursor(value)


class CursorUnknownKeysIgnored(LedgenceCore):
    """A cursor's JSON is read for its four keys, any others ignored."""

    def _cursor_keys_admitted(self, keys: set[str]) -> bool:
        return keys >= {"version", "scope", "filters", "position"}


class CursorVersionUnchecked(LedgenceCore):
    """The cursor's version is never looked at: a version 2 cursor is read as version 1."""

    def _cursor_version_admitted(self, version: Any) -> bool:
        return True


class CursorTimeOfAnyNumber(LedgenceCore):
    """A cursor's timestamp may be any number: a float is walked from."""

    def _position_admitted(self, position: tuple[Any, ...],
                           filters: spec.TaskFilters) -> bool:
        submitted_at, task_id = position
        if isinstance(submitted_at, float) and submitted_at.is_integer():
            submitted_at = int(submitted_at)
        return super()._position_admitted((submitted_at, task_id), filters)


class CursorTaskIdUnchecked(LedgenceCore):
    """A cursor's task id need only be a str: an empty one, or one holding NUL, is walked
    from."""

    def _position_admitted(self, position: tuple[Any, ...],
                           filters: spec.TaskFilters) -> bool:
        return super()._position_admitted((position[0], "t"), filters) and isinstance(
            position[1], str)


class CursorPositionTruncated(LedgenceCore):
    """A cursor's position is its first two parts: one of three parts is walked from."""

    def _cursor_position_parts(self, position: Any) -> tuple[Any, ...] | None:
        return tuple(position[:2]) if isinstance(position, list) and len(position) >= 2 else None


class CursorAtZeroIsNoCursor(LedgenceCore):
    """The cursor's position is tested for truth (``if position[0]:``, a JavaScript habit): a
    cursor at timestamp 0 starts the walk again from the first page."""

    def _page_start(self, scope: spec.Scope, query: spec.TaskListQuery
                    ) -> tuple[Any, ...] | None:
        position = super()._page_start(scope, query)
        return position if position is not None and position[0] else None


class CursorFilterKeysIgnored(LedgenceCore):
    """A cursor's filters are read for the five known keys, any other ignored."""

    def _cursor_filters(self, filters: Any) -> spec.TaskFilters | None:
        if not isinstance(filters, dict):
            return None
        return spec.TaskFilters(**{name: filters.get(name) for name in FILTER_FIELDS})


class CursorScopeTruncated(LedgenceCore):
    """A cursor's scope is its first two parts: a scope of three parts is read."""

    def _cursor_scope(self, scope: Any) -> spec.Scope | None:
        return spec.Scope(*scope[:2]) if isinstance(scope, list) and len(scope) >= 2 else None


class CursorVersionDefaulted(LedgenceCore):
    """A cursor lacking its version is read as version 1 (the seed's ``Cursor`` has no default
    for it: a missing field is refused)."""

    def _cursor_from_document(self, document: Any) -> PageCursor:
        if isinstance(document, dict) and "version" not in document:
            document = {**document, "version": 1}
        return super()._cursor_from_document(document)


class CursorAtFromBoundRefused(LedgenceCore):
    """A cursor's position must lie after submitted_from, not at it: the cursor a page ending
    on a task submitted at the bound issued is refused."""

    def _position_admitted(self, position: tuple[Any, ...], filters: spec.TaskFilters) -> bool:
        submitted_at = position[0]
        if filters.submitted_from is not None and submitted_at == filters.submitted_from:
            return False
        return super()._position_admitted(position, filters)


class CursorBelowUntilRefused(LedgenceCore):
    """The upper bound is read the wrong way round for a cursor: a position below
    submitted_until is refused, so no walk bounded above goes past its first page."""

    def _position_admitted(self, position: tuple[Any, ...], filters: spec.TaskFilters) -> bool:
        until = filters.submitted_until
        if until is not None and position[0] < until:
            return False
        return super()._position_admitted(position, filters)


class CursorPastUntilAccepted(LedgenceCore):
    """Only a cursor at submitted_until itself is refused: one past the upper bound is
    walked from (the seed refuses any position at or after it)."""

    def _position_admitted(self, position: tuple[Any, ...], filters: spec.TaskFilters) -> bool:
        until = filters.submitted_until
        if until is not None and type(position[0]) is int and position[0] > until:
            filters = attrs.evolve(filters, submitted_until=None)
        return super()._position_admitted(position, filters)


class CursorPastMaxTimestamp(LedgenceCore):
    """A cursor's timestamp is checked against 0 only: one past MAX_TIMESTAMP_MS is walked
    from (the seed refuses it)."""

    def _position_admitted(self, position: tuple[Any, ...], filters: spec.TaskFilters) -> bool:
        if type(position[0]) is int and position[0] > spec.MAX_TIMESTAMP_MS:
            position = (spec.MAX_TIMESTAMP_MS, *position[1:])
        return super()._position_admitted(position, filters)


class CursorAtZeroRefused(LedgenceCore):
    """A cursor's timestamp must lie above 0 (``0 <`` written for ``0 <=``): the cursor of a
    page ending on a task submitted at timestamp 0 is refused, its own included."""

    def _position_admitted(self, position: tuple[Any, ...], filters: spec.TaskFilters) -> bool:
        return position[0] != 0 and super()._position_admitted(position, filters)


class CursorAtMaxTimestampRefused(LedgenceCore):
    """A cursor's timestamp must lie below MAX_TIMESTAMP_MS (``<`` written for ``<=``): the
    cursor of a page ending on a task submitted at MAX_TIMESTAMP_MS is refused."""

    def _position_admitted(self, position: tuple[Any, ...], filters: spec.TaskFilters) -> bool:
        return (position[0] != spec.MAX_TIMESTAMP_MS
                and super()._position_admitted(position, filters))


class CursorQueryUnchecked(LedgenceCore):
    """The filters a cursor decodes to are compared with the call's, never validated: a
    bound written 1000.0 equals the call's 1000 and continues the walk."""

    def _cursor_query_valid(self, cursor: PageCursor) -> bool:
        return True


CURSOR_MUTANTS: tuple[Mutant, ...] = (
    Mutant("unissued_cursor_is_a_position", "a well-formed cursor no page issued (timestamp "
           "-1) answers an empty page", "LDG-LIST-007", UnissuedCursorIsAPosition),
    Mutant("cursor_outside_filters_accepted", "a cursor whose position lies outside the "
           "submission bounds is walked from", "LDG-LIST-007", CursorOutsideFiltersAccepted),
    Mutant("cursor_hex_case_ignored", "an issued cursor in uppercase continues the walk",
           "LDG-LIST-007", CursorHexCaseIgnored),
    Mutant("cursor_spaces_ignored", "an issued cursor with a space in its hex continues the "
           "walk", "LDG-LIST-007", CursorSpacesIgnored),
    Mutant("cursor_duplicate_keys_read", "an issued cursor with its version twice continues "
           "the walk", "LDG-LIST-007", CursorDuplicateKeysRead),
    Mutant("cursor_unknown_keys_ignored", "a cursor with a key no cursor has continues the "
           "walk", "LDG-LIST-007", CursorUnknownKeysIgnored),
    Mutant("cursor_version_unchecked", "a cursor of version 2 continues the walk",
           "LDG-LIST-007", CursorVersionUnchecked),
    Mutant("cursor_time_of_any_number", "a cursor whose time is a float continues the walk",
           "LDG-LIST-007", CursorTimeOfAnyNumber),
    Mutant("cursor_task_id_unchecked", "a cursor whose task id is empty or holds NUL "
           "continues the walk", "LDG-LIST-007", CursorTaskIdUnchecked),
    Mutant("cursor_position_truncated", "a cursor whose position has a third part continues "
           "the walk", "LDG-LIST-007", CursorPositionTruncated),
    Mutant("cursor_at_zero_is_no_cursor", "a cursor at timestamp 0 starts again from the "
           "first page", "LDG-LIST-006", CursorAtZeroIsNoCursor),
    Mutant("cursor_filter_keys_ignored", "a cursor whose filters have a key no filters have "
           "continues the walk", "LDG-LIST-007", CursorFilterKeysIgnored),
    Mutant("cursor_scope_truncated", "a cursor whose scope has three parts continues the "
           "walk", "LDG-LIST-007", CursorScopeTruncated),
    Mutant("cursor_query_unchecked", "a cursor whose filter bound is a float equal to the "
           "call's continues the walk", "LDG-LIST-007", CursorQueryUnchecked),
    Mutant("cursor_version_defaulted", "a cursor lacking its version continues the walk",
           "LDG-LIST-007", CursorVersionDefaulted),
    Mutant("cursor_at_from_bound_refused", "the cursor of a page ending at submitted_from is "
           "refused", "LDG-LIST-006", CursorAtFromBoundRefused),
    Mutant("cursor_below_until_refused", "a cursor below submitted_until is refused",
           "LDG-LIST-006", CursorBelowUntilRefused),
    Mutant("cursor_past_until_accepted", "a cursor past submitted_until is walked from",
           "LDG-LIST-007", CursorPastUntilAccepted),
    Mutant("cursor_past_max_timestamp", "a cursor past MAX_TIMESTAMP_MS is walked from",
           "LDG-LIST-007", CursorPastMaxTimestamp),
    Mutant("cursor_at_zero_refused", "the cursor of a page ending at timestamp 0 is refused",
           "LDG-LIST-006", CursorAtZeroRefused),
    Mutant("cursor_at_max_timestamp_refused", "the cursor of a page ending at "
           "MAX_TIMESTAMP_MS is refused", "LDG-LIST-006", CursorAtMaxTimestampRefused),
)
