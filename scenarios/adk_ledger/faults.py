"""adk-ledger under database faults: each write of the ledger, failed at every statement,
dropped before its COMMIT and committed without an acknowledgement (see
:mod:`fencepost.scenarios.fault_checks`)."""

from __future__ import annotations

from fencepost.spec import adk_ledger as spec

from ..fault_checks import Faults, Target
from ..harness import Harness
from .meta import token

FAULTS = Faults("ADK-FAULT-001", "ADK-FAULT-002", errors=(spec.BackendUnavailable.code,))
fault = FAULTS.register

META = {"workflow_id": "wf-1", "workflow_version": 3, "kind": "agent"}
LEASE_MS = 30_000


def _created(h: Harness, p: str) -> str:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {"step": 0}))
    return inv


def _claimed(h: Harness, p: str) -> str:
    inv = _created(h, p)
    h.apply("c1", spec.Claim(inv, "c1", token("t1"), h.now, LEASE_MS))
    h.advance(5)
    return inv


@fault("create")
def _create(h: Harness, p: str) -> Target:
    return Target("client", spec.Create(f"{p}-a", META, {"step": 0}))


@fault("claim")
def _claim(h: Harness, p: str) -> Target:
    return Target("c1", spec.Claim(_created(h, p), "c1", token("t1"), h.now, LEASE_MS))


@fault("renew")
def _renew(h: Harness, p: str) -> Target:
    return Target("c1", spec.Renew(_claimed(h, p), token("t1"), h.now, LEASE_MS))


@fault("checkpoint")
def _checkpoint(h: Harness, p: str) -> Target:
    return Target("c1", spec.Checkpoint(_claimed(h, p), token("t1"), {"step": 1}, h.now, LEASE_MS))


@fault("finish")
def _finish(h: Harness, p: str) -> Target:
    return Target("c1", spec.Finish(_claimed(h, p), token("t1"), "completed", {"sent": 1},
                                    {"step": 2}, h.now))


@fault("delete")
def _delete(h: Harness, p: str) -> Target:
    return Target("client", spec.Delete(_created(h, p)))
