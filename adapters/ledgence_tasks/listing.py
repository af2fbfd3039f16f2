"""Paginated discovery: ``list_tasks``, keyset pages behind a stateless cursor.

A page lists the scope's tasks within the filters, newest first by (submitted_at, task_id), in
one consistent read; its ``next_cursor`` is the canonical JSON of the walk's scope, filters
and position, in hex, so that any store object of the namespace continues the walk."""

from __future__ import annotations

import json
from typing import Any

from fencepost.spec import ledgence_tasks as spec

from .base import LedgenceBase
from .records import (
    CURSOR_VERSION,
    FILTER_FIELDS,
    PAGE_ORDER_FIELDS,
    PageCursor,
    PageQuery,
    TaskRecord,
)
from .storage import Txn


class Listing(LedgenceBase):
    """The ``list_tasks`` operation of :class:`~.core.LedgenceCore`."""

    def list_tasks(self, scope: spec.Scope, query: spec.TaskListQuery) -> spec.TaskPage:
        """One page of the scope's tasks, newest first, in one consistent read (writes
        nothing): validate, decode the cursor, read ``limit + 1`` rows after its position."""
        self._check_list_query(scope, query)
        position = self._page_start(scope, query)
        with self._transaction() as txn:
            rows = self._page_rows(txn, self._page_query(scope, query.filters, position,
                                                         query.limit))
            return self._page(rows, scope, query.filters, query.limit, position)

    # -- helpers the mutants bend -------------------------------------------------------

    def _check_list_query(self, scope: spec.Scope, query: spec.TaskListQuery) -> None:
        spec.validate_list_query(scope, query)

    def _page_order(self) -> tuple[str, ...]:
        """LDG-LIST-001: pages list in descending (submitted_at, task_id), task ids bytewise
        (the task id breaks submission-time ties)."""
        return PAGE_ORDER_FIELDS

    def _page_fetch(self, limit: int) -> int:
        """How many rows a page reads: one more than it shows, to learn whether more exist."""
        return limit + 1

    def _page_query(self, scope: spec.Scope, filters: spec.TaskFilters,
                    position: tuple[Any, ...] | None, limit: int) -> PageQuery:
        """LDG-LIST-002/006/010: the scope's tasks within the filters, strictly after the
        whole position (ties on submitted_at continue by task id), keyset only (no offset),
        :meth:`_page_fetch` rows in :meth:`_page_order`."""
        return PageQuery(scope=scope, filters=filters, order=self._page_order(), after=position,
                         limit=self._page_fetch(limit))

    def _page_rows(self, txn: Txn, query: PageQuery) -> list[TaskRecord]:
        """The rows of one page: one storage read (one snapshot)."""
        return txn.list_page(query)

    def _has_more(self, rows: list[TaskRecord], limit: int) -> bool:
        """LDG-LIST-005: a next cursor only when more than ``limit`` rows were read (an exact
        last page has none)."""
        return len(rows) > limit

    def _cursor_position(self, record: TaskRecord) -> tuple[Any, ...]:
        """Where a page ends: its last item's (submitted_at, task_id)."""
        return (record.snapshot.submitted_at, record.task_id)

    def _next_position(self, shown: list[TaskRecord],
                       position: tuple[Any, ...] | None) -> tuple[Any, ...]:
        """The position the next page starts after (``position``: where this page started,
        ``None`` for a first page): the last shown item's :meth:`_cursor_position`."""
        return self._cursor_position(shown[-1])

    def _cursor_document(self, cursor: PageCursor) -> dict[str, Any]:
        """The JSON a cursor encodes: version, scope, all five filters (nulls included) and
        the position; never the limit."""
        return {
            "version": CURSOR_VERSION,
            "scope": [cursor.scope.tenant_id, cursor.scope.namespace],
            "filters": {name: getattr(cursor.filters, name) for name in FILTER_FIELDS},
            "position": list(cursor.position),
        }

    def _encode_cursor(self, cursor: PageCursor) -> str:
        """LDG-LIST-007: a stateless cursor: lowercase hex of the UTF-8 canonical JSON
        (sorted keys, no spaces) of :meth:`_cursor_document`. Any store object of the
        namespace, reopened or not, decodes it."""
        return spec.canonical_json(self._cursor_document(cursor)).encode("utf-8").hex()

    def _decode_cursor(self, value: Any) -> PageCursor:
        """LDG-LIST-007: the cursor :meth:`_encode_cursor` wrote, else invalid_input: not a
        str, not lowercase hex of UTF-8, not exactly the canonical JSON this store writes, or
        not its shape (version 1, a valid scope and filters, a position of a timestamp and a
        task id)."""
        if not isinstance(value, str):
            raise spec.InvalidInput("a page cursor is a str this store issued as next_cursor")
        try:
            text = self._cursor_bytes(value).decode("utf-8")
            document = json.loads(text)
            canonical = spec.canonical_json(document)
        except (ValueError, RecursionError, spec.InvalidInput):  # incl. UnicodeDecodeError
            raise spec.InvalidInput("the page cursor does not decode") from None
        if canonical != text:
            raise spec.InvalidInput("the page cursor is not one this store issued")
        return self._cursor_from_document(document)

    def _cursor_bytes(self, value: str) -> bytes:
        """LDG-LIST-007: the bytes of lowercase hex digits, two per byte (the seed's
        ``decode_cursor`` takes no other digit); else ValueError."""
        raw = bytes.fromhex(value)
        if raw.hex() != value:  # fromhex also takes uppercase and spaces
            raise ValueError("a cursor is lowercase hex")
        return raw

    def _cursor_keys_admitted(self, keys: set[str]) -> bool:
        """LDG-LIST-007: a cursor's JSON holds its four keys and no other (the seed's
        ``Cursor`` denies unknown fields)."""
        return keys == {"version", "scope", "filters", "position"}

    def _cursor_version_admitted(self, version: Any) -> bool:
        """LDG-LIST-007: the one cursor version there is."""
        return type(version) is int and version == CURSOR_VERSION

    def _cursor_position_parts(self, position: Any) -> tuple[Any, ...] | None:
        """LDG-LIST-007: a position of exactly two parts, else ``None``."""
        return tuple(position) if isinstance(position, list) and len(position) == 2 else None

    def _cursor_from_document(self, document: Any) -> PageCursor:
        """A decoded cursor's JSON checked field by field (else invalid_input)."""
        def refuse() -> spec.InvalidInput:
            return spec.InvalidInput("the page cursor is not one this store issued")

        if not isinstance(document, dict) or not self._cursor_keys_admitted(set(document)):
            raise refuse()
        if not self._cursor_version_admitted(document["version"]):
            raise refuse()
        scope = self._cursor_scope(document["scope"])
        filters = self._cursor_filters(document["filters"])
        position = self._cursor_position_parts(document["position"])
        if scope is None or filters is None or position is None:
            raise refuse()
        decoded = PageCursor(scope, filters, position)
        if not self._cursor_query_valid(decoded):
            raise refuse()
        if not self._position_admitted(decoded.position, decoded.filters):
            raise refuse()
        return decoded

    def _cursor_scope(self, scope: Any) -> spec.Scope | None:
        """LDG-LIST-007: a scope of exactly its two parts (the seed's ``Scope``), else
        ``None``."""
        return spec.Scope(*scope) if isinstance(scope, list) and len(scope) == 2 else None

    def _cursor_filters(self, filters: Any) -> spec.TaskFilters | None:
        """LDG-LIST-007: filters of exactly the five keys (the seed's ``TaskFilters`` denies
        unknown fields), else ``None``."""
        if not isinstance(filters, dict) or set(filters) != set(FILTER_FIELDS):
            return None
        return spec.TaskFilters(**filters)

    def _cursor_query_valid(self, cursor: PageCursor) -> bool:
        """LDG-LIST-007: the decoded scope and filters are ones a query may have (a bound that
        is no integer is refused: the seed's ``Timestamp``; Python would find 1000.0 equal to
        the call's 1000)."""
        try:
            spec.validate_list_query(cursor.scope, spec.TaskListQuery(cursor.filters))
        except spec.InvalidInput:
            return False
        return True

    def _position_admitted(self, position: tuple[Any, ...], filters: spec.TaskFilters) -> bool:
        """LDG-LIST-007: a position the seed's cursor admits (``TaskPosition::validate``): a
        timestamp in 0..=MAX_TIMESTAMP_MS within the filters' submission bounds (from
        inclusive, until exclusive) and a task id that is valid text. A well-formed cursor no
        page could have issued (a timestamp -1, a position outside the bounds) is refused, not
        read as a position before every task."""
        submitted_at, task_id = position
        if type(submitted_at) is not int or not 0 <= submitted_at <= spec.MAX_TIMESTAMP_MS:
            return False
        if filters.submitted_from is not None and submitted_at < filters.submitted_from:
            return False
        if filters.submitted_until is not None and submitted_at >= filters.submitted_until:
            return False
        try:
            spec.validate_text(task_id, "task_id")
        except spec.InvalidInput:
            return False
        return True

    def _cursor_fits(self, cursor: PageCursor, scope: spec.Scope,
                     filters: spec.TaskFilters) -> bool:
        """LDG-LIST-007: a cursor continues only the walk of its own scope and filters."""
        return cursor.scope == scope and cursor.filters == filters

    def _page_start(self, scope: spec.Scope, query: spec.TaskListQuery
                    ) -> tuple[Any, ...] | None:
        """The position a page starts strictly after: ``None`` without a cursor, else the
        cursor's position when it decodes and fits this call's scope and filters (else
        invalid_input)."""
        if query.cursor is None:
            return None
        cursor = self._decode_cursor(query.cursor)
        if not self._cursor_fits(cursor, scope, query.filters):
            raise spec.InvalidInput(
                "the page cursor belongs to another scope or other filters; start again "
                "without a cursor")
        return cursor.position

    def _page(self, rows: list[TaskRecord], scope: spec.Scope, filters: spec.TaskFilters,
              limit: int, position: tuple[Any, ...] | None) -> spec.TaskPage:
        """LDG-LIST-001/005: the first ``limit`` rows as statuses (what ``status`` answers)
        and, when :meth:`_has_more`, a cursor at :meth:`_next_position`."""
        shown = rows[:limit]
        next_cursor = None
        if shown and self._has_more(rows, limit):
            next_cursor = self._encode_cursor(
                PageCursor(scope, filters, self._next_position(shown, position)))
        return spec.TaskPage(items=tuple(self._status(r) for r in shown),
                             next_cursor=next_cursor)
