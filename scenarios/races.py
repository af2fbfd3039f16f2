"""Real-thread races: release N operations at once with a barrier and collect their outcomes."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from fencepost.model.answers import faulted
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Crash, Outcome, agrees, answered

from .guard import Guard, RunStopped, current_guard
from .harness import Harness, StoreLost, violation
from .world import unavailable

SWITCH_INTERVAL_S = 1e-5
"""The interpreter's thread switch interval while racers run (the default is 5 ms)."""


def release_together(
    store: Any,
    ops: Sequence[Op],
    run: Callable[[Any, Op], Outcome] | None = None,
) -> list[Outcome]:
    """Run each op on its own thread, all released by one barrier; outcomes in op order.
    ``run`` makes the call (pass ``harness.run`` when the ops hold references; default: the
    run's guarded call). A racer that does not return within the run's call timeout stops the
    run (:class:`~fencepost.scenarios.guard.CallTimedOut`): the race proves nothing. What ``run``
    raises (not the store: its exceptions are answers) is raised here, as on one thread. Nor does
    one whose call faulted (``backend_unavailable``, a lost connection: it may have taken
    effect or not, and no order of the others can be judged without knowing which): the
    check is lost (:class:`~fencepost.scenarios.harness.StoreLost`), its clauses unknown."""
    guard = current_guard()
    barrier = threading.Barrier(len(ops))
    # Switch threads every few microseconds while the racers run, so that even an in-process
    # store's critical sections interleave (the default 5 ms slice hides most races).
    switch = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        outcomes = _race(barrier, ops, store, guard, run or guard.call)
    finally:
        sys.setswitchinterval(switch)
    for op, outcome in zip(ops, outcomes, strict=True):
        if faulted(outcome):
            raise StoreLost(f"{unavailable(op.name, outcome)}: a racing call faulted, so the "
                            "race shows nothing", ())
    return outcomes


def _race(barrier: threading.Barrier, ops: Sequence[Op], store: Any, guard: Guard,
          run: Callable[[Any, Op], Outcome]) -> list[Outcome]:
    outcomes: list[Outcome | None] = [None] * len(ops)
    raised: list[Exception] = []  # the kit's own (a reference never minted), not the store's
    left = [len(ops)]
    lock = threading.Lock()
    done = threading.Event()

    def racer(k: int) -> None:
        try:
            barrier.wait(guard.timeout_s)
            outcomes[k] = run(store, ops[k])
        except threading.BrokenBarrierError:
            outcomes[k] = Crash("BrokenBarrierError", "racers were not released together")
        except RunStopped:
            pass
        except Exception as e:  # noqa: BLE001 - raised again on the check's thread, below
            raised.append(e)
        finally:
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    done.set()

    for k in range(len(ops)):
        threading.Thread(target=racer, args=(k,), daemon=True, name=f"fencepost-racer{k}").start()
    guard.await_done(done)
    if raised:  # as the call would have raised on one thread (the check ends as it says)
        raise raised[0]
    if any(o is None for o in outcomes):  # a racer met a stopped run
        raise RunStopped(guard.stopped or "the run stopped during a race")
    return [o for o in outcomes if o is not None]


def settle_race(
    h: Harness,
    clause: str,
    actors: Sequence[str],
    ops: Sequence[Op],
    outcomes: Sequence[Outcome],
    winners_expected: int | None = 1,
) -> None:
    """Check a race: ``winners_expected`` ops succeeded (``None``: any number), and the store's
    answers equal the model's in the order 'winners first, then the rest', which for these
    races is a valid linearization whenever the store is correct; the record is checked too."""
    winners = [k for k, o in enumerate(outcomes) if o.code == "ok"]
    order = winners + [k for k in range(len(ops)) if k not in winners]
    steps = [(k, h.linearize(actors[k], ops[k], outcomes[k])) for k in order]
    if winners_expected is not None and len(winners) != winners_expected:
        raise violation(
            clause,
            f"{len(winners)} of {len(ops)} concurrent {ops[0].name} calls succeeded; "
            f"exactly {winners_expected} must",
            tuple(h.trace),
        )
    for k, step in steps:
        if not agrees(step.outcome, outcomes[k]):
            raise violation(
                clause,
                f"{actors[k]}'s {answered(ops[k].name, outcomes[k])}; in no order of the racing "
                f"calls can it answer that (expected {step.outcome})",
                tuple(h.trace),
            )
    h.check_record(ops[order[0]], steps[-1][1], clause=clause)
    h.exercised(clause)
