"""Python's garbage collector during a run: fewer, cheaper collections.

A run allocates many small, short-lived objects per step (the model's answers, the trace, the
values compared), and by then the process holds hundreds of thousands of long-lived ones (the
contract, Hypothesis, the store's library). At Python's default thresholds a full collection
ran every few hundred steps and walked all of them: a fifth of the kit's own time per step on
ledgence-tasks (``fencepost bench``'s overhead table). Inside :func:`collecting_less`, what
existed when the run began is frozen (:func:`gc.freeze`: never walked again until the run
ends) and the youngest generation is collected ten times less often; on the way out both are
restored, so a process that runs the kit (a test session, the plugin) gets its own settings
back. Nothing is left uncollected for longer than the run.

Example::

    with collecting_less():
        run_the_checks()
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNGEST = 10
"""How many times Python's default first threshold (700 allocations) a run waits before it
collects the youngest generation."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def collecting_less() -> Iterator[None]:
    """Freeze what exists and collect the young less often, until the outermost ``with``
    ends (nested and concurrent runs share one setting)."""
    global _depth, _saved
    with _lock:
        _depth += 1
        if _depth == 1:
            _saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(_saved[0] * YOUNGEST, _saved[1], _saved[2])
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()
                _saved = None
