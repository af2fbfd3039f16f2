"""The linearizability checker's public API (see :mod:`.check`): is a concurrent history
linearizable against a contract's reference model?"""

from __future__ import annotations

from .check import DEFAULT_BUDGET_S, check_history
from .partition import default_partition, partitions, segments
from .render import render_counterexample
from .verdict import (
    LINEARIZABLE,
    NOT_LINEARIZABLE,
    UNKNOWN,
    CheckResult,
    Counterexample,
    PartitionResult,
    Verdict,
)

__all__ = [
    "DEFAULT_BUDGET_S",
    "LINEARIZABLE",
    "NOT_LINEARIZABLE",
    "UNKNOWN",
    "CheckResult",
    "Counterexample",
    "PartitionResult",
    "Verdict",
    "check_history",
    "default_partition",
    "partitions",
    "render_counterexample",
    "segments",
]
