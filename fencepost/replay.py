"""Replay a counterexample by hand: the script a failing check prints uses this.

Example (what ``fencepost check`` prints under "replay as code")::

    from fencepost.replay import Replay
    from fencepost.spec.adk_ledger import *

    r = Replay("adk-ledger", "my_ledger:make_ledger", start_ms=1000000)
    r.apply("client", Create(invocation_id="a", metadata={}, checkpoint={}))
    r.apply("c1", Claim(invocation_id="a", owner="c1", owner_token="t1", now_ms=1000000,
                        lease_ms=10))
    r.set_time(1000010)
    r.apply("c1", Renew(invocation_id="a", owner_token="t1", now_ms=1000010, lease_ms=10))

Each ``apply`` runs the op on a fresh store and on the model and raises
:class:`~fencepost.scenarios.harness.ClauseViolation` at the first difference.
"""

from __future__ import annotations

import uuid
from typing import Any

from fencepost.scenarios.clock import SimClock
from fencepost.scenarios.harness import Harness, World
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome

from .registry import contract as contract_entry
from .registry import resolve_adapter


class Replay:
    """A harness over a fresh store of ``adapter`` (an adapter spec or a factory)."""

    def __init__(
        self,
        contract: str,
        adapter: Any,
        *,
        start_ms: int = 1_000_000,
        options: dict[str, str] | None = None,
    ) -> None:
        from fencepost.model.base import options_with_defaults

        suite = contract_entry(contract).suite
        factory, _ = resolve_adapter(contract, adapter)
        self._factory = factory
        self.world = World(
            model=suite.model,
            factory=factory,
            clock=SimClock(start_ms),
            namespace=f"replay{uuid.uuid4().hex[:8]}",
            options=options_with_defaults(
                suite.model.choices, options or {}, suite.model.settings
            ),
        )
        store = self.world.open()
        self.world.capabilities = frozenset(getattr(store, "capabilities", frozenset()))
        self.h = Harness(self.world)

    def apply(self, actor: str, op: Op, bind: str | None = None) -> Outcome:
        return self.h.apply(actor, op, bind)

    def set_time(self, ms: int) -> None:
        self.h.set_time(ms)

    def kill(self, owner: str) -> None:
        self.h.kill(owner)

    def reopen(self) -> None:
        self.h.reopen()

    def close(self) -> None:
        self.world.discard()
        close = getattr(self._factory, "close", None)
        if close is not None:
            close()
