"""Real-thread races on one invocation: N parties released together by a barrier."""

from __future__ import annotations

from fencepost.spec import adk_ledger as spec

from ..checks import Races
from ..harness import Harness
from ..races import release_together, settle_race
from .meta import FULL, token

RACES = Races()
race = RACES.register
CHOICE_GATES: dict[str, tuple[str, str]] = {}



@race
def concurrent_claimants(h: Harness, p: str, n: int, round_no: int) -> None:
    """N claimants on an expired lease (odd rounds) or an unowned record (even rounds)."""
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, {**FULL, "kind": "race"}, {}))
    if round_no % 2:
        h.apply("c0", spec.Claim(inv, "c0", token(f"{p}-t0"), h.now, 5))
        h.advance(5)
    actors = [f"c{k}" for k in range(1, n + 1)]
    ops = [spec.Claim(inv, a, token(f"{p}-t{a}"), h.now, 10) for a in actors]
    outcomes = release_together(h.world.open(), ops)
    settle_race(h, "ADK-CLAIM-008", actors, ops, outcomes)
    h.reached("ADK-CLAIM-008", "on an expired lease" if round_no % 2 else "on an unowned record")


@race
def concurrent_creates(h: Harness, p: str, n: int, round_no: int) -> None:
    """N creates of one new id with different metadata: one winner, whose record is stored."""
    inv = f"{p}-a"
    actors = [f"client{k}" for k in range(n)]
    ops = [spec.Create(inv, {**FULL, "kind": a}, {"by": a}) for a in actors]
    outcomes = release_together(h.world.open(), ops)
    settle_race(h, "ADK-CREATE-004", actors, ops, outcomes)


@race
def renew_versus_takeover(h: Harness, p: str, n: int, round_no: int) -> None:
    """The owner's renews at lease_until - 1 (a client retrying on timeout sends several) race a
    claimant at lease_until: either every renew succeeds and the claim fails, or the claim
    succeeds and every renew fails."""
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, {**FULL, "kind": "race"}, {}))
    start = h.now
    h.apply("c0", spec.Claim(inv, "c0", token(f"{p}-t0"), start, 10))
    h.set_time(start + 10)
    actors: list[str] = []
    ops: list[spec.Renew | spec.Claim] = []
    claimant = round_no % max(n, 2)  # where the one claimant stands varies by round
    for k in range(max(n, 2)):
        if k != claimant:
            actors.append("c0")
            ops.append(spec.Renew(inv, token(f"{p}-t0"), start + 9, 10))
        else:
            actors.append("c1")
            ops.append(spec.Claim(inv, "c1", token(f"{p}-t1"), start + 10, 10))
    outcomes = release_together(h.world.open(), ops)
    settle_race(h, "ADK-RENEW-002", actors, ops, outcomes, winners_expected=None)


CHOICE_GATES["renew_versus_takeover"] = ("renew_atomic", "atomic")
