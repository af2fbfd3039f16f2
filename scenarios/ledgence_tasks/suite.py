"""The ledgence-tasks checks (first slice) as one :class:`Suite`."""

from fencepost.model.ledgence_tasks import MODEL
from fencepost.spec import ledgence_tasks as spec

from ..suite import Suite
from .machine import machine_for
from .races import RACES
from .scripted import REQUIRES, SCENARIOS

SUITE = Suite(
    model=MODEL,
    clauses=spec.CLAUSES,
    protocol_methods=spec.PROTOCOL_SLICE,
    capabilities=spec.CAPABILITIES,
    scenarios=SCENARIOS,
    scenario_requires=REQUIRES,
    machine_for=machine_for,
    races=RACES,
)
