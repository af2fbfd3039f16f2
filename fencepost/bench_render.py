"""The tables ``fencepost bench`` prints and the JSON ``--json`` saves (see
:mod:`fencepost.bench`)."""

from __future__ import annotations

import platform
import statistics
from collections.abc import Sequence
from typing import Any

import attrs
from tabulate import tabulate

from .bench import (
    CHECKER_TARGET,
    OVERHEAD_TARGET,
    STORES,
    BenchResult,
    CheckerRun,
    Detection,
    checker_target,
)
from .bench_campaign import CAMPAIGN_TARGET, CampaignRate, steady_speedup
from .bench_verdict import CEILING_TARGET, VERDICT_MAX_S, VERDICT_MEDIAN_S, summarize
from .bench_wire import ADDED_TARGET_US

_STORE_TITLES = {"memory": "memory", "sqlite": "SQLite", "postgresql": "PostgreSQL"}


def render(result: BenchResult) -> str:
    """Every table of ``result``, each with its target and how its figures were measured."""
    parts = [_machine(result), _overhead(result), _checker(result), _detection(result),
             _wire(result), _verdicts(result), *([_campaign(result)] if result.campaign else []),
             *([_tour(result)] if result.tour else []),
             f"total wall time {result.seconds:.0f} s"]
    return "\n\n".join(parts)


def to_json(result: BenchResult) -> dict[str, Any]:
    """``result`` as JSON-ready data, with the derived figures (rates, ratio, medians)."""
    return {
        "host": {"python": platform.python_version(), "platform": platform.platform()},
        "contracts": list(result.contracts),
        "sizes": attrs.asdict(result.sizes),
        "postgres": result.postgres,
        "seconds": result.seconds,
        "state_machine": [
            {"contract": m.contract, "examples": m.examples, "steps": m.steps,
             "rates": [{**attrs.asdict(r), "per_second": r.per_second} for r in m.rates],
             "rules_undone": None if m.empty is None else attrs.asdict(m.empty),
             "rules_undone_over_ceiling": m.bound(
                 result.ceiling.per_second if result.ceiling is not None else None)}
            for m in result.machine
        ],
        "overhead": [{**attrs.asdict(o), "ratio": o.ratio, "reads_alone": o.reads_alone,
                      "target": OVERHEAD_TARGET,
                      "target_met": o.ratio <= OVERHEAD_TARGET}
                     for o in result.overhead],
        "checker": {
            "runs": [{**attrs.asdict(r), "per_second": r.per_second} for r in result.checker],
            "target": dict(zip(("operations", "processes", "seconds"), CHECKER_TARGET,
                               strict=True)),
            "target_met": _checker_met(checker_target(result.checker)),
        },
        "detection": [
            {**attrs.asdict(d), "caught": d.caught, "median_seconds": d.median_seconds,
             "median_steps": d.median_steps}
            for d in result.detection
        ],
        "wire": [{**attrs.asdict(w), "added_us": w.added_us,
                  "one_core_added_us": w.one_core_added_us, "added_target_us": ADDED_TARGET_US,
                  "target_met": w.added_us is not None and w.added_us <= ADDED_TARGET_US}
                 for w in result.wire],
        "ceiling": None if result.ceiling is None else {
            **attrs.asdict(result.ceiling), "per_second": result.ceiling.per_second,
            "ratios": {m.contract: _ratio(result, m.contract) for m in result.machine},
            "target": CEILING_TARGET},
        "time_to_verdict": {
            "runs": [attrs.asdict(t) for t in result.verdicts],
            "summary": [{**attrs.asdict(v), "target_met": v.met}
                        for v in summarize(result.verdicts)],
            "target": {"max_s": VERDICT_MAX_S, "median_s": VERDICT_MEDIAN_S}},
        "campaign": [{**attrs.asdict(c), "per_minute": c.per_minute} for c in result.campaign],
        "campaign_loops": [{**attrs.asdict(c), "per_minute": c.per_minute}
                           for c in result.campaign_loops],
        "campaign_spawn": [attrs.asdict(c) for c in result.campaign_spawn],
        "tour": [attrs.asdict(t) for t in result.tour],
        "deep": [attrs.asdict(d) for d in result.deep],
    }


def _ratio(result: BenchResult, name: str) -> float | None:
    """The contract's memory steps/s over the ceiling's, measured in the same run."""
    ceiling = result.ceiling.per_second if result.ceiling is not None else None
    memory = next((r.per_second for m in result.machine if m.contract == name
                   for r in m.rates if r.target == "memory"), None)
    return None if not ceiling or memory is None else memory / ceiling


# --- the four tables ----------------------------------------------------------------------------


def _machine(result: BenchResult) -> str:
    rows = []
    ceiling = result.ceiling.per_second if result.ceiling is not None else None
    for m in result.machine:
        by_target = {r.target: r for r in m.rates}
        cells = [m.contract, f"{m.steps:,}", _rate(by_target["model"].per_second)]
        cells += [by_target[t].note or _rate(by_target[t].per_second) for t in STORES]
        ratio = _ratio(result, m.contract)
        bound = m.bound(ceiling)
        cells += ["-" if ratio is None else f"{ratio:.2f}",
                  "-" if ratio is None else "yes" if ratio >= CEILING_TARGET else "NO",
                  "-" if bound is None else f"{bound:.2f}"]
        rows.append(cells)
    s = result.sizes
    headers = ["contract", "steps", "model alone", *(_STORE_TITLES[t] for t in STORES),
               "memory/ceiling", f">= {CEILING_TARGET}", "rules undone/ceiling"]
    return (
        f"State-machine steps per second ({s.examples} examples of up to {s.steps} steps, "
        f"seed 1)\n{_table(rows, headers, 'lrrrrrrlr')}\n"
        "model alone: the reference model stepping the recorded operation sequences (no store, "
        "no checks; the fastest of 3 windows of 0.3 s); stores: the Hypothesis state machine "
        "as `check` runs it (generation, "
        "harness with read-backs, store); ceiling: a trivial 10-rule state machine under the "
        f"same settings in this run (warm, the fastest of 3), {_rate(ceiling)} steps/s; memory: "
        "the fastest of 3 runs as well; steps: store operations (a clock move or a kill is a "
        "rule call without one, an edge rule makes several), the ceiling's: rule calls. "
        "rules undone/ceiling: the memory/ceiling a harness and store that cost nothing would "
        "give: the same machine with every rule left undone (each step still drawn and decoded, "
        "each example's world, store and harness still made; the fastest of 3), its rule calls "
        "per second times the memory run's operations per rule call, over the ceiling"
    )


def _overhead(result: BenchResult) -> str:
    rows = [
        (o.contract, o.store, f"{o.operations:,}", f"{o.direct_calls:,} / {o.kit_calls:,}",
         _num(o.direct_s), _num(o.kit_s), f"{o.ratio:.2f}x",
         _num(o.reads_s), _num(o.slowed_s), _num(o.harness_s), f"{o.reads_alone:.2f}x",
         f"<= {OVERHEAD_TARGET}x",
         "yes" if o.ratio <= OVERHEAD_TARGET else "NO")
        for o in result.overhead
    ]
    headers = ["contract", "store", "operations", "store calls direct / kit", "direct s",
               "kit s", "kit/direct", "of which read-backs s", "same calls slower s",
               "of which harness s", "read-backs alone", "target", "met"]
    return (
        f"Kit overhead on SQLite, and on PostgreSQL where it is reachable (the recorded "
        f"sequences; each sequence's fastest of {result.sizes.rounds} round(s))\n"
        f"{_table(rows, headers, 'llrrrrrrrrrll')}\n"
        "kit: a harness replaying the operations with its trace and checks on (the model "
        "steps, every answer compared, the records read back after each step); direct: the "
        "same calls on a fresh store. read-backs: the time in the store calls the checks "
        "add; same calls slower: how much longer the calls both sides make took through the "
        "kit (a direct replay with other work between its calls slows them as much: the "
        "store's code and data leave the processor's caches); harness: the rest of the "
        "difference; read-backs alone: (direct + read-backs) / direct, the ratio if the harness "
        "cost nothing. Store calls count stores opened too. The target is SQLite's; "
        "PostgreSQL (every call a round trip to the server) is set against it for comparison"
    )


def _wire(result: BenchResult) -> str:
    rows = [
        (w.contract, w.store, w.note or _rate(w.steps_per_s), _rate(w.memory_steps_per_s),
         _num(w.median_us, 0), _num(w.p99_us, 0), _num(w.memory_median_us, 1),
         _num(w.added_us, 0), f"<= {ADDED_TARGET_US:g}",
         "-" if w.added_us is None else "yes" if w.added_us <= ADDED_TARGET_US else "NO",
         _num(w.one_core_added_us, 0))
        for w in result.wire
    ]
    headers = ["contract", "store over fencepost-wire/1", "steps/s", "memory steps/s",
               "call median us", "call p99 us", "memory call us", "added us", "target", "met",
               "added on one core us"]
    return (
        f"The wire protocol ({result.sizes.wire_calls:,} calls of the contract's cheapest "
        f"operation per store; the state machine as in the first table)\n"
        f"{_table(rows, headers, 'llrrrrrrllr')}\n"
        "memory served: the in-process memory store behind `fencepost serve` (same store, same "
        "calls: 'added' is what the protocol costs); the others are stores in other languages "
        "(examples/), measured where their toolchain is installed. On one core: the same calls "
        "with the kit's thread and the store pinned to one core, without the wake-ups across "
        "cores that a small virtual machine makes costly (the protocol's own cost; '-': not "
        "measured)"
    )


def _verdicts(result: BenchResult) -> str:
    rows = [
        (v.contract, v.base, v.runs, _num(v.median_s, 1), _num(v.p90_s, 1), _num(v.max_s, 1),
         v.slowest, "yes" if v.met else "NO")
        for v in summarize(result.verdicts)
    ]
    headers = ["contract", "base", "mutants", "median s", "p90 s", "max s", "slowest",
               "met"]
    return (
        "Time to verdict (each mutant as a plain `check`: profile quick, seed 1, "
        f"the command's shrink budget and --jobs)\n{_table(rows, headers, 'llrrrrll')}\n"
        f"target: every store under {VERDICT_MAX_S:g} s, the median under "
        f"{VERDICT_MEDIAN_S:g} s"
    )


def _campaign(result: BenchResult) -> str:
    rows = _speedups(result.campaign) + _speedups(result.campaign_loops)
    headers = ["how", "seeds / tasks", "seconds", "per minute", "vs 1 process"]
    loops = result.campaign_loops
    machine = (loops[0].seconds / loops[1].seconds if len(loops) == 2
               and loops[1].seconds > 0 else None)
    campaign = (result.campaign[0].seconds / result.campaign[1].seconds
                if len(result.campaign) >= 2 and result.campaign[1].seconds > 0
                and not (result.campaign[0].note or result.campaign[1].note) else None)
    against = ("" if machine is None or campaign is None else
               f"\n--jobs 2 gained {campaign:.2f}x where a plain Python loop on 2 processes "
               f"gained {machine:.2f}x (each measured just before: the machine's own speed-up "
               f"for two busy processes; target: --jobs 2 >= {CAMPAIGN_TARGET}x --jobs 1)")
    spawn = result.campaign_spawn
    steady = steady_speedup(result.campaign, spawn)
    started = ("" if steady is None else
               f"\nworker start-up (started as the campaign starts them, each importing what a "
               f"seed needs, measured just before each): {spawn[0].seconds:.2f} s for 1 "
               f"process, {spawn[1].seconds:.2f} s for 2; "
               f"without it --jobs 2 gained {steady:.2f}x (a campaign of many seeds)")
    return (
        f"Campaign throughput ({result.contracts[0]} on memory, profile quick, seeds "
        f"1..{result.sizes.campaign_seeds}, no example database)\n"
        f"{_table(rows, headers, 'lrrrr')}\n"
        "each: `fencepost campaign` from its start to its end, worker start-up included; the "
        "Dask scheduler and its 2 single-threaded workers run on loopback, started by the "
        "bench before the clock starts; the loop: as many tasks of plain Python (no kit "
        "imported) on a pool of 1 or 2 processes started the same way (forked where the "
        "campaign forks its workers, else fresh interpreters)" + against + started
    )


def _speedups(rates: Sequence[CampaignRate]) -> list[tuple[Any, ...]]:
    """Rows of ``rates``, each against the first (one process)."""
    one = rates[0].per_minute if rates else None
    return [(c.how, c.seeds, _num(c.seconds, 1) if not c.note else "-",
             c.note or _num(c.per_minute, 1),
             "-" if c.per_minute is None or not one else f"{c.per_minute / one:.2f}x")
            for c in rates]


def _tour(result: BenchResult) -> str:
    rows = [(t.contract, t.scope, _STORE_TITLES.get(t.store, t.store), f"{t.states:,}",
             f"{t.edges:,}", _num(t.made_s, 1), f"{t.sequences:,}", f"{t.moves:,}",
             f"{t.run:,}" if t.finished else f"{t.run:,} (stopped)", _num(t.seconds, 1),
             ", ".join(t.failed) or "-")
            for t in result.tour]
    headers = ["contract", "scope", "store", "states", "edges", "explore+plan s", "sequences",
               "store moves", "edges run", "tour s", "failed"]
    deep = [(d.contract, d.mutant, d.clause, "yes" if d.caught else "NO",
             "-" if d.moves is None else d.moves, _num(d.seconds, 1)) for d in result.deep]
    limit = result.sizes.tour_sequences
    short = "" if limit is None else f"; each run stopped after {limit:,} sequences"
    return (
        f"Transition tour (scope {result.sizes.tour_scope}: every edge of the model's bounded "
        f"graph run on the store, each answer and read-back compared{short})\n"
        f"{_table(rows, headers, 'lllrrrrrrrl')}\n"
        "Faulty stores whose bug needs a few specific steps, on the tour (memory)\n"
        f"{_table(deep, ['contract', 'mutant', 'clause', 'caught', 'moves', 'seconds'], 'lllllr')}"
    )


def _checker(result: BenchResult) -> str:
    rows = [
        (f"{r.operations:,}", r.processes, "by record" if r.partitioned else "one partition",
         r.partitions, r.verdict, _num(r.seconds, 3), _rate(r.per_second))
        for r in result.checker
    ]
    headers = ["operations", "processes", "checked", "partitions", "verdict", "seconds",
               "ops/s"]
    n, processes, limit = CHECKER_TARGET
    target = checker_target(result.checker)
    if target is None:
        met = "not measured (no such history in this run)"
    else:
        met = f"{target.seconds:.3f} s, {'met' if _checker_met(target) else 'NOT met'}"
    return (
        "Linearizability checker (synthetic adk-ledger histories, 1 invocation per 20 "
        "operations, 1% timed-out calls; saved as JSON lines and loaded back; budget "
        f"{result.sizes.budget_s:g} s per partition)\n{_table(rows, headers, 'rrlrlrr')}\n"
        f"target: {n:,} operations, {processes} processes, partitioned, under {limit:g} s: {met}"
    )


def _detection(result: BenchResult) -> str:
    seeds = result.sizes.seeds
    rows = [
        (d.contract, d.name, d.expected_clause, f"{d.caught}/{seeds}", _num(d.median_seconds, 3),
         _num(d.median_steps, 1))
        for d in result.detection
    ]
    headers = ["contract", "mutant", "expected clause", "caught", "median s",
               "median steps"]
    summary = [_summary(name, [d for d in result.detection if d.contract == name], seeds)
               for name in result.contracts]
    summary_headers = ["contract", "mutants", "caught in every seed",
                       "median of medians s", "median of medians steps"]
    return (
        f"Detection of the mutants (base memory, profile quick, seeds 1-{seeds})"
        f"\n{_table(rows, headers, 'lllrrr')}\n\n{_table(summary, summary_headers, 'lrrrr')}\n"
        "seconds: a `fencepost mutants` run of one mutant until its expected clause failed; "
        "steps: the length of the counterexample it reports; medians over the seeds that "
        "caught it"
    )


def _summary(name: str, rows: Sequence[Detection], seeds: int) -> tuple[Any, ...]:
    medians_s = [d.median_seconds for d in rows if d.median_seconds is not None]
    medians_n = [d.median_steps for d in rows if d.median_steps is not None]
    every = sum(d.caught == seeds for d in rows)
    return (name, len(rows), f"{every}/{len(rows)}", _num(_median(medians_s), 3),
            _num(_median(medians_n), 1))


# --- cells --------------------------------------------------------------------------------------


def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str], align: str) -> str:
    """A table whose cells are shown as written (``align``: l or r per column)."""
    sides = {"l": "left", "r": "right"}
    return str(tabulate(rows, headers=list(headers), disable_numparse=True,
                        colalign=[sides[a] for a in align]))


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _checker_met(run: CheckerRun | None) -> bool | None:
    if run is None:
        return None
    return run.verdict != "unknown" and run.seconds < CHECKER_TARGET[2]
