"""The ledgence-tasks checks as one :class:`Suite`."""

from fencepost.model.ledgence_tasks import MODEL
from fencepost.spec import ledgence_tasks as spec

from ..suite import Suite
from .faults import FAULTS
from .machine import machine_for
from .races import RACES
from .scripted import SCENARIOS
from .tour import SCOPES
from .workload import workload

SUITE = Suite.of(spec, MODEL, machine_for, SCENARIOS, RACES, workload=workload,
                 faults=FAULTS, tours=SCOPES)
