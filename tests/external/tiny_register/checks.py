"""The tiny-register checks: two scripted scenarios and a state machine."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from fencepost.authoring import Harness, Races, Scenarios, World, WorldMachine

from .spec import Get, Put

SCENARIOS = Scenarios()
RACES = Races()


@SCENARIOS.register()
def put_then_get(h: Harness, prefix: str) -> None:
    h.apply("c", Get(f"{prefix}a"))
    h.apply("c", Put(f"{prefix}a", "one", 0))
    h.apply("c", Get(f"{prefix}a"))


@SCENARIOS.register()
def stale_put(h: Harness, prefix: str) -> None:
    h.apply("c", Put(f"{prefix}a", "one", 0))
    h.apply("c", Put(f"{prefix}a", "two", 1))
    h.apply("c", Put(f"{prefix}a", "stale", 1))
    h.apply("c", Get(f"{prefix}a"))


class RegisterMachine(WorldMachine):
    @rule(register=st.sampled_from("ab"), value=st.integers(0, 3), version=st.integers(0, 3))
    def put(self, register: str, value: int, version: int) -> None:
        self.h.apply("m", Put(f"{self.prefix}{register}", value, version))

    @rule(register=st.sampled_from("ab"))
    def get(self, register: str) -> None:
        self.h.apply("m", Get(f"{self.prefix}{register}"))


def machine_for(world: World) -> Any:
    return RegisterMachine.bound_to(world)
