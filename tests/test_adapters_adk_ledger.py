"""The built-in adk-ledger stores pass every clause; their races have exactly one winner."""

from __future__ import annotations

import uuid

import pytest

from fencepost.adapter_spec import resolve_adapter
from fencepost.api import check
from fencepost.model.adk_ledger import MODEL, default_options
from fencepost.scenarios.adk_ledger import races
from fencepost.scenarios.clock import SimClock
from fencepost.scenarios.harness import Harness, World
from fencepost.spec import adk_ledger as spec

ALL = {c.id for c in spec.CLAUSES}
FAULT = frozenset(c.id for c in spec.CLAUSES if "fault_injection" in c.requires)


def assert_all_pass(adapter: str, seed: int = 7,
                    unsupported: frozenset[str] = frozenset()) -> None:
    report = check("adk-ledger", adapter, profile="quick", seed=seed)
    statuses = {v.clause.id: v.status for v in report.verdicts}
    assert statuses == {cid: "unsupported" if cid in unsupported else "pass" for cid in ALL}, [
        (v.clause.id, v.status, v.reason) for v in report.verdicts if v.status != "pass"
    ]
    assert report.exit_code == 0
    assert report.steps > 1000


def test_memory_ledger_passes_every_clause() -> None:
    assert_all_pass("memory", unsupported=FAULT)  # no SQLAlchemy engine to inject faults into


def test_sqlite_ledger_passes_every_clause() -> None:
    assert_all_pass("sqlite")


@pytest.mark.long
def test_postgresql_ledger_passes_every_clause(pg_url: str) -> None:
    assert_all_pass(pg_url)


def _race_rounds(adapter: str, race: str, rounds: int) -> list[str]:
    factory, _ = resolve_adapter("adk-ledger", adapter)
    # A namespace of its own: the suite runs on several workers against one PostgreSQL.
    world = World(MODEL, factory, SimClock(1_000_000), f"race{uuid.uuid4().hex[:10]}",
                  default_options())
    world.capabilities = frozenset({"concurrency"})
    failures = []
    try:
        for r in range(rounds):
            try:
                getattr(races, race)(Harness(world), f"p{r}", 8, r)
            except AssertionError as e:
                failures.append(str(e))
    finally:
        world.close()
        getattr(factory, "discard", lambda env: None)(world.env)
        getattr(factory, "close", lambda: None)()
    return failures


@pytest.mark.parametrize("race", ["concurrent_claimants", "concurrent_creates",
                                  "renew_versus_takeover"])
def test_sqlite_race_has_exactly_one_winner(race: str) -> None:
    assert _race_rounds("sqlite", race, 25) == []


@pytest.mark.parametrize("race", ["concurrent_claimants", "concurrent_creates",
                                  "renew_versus_takeover"])
def test_postgresql_race_has_exactly_one_winner(race: str, pg_url: str) -> None:
    assert _race_rounds(pg_url, race, 25) == []


def test_sqlite_store_reopens_the_same_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from fencepost.env import AdapterEnv

    factory, _ = resolve_adapter("adk-ledger", f"sqlite:///{tmp_path}/ledger.db")
    env = AdapterEnv(clock=lambda: 5, namespace="reopen")
    store = factory(env)
    store.create("a", {"kind": "k"}, {"n": 1})
    store.claim("a", "c1", "t1", 10, 100)
    store.close()
    again = factory(env)
    assert again.get("a").checkpoint == {"n": 1}
    with pytest.raises(spec.InvocationOwned):
        again.claim("a", "c2", "t2", 109, 10)
    with pytest.raises(spec.StaleOwner):
        again.renew("a", "t-other", 50, 10)
    again.renew("a", "t1", 50, 10)
    assert again.get("a").lease_until == 60
    again.close()


@pytest.mark.parametrize("adapter", ["memory", "sqlite"])
def test_built_in_stores_refuse_what_the_seeds_guards_exclude_and_change_nothing(
        adapter: str) -> None:
    from fencepost.env import AdapterEnv
    from fencepost.scenarios.adk_ledger import edges

    factory, _ = resolve_adapter("adk-ledger", adapter)
    env = AdapterEnv(clock=lambda: 5, namespace=f"guards{adapter}")
    store = factory(env)
    try:
        store.create("a", {"workflow_id": "w", "workflow_version": 1, "kind": "k"}, {"n": 1})
        store.claim("a", "c1", "t1", 10, 100)
        before = store.get("a")
        for op in (*edges.malformed(default_options(), "a", "c1", "t1", 20),
                   spec.Create("", {}, {})):
            with pytest.raises(spec.ARGUMENT_ERRORS[op.name]):
                op.invoke(store)
        assert store.get("a") == before
    finally:
        store.close()
        getattr(factory, "discard", lambda env: None)(env)


@pytest.mark.parametrize("adapter", ["memory", "sqlite"])
def test_no_caller_changes_stored_data_by_changing_a_value(adapter: str) -> None:
    """What a caller gave (metadata, a checkpoint, an outcome, nested to any depth) and every
    answer share nothing with what is stored: changing them in place after the call changes
    nothing the store answers later."""
    from fencepost.env import AdapterEnv

    factory, _ = resolve_adapter("adk-ledger", adapter)
    env = AdapterEnv(clock=lambda: 5, namespace=f"isolated{adapter}{uuid.uuid4().hex[:8]}")
    store = factory(env)
    try:
        metadata = {"workflow_id": ["w"], "workflow_version": 1, "kind": {"k": [1]}}
        first = {"n": [1], "deep": {"m": [2]}}
        store.create("a", metadata, first)
        metadata["workflow_id"].append("changed")
        metadata["kind"]["k"].append("changed")
        first["n"].append("changed")
        first["deep"]["m"].append("changed")
        claimed = store.claim("a", "c1", "t1", 10, 100)
        claimed.checkpoint["n"].append("changed")
        assert store.get("a").checkpoint == {"n": [1], "deep": {"m": [2]}}
        assert (store.get("a").workflow_id, store.get("a").kind) == (["w"], {"k": [1]})
        second = {"list": [{"x": 1}]}
        store.checkpoint("a", "t1", second, 20, 100)
        second["list"][0]["x"] = "changed"
        store.get("a").checkpoint["list"][0]["x"] = "changed"
        assert store.get("a").checkpoint == {"list": [{"x": 1}]}
        outcome = {"result": [1, {"y": 2}]}
        store.finish("a", "t1", "completed", outcome, {"done": [True]}, 30)
        outcome["result"][1]["y"] = "changed"
        got = store.get("a")
        got.outcome["result"].append("changed")
        got.checkpoint["done"].append("changed")
        again = store.get("a")
        assert (again.outcome, again.checkpoint) == ({"result": [1, {"y": 2}]}, {"done": [True]})
    finally:
        store.close()
        getattr(factory, "discard", lambda env: None)(env)
