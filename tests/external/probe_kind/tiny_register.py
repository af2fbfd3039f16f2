"""The tiny-register probes (its ``fencepost.checks`` entry point ``tiny-register.probe``)."""

from __future__ import annotations

from tiny_register.spec import Get, Put

from fencepost.authoring import Harness, Scenarios

PROBES = Scenarios()


@PROBES.register()
def stale_overwrite(h: Harness, prefix: str) -> None:
    """Two writers read version 1; the second put at version 1 must be refused."""
    h.apply("w1", Put(f"{prefix}r", "first", 0))
    h.apply("w1", Put(f"{prefix}r", "mine", 1))
    h.apply("w2", Put(f"{prefix}r", "theirs", 1))
    h.apply("r", Get(f"{prefix}r"))
