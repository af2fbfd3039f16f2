"""Named scripted scenarios for the ledgence-tasks slice, from the project's own tests."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..harness import Harness
from ..registry import Scenarios

SCENARIOS = Scenarios()
scenario = SCENARIOS.register

SCOPE = spec.Scope("acme", "prod")
OTHER = spec.Scope("umbrella", "prod")
PROGRAM = spec.Program("mailer", "1.2.0")
DESCRIPTOR = spec.ProgramDescriptor(PROGRAM, "sha256:" + "ab" * 32, 2048)


def task_input(scope: spec.Scope = SCOPE, **changes: Any) -> spec.TaskInput:
    base = spec.TaskInput(scope, "emails", PROGRAM, "order-7",
                          {"to": "a@example.com", "n": 1, "tags": ["x", "y"]})
    return attrs.evolve(base, **changes)


def submit(h: Harness, key: str, task: spec.TaskInput,
           descriptor: spec.ProgramDescriptor = DESCRIPTOR) -> None:
    h.apply("client", spec.AcceptResolvedSubmission(spec.SubmitCommand(key, task), descriptor))


def history(h: Harness, task: str, after: int = 0, scope: spec.Scope = SCOPE) -> None:
    h.apply("client", spec.History(scope, Ref(task), after))


@scenario()
def submission_replay_ignores_key_order(h: Harness, p: str) -> None:
    key = f"{p}-k"
    h.apply("client", spec.LookupSubmission(SCOPE, key))
    submit(h, key, task_input())  # mints task#n / run#n in the model
    first = _last_task(h)
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
    first = _last_task(h)
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
    t = _last_task(h)
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
    h.apply("worker", spec.ExtendSession("ws_unknown"))
    h.apply("worker", spec.ExtendSession(""))
    h.advance(spec.SESSION_MS - 1)
    h.apply("worker", spec.ExtendSession(Ref(ws)))
    h.advance(spec.SESSION_MS)
    h.apply("worker", spec.ExtendSession(Ref(ws)))
    h.advance(5)
    h.apply("worker", spec.ExtendSession(Ref(ws)))


@scenario("durable")
def reopen_keeps_everything(h: Harness, p: str) -> None:
    h.apply("worker", spec.OpenSession(SCOPE, "emails", 1))
    ws = f"ws#{h.state.minted}"
    submit(h, f"{p}-a", task_input())
    a = _last_task(h)
    submit(h, f"{p}-b", task_input())
    b = _last_task(h)
    h.apply("client", spec.Cancel(SCOPE, Ref(b)))
    h.reopen()
    h.apply("worker", spec.ExtendSession(Ref(ws)))
    submit(h, f"{p}-a", task_input())
    history(h, a)
    history(h, b)


def _last_task(h: Harness) -> str:
    return f"task#{h.state.minted}"
