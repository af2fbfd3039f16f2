"""adk-ledger's concurrent workload: coordinators racing for a small set of invocations.

Every worker is a coordinator (owner ``<prefix>w<k>``) that creates invocations (sometimes one
that exists), reads them, claims them with fresh tokens, and renews, checkpoints and finishes
with the token of its last won claim (sometimes an older one: a stale owner). The invocations in
play are the last few created, and half the claims of a burst name the same one of them, so
claims collide. Boundaries are the lease ends the answers show.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from typing import Any

from fencepost.spec import adk_ledger as spec
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Ok, Outcome
from fencepost.spec.shapes import answer_hints

from . import meta
from .meta import FULL

IN_PLAY = 4
"""Invocations the workers pick from: the last ``IN_PLAY`` created."""

HOT_CLAIMS = 0.5
"""The share of claims that name their burst's invocation (the same for every worker in the
burst), so that claims meet on one record however many are in play."""

LEASES = (5, 30, 100, 500)
CHECKPOINTS: tuple[dict[str, Any], ...] = ({}, {"step": 1}, {"step": 2, "memo": ["a"]})
PHASES = (*spec.FINISH_PHASES, "running")
WEIGHTS = {"create": 10, "get": 12, "claim": 30, "renew": 16, "checkpoint": 12, "finish": 14,
           "delete": 3}


class AdkWorkload:
    """The shared part of a run: which invocations exist, which lease ends were seen."""

    answers = answer_hints(spec)

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.lock = threading.Lock()
        self.created = 0
        self.lease_ends: list[int] = []

    def invocation(self, rng: random.Random, new: bool, burst: int | None = None) -> str:
        """A new invocation id, or one of the last ``IN_PLAY`` created; with ``burst`` (the
        store time of a burst), the one every worker picks in that burst. The draw takes the
        same from ``rng`` either way, so a worker's later draws do not depend on the other
        workers' timing."""
        pick = rng.randrange(IN_PLAY)
        if burst is not None:
            pick = burst % IN_PLAY
        with self.lock:
            if new or self.created == 0:
                self.created += 1
                return f"{self.prefix}i{self.created}"
            return f"{self.prefix}i{max(1, self.created - pick)}"

    def saw_lease(self, until: int) -> None:
        with self.lock:
            self.lease_ends.append(until)
            del self.lease_ends[:-64]

    def worker(self, index: int) -> AdkWorker:
        return AdkWorker(self, index)

    def boundaries(self) -> Sequence[int]:
        with self.lock:
            return tuple(self.lease_ends)


class AdkWorker:
    """One coordinator: its tokens per invocation, newest last."""

    def __init__(self, shared: AdkWorkload, index: int) -> None:
        self.shared = shared
        self.owner = f"{shared.prefix}w{index + 1}"
        self.tokens: dict[str, list[spec.Token]] = {}
        self.issued = 0

    def _token(self, rng: random.Random, inv: str) -> spec.Token:
        mine = self.tokens.get(inv, [])
        if mine and rng.random() < 0.85:
            return mine[-1]
        if len(mine) > 1:
            return rng.choice(mine[:-1])
        return f"{self.owner}-never"

    def next_op(self, rng: random.Random, now: int) -> Op:
        kind = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
        if kind == "create":
            inv = self.shared.invocation(rng, new=rng.random() < 0.8)
            return spec.Create(inv, dict(FULL), rng.choice(CHECKPOINTS))
        held = [i for i in self.tokens if self.tokens[i]]
        if kind in ("renew", "checkpoint", "finish") and held and rng.random() < 0.8:
            inv = rng.choice(held)
        else:
            inv = self.shared.invocation(rng, new=False)
        lease = rng.choice(LEASES)
        if kind == "get":
            return spec.Get(inv)
        if kind == "claim":
            if rng.random() < HOT_CLAIMS:  # the burst's claims meet on one invocation
                inv = self.shared.invocation(rng, new=False, burst=now)
            self.issued += 1
            token = meta.token(f"{self.owner}-t{self.issued}")
            return spec.Claim(inv, self.owner, token, now, lease)
        if kind == "renew":
            return spec.Renew(inv, self._token(rng, inv), now, lease)
        if kind == "checkpoint":
            return spec.Checkpoint(inv, self._token(rng, inv), rng.choice(CHECKPOINTS), now, lease)
        if kind == "finish":
            return spec.Finish(inv, self._token(rng, inv), rng.choice(PHASES),
                               rng.choice((None, "done", {"answer": 42})), {"step": 9}, now)
        return spec.Delete(inv)

    def saw(self, op: Op, outcome: Outcome, now: int) -> None:
        if not isinstance(outcome, Ok):
            return
        if isinstance(op, spec.Claim):
            self.tokens.setdefault(op.invocation_id, []).append(op.owner_token)
            del self.tokens[op.invocation_id][:-3]
            self.shared.saw_lease(op.now_ms + op.lease_ms)
        elif isinstance(op, spec.Renew | spec.Checkpoint):
            self.shared.saw_lease(op.now_ms + op.lease_ms)
        elif isinstance(op, spec.Finish | spec.Delete):
            self.tokens.pop(op.invocation_id, None)


def workload(prefix: str) -> AdkWorkload:
    """The adk-ledger workload for one run (ids start with ``prefix``)."""
    return AdkWorkload(prefix)
