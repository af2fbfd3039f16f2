"""Real-thread races: N parties released together by a barrier, on one task or one store."""

from __future__ import annotations

from collections.abc import Sequence

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import Ref
from fencepost.spec.ops import Op

from ..checks import Races
from ..harness import Harness
from ..races import release_together, settle_race
from .steps import (
    ASK,
    FAILURE,
    asking,
    authorized,
    created,
    event,
    forked,
    new_task,
    observed,
    work,
    worker,
)

RACES = Races()
race = RACES.register
CLAIMED_FROM = ("a fresh task", "an expired claim", "a released task", "a retry just due")
"""The task racing_claimers' round sets up, by round (SNODO-CLAIM-008's situations)."""



def _read_back_all(h: Harness, clause: str, ops: Sequence[Op]) -> None:
    """Read every racer's task back: each is stored exactly when the model says so."""
    for op in ops:
        h.check_record(op, h.expect_one(op), clause=clause)


@race
def creates_at_capacity(h: Harness, p: str, n: int, round_no: int) -> None:
    """N creates of distinct ids against k free places of max_tasks (even rounds) or of
    max_active_tasks_per_scope (odd rounds), with 0 or 1 places already taken: exactly k
    succeed, the rest answer capacity_exceeded."""
    racers = max(n, 2)
    free = 1 + round_no % (racers - 1)
    taken = (round_no // 2) % 2
    per_scope = round_no % 2 == 1
    limits = {"max_tasks": "infinity", "max_active_tasks_per_scope": "infinity"}
    limits["max_active_tasks_per_scope" if per_scope else "max_tasks"] = str(free + taken)
    with forked(h, f"-{p}-cap", **limits) as c:
        for k in range(taken):
            created(c, f"{p}-taken{k}")
        ids = [f"{p}-{k}" for k in range(racers)]
        # Under max_tasks the scope does not matter: spread the racers over two tenants.
        tenants = ["acme" if per_scope or k % 2 else "umbrella" for k in range(racers)]
        for task_id, tenant in zip(ids, tenants, strict=True):
            observed(c, task_id, tenant)
        ops = [
            spec.Create(new_task(c, task_id), work(task_id), authorized(c, "create", task_id, t))
            for task_id, t in zip(ids, tenants, strict=True)
        ]
        outcomes = release_together(c.world.open(), ops, run=c.run)
        settle_race(c, "SNODO-CAP-003", ["client"] * racers, ops, outcomes, winners_expected=free)
        _read_back_all(c, "SNODO-CAP-003", ops)
        c.reached("SNODO-CAP-003", "racing for a scope's limit" if per_scope
                  else "racing for max_tasks")
        if taken:
            c.reached("SNODO-CAP-003", "a place already taken")


@race
def racing_claimers(h: Harness, p: str, n: int, round_no: int) -> None:
    """N claimants of one task that is fresh, whose claim just expired, was just released, or
    whose retry falls due exactly now (by round): one wins, the rest answer unavailable."""
    t = f"{p}-a"
    created(h, t, retry_policy=(7,))
    setup = round_no % 4
    if setup:
        h.apply("w0", spec.Claim(t, "w0", 5), bind="l0")
    if setup == 1:
        h.advance(5)
    elif setup == 2:
        h.apply("w0", spec.Release(Ref("l0")))
    elif setup == 3:
        h.advance(1)
        worker(h, "w0", t, 0, event("retry", "retry_requested", **FAILURE), Ref("l0"))
        h.apply("w0", spec.Release(Ref("l0")))
        h.advance(7)
    actors = [f"w{k}" for k in range(1, max(n, 2) + 1)]
    ops = [spec.Claim(t, a, 1_000) for a in actors]
    outcomes = release_together(h.world.open(), ops)
    settle_race(h, "SNODO-CLAIM-008", actors, ops, outcomes)
    h.reached("SNODO-CLAIM-008", CLAIMED_FROM[setup])


@race
def two_writers_one_revision(h: Harness, p: str, n: int, round_no: int) -> None:
    """N writers at one revision: the lease holder's input requests (distinct event ids) and one
    request writer (an answer in even rounds, a cancel in odd ones), whose place among the
    writers varies by round: exactly one is applied, the rest answer conflict."""
    t = f"{p}-a"
    created(h, t)
    h.apply("w0", spec.Claim(t, "w0", 30_000), bind="lease")
    worker(h, "w0", t, 0, ASK, Ref("lease"))
    writers = max(n, 2)
    requester = round_no % writers
    kind = "update" if round_no % 2 == 0 else "cancel"
    access = spec.RequestAuthority(authorized(h, kind, t))
    lease = spec.WorkerAuthority(Ref("lease"))
    actors: list[str] = []
    ops: list[spec.TransitionOp] = []
    for k in range(writers):
        if k == requester:
            ev = (event(f"w{k}", "input_responses_accepted", responses={"k": {"name": "Ada"}})
                  if kind == "update" else event(f"w{k}", "cancelled"))
            actors.append("client")
            ops.append(spec.TransitionOp(t, 1, ev, access))
        else:
            ev = event(f"w{k}", "input_requested", key=f"q{k}", request=asking(f"q{k}?"))
            actors.append("w0")
            ops.append(spec.TransitionOp(t, 1, ev, lease))
    outcomes = release_together(h.world.open(), ops, run=h.run)
    settle_race(h, "SNODO-TX-006", actors, ops, outcomes)
    h.reached("SNODO-TX-006", "an input answer among them" if kind == "update"
              else "a cancel among them")
