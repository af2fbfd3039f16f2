"""fencepost bench: the figures it returns have the right shape (timings are not asserted)."""

from __future__ import annotations

import json
import math
import os
import sys

import attrs
import pytest
from conftest import missing

from fencepost.bench import BenchResult, Sizes, bench_overhead, record_tapes, run_bench
from fencepost.bench_render import render, to_json
from fencepost.bench_tour import bench_tour
from fencepost.bench_verdict import VerdictTime, summarize
from fencepost.bench_wire import one_core_round_trips
from fencepost.errors import ConfigurationError
from fencepost.registry import contract_named
from fencepost.scenarios.said import quiet

# One worker runs this module (its module-scoped fixture is costly): see pyproject's --dist.
pytestmark = pytest.mark.xdist_group("bench")

TINY = Sizes(examples=2, steps=5, rounds=1, histories=(40,), processes=(4,), budget_s=math.inf,
             seeds=1, mutants=1, verdict_mutants=1, verdict_bases=("memory",),
             campaign_seeds=2, wire_calls=20, tour_scope="ci", tour_sequences=30,
             deep_mutants=1)
NOWHERE = "postgresql://nobody@127.0.0.1:1/none"  # nothing listens on port 1
CONTRACTS = ["adk-ledger", "snodo-tasks"]


@pytest.fixture(scope="module")
def result() -> BenchResult:
    return run_bench(CONTRACTS, sizes=TINY, postgres=NOWHERE)


def test_every_requested_contract_has_a_row_in_each_per_contract_table(
        result: BenchResult) -> None:
    assert result.contracts == tuple(CONTRACTS)
    assert [m.contract for m in result.machine] == CONTRACTS
    assert [(o.contract, o.store) for o in result.overhead] == [
        (c, "sqlite") for c in CONTRACTS]  # PostgreSQL unreachable: no row of its own
    assert [d.contract for d in result.detection] == CONTRACTS  # one adapter each


def test_state_machine_rates_are_positive_and_postgres_is_unreachable(
        result: BenchResult) -> None:
    for m in result.machine:
        by_target = {r.target: r for r in m.rates}
        assert list(by_target) == ["model", "memory", "sqlite", "postgresql"]
        assert m.steps > 0
        for target in ("model", "memory", "sqlite"):
            rate = by_target[target].per_second
            assert rate is not None and rate > 0, (m.contract, target)
        # every store ran the sequences the model replayed
        assert {by_target[t].steps for t in ("memory", "sqlite")} == {m.steps}
        assert by_target["postgresql"].note == "unreachable"
        assert by_target["postgresql"].per_second is None


def test_overhead_is_the_kit_time_over_the_direct_time(result: BenchResult) -> None:
    for o in result.overhead:
        assert o.operations > 0 and o.direct_s > 0 and o.kit_s > 0
        assert o.ratio == o.kit_s / o.direct_s
        # the split adds up to the difference
        assert o.reads_s + o.slowed_s + o.harness_s == pytest.approx(o.kit_s - o.direct_s)
        assert 0 < o.reads_s < o.kit_s - o.harness_s
        assert o.reads_alone == (o.direct_s + o.reads_s) / o.direct_s
        # every operation is one store call on each side; the kit's extra ones read back
        assert o.direct_calls >= o.operations and o.kit_calls > o.direct_calls


def test_the_overhead_is_measured_on_postgresql_when_the_bench_reaches_it(
        pg_url: str, result: BenchResult) -> None:
    tapes = record_tapes("adk-ledger", TINY)
    o = bench_overhead("adk-ledger", tapes, TINY, quiet, pg_url)
    assert (o.contract, o.store, o.operations) == (
        "adk-ledger", "postgresql", sum(t.steps for t in tapes))
    assert o.reads_s + o.slowed_s + o.harness_s == pytest.approx(o.kit_s - o.direct_s)
    assert 0 < o.reads_s and o.direct_calls >= o.operations and o.kit_calls > o.direct_calls
    row = next(line for line in render(attrs.evolve(result, overhead=(o,))).splitlines()
               if line.startswith("adk-ledger") and "postgresql" in line)
    assert f"{o.ratio:.2f}x" in row and f"{o.direct_calls:,} / {o.kit_calls:,}" in row


def test_checker_runs_each_history_by_record_and_as_one_partition(result: BenchResult) -> None:
    assert [(r.operations, r.processes, r.partitioned) for r in result.checker] == [
        (40, 4, True), (40, 4, False)]
    by_record, whole = result.checker
    assert by_record.verdict == whole.verdict == "linearizable"
    assert by_record.partitions == 2 and whole.partitions == 1
    assert by_record.per_second == pytest.approx(40 / by_record.seconds)


def test_detection_gives_a_median_per_adapter(result: BenchResult) -> None:
    for d in result.detection:
        assert d.caught == 1 and len(d.seconds) == len(d.steps) == 1
        assert d.median_seconds is not None and d.median_seconds > 0
        assert d.median_steps is not None and d.median_steps >= 1


def test_time_to_verdict_runs_each_chosen_mutant_as_a_check(
        result: BenchResult) -> None:
    assert [(t.contract, t.base) for t in result.verdicts] == [
        (c, "memory") for c in CONTRACTS]
    for t in result.verdicts:
        assert t.seconds > 0 and t.failed >= 1, t  # its bug was seen
    [adk, snodo] = summarize(result.verdicts)
    assert (adk.contract, adk.runs, adk.median_s, adk.max_s) == (
        "adk-ledger", 1, result.verdicts[0].seconds, result.verdicts[0].seconds)


def test_the_ceiling_is_measured_and_each_memory_rate_set_against_it(
        result: BenchResult) -> None:
    assert result.ceiling is not None and result.ceiling.per_second is not None
    data = json.loads(json.dumps(to_json(result)))
    memory = {m.contract: next(r.per_second for r in m.rates if r.target == "memory")
              for m in result.machine}
    assert data["ceiling"]["ratios"] == pytest.approx(
        {c: rate / result.ceiling.per_second for c, rate in memory.items()})


def test_the_p90_is_the_nearest_rank() -> None:
    times = [VerdictTime("c", f"m{k}", "memory", float(k), 1) for k in range(1, 11)]
    [summary] = summarize(times)
    assert (summary.median_s, summary.p90_s, summary.max_s, summary.slowest) == (
        5.5, 9.0, 10.0, "m10")
    assert summary.met


def test_tables_and_json_show_every_figure(result: BenchResult) -> None:
    text = render(result)
    for title in ("State-machine steps per second", "Kit overhead on SQLite",
                  "Linearizability checker", "Detection of the mutants",
                  "Time to verdict", "memory/ceiling", "rules undone/ceiling"):
        assert title in text
    assert "unreachable" in text and "<= 1.3x" in text
    assert "target: 10,000 operations, 8 processes" in text
    data = json.loads(json.dumps(to_json(result)))
    assert [o["ratio"] for o in data["overhead"]] == [o.ratio for o in result.overhead]
    assert data["checker"]["target_met"] is None  # no 10,000-operation history this time
    ceiling = result.ceiling.per_second if result.ceiling is not None else None
    assert [m["rules_undone_over_ceiling"] for m in data["state_machine"]] == pytest.approx(
        [m.bound(ceiling) for m in result.machine])
    assert all(m["rules_undone"]["rules"] > 0 for m in data["state_machine"])
    assert {d["name"] for d in data["detection"]} == {d.name for d in result.detection}


def test_the_tour_runs_on_memory_and_sqlite_says_where_it_stopped_and_catches_the_deep_bugs(
        result: BenchResult) -> None:
    # TINY stops each tour on a correct store after 30 sequences (the whole ci tour on SQLite
    # takes minutes; `fencepost bench --quick` runs all of it)
    adk = [t for t in result.tour if t.contract == "adk-ledger"]
    assert [t.store for t in adk] == ["memory", "sqlite"]
    for t in adk:
        assert t.scope == "adk-ledger (ci)" and t.failed == () and not t.finished
        assert t.edges > t.run > 0 and t.edges > t.states > 0 and t.moves >= t.sequences > 30
    deep = [d for d in result.deep if d.contract == "adk-ledger"]
    # TINY tours the first deep faulty store of each contract (the tour's tests: every one)
    assert [d.mutant for d in deep] == ["dead_owner_keeps_its_window"]
    assert all(d.caught and d.moves for d in deep)
    text = render(result)
    assert "Transition tour (scope ci" in text and "dead_owner_keeps_its_window" in text
    assert "each run stopped after 30 sequences" in text and f"{adk[0].run:,} (stopped)" in text
    data = json.loads(json.dumps(to_json(result)))
    assert [t["edges"] for t in data["tour"]] == [t.edges for t in result.tour]


def test_the_tour_runs_on_postgresql_when_the_bench_reaches_it(pg_url: str) -> None:
    rows, _ = bench_tour("snodo-tasks", "ci", quiet, sequences=5, postgres=pg_url)
    assert [t.store for t in rows] == ["memory", "sqlite", "postgresql"]
    pg = rows[-1]
    assert pg.failed == () and not pg.finished and pg.edges > pg.run > 0
    assert pg.sequences == rows[0].sequences and pg.moves == rows[0].moves  # the same plan


def test_the_wire_protocol_is_measured_for_each_contract_beside_the_memory_store(
        result: BenchResult) -> None:
    for name in CONTRACTS:
        rows = {w.store: w for w in result.wire if w.contract == name}
        floor, served = rows["protocol floor (answers at once)"], rows["memory served"]
        assert (floor.calls, served.calls) == (TINY.wire_calls, TINY.wire_calls)
        assert floor.steps_per_s is None and floor.note == "-"  # it stores nothing
        assert served.note == "" and served.steps_per_s is not None and served.steps_per_s > 0
        for row in (floor, served):
            assert row.median_us is not None and row.p99_us is not None
            assert 0 < row.median_us <= row.p99_us
            assert row.added_us == row.median_us - row.memory_median_us
            if hasattr(os, "sched_setaffinity"):  # Linux: measured on one core too
                assert row.one_core_median_us is not None and row.one_core_median_us > 0
                assert row.one_core_added_us == row.one_core_median_us - row.memory_median_us
            else:
                assert row.one_core_median_us is None
    assert "The wire protocol" in render(result)
    assert "added on one core us" in render(result)
    data = json.loads(json.dumps(to_json(result)))
    assert [w["one_core_added_us"] for w in data["wire"]] == [
        w.one_core_added_us for w in result.wire]


def test_one_core_round_trips_give_the_thread_its_cores_back() -> None:
    if not hasattr(os, "sched_setaffinity"):
        missing("no os.sched_setaffinity on this platform (Linux has it)", "one-core")
    before = os.sched_getaffinity(0)
    contract = contract_named("adk-ledger")
    command = f"{sys.executable} -m fencepost.cli serve adk-ledger"
    times = one_core_round_trips(contract, command, "adk-ledger", 5)
    assert times is not None and len(times) == 5 and all(t > 0 for t in times)
    assert os.sched_getaffinity(0) == before


def test_campaign_throughput_is_measured_three_ways_for_the_first_contract(
        result: BenchResult) -> None:
    assert [(c.how, c.seeds, c.note) for c in result.campaign] == [
        ("local, --jobs 1", 2, ""), ("local, --jobs 2", 2, ""),
        ("Dask scheduler, 2 workers", 2, "")]
    assert [(c.how, c.seeds, c.note) for c in result.campaign_loops] == [
        ("a Python loop, 1 process", 2, ""), ("a Python loop, 2 processes", 2, "")]
    for c in (*result.campaign, *result.campaign_loops):
        assert c.seconds > 0 and c.per_minute == pytest.approx(2 * 60 / c.seconds)
    text = render(result)
    assert "Campaign throughput (adk-ledger on memory, profile quick, seeds 1..2" in text
    assert "Dask scheduler, 2 workers" in text
    [said] = [line for line in text.splitlines() if line.startswith("--jobs 2 gained ")]
    machine = result.campaign_loops[0].seconds / result.campaign_loops[1].seconds
    assert f"a plain Python loop on 2 processes gained {machine:.2f}x" in said
    method = result.campaign_spawn[0].how.rsplit(" ", 1)[-1]
    assert method in ("(fork)", "(spawn)")
    assert [(c.how, c.seeds, c.note) for c in result.campaign_spawn] == [
        (f"worker start-up, 1 process {method}", 1, ""),
        (f"worker start-up, 2 processes {method}", 2, "")]
    assert all(c.seconds > 0 for c in result.campaign_spawn)
    [started] = [line for line in text.splitlines() if line.startswith("worker start-up ")]
    one, two = (c.seconds for c in result.campaign_spawn)
    steady = ((result.campaign[0].seconds - one) / (result.campaign[1].seconds - two))
    assert started == (
        f"worker start-up (started as the campaign starts them, each importing what a seed "
        f"needs, measured just before each): {one:.2f} s for 1 process, {two:.2f} s for 2; "
        f"without it --jobs 2 gained "
        f"{steady:.2f}x (a campaign of many seeds)")
    data = json.loads(json.dumps(to_json(result)))
    assert [c["per_minute"] for c in data["campaign"]] == [
        c.per_minute for c in result.campaign]
    assert [c["seconds"] for c in data["campaign_loops"]] == [
        c.seconds for c in result.campaign_loops]
    assert [c["seconds"] for c in data["campaign_spawn"]] == [one, two]


def test_an_unknown_contract_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="unknown contract"):
        run_bench(["nope"], sizes=TINY, postgres=NOWHERE)


def test_the_memory_and_model_rates_are_the_fastest_of_their_runs_as_the_ceiling_is(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from fencepost import bench

    # memory's three runs, the three with every rule undone, then SQLite's one
    seconds = iter([3.0, 1.0, 2.0, 0.6, 0.4, 0.5, 5.0])
    windows = iter([2.0, 0.5, 4.0])  # the model alone's three windows
    calls: list[str] = []

    def timed(name: str, target: str, factory: object, sizes: Sizes,
              empty: bool = False) -> bench.Rate:
        calls.append(target)
        assert empty == (target == "empty step")
        return bench.Rate(target, 100, next(seconds))

    monkeypatch.setattr(bench, "machine_rate", timed)
    monkeypatch.setattr(bench, "model_rate",
                        lambda name, tapes: bench.Rate("model", 1, next(windows)))
    found = bench.bench_machine("adk-ledger", [], TINY, None)
    runs = bench.MEMORY_RUNS
    assert calls == ["memory"] * runs + ["empty step"] * runs + ["sqlite"]
    assert [(r.target, r.seconds) for r in found.rates] == [
        ("model", 0.5), ("memory", 1.0), ("sqlite", 5.0), ("postgresql", 0.0)]
    assert found.empty is not None and found.empty.seconds == 0.4


def test_the_machine_with_every_rule_undone_draws_the_same_steps_and_calls_no_store() -> None:
    from fencepost import bench
    from fencepost.adapter_spec import resolve_adapter

    sizes = Sizes(examples=3, steps=8)
    for name in CONTRACTS:
        full = bench.machine_rate(name, "memory", resolve_adapter(name, "memory")[0], sizes)
        empty = bench.empty_rate(name, sizes)
        assert full.steps > 0 and full.rules > 0 and not full.note
        assert (empty.steps, empty.rules, empty.note) == (0, full.rules, ""), name


def test_the_bound_is_the_empty_machines_rule_rate_in_the_memory_runs_steps() -> None:
    from fencepost import bench

    memory = bench.Rate("memory", 600, 0.2, rules=750)  # 3,000 steps/s, 0.8 a rule call
    empty = bench.Rate("empty step", 0, 0.05, rules=750)  # 15,000 rule calls/s
    rates = bench.MachineRates("c", 1, 600, (memory,), empty)
    assert rates.bound(10_000.0) == pytest.approx(15_000 * 0.8 / 10_000)
    assert rates.bound(None) is None
    assert bench.MachineRates("c", 1, 600, (memory,)).bound(10_000.0) is None
    assert bench.MachineRates("c", 1, 600, (attrs.evolve(memory, rules=0),),
                              empty).bound(10_000.0) is None
