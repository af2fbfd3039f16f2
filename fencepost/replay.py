"""Replay a counterexample by hand: the script a failing check prints uses this.

Example (what ``fencepost check`` prints under "replay as code")::

    from fencepost.replay import Replay
    from fencepost.spec.adk_ledger import *

    r = Replay("adk-ledger", "my_ledger:make_ledger", start_ms=1767225600000)
    r.apply("client", Create(invocation_id="a", metadata={}, checkpoint={}))
    r.apply("c1", Claim(invocation_id="a", owner="c1", owner_token="t1",
                        now_ms=1767225600000, lease_ms=10))
    r.set_time(1767225600010)
    r.apply("c1", Renew(invocation_id="a", owner_token="t1", now_ms=1767225600010,
                        lease_ms=10))

Each ``apply`` runs the op on a fresh store and on the model and raises
:class:`~fencepost.scenarios.harness.ClauseViolation` at the first difference: of the step's
own clause, or of the clause the check ran it under (``blamed_on="..."``, as a scripted check
blames what did not survive a reopen on its durability clause).
"""

from __future__ import annotations

import uuid
from typing import Any

from fencepost.scenarios.harness import Harness
from fencepost.scenarios.harness import blamed_on as blame
from fencepost.scenarios.runner import (
    CLOCK_START,
    close_factory,
    drop_live,
    new_world,
    open_checked,
)
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome

from .adapter_spec import resolve_adapter
from .registry import contract_named


class Replay:
    """A harness over a fresh store of ``adapter`` (an adapter spec or a factory)."""

    def __init__(
        self,
        contract: str,
        adapter: Any,
        *,
        start_ms: int = CLOCK_START,
        options: dict[str, str] | None = None,
    ) -> None:
        suite = contract_named(contract).suite
        factory, _ = resolve_adapter(contract, adapter)
        self.world = new_world(suite, factory, options=options,
                               namespace=f"replay{uuid.uuid4().hex[:8]}", start_ms=start_ms)
        open_checked(suite, self.world)  # protocol and capabilities, as the run that failed
        self.h = Harness(self.world)

    def apply(self, actor: str, op: Op, bind: str | None = None, blamed_on: str | None = None,
              fields: tuple[str, ...] | None = None) -> Outcome:
        """Run ``op`` on the store and the model; a difference raises the violation of the
        step's own clause, or of ``blamed_on`` (in ``fields`` only, if given) where the check
        ran the step inside such a block (a reopen's read-back: what differs did not
        survive)."""
        if blamed_on is None:
            return self.h.apply(actor, op, bind)
        with blame(self.h, blamed_on, fields):
            return self.h.apply(actor, op, bind)

    def set_time(self, ms: int) -> None:
        self.h.set_time(ms)

    def kill(self, owner: str) -> None:
        self.h.kill(owner)

    def reopen(self) -> None:
        self.h.reopen()

    def open_beside(self) -> None:
        """Open another store beside the open one: the calls go to it until
        :meth:`close_beside`."""
        self.h.open_beside()

    def close_beside(self) -> None:
        self.h.close_beside()

    def close(self) -> None:
        """Drop the replay's data and close the adapter's factory."""
        drop_live(self.world)
        interrupted = close_factory(self.world)
        if interrupted is not None:
            raise interrupted
