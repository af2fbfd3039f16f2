"""A contract's checks as one bundle the runner can execute."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from fencepost.model.base import ContractModel
from fencepost.spec.clauses import Catalogue

from .harness import World


@attrs.frozen
class Suite:
    """Everything the runner needs to check one contract.

    - ``scenarios``: name -> ``fn(harness, prefix)``, with ``scenario_requires`` capabilities;
    - ``machine_for(world)``: the Hypothesis state-machine class bound to a world;
    - ``races``: name -> ``fn(harness, prefix, racers, round_no)``; ``race_gates`` maps a race to
      the (option, value) under which it applies.
    """

    model: ContractModel
    clauses: Catalogue
    protocol_methods: tuple[str, ...]
    capabilities: Mapping[str, str]
    scenarios: Mapping[str, Callable[..., None]]
    scenario_requires: Mapping[str, frozenset[str]]
    machine_for: Callable[[World], Any]
    races: Mapping[str, Callable[..., None]]
    race_gates: Mapping[str, tuple[str, str]] = attrs.field(factory=dict)
