"""The adk-ledger checks as one :class:`Suite`."""

from fencepost.model.adk_ledger import MODEL
from fencepost.spec import adk_ledger as spec

from ..suite import Suite
from .machine import machine_for
from .races import CHOICE_GATES, RACES
from .scripted import REQUIRES, SCENARIOS

SUITE = Suite(
    model=MODEL,
    clauses=spec.CLAUSES,
    protocol_methods=spec.PROTOCOL_METHODS,
    capabilities=spec.CAPABILITIES,
    scenarios=SCENARIOS,
    scenario_requires=REQUIRES,
    machine_for=machine_for,
    races=RACES,
    race_gates=CHOICE_GATES,
)
