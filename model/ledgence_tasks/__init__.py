"""Reference model of ``ledgence-tasks``: :data:`MODEL` and its public names (see :mod:`.steps`).

- :mod:`.steps`: sessions, submissions, reads and listing, the step table, :func:`step` and
  :data:`MODEL`;
- :mod:`.records`: the state, how answers are made, liveness and authority, shared lookups;
- :mod:`.acquisition`: ``probe_acquisition``, ``acquire``, ``claim_dispatch``;
- :mod:`.attempts`: ``renew``, ``settle``, ``confirm_quiescence``, ``cancel``,
  ``expire_batch``;
- :mod:`.blame`: which clause a differing answer breaks;
- :mod:`.situations` and :mod:`.worker_situations`: the situations each step covers.
"""

from __future__ import annotations

from .steps import EMPTY, MODEL, State, changed, observer, page_key, step

__all__ = ["EMPTY", "MODEL", "State", "changed", "observer", "page_key", "step"]
