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
    history,
    last_attempt,
    last_task,
    on_own_store,
    open_ws,
    renew,
    settle,
    submit,
    submit_task,
    success,
    task_input,
)

SCENARIOS = Scenarios()
scenario = on_own_store(SCENARIOS)


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
