"""Synthetic adk-ledger histories, linearizable by construction, of any size.

The linearizability checker's tests and ``fencepost bench`` need large histories whose verdict
is known without a store: :func:`simulate` steps the reference model through random operations
in one order, then gives each operation an interval around its place in that order on one of
``processes`` processes (one call at a time per process), so that order is a linearization.

Example::

    events = simulate(10_000, 8, 500)      # 8 processes over 500 invocations
    check_history(adk.MODEL, History("adk-ledger", events), clock=time.perf_counter).result
    # CheckResult.LINEARIZABLE
"""

from __future__ import annotations

import random

from fencepost.model import adk_ledger as adk
from fencepost.model.base import Ctx, Step
from fencepost.model.history import Event
from fencepost.spec import adk_ledger as spec
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Ok

T0 = 1_000_000  # store time of the first operation, ms
_OPTIONS = adk.default_options()


def _step(state: adk.State, op: Op, at: int) -> Step:
    answer = adk.MODEL.step(state, op, Ctx(now=at, options=_OPTIONS))
    assert isinstance(answer, Step), f"{op.name} has several allowed answers"
    return answer


def simulate(n: int, processes: int, keys: int, seed: int = 7, lost: float = 0.01
             ) -> list[Event]:
    """``n`` adk-ledger events over ``keys`` invocations on ``processes`` processes.

    Ops are mostly creates, claims, renews, checkpoints and finishes (with the current token,
    85% of the time), some reads and deletes; store time moves 1 ms every 4 ops. A fraction
    ``lost`` of the calls time out (no answer; they took effect). Deterministic in ``seed``.
    A call spans up to four operations' time, so ``processes`` must be at least 4."""
    if processes < 4:
        raise ValueError(f"processes must be at least 4, not {processes}")
    rng = random.Random(seed)
    state: adk.State = adk.EMPTY
    holders: dict[str, spec.Token] = {}  # invocation -> the token of its last successful claim
    free = [-1] * processes  # when each process is free again
    events: list[Event] = []
    for k in range(n):
        at = T0 + k // 4
        inv = f"inv-{rng.randrange(keys)}"
        token = holders.get(inv, "none") if rng.random() < 0.85 else f"stale-{k}"
        lease = rng.choice([2, 5, 20, 60])
        roll = rng.random()
        if inv not in state and roll < 0.7:
            op: Op = spec.Create(inv, {"kind": "agent", "workflow_id": f"wf-{k}"}, {"n": 0})
        elif roll < 0.25:
            op = spec.Get(inv)
        elif roll < 0.45:
            op = spec.Claim(inv, f"c{k % 5}", f"tok-{k}", at, lease)
        elif roll < 0.6:
            op = spec.Renew(inv, token, at, lease)
        elif roll < 0.8:
            op = spec.Checkpoint(inv, token, {"n": k, "x": 0.5, "tags": ["a", "b"]}, at, lease)
        elif roll < 0.95:
            op = spec.Finish(inv, token, rng.choice(spec.FINISH_PHASES), {"r": k}, {}, at)
        else:
            op = spec.Delete(inv)
        s = _step(state, op, at)
        state = s.state
        if isinstance(op, spec.Claim) and isinstance(s.outcome, Ok):
            holders[inv] = op.owner_token
        point = 100 * k  # the op's linearization point, ns
        free_now = [p for p in range(processes) if free[p] < point]
        p = rng.choice(free_now)
        invoked = max(free[p] + 1, point - rng.randrange(400))
        completed = point + rng.randrange(400)
        free[p] = completed
        if rng.random() < lost:  # a call that timed out (it took effect)
            events.append(Event(f"p{p}", op, invoked, None, None, at))
        else:
            events.append(Event(f"p{p}", op, invoked, completed, s.outcome, at))
    return events
