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

CONCURRENT_SCALE = 2
"""snodo's concurrent run makes twice the profile's calls. At the profile's count, served over
the protocol with both cores busy, 7 of 100 runs of the store whose claim is a read then a
write held no two workers claiming one task, and the store passed SNODO-LIN-001 (its race
phase still failed it under SNODO-CLAIM-008); at twice the count none of 100 did. In
process the profile's count missed none of 60."""

SUITE = Suite.of(spec, MODEL, machine_for, SCENARIOS, RACES, workload=workload,
                 faults=FAULTS, tours=SCOPES, concurrent_scale=CONCURRENT_SCALE)
