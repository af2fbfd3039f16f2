"""How a mutant is described and built on a correct base store."""

from __future__ import annotations

import time
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import attrs

from fencepost.spec.env import AdapterEnv


class Expected(StrEnum):
    """What the kit must conclude on a mutant's expected clause (a ``str``: it is
    written to ``mutants.json`` as its value)."""

    FAIL = "fail"
    """The bug breaks the clause: the kit fails it, with a counterexample."""
    UNKNOWN = "unknown"
    """The store cannot answer (its backend faults): the kit must not pass the clause, and
    says why: it is ``unknown`` because more of the concurrent run's calls faulted than the
    profile allows. Any other verdict, a pass above all, is an escape."""


@attrs.frozen
class Mutant:
    """A correct store with one real-world bug.

    ``bug`` says what is wrong in the words of an incident report; ``expected_clause`` is the
    clause the kit must fail for it (or, ``expected`` :attr:`Expected.UNKNOWN`, must leave
    unknown for its faults); ``mixin`` overrides one piece of the correct store and is
    combined with each base (``memory``, ``sqlite``...) it makes sense on. ``options`` are the
    contract options it is run under: a bug that breaks a rule only one reading of a named
    option holds is caught under that reading. ``crashes``: the bases on which the bug is a
    raise the contract has no word for (a ``KeyError`` on an absent key, a unique index's
    refusal answered as it is); a mutant whose counterexample shows the store raising one
    elsewhere broke on its way, and its catch does not count.
    """

    name: str
    bug: str
    expected_clause: str
    mixin: type
    bases: tuple[str, ...] = ("memory", "sqlite")
    options: Mapping[str, str] = attrs.field(factory=dict)
    expected: Expected = Expected.FAIL
    crashes: tuple[str, ...] = ()

    def crashes_on(self, base: str) -> bool:
        """Is the bug a raise on ``base`` (``exec``: the memory store served)?"""
        return (base if base != "exec" else "memory") in self.crashes

    def store_class(self, base: type) -> type:
        return type(f"{self.mixin.__name__}On{base.__name__}", (self.mixin, base), {})


ROUND_TRIP_S = 0.0005


def round_trip(env: AdapterEnv) -> None:
    """Stand-in for the network round trip (0.5 ms, a LAN) between the two statements of a
    non-atomic adapter: other clients act between its read and its write, as they would
    against a real server (``env.waiting()`` first: a server running the store takes the other
    calls in flight meanwhile). This latency is part of the bug being modelled, not a sleep
    in a test."""
    env.waiting()
    time.sleep(ROUND_TRIP_S)


def int32(value: Any) -> Any:
    """``value`` kept in a 32-bit signed integer (an INT column, a C or Java int): an integer
    outside -2^31..2^31 - 1 wraps (two's complement), a millisecond timestamp of this century
    to a small or negative number; anything else is left as it is. The mutants that keep
    times or durations this way are caught only because the kit sends such values: its clock
    starts at a real date (:data:`~fencepost.scenarios.runner.CLOCK_START`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return (int(value) + 2**31) % 2**32 - 2**31 + (value - int(value))


def lossy_json(value: Any) -> Any:
    """``value`` after a round trip through a store that keeps plain JSON with binary64
    numbers (a JavaScript service, a JSON column, a document store without integers): every
    number a double, written back as an integer when whole (1.0 reads 1, -0.0 reads 0,
    2**53 + 1 reads 2**53), every key text, tuples lists and bytes latin-1 text. The mutants
    that lose values this way are caught by each contract's read-back-exactly clause."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        double = float(value)
        return int(double) if double.is_integer() else double
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, Mapping):
        return {str(k): lossy_json(v) for k, v in value.items()}
    return [lossy_json(v) for v in value]
