"""The adk-ledger state machine: coordinators racing for a few invocations under a moving clock.

Each step is one integer Hypothesis draws, read through the table :data:`PICKS`
(:mod:`..one_draw`: the rule and its arguments, with stated weights); every rule goes through the
:class:`Harness`, so every answer and the record behind it are compared with the model after
every step. Rules cover create, get,
claim (fresh or reused token), renew/checkpoint/finish with the current, an older, a foreign or a
never-issued token, delete, calls with an argument at its edge (:mod:`.edges`), clock moves
(small steps, exactly to a lease boundary, one ms before it), killing an owner and reopening
the store.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize

from fencepost.spec import adk_ledger as spec

from ..one_draw import OneDrawMachine, Pick
from . import durable, edges
from .meta import create_metadata, token

INVOCATIONS = 3
COORDINATORS = ("c0", "c1", "c2")
LEASES = (1, 2, 5, 10, 30)
METADATA: tuple[dict[str, Any], ...] = (
    {"workflow_id": "wf", "workflow_version": 1, "kind": "agent"},
    {"workflow_id": "wf", "kind": "tool", "extra": "dropped"},
    {},
)
CHECKPOINTS: tuple[dict[str, Any], ...] = (
    {}, {"step": 1}, {"step": 2, "memo": ["a", "b"]}, {"x": 1.5})
OUTCOMES = (None, "done", {"answer": 42}, {"error": "boom", "trace": ["f", 1]})
PHASES = (*spec.FINISH_PHASES, "running", "bogus")
# Which token a writer presents: 0 the record's current token (the live owner's, if any), 1 the
# writer's own latest, 2 its previous one, 3 forged.
TOKEN_CHOICES = (0, 1, 2, 3)
BOOLEANS = (False, True)

_I = ("i", tuple(range(INVOCATIONS)))
_COORD = ("coord", COORDINATORS)
_WHICH = ("which", TOKEN_CHOICES)
_LEASE = ("lease", LEASES)
_CHECKPOINT = ("checkpoint", CHECKPOINTS)
PICKS = (
    Pick("get", 15, (_I,)),
    Pick("create", 6, (_I, ("metadata", METADATA), _CHECKPOINT)),
    Pick("delete", 5, (_I,)),
    Pick("claim", 15, (_COORD, _I, _LEASE, ("reuse", BOOLEANS))),
    Pick("renew", 10, (_COORD, _I, _WHICH, _LEASE)),
    Pick("checkpoint", 10, (_COORD, _I, _WHICH, _CHECKPOINT, _LEASE)),
    Pick("finish", 9, (_COORD, _I, _WHICH, ("phase", PHASES), ("outcome", OUTCOMES),
                       _CHECKPOINT)),
    Pick("advance_to_lease_boundary", 7, (_I, ("before", BOOLEANS))),
    Pick("call_with_an_edge_argument", 6, (_COORD, _I, _WHICH, ("k", tuple(range(64))))),
    Pick("kill", 4, (_COORD,), needs="owner_liveness"),
    Pick("reopen", 3, needs="durable"),
    Pick("advance", 10, (("ms", (1, 2, 3, 7, 20)),)),
)
"""What a step may do and how often (percent of the steps; kill and reopen only where the store
can lose an owner or be reopened): a read first, the step every shrunk step tends to; a clock
move last, where the engine's largest constants land."""


class LedgerMachine(OneDrawMachine):
    """Coordinators over a few invocations of the run's store (ids prefixed per example)."""

    picks = PICKS

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

    @initialize(metadata=st.sampled_from(METADATA), checkpoint=st.sampled_from(CHECKPOINTS))
    def create_all(self, metadata: dict[str, Any], checkpoint: dict[str, Any]) -> None:
        """Start with every invocation created, so most rules meet a record."""
        for i in range(INVOCATIONS):
            self.h.apply("client", spec.Create(self.inv(i), self.metadata(metadata), checkpoint))


    def create(self, i: int, metadata: dict[str, Any], checkpoint: dict[str, Any]) -> None:
        self.h.apply("client", spec.Create(self.inv(i), self.metadata(metadata), checkpoint))

    def get(self, i: int) -> None:
        self.h.apply("client", spec.Get(self.inv(i)))

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

    def renew(self, coord: str, i: int, which: int, lease: int) -> None:
        token = self.token_for(coord, i, which)
        self.h.apply(coord, spec.Renew(self.inv(i), token, self.h.now, lease))

    def checkpoint(
        self, coord: str, i: int, which: int, checkpoint: dict[str, Any], lease: int
    ) -> None:
        token = self.token_for(coord, i, which)
        op = spec.Checkpoint(self.inv(i), token, checkpoint, self.h.now, lease)
        self.h.apply(coord, op)

    def finish(
        self, coord: str, i: int, which: int, phase: str, outcome: Any, checkpoint: dict[str, Any]
    ) -> None:
        token = self.token_for(coord, i, which)
        op = spec.Finish(self.inv(i), token, phase, outcome, checkpoint, self.h.now)
        self.h.apply(coord, op)

    def call_with_an_edge_argument(self, coord: str, i: int, which: int, k: int) -> None:
        """One of the calls with an argument at its edge (:mod:`.edges`), on the record in
        whatever state the rules left it, with one of the tokens a writer may present."""
        token, now = self.token_for(coord, i, which), self.h.now
        calls = (*edges.malformed(self.h.world.options, self.inv(i), self.owner(coord), token,
                                  now),
                 *edges.empty_strings(self.inv(i), self.owner(coord), now))
        self.h.apply(coord, calls[k % len(calls)])

    def delete(self, i: int) -> None:
        self.h.apply("client", spec.Delete(self.inv(i)))

    def advance(self, ms: int) -> None:
        self.h.advance(ms)

    def advance_to_lease_boundary(self, i: int, before: bool) -> None:
        """Move the clock to exactly lease_until (or lease_until - 1) of a running invocation."""
        rec = self.h.state.get(self.inv(i))
        if rec is None or rec.token is None:
            return
        target = rec.lease_until - (1 if before else 0)
        if target > self.h.now:
            self.h.set_time(target)

    def kill(self, coord: str) -> None:
        self.h.kill(self.owner(coord))

    def reopen(self) -> None:
        # Skipped when it would tell nothing (the step stays drawn, so shrinking keeps the
        # codes after a deleted step as they were).
        if self.h.reopen_would_tell():
            durable.reopen(self.h)


machine_for = LedgerMachine.bound_to
