"""How a run that was interrupted ends: light to import (the command's supervising parent
catches it without loading the simulation)."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runner import RunResult


class Interrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C, or SIGTERM/SIGHUP turned into this by the CLI); its data
    was dropped. ``result`` holds the verdicts reached so far, ``signum`` the signal."""

    def __init__(self, signum: int, result: RunResult | None = None) -> None:
        super().__init__(signum)
        self.signum = signum
        self.result = result
        self.report: Any = None
        """The partial report, set by :func:`fencepost.check`."""

    @property
    def signal_name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"
