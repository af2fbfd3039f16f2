"""Registries of named checks: each contract's scripted scenarios and races register here.

Example::

    SCENARIOS = Scenarios()

    @SCENARIOS.register("durable")
    def reopen_fences_the_last_boot(h: Harness, prefix: str) -> None: ...
"""

from __future__ import annotations

from collections.abc import Callable

from .harness import Harness

Scenario = Callable[[Harness, str], None]
Race = Callable[[Harness, str, int, int], None]


class Scenarios(dict[str, Scenario]):
    """name -> ``fn(harness, prefix)``; ``requires[name]`` the capabilities it needs."""

    def __init__(self) -> None:
        super().__init__()
        self.requires: dict[str, frozenset[str]] = {}

    def register(self, *requires: str) -> Callable[[Scenario], Scenario]:
        def add(fn: Scenario) -> Scenario:
            self[fn.__name__] = fn
            self.requires[fn.__name__] = frozenset(requires)
            return fn

        return add


class Races(dict[str, Race]):
    """name -> ``fn(harness, prefix, racers, round_no)``."""

    def register(self, fn: Race) -> Race:
        self[fn.__name__] = fn
        return fn
