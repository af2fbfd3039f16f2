"""The adk-ledger checks as one :class:`Suite`."""

from fencepost.model.adk_ledger import MODEL
from fencepost.spec import adk_ledger as spec

from ..suite import Suite
from .faults import FAULTS
from .machine import machine_for
from .races import CHOICE_GATES, RACES
from .scripted import SCENARIOS
from .tour import SCOPES
from .workload import workload

SUITE = Suite.of(spec, MODEL, machine_for, SCENARIOS, RACES, race_gates=CHOICE_GATES,
                 workload=workload, faults=FAULTS, tours=SCOPES)
