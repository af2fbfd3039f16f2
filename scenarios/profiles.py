"""How hard a run looks: the named profiles (``--profile quick|standard|thorough``)."""

from __future__ import annotations

import attrs

from .shrinking import UNLIMITED, Shrinking

MAX_FAULTED = 0.01
"""The share of a concurrent run's calls that may fault (no answer, ``backend_unavailable``, a
lost connection) at every profile: 1 %, so 3 of a quick run's 300 calls, 20 of a standard
run's 2,000. A faulted call is not an answer: with more of them, the linearizability clauses
are ``unknown``, never ``pass``. A healthy backend faults on none."""


@attrs.frozen
class Profile:
    """How hard to look: state-machine examples and steps, race rounds and racers, the
    concurrent run's workers and calls (``concurrency`` 0: no concurrent run) and the share of
    its calls that may fault (``concurrent_max_faulted``: beyond it the history is no evidence,
    see :data:`MAX_FAULTED`), and how long the state machine may shrink each broken clause's
    counterexample (``--shrink-budget``), and which scope of the transition tour runs
    (``--tour``; none by default)."""

    name: str
    examples: int
    steps: int
    race_rounds: int
    racers: int
    concurrency: int = 0
    concurrent_ops: int = 0
    concurrent_max_faulted: float = MAX_FAULTED
    shrink: Shrinking = UNLIMITED
    tour: str = ""
    """The transition tour's scope (``ci``, ``full``: see :mod:`.tour`); "" no tour."""


PROFILES = {
    p.name: p
    for p in (
        Profile("quick", examples=60, steps=30, race_rounds=20, racers=8,
                concurrency=4, concurrent_ops=300,
                shrink=Shrinking(per_clause_s=3.0, total_s=10.0)),
        Profile("standard", examples=300, steps=50, race_rounds=60, racers=8,
                concurrency=8, concurrent_ops=2000,
                shrink=Shrinking(per_clause_s=20.0, total_s=120.0)),
        Profile("thorough", examples=1500, steps=80, race_rounds=200, racers=12,
                concurrency=8, concurrent_ops=6000),
    )
}


