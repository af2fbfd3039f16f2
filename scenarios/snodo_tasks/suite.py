"""The snodo-tasks checks as one :class:`Suite`."""

from fencepost.model.snodo_tasks import MODEL
from fencepost.spec import snodo_tasks as spec

from ..suite import Suite
from .faults import FAULTS
from .machine import machine_for
from .races import RACES
from .scripted import SCENARIOS
from .tour import SCOPES
from .workload import workload

SUITE = Suite.of(spec, MODEL, machine_for, SCENARIOS, RACES, workload=workload,
                 faults=FAULTS, tours=SCOPES)
