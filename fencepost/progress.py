"""Progress on stderr for long runs.

On a terminal, one line rewritten in place: the phase, the check done of the phase's total, the
current check and the time since the run began (``scenario 7/40:
stale_token_cannot_commit_after_takeover (12.3 s)``). Elsewhere (a CI log, a pipe) one line per
phase, when it begins, after ``... ``. Nothing with ``--quiet``.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def progress_printer(enabled: bool) -> Any:
    """A ``progress(message)`` callable as the module's docstring says, with ``done()`` to
    clear the terminal's line at the end."""
    tty = sys.stderr.isatty()
    last_phase = [""]
    began = time.monotonic()

    from .supervisor import STATUS

    def show(message: str) -> None:
        STATUS.say("phase", message)
        if not enabled:
            return
        line = f"{message} ({time.monotonic() - began:.1f} s)"
        if tty:
            sys.stderr.write("\r\033[K" + line[:150])
            sys.stderr.flush()
            return
        phase = message.split(":")[0].split(" ")[0]
        if phase != last_phase[0]:
            last_phase[0] = phase
            print(f"... {line}", file=sys.stderr, flush=True)

    def done() -> None:
        if enabled and tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()

    show.done = done  # type: ignore[attr-defined]
    return show
