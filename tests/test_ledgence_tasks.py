"""ledgence-tasks end to end on the memory store: every clause passes, every
mutant is caught by its clause, and the CLI says plainly what is not there yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fencepost.adapters.ledgence_tasks.mutants import MUTANTS
from fencepost.api import check
from fencepost.mutants import run_mutants
from fencepost.registry import contract_named
from fencepost.spec import ledgence_tasks as spec

ALL = {c.id for c in spec.CLAUSES}
FAULT = {c.id for c in spec.CLAUSES if "fault_injection" in c.requires}


def test_memory_store_passes_every_clause() -> None:
    report = check("ledgence-tasks", "memory", seed=3)
    expected = {c: "unsupported" if c in FAULT else "pass" for c in ALL}  # no engine: no faults
    assert {v.clause.id: v.status for v in report.verdicts} == expected, [
        (v.clause.id, v.status, v.reason) for v in report.verdicts if v.status != "pass"
    ]


def test_memory_store_passes_every_clause_under_task_first_renew_lookup() -> None:
    report = check("ledgence-tasks", "memory", seed=3,
                   options={spec.RENEW_LOOKUP: spec.TASK_FIRST})
    expected = {c: "unsupported" if c in FAULT else "pass" for c in ALL}
    assert {v.clause.id: v.status for v in report.verdicts} == expected, [
        (v.clause.id, v.status, v.reason) for v in report.verdicts if v.status != "pass"
    ]


def test_renew_lookup_is_the_one_choice_and_defaults_to_the_seeds_order() -> None:
    [choice] = spec.CHOICES
    assert (choice.name, choice.default, [v for v, _ in choice.values]) == (
        "renew_lookup", "cursor_first", ["cursor_first", "task_first"])
    assert spec.CLAUSES["LDG-OWNER-001"].choice == "renew_lookup"
    assert {m.name: dict(m.options) for m in MUTANTS if m.options} == {
        "renew_missing_task_is_lost": {"renew_lookup": "task_first"}}


CRASHES = {m.name: m.crashes_on("memory") for m in MUTANTS}


@pytest.mark.parametrize("name", [m.name for m in MUTANTS if "memory" in m.bases])
def test_mutant_is_caught_by_its_clause(name: str) -> None:
    [row] = run_mutants("ledgence-tasks", base="memory", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"
    assert row.crashed == CRASHES[name]  # a crash is its bug, or no part of its catch


def _needs_sqlite(clause: str) -> bool:
    """Bugs only a real database shows: races, the concurrent run, injected faults (every other
    mutant is caught on memory above; `fencepost mutants --adapter sqlite` runs them all)."""
    checks = spec.CLAUSES[clause].checks
    return any(c.startswith(("race:", "fault:")) or c == "concurrent" for c in checks)


@pytest.mark.parametrize("name", [m.name for m in MUTANTS
                                  if "sqlite" in m.bases and _needs_sqlite(m.expected_clause)])
def test_mutant_on_sqlite_is_caught_by_its_clause(name: str) -> None:
    [row] = run_mutants("ledgence-tasks", base="sqlite", only=[name])
    assert row.caught, f"{name} escaped on SQLite; failed clauses: {row.caught_by}"


@pytest.mark.long
def test_postgresql_store_passes_every_clause(pg_url: str) -> None:
    report = check("ledgence-tasks", pg_url, seed=3)
    assert {v.clause.id: v.status for v in report.verdicts} == {c: "pass" for c in ALL}


def test_non_string_json_keys_are_invalid_input() -> None:
    from fencepost.spec.ledgence_tasks.submission import canonical_json

    with pytest.raises(spec.InvalidInput, match="keys must be strings"):
        canonical_json({1: "x", None: "y"})


@pytest.mark.long
def test_the_sqlite_store_passes_every_clause_through_the_command(tmp_path: Path) -> None:
    """The main command on its default adapter (SQLite): every clause, the fault clauses too."""
    result = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "ledgence-tasks", "--quiet",
         "--seed", "3", "--report", "R"],
        cwd=tmp_path, env=dict(os.environ), capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(ALL)} pass, 0 fail" in result.stdout
    report = json.loads((tmp_path / "R" / "report.json").read_text())
    assert report["adapter"] == "sqlite"
    assert {c["id"]: c["status"] for c in report["clauses"]} == {c: "pass" for c in ALL}


def _pg_store(pg_url: str, namespace: str, store_class: type | None = None) -> Any:
    from fencepost.adapters.ledgence_tasks.sql import SqlLedgence, SqlLedgenceFactory
    from fencepost.env import AdapterEnv
    from fencepost.scenarios.clock import SimClock

    factory = SqlLedgenceFactory(pg_url, store_class or SqlLedgence)
    env = AdapterEnv(clock=SimClock().now, namespace=namespace)
    return factory, env, factory(env)


def _walk_on_postgresql(pg_url: str, namespace: str, store_class: type | None = None) -> Any:
    """A 1,500-task walk: 500 tasks before it, 4 writers x 250 during it, pages of 37."""
    from fencepost.scenarios.ledgence_tasks.races import walk_under_writers

    factory, env, store = _pg_store(pg_url, f"{namespace}{os.getpid()}", store_class)
    try:
        return walk_under_writers(store, spec.Scope("acme", "prod"), "w", writers=4,
                                  per_writer=250, initial=500, limit=37)
    finally:
        store.close()
        factory.discard(env)
        factory.close()


def test_walk_under_four_writers_on_postgresql_is_exact(pg_url: str) -> None:
    """Each page is read after more submissions committed: tasks submitted during the walk
    show up too, and the snapshot invariants hold."""
    walk = _walk_on_postgresql(pg_url, "walk")
    assert walk.problems == ()
    assert walk.submitted == 1500
    assert walk.before <= set(walk.returned)
    assert len(walk.returned) > len(walk.before)  # the walk saw concurrent submissions
    assert walk.pages >= 500 // 37


def test_offset_pagination_fails_the_walk_on_postgresql(pg_url: str) -> None:
    from fencepost.adapters.ledgence_tasks.sql import SqlLedgence

    [offset] = [m for m in MUTANTS if m.name == "offset_pagination"]
    walk = _walk_on_postgresql(pg_url, "walkoff", offset.store_class(SqlLedgence))
    assert any("returned 2 times" in p or "was skipped" in p for p in walk.problems), walk


class _NoDispatch:
    """A store without targeted dispatch: its claim_dispatch rejects (the seed's default)."""

    capabilities = frozenset({"durable", "concurrency"})


def test_a_store_without_dispatch_is_held_to_its_refusal_only() -> None:
    from fencepost.adapters.ledgence_tasks.memory import MemoryLedgence, MemoryLedgenceFactory

    store_class = type("NoDispatchMemory", (_NoDispatch, MemoryLedgence), {})
    report = check("ledgence-tasks", MemoryLedgenceFactory(store_class), seed=5)
    statuses = {v.clause.id: v.status for v in report.verdicts}
    dispatch = {f"LDG-DISPATCH-00{k}" for k in (*range(1, 8), 9)}
    assert {c for c, s in statuses.items() if s == "unsupported"} == dispatch | FAULT
    assert {c for c, s in statuses.items() if s != "unsupported"} == ALL - dispatch - FAULT
    assert all(s == "pass" for c, s in statuses.items() if c not in dispatch | FAULT)
    assert report.exit_code == 0



@pytest.mark.parametrize("seed", [1, 2])
def test_a_history_page_of_every_event_fails_history_001_at_quick(seed: int) -> None:
    """One task driven past 100 events: a store that does not cut the page at 100 is caught
    by the page rule alone (before that task existed every page held 10 events or fewer)."""
    [row] = run_mutants("ledgence-tasks", base="memory", only=["history_page_unbounded"],
                        seed=seed)
    assert (row.caught, row.caught_by) == (True, ["LDG-HISTORY-001"])


@pytest.mark.parametrize("seed", [1, 2])
def test_a_scan_taking_due_tasks_by_id_fails_recover_003_at_quick(seed: int) -> None:
    """Four due tasks whose expiries run unlike their ids: a bounded scan in id order takes
    another task than the earliest expiry, and only the earliest-first rule fails."""
    [row] = run_mutants("ledgence-tasks", base="memory", only=["recovery_scans_in_id_order"],
                        seed=seed)
    assert (row.caught, row.caught_by) == (True, ["LDG-RECOVER-003"])


def test_claims_in_submission_order_fail_acq_001_at_quick() -> None:
    """A retry submitted first but available after a newer task: claimed out of turn by a
    store ordering on submitted_at alone (before, only standard met that case)."""
    [row] = run_mutants("ledgence-tasks", base="memory", only=["claims_in_submission_order"])
    assert (row.caught, row.caught_by) == (True, ["LDG-ACQ-001"])


def test_a_cancel_that_extends_a_sooner_deadline_fails_cancel_003_at_quick() -> None:
    """A cancel 1 ms before a lease capped by a deadline within 30 s: setting the deadline to
    now + 30 000 instead of cutting it is caught by the cancel rule alone."""
    [row] = run_mutants("ledgence-tasks", base="memory", only=["cancel_sets_deadline"])
    assert (row.caught, row.caught_by) == (True, ["LDG-CANCEL-003"])


@pytest.mark.parametrize(("name", "clause"), [
    ("failure_phase_unchecked", "LDG-SETTLE-006"),  # no check sent a bad phase before
    ("cleanup_error_as_text", "LDG-SETTLE-006"),  # the kit's old reading of a cleanup error
    ("owner_checked_as_text", "LDG-SETTLE-002"),  # the kit's old reading of an owner
    ("report_context_checked_as_text", "LDG-SETTLE-005"),  # the kit's old reading of a report
])
def test_a_store_wrong_at_an_edge_fails_that_clause_alone(name: str, clause: str) -> None:
    """An edge answered otherwise than the seed is caught by the rule of that edge only."""
    [row] = run_mutants("ledgence-tasks", base="memory", only=[name])
    assert (row.caught, row.caught_by) == (True, [clause])


def test_every_edge_scenario_is_named_by_the_clauses_its_edges_break() -> None:
    """Each edges_of_* scenario proves at least one mutant's clause."""
    from fencepost.adapters.ledgence_tasks.mutants.edges import MUTANTS as EDGES

    edges = {c.id: {k for k in c.checks if k.startswith("scenario:edges_of_")}
             for c in spec.CLAUSES}
    assert all(edges[m.expected_clause] for m in EDGES), [
        m.name for m in EDGES if not edges[m.expected_clause]]
    from fencepost.scenarios.ledgence_tasks.suite import SUITE

    proven = {f"scenario:{n}" for n in SUITE.scenarios if n.startswith("edges_of_")}
    assert proven and set().union(*edges.values()) == proven


@pytest.mark.parametrize(("name", "clause"), [
    # the three gaps a mutation test of the rules core found (issue 25)
    ("extension_not_stored", "LDG-SESSION-004"),
    ("dispatch_at_deadline_authorized", "LDG-RENEW-007"),
    ("unissued_cursor_is_a_position", "LDG-LIST-007"),
    ("cursor_outside_filters_accepted", "LDG-LIST-007"),
    # stored values read back exactly, and the refusals of the seed's JSON domain
    ("input_through_lossy_json", "LDG-READ-005"),
    ("output_through_lossy_json", "LDG-READ-005"),
    ("integer_beyond_u64_accepted", "LDG-SUBMIT-004"),
    ("deep_output_accepted", "LDG-SETTLE-006"),
    ("correlation_key_checked_as_an_id", "LDG-SUBMIT-001"),  # the kit's old reading
    ("next_generation_conflicts", "LDG-DISPATCH-007"),  # the kit's old reading
    ("data_depth_unchecked", "LDG-SUBMIT-004"),  # refusals no check sent before
    ("retry_delay_unbounded", "LDG-SUBMIT-004"),
])
@pytest.mark.parametrize("base", ["memory", "sqlite"])
def test_a_gap_closed_for_issue_25_is_caught_at_quick_by_its_clause_alone(
        name: str, clause: str, base: str) -> None:
    [row] = run_mutants("ledgence-tasks", base=base, only=[name])
    assert (row.caught, row.caught_by) == (True, [clause])


@pytest.mark.parametrize("name", ["outcome_started_from_report", "outcome_taken_as_quiescent",
                                  "cleanup_error_dropped", "lost_failure_with_message"])
@pytest.mark.parametrize("base", ["memory", "sqlite"])
def test_an_outcome_read_back_otherwise_than_the_seed_fails_read_001_alone(
        name: str, base: str) -> None:
    """result's outcome carries what the seed's TaskOutcome carries: a store wrong in one of
    its fields (the attempt's flags, the cleanup error, the lost attempt's failure) is caught
    at quick by the read rule, and by nothing else."""
    [row] = run_mutants("ledgence-tasks", base=base, only=[name])
    assert (row.caught, row.caught_by) == (True, ["LDG-READ-001"])


def test_each_new_situation_is_named_by_its_clause() -> None:
    """The cases the gaps needed are situations, so a run that misses one passes weakly."""
    from fencepost.spec.ledgence_tasks import situations as names

    situations = {c.id: {s.name for s in c.situations} for c in spec.CLAUSES}
    assert names.EXTENSION_READ_BACK in situations["LDG-SESSION-004"]
    assert set(names.DISPATCH_AT_DEADLINE) <= situations["LDG-RENEW-007"]
    assert set(names.UNISSUED_POSITIONS) <= situations["LDG-LIST-007"]
    assert set(names.MALFORMED_CURSORS) <= situations["LDG-LIST-007"]
    assert names.FORGED_AT_ZERO in situations["LDG-LIST-007"]
    assert names.DEEP_OUTPUT in situations["LDG-SETTLE-006"]
    assert set(names.OUTCOME_READ_BACKS) <= situations["LDG-READ-001"]
    assert {f"task input: {case}" for case in names.EXACT_VALUES} <= situations["LDG-READ-005"]


def test_a_store_taking_the_concurrency_the_workload_sends_to_be_refused_is_judged() -> None:
    """The concurrent workload sends open_session(0) and (-1) to be refused; a store that
    takes them gets a session of no consumers, which the kit once crashed on (an internal
    error, exit 4). It is judged instead: the refusal's rule and the concurrent run fail."""
    report = check("ledgence-tasks", "mutant:zero_concurrency_accepted", seed=1)
    assert {v.clause.id for v in report.failed()} == {"LDG-SESSION-002", "LDG-LIN-001"}


def test_a_store_answering_no_snapshot_to_a_submission_is_judged_by_the_walk() -> None:
    """The pagination walk submits its tasks straight on the store and once read the task id
    off whatever it answered: a store answering None crashed the kit. The walk's rule fails,
    saying what the store answered."""
    base = contract_named("ledgence-tasks").store_class("memory")

    class NoneForNew(base):  # type: ignore[misc, valid-type]
        def _look_up_then_insert(self, look_up: Any, insert: Any) -> Any:
            with self._transaction() as txn:
                found = look_up(txn)
                return found if found is None else insert(txn)

    factory = contract_named("ledgence-tasks").memory_factory(NoneForNew)
    report = check("ledgence-tasks", factory, seed=1)
    walk = next(v for v in report.failed() if v.clause.id == "LDG-LIST-009")
    assert walk.failure is not None
    assert walk.failure.message == (
        "submitting the tasks before the walk: ValueError: accept_resolved_submission answered "
        "a NoneType, not a TaskSnapshot with a text task_id")


class _Bindings:
    """What :func:`forge_cursor` reads and writes of a harness: its bindings."""

    def __init__(self, cursor: str) -> None:
        from fencepost.model.ledgence_tasks.records import PagePosition

        meaning = PagePosition(spec.Scope("t", "n"), spec.TaskFilters(), 1_000, "task_1")
        self.bindings: dict[str, Any] = {"c": (meaning, cursor)}

    def bind(self, name: str, meaning: Any, real: Any) -> None:
        self.bindings[name] = (meaning, real)

    def forged(self, case: str, edit: Any, upper: bool = False) -> Any:
        from fencepost.scenarios.ledgence_tasks.pagination import forge_cursor

        ref = forge_cursor(self, "c", case, edit, upper=upper)  # type: ignore[arg-type]
        meaning, real = self.bindings[ref.name]
        assert meaning.case == case
        return real


def _hex(text: str) -> str:
    return text.encode("utf-8").hex()


def test_a_forged_cursor_is_written_as_the_store_wrote_its_own() -> None:
    """Canonical JSON stays canonical (sorted keys); the seed's struct order stays its order;
    an edit the cursor's shape cannot take, or a cursor that is no hex of JSON, is replaced by
    the seed's encoding of the position, edited."""
    from fencepost.scenarios.ledgence_tasks import pagination as p

    kit = _hex('{"filters":{},"position":[1000,"task_1"],"scope":["t","n"],"version":1}')
    assert bytes.fromhex(_Bindings(kit).forged("k", p.with_key("after", None))).decode() == (
        '{"after":null,"filters":{},"position":[1000,"task_1"],"scope":["t","n"],"version":1}')
    assert bytes.fromhex(_Bindings(kit).forged("f", p.time_as_float)).decode() == (
        '{"filters":{},"position":[1000.0,"task_1"],"scope":["t","n"],"version":1}')
    assert bytes.fromhex(_Bindings(kit).forged("3", p.third_part)).decode() == (
        '{"filters":{},"position":[1000,"task_1","x"],"scope":["t","n"],"version":1}')
    seed = _hex('{"version":1,"scope":{},"filters":{},'
                '"position":{"submitted_at":1000,"task_id":"task_1"}}')
    assert bytes.fromhex(_Bindings(seed).forged("v", p.with_key("version", 2))).decode() == (
        '{"version":2,"scope":{},"filters":{},'
        '"position":{"submitted_at":1000,"task_id":"task_1"}}')
    assert bytes.fromhex(_Bindings(seed).forged("s", p.no_task_id)).decode() == (
        '{"version":1,"scope":{},"filters":{},"position":{"submitted_at":1000}}')
    seed_of_the_position = json.loads(bytes.fromhex(
        _Bindings("an opaque token").forged("e", p.with_task_id(""))))
    assert seed_of_the_position == {
        "version": 1, "scope": {"tenant_id": "t", "namespace": "n"},
        "filters": {"state": None, "queue": None, "submitted_from": None,
                    "submitted_until": None, "correlation_key": None},
        "position": {"submitted_at": 1000, "task_id": ""}}


@pytest.mark.parametrize(("issued", "same_cursor"), [
    (_hex('{"position":[1000,"task_1"]}'), True),
    (_hex('{"position":[1000,"task_1"]}').upper(), True),
    ("0123456789", False), ("an opaque token", False)])
def test_a_cursor_in_the_other_case_is_never_the_cursor_issued(issued: str,
                                                               same_cursor: bool) -> None:
    """A cursor of hex JSON in the other case (a store that writes uppercase gets its cursor
    in lowercase); any other cursor (digits alone, no hex), the seed's encoding in
    uppercase."""
    from fencepost.scenarios.ledgence_tasks import pagination as p

    forged = _Bindings(issued).forged("u", p.unchanged, upper=True)
    assert forged != issued
    if same_cursor:
        assert forged.lower() == issued.lower()
    else:
        assert forged == forged.upper() and json.loads(bytes.fromhex(forged))["version"] == 1


def test_a_store_that_refuses_a_cursor_it_never_issued_passes_too() -> None:
    """A well-formed cursor at timestamp 0 no page issued: the seed reads it as its position,
    a store that keeps the cursors it issued refuses it; both are the contract's. (Its own
    cursors it reads, one issued at timestamp 0 too.)"""
    contract = contract_named("ledgence-tasks")
    issued: dict[str, set[str]] = {}  # namespace -> the cursors its pages issued

    class KeepsTheCursorsItIssued(contract.store_class("memory")):  # type: ignore[misc]
        def list_tasks(self, scope: Any, query: Any) -> Any:
            mine = issued.setdefault(self.env.namespace, set())
            if isinstance(query.cursor, str) and query.cursor not in mine:
                raise spec.InvalidInput("a cursor no page of this store issued")
            page = super().list_tasks(scope, query)
            if page.next_cursor is not None:
                mine.add(page.next_cursor)
            return page

    report = check("ledgence-tasks", contract.memory_factory(KeepsTheCursorsItIssued),
                   profile="quick", seed=1, strict=True)
    verdicts = {v.clause.id: v.status for v in report.verdicts}
    assert verdicts["LDG-LIST-006"] == verdicts["LDG-LIST-007"] == "pass"
    assert report.failed() == []
