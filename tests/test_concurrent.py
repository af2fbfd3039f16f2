"""Concurrent runs (issue 6): workers in bursts under a frozen clock, the history checked for
linearizability, a non-atomic store caught with its counterexample."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

import attrs
import pytest

import fencepost
from fencepost.cli import main
from fencepost.model.base import options_with_defaults
from fencepost.model.history import History
from fencepost.model.linearizability import LINEARIZABLE, NOT_LINEARIZABLE, segments
from fencepost.mutants import mutant_factory
from fencepost.registry import contract_named
from fencepost.reports.render import write_reports
from fencepost.scenarios.adk_ledger.workload import AdkWorkload
from fencepost.scenarios.clock import SimClock
from fencepost.scenarios.concurrent import run_concurrent
from fencepost.scenarios.harness import World
from fencepost.spec import adk_ledger as spec
from fencepost.spec.outcome import Ok

ADK = contract_named("adk-ledger")
UNBOUNDED = math.inf
"""The checker's budget here: it is wall-clock time, and a verdict asserted in these tests must
not depend on how loaded the machine is (the checker's speed is what fencepost bench measures).
"""


@pytest.fixture
def unbounded_checker(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fencepost.check``'s concurrent run with a checker budget that cannot run out."""
    from fencepost.scenarios import phases

    monkeypatch.setattr(phases, "run_concurrent",
                        functools.partial(run_concurrent, budget_s=UNBOUNDED))


def _world(factory: Any, namespace: str) -> World:
    model = ADK.suite.model
    world = World(model=model, factory=factory, clock=SimClock(1_000_000), namespace=namespace,
                  options=options_with_defaults(model.choices, {}, model.settings))
    world.capabilities = frozenset(world.open().capabilities)
    return world


def test_a_run_records_every_call_with_the_clock_frozen_per_burst() -> None:
    world = _world(ADK.memory_factory(), "cc1")
    run = run_concurrent(world, AdkWorkload("x"), threads=4, ops=400, seed=5,
                         budget_s=UNBOUNDED)
    events = run.history.events
    assert len(events) >= 400
    assert {e.process for e in events} == {"w1", "w2", "w3", "w4"}
    assert all(e.outcome is not None and e.completed is not None for e in events)
    parts = segments(events)
    assert len(parts) >= run.bursts  # every burst ends where the store is quiescent
    for part in parts:
        assert len({e.at for e in part}) == 1, "the clock moved inside a burst"
    times = [part[0].at for part in parts]
    assert times == sorted(times) and times[-1] > times[0]
    # the clock landed exactly on the end of a lease some claim was granted
    ends = {e.op.now_ms + e.op.lease_ms for e in events
            if isinstance(e.op, spec.Claim) and isinstance(e.outcome, Ok)}
    assert ends & set(times)
    wins = [e for e in events if isinstance(e.op, spec.Claim) and isinstance(e.outcome, Ok)]
    assert len(wins) >= 10
    assert run.verdict.result == LINEARIZABLE


def test_the_same_seed_draws_the_same_calls() -> None:
    """Only thread timing differs between two runs of one seed: each worker's first burst
    starts with the same call, with the same arguments (which invocation it names depends on
    which worker created one first)."""
    for seed in range(8):
        runs = [run_concurrent(_world(ADK.memory_factory(), f"cc2{k}"), AdkWorkload("x"),
                               threads=3, ops=30, seed=seed, budget_s=UNBOUNDED)
                for k in range(2)]
        firsts = [{e.process: attrs.evolve(e.op, invocation_id="?")  # type: ignore[misc]
                   for e in reversed(r.history.events)} for r in runs]
        assert firsts[0] == firsts[1], f"seed {seed}"


class _ClaimsOnly(AdkWorkload):
    """Only creates, claims and reads: every anomaly of a non-atomic claim is a double win."""

    def worker(self, index: int):  # type: ignore[no-untyped-def]
        worker = super().worker(index)
        original = worker.next_op

        def next_op(rng, now):  # type: ignore[no-untyped-def]
            while True:
                op = original(rng, now)
                if isinstance(op, spec.Claim | spec.Create | spec.Get):
                    return op

        worker.next_op = next_op  # type: ignore[method-assign]
        return worker


def test_a_non_atomic_claim_is_caught_with_the_two_winning_claims() -> None:
    mutant = ADK.mutant("claim_race_in_history")
    factory = mutant_factory(ADK, mutant, "sqlite")
    world = _world(factory, "cc3")
    try:
        run = run_concurrent(world, _ClaimsOnly("x"), threads=6, ops=600, seed=3,
                             budget_s=UNBOUNDED)
    finally:
        world.discard()
    assert run.verdict.result == NOT_LINEARIZABLE
    cx = run.verdict.counterexample
    assert cx is not None
    blocked = cx.blocked
    assert isinstance(blocked.op, spec.Claim) and isinstance(blocked.outcome, Ok)
    rivals = [e for e in cx.prefix if isinstance(e.op, spec.Claim)
              and e.op.invocation_id == blocked.op.invocation_id and isinstance(e.outcome, Ok)]
    assert rivals and all(e.op.owner != blocked.op.owner for e in rivals)
    # the two winners overlap in time: neither returned before the other began
    assert any(r.invoked <= blocked.completed and blocked.invoked <= r.completed  # type: ignore[operator]
               for r in rivals)
    assert run.verdict.summary().startswith("not_linearizable")


@pytest.mark.long
def test_check_reports_a_non_linearizable_run_and_saves_its_history(
        tmp_path: Path, unbounded_checker: None) -> None:
    mutant = ADK.mutant("claim_race_in_history")
    report = fencepost.check("adk-ledger", mutant_factory(ADK, mutant, "sqlite"), seed=4,
                             concurrency=6, concurrent_ops=600)
    [lin] = [v for v in report.verdicts if v.clause.id == "ADK-LIN-001"]
    assert lin.status == "fail" and lin.failure is not None
    assert lin.failure.check == "concurrent"
    assert "is not linearizable" in lin.failure.message
    assert "<-- could not be placed" in lin.failure.message
    assert lin.failure.trace[-1].note == "could not be placed"
    assert report.history is not None
    path = tmp_path / "h.jsonl"
    report.history.save(path)
    assert History.load(path) == report.history
    assert main(["analyze", str(path), "--budget", "inf"]) == 1  # the same verdict offline


def test_cli_writes_the_history_and_analyze_agrees(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   unbounded_checker: None) -> None:
    out = tmp_path / "r"
    code = main(["check", "adk-ledger", "--adapter", "memory", "--seed", "2", "--quiet",
                 "--report", str(out), "--concurrency", "3", "--ops", "200"])
    assert code == 0
    printed = capsys.readouterr().out
    assert f"fencepost analyze {out / 'history.jsonl'}" in printed
    history = History.load(out / "history.jsonl")
    assert len(history.events) >= 200 and {e.process for e in history.events} == {
        "w1", "w2", "w3"}
    assert main(["analyze", str(out / "history.jsonl"), "--budget", "inf"]) == 0
    assert capsys.readouterr().out.startswith(f"linearizable: {len(history.events)} events")


def test_no_concurrent_run_leaves_the_clause_unsupported_not_unknown() -> None:
    report = fencepost.check("adk-ledger", "memory", seed=1, concurrency=0)
    [lin] = [v for v in report.verdicts if v.clause.id == "ADK-LIN-001"]
    assert (lin.status, lin.reason) == ("unsupported",
                                        "not checked: no concurrent run (--concurrency 0)")
    assert report.exit_code == 0 and report.history is None
    assert "--concurrency 0" in report.replay


def test_bad_concurrency_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "adk-ledger", "--adapter", "memory", "--concurrency", "-2"]) == 2
    assert "concurrency must be 0 or more, not -2" in capsys.readouterr().err


@pytest.mark.long
@pytest.mark.parametrize("name", ["adk-ledger", "snodo-tasks", "ledgence-tasks"])
def test_eight_workers_5000_calls_on_postgresql_are_linearizable(pg_url: str,
                                                                 name: str) -> None:
    run = fencepost.check_concurrent(name, pg_url, threads=8, ops=5000, seed=11,
                                     budget_s=UNBOUNDED)
    assert len(run.history.events) >= 5000
    assert len({e.process for e in run.history.events}) == 8
    assert run.verdict.result == LINEARIZABLE, run.verdict.summary()
    # Every call answered: no lost worker, and no deadlock victim (PostgreSQL aborts one with
    # backend_unavailable, which the checker must then treat as indeterminate).
    lost = [e.describe() for e in run.history.events if e.indeterminate]
    assert lost == []


def test_a_saved_history_carries_what_the_model_needs_to_check_it_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ledgence's claim_dispatch is answered by the model only for a store declaring
    `dispatch`: the header keeps the capabilities (and options), so analyze agrees."""
    # Whether a worker gets to dispatch depends on what it learnt from earlier answers (thread
    # timing): take the first of a few seeds whose history has one the store granted. A refused
    # one is not enough: the model without the capability answers invalid_input, the code the
    # store refuses a never-issued generation with (CI once drew a history whose only
    # claim_dispatch was refused so, and the bare history was explained).
    def dispatched(run: Any) -> bool:
        return any(e.op.name == "claim_dispatch" and isinstance(e.outcome, Ok)
                   for e in run.history.events)

    for seed in range(4, 12):
        run = fencepost.check_concurrent("ledgence-tasks", "memory", threads=3, ops=300,
                                         seed=seed, budget_s=UNBOUNDED)
        assert run.verdict.result == LINEARIZABLE
        if dispatched(run):
            break
    assert dispatched(run)
    path = tmp_path / "h.jsonl"
    run.history.save(path)
    loaded = History.load(path)
    assert loaded == run.history
    assert loaded.capabilities == {"dispatch", "durable", "concurrency"}
    assert main(["analyze", str(path), "--budget", "inf"]) == 0
    assert capsys.readouterr().out.startswith(f"linearizable: {len(loaded.events)} events")
    # without the capability the same history cannot be explained
    bare = History(loaded.contract, loaded.events, loaded.options)
    bare.save(path)
    assert main(["analyze", str(path), "--budget", "inf"]) == 1


def test_a_reports_history_names_its_run(tmp_path: Path) -> None:
    """history.jsonl says which run made it (a directory never mixes two runs, and a history
    copied elsewhere still says where it came from); the run is not part of its value."""
    report = fencepost.check("adk-ledger", "memory", seed=3, concurrent_ops=60)
    written = write_reports(report, str(tmp_path))
    assert str(tmp_path / "history.jsonl") in written
    header = json.loads((tmp_path / "history.jsonl").read_text().splitlines()[0])
    assert header["run"] == {"adapter": "memory", "seed": 3, "profile": "quick",
                             "kit_version": report.kit_version, "replay": report.replay}
    loaded = History.load(tmp_path / "history.jsonl")
    assert loaded.run == header["run"] and loaded == report.history
    bad = json.dumps({**header, "run": {"seed": [3]}})
    with pytest.raises(ValueError, match="^line 1: run must map names to strings or numbers$"):
        History.loads(bad + "\n")


def test_ledgence_and_snodo_make_twice_the_profiles_concurrent_calls_unless_ops_say() -> None:
    from fencepost.run_config import RunConfig

    def calls(contract: str, **given: Any) -> int:
        return RunConfig.of(contract, seed=1, **given).profile.concurrent_ops

    assert (calls("ledgence-tasks"), calls("ledgence-tasks", profile="standard")) == (600, 4000)
    assert (calls("snodo-tasks"), calls("snodo-tasks", profile="standard")) == (600, 4000)
    assert (calls("adk-ledger"), calls("adk-ledger", profile="standard")) == (300, 2000)
    for contract in ("ledgence-tasks", "snodo-tasks"):
        assert calls(contract, concurrent_ops=50) == 50
