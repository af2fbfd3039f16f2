"""What a reopen of a ``snodo-tasks`` store changes: :func:`reopened`, the model's
:attr:`~fencepost.model.base.ContractModel.reopen`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.spec import snodo_tasks as spec

from ..base import Reopened
from .records import BEFORE_REOPEN, MAIN, AccessM, LeaseM, State


def reopened(state: State, bindings: Mapping[str, tuple[Any, Any]],
             options: Mapping[str, str]) -> Reopened:
    """A reopen is a restart of the store, as the seed's durable stores make one: every record
    kept, every access and lease issued before void, as another store's; the claims kept live
    until their deadline, or released (``reopen_claims``). The harness then reads each task
    back through a new get-access (``obs:<task_id>``)."""
    released = {tid: attrs.evolve(agg, claim=None) for tid, agg in state.items()
                if agg.claim is not None
                } if spec.option(options, "reopen_claims") == "released" else {}
    voided = {name: attrs.evolve(meaning, store=BEFORE_REOPEN)
              for name, (meaning, _) in bindings.items()
              if isinstance(meaning, AccessM | LeaseM) and meaning.store == MAIN}
    again = [(spec.Authorize(spec.Context(m.scope), spec.Action(m.kind, m.task_id)), name)
             for name, (m, _) in bindings.items()
             if name.startswith("obs:") and isinstance(m, AccessM) and m.store == MAIN]
    return (state.with_(released) if released else state), voided, again
