"""Scenarios of discovery: pages of tied tasks and their cursors, filters, pages read under
writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fencepost.model.ledgence_tasks.records import ForgedPosition, UnissuedCursor
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.ledgence_tasks import situations as names
from fencepost.spec.opaque import Forged, Minted, Ref

from ..checks import Scenarios
from ..clock import SimClock
from ..harness import Harness
from .calls import (
    OTHER,
    QUEUE,
    SCOPE,
    acquire,
    on_own_store,
    open_ws,
    page,
    submit_task,
)

SCENARIOS = Scenarios()
scenario = on_own_store(SCENARIOS)


@scenario()
def pagination_ties_and_cursors(h: Harness, p: str) -> None:
    """Seven tasks submitted in one ms page as 3, then 2 (the limit changes), then an exact
    last page of 2 without a cursor; cursors are bound to scope and filters."""
    for k in range(7):
        submit_task(h, f"{p}-{k}")
    h.advance(1)
    submit_task(h, f"{p}-other", scope=OTHER)
    page(h, 3, bind="c1")
    page(h, 2, Ref("c1"), bind="c2")
    page(h, 2, Ref("c2"))  # exactly the last two: no next cursor
    page(h, 3, Ref("c1"), queue=QUEUE)  # other filters: refused
    page(h, 3, Ref("c1"), scope=OTHER)  # another scope: refused
    page(h, 3, "not-a-cursor")
    page(h, 3, Forged("cursor"))
    page(h, 3, forge_cursor(h, "c1", names.UNISSUED_POSITIONS[0], at_time(-1)))
    page(h, 3, forge_cursor(h, "c1", names.UNISSUED_POSITIONS[-1],
                            at_time(spec.MAX_TIMESTAMP_MS + 1)))
    (upper, key, version, float_time, empty_id, nul_id, third, short, filter_key, long_scope,
     no_version, spaced, repeated, _) = names.MALFORMED_CURSORS
    page(h, 3, forge_cursor(h, "c1", upper, unchanged, upper=True))
    page(h, 3, forge_cursor(h, "c1", spaced, unchanged, spaced=True))
    page(h, 3, forge_cursor(h, "c1", repeated, unchanged, twice=True))
    page(h, 3, forge_cursor(h, "c1", key, with_key("after", None)))
    page(h, 3, forge_cursor(h, "c1", version, with_key("version", 2)))
    page(h, 3, forge_cursor(h, "c1", float_time, time_as_float))
    page(h, 3, forge_cursor(h, "c1", empty_id, with_task_id("")))
    page(h, 3, forge_cursor(h, "c1", nul_id, with_task_id("task\x00")))
    page(h, 3, forge_cursor(h, "c1", third, third_part))
    page(h, 3, forge_cursor(h, "c1", short, no_task_id))
    page(h, 3, forge_position(h, "c1", names.FORGED_AT_ZERO, 0))
    page(h, 3, forge_cursor(h, "c1", filter_key, with_filter("priority", None)))
    page(h, 3, forge_cursor(h, "c1", long_scope, scope_of_three))
    page(h, 3, forge_cursor(h, "c1", no_version, without_key("version")))
    page(h, 7)
    page(h, 6, bind="c3")
    page(h, 1, Ref("c3"))


@scenario()
def pagination_filters(h: Harness, p: str) -> None:
    """Filters by state, queue, time range (from inclusive, until exclusive) and correlation
    key ("" only matches ""); other scopes never listed; bad queries refused."""
    start = h.now
    a = submit_task(h, f"{p}-a", correlation_key="")
    h.advance(100)
    submit_task(h, f"{p}-b", correlation_key=None)
    h.advance(100)
    submit_task(h, f"{p}-c", queue="reports", correlation_key="k")
    submit_task(h, f"{p}-d", scope=OTHER, correlation_key="")
    h.apply("client", spec.Cancel(SCOPE, Ref(a)))
    page(h)
    page(h, state="cancelled")
    page(h, state="queued", queue=QUEUE)
    page(h, submitted_from=start + 100)
    page(h, submitted_until=start + 100)
    page(h, submitted_from=start, submitted_until=start + 200)
    page(h, correlation_key="")
    page(h, correlation_key="k")
    page(h, correlation_key="k\ufffe")  # a noncharacter is a key's value like any other
    page(h, scope=OTHER, correlation_key="")
    page(h, 100)
    page(h, 0)
    page(h, 101)
    page(h, submitted_from=start + 5, submitted_until=start + 5)
    page(h, 1, bind="ranged", submitted_from=start + 100, submitted_until=start + 201)
    before_from, at_until, past_until = names.UNISSUED_POSITIONS[1:4]
    bounds: dict[str, Any] = {"submitted_from": start + 100, "submitted_until": start + 201}
    page(h, 1, forge_cursor(h, "ranged", before_from, at_time(start + 99)), **bounds)
    page(h, 1, forge_cursor(h, "ranged", at_until, at_time(start + 201)), **bounds)
    page(h, 1, forge_cursor(h, "ranged", past_until, at_time(start + 300)), **bounds)
    page(h, 1, forge_cursor(h, "ranged", names.MALFORMED_CURSORS[-1],
                            with_filter("submitted_from", float(start + 100))), **bounds)
    page(h, state="paused")
    page(h, queue="")
    page(h, correlation_key="x" * (spec.MAX_CORRELATION_KEY_BYTES + 1))
    h.advance(100)
    tied = h.now
    for k in "efg":
        submit_task(h, f"{p}-{k}")
    within: dict[str, Any] = {"submitted_from": tied, "submitted_until": tied + 1}
    page(h, 1, bind="at_from", **within)  # one of the three, a cursor at the lower bound
    page(h, 1, Ref("at_from"), **within)  # the walk goes on from there, below the upper one


@scenario()
def pagination_at_the_ends_of_time(h: Harness, p: str) -> None:
    """Walks whose cursors the store issued at timestamp 0 and at MAX_TIMESTAMP_MS, each on a
    store of its own whose clock starts there (every other check runs in 2026): the seed's
    position admits both ends, so each walk goes on past its first page."""
    for k, start in enumerate((0, spec.MAX_TIMESTAMP_MS)):
        world = h.world.fork(f"e{k}", clock=SimClock(start))
        try:
            at = h.on(world)
            for n in range(3):
                submit_task(at, f"{p}-{k}-{n}")
            page(at, 1, bind="first")
            page(at, 1, Ref("first"))  # the second of three: the walk goes on from there
        finally:
            world.discard()


@scenario()
def pagination_under_writes(h: Harness, p: str) -> None:
    """Pages read between submissions and state changes: each page is its own snapshot, and
    a non-null cursor may lead to an empty page."""
    ws = open_ws(h, concurrency=1)
    tasks = []
    for k in range(6):
        tasks.append(submit_task(h, f"{p}-{k}"))
        h.advance(10)
    page(h, 2, bind="c1", state="queued")  # 5, 4
    submit_task(h, f"{p}-new")  # newer than the cursor: not on later pages
    h.apply("client", spec.Cancel(SCOPE, Ref(tasks[1])))  # leaves the filter
    page(h, 2, Ref("c1"), bind="c2", state="queued")  # 3, 2 (1 left), more: 0
    acquire(h, ws, 0, 1)  # the oldest leaves the queued filter
    page(h, 2, Ref("c2"), state="queued")  # empty, though the cursor was not null
    page(h, 4, bind="c3")
    h.apply("client", spec.Cancel(SCOPE, Ref(tasks[0])))
    page(h, 4, Ref("c3"))


def forge_position(h: Harness, issued: str, case: str, submitted_at: int) -> Ref:
    """The cursor bound as ``issued`` at another position a page could end at
    (``submitted_at``, its task id kept), bound as a name meaning :class:`ForgedPosition`:
    refused, or read as that position."""
    meaning, _ = h.bindings[issued]
    return forge_cursor(h, issued, case, at_time(submitted_at), meaning=ForgedPosition(
        meaning.scope, meaning.filters, submitted_at, meaning.task_id, case))


def forge_cursor(h: Harness, issued: str, case: str, edit: Callable[[Any], Any],
                 upper: bool = False, meaning: Any = None, spaced: bool = False,
                 twice: bool = False) -> Ref:
    """The cursor bound as ``issued`` with its decoded document changed by ``edit`` (and its
    hex uppercased when ``upper``, a space put after its first two characters when
    ``spaced``, its version written twice when ``twice``), bound as a new name meaning
    :class:`UnissuedCursor` (or ``meaning``): no page issued it, and the seed refuses it.

    The seed's cursor is lowercase hex of its JSON (``Cursor``: version, scope, filters,
    position {submitted_at, task_id}); the kit's stores write the same fields canonically, the
    position as [submitted_at, task_id]. The change is written back as the store wrote its
    cursor (canonical JSON stays canonical). A cursor that does not decode so, or that
    ``edit`` cannot change, is replaced by one in the seed's own encoding, changed, which the
    store never issued either."""
    position, real = h.bindings[issued]
    text = real.text if isinstance(real, Minted) else real
    forged = _edited(text, edit, position)
    if upper:
        forged = _in_other_case(forged.upper(), text, position)
    if spaced:
        forged = spaced_hex(forged)
    if twice:
        forged = version_twice(forged)
    name = f"{issued}@{len(h.bindings)}"
    h.bind(name, UnissuedCursor(case) if meaning is None else meaning,
           Minted(forged) if isinstance(real, Minted) else forged)
    return Ref(name)


def _edited(text: Any, edit: Callable[[Any], Any], meaning: Any) -> str:
    try:
        written = bytes.fromhex(text).decode("utf-8")
        document = json.loads(written)
        canonical = written == spec.canonical_json(document)
        changed = edit(document)
        return (spec.canonical_json(changed) if canonical else _compact(changed)).encode(
            "utf-8").hex()
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, spec.InvalidInput):
        scope, filters = meaning.scope, meaning.filters
        document = {
            "version": 1,
            "scope": {"tenant_id": scope.tenant_id, "namespace": scope.namespace},
            "filters": {name: getattr(filters, name) for name in (
                "state", "queue", "submitted_from", "submitted_until", "correlation_key")},
            "position": {"submitted_at": meaning.submitted_at, "task_id": str(meaning.task_id)},
        }
        return _compact(edit(document)).encode("utf-8").hex()


def spaced_hex(cursor: str) -> str:
    """``cursor`` with a space after its first two characters: ``bytes.fromhex`` reads "ab cd"
    as "abcd"; the seed takes hex digits only."""
    return f"{cursor[:2]} {cursor[2:]}"


def version_twice(cursor: str) -> str:
    """The hex of JSON ``cursor`` with ``"version":1`` written again at its start: the seed
    refuses a repeated key (``decode_unique_json``); ``json.loads`` keeps the last."""
    text = bytes.fromhex(cursor).decode("utf-8")
    return text.replace("{", '{"version":1,', 1).encode("utf-8").hex()


def _in_other_case(forged: str, issued: Any, meaning: Any) -> str:
    """``forged``, unless it is the issued cursor itself (a store that writes uppercase): then
    the issued cursor in lowercase, or, if that is the same text too, the seed's encoding of
    the cursor in uppercase."""
    if forged != issued:
        return forged
    if isinstance(issued, str) and issued.lower() != issued:
        return issued.lower()
    return _edited(None, unchanged, meaning).upper()


def _compact(document: Any) -> str:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def at_time(submitted_at: Any) -> Callable[[Any], Any]:
    """An edit of a cursor document: its position's timestamp set to ``submitted_at``."""
    return _position_edit(lambda position, time_at, _: position.__setitem__(time_at,
                                                                          submitted_at))


def time_as_float(document: Any) -> Any:
    """An edit of a cursor document: its position's timestamp written as a float."""
    def change(position: Any, time_at: Any, _: Any) -> None:
        position[time_at] = float(position[time_at])
    return _position_edit(change)(document)


def unchanged(document: Any) -> Any:
    """No edit: the cursor as issued (to be uppercased)."""
    return document


def with_task_id(task_id: str) -> Callable[[Any], Any]:
    """An edit of a cursor document: its position's task id set to ``task_id``."""
    return _position_edit(lambda position, _, id_at: position.__setitem__(id_at, task_id))


def with_key(key: str, value: Any) -> Callable[[Any], Any]:
    """An edit of a cursor document: its top-level ``key`` set to ``value``."""
    def edit(document: Any) -> Any:
        if not isinstance(document, dict) or "position" not in document:
            raise KeyError(key)
        document[key] = value
        return document
    return edit


def without_key(key: str) -> Callable[[Any], Any]:
    """An edit of a cursor document: its top-level ``key`` left out."""
    def edit(document: Any) -> Any:
        del document[key]
        return document
    return edit


def with_filter(key: str, value: Any) -> Callable[[Any], Any]:
    """An edit of a cursor document: its filter ``key`` set to ``value`` (a key no filters
    have is added)."""
    def edit(document: Any) -> Any:
        filters = document["filters"]
        if not isinstance(filters, dict):
            raise TypeError("filters")
        filters[key] = value
        return document
    return edit


def scope_of_three(document: Any) -> Any:
    """An edit of a cursor document: a third part after the scope's two."""
    scope = document["scope"]
    if isinstance(scope, list) and len(scope) == 2:
        scope.append("x")
    elif isinstance(scope, dict) and len(scope) == 2:
        scope["x"] = "x"
    else:
        raise TypeError("scope")
    return document


def third_part(document: Any) -> Any:
    """An edit of a cursor document: a third part after the position's two."""
    def add(position: Any, _: Any, __: Any) -> None:
        if isinstance(position, list):
            position.append("x")
        else:
            position["x"] = "x"
    return _position_edit(add)(document)


def no_task_id(document: Any) -> Any:
    """An edit of a cursor document: the position without its task id."""
    def drop(position: Any, _: Any, id_at: Any) -> None:
        del position[id_at]
    return _position_edit(drop)(document)


def _position_edit(change: Callable[[Any, Any, Any], None]) -> Callable[[Any], Any]:
    """An edit of the document's position, a [submitted_at, task_id] list or an object of
    those keys: ``change(position, where the time is, where the task id is)``."""
    def edit(document: Any) -> Any:
        position = document["position"]
        if isinstance(position, list):
            if len(position) != 2:
                raise IndexError("position")
            change(position, 0, 1)
        else:
            if set(position) != {"submitted_at", "task_id"}:
                raise KeyError("position")
            change(position, "submitted_at", "task_id")
        return document
    return edit
