"""Named scripted scenarios for ledgence-tasks: the cases of the project's own tests, one module
per family of operations, and :data:`SCENARIOS`, all of them in one registry.

The runner numbers scenarios in registry order (the number prefixes each one's ids), so the
order is written here, once, and does not depend on which module is imported first:
:mod:`.submissions`, :mod:`.acquisition`, :mod:`.settlement` (renewal and settlement),
:mod:`.recovery` (expiry, cancel and recovery), :mod:`.pagination`, :mod:`.dispatch`, then
:mod:`.edges` (every argument at its edges). The calls they are written in are in
:mod:`.calls`, re-exported here.
"""

from __future__ import annotations

from ..checks import Scenarios
from . import acquisition, dispatch, edges, pagination, recovery, settlement, submissions
from .calls import (
    DESCRIPTOR,
    OTHER,
    PROGRAM,
    QUEUE,
    SCOPE,
    acquire,
    app_failure,
    claim,
    command,
    confirm,
    context,
    failure,
    history,
    last_attempt,
    last_task,
    lease_expiry,
    on_own_store,
    open_ws,
    owner,
    page,
    probe,
    reads,
    renew,
    settle,
    submit,
    submit_task,
    success,
    task_input,
)

__all__ = [
    "DESCRIPTOR", "OTHER", "PROGRAM", "QUEUE", "SCENARIOS", "SCOPE", "acquire", "app_failure",
    "claim", "command", "confirm", "context", "failure", "history", "last_attempt", "last_task",
    "lease_expiry", "on_own_store", "open_ws", "owner", "page", "probe", "reads", "renew",
    "settle", "submit", "submit_task", "success", "task_input",
]

FAMILIES = (submissions.SCENARIOS, acquisition.SCENARIOS, settlement.SCENARIOS,
            recovery.SCENARIOS, pagination.SCENARIOS, dispatch.SCENARIOS, edges.SCENARIOS)
"""Each module's scenarios, in the order they register."""


def _all_of(families: tuple[Scenarios, ...]) -> Scenarios:
    """One registry of every family's scenarios, in order; a name used twice is an error."""
    merged = Scenarios()
    for part in families:
        for name, fn in part.items():
            if name in merged:
                raise ValueError(f"two ledgence-tasks scenarios are named {name}: rename one")
            merged[name] = fn
            merged.requires[name] = part.requires[name]
    return merged


SCENARIOS = _all_of(FAMILIES)
