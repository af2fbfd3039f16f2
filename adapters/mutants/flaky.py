"""A flaky backend: a correct store whose backend drops calls under concurrent load, one per
contract (:func:`flaky_mutants`), expected to leave the linearizability clause ``unknown``
(never ``pass``): a store that cannot answer has not shown that its answers are right.

While another call is in flight on the store (a pool of one connection, a lock wait that times
out, a deadlock victim), a call fails: every other such call before it reaches the store
(``backend_unavailable``), the rest after it has written, its answer lost with the connection
(``ConnectionError``). Both are faults, not answers: the call may or may not have taken effect.
A call alone in flight is answered correctly, so the scripted checks, the state machine and the
fault cases see a correct store; the concurrent run (and the races) see the faults. Each call
waits one network round trip (:func:`~.base.round_trip`) at the backend, so calls made together
overlap there even on the in-memory store and over the wire.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from fencepost.spec.errors import BackendUnavailable

from .base import Expected, Mutant, round_trip


class _Load:
    """The calls in flight on the stores of one class (a call a store method makes to another
    of its own methods is part of the outer call), and how many met another in flight."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inflight = 0
        self.shed = 0
        self.local = threading.local()

    def enter(self) -> tuple[bool, str]:
        """Start a call: is it the outermost call of its thread, and when it fails: ``""``
        (it does not: alone in flight), ``"before"`` or ``"after"`` it reaches the store."""
        depth = getattr(self.local, "depth", 0)
        self.local.depth = depth + 1
        if depth:
            return False, ""
        with self.lock:
            crowded = self.inflight > 0
            self.inflight += 1
            if not crowded:
                return True, ""
            self.shed += 1
            return True, "before" if self.shed % 2 else "after"

    def leave(self, outermost: bool) -> None:
        self.local.depth -= 1
        if outermost:
            with self.lock:
                self.inflight -= 1


def flaky_mixin(methods: Iterable[str]) -> type:
    """A mixin that wraps each of the contract's protocol ``methods`` (see the module doc)."""

    load = _Load()

    def wrapped(name: str) -> Callable[..., Any]:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            outermost, fails = load.enter()
            try:
                if fails == "before":
                    raise BackendUnavailable("the backend shed the call: another was in flight")
                if outermost:
                    round_trip(self.env)  # to the backend: calls made together overlap there
                answer = getattr(super(mixin, self), name)(*args, **kwargs)
                if fails == "after":
                    raise ConnectionError("the connection dropped before the answer came back")
                return answer
            finally:
                load.leave(outermost)

        method.__name__ = method.__qualname__ = name
        return method

    mixin = type("FlakyBackend", (), {name: wrapped(name) for name in methods})
    return mixin


def flaky_mutants(spec: Any) -> tuple[Mutant, ...]:
    """The flaky-backend mutant of the contract whose spec package is ``spec`` (its
    ``CLAUSES`` and ``PROTOCOL_METHODS``); each contract's mutants call it, so that this module
    imports no contract."""
    [clause] = [c.id for c in spec.CLAUSES if "concurrent" in c.checks]
    return (
        Mutant("flaky_backend", "the backend drops calls made while another is in flight "
               "(before the call, or after it wrote with the answer lost): a correct store "
               "that cannot answer under load", clause, flaky_mixin(spec.PROTOCOL_METHODS),
               expected=Expected.UNKNOWN),
    )

