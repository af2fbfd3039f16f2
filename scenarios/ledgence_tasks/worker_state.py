"""What one worker of the ledgence-tasks workload knows, and how the answers it gets change that:
its session, its consumers (each one's cursor and the attempt it holds), the settlements it made,
the owners it lost. The calls it makes from that are :class:`~.worker.LedgenceWorker`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Err, Ok, Outcome

if TYPE_CHECKING:
    from .workload import LedgenceWorkload


@attrs.define
class Consumer:
    """What a worker knows of one of its consumers: its cursor and the attempt it holds."""

    seq: int = 0
    assignment: spec.Assignment | None = None
    expires_at: int = 0
    renewed: int = 0
    intent: str = spec.KEEP_ALIVE
    settlement: spec.SettleCommand | None = None
    claim: spec.ClaimCommand | None = None

    @property
    def owner(self) -> spec.LeaseOwner | None:
        return self.assignment.lease.owner if self.assignment is not None else None


class WorkerState:
    """What one worker process knows: its session, its consumers, the settlements it made, the
    owners it lost (to re-send as stale ones); :meth:`saw` learns from each answer."""

    def __init__(self, shared: LedgenceWorkload, index: int) -> None:
        self.shared = shared
        self.name = f"{shared.prefix}w{index + 1}"
        self.queue = shared.routed_queue if index % 4 == 1 else shared.queue
        """One worker in four works the routed queue (claims; acquisitions there are refused
        by a store that routes it, LDG-DISPATCH-009), the others the plain one: three of the
        four workers of a small run race for its head (LDG-LIN-001's acquisition races)."""
        self.session: spec.WorkerSession | None = None
        self.dead_session: str | None = None
        self.consumers: list[Consumer] = []
        self.settled: list[spec.SettleCommand] = []
        self.stale: list[spec.LeaseOwner] = []
        self.made = 0

    def _live_session(self, now: int) -> spec.WorkerSession | None:
        s = self.session
        return s if s is not None and now < s.expires_at else None

    # -- learning from answers -------------------------------------------------------------------

    def saw(self, op: Op, outcome: Outcome, now: int) -> None:
        if isinstance(outcome, Ok):
            self.shared.learn(outcome.value, now)
        elif isinstance(outcome, Err) and outcome.code in ("session_expired",
                                                           "unknown_session"):
            self._session_lost(op)
        elif isinstance(outcome, Err) and outcome.code == "external_dispatch_required":
            self.shared.routed = True
        if isinstance(op, spec.OpenSession) and isinstance(outcome, Ok):
            self._drop_all()
            self.session = outcome.value
            self.shared.session_opened(outcome.value, now)
            # one consumer at least: a store may accept the 0 or -1 the worker sends to be refused
            # (its answer is the model's to judge; the workload goes on)
            self.consumers = [Consumer() for _ in range(max(op.concurrency, 1))]
        elif isinstance(op, spec.ExtendSession) and isinstance(outcome, Ok):
            self.session = outcome.value
        elif isinstance(op, spec.Acquire | spec.ProbeAcquisition):
            self._saw_acquisition(op.command, outcome, now)
        elif isinstance(op, spec.ClaimDispatch):
            self._saw_claim(op.command, outcome, now)
        elif isinstance(op, spec.Renew):
            self._saw_renew(op.command, outcome)
        elif isinstance(op, spec.Settle):
            self._saw_settle(op.command, outcome)
        elif isinstance(op, spec.ConfirmQuiescence) and (
                isinstance(outcome, Ok) or outcome.code == "ownership_lost"):
            self._drop(op.owner)
            if isinstance(outcome, Ok):
                self.shared.saw_state(op.owner.task_id, outcome.value)
                self.shared.lease(op.owner.attempt_id, None)
        elif isinstance(op, spec.Cancel) and isinstance(outcome, Ok):
            self.shared.saw_state(op.task_id, outcome.value)

    def _session_lost(self, op: Op) -> None:
        if self.session is not None and not isinstance(op, spec.ExtendSession | spec.OpenSession):
            self.dead_session = self.session.id
            self.session = None

    def _consumer(self, command: spec.AcquireCommand) -> Consumer | None:
        if self.session is None or command.worker_session_id != self.session.id:
            return None
        return self.consumers[command.consumer_id]

    def _moved(self, c: Consumer, seq: int, assignment: spec.Assignment | None, now: int) -> None:
        """The cursor moved to ``seq``: the consumer holds ``assignment`` (None: nothing)."""
        if seq <= c.seq:
            if assignment is not None and c.assignment is not None:
                c.expires_at = assignment.lease.expires_at  # a replay: its current lease
            return
        if c.owner is not None:
            self._keep_stale(c.owner)
        c.seq, c.assignment, c.renewed, c.settlement = seq, assignment, 0, None
        c.intent = spec.KEEP_ALIVE
        c.expires_at = assignment.lease.expires_at if assignment is not None else now

    def _saw_acquisition(self, command: spec.AcquireCommand, outcome: Outcome,
                         now: int) -> None:
        c = self._consumer(command)
        if c is None or not isinstance(outcome, Ok):
            return
        reply = outcome.value
        if isinstance(reply, spec.ProbeCompleted):
            reply = reply.reply
        if isinstance(reply, spec.AcquireAssigned):
            self._moved(c, reply.sequence, reply.assignment, now)
        elif isinstance(reply, spec.AcquireEmpty | spec.AcquireOwnershipLost):
            self._moved(c, reply.sequence, None, now)

    def _saw_claim(self, command: spec.ClaimCommand, outcome: Outcome, now: int) -> None:
        c = self._consumer(command.acquisition)
        if c is None or not isinstance(outcome, Ok):
            return
        disposition = outcome.value.disposition
        reply = getattr(disposition, "reply", None)
        seq = command.acquisition.sequence
        if seq > c.seq:
            c.claim = command
        self._moved(c, seq, reply.assignment if isinstance(reply, spec.AcquireAssigned)
                    else None, now)

    def _holder(self, owner: spec.LeaseOwner) -> Consumer | None:
        return next((c for c in self.consumers if c.owner == owner), None)

    def _saw_renew(self, command: spec.RenewCommand, outcome: Outcome) -> None:
        c = self._holder(command.owner)
        if c is None:
            return
        if isinstance(outcome, Ok) and command.sequence > c.renewed:
            c.renewed, c.intent = command.sequence, command.intent
            c.expires_at = outcome.value.expires_at
            self.shared.lease(command.owner.attempt_id, c.expires_at)
        elif isinstance(outcome, Err) and outcome.code == "ownership_lost":
            self._drop(command.owner)

    def _saw_settle(self, command: spec.SettleCommand, outcome: Outcome) -> None:
        if isinstance(outcome, Ok):
            self.shared.saw_state(command.owner.task_id, outcome.value.task_state)
        if isinstance(outcome, Ok) and not outcome.value.already_accepted:
            self.settled = [*self.settled[-5:], command]
            c = self._holder(command.owner)
            if c is not None and command.quiescence == spec.UNCONFIRMED:
                c.settlement = command
            else:
                self._drop(command.owner)
                self.shared.lease(command.owner.attempt_id, None)
        elif isinstance(outcome, Err) and outcome.code == "ownership_lost":
            self._drop(command.owner)

    def _drop(self, owner: spec.LeaseOwner) -> None:
        c = self._holder(owner)
        if c is not None:
            self._keep_stale(owner)
            c.assignment, c.settlement = None, None

    def _drop_all(self) -> None:
        for c in self.consumers:
            if c.owner is not None:
                self._drop(c.owner)

    def _keep_stale(self, owner: spec.LeaseOwner) -> None:
        self.stale = [*self.stale[-5:], owner]
