"""A contract's checks as one bundle the runner can execute."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from types import ModuleType
from typing import Any

import attrs

from fencepost.model.base import ContractModel
from fencepost.spec.clauses import Catalogue
from fencepost.spec.ops import Op

from .checks import Races, Scenarios
from .concurrent import WorkloadFactory
from .fault_checks import Faults
from .harness import World


@attrs.frozen
class Suite:
    """Everything the runner needs to check one contract.

    - ``scenarios``: name -> ``fn(harness, prefix)``; ``scenarios.requires[name]`` the
      capabilities it needs;
    - ``machine_for(world)``: the Hypothesis state-machine class bound to a world;
    - ``races``: name -> ``fn(harness, prefix, racers, round_no)``; ``race_gates`` maps a race to
      the (option, value) under which it applies;
    - ``workload(prefix)``: the contract's concurrent workload (see
      :mod:`fencepost.scenarios.concurrent`); ``partition(op)`` how its histories split for the
      linearizability check (default: by ``op.key()``);
    - ``faults``: the cases checked under injected database faults (see
      :mod:`fencepost.scenarios.fault_checks`), for stores that expose their SQLAlchemy engine;
    - ``tours``: the transition tour's scopes by name (``ci``, ``full``; see
      :mod:`fencepost.scenarios.tour`), none if the contract has no tour;
    - ``concurrent_scale``: how many times the profile's concurrent calls the contract's run
      makes (unless ``--ops`` names them): a workload that spreads its calls over many kinds
      needs more of them for as many races of each kind.
    """

    model: ContractModel
    clauses: Catalogue
    protocol_methods: tuple[str, ...]
    capabilities: Mapping[str, str]
    scenarios: Scenarios
    machine_for: Callable[[World], Any]
    races: Races
    race_gates: Mapping[str, tuple[str, str]] = attrs.field(factory=dict)
    workload: WorkloadFactory | None = None
    partition: Callable[[Op], Hashable | None] | None = None
    faults: Faults | None = None
    tours: Mapping[str, Any] = attrs.field(factory=dict)
    concurrent_scale: int = 1

    @classmethod
    def of(
        cls,
        spec: ModuleType,
        model: ContractModel,
        machine_for: Callable[[World], Any],
        scenarios: Scenarios,
        races: Races,
        **overrides: Any,
    ) -> Suite:
        """A suite whose catalogue, protocol and capabilities come from the ``spec`` module."""
        fields: dict[str, Any] = {
            "clauses": spec.CLAUSES,
            "protocol_methods": spec.PROTOCOL_METHODS,
            "capabilities": spec.CAPABILITIES,
            **overrides,
        }
        return cls(model=model, machine_for=machine_for, scenarios=scenarios, races=races,
                   **fields)
