"""Stored values read back exactly (SNODO-VALUE-001).

Every value a caller hands the store (work input, an input request, accepted responses, a
retry's error, a result, a failure's error and message) is one that tells a lossy store apart:
1 beside 1.0, integers past 2**53 (within the seed's 64 digits), -0.0, non-ASCII and empty
strings, the empty key, and nesting 64 levels deep. The harness reads each back after the step
that stored it and compares with exact types, so a store that keeps them through lossy JSON
(every number a double, text re-encoded) differs at the first one.
"""

from __future__ import annotations

from typing import Any

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import Ref

from ..harness import Harness, blamed_on
from .steps import asking, authorized, event, new_task, observed, request, worker

VALUE = "SNODO-VALUE-001"
DEPTH = 64
"""How deep :func:`nested` goes: the seed sets no limit (json_value.ex:67-77)."""


def nested(depth: int) -> Any:
    """Lists and mappings alternating ``depth`` levels deep, 1.0 at the bottom."""
    value: Any = 1.0
    for level in range(depth):
        value = [value, level] if level % 2 else {"d": value}
    return value


EXACT: dict[str, Any] = {
    "one": 1,
    "one_point_zero": 1.0,
    "past_2_53": 2**53 + 1,
    "big": -(2**64 + 1),
    "minus_zero": -0.0,
    "tiny": 5e-324,
    "text": "Grüße, 世界 \U0001f389",
    "empty": "",
    "": "the empty key",
    "list": [1, 1.0, "", None, True, False, [], {}],
    "deep": nested(DEPTH),
}
"""One value of each kind a lossy store changes (JSON-safe, as the seed's callers send)."""


def values_read_back_exactly(h: Harness, p: str) -> None:
    t, u = f"{p}-a", f"{p}-b"
    with blamed_on(h, VALUE):
        for task_id in (t, u):
            observed(h, task_id)
            work = spec.Work(f"idem-{task_id}", "render", EXACT, (0,))
            h.apply("client", spec.Create(new_task(h, task_id), work,
                                          authorized(h, "create", task_id)))
        h.reached(VALUE, "work input")
        h.apply("w1", spec.Claim(t, "w1", 30_000), bind="lt")
        lease = Ref("lt")
        worker(h, "w1", t, 0, event("ask", "input_requested", key="k",
                                    request={**EXACT, **asking("Grüße?")}), lease)
        h.reached(VALUE, "an input request")
        request(h, t, 1, event("answer", "input_responses_accepted", responses={"k": EXACT}),
                authorized(h, "update", t))
        h.reached(VALUE, "an accepted response")
        h.advance(1)
        worker(h, "w1", t, 2, event("retry", "retry_requested", error=EXACT,
                                    statusMessage="réessayer ✓"), lease)
        h.reached(VALUE, "a retry's last_failure")
        h.advance(1)
        worker(h, "w1", t, 3, event("done", "completed", result=EXACT), lease)
        h.reached(VALUE, "a result")
        h.apply("w2", spec.Claim(u, "w2", 30_000), bind="lu")
        worker(h, "w2", u, 0, event("fail", "failed", error=EXACT, statusMessage=""),
               Ref("lu"))
        h.reached(VALUE, "an error and its status message")
