"""snodo-tasks end to end: the built-in stores pass every clause, every mutant is caught
(those wrong only in a hard situation answer right just beside it), the catalogue is wired to
real checks, and an external factory plugs in (CLI and pytest)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fencepost.adapters.snodo_tasks.memory import MemoryTasks, MemoryTasksFactory
from fencepost.adapters.snodo_tasks.mutants import MUTANTS
from fencepost.api import check
from fencepost.env import AdapterEnv
from fencepost.mutants import run_mutants
from fencepost.spec import snodo_tasks as spec

EXTERNAL = str(Path(__file__).parent / "external")
ALL = {c.id for c in spec.CLAUSES}
FAULT = frozenset(c.id for c in spec.CLAUSES if "fault_injection" in c.requires)


def assert_all_pass(adapter: str, unsupported: frozenset[str] = frozenset()) -> None:
    report = check("snodo-tasks", adapter, seed=5)
    expected = {c: "unsupported" if c in unsupported else "pass" for c in ALL}
    assert {v.clause.id: v.status for v in report.verdicts} == expected, [
        (v.clause.id, v.status, v.reason) for v in report.verdicts if v.status != "pass"
    ]
    assert report.exit_code == 0


def test_memory_store_passes_every_clause() -> None:
    assert_all_pass("memory", unsupported=FAULT)  # no SQLAlchemy engine to inject faults into


@pytest.mark.long
def test_sqlite_store_passes_every_clause() -> None:
    assert_all_pass("sqlite")


@pytest.mark.long
def test_postgresql_store_passes_every_clause(pg_url: str) -> None:
    assert_all_pass(pg_url)


CRASHES = {m.name: m.crashes_on("memory") for m in MUTANTS}


@pytest.mark.parametrize("name", [m.name for m in MUTANTS if "memory" in m.bases])
def test_mutant_is_caught_by_its_clause(name: str) -> None:
    [row] = run_mutants("snodo-tasks", base="memory", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"
    assert row.crashed == CRASHES[name]  # a crash is its bug, or no part of its catch


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


@contextmanager
def _mutant(name: str, clock: _Clock, **options: str) -> Iterator[Any]:
    """The mutant ``name`` on the memory store, discarded afterwards."""
    mutant = next(m for m in MUTANTS if m.name == name)
    factory = MemoryTasksFactory(mutant.store_class(MemoryTasks))
    env = AdapterEnv(clock=clock, namespace=f"hard_{uuid.uuid4().hex[:10]}", options=options)
    try:
        yield factory(env)
    finally:
        factory.discard(env)


def _create(store: Any, clock: _Clock, task_id: str, ttl_ms: int | None = None,
            retry_policy: tuple[int, ...] = ()) -> str:
    task = spec.Task(task_id, spec.WORKING, None, clock.now, clock.now, ttl_ms, 250, {}, None,
                     None)
    access = store.authorize(spec.Context("acme"), spec.Action("create", task_id))
    try:
        store.create(task, spec.Work(f"idem-{task_id}", "render", {}, retry_policy), access)
    except spec.ContractError as e:
        return e.code
    return "ok"


def test_max_tasks_off_by_one_is_wrong_only_at_exactly_the_limit() -> None:
    clock = _Clock()
    with _mutant("max_tasks_off_by_one", clock, max_tasks="2") as store:
        answers = [_create(store, clock, t) for t in ("a", "b", "c", "d")]
    assert answers == ["ok", "ok", "ok", "capacity_exceeded"]  # c: the store held exactly 2


def test_requests_see_the_ttls_last_ms_is_wrong_only_at_exactly_the_ttl() -> None:
    clock = _Clock()
    with _mutant("requests_see_the_ttls_last_ms", clock) as store:
        for t in ("a", "b", "c"):
            _create(store, clock, t, ttl_ms=100)
        outcomes = []
        for t, at in (("a", 1_099), ("b", 1_100), ("c", 1_101)):
            clock.now = at
            cancel = store.authorize(spec.Context("acme"), spec.Action("cancel", t))
            try:
                outcome = store.transition(t, 0, spec.Event(f"stop-{t}", "cancelled", {}),
                                           spec.RequestAuthority(cancel)).outcome
            except spec.NotFound:
                outcome = "not_found"
            outcomes.append(outcome)
        clock.now = 1_100
        read = store.authorize(spec.Context("acme"), spec.Action("get", "b"))
        with pytest.raises(spec.NotFound):
            store.get("b", read)  # get applies the TTL right
    assert outcomes == ["applied", "applied", "not_found"]  # b: cancelled at exactly its TTL


def test_claim_next_ignores_retry_only_among_several_due_tasks() -> None:
    clock = _Clock()
    with _mutant("claim_next_ignores_retry_among_several", clock) as store:
        _create(store, clock, "d", retry_policy=(60_000,))
        lease = store.claim("d", "w1", 30_000).lease
        retry = spec.Event("retry", "retry_requested", {"error": {}, "statusMessage": "later"})
        store.transition("d", 0, retry, spec.WorkerAuthority(lease))
        store.release(lease)
        clock.now += 1
        _create(store, clock, "a")
        alone = store.claim_next("w2", 30_000)
        store.release(alone.lease)
        _create(store, clock, "b")
        among_two = store.claim_next("w3", 30_000)
    assert (alone.snapshot.task.id, among_two.snapshot.task.id) == ("a", "d")


HARD = ("max_tasks_off_by_one", "requests_see_the_ttls_last_ms",
        "claim_next_ignores_retry_among_several")


def test_stores_wrong_only_in_a_hard_situation_are_caught_by_their_clause_at_quick() -> None:
    rows = run_mutants("snodo-tasks", base="memory", profile="quick", only=list(HARD))
    assert {r.name: r.caught_by for r in rows} == {
        "max_tasks_off_by_one": ["SNODO-CAP-001"],
        "requests_see_the_ttls_last_ms": ["SNODO-TTL-001"],
        "claim_next_ignores_retry_among_several": ["SNODO-CLAIM-007"],
    }


RACY = [m.name for m in MUTANTS
        if any(c.startswith("race:") for c in spec.CLAUSES[m.expected_clause].checks)]


@pytest.mark.parametrize("name", RACY)
def test_non_atomic_store_is_caught_on_sqlite(name: str) -> None:
    [row] = run_mutants("snodo-tasks", base="sqlite", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=EXTERNAL)
    return subprocess.run([sys.executable, "-m", "fencepost.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_external_factory_through_cli_and_plugin(tmp_path: Path) -> None:
    ok = _cli("check", "snodo-tasks", "--adapter", "my_tasks:make_tasks", "--seed", "2",
              "--quiet", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{len(ALL - FAULT)} pass, 0 fail, 0 unknown, {len(FAULT)} unsupported" in ok.stdout
    leaky = _cli("check", "snodo-tasks", "--adapter", "my_tasks:make_leaky_tasks", "--seed", "2",
                 "--quiet", cwd=tmp_path)
    assert leaky.returncode == 1
    assert "SNODO-AUTH-003 FAILED" in leaky.stdout
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf",
         "--fencepost-only", "--fencepost-contract", "snodo-tasks",
         "--fencepost-adapter", "my_tasks:make_leaky_tasks", "--fencepost-seed", "2"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=EXTERNAL), capture_output=True, text=True,
        timeout=600,
    )
    assert plugin.returncode == 1, plugin.stdout
    assert "FAILED fencepost::snodo-tasks::SNODO-AUTH-003" in plugin.stdout
