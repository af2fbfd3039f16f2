"""The simulated clock: integer milliseconds that never go backwards."""

from __future__ import annotations

import threading


class ClockWentBackwards(ValueError):
    """Raised when a caller asks the simulated clock to move back in time."""


class SimClock:
    """The one source of time in a run. ``now()`` is what stores see as ``env.clock()``.

    Example::

        >>> c = SimClock(1_000)
        >>> c.advance(5); c.now()
        1005
        >>> c.set(1005)   # staying put is fine; going back is not
    """

    def __init__(self, start: int = 0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> int:
        return self._now

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ClockWentBackwards(f"advance({ms}): the simulated clock never goes backwards")
        with self._lock:
            self._now += ms
            return self._now

    def set(self, ms: int) -> int:
        with self._lock:
            if ms < self._now:
                raise ClockWentBackwards(
                    f"set({ms}) is before now ({self._now}): the simulated clock never goes back"
                )
            self._now = ms
            return self._now
