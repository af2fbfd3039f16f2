"""The adk-ledger state machine: coordinators racing for a few invocations under a moving clock.

Hypothesis picks the rules; every rule goes through the :class:`Harness`, so every answer and
the record behind it are compared with the model after every step. Rules cover create, get,
claim (fresh or reused token), renew/checkpoint/finish with the current, an older, a foreign or a
never-issued token, delete, calls with an argument at its edge (:mod:`.edges`), clock moves
(small steps, exactly to a lease boundary, one ms before it), killing an owner and reopening
the store.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from fencepost.spec import adk_ledger as spec

from ..machine import WorldMachine
from . import durable, edges
from .meta import create_metadata, token

INVOCATIONS = 3
COORDINATORS = ("c0", "c1", "c2")
LEASES = st.sampled_from([1, 2, 5, 10, 30])
METADATA = st.sampled_from(
    [
        {"workflow_id": "wf", "workflow_version": 1, "kind": "agent"},
        {"workflow_id": "wf", "kind": "tool", "extra": "dropped"},
        {},
    ]
)
CHECKPOINTS = st.sampled_from([{}, {"step": 1}, {"step": 2, "memo": ["a", "b"]}, {"x": 1.5}])
OUTCOMES = st.sampled_from([None, "done", {"answer": 42}, {"error": "boom", "trace": ["f", 1]}])
PHASES = st.sampled_from([*spec.FINISH_PHASES, "running", "bogus"])
# Which token a writer presents: 0 the record's current token (the live owner's, if any), 1 the
# writer's own latest, 2 its previous one, 3 forged.
TOKEN_CHOICE = st.integers(0, 3)


class LedgerMachine(WorldMachine):
    """Coordinators over a few invocations of the run's store (ids prefixed per example)."""

    def __init__(self) -> None:
        super().__init__()
        self.issued: dict[tuple[str, int], list[spec.Token]] = {}
        self.tokens = 0

    # -- helpers ----------------------------------------------------------------------------

    def inv(self, i: int) -> str:
        return f"{self.prefix}-i{i}"

    def owner(self, coord: str) -> str:
        return f"{self.prefix}-{coord}"

    def metadata(self, drawn: dict[str, Any]) -> dict[str, Any]:
        return create_metadata(self.h.world.options, drawn)

    def token_for(self, coord: str, i: int, choice: int) -> spec.Token:
        mine = self.issued.get((coord, i), [])
        rec = self.h.state.get(self.inv(i))
        if choice == 0 and rec is not None and rec.token is not None:
            token: spec.Token = rec.token
            return token
        if choice == 1 and mine:
            return mine[-1]
        if choice == 2 and len(mine) > 1:
            return mine[-2]
        return f"{self.prefix}-forged-{coord}"

    # -- rules ------------------------------------------------------------------------------

    @initialize(metadata=METADATA, checkpoint=CHECKPOINTS)
    def create_all(self, metadata: dict[str, Any], checkpoint: dict[str, Any]) -> None:
        """Start with every invocation created, so most rules meet a record."""
        for i in range(INVOCATIONS):
            self.h.apply("client", spec.Create(self.inv(i), self.metadata(metadata), checkpoint))

    @rule(i=st.integers(0, INVOCATIONS - 1), metadata=METADATA, checkpoint=CHECKPOINTS)
    def create(self, i: int, metadata: dict[str, Any], checkpoint: dict[str, Any]) -> None:
        self.h.apply("client", spec.Create(self.inv(i), self.metadata(metadata), checkpoint))

    @rule(i=st.integers(0, INVOCATIONS - 1))
    def get(self, i: int) -> None:
        self.h.apply("client", spec.Get(self.inv(i)))

    @rule(
        coord=st.sampled_from(COORDINATORS),
        i=st.integers(0, INVOCATIONS - 1),
        lease=LEASES,
        reuse=st.booleans(),
    )
    def claim(self, coord: str, i: int, lease: int, reuse: bool) -> None:
        mine = self.issued.setdefault((coord, i), [])
        if not (reuse and mine):
            self.tokens += 1
            # Tokens are binaries: every other one text, the rest raw bytes as the seed's
            # caller makes them.
            label = f"{self.prefix}-t{self.tokens}"
            mine.append(label if self.tokens % 2 else token(label))
        op = spec.Claim(self.inv(i), self.owner(coord), mine[-1], self.h.now, lease)
        self.h.apply(coord, op)

    @rule(coord=st.sampled_from(COORDINATORS), i=st.integers(0, INVOCATIONS - 1),
          which=TOKEN_CHOICE, lease=LEASES)
    def renew(self, coord: str, i: int, which: int, lease: int) -> None:
        token = self.token_for(coord, i, which)
        self.h.apply(coord, spec.Renew(self.inv(i), token, self.h.now, lease))

    @rule(coord=st.sampled_from(COORDINATORS), i=st.integers(0, INVOCATIONS - 1),
          which=TOKEN_CHOICE, checkpoint=CHECKPOINTS, lease=LEASES)
    def checkpoint(
        self, coord: str, i: int, which: int, checkpoint: dict[str, Any], lease: int
    ) -> None:
        token = self.token_for(coord, i, which)
        op = spec.Checkpoint(self.inv(i), token, checkpoint, self.h.now, lease)
        self.h.apply(coord, op)

    @rule(coord=st.sampled_from(COORDINATORS), i=st.integers(0, INVOCATIONS - 1),
          which=TOKEN_CHOICE, phase=PHASES, outcome=OUTCOMES, checkpoint=CHECKPOINTS)
    def finish(
        self, coord: str, i: int, which: int, phase: str, outcome: Any, checkpoint: dict[str, Any]
    ) -> None:
        token = self.token_for(coord, i, which)
        op = spec.Finish(self.inv(i), token, phase, outcome, checkpoint, self.h.now)
        self.h.apply(coord, op)

    @rule(coord=st.sampled_from(COORDINATORS), i=st.integers(0, INVOCATIONS - 1),
          which=TOKEN_CHOICE, k=st.integers(0, 63))
    def call_with_an_edge_argument(self, coord: str, i: int, which: int, k: int) -> None:
        """One of the calls with an argument at its edge (:mod:`.edges`), on the record in
        whatever state the rules left it, with one of the tokens a writer may present."""
        token, now = self.token_for(coord, i, which), self.h.now
        calls = (*edges.malformed(self.h.world.options, self.inv(i), self.owner(coord), token,
                                  now),
                 *edges.empty_strings(self.inv(i), self.owner(coord), now))
        self.h.apply(coord, calls[k % len(calls)])

    @rule(i=st.integers(0, INVOCATIONS - 1))
    def delete(self, i: int) -> None:
        self.h.apply("client", spec.Delete(self.inv(i)))

    @rule(ms=st.sampled_from([1, 2, 3, 7, 20]))
    def advance(self, ms: int) -> None:
        self.h.advance(ms)

    @rule(i=st.integers(0, INVOCATIONS - 1), before=st.booleans())
    def advance_to_lease_boundary(self, i: int, before: bool) -> None:
        """Move the clock to exactly lease_until (or lease_until - 1) of a running invocation."""
        rec = self.h.state.get(self.inv(i))
        if rec is None or rec.token is None:
            return
        target = rec.lease_until - (1 if before else 0)
        if target > self.h.now:
            self.h.set_time(target)

    @precondition(lambda self: "owner_liveness" in self.world.capabilities)
    @rule(coord=st.sampled_from(COORDINATORS))
    def kill(self, coord: str) -> None:
        self.h.kill(self.owner(coord))

    @precondition(lambda self: "durable" in self.world.capabilities)
    @rule()
    def reopen(self) -> None:
        # Not a precondition: one that depends on the state makes shrinking redraw the rules
        # after a deleted step, and counterexamples came out longer (adk: 6 -> 14 steps).
        if self.h.reopen_would_tell():
            durable.reopen(self.h)


machine_for = LedgerMachine.bound_to
