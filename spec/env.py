"""What an adapter factory receives: ``factory(env) -> store``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs


def _always_alive(owner: str) -> bool:
    return True


def _nobody_dead() -> frozenset[str]:
    return frozenset()


def _nothing_else_to_run() -> None:
    return None


@attrs.frozen
class AdapterEnv:
    """The world an adapter is built in.

    - ``clock()``: the store-authoritative time in integer ms (the kit's simulated clock);
    - ``is_alive(owner)``: the owner-liveness oracle (only adapters declaring the capability
      ``owner_liveness`` need consult it); ``dead_owners()`` the owners it says are dead now
      (what the wire protocol sends with each call);
    - ``namespace``: a string unique to the run, for naming tables and keys so that a run never
      touches anything else;
    - ``options``: contract options (documented choices, capacity limits...), all strings;
    - ``waiting()``: a store about to wait on something outside the process (a round trip to
      its database) may call it first, so that a server running many calls on its behalf
      (``fencepost serve``) reads and runs the calls in flight meanwhile, as a threaded
      server does; in process it does nothing (the kit's workers are threads already).

    Calling a factory twice with the same env must reopen the same data when the store declares
    the capability ``durable``.

    Example::

        def make_ledger(env: AdapterEnv) -> MyLedger:
            return MyLedger(dsn=os.environ["DSN"], table=f"ledger_{env.namespace}",
                            clock=env.clock)
    """

    clock: Callable[[], int]
    namespace: str
    is_alive: Callable[[str], bool] = _always_alive
    dead_owners: Callable[[], frozenset[str]] = _nobody_dead
    options: Mapping[str, Any] = attrs.field(factory=dict)
    waiting: Callable[[], None] = _nothing_else_to_run
