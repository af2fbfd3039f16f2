"""Progress on stderr for long runs: one rewritten line on a terminal, phase changes otherwise."""

from __future__ import annotations

import sys
from typing import Any


def progress_printer(enabled: bool) -> Any:
    """Progress on stderr: one rewritten line on a terminal, phase changes otherwise."""
    tty = sys.stderr.isatty()
    last_phase = [""]

    from .supervisor import STATUS

    def show(message: str) -> None:
        STATUS.say("phase", message)
        if not enabled:
            return
        if tty:
            sys.stderr.write("\r\033[K" + message[:150])
            sys.stderr.flush()
            return
        phase = message.split(":")[0].split(" ")[0]
        if phase != last_phase[0]:
            last_phase[0] = phase
            print(f"... {message}", file=sys.stderr, flush=True)

    def done() -> None:
        if enabled and tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()

    show.done = done  # type: ignore[attr-defined]
    return show
