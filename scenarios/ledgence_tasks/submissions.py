"""Scenarios of submissions, reads of a queued task, sessions and reopening: the idempotent
submission and its conflicts, a queued cancel, sessions that expire, durability.
"""

from __future__ import annotations

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..checks import Scenarios
from ..harness import Harness, blamed_on
from .calls import (
    DESCRIPTOR,
    OTHER,
    SCOPE,
    acquire,
    context,
    history,
    last_attempt,
    last_task,
    on_own_store,
    open_ws,
    reads,
    renew,
    settle,
    submit,
    submit_task,
    success,
    task_input,
)

SCENARIOS = Scenarios()
scenario = on_own_store(SCENARIOS)

NONCHARACTER_KEY = "order-\ufdd0-\U0010ffff"
"""A correlation key the seed accepts (length and control characters are its only rules)
and an identifier's rules refuse."""


@scenario()
def submission_replay_ignores_key_order(h: Harness, p: str) -> None:
    key = f"{p}-k"
    h.apply("client", spec.LookupSubmission(SCOPE, key))
    submit(h, key, task_input())  # mints task#n / run#n in the model
    first = last_task(h)
    reordered = task_input(data={"tags": ["x", "y"], "n": 1, "to": "a@example.com"},
                           retry_policy=spec.RetryPolicy(3, 5000), attempt_timeout_ms=300_000)
    h.advance(5)
    other_digest = attrs.evolve(DESCRIPTOR, digest="sha256:" + "cd" * 32)
    submit(h, key, reordered, other_digest)
    h.apply("client", spec.LookupSubmission(SCOPE, key))
    history(h, first)
    submit(h, key, task_input(OTHER))  # another scope: another task
    h.apply("client", spec.LookupSubmission(OTHER, key))
    # a correlation key is not an identifier: noncharacters are allowed, controls are not
    submit(h, f"{p}-nonchar", task_input(correlation_key=NONCHARACTER_KEY))
    submit(h, f"{p}-control", task_input(correlation_key="order\x7f"))


@scenario()
def changed_submission_conflicts(h: Harness, p: str) -> None:
    key = f"{p}-k"
    submit(h, key, task_input(data={"n": 1, "z": 0.0}))
    first = last_task(h)
    for changed in (
        task_input(data={"n": 1.0, "z": 0.0}),
        task_input(data={"n": 1, "z": -0.0}),
        task_input(data={"n": 1, "z": 0.0}, program=spec.Program("mailer", "1.2.1")),
        task_input(data={"n": 1, "z": 0.0}, retry_policy=spec.RetryPolicy(4, 5000)),
        task_input(data={"n": 1, "z": 0.0}, correlation_key=None),
    ):
        descriptor = attrs.evolve(DESCRIPTOR, program=changed.program)
        submit(h, key, changed, descriptor)
    submit(h, key, task_input(queue=""))
    submit(h, f"{p}-x", task_input(), attrs.evolve(DESCRIPTOR, program=spec.Program("o", "1")))
    submit(h, "k" * 256, task_input())
    history(h, first)


@scenario()
def queued_cancel_is_terminal_and_idempotent(h: Harness, p: str) -> None:
    submit(h, f"{p}-k", task_input())
    t = last_task(h)
    for read in (spec.Status, spec.Result, spec.Inspect):
        h.apply("client", read(SCOPE, Ref(t)))
        h.apply("intruder", read(OTHER, Ref(t)))
    h.apply("client", spec.Status(SCOPE, "task_never_minted"))
    h.advance(3)
    h.apply("client", spec.Cancel(OTHER, Ref(t)))
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))
    h.advance(3)
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))
    h.apply("client", spec.Result(SCOPE, Ref(t)))
    h.apply("client", spec.LookupSubmission(SCOPE, f"{p}-k"))
    submit(h, f"{p}-k", task_input())  # the replay shows the task as it is now: cancelled
    history(h, t)
    history(h, t, 1)
    history(h, t, 3)
    history(h, t, 99)
    history(h, t, -1)


@scenario()
def sessions_expire_and_never_revive(h: Harness, p: str) -> None:
    h.apply("worker", spec.OpenSession(SCOPE, "emails", 2))
    ws = f"ws#{h.state.minted}"
    h.apply("worker", spec.OpenSession(SCOPE, "emails", 0))
    h.apply("worker", spec.OpenSession(SCOPE, "", 1))
    h.apply("worker", spec.OpenSession(spec.Scope("", "prod"), "emails", 1))
    h.apply("worker", spec.ExtendSession("ws_unknown"))
    h.apply("worker", spec.ExtendSession(""))
    h.advance(spec.SESSION_MS - 1)
    h.apply("worker", spec.ExtendSession(Ref(ws)))
    h.advance(1)  # at the expiry the extension replaced: it was stored, so this extends
    h.apply("worker", spec.ExtendSession(Ref(ws)))
    h.advance(spec.SESSION_MS)
    h.apply("worker", spec.ExtendSession(Ref(ws)))
    h.advance(5)
    h.apply("worker", spec.ExtendSession(Ref(ws)))


@scenario("durable")
def reopen_keeps_everything(h: Harness, p: str) -> None:
    """Sessions, bindings, tasks, attempts, cursors and history survive a reopen."""
    ws = open_ws(h, concurrency=2)
    a = submit_task(h, f"{p}-a")
    b = submit_task(h, f"{p}-b")
    h.apply("client", spec.Cancel(SCOPE, Ref(b)))
    c = submit_task(h, f"{p}-c")
    acquire(h, ws, 0, 1)
    first = last_attempt(h)
    renew(h, first, 1, spec.DISPATCH)
    acquire(h, ws, 1, 1)
    second = last_attempt(h)
    settle(h, second, success(h, second), spec.UNCONFIRMED)
    h.reopen()
    with blamed_on(h, "LDG-DURABLE-001"):  # what differs now is what did not survive
        h.apply("worker", spec.ExtendSession(Ref(ws)))
        submit(h, f"{p}-a", task_input())
        acquire(h, ws, 0, 1)  # the cursor survived: a replay
        renew(h, first, 1, spec.DISPATCH)
        settle(h, second, success(h, second), spec.UNCONFIRMED)
        for t in (a, b, c):
            history(h, t)


def _nested(containers: int) -> list[object]:
    """``containers`` lists, each the only item of the one around it."""
    value: list[object] = []
    for _ in range(containers - 1):
        value = [value]
    return value


EXACT_DATA = {
    "one": 1, "one_point_zero": 1.0, "zero": 0.0, "negative_zero": -0.0,
    "i64_min": spec.JSON_INTEGERS[0], "i64_max": 2 ** 63 - 1, "u64_max": spec.JSON_INTEGERS[1],
    "past_binary64": 2 ** 53 + 1, "subnormal": 5e-324, "largest": 1.7976931348623157e308,
    "text": "Gr\u00fc\u00dfe, \u4e16\u754c \u2713 \U0001f680", "empty": "", "nul": "\u0000",
    "escapes": "\"\\/\n\t", "": "the empty key",
    "list": [1, 1.0, -0.0, [], {}, None, True, False, ""],
    "deep": _nested(spec.MAX_DATA_DEPTH - 1),  # with the mapping around it: 64 containers
}
"""Task input that tells a store keeping the seed's JSON from one that rounds it: every number
class and bound, the strings a text column mangles, the deepest nesting the seed admits."""

EXACT_OUTPUT = {"one": 1, "one_point_zero": 1.0, "negative_zero": -0.0,
                "u64_max": spec.JSON_INTEGERS[1], "i64_min": spec.JSON_INTEGERS[0],
                "past_binary64": 2 ** 53 + 1, "text": "\u2713 \u00e9t\u00e9", "empty": "",
                "nested": [[{"k": [1.5, -1]}]]}


@scenario()
def stored_values_read_back_exactly(h: Harness, p: str) -> None:
    """Input data of every number class and bound, odd strings and 64 nested containers, and
    a success output and a failure message likewise, the success reported with elapsed_ms the
    last u64 (a u64 in the seed: ``execution.rs:34-42`` at 1c9ece5): every answer that carries
    them (the submission, inspect, the Assigned event, result, inspect_attempt) gives them
    back exactly."""
    with blamed_on(h, "LDG-READ-005"):
        ws = open_ws(h, concurrency=2)
        t = submit_task(h, f"{p}-a", data=EXACT_DATA)
        h.apply("client", spec.Inspect(SCOPE, Ref(t)))
        acquire(h, ws, 0, 1)
        a = last_attempt(h)
        settle(h, a, attrs.evolve(success(h, a, EXACT_OUTPUT), elapsed_ms=spec.JSON_INTEGERS[1]))
        reads(h, t, a)
        t2 = submit_task(h, f"{p}-b", data=[EXACT_OUTPUT, -0.0, 1.0])
        acquire(h, ws, 1, 1)
        b = last_attempt(h)
        failed = spec.ExecutionReport(context(h, b), "proc-1", False, {
            "status": "failure", "kind": "runtime", "message": "\u00e9chec \u2717 \u0000"}, 20)
        settle(h, b, failed)
        reads(h, t2, b)
