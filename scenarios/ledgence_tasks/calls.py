"""The calls the ledgence-tasks scenarios are written in: the scope, program and queue they use,
one helper per operation (``submit``, ``acquire``, ``renew``, ``settle``...), the model's names
of what was last minted, and :func:`on_own_store`, which registers a scenario to run on a store
of its own.

Acquisition and recovery see a whole queue (``expire_batch`` the whole store), so every scenario
runs on a store of its own (:func:`on_own_store` forks the world and discards the fork
afterwards).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref
from fencepost.spec.outcome import Outcome

from ..checks import Scenario, Scenarios
from ..harness import Harness


def on_own_store(registry: Scenarios) -> Callable[..., Callable[[Scenario], Scenario]]:
    """A decorator ``scenario(*requires)`` registering ``fn(h, prefix)`` in ``registry``, to run
    on a store of its own.

    Example::

        SCENARIOS = Scenarios()
        scenario = on_own_store(SCENARIOS)

        @scenario("durable")
        def reopen_keeps_everything(h: Harness, p: str) -> None: ...
    """

    def scenario(*requires: str) -> Callable[[Scenario], Scenario]:
        def add(fn: Scenario) -> Scenario:
            def isolated(h: Harness, p: str) -> None:
                world = h.world.fork(f"{p}{fn.__name__[:3]}")
                try:
                    fn(h.on(world), p)
                finally:
                    world.discard()

            isolated.__name__, isolated.__doc__ = fn.__name__, fn.__doc__
            registry.register(*requires)(isolated)
            return fn

        return add

    return scenario

SCOPE = spec.Scope("acme", "prod")
OTHER = spec.Scope("umbrella", "prod")
PROGRAM = spec.Program("mailer", "1.2.0")
DESCRIPTOR = spec.ProgramDescriptor(PROGRAM, "sha256:" + "ab" * 32, 2048)
QUEUE = "emails"


# --- submissions -------------------------------------------------------------------------------


def task_input(scope: spec.Scope = SCOPE, **changes: Any) -> spec.TaskInput:
    base = spec.TaskInput(scope, "emails", PROGRAM, "order-7",
                          {"to": "a@example.com", "n": 1, "tags": ["x", "y"]})
    return attrs.evolve(base, **changes)


def submit(h: Harness, key: str, task: spec.TaskInput,
           descriptor: spec.ProgramDescriptor = DESCRIPTOR) -> None:
    h.apply("client", spec.AcceptResolvedSubmission(spec.SubmitCommand(key, task), descriptor))


def history(h: Harness, task: str, after: int = 0, scope: spec.Scope = SCOPE) -> None:
    h.apply("client", spec.History(scope, Ref(task), after))


def last_task(h: Harness) -> str:
    return f"task#{h.state.minted}"


# --- workers -----------------------------------------------------------------------------------


def open_ws(h: Harness, concurrency: int = 2, scope: spec.Scope = SCOPE,
            queue: str = QUEUE) -> str:
    h.apply("worker", spec.OpenSession(scope, queue, concurrency))
    return f"ws#{h.state.minted}"


def command(ws: str, consumer: int, seq: int, scope: spec.Scope = SCOPE,
            queue: str = QUEUE) -> spec.AcquireCommand:
    return spec.AcquireCommand(scope, queue, Ref(ws) if "#" in ws else ws, consumer, seq)  # type: ignore[arg-type]


def acquire(h: Harness, ws: str, consumer: int, seq: int, **where: Any) -> Outcome:
    return h.apply(f"{ws}/{consumer}", spec.Acquire(command(ws, consumer, seq, **where)))


def probe(h: Harness, ws: str, consumer: int, seq: int, finish_empty: bool,
          deadline: int | None = None) -> Outcome:
    at = h.now + spec.CONTROL_REQUEST_TIMEOUT_MS if deadline is None else deadline
    return h.apply(f"{ws}/{consumer}", spec.ProbeAcquisition(command(ws, consumer, seq),
                                                             finish_empty, at))


def submit_task(h: Harness, key: str, **changes: Any) -> str:
    submit(h, key, task_input(**changes))
    return last_task(h)


def last_attempt(h: Harness) -> str:
    return f"attempt#{h.state.minted}"


def owner(h: Harness, attempt: str, **changes: Any) -> spec.LeaseOwner:
    """The attempt's owner as references to the real ids (``changes`` forge a field)."""
    o = h.state.attempts[attempt].owner
    real = spec.LeaseOwner(o.scope, Ref(o.task_id), Ref(o.attempt_id), Ref(o.lease_id),  # type: ignore[arg-type]
                           o.generation, Ref(o.worker_session_id), o.consumer_id)  # type: ignore[arg-type]
    return attrs.evolve(real, **changes)


def context(h: Harness, attempt: str, **changes: Any) -> spec.ExecutionContext:
    task = h.state.attempts[attempt].task_id
    base = spec.ExecutionContext(Ref(task), Ref(attempt), PROGRAM, DESCRIPTOR.digest)  # type: ignore[arg-type]
    return attrs.evolve(base, **changes)


def success(h: Harness, attempt: str, output: Any = None) -> spec.ExecutionReport:
    return spec.ExecutionReport(context(h, attempt), "proc-1", False,
                                {"status": "success", "output": output or {"sent": 1}}, 20)


def app_failure(h: Harness, attempt: str, kind: str = "runtime",
                message: str = "bounced") -> spec.ExecutionReport:
    """A completed report of the program's own failure (its kind any text)."""
    return spec.ExecutionReport(context(h, attempt), "proc-1", False,
                                {"status": "failure", "kind": kind, "message": message}, 20)


def failure(h: Harness, attempt: str, kind: str = "io") -> spec.ExecutionFailure:
    return spec.ExecutionFailure(context(h, attempt), kind, f"{kind} failed", "execution", True)


def settle(h: Harness, attempt: str, report: Any, quiescence: str = spec.CONFIRMED,
           operation_id: str = "op-1", who: spec.LeaseOwner | None = None) -> Outcome:
    cmd = spec.SettleCommand(who or owner(h, attempt), operation_id, report, quiescence)
    return h.apply("worker", spec.Settle(cmd))


def renew(h: Harness, attempt: str, seq: int, intent: str = spec.KEEP_ALIVE,
          who: spec.LeaseOwner | None = None) -> Outcome:
    return h.apply("worker", spec.Renew(spec.RenewCommand(who or owner(h, attempt), seq,
                                                          intent)))


def confirm(h: Harness, attempt: str, who: spec.LeaseOwner | None = None) -> Outcome:
    return h.apply("worker", spec.ConfirmQuiescence(who or owner(h, attempt)))


def reads(h: Harness, task: str, attempt: str | None = None) -> None:
    """Every read of the task (and of the attempt), in its scope."""
    for read in (spec.Status, spec.Result, spec.Inspect):
        h.apply("client", read(SCOPE, Ref(task)))
    if attempt is not None:
        h.apply("client", spec.InspectAttempt(SCOPE, Ref(task), Ref(attempt)))
    history(h, task)


def lease_expiry(h: Harness, attempt: str) -> int:
    expires_at: int = h.state.attempts[attempt].snapshot.lease.expires_at
    return expires_at


# --- discovery and targeted dispatch -----------------------------------------------------------


def page(h: Harness, limit: int = 50, cursor: Any = None, scope: spec.Scope = SCOPE,
         bind: str | None = None, **filters: Any) -> Outcome:
    query = spec.TaskListQuery(spec.TaskFilters(**filters), limit, cursor)
    return h.apply("reader", spec.ListTasks(scope, query), bind=bind)


def claim(h: Harness, ws: str, consumer: int, seq: int, task: str, generation: int,
          scope: spec.Scope = SCOPE, queue: str = QUEUE, by: str | None = None) -> Outcome:
    """Claim ``task`` in ``queue`` through consumer ``consumer`` of session ``ws``, whose
    queue is ``by`` (default: ``queue``)."""
    target = spec.DispatchRef(scope, queue, Ref(task) if "#" in task else task,  # type: ignore[arg-type]
                              generation)
    return h.apply(f"{ws}/{consumer}", spec.ClaimDispatch(spec.ClaimCommand(
        command(ws, consumer, seq, queue=queue if by is None else by), target)))

