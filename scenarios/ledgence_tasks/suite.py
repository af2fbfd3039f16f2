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

CONCURRENT_SCALE = 2
"""ledgence's concurrent run makes twice the profile's calls: its workload spreads them over
seventeen kinds of call, and at the profile's count a run now and then held no two consumers
racing for one task (about one run in a hundred at quick, more on a loaded machine: the
non-atomic acquisition then passed LDG-LIN-001). At twice the count the fewest such races in
300 runs of that store was 5 (2 with both cores busy)."""

SUITE = Suite.of(spec, MODEL, machine_for, SCENARIOS, RACES, workload=workload,
                 faults=FAULTS, tours=SCOPES, concurrent_scale=CONCURRENT_SCALE)
