"""How hard a run looks: the named profiles (``--profile quick|standard|thorough``)."""

from __future__ import annotations

import attrs

from .shrinking import UNLIMITED, Shrinking


@attrs.frozen
class Profile:
    """How hard to look: state-machine examples and steps, race rounds and racers, and the
    concurrent run's workers and calls (``concurrency`` 0: no concurrent run), and how long the
    state machine may shrink each broken clause's counterexample (``--shrink-budget``)."""

    name: str
    examples: int
    steps: int
    race_rounds: int
    racers: int
    concurrency: int = 0
    concurrent_ops: int = 0
    shrink: Shrinking = UNLIMITED


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


