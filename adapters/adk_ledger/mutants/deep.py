"""adk-ledger stores whose bug shows only after three or four specific steps.

Each keeps a little state of its own beside the record (a cache, a grace, a counter), the
kind of shortcut a store's author adds for speed or leniency, and each breaks a rule only
once a particular short sequence has run: the quick state machine makes that sequence at
some seeds and not at others; the transition tour (:mod:`fencepost.scenarios.tour`) makes it
at every run. They are not among :data:`~.MUTANTS` (every one of which the quick check must
catch at every seed); the tour's tests require each to be caught by its clause.
"""

from __future__ import annotations

from fencepost.adapters.adk_ledger.core import LedgerCore, Slot
from fencepost.adapters.mutants.base import Mutant
from fencepost.spec import adk_ledger as spec
from fencepost.spec.adk_ledger import StoredInvocation


class DeadOwnerKeepsItsWindow(LedgerCore):
    """A takeover from a dead owner keeps that owner's token good until its old lease would
    have ended ("it may still be flushing"): create, claim by c0, c0 dies, claim by c1, and
    c0's finish is taken where the seed answers stale_owner."""

    @property
    def _windows(self) -> dict[str, tuple[spec.Token, int]]:
        found: dict[str, tuple[spec.Token, int]] = self.__dict__.setdefault("_grace", {})
        return found

    def _grant(self, slot: Slot, row: StoredInvocation, owner: str, token: spec.Token, now: int,
               lease_ms: int) -> spec.Invocation:
        if row.token is not None and self._live(row, now) and self._owner_dead(row):
            self._windows[row.invocation_id] = (row.token, row.lease_until)
        else:
            self._windows.pop(row.invocation_id, None)
        return super()._grant(slot, row, owner, token, now, lease_ms)

    def _check_writer(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        window = self._windows.get(row.invocation_id)
        if (window is not None and row.phase == spec.RUNNING and token == window[0]
                and now < window[1]):
            return
        super()._check_writer(row, token, now)


class SteadyOwnerBoundarySlack(LedgerCore):
    """An owner that renewed twice in a row is trusted with one more ms at its lease's end
    ("it is clearly alive"): create, claim, renew, renew, the clock to the lease's end, and a
    checkpoint is taken where the seed answers lease_expired."""

    @property
    def _renewals(self) -> dict[str, int]:
        found: dict[str, int] = self.__dict__.setdefault("_steady", {})
        return found

    def _claimed(self, row: StoredInvocation, owner: str, token: spec.Token, now: int,
                 lease_ms: int) -> StoredInvocation:
        self._renewals[row.invocation_id] = 0
        return super()._claimed(row, owner, token, now, lease_ms)

    def _renewed(self, row: StoredInvocation, now: int, lease_ms: int) -> StoredInvocation:
        self._renewals[row.invocation_id] = self._renewals.get(row.invocation_id, 0) + 1
        return super()._renewed(row, now, lease_ms)

    def _live(self, row: StoredInvocation, now: int) -> bool:
        slack = 1 if self._renewals.get(row.invocation_id, 0) >= 2 else 0
        return now < row.lease_until + slack


class ClaimCachesOwnerAlive(LedgerCore):
    """The owner's liveness is asked once per record and owner and then remembered ("the
    membership service is slow"): create, claim by c0, a claim by c1 refused, c0 dies, and
    c1's claim is still refused (invocation_owned) where the seed takes it over."""

    @property
    def _seen_alive(self) -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = self.__dict__.setdefault("_alive", set())
        return found

    def _owner_dead(self, row: StoredInvocation) -> bool:
        if row.owner is None:
            return False
        key = (row.invocation_id, row.owner)
        if key in self._seen_alive:
            return False
        dead = super()._owner_dead(row)
        if not dead:
            self._seen_alive.add(key)
        return dead


DEEP = (
    Mutant("dead_owner_keeps_its_window", "a takeover from a dead owner keeps the dead owner's "
           "token good until its old lease would have ended", "ADK-FENCE-001",
           DeadOwnerKeepsItsWindow),
    Mutant("steady_owner_boundary_slack", "an owner that renewed twice is given one more ms at "
           "its lease's end", "ADK-LEASE-001", SteadyOwnerBoundarySlack),
    Mutant("claim_caches_owner_alive", "the owner's liveness is asked once per record and "
           "remembered, so an owner that died later still holds its lease", "ADK-CLAIM-007",
           ClaimCachesOwnerAlive),
)
"""The stores whose bug shows only after a few specific steps (see the module's docstring)."""
