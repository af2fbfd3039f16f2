"""ledgence-tasks under database faults: submission, acquisition, renewal, settlement, cancel
and a recovery batch, each failed at every statement, dropped before its COMMIT and committed
without an acknowledgement, then repeated: the repeat must reconcile (see
:mod:`fencepost.scenarios.fault_checks`).

Each run acquires from a queue of its own, so that runs sharing the store never claim each
other's tasks; the recovery batch, which scans the whole store, runs on a store of its own.
"""

from __future__ import annotations

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import BackendUnavailable
from fencepost.spec.opaque import Ref

from ..fault_checks import Faults, Target
from ..harness import Harness
from .calls import (
    DESCRIPTOR,
    SCOPE,
    acquire,
    command,
    last_attempt,
    open_ws,
    owner,
    submit_task,
    success,
    task_input,
)

FAULTS = Faults("LDG-FAULT-001", "LDG-FAULT-002",
                errors=(spec.Unavailable.code, BackendUnavailable.code), retry="LDG-FAULT-003")
fault = FAULTS.register


def _assigned(h: Harness, p: str) -> str:
    """A task of the run's own queue, claimed by consumer 0 of a session; its attempt."""
    queue = f"q-{p}"
    ws = open_ws(h, concurrency=1, queue=queue)
    submit_task(h, f"{p}-k", queue=queue)
    acquire(h, ws, 0, 1, queue=queue)
    return last_attempt(h)


@fault("submit")
def _submit(h: Harness, p: str) -> Target:
    key = f"{p}-k"
    submission = spec.SubmitCommand(key, task_input(queue=f"q-{p}"))
    return Target("client", spec.AcceptResolvedSubmission(submission, DESCRIPTOR),
                  reads=(spec.LookupSubmission(SCOPE, key),))


@fault("acquire")
def _acquire(h: Harness, p: str) -> Target:
    queue = f"q-{p}"
    ws = open_ws(h, concurrency=1, queue=queue)
    submit_task(h, f"{p}-k", queue=queue)
    return Target(f"{ws}/0", spec.Acquire(command(ws, 0, 1, queue=queue)))


@fault("renew")
def _renew(h: Harness, p: str) -> Target:
    attempt = _assigned(h, p)
    h.advance(1_000)
    renewal = spec.RenewCommand(owner(h, attempt), 1, spec.DISPATCH)
    return Target("worker", spec.Renew(renewal))


@fault("settle")
def _settle(h: Harness, p: str) -> Target:
    attempt = _assigned(h, p)
    h.advance(1_000)
    settlement = spec.SettleCommand(owner(h, attempt), "op-1", success(h, attempt),
                                    spec.CONFIRMED)
    return Target("worker", spec.Settle(settlement))


@fault("cancel")
def _cancel(h: Harness, p: str) -> Target:
    task = submit_task(h, f"{p}-k", queue=f"q-{p}")
    return Target("client", spec.Cancel(SCOPE, Ref(task)))


@fault("expire_batch", isolated=True)
def _expire_batch(h: Harness, p: str) -> Target:
    _assigned(h, p)
    h.advance(spec.LEASE_MS)
    return Target("ops", spec.ExpireBatch(10))
