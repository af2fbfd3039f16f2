"""What only the SQL ledgence-tasks store has: exact storage of values, the tables, the unique
binding's lost-race path, discard and unreachable servers, on SQLite and PostgreSQL.

The contract's rules themselves run on every backend in test_adapters_ledgence_tasks_memory.py.
"""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import race

from fencepost.adapters.ledgence_tasks.core import TaskRecord
from fencepost.adapters.ledgence_tasks.sql import (
    SqlLedgence,
    SqlLedgenceFactory,
    dumps,
    ledgence_tables,
    loads,
)
from fencepost.adapters.sql import make_engine, table_name
from fencepost.env import AdapterEnv
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import BackendUnavailable, ContractError

SCOPE = spec.Scope("tenant-a", "prod")
PROGRAM = spec.Program("mailer", "1.2.0")
DESCRIPTOR = spec.ProgramDescriptor(PROGRAM, "sha256:" + "ab" * 32, 4096)
START = 1_000


def command(key: str = "key-1", data: Any = None, scope: spec.Scope = SCOPE) -> spec.SubmitCommand:
    return spec.SubmitCommand(key, spec.TaskInput(scope, "emails", PROGRAM, data=data))


class Backend:
    """One SQL URL; the envs opened (dropped at the end) and the stores (closed)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.factory = SqlLedgenceFactory(url)
        self.envs: list[AdapterEnv] = []
        self.stores: list[SqlLedgence] = []
        self.factories: list[SqlLedgenceFactory] = []
        self._lock = threading.Lock()

    def env(self) -> AdapterEnv:
        env = AdapterEnv(clock=lambda: START, namespace=f"sqlsmoke_{uuid.uuid4().hex[:12]}")
        self.envs.append(env)
        return env

    def open(self, env: AdapterEnv | None = None,
             store_class: type[SqlLedgence] = SqlLedgence) -> SqlLedgence:
        factory = SqlLedgenceFactory(self.url, store_class)
        store = factory(env if env is not None else self.env())
        with self._lock:
            self.stores.append(store)
            self.factories.append(factory)
        return store

    def table_names(self) -> set[str]:
        engine = make_engine(self.url)
        try:
            return set(sa.inspect(engine).get_table_names())
        finally:
            engine.dispose()

    def cleanup(self) -> None:
        for store in self.stores:
            store.close()
        for env in self.envs:
            self.factory.discard(env)
        for factory in [self.factory, *self.factories]:  # their pooled connections
            factory.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    url = (f"sqlite:///{tmp_path}/ledgence.db" if request.param == "sqlite"
           else request.getfixturevalue("pg_url"))
    b = Backend(url)
    yield b
    b.cleanup()


def typed(value: Any) -> Any:
    """``value`` with every scalar paired with its type: equal only when types are equal too."""
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(v) for v in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


EXACT = {
    "int": 1, "float": 1.0, "neg_zero": -0.0, "big": 2**63 + 7, "tiny": 5e-324,
    "tuple": (1, (2.5, "x"), []), "nested": [{"a": None, "b": True}, (False,)],
    "int_keys": {2: "two", 1: "one"}, "tuple_keys": {(1, 2): "pair", (0,): "single"},
    "tagged": {"__t__": "tuple", "v": [1]}, "typed": {"__type__": "Scope", "tenant_id": "x"},
    "text": "caf\u00e9 \u2603 \U0001f600 \"quoted\" \\ \x00 nul",
}


# What a submission may carry: JSON data only (object keys are strings).
JSON_EXACT = {k: v for k, v in EXACT.items() if k not in ("int_keys", "tuple_keys")}

MIXED_KEYS = {1: "one", 2.5: "two and a half", None: "none", (1, 2): "pair", "s": "str"}


def test_values_round_trip_with_their_types() -> None:
    for value in (*EXACT.values(), EXACT, MIXED_KEYS, -0.0, 0.0, [], {}, (), None):
        assert typed(loads(dumps(value))) == typed(value)
    snap = spec.TaskSnapshot("task_1", "run_1", "k", command(data=EXACT).input, DESCRIPTOR,
                             "queued", 1, 1, None, None, 0, None)
    record = TaskRecord(snap, "att_1", {"kind": "cancelled"})
    assert loads(dumps(record)) == record
    assert math.copysign(1.0, loads(dumps(-0.0))) == -1.0


def test_a_submission_is_stored_exactly_and_reopened_exactly(backend: Backend) -> None:
    env = backend.env()
    store = backend.open(env)
    snap = store.accept_resolved_submission(command(data=JSON_EXACT), DESCRIPTOR)
    store.close()
    again = backend.open(env)
    assert again.inspect(SCOPE, snap.task_id) == snap
    assert typed(again.inspect(SCOPE, snap.task_id).input.data) == typed(JSON_EXACT)
    assert again.accept_resolved_submission(command(data=dict(JSON_EXACT)), DESCRIPTOR) == snap


@pytest.mark.parametrize(("first", "second"), [(0.0, -0.0), (1, 1.0), ((1,), [1.0])])
def test_stored_numbers_keep_their_class_for_matching(
        backend: Backend, first: Any, second: Any) -> None:
    store = backend.open()
    winner = store.accept_resolved_submission(command(data=first), DESCRIPTOR)
    with pytest.raises(spec.Conflict):
        store.accept_resolved_submission(command(data=second), DESCRIPTOR)
    assert store.accept_resolved_submission(command(data=first), DESCRIPTOR) == winner


def test_tables_are_named_for_the_namespace_and_discard_drops_only_them(
        backend: Backend) -> None:
    mine, other = backend.env(), backend.env()
    backend.open(mine).open_session(SCOPE, "emails", 1)
    backend.open(other)
    names = {table_name(mine.namespace, f"ledgence_{t}") for t in ("sessions", "tasks",
                                                                     "history")}
    theirs = {table_name(other.namespace, f"ledgence_{t}") for t in ("sessions", "tasks",
                                                                       "history")}
    assert names | theirs <= backend.table_names()
    backend.factory.discard(mine)
    assert not names & backend.table_names()
    assert theirs <= backend.table_names()
    backend.factory.discard(mine)  # discarding twice is fine


def test_the_binding_is_a_unique_constraint(backend: Backend) -> None:
    env = backend.env()
    backend.open(env)
    engine = make_engine(backend.url)
    try:
        tasks = ledgence_tables(env.namespace).tasks.name
        uniques = sa.inspect(engine).get_unique_constraints(tasks)
    finally:
        engine.dispose()
    assert [sorted(u["column_names"]) for u in uniques] == [["idempotency_key", "scope"]]


class BlindToBindings(SqlLedgence):
    """Never sees an accepted binding before inserting: every repeat submission takes the path
    of a transaction that lost the race to insert (IntegrityError on the unique binding)."""

    @staticmethod
    def _accepted(txn: Any, scope: spec.Scope, idempotency_key: str) -> TaskRecord | None:
        return None


def test_a_lost_insert_replays_or_conflicts_like_a_found_binding(backend: Backend) -> None:
    env = backend.env()
    blind = backend.open(env, BlindToBindings)
    winner = blind.accept_resolved_submission(command(data={"n": 1}), DESCRIPTOR)
    other_descriptor = spec.ProgramDescriptor(PROGRAM, "sha256:" + "cd" * 32, 1)
    assert blind.accept_resolved_submission(command(data={"n": 1}), other_descriptor) == winner
    with pytest.raises(spec.Conflict, match="accepted for another input"):
        blind.accept_resolved_submission(command(data={"n": 2}), DESCRIPTOR)
    blind.cancel(SCOPE, winner.task_id)
    replay = blind.accept_resolved_submission(command(data={"n": 1}), DESCRIPTOR)
    assert replay.state == "cancelled" and replay.task_id == winner.task_id
    # Another scope is another binding, even for a store blind to bindings.
    theirs = blind.accept_resolved_submission(
        command(data={"n": 1}, scope=spec.Scope("tenant-b", "prod")), DESCRIPTOR)
    assert theirs.task_id != winner.task_id
    seeing = backend.open(env)
    assert seeing.lookup_submission(SCOPE, "key-1") == replay
    assert [r.event.reason for r in seeing.history(SCOPE, winner.task_id, 0)] == [
        "submitted", "cancel_requested", "cancelled"]


def test_stores_of_one_namespace_open_concurrently(backend: Backend) -> None:
    env = backend.env()
    answers = race(8, lambda i: backend.open(env).open_session(SCOPE, "emails", 1))
    assert [a for a in answers if isinstance(a, BaseException)] == []


def test_repr_names_the_url() -> None:
    assert repr(SqlLedgenceFactory("sqlite:///x.db")) == "SqlLedgenceFactory('sqlite:///x.db')"


def test_an_unreachable_server_is_backend_unavailable() -> None:
    factory = SqlLedgenceFactory("postgresql+psycopg://postgres@127.0.0.1:1/test")
    env = AdapterEnv(clock=lambda: START, namespace="unreachable")
    with pytest.raises(BackendUnavailable):
        factory(env)
    with pytest.raises(BackendUnavailable):
        factory.discard(env)


def test_acquisitions_from_one_queue_take_their_turn_on_postgresql(pg_url: str) -> None:
    """Eight consumers acquire from one queue at once: each gets a task of its own, and none
    found the head it locked taken by another and had to look again (a savepoint rolled back).
    Waiting all at once on the head's row lock, they went round n^2 times: twice the time of
    eight acquisitions one after the other."""
    b = Backend(pg_url)
    try:
        store = b.open()
        session = store.open_session(SCOPE, "emails", 8)
        for k in range(8):
            store.accept_resolved_submission(command(f"key-{k}"), DESCRIPTOR)
        stores = [b.open(store.env) for _ in range(8)]
        rounds_lost: list[object] = []

        def lost(*_: object) -> None:
            rounds_lost.append(1)

        sa.event.listen(sa.engine.Engine, "rollback_savepoint", lost)
        try:
            answers = race(8, lambda k: stores[k].acquire(
                spec.AcquireCommand(SCOPE, "emails", session.id, k, 1)))
        finally:
            sa.event.remove(sa.engine.Engine, "rollback_savepoint", lost)
        claimed = [a.assignment.event.task_id for a in answers]
        assert len(set(claimed)) == 8, answers
        assert rounds_lost == []
    finally:
        b.cleanup()


def _reads(store: SqlLedgence, task_id: str, attempt_id: str) -> list[tuple[Any, int]]:
    """Each read of a task's attempt and history (found, missing, another scope's) as (its
    answer or its refusal's code, the statements it ran)."""
    other = spec.Scope("tenant-b", "prod")
    calls = [
        lambda: store.inspect_attempt(SCOPE, task_id, attempt_id),
        lambda: store.inspect_attempt(SCOPE, task_id, "att_missing"),
        lambda: store.inspect_attempt(other, task_id, attempt_id),
        lambda: store.inspect_attempt(SCOPE, "task_missing", attempt_id),
        *(lambda after=after: store.history(SCOPE, task_id, after) for after in (0, 1, 2, 99)),
        lambda: store.history(other, task_id, 0),
        lambda: store.history(SCOPE, "task_missing", 0),
        lambda: store.history(SCOPE, task_id, 2**63),  # past BIGINT: no history statement
    ]
    ran: list[str] = []

    def count(*args: Any) -> None:
        ran.append(args[2])

    out: list[tuple[Any, int]] = []
    sa.event.listen(store.engine, "before_cursor_execute", count)
    try:
        for call in calls:
            ran.clear()
            try:
                answer: Any = call()
            except ContractError as e:
                answer = e.code
            out.append((answer, len(ran)))
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", count)
    return out


def test_a_read_fetched_ahead_answers_as_two_statements_do(
        backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """inspect_attempt and history fetch the task row with the attempt or the history page in
    one statement where READ_AHEAD says so (a server); every answer and refusal is the one the
    two statements give."""
    import fencepost.adapters.ledgence_tasks.sql as sql_module

    store = backend.open()
    session = store.open_session(SCOPE, "emails", 1)
    snap = store.accept_resolved_submission(command(), DESCRIPTOR)
    assigned = store.acquire(spec.AcquireCommand(SCOPE, "emails", session.id, 0, 1))
    attempt_id = assigned.assignment.event.attempt_id
    assert len(store.history(SCOPE, snap.task_id, 0)) == 2  # submitted, claimed
    monkeypatch.setattr(sql_module, "READ_AHEAD", frozenset())
    apart = _reads(store, snap.task_id, attempt_id)
    monkeypatch.setattr(sql_module, "READ_AHEAD", frozenset({"sqlite", "postgresql"}))
    ahead = _reads(store, snap.task_id, attempt_id)
    assert [answer for answer, _ in ahead] == [answer for answer, _ in apart]
    assert [answer for answer, _ in apart][:4] == [
        store.inspect_attempt(SCOPE, snap.task_id, attempt_id), "not_found", "not_found",
        "not_found"]
    assert [answer for answer, _ in apart][-1] == []
    assert [n for _, n in apart] == [2, 2, 1, 1, 2, 2, 2, 2, 1, 1, 1]
    assert [n for _, n in ahead] == [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]


def test_a_faulty_read_still_reads_its_own_way_when_fetched_ahead(
        backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant that bends the history page (history_off_by_one: the event at after_sequence
    too) answers its bug with the page fetched ahead: the read it makes is not the one
    fetched, so it runs its own statement."""
    import fencepost.adapters.ledgence_tasks.sql as sql_module
    from fencepost.registry import contract_named

    monkeypatch.setattr(sql_module, "READ_AHEAD", frozenset({"sqlite", "postgresql"}))
    mutant = next(m for m in contract_named("ledgence-tasks").mutants
                  if m.name == "history_off_by_one")
    env = backend.env()
    correct, faulty = backend.open(env), backend.open(env, mutant.store_class(SqlLedgence))
    snap = correct.accept_resolved_submission(command(), DESCRIPTOR)
    correct.cancel(SCOPE, snap.task_id)
    last = len(correct.history(SCOPE, snap.task_id, 0))
    assert last >= 2
    assert [r.sequence for r in correct.history(SCOPE, snap.task_id, 1)] == list(
        range(2, last + 1))
    assert [r.sequence for r in faulty.history(SCOPE, snap.task_id, 1)] == list(
        range(1, last + 1))
