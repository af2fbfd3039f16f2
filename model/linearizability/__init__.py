"""The linearizability checker's public API (see :mod:`.check`): is a concurrent history
linearizable against a contract's reference model?"""

from __future__ import annotations

from .check import (
    DEFAULT_BUDGET_S,
    LINEARIZABLE,
    NOT_LINEARIZABLE,
    UNKNOWN,
    CheckResult,
    Counterexample,
    PartitionResult,
    Verdict,
    check_history,
    default_partition,
    partitions,
    render_counterexample,
    segments,
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
