"""``fencepost bench``, section 5: what the wire protocol costs.

For each store behind ``fencepost-wire/1`` (the contract's memory store served by ``fencepost
serve``, and the stores in other languages of ``examples/`` where their toolchain is installed):

- **steps per second** of the contract's state machine through the protocol, as ``check`` runs
  it, beside the same machine on the in-process memory store (measured in the same run);
- **the per-call round trip**: one cheap call (the contract's operation with the fewest
  arguments, see :func:`fencepost.wire_spec.probe_call`) repeated, median and p99 in µs, beside
  the same call on the in-process memory store. For the served memory store the difference is
  exactly what the protocol adds (same store, same call); the target is at most
  :data:`ADDED_TARGET_US` µs median;
- **the same round trip on one core**: the kit's thread and the store's process pinned to one
  core (Linux only). A request and its reply each wake a sleeping process; on a small virtual
  machine a wake-up across cores costs far more than the protocol's own work (a bare pipe ping
  of two processes: about 3 µs on one core, 60-70 µs across two on the machine issue 29 was
  measured on), and where the scheduler puts the two drifts from minute to minute. On one core
  the figure is the protocol's own cost.
"""

from __future__ import annotations

import os
import shlex
import shutil
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from fencepost.scenarios.said import Progress, Said

from .adapter_spec import resolve_adapter
from .contract import Factory
from .env import AdapterEnv
from .registry import contract_named
from .wire_spec import exec_factory, probe_call

ROOT_EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "examples")
"""The examples of a checkout (an installed kit has none: only the served store is measured)."""
ADDED_TARGET_US = 100.0
"""The most the protocol may add to a call's median round trip, in µs (a PostgreSQL round trip
is about 100 µs, so a store on a real database is not slowed noticeably)."""


@attrs.frozen
class WireRow:
    """One store behind the protocol: its steps per second and per-call round trip."""

    contract: str
    store: str
    steps_per_s: float | None
    memory_steps_per_s: float | None
    median_us: float | None
    p99_us: float | None
    memory_median_us: float
    calls: int
    note: str = ""
    one_core_median_us: float | None = None
    """The median round trip with the kit's thread and the store pinned to one core (None:
    not measured: no ``sched_setaffinity``, or the store could not be measured)."""

    @property
    def added_us(self) -> float | None:
        """What the protocol adds to the median call (µs)."""
        return None if self.median_us is None else self.median_us - self.memory_median_us

    @property
    def one_core_added_us(self) -> float | None:
        """What the protocol adds to the median call on one core (µs)."""
        return (None if self.one_core_median_us is None
                else self.one_core_median_us - self.memory_median_us)


FLOOR = """
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    kind = r.get("type")
    if kind == "hello":
        out = {"ok": {"name": "floor", "version": "0", "capabilities": []}}
    elif kind == "call":
        out = {"error": {"code": "backend_unavailable", "detail": "", "payload": None}}
    else:
        out = {"ok": None}
    sys.stdout.write(json.dumps({"id": r["id"], **out}) + "\\n")
    sys.stdout.flush()
    if kind == "shutdown":
        break
"""
"""The protocol floor: an adapter that stores nothing and answers every call at once (in
Python, one JSON parse and one write a line, reading its requests asleep as a plain adapter
does): its round trip is what the protocol itself costs, the kit's side and the transport, with
such an adapter. ``fencepost serve`` waits for its requests awake, and can come under it."""


def wire_stores(name: str) -> list[tuple[str, str]]:
    """``(label, exec command)`` of every protocol store of contract ``name`` this machine
    can run: the protocol floor and the served memory store always, an example where its
    toolchain is installed."""
    stores = [("protocol floor (answers at once)", shlex.join([sys.executable, "-c", FLOOR])),
              ("memory served", f"{sys.executable} -m fencepost.cli serve {name}")]
    for label, program, path in EXAMPLE_STORES.get(name, ()):
        script = os.path.join(ROOT_EXAMPLES, path)
        if os.path.exists(script) and shutil.which(program) is not None:
            stores.append((label, f"{program} {script}"))
    return stores


EXAMPLE_STORES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "adk-ledger": (("Erlang (examples/erlang)", "escript", "erlang/adk_ledger.escript"),),
    "snodo-tasks": (("Node.js (examples/node)", "node", "node/snodo_tasks.js"),),
}


def round_trips(factory: Factory, name: str, calls: int) -> list[float]:
    """Seconds of each of ``calls`` probe calls on a fresh store of ``factory``."""
    from fencepost.spec.errors import ContractError
    from fencepost.spec.ops import operations

    call = probe_call(name)
    op = operations(name)[call["op"]](**call["args"])
    env = AdapterEnv(clock=lambda: 1_000, namespace=f"rt{uuid.uuid4().hex[:8]}")
    store = factory(env)
    times = []
    try:
        for _ in range(calls):
            started = time.perf_counter()
            try:
                op.invoke(store)
            except ContractError:
                pass
            times.append(time.perf_counter() - started)
    finally:
        close, discard = getattr(store, "close", None), getattr(factory, "discard", None)
        if close is not None:
            close()
        if discard is not None:
            discard(env)
    return times


def one_core_round_trips(contract: Any, command: str, name: str,
                         calls: int) -> list[float] | None:
    """:func:`round_trips` of the store ``command`` starts with this thread and the store's
    process on one core (the process inherits the thread's affinity when it starts); this
    thread's affinity is restored after. None where threads cannot be pinned."""
    setaffinity = getattr(os, "sched_setaffinity", None)
    getaffinity = getattr(os, "sched_getaffinity", None)
    if setaffinity is None or getaffinity is None:
        return None
    allowed = getaffinity(0)
    setaffinity(0, {min(allowed)})
    try:
        factory = exec_factory(contract, command)
        try:
            return round_trips(factory, name, calls)
        finally:
            close = getattr(factory, "close", None)
            if close is not None:
                close()
    finally:
        setaffinity(0, allowed)


def _us(times: Sequence[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e6


def bench_wire(name: str, machine_rate: Callable[[str, str, Factory], Any], calls: int,
               progress: Progress) -> list[WireRow]:
    """Section 5 for contract ``name``; ``machine_rate(name, target, factory)`` is section 1's
    measure (a :class:`~fencepost.bench.Rate`)."""
    contract = contract_named(name)
    memory, _ = resolve_adapter(name, "memory")
    progress(Said.of(f"wire/{name}", "in-process memory round trips"))
    memory_median = statistics.median(round_trips(memory, name, calls)) * 1e6
    memory_rate = machine_rate(name, "memory", resolve_adapter(name, "memory")[0]).per_second
    rows = []
    for label, command in wire_stores(name):
        progress(Said.of(f"wire/{name}", label))
        factory = exec_factory(contract, command)
        try:
            times = round_trips(factory, name, calls)
            pinned = one_core_round_trips(contract, command, name, calls)
            one_core = statistics.median(pinned) * 1e6 if pinned else None
            if command.endswith(shlex.quote(FLOOR)):  # it stores nothing: no state machine
                rows.append(WireRow(name, label, None, memory_rate, statistics.median(times) * 1e6,
                                    _us(times, 0.99), memory_median, calls, "-", one_core))
                continue
            rate = machine_rate(name, label, exec_factory(contract, command))
        except Exception as e:  # noqa: BLE001 - a store that cannot be measured says why
            rows.append(WireRow(name, label, None, memory_rate, None, None, memory_median,
                                calls, f"{type(e).__name__}: {e}"[:80]))
            continue
        finally:
            close = getattr(factory, "close", None)
            if close is not None:
                close()
        rows.append(WireRow(name, label, rate.per_second, memory_rate,
                            statistics.median(times) * 1e6, _us(times, 0.99), memory_median,
                            calls, rate.note, one_core))
    return rows
