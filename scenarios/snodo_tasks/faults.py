"""snodo-tasks under database faults: create, claims, lease renewal and release, and a worker's
event, each failed at every statement, dropped before its COMMIT and committed without an
acknowledgement (see :mod:`fencepost.scenarios.fault_checks`)."""

from __future__ import annotations

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.errors import BackendUnavailable
from fencepost.spec.opaque import Ref

from ..fault_checks import Faults, Target
from ..harness import Harness
from .steps import DONE, authorized, created, new_task, observed, work

FAULTS = Faults("SNODO-FAULT-001", "SNODO-FAULT-002", errors=(BackendUnavailable.code,))
fault = FAULTS.register

LEASE_MS = 30_000


def _read(t: str) -> spec.Get:
    """The task read back through its observer access (calls by lease have no key)."""
    return spec.Get(t, Ref(f"obs:{t}"))


def _leased(h: Harness, t: str) -> Ref:
    created(h, t)
    h.apply("w1", spec.Claim(t, "w1", LEASE_MS), bind="lease")
    h.advance(5)
    return Ref("lease")


@fault("create")
def _create(h: Harness, p: str) -> Target:
    t = f"{p}-a"
    observed(h, t)
    access = authorized(h, "create", t)
    return Target("client", spec.Create(new_task(h, t), work(t), access))


@fault("claim")
def _claim(h: Harness, p: str) -> Target:
    t = f"{p}-a"
    created(h, t)
    return Target("w1", spec.Claim(t, "w1", LEASE_MS))


@fault("claim_next", isolated=True)
def _claim_next(h: Harness, p: str) -> Target:
    t = f"{p}-a"
    created(h, t)
    return Target("w1", spec.ClaimNext("w1", LEASE_MS), reads=(_read(t),))


@fault("renew")
def _renew(h: Harness, p: str) -> Target:
    t = f"{p}-a"
    return Target("w1", spec.Renew(_leased(h, t), LEASE_MS), reads=(_read(t),))


@fault("release")
def _release(h: Harness, p: str) -> Target:
    t = f"{p}-a"
    return Target("w1", spec.Release(_leased(h, t)), reads=(_read(t),))


@fault("transition")
def _transition(h: Harness, p: str) -> Target:
    t = f"{p}-a"
    lease = _leased(h, t)
    return Target("w1", spec.TransitionOp(t, 0, DONE, spec.WorkerAuthority(lease)))
