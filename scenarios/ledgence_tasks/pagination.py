"""Scenarios of discovery: pages of tied tasks and their cursors, filters, pages read under
writes.
"""

from __future__ import annotations

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Forged, Ref

from ..checks import Scenarios
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
    page(h, scope=OTHER, correlation_key="")
    page(h, 100)
    page(h, 0)
    page(h, 101)
    page(h, submitted_from=start + 5, submitted_until=start + 5)
    page(h, state="paused")
    page(h, queue="")
    page(h, correlation_key="x" * (spec.MAX_CORRELATION_KEY_BYTES + 1))


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
