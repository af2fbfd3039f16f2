"""snodo-tasks stores whose bug shows only after three or four specific steps.

Each is a shortcut a store's author adds for speed or leniency, and each breaks a rule only
once a particular short sequence has run: the quick state machine makes that sequence at some
seeds and not at others; the transition tour (:mod:`fencepost.scenarios.tour`) makes it at
every run. They are not among :data:`~.MUTANTS` (every one of which the quick check must catch
at every seed); the tour's tests require each to be caught by its clause.
"""

from __future__ import annotations

from typing import Any

from fencepost.adapters.mutants.base import Mutant
from fencepost.adapters.snodo_tasks.core import TasksCore
from fencepost.adapters.snodo_tasks.records import Aggregate, Claim, Txn
from fencepost.spec import snodo_tasks as spec


class ReplayReadsTaskRow(TasksCore):
    """A replayed event answers its original effects (kept in the ledger) but its revision
    and commit time from the task's row ("they are the same columns"): create, claim, an
    event, another event, and the first one's replay answers the second's event_revision and
    committed_at where the seed answers the first's."""

    def _seen(self, aggregate: Aggregate, event: spec.Event) -> spec.Transition | None:
        original = super()._seen(aggregate, event)
        if original is None:
            return None
        row = aggregate.snapshot
        return spec.Transition(original.outcome, row, original.effects, row.revision,
                               row.task.last_updated_at)


class RenewedLeaseBoundarySlack(TasksCore):
    """A lease renewed at least once is trusted through its expiry's own ms ("it is clearly
    alive"): create, claim, renew, the clock to the lease's expiry, and a worker call with
    that lease is taken where the seed answers stale_lease."""

    @property
    def _renewed(self) -> set[str]:
        found: set[str] = self.__dict__.setdefault("_renewed_tokens", set())
        return found

    def _store_renewal(self, txn: Txn, aggregate: Aggregate, claim: Claim,
                       expires_at: float) -> None:
        self._renewed.add(claim.token)
        super()._store_renewal(txn, aggregate, claim, expires_at)

    def _lease_valid(self, aggregate: Aggregate, lease: Any, now: int) -> bool:
        claim = aggregate.claim
        if claim is None or not self._lease_matches(aggregate, lease):
            return False
        slack = 1 if claim.token in self._renewed else 0
        return now < claim.expires_at + slack


DEEP = (
    Mutant("replay_reads_task_row", "an idempotent replay answers its revision and commit time "
           "from the task's current row, not the recorded result", "SNODO-TX-003",
           ReplayReadsTaskRow),
    Mutant("renewed_lease_boundary_slack", "a lease renewed once is still taken in its "
           "expiry's own ms", "SNODO-LEASE-003", RenewedLeaseBoundarySlack),
)
"""The stores whose bug shows only after a few specific steps (see the module's docstring)."""
