"""Reference model of the ``adk-ledger`` contract: :data:`MODEL` and its public names
(see :mod:`.steps`).

- :mod:`.steps`: the state, one rule per operation, the argument guards, :func:`step` and
  :data:`MODEL`;
- :mod:`.situations`: the situations each step covers.
"""

from __future__ import annotations

from .steps import (
    ARGUMENT_CLAUSES,
    ARGUMENT_CODES,
    EMPTY,
    FIELD_CLAUSES,
    MODEL,
    NORMALIZED_PHASES,
    State,
    admits,
    answer_clause,
    binary,
    default_options,
    guard_edges,
    integer,
    owner_node,
    step,
    stored_outcome,
    valid_finish_phase,
    view,
)

__all__ = [
    "ARGUMENT_CLAUSES",
    "ARGUMENT_CODES",
    "EMPTY",
    "FIELD_CLAUSES",
    "MODEL",
    "NORMALIZED_PHASES",
    "State",
    "admits",
    "answer_clause",
    "binary",
    "default_options",
    "guard_edges",
    "integer",
    "owner_node",
    "step",
    "stored_outcome",
    "valid_finish_phase",
    "view",
]
