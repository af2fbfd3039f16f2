"""``fencepost bench``: how fast the kit is on this machine, measured in one run.
Over 500 lines: the result types and the in-process measurements (figures 1 to 4), one
section each, with the run that gathers every figure; the other figures and the rendering are
in modules of their own (``bench_wire``, ``bench_verdict``, ``bench_campaign``,
``bench_render``).

Four figures per contract (see :func:`run_bench`):

1. **State-machine steps per second**: the contract's Hypothesis state machine as ``check`` runs
   it (generation, harness with read-backs, store) on the memory store, SQLite and PostgreSQL,
   and the model alone stepping the same operation sequences (recorded once, see
   :mod:`fencepost.bench_tape`).
2. **Kit overhead** on SQLite (and PostgreSQL when reachable): the recorded sequences through
   the kit (a harness: trace and checks on) divided by the same operations called straight on
   a fresh store, split into the extra store calls the checks make (read-backs) and the
   harness's own work.
3. **Linearizability checker**: operations per second on synthetic adk-ledger histories, saved
   to a file and loaded back, checked partitioned by record and as one partition.
4. **Detection**: per mutant, the median seconds and counterexample steps
   ``fencepost mutants`` needs to catch it (base memory) over several seeds.
5. **The wire protocol**: steps per second and the per-call round trip (median, p99) of each
   store behind ``fencepost-wire/1``, beside the in-process memory store (see
   :mod:`fencepost.bench_wire`).
6. **Time to verdict**: the mutants run as plain ``check`` on memory and SQLite,
   median, p90 and max per contract; and the ceiling the first table's memory figures are
   measured against: a trivial state machine's steps per second (see
   :mod:`fencepost.bench_verdict`).
7. **Campaign throughput**: seeds per minute of one campaign on 1 and 2 local worker
   processes and through a Dask scheduler with 2 workers (see :mod:`fencepost.bench_campaign`).
8. **The transition tour**: per contract, the bounded graph's states and edges, and the tour
   on memory and SQLite: sequences, store moves, edges run, seconds; and whether it catches
   each faulty store whose bug needs a few specific steps (see :mod:`fencepost.bench_tour`).

Example::

    result = run_bench(["adk-ledger"], sizes=QUICK)
    print(render(result))
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from fencepost.bench_campaign import CampaignRate, CampaignRates, bench_campaign
from fencepost.bench_tour import DeepRow, TourRow, bench_tour
from fencepost.bench_verdict import VerdictTime, bench_verdicts, ceiling_rate
from fencepost.bench_wire import WireRow, bench_wire
from fencepost.model.history import History
from fencepost.model.linearizability import UNKNOWN, CheckResult, check_history
from fencepost.scenarios.collector import collecting_less
from fencepost.scenarios.harness import Harness, World
from fencepost.scenarios.machine import run_machine, subclass
from fencepost.scenarios.runner import CLOCK_START, new_world, open_checked
from fencepost.scenarios.said import Progress, Said, quiet
from fencepost.scenarios.synthetic import simulate

from .adapter_spec import resolve_adapter
from .bench_tape import Tape, replay_direct, replay_kit, replay_model, tape_machine
from .contract import Contract, Factory
from .env import AdapterEnv
from .errors import ConfigurationError
from .mutants import run_mutants
from .registry import contract_named, contract_names

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
OVERHEAD_TARGET = 1.3  # kit / direct on SQLite (issue 29's acceptance; issue 16: 1.2, before: 1.5)
CHECKER_TARGET = (10_000, 8, 2.0)  # operations, processes, seconds (partitioned)
STORES = ("memory", "sqlite", "postgresql")
MEMORY_RUNS = 3
"""The memory figure is the fastest of this many runs, as the ceiling it is divided by is (the
same seed each time: the same steps); the model alone, of this many windows."""


@attrs.frozen
class Sizes:
    """How much to measure: state-machine examples x steps, overhead rounds (the fastest
    counts), history sizes and process counts, the checker's budget per partition, the seeds
    each mutant is run with, and how many of a contract's mutants
    (None: all); the wire protocol's calls; the seeds of each campaign (0: no campaign
    section); the transition tour's scope ("": no tour section), the most sequences
    each tour runs on a store (None: all of them; a tour stopped short says so in its row)
    and how many of each contract's deep faulty stores the tour is run on (None: all)."""

    examples: int = 100
    steps: int = 50
    rounds: int = 3
    histories: tuple[int, ...] = (1_000, 10_000)
    processes: tuple[int, ...] = (4, 8)
    budget_s: float = 10.0
    seeds: int = 5
    mutants: int | None = None
    wire_calls: int = 2_000
    verdict_mutants: int | None = 12
    verdict_bases: tuple[str, ...] = ("memory", "sqlite")
    campaign_seeds: int = 8
    tour_scope: str = "full"
    tour_sequences: int | None = None
    deep_mutants: int | None = None


FULL = Sizes()
QUICK = Sizes(examples=25, steps=30, rounds=3, budget_s=2.0, seeds=2, wire_calls=500,
              verdict_mutants=4, campaign_seeds=4, tour_scope="ci")


@attrs.frozen
class Rate:
    """``steps`` in ``seconds`` on ``target`` (``model``, or a store), or why there is no
    figure (``note``: unreachable, a violation, a lost store)."""

    target: str
    steps: int
    seconds: float
    note: str = ""
    rules: int = 0
    """The rule calls (Hypothesis' steps) a state machine made (0: not counted)."""

    @property
    def per_second(self) -> float | None:
        """Steps per second; None when there is no figure."""
        if self.note or self.seconds <= 0:
            return None
        return self.steps / self.seconds


@attrs.frozen
class MachineRates:
    """One contract's state-machine figures: the model alone, then each store."""

    contract: str
    examples: int
    steps: int
    rates: tuple[Rate, ...]
    empty: Rate | None = None
    """The same state machine on the memory store with every rule left undone
    (:func:`empty_rate`)."""

    def bound(self, ceiling: float | None) -> float | None:
        """The memory figure over ``ceiling`` that a harness and store costing nothing would
        give: the empty machine's rule calls per second times the memory run's store
        operations per rule call, over ``ceiling`` (None: a figure is missing)."""
        memory = next((r for r in self.rates if r.target == "memory"), None)
        empty = self.empty
        if (not ceiling or memory is None or empty is None or memory.per_second is None
                or not memory.rules or empty.note or empty.seconds <= 0):
            return None
        return empty.rules / empty.seconds * (memory.steps / memory.rules) / ceiling


@attrs.frozen
class Overhead:
    """The same operations through the kit and as direct calls, on SQLite or PostgreSQL
    (seconds: the sum of each sequence's fastest round). ``reads_s`` is the time in the store
    calls the kit's checks add (reading records back), ``slowed_s`` how much longer the calls
    both sides make took through the kit, ``harness_s`` the rest of the difference: model,
    comparing, the trace.
    (A direct replay with other Python work put between its calls slowed them as much: the
    store's code and data are no longer in the processor's caches.)"""

    contract: str
    operations: int
    direct_s: float
    kit_s: float
    reads_s: float
    harness_s: float
    direct_calls: int = 0
    kit_calls: int = 0
    """Store calls (and stores opened) on each side, in the rounds counted: the kit's extra
    ones are its read-backs."""
    slowed_s: float = 0.0
    store: str = "sqlite"
    """The store both sides ran on: ``sqlite`` (the target's), or ``postgresql`` (a server:
    every call a round trip)."""

    @property
    def ratio(self) -> float:
        """kit / direct."""
        return self.kit_s / self.direct_s

    @property
    def reads_alone(self) -> float:
        """(direct + read-backs) / direct: the ratio with a harness that cost nothing, what
        the read-backs alone take."""
        return (self.direct_s + self.reads_s) / self.direct_s


@attrs.frozen
class CheckerRun:
    """One check of a saved synthetic history."""

    operations: int
    processes: int
    partitioned: bool
    partitions: int
    verdict: CheckResult
    seconds: float

    @property
    def per_second(self) -> float | None:
        """Operations per second; None when the search ran out of budget."""
        return None if self.verdict == UNKNOWN else self.operations / self.seconds


@attrs.frozen
class Detection:
    """One mutant over the seeds: in how many it was caught by its expected
    clause, and per seed the seconds and counterexample steps (None: not caught)."""

    contract: str
    name: str
    expected_clause: str
    seconds: tuple[float | None, ...]
    steps: tuple[int | None, ...]

    @property
    def caught(self) -> int:
        """Seeds in which it was caught."""
        return sum(s is not None for s in self.seconds)

    @property
    def median_seconds(self) -> float | None:
        """Median over the seeds that caught it."""
        return _median([s for s in self.seconds if s is not None])

    @property
    def median_steps(self) -> float | None:
        """Median counterexample length over the seeds that caught it."""
        return _median([s for s in self.steps if s is not None])


@attrs.frozen
class BenchResult:
    """Everything :func:`run_bench` measured."""

    contracts: tuple[str, ...]
    sizes: Sizes
    postgres: str
    machine: tuple[MachineRates, ...]
    overhead: tuple[Overhead, ...]
    checker: tuple[CheckerRun, ...]
    detection: tuple[Detection, ...]
    seconds: float
    wire: tuple[WireRow, ...] = ()
    verdicts: tuple[VerdictTime, ...] = ()
    ceiling: Rate | None = None
    campaign: tuple[CampaignRate, ...] = ()
    """Section 7, for the first contract."""
    tour: tuple[TourRow, ...] = ()
    deep: tuple[DeepRow, ...] = ()
    """Section 8: the transition tour and the faulty stores whose bug needs a few steps."""
    campaign_loops: tuple[CampaignRate, ...] = ()
    """Section 7's plain Python loop on 1 and 2 processes: what the machine gives two."""
    campaign_spawn: tuple[CampaignRate, ...] = ()
    """Section 7's worker start-up alone on 1 and 2 processes."""


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


# --- 1. state-machine steps per second ----------------------------------------------------------


def _world(contract: Contract, factory: Any, start: int = CLOCK_START) -> World:
    """A world on a fresh namespace of ``factory``, its store open (as ``check`` opens it)."""
    world = new_world(contract.suite, factory, namespace=f"b{uuid.uuid4().hex[:10]}",
                      start_ms=start)
    open_checked(contract.suite, world)
    return world


def _close(factory: Factory) -> None:
    close = getattr(factory, "close", None)
    if close is not None:
        close()


def record_tapes(name: str, sizes: Sizes) -> list[Tape]:
    """The operation sequences of ``name``'s state machine (seed 1) on the memory store."""
    contract = contract_named(name)
    factory, _ = resolve_adapter(name, "memory")
    world = _world(contract, factory)
    try:
        run, tapes = tape_machine(contract.suite.machine_for, world,
                                  examples=sizes.examples, steps=sizes.steps, seed=1)
    finally:
        world.discard()
    if run.violations or run.lost is not None:
        raise RuntimeError(f"the memory store of {name} failed its own state machine")
    return tapes


def model_rate(name: str, tapes: Sequence[Tape], min_seconds: float = 0.3) -> Rate:
    """The model alone stepping ``tapes`` (repeated until ``min_seconds`` have passed): one
    window; :func:`bench_machine` takes the fastest of :data:`MEMORY_RUNS`."""
    model = contract_named(name).suite.model
    steps, started = 0, time.perf_counter()
    while True:
        steps += sum(replay_model(model, tape) for tape in tapes)
        elapsed = time.perf_counter() - started
        if elapsed >= min_seconds or not steps:
            return Rate("model", steps, elapsed)


def machine_rate(name: str, target: str, factory: Factory, sizes: Sizes,
                 empty: bool = False) -> Rate:
    """The state machine (seed 1) on ``factory``'s store: steps (``Evidence.steps``) per
    second of :func:`run_machine`, and the rule calls it made; ``empty``: with every rule left
    undone (see :func:`counted_machine`)."""
    contract = contract_named(name)
    world = _world(contract, factory)
    machine, rules = counted_machine(contract.suite.machine_for(world), empty)
    try:
        started = time.perf_counter()
        with collecting_less():  # as check runs it
            run = run_machine(machine, examples=sizes.examples, steps=sizes.steps, seed=1)
        elapsed = time.perf_counter() - started
    finally:
        world.discard()
        _close(factory)
    note = ""
    if run.violations:
        note = "failed " + ", ".join(sorted({v.clause for v in run.violations}))
    elif run.lost is not None:
        note = "store lost"
    return Rate(target, world.evidence.steps, elapsed, note, rules=rules[0])


class _CountedTable:
    """A machine's table (:class:`~fencepost.scenarios.one_draw.Table`) counting the steps it
    decodes into ``counter[0]``."""

    def __init__(self, table: Any, counter: list[int]) -> None:
        self.table, self.counter = table, counter

    def decode(self, code: int) -> tuple[str, dict[str, Any]]:
        self.counter[0] += 1
        return self.table.decode(code)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.table, name)


def _undone(*_arguments: Any, **_named: Any) -> None:
    """A rule (or a harness's call) that does nothing."""


def counted_machine(machine: Any, empty: bool = False) -> tuple[Any, list[int]]:
    """``machine`` (a one-draw state machine class bound to a world) counting its rule calls
    in the list it comes with (one more per decoded step: an increment, next to a step's
    hundred microseconds); ``empty``: each of its rules does nothing, and its initial rules
    (drawn as before) make no call on the harness, while every step's code is still drawn and
    decoded and each example's world, store and harness are still made."""
    counter = [0]

    def init(self: Any) -> None:
        machine.__init__(self)
        self.table = _CountedTable(self.table, counter)
        if empty:
            self.h.apply = self.h.alias = _undone

    namespace: dict[str, Any] = {"__init__": init}
    if empty:
        namespace.update({pick.rule: _undone for pick in machine.picks})
    return subclass(machine, namespace), counter


def empty_rate(name: str, sizes: Sizes) -> Rate:
    """The state machine of :func:`machine_rate` on the memory store with every rule left
    undone: what Hypothesis and the machine's own frame (each example's world, store and
    harness) cost, the part of a step no harness can save."""
    factory, _ = resolve_adapter(name, "memory")
    return machine_rate(name, "empty step", factory, sizes, empty=True)


def bench_machine(name: str, tapes: Sequence[Tape], sizes: Sizes, postgres: str | None,
                  progress: Progress = quiet) -> MachineRates:
    """Steps per second of ``name``'s state machine: the model alone on ``tapes``, then
    memory (the fastest of :data:`MEMORY_RUNS` runs), SQLite and (``postgres`` a URL, None:
    unreachable) PostgreSQL."""
    progress(Said.of(f"machine/{name}", "the model alone"))
    # The fastest of as many windows as memory's runs: the machine's speed swings within
    # seconds (1.5x on a shared 2-vCPU host), and one 0.3 s window caught a slow moment.
    rates = [max((model_rate(name, tapes) for _ in range(MEMORY_RUNS)),
                 key=lambda r: r.per_second or 0.0)]
    empty: Rate | None = None
    for target in STORES:
        if target == "postgresql" and postgres is None:
            rates.append(Rate(target, 0, 0.0, "unreachable"))
            continue
        progress(Said.of(f"machine/{name}", f"{target}, {sizes.examples} examples of up to "
                 f"{sizes.steps} steps"))
        spec = postgres if target == "postgresql" and postgres is not None else target
        try:
            factory, _ = resolve_adapter(name, spec)
        except ConfigurationError:  # the server went away after the probe
            rates.append(Rate(target, 0, 0.0, "unreachable"))
            continue
        runs = MEMORY_RUNS if target == "memory" else 1
        measured = [machine_rate(name, target, factory, sizes) for _ in range(runs)]
        rates.append(max(measured, key=lambda r: r.per_second or 0.0))
        if target == "memory":
            progress(Said.of(f"machine/{name}", "memory, every rule left undone"))
            empty = min((empty_rate(name, sizes) for _ in range(MEMORY_RUNS)),
                        key=lambda r: r.seconds)
    return MachineRates(name, sizes.examples, sum(t.steps for t in tapes), tuple(rates), empty)


# --- 2. kit overhead ----------------------------------------------------------------------------


class _Meter:
    """Seconds spent inside store calls (and opening stores), and of them in the calls made
    while ``reading`` (a harness reading records back)."""

    def __init__(self) -> None:
        self.spent = 0.0
        self.calls = 0
        self.read = 0.0
        self.reading = False

    def timed(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn``, counting the time of each call."""
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                took = time.perf_counter() - started
                self.spent += took
                if self.reading:
                    self.read += took
        return call


def _metered_harness(meter: _Meter) -> type[Harness]:
    """A :class:`Harness` whose read-backs (after a step or a reopen, and the records that
    decide between a choice's options) count into ``meter.read``."""

    def reading(method: Callable[..., Any]) -> Callable[..., Any]:
        def read(self: Harness, *args: Any, **kwargs: Any) -> Any:
            meter.reading = True
            try:
                return method(self, *args, **kwargs)
            finally:
                meter.reading = False
        return read

    return type("Metered", (Harness,), {
        name: reading(getattr(Harness, name)) for name in ("_read_back", "_store_shows")})


class _MeteredStore:
    """A store whose method calls count into a meter (attributes pass through)."""

    def __init__(self, store: Any, meter: _Meter) -> None:
        self._store = store
        self._meter = meter

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._store, name)
        return self._meter.timed(found) if callable(found) else found


class _MeteredFactory:
    """``factory`` with its stores metered; opening one counts as store time."""

    def __init__(self, factory: Factory, meter: _Meter) -> None:
        self.factory = factory
        self.meter = meter

    def __call__(self, env: AdapterEnv) -> Any:
        return _MeteredStore(self.meter.timed(self.factory)(env), self.meter)

    def discard(self, env: AdapterEnv) -> None:
        """Drop a namespace's data (the factory's own ``discard``)."""
        discard = getattr(self.factory, "discard", None)
        if discard is not None:
            discard(env)


def _replay(contract: Contract, factory: _MeteredFactory, tape: Tape,
            harness: type[Harness] | None) -> tuple[float, float, float, int]:
    """One tape on a fresh namespace, through ``harness`` (None: direct calls): (seconds, of
    which in the store, of which reading back, store calls)."""
    world = _world(contract, factory, tape.start)
    meter = factory.meter
    try:
        meter.spent, meter.read, meter.calls = 0.0, 0.0, 0
        started = time.perf_counter()
        if harness is not None:
            replay_kit(world, tape, harness)
        else:
            replay_direct(world, tape)
        return time.perf_counter() - started, meter.spent, meter.read, meter.calls
    finally:
        world.discard()


def bench_overhead(name: str, tapes: Sequence[Tape], sizes: Sizes,
                   progress: Progress = quiet, postgres: str | None = None) -> Overhead:
    """``tapes`` through the kit and as direct calls on SQLite (or on the PostgreSQL at
    ``postgres``), alternating which goes first tape by tape, ``sizes.rounds`` times; each
    side's figure is the sum over the tapes of each tape's fastest round (a pause of the
    machine in one round then costs only that tape)."""
    contract = contract_named(name)
    store, shown = ("postgresql", "PostgreSQL") if postgres else ("sqlite", "SQLite")
    sql, _ = resolve_adapter(name, postgres or "sqlite")
    factory = _MeteredFactory(sql, _Meter())
    metered = _metered_harness(factory.meter)
    best: dict[bool, list[tuple[float, float, float, int]]] = {
        side: [(float("inf"), 0.0, 0.0, 0)] * len(tapes) for side in (True, False)}
    try:
        for r in range(sizes.rounds):
            progress(Said.of(f"overhead/{name}/{store}",
                             f"round {r + 1}/{sizes.rounds} on {shown}"))
            for k, tape in enumerate(tapes):
                for side in (True, False) if (k + r) % 2 == 0 else (False, True):
                    with collecting_less():  # both sides as a check runs them
                        replayed = _replay(contract, factory, tape, metered if side else None)
                    best[side][k] = min(best[side][k], replayed)
    finally:
        _close(sql)
    kit_s, kit_store, kit_read, kit_calls = (
        sum(column) for column in zip(*best[True], strict=True))
    direct_s, direct_store, _, direct_calls = (
        sum(column) for column in zip(*best[False], strict=True))
    return Overhead(name, sum(t.steps for t in tapes), direct_s, kit_s,
                    reads_s=kit_read,
                    harness_s=(kit_s - kit_store) - (direct_s - direct_store),
                    direct_calls=int(direct_calls), kit_calls=int(kit_calls),
                    slowed_s=kit_store - kit_read - direct_store, store=store)


# --- 3. linearizability checker -----------------------------------------------------------------


def bench_checker(sizes: Sizes, progress: Progress = quiet) -> list[CheckerRun]:
    """Synthetic adk-ledger histories (one invocation per 20 operations), saved with
    :meth:`History.save` and loaded back, checked by record and as one partition."""
    from fencepost.model import adk_ledger

    runs = []
    with tempfile.TemporaryDirectory(prefix="fencepost-bench-") as scratch:
        for n in sizes.histories:
            for processes in sizes.processes:
                path = os.path.join(scratch, f"h{n}x{processes}.jsonl")
                History(adk_ledger.MODEL.name, simulate(n, processes, max(1, n // 20))).save(path)
                history = History.load(path)
                for partitioned in (True, False):
                    how = "by record" if partitioned else "as one partition"
                    progress(Said.of(f"checker/{n}x{processes}", f"{n:,} operations, {processes} "
                             f"processes, {how}"))
                    started = time.perf_counter()
                    verdict = check_history(adk_ledger.MODEL, history,
                                            None if partitioned else _one_partition,
                                            budget_s=sizes.budget_s, clock=time.perf_counter)
                    runs.append(CheckerRun(n, processes, partitioned, len(verdict.partitions),
                                           verdict.result, time.perf_counter() - started))
    return runs


def _one_partition(_op: Any) -> None:
    return None


def checker_target(runs: Sequence[CheckerRun]) -> CheckerRun | None:
    """The run the target is about (10,000 operations, 8 processes, partitioned), if any."""
    n, processes, _ = CHECKER_TARGET
    return next((r for r in runs if (r.operations, r.processes, r.partitioned)
                 == (n, processes, True)), None)


# --- 4. detection -------------------------------------------------------------------------------


def bench_detection(name: str, seeds: int, progress: Progress = quiet,
                    limit: int | None = None) -> list[Detection]:
    """Each mutant of ``name`` (base memory, profile quick; the first ``limit``)
    with seeds 1..N, one ``run_mutants`` call per mutant and seed, timed here."""
    mutants = [m for m in contract_named(name).mutants if "memory" in m.bases][:limit]
    found: dict[str, list[tuple[float | None, int | None]]] = {m.name: [] for m in mutants}
    for seed in range(1, seeds + 1):
        for k, mutant in enumerate(mutants, 1):
            progress(Said.of(f"detection/{name}/seed{seed}",
                             f"mutant {k}/{len(mutants)} {mutant.name} (seed {seed} of {seeds})"))
            started = time.perf_counter()
            [row] = run_mutants(name, base="memory", seed=seed, only=[mutant.name])
            elapsed = time.perf_counter() - started
            found[mutant.name].append((elapsed, row.steps) if row.caught else (None, None))
    return [Detection(name, m.name, m.expected_clause,
                      tuple(s for s, _ in found[m.name]), tuple(n for _, n in found[m.name]))
            for m in mutants]


# --- the run ------------------------------------------------------------------------------------


def reachable(url: str) -> bool:
    """Can ``url`` be connected to?"""
    from fencepost.adapters.sql import probe

    try:
        probe(url)
    except Exception:  # noqa: BLE001 - any failure to connect means no PostgreSQL column
        return False
    return True


def run_bench(
    contracts: Sequence[str] | None = None,
    *,
    sizes: Sizes = FULL,
    postgres: str = DEFAULT_POSTGRES,
    progress: Progress = quiet,
) -> BenchResult:
    """Measure every figure for ``contracts`` (default: all), on this machine, now."""
    names = tuple(contracts or contract_names())
    for name in names:
        contract_named(name)
    if sizes.seeds < 1:
        raise ConfigurationError("--seeds must be at least 1")
    started = time.perf_counter()
    progress(Said.of("postgres", f"probing {postgres}"))
    pg = postgres if reachable(postgres) else None
    progress(Said.of("machine", "the ceiling (a trivial 10-rule state machine)"))
    ceiling = Rate("ceiling", *ceiling_rate(sizes.examples, sizes.steps))
    machine, overhead = [], []
    for name in names:
        progress(Said.of(f"machine/{name}", "recording the operation sequences on memory"))
        tapes = record_tapes(name, sizes)
        machine.append(bench_machine(name, tapes, sizes, pg, progress))
        overhead.append(bench_overhead(name, tapes, sizes, progress))
        if pg is not None:
            overhead.append(bench_overhead(name, tapes, sizes, progress, pg))
    checker = bench_checker(sizes, progress)
    detection = [d for name in names
                 for d in bench_detection(name, sizes.seeds, progress, sizes.mutants)]
    wire = [row for name in names for row in bench_wire(
        name, lambda n, target, factory: machine_rate(n, target, factory, sizes),
        sizes.wire_calls, progress)]
    verdicts = [t for name in names for t in bench_verdicts(
        name, sizes.verdict_bases, sizes.verdict_mutants, progress=progress)]
    campaign = bench_campaign(names[0], sizes.campaign_seeds, progress) \
        if sizes.campaign_seeds > 0 else CampaignRates([], [], [])
    tours: list[TourRow] = []
    deep: list[DeepRow] = []
    for name in names if sizes.tour_scope else ():
        rows, caught = bench_tour(name, sizes.tour_scope, progress, sizes.tour_sequences, pg,
                                  sizes.deep_mutants)
        tours += rows
        deep += caught
    return BenchResult(names, sizes, postgres, tuple(machine), tuple(overhead), tuple(checker),
                       tuple(detection), time.perf_counter() - started, tuple(wire),
                       tuple(verdicts), ceiling, tuple(campaign.campaign), tuple(tours),
                       tuple(deep), tuple(campaign.loops), tuple(campaign.spawn))
