"""Reference model of the ``snodo-tasks`` contract: :data:`MODEL` and its public names
(see :mod:`.steps`).

- :mod:`.steps`: one rule per operation, :func:`step` and :data:`MODEL`;
- :mod:`.records`: the state (``task_id -> Agg``) and the time predicates;
- :mod:`.arguments`: the arguments refused before any rule;
- :mod:`.situations`: the situations each step covers.
"""

from __future__ import annotations

from .records import EMPTY, State
from .steps import MODEL, committed_at, lease_state, observer, reduce, step

__all__ = [
    "EMPTY",
    "MODEL",
    "State",
    "committed_at",
    "lease_state",
    "observer",
    "reduce",
    "step",
]
