"""What a run says of its progress: :class:`Said` events, rendered by the front
(:mod:`fencepost.progress`)."""

from __future__ import annotations

from collections.abc import Callable

import attrs

MACHINE_PHASE = "state machine"
"""The phase of the state machine's progress."""


@attrs.frozen
class Said:
    """One progress event: the ``phase`` of the work (``scenario``, ``state machine``, ``race``,
    ``concurrent``; the front adds its own, ``mutant``, ``machine/adk-ledger``) and the ``line``
    shown for it (``scenario 3/40: create_twice``). The front renders it (a terminal rewrites
    one line; a log prints a line when the phase changes); nothing parses the line."""

    phase: str
    line: str

    def __str__(self) -> str:
        return self.line

    @classmethod
    def of(cls, phase: str, doing: str) -> Said:
        """The event whose line is ``PHASE: DOING``."""
        return cls(phase, f"{phase}: {doing}")

    def within(self, prefix: str) -> Said:
        """This event as part of a larger job's (``seed 2/5``): its phase and line prefixed."""
        return Said(f"{prefix} {self.phase}", f"{prefix}: {self.line}")


Progress = Callable[[Said], None]
"""How a run says what it is doing: called with a :class:`Said` per check or phase it starts
(the one definition; the front's runners, bench and ``--jobs`` pass the same callables)."""


def quiet(_: Said) -> None:
    """A progress that says nothing."""
