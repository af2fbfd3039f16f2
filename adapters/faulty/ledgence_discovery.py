"""Known-faulty ledgence-tasks stores: paginated discovery and targeted dispatch. Each is the
correct core with one bug, caught by its expected clause."""

from __future__ import annotations

from fencepost.adapters.faulty.base import Mutant

MUTANTS: tuple[Mutant, ...] = ()
