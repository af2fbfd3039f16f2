"""The adk-ledger tour's scope (see :mod:`fencepost.scenarios.tour`).

**Bound.** ``invocations`` invocations (one by default: a record's rules read no other record;
two records meet only through the clock), two coordinators, tokens without limit (a fresh one
on each claim that asks for one), a claim's lease of ``claim_lease`` ms and a renewal's or
checkpoint's of ``renew_lease`` ms. Moves from every state: create (full metadata, or none),
get, delete; claim by each coordinator with a new token or its last one; renew, checkpoint and
finish (completed) presenting the record's current token, each coordinator's last or the one
before, or a forged one; renew for 1 ms, and finish in each other finish phase and in an
invalid one (running; under ``finish_phases=any`` also ready, the empty phase and one of the
caller's own), with the current token; under ``empty_strings=accepted`` a claim with the
empty token; the clock one ms on, and to each running record's lease end -1, 0 and +1 ms;
with ``owner_liveness`` (and ``deaths``) a coordinator dies; with ``durable`` the store is
reopened; and with ``edges`` every call with an argument at its edge (:mod:`.edges`) on the
first invocation.

**Abstraction.** A state is, per invocation: absent, or its phase; when running, which
coordinator holds it and whether its token is that coordinator's last, the one before or an
older one, and its lease's end relative to now (``-1`` for any end already passed by more than
a ms) and whether it is the empty token; per coordinator and invocation, how many tokens it has
(0, 1, 2 or more), and how far back c0's empty token is among its own, if it has one; which
coordinators are dead. Revisions, timestamps, metadata, checkpoints and outcomes are left out:
no guard reads them (the model's decisions come from the phase, the token, the lease end
against now and the owner's liveness alone, model/adk_ledger/steps.py ``_claim``,
``_write_guard``, ``_delete``), and the read-backs compare them exactly on every move.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import attrs

from fencepost.spec import adk_ledger as spec

from ..tour_graph import Move, Tourist
from . import edges
from .meta import FULL, create_metadata, token

COORDINATORS = ("c0", "c1")


@attrs.frozen
class Driver:
    """A walk's bookkeeping: its id prefix, the tokens each coordinator was given per
    invocation (oldest first) and how many were minted."""

    prefix: str
    tokens: tuple[tuple[tuple[spec.Token, ...], ...], ...]  # [coordinator][invocation]
    minted: int = 0

    def inv(self, i: int) -> str:
        return f"{self.prefix}-i{i}"

    def owner(self, c: int) -> str:
        return f"{self.prefix}-{COORDINATORS[c]}"

    def mine(self, c: int, i: int) -> tuple[spec.Token, ...]:
        return self.tokens[c][i]

    def given(self, c: int, i: int) -> tuple[Driver, spec.Token]:
        """A new token for coordinator ``c`` on invocation ``i`` (text and raw bytes in turn,
        as the state machine gives them)."""
        n = self.minted + 1
        label = f"{self.prefix}-t{n}"
        new: spec.Token = label if n % 2 else token(label)
        return self.took(c, i, new, n), new

    def took(self, c: int, i: int, new: spec.Token, minted: int | None = None) -> Driver:
        """``new`` added to coordinator ``c``'s tokens on invocation ``i``."""
        row = list(self.tokens[c])
        row[i] = (*row[i], new)
        tokens = (*self.tokens[:c], tuple(row), *self.tokens[c + 1:])
        return Driver(self.prefix, tokens, self.minted if minted is None else minted)


@attrs.frozen(eq=False)
class AdkScope:
    """The adk-ledger scope (see the module's docstring)."""

    name: str = "adk-ledger"
    invocations: int = 1
    claim_lease: int = 2
    renew_lease: int = 3
    edges: bool = True
    deaths: bool = True
    own_store: bool = False
    first: Any = None
    """A smaller scope whose tour runs first (see
    :class:`fencepost.scenarios.tour_graph.Scope`)."""

    @property
    def bound(self) -> str:
        return (f"{self.invocations} invocation{'s' if self.invocations > 1 else ''}, "
                f"{len(COORDINATORS)} coordinators, tokens: the current, each coordinator's "
                f"last and the one before, a forged one; leases {self.claim_lease} ms "
                f"(claim) and {self.renew_lease} ms (renew, checkpoint); the clock +1 ms and "
                "to each lease end -1/0/+1 ms"
                + ("" if self.deaths else "; no coordinator dies")
                + ("; every argument at its edge" if self.edges else "")
                + ("" if self.first is None else f"; {self.first.name}'s tour first"))

    def start(self, prefix: str) -> Driver:
        return Driver(prefix, tuple(tuple(() for _ in range(self.invocations))
                                    for _ in COORDINATORS))

    # -- the abstraction -----------------------------------------------------------------

    def abstract(self, driver: Driver, t: Tourist) -> Hashable:
        now, state = t.now, t.state
        records: list[Hashable] = []
        for i in range(self.invocations):
            counts = (*(min(len(driver.mine(c, i)), 2) for c in range(len(COORDINATORS))),
                      _back_of("", driver.mine(0, i)))
            rec = state.get(driver.inv(i))
            if rec is None:
                records.append(("absent", counts))
            elif rec.token is None:
                records.append((rec.phase, counts))
            else:
                records.append((rec.phase, counts, self._holder(driver, i, rec.token),
                                max(rec.lease_until - now, -1), rec.token == ""))
        dead = tuple(driver.owner(c) in t.dead for c in range(len(COORDINATORS)))
        return tuple(records), dead

    @staticmethod
    def _holder(driver: Driver, i: int, held: spec.Token) -> tuple[int, int] | None:
        """Whose token the record holds, and how far back: 0 its last, 1 the one before, 2
        older; None: none of the walk's."""
        for c in range(len(COORDINATORS)):
            mine = driver.mine(c, i)
            for back, given in enumerate(reversed(mine)):
                if given == held:
                    return c, min(back, 2)
        return None

    # -- the moves -----------------------------------------------------------------------

    def moves(self, driver: Driver, t: Tourist) -> Sequence[Move]:
        out: list[Move] = []
        for i in range(self.invocations):
            out += self._record_moves(driver, t, i)
        out.append(Move("the clock +1 ms", _advance))
        for i in range(self.invocations):
            rec = t.state.get(driver.inv(i))
            if rec is None or rec.token is None:
                continue
            for delta, said in ((-1, "-1 ms"), (0, ""), (1, "+1 ms")):
                if rec.lease_until + delta > t.now:
                    out.append(Move(f"the clock to i{i}'s lease end{' ' + said if said else ''}",
                                    _to_lease_end(i, delta)))
        if self.deaths and "owner_liveness" in t.capabilities:
            out += [Move(f"{name} dies", _kill(c)) for c, name in enumerate(COORDINATORS)
                    if driver.owner(c) not in t.dead]
        if "durable" in t.capabilities:
            out.append(Move("reopen the store", _reopen))
        if self.edges:
            out += [Move(f"i0: argument edge {k}", _edge(k))
                    for k in range(len(_edge_calls(driver, t)))]
        return out

    def _record_moves(self, driver: Driver, t: Tourist, i: int) -> list[Move]:
        rec = t.state.get(driver.inv(i))
        out = [Move(f"create i{i}", _create(i, FULL))]
        if t.options.get("metadata_keys") == "optional":  # else it sends the full metadata
            out.append(Move(f"create i{i} without metadata", _create(i, {})))
        out += [Move(f"get i{i}", _one(i, lambda d, t, inv: spec.Get(inv))),
               Move(f"delete i{i}", _one(i, lambda d, t, inv: spec.Delete(inv)))]
        for c, name in enumerate(COORDINATORS):
            out.append(Move(f"{name} claims i{i} with a new token",
                            _claim(i, c, self.claim_lease, fresh=True)))
            if driver.mine(c, i):
                out.append(Move(f"{name} claims i{i} with its last token",
                                _claim(i, c, self.claim_lease, fresh=False)))
        if t.options.get("empty_strings") == "accepted" and "" not in driver.mine(0, i):
            # the empty token is like any other (claimed once a walk: the abstraction says
            # whether the record holds it)
            out.append(Move(f"c0 claims i{i} with the empty token",
                            _claim(i, 0, self.claim_lease, fresh=False, given="")))
        tokens: list[tuple[str, Any]] = []
        if rec is not None and rec.token is not None:
            tokens.append(("the current token", rec.token))
        for c, name in enumerate(COORDINATORS):
            mine = driver.mine(c, i)
            if mine:
                tokens.append((f"{name}'s last token", mine[-1]))
            if len(mine) > 1:
                tokens.append((f"{name}'s token before", mine[-2]))
        tokens.append(("a forged token", f"{driver.prefix}-forged"))
        for said, _ in tokens:
            out += [Move(f"renew i{i} with {said}", _write(i, said, "renew", self.renew_lease)),
                    Move(f"checkpoint i{i} with {said}",
                         _write(i, said, "checkpoint", self.renew_lease)),
                    Move(f"finish i{i} completed with {said}",
                         _write(i, said, "completed", 0))]
        if rec is not None and rec.token is not None:
            out.append(Move(f"renew i{i} for 1 ms with the current token",
                            _write(i, "the current token", "renew", 1)))
            out += [Move(f"finish i{i} {phase or '(the empty phase)'} with the current token",
                         _write(i, "the current token", phase, 0))
                    for phase in (*spec.FINISH_PHASES[1:], *_OTHER_PHASES[
                        t.options.get("finish_phases") == "any"])]
        return out


def _back_of(given: spec.Token, tokens: tuple[spec.Token, ...]) -> int | None:
    """How far back ``given`` is among ``tokens`` (0 the last, capped at 2), None if not."""
    for back, other in enumerate(reversed(tokens)):
        if other == given:
            return min(back, 2)
    return None


_OTHER_PHASES = (("running",), ("running", "ready", "", "archived"))
"""The phases finish is sent beside the seed's finish phases: running (no finish phase);
under ``finish_phases=any`` also ready, the empty phase (refused still) and a phase of the
caller's own (taken)."""


def _token_named(driver: Driver, t: Tourist, i: int, said: str) -> spec.Token:
    """The token a move's label names, where the walk stands now."""
    if said == "the current token":
        held: spec.Token = t.state[driver.inv(i)].token
        return held
    if said == "a forged token":
        return f"{driver.prefix}-forged"
    for c, name in enumerate(COORDINATORS):
        if said == f"{name}'s last token":
            return driver.mine(c, i)[-1]
        if said == f"{name}'s token before":
            return driver.mine(c, i)[-2]
    raise ValueError(said)


def _create(i: int, metadata: Mapping[str, Any]) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        t.apply("client", spec.Create(driver.inv(i), create_metadata(t.options, metadata),
                                      {}))
        return driver
    return do


def _one(i: int, build: Any) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        t.apply("client", build(driver, t, driver.inv(i)))
        return driver
    return do


def _claim(i: int, c: int, lease: int, *, fresh: bool, given: spec.Token | None = None
           ) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        if given is not None:
            driver, token_ = driver.took(c, i, given), given
        elif fresh:
            driver, token_ = driver.given(c, i)
        else:
            token_ = driver.mine(c, i)[-1]
        t.apply(COORDINATORS[c], spec.Claim(driver.inv(i), driver.owner(c), token_, t.now,
                                            lease))
        return driver
    return do


def _write(i: int, said: str, what: str, lease: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        inv, given, now = driver.inv(i), _token_named(driver, t, i, said), t.now
        op: Any
        if what == "renew":
            op = spec.Renew(inv, given, now, lease)
        elif what == "checkpoint":
            op = spec.Checkpoint(inv, given, {"step": now}, now, lease)
        else:
            op = spec.Finish(inv, given, what, {"at": now} if what != "running" else None,
                             {"step": now}, now)
        t.apply("writer", op)
        return driver
    return do


def _advance(driver: Driver, t: Tourist) -> Driver:
    t.advance(1)
    return driver


def _to_lease_end(i: int, delta: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        t.set_time(t.state[driver.inv(i)].lease_until + delta)
        return driver
    return do


def _kill(c: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        t.kill(driver.owner(c))
        return driver
    return do


def _reopen(driver: Driver, t: Tourist) -> Driver:
    t.reopen()
    return driver


def _edge_calls(driver: Driver, t: Tourist) -> tuple[Any, ...]:
    inv = driver.inv(0)
    rec = t.state.get(inv)
    held = rec.token if rec is not None and rec.token is not None else f"{driver.prefix}-t0"
    owner = driver.owner(0)
    return (*edges.malformed(t.options, inv, owner, held, t.now),
            *edges.empty_strings(inv, owner, t.now))


def _edge(k: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        t.apply("c0", _edge_calls(driver, t)[k])
        return driver
    return do


_CI = AdkScope(name="adk-ledger (ci)", edges=False)
SCOPES = {
    "full": AdkScope(first=_CI),
    "ci": _CI,
}
"""The named scopes: ``full`` (the bench's; it runs ``ci``'s tour first) and ``ci`` (smaller:
no argument edges)."""
