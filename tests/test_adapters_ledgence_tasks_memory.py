"""The built-in ledgence-tasks stores, called directly (no harness): exact answers per rule.

Every test runs on the memory store, on SQLite (a file per test) and on PostgreSQL (the
``pg_url`` fixture: skipped when the server is unreachable, failed under ``CI=true``).
First slice: sessions, submission, reads, history and cancelling a queued task.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from conftest import Clock, race

from fencepost.adapters.ledgence_tasks.core import LedgenceCore
from fencepost.adapters.ledgence_tasks.memory import MemoryLedgenceFactory
from fencepost.adapters.ledgence_tasks.sql import SqlLedgenceFactory
from fencepost.env import AdapterEnv
from fencepost.spec import ledgence_tasks as spec

SCOPE = spec.Scope("tenant-a", "prod")
OTHER = spec.Scope("tenant-b", "prod")
PROGRAM = spec.Program("mailer", "1.2.0")
DIGEST = "sha256:" + "ab" * 32
START = 1_000


class World:
    """One factory, one clock, the envs opened (discarded at the end) and the stores (closed)."""

    def __init__(self, factory: Any) -> None:
        self.factory = factory
        self.clock = Clock(START)
        self.envs: list[AdapterEnv] = []
        self.stores: list[LedgenceCore] = []
        self._lock = threading.Lock()  # races open stores from several threads

    def env(self, clock: Callable[[], int] | None = None) -> AdapterEnv:
        env = AdapterEnv(clock=clock or self.clock, namespace=f"smoke_{uuid.uuid4().hex[:12]}")
        self.envs.append(env)
        return env

    def open(self, env: AdapterEnv | None = None) -> LedgenceCore:
        store: LedgenceCore = self.factory(env if env is not None else self.env())
        with self._lock:
            self.stores.append(store)
        return store

    def cleanup(self) -> None:
        for store in self.stores:
            store.close()
        for env in self.envs:
            self.factory.discard(env)
        getattr(self.factory, "close", lambda: None)()  # its pooled connections


BACKENDS = ("memory", "sqlite", "postgresql")


def make_factory(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if kind == "memory":
        return MemoryLedgenceFactory()
    if kind == "sqlite":
        return SqlLedgenceFactory(f"sqlite:///{tmp_path}/ledgence.db")
    return SqlLedgenceFactory(request.getfixturevalue("pg_url"))


@pytest.fixture(params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    w = World(make_factory(request.param, request, tmp_path))
    yield w
    w.cleanup()


@pytest.fixture
def store(world: World) -> LedgenceCore:
    return world.open()


def task_input(scope: spec.Scope = SCOPE, **changes: Any) -> spec.TaskInput:
    base = spec.TaskInput(scope, "emails", PROGRAM, correlation_key="order-7",
                          data={"to": "x", "n": 1})
    return attrs.evolve(base, **changes)


def submit_command(key: str = "key-1", **changes: Any) -> spec.SubmitCommand:
    return spec.SubmitCommand(key, task_input(**changes))


def descriptor(digest: str = DIGEST, program: spec.Program = PROGRAM) -> spec.ProgramDescriptor:
    return spec.ProgramDescriptor(program, digest, 4096)


def submit(store: LedgenceCore, key: str = "key-1", **changes: Any) -> spec.TaskSnapshot:
    return store.accept_resolved_submission(submit_command(key, **changes), descriptor())


def reasons(store: LedgenceCore, task_id: str, scope: spec.Scope = SCOPE) -> list[str]:
    return [r.event.reason for r in store.history(scope, task_id, 0)]


def sequences(store: LedgenceCore, task_id: str, after: int = 0) -> list[int]:
    return [r.sequence for r in store.history(SCOPE, task_id, after)]


def minted(prefix: str, value: str) -> bool:
    return re.fullmatch(prefix + "_[0-9a-f]{32}", value) is not None


def test_store_declares_durable_and_concurrency(store: LedgenceCore) -> None:
    assert store.capabilities == frozenset({"durable", "concurrency", "dispatch"})


# --- sessions ---------------------------------------------------------------------------------


def test_open_session_mints_a_ws_id_that_expires_a_day_later(store: LedgenceCore) -> None:
    session = store.open_session(SCOPE, "emails", 4)
    assert minted("ws", session.id)
    assert session == spec.WorkerSession(session.id, SCOPE, "emails", 4, START + spec.SESSION_MS)
    assert store.open_session(SCOPE, "emails", 1).id != session.id


@pytest.mark.parametrize("concurrency", [0, -1, True, 1.0, "2", None, 2**32])
def test_open_session_needs_an_integer_concurrency_of_at_least_one(
        store: LedgenceCore, concurrency: Any) -> None:
    """A u32 of at least 1: 2^32 is past the seed's type."""
    with pytest.raises(spec.InvalidInput,
                       match=f"concurrency must be an integer in 1..={2**32 - 1}, not"):
        store.open_session(SCOPE, "emails", concurrency)


@pytest.mark.parametrize(("scope", "queue", "message"), [
    (spec.Scope("", "prod"), "emails", "tenant_id must not be empty"),
    (("tenant-a", "prod"), "emails", "scope must be a Scope"),
    (SCOPE, "", "queue must not be empty"),
    (SCOPE, "a\x00b", "queue contains a control"),
])
def test_open_session_validates_scope_and_queue(
        store: LedgenceCore, scope: Any, queue: Any, message: str) -> None:
    with pytest.raises(spec.InvalidInput, match=message):
        store.open_session(scope, queue, 1)


def test_extend_session_moves_expiry_to_a_day_after_now(
        world: World, store: LedgenceCore) -> None:
    session = store.open_session(SCOPE, "emails", 2)
    world.clock.now = session.expires_at - 1
    extended = store.extend_session(session.id)
    assert extended == attrs.evolve(session, expires_at=session.expires_at - 1 + spec.SESSION_MS)
    world.clock.now = session.expires_at  # the old expiry no longer applies
    assert store.extend_session(session.id).expires_at == session.expires_at + spec.SESSION_MS


def test_extend_at_exactly_expires_at_is_session_expired_and_never_revives(
        world: World, store: LedgenceCore) -> None:
    session = store.open_session(SCOPE, "emails", 1)
    world.clock.now = session.expires_at
    with pytest.raises(spec.SessionExpired):
        store.extend_session(session.id)
    world.clock.now = session.expires_at + 10
    with pytest.raises(spec.SessionExpired):
        store.extend_session(session.id)


def test_extend_unknown_session_is_unknown_session_and_a_bad_id_is_invalid(
        store: LedgenceCore) -> None:
    with pytest.raises(spec.UnknownSession):
        store.extend_session("ws_" + "0" * 32)
    for bad in ("", "x" * 129, 7):
        with pytest.raises(spec.InvalidInput):
            store.extend_session(bad)  # type: ignore[arg-type]


# --- submission -------------------------------------------------------------------------------


def test_submission_creates_a_queued_task_with_one_submitted_event(
        store: LedgenceCore) -> None:
    command = submit_command()
    snap = store.accept_resolved_submission(command, descriptor())
    assert minted("task", snap.task_id) and minted("run", snap.run_id)
    assert snap == spec.TaskSnapshot(
        task_id=snap.task_id, run_id=snap.run_id, idempotency_key="key-1", input=command.input,
        descriptor=descriptor(), state="queued", submitted_at=START, available_at=START,
        terminal_at=None, current_attempt_id=None, attempt_count=0, cancel_requested_at=None)
    assert store.history(SCOPE, snap.task_id, 0) == [
        spec.RecordedHistoryEvent(1, spec.HistoryEvent(snap.task_id, None, START, "submitted"))]


def test_lookup_submission_answers_the_accepted_snapshot_or_none(
        world: World, store: LedgenceCore) -> None:
    assert store.lookup_submission(SCOPE, "key-1") is None
    snap = submit(store)
    world.clock.now += 50
    assert store.lookup_submission(SCOPE, "key-1") == snap
    assert store.lookup_submission(OTHER, "key-1") is None
    assert store.lookup_submission(SCOPE, "key-2") is None


@pytest.mark.parametrize(("scope", "key"), [
    (SCOPE, ""), (SCOPE, "k" * 256), (SCOPE, "a\nb"), (spec.Scope("t", ""), "key-1"),
])
def test_lookup_submission_validates_scope_and_key(
        store: LedgenceCore, scope: spec.Scope, key: str) -> None:
    with pytest.raises(spec.InvalidInput):
        store.lookup_submission(scope, key)


def test_lookup_accepts_a_key_of_exactly_255_bytes(store: LedgenceCore) -> None:
    key = "k" * spec.MAX_IDEMPOTENCY_KEY_BYTES
    snap = submit(store, key)
    assert store.lookup_submission(SCOPE, key) == snap


def test_replay_returns_the_winner_unchanged_even_with_another_descriptor(
        world: World, store: LedgenceCore) -> None:
    winner = submit(store)
    world.clock.now += 500
    replay = store.accept_resolved_submission(
        submit_command(data={"n": 1, "to": "x"}, retry_policy=spec.RetryPolicy(3, 5000)),
        descriptor("sha256:" + "cd" * 32))
    assert replay == winner
    assert replay.descriptor.digest == DIGEST
    assert store.inspect(SCOPE, winner.task_id) == winner
    assert sequences(store, winner.task_id) == [1]


def test_replay_after_cancel_returns_the_current_snapshot(
        world: World, store: LedgenceCore) -> None:
    winner = submit(store)
    world.clock.now += 10
    store.cancel(SCOPE, winner.task_id)
    assert submit(store) == store.inspect(SCOPE, winner.task_id)
    assert submit(store).state == "cancelled"
    assert sequences(store, winner.task_id) == [1, 2, 3]


@pytest.mark.parametrize("changes", [
    {"data": {"to": "x", "n": 1.0}},
    {"data": {"to": "x", "n": 1, "extra": None}},
    {"queue": "other"},
    {"correlation_key": None},
    {"retry_policy": spec.RetryPolicy(4, 5000)},
    {"attempt_timeout_ms": 60_000},
])
def test_another_input_under_an_accepted_key_conflicts(
        store: LedgenceCore, changes: dict[str, Any]) -> None:
    winner = submit(store)
    with pytest.raises(spec.Conflict, match="accepted for another input"):
        submit(store, **changes)
    assert store.lookup_submission(SCOPE, "key-1") == winner
    assert sequences(store, winner.task_id) == [1]


def test_one_and_one_point_zero_conflict(store: LedgenceCore) -> None:
    submit(store, data=1)
    with pytest.raises(spec.Conflict):
        submit(store, data=1.0)


def test_same_key_in_another_scope_is_another_task(store: LedgenceCore) -> None:
    mine = submit(store)
    theirs = store.accept_resolved_submission(
        spec.SubmitCommand("key-1", task_input(OTHER, data={"other": True})), descriptor())
    assert theirs.task_id != mine.task_id and theirs.run_id != mine.run_id
    assert store.lookup_submission(SCOPE, "key-1") == mine
    assert store.lookup_submission(OTHER, "key-1") == theirs
    assert reasons(store, theirs.task_id, OTHER) == ["submitted"]


def test_descriptor_of_another_program_conflicts_and_stores_nothing(
        store: LedgenceCore) -> None:
    with pytest.raises(spec.Conflict, match="another program"):
        store.accept_resolved_submission(submit_command(),
                                         descriptor(program=spec.Program("mailer", "9")))
    assert store.lookup_submission(SCOPE, "key-1") is None


@pytest.mark.parametrize(("command", "desc"), [
    (submit_command(""), descriptor()),
    (submit_command(queue=""), descriptor()),
    (submit_command(), descriptor("sha256:short")),
    ("not a command", descriptor()),
])
def test_invalid_submission_is_invalid_input_and_stores_nothing(
        store: LedgenceCore, command: Any, desc: Any) -> None:
    with pytest.raises(spec.InvalidInput):
        store.accept_resolved_submission(command, desc)
    assert store.lookup_submission(SCOPE, "key-1") is None


def test_stored_input_is_not_changed_by_mutating_the_callers_data(
        store: LedgenceCore) -> None:
    command = submit_command(data={"to": "x", "n": 1})
    snap = store.accept_resolved_submission(command, descriptor())
    command.input.data["n"] = 2
    assert store.inspect(SCOPE, snap.task_id).input.data == {"to": "x", "n": 1}
    store.inspect(SCOPE, snap.task_id).input.data["n"] = 3
    assert store.inspect(SCOPE, snap.task_id).input.data == {"to": "x", "n": 1}


# --- reads ------------------------------------------------------------------------------------


def queued_status(snap: spec.TaskSnapshot) -> spec.TaskStatus:
    return spec.TaskStatus(
        scope=SCOPE, task_id=snap.task_id, run_id=snap.run_id, queue="emails",
        correlation_key="order-7", state="queued", attempt_count=0, current_attempt_id=None,
        latest_attempt_id=None, submitted_at=START, available_at=START, terminal_at=None,
        cancel_requested_at=None)


def test_status_result_and_inspect_read_a_queued_task(
        world: World, store: LedgenceCore) -> None:
    snap = submit(store)
    world.clock.now += 1_000
    assert store.status(SCOPE, snap.task_id) == queued_status(snap)
    assert store.result(SCOPE, snap.task_id) == spec.TaskResult(queued_status(snap), None)
    assert store.inspect(SCOPE, snap.task_id) == snap


def test_status_of_a_task_without_correlation_key_has_none(store: LedgenceCore) -> None:
    snap = submit(store, correlation_key=None)
    assert store.status(SCOPE, snap.task_id).correlation_key is None


READS = ("status", "result", "inspect", "history", "cancel")


def call(store: LedgenceCore, operation: str, scope: Any, task_id: Any) -> Any:
    args = (scope, task_id, 0) if operation == "history" else (scope, task_id)
    return getattr(store, operation)(*args)


@pytest.mark.parametrize("operation", READS)
def test_a_task_of_another_scope_is_not_found(store: LedgenceCore, operation: str) -> None:
    snap = submit(store)
    for scope in (OTHER, spec.Scope("tenant-a", "staging")):
        with pytest.raises(spec.NotFound):
            call(store, operation, scope, snap.task_id)
    assert store.inspect(SCOPE, snap.task_id) == snap
    assert sequences(store, snap.task_id) == [1]


@pytest.mark.parametrize("operation", READS)
def test_a_missing_task_is_not_found(store: LedgenceCore, operation: str) -> None:
    with pytest.raises(spec.NotFound):
        call(store, operation, SCOPE, "task_" + "0" * 32)


@pytest.mark.parametrize("operation", READS)
@pytest.mark.parametrize(("scope", "task_id"), [
    (SCOPE, ""), (SCOPE, "t" * 129), (SCOPE, None), (spec.Scope("", "prod"), "task_1"),
    (None, "task_1"),
])
def test_reads_and_cancel_validate_scope_and_task_id(
        store: LedgenceCore, operation: str, scope: Any, task_id: Any) -> None:
    with pytest.raises(spec.InvalidInput):
        call(store, operation, scope, task_id)


# --- history ----------------------------------------------------------------------------------


@pytest.mark.parametrize("after", [-1, True, 1.0, "0", None, 2**64])
def test_history_needs_an_integer_after_sequence_of_at_least_zero(
        store: LedgenceCore, after: Any) -> None:
    """A u64: 2^64 is past the seed's type."""
    snap = submit(store)
    with pytest.raises(spec.InvalidInput,
                       match=f"after_sequence must be an integer in 0..={2**64 - 1}, not"):
        store.history(SCOPE, snap.task_id, after)


def test_history_pages_hold_at_most_100_records_after_the_sequence(
        store: LedgenceCore) -> None:
    snap = submit(store)
    # Only attempts write long histories; until they exist, write through the storage interface.
    with store._transaction() as txn:
        for i in range(249):
            store._record(txn, snap.task_id, "retry_scheduled", START + i)
    assert sequences(store, snap.task_id) == list(range(1, 101))
    assert sequences(store, snap.task_id, 100) == list(range(101, 201))
    assert sequences(store, snap.task_id, 150) == list(range(151, 251))
    assert sequences(store, snap.task_id, 200) == list(range(201, 251))
    assert sequences(store, snap.task_id, 250) == []
    assert sequences(store, snap.task_id, 10_000) == []


# --- cancel -----------------------------------------------------------------------------------


def test_cancel_of_a_queued_task_is_immediate_and_terminal(
        world: World, store: LedgenceCore) -> None:
    snap = submit(store)
    world.clock.now = START + 700
    assert store.cancel(SCOPE, snap.task_id) == "cancelled"
    cancelled = attrs.evolve(snap, state="cancelled", cancel_requested_at=START + 700,
                             terminal_at=START + 700)
    assert store.inspect(SCOPE, snap.task_id) == cancelled
    status = attrs.evolve(queued_status(snap), state="cancelled",
                          cancel_requested_at=START + 700, terminal_at=START + 700)
    assert store.status(SCOPE, snap.task_id) == status
    assert store.result(SCOPE, snap.task_id) == spec.TaskResult(status, {"kind": "cancelled"})
    events = [(r.sequence, r.event) for r in store.history(SCOPE, snap.task_id, 0)]
    assert events == [
        (1, spec.HistoryEvent(snap.task_id, None, START, "submitted")),
        (2, spec.HistoryEvent(snap.task_id, None, START + 700, "cancel_requested")),
        (3, spec.HistoryEvent(snap.task_id, None, START + 700, "cancelled")),
    ]
    assert sequences(store, snap.task_id, 1) == [2, 3]


def test_cancel_again_answers_cancelled_and_writes_nothing(
        world: World, store: LedgenceCore) -> None:
    snap = submit(store)
    world.clock.now = START + 700
    store.cancel(SCOPE, snap.task_id)
    before = store.inspect(SCOPE, snap.task_id)
    world.clock.now = START + 9_000
    assert store.cancel(SCOPE, snap.task_id) == "cancelled"
    assert store.inspect(SCOPE, snap.task_id) == before
    assert sequences(store, snap.task_id) == [1, 2, 3]


def test_cancel_touches_only_its_own_task(store: LedgenceCore) -> None:
    first, second = submit(store, "key-1"), submit(store, "key-2")
    store.cancel(SCOPE, first.task_id)
    assert store.inspect(SCOPE, second.task_id) == second
    assert sequences(store, second.task_id) == [1]


# --- durability and concurrency ---------------------------------------------------------------


def test_reopening_the_namespace_keeps_sessions_tasks_and_history(world: World) -> None:
    env = world.env()
    first = world.open(env)
    session = first.open_session(SCOPE, "emails", 3)
    snap = submit(first)
    first.cancel(SCOPE, snap.task_id)
    history = first.history(SCOPE, snap.task_id, 0)
    first.close()

    again = world.open(env)
    world.clock.now += 5
    assert again.extend_session(session.id).expires_at == START + 5 + spec.SESSION_MS
    assert again.lookup_submission(SCOPE, "key-1") == first.inspect(SCOPE, snap.task_id)
    assert again.history(SCOPE, snap.task_id, 0) == history
    assert world.open().lookup_submission(SCOPE, "key-1") is None  # another namespace


def test_discard_forgets_the_namespace(world: World) -> None:
    env = world.env()
    store = world.open(env)
    session = store.open_session(SCOPE, "emails", 1)
    snap = submit(store)
    world.factory.discard(env)
    reopened = world.open(env)
    with pytest.raises(spec.UnknownSession):
        reopened.extend_session(session.id)
    with pytest.raises(spec.NotFound):
        reopened.status(SCOPE, snap.task_id)


def slow_clock(clock: Clock) -> Callable[[], int]:
    """Reading the time yields the thread, widening any check-then-insert window."""

    def now() -> int:
        time.sleep(0.002)
        return clock.now

    return now


def test_concurrent_submissions_of_one_key_bind_one_task(world: World) -> None:
    env = world.env(slow_clock(world.clock))
    answers = race(8, lambda i: world.open(env).accept_resolved_submission(
        submit_command(), descriptor("sha256:" + f"{i:02d}" * 32)))
    assert all(isinstance(a, spec.TaskSnapshot) for a in answers), answers
    assert len({a.task_id for a in answers}) == 1
    assert all(a == answers[0] for a in answers)
    assert answers[0].descriptor.digest in {"sha256:" + f"{i:02d}" * 32 for i in range(8)}
    store = world.open(env)
    assert reasons(store, answers[0].task_id) == ["submitted"]


def test_concurrent_different_inputs_under_one_key_give_one_winner(world: World) -> None:
    env = world.env(slow_clock(world.clock))
    answers = race(8, lambda i: world.open(env).accept_resolved_submission(
        submit_command(data={"i": i}), descriptor()))
    winners = [a for a in answers if isinstance(a, spec.TaskSnapshot)]
    assert len(winners) == 1
    assert sum(isinstance(a, spec.Conflict) for a in answers) == 7
    store = world.open(env)
    assert store.lookup_submission(SCOPE, "key-1") == winners[0]
    assert reasons(store, winners[0].task_id) == ["submitted"]


# --- the mutation gaps of issue 25: what the kit's own stores answer ----------------------------


def _ranged_cursor(store: LedgenceCore, world: World) -> tuple[str, spec.TaskFilters]:
    """Three tasks 10 ms apart and a page of one over the last two: its cursor and filters."""
    for k in range(3):
        submit(store, f"key-{k}")
        world.clock.now += 10
    filters = spec.TaskFilters(submitted_from=START + 10, submitted_until=START + 21)
    page = store.list_tasks(SCOPE, spec.TaskListQuery(filters, 1))
    assert page.next_cursor is not None
    return page.next_cursor, filters


def _with_position(cursor: str, submitted_at: int, task_id: str | None = None) -> str:
    document = json.loads(bytes.fromhex(cursor).decode("utf-8"))
    document["position"][0] = submitted_at
    if task_id is not None:
        document["position"][1] = task_id
    return spec.canonical_json(document).encode("utf-8").hex()


@pytest.mark.parametrize(("submitted_at", "task_id"), [
    (-1, None),  # no timestamp is -1: the seed's u64 does not decode it
    (START + 9, None),  # before submitted_from
    (START + 21, None),  # at submitted_until (exclusive)
    (spec.MAX_TIMESTAMP_MS + 1, None),
    (START + 10, "task\x00"),  # not valid text
])
def test_a_well_formed_cursor_no_page_could_issue_is_invalid_input(
        world: World, store: LedgenceCore, submitted_at: int, task_id: str | None) -> None:
    cursor, filters = _ranged_cursor(store, world)
    with pytest.raises(spec.InvalidInput):
        store.list_tasks(SCOPE, spec.TaskListQuery(
            filters, 1, _with_position(cursor, submitted_at, task_id)))


def test_a_position_within_the_bounds_that_names_no_task_continues_after_it(
        world: World, store: LedgenceCore) -> None:
    """As the seed: a cursor is a position, not a page it remembers (discovery.rs:98-113)."""
    cursor, filters = _ranged_cursor(store, world)
    page = store.list_tasks(SCOPE, spec.TaskListQuery(
        filters, 5, _with_position(cursor, START + 15, "task_none")))
    assert [item.submitted_at for item in page.items] == [START + 10]


def test_input_data_reads_back_exactly_and_integers_past_u64_are_invalid_input(
        store: LedgenceCore) -> None:
    data = {"one": 1, "float": 1.0, "negative_zero": -0.0, "u64": 2 ** 64 - 1,
            "i64": -(2 ** 63), "text": "\u00e9\u2713", "empty": "", "nul": "\x00"}
    submitted = submit(store, data=data)
    read = store.inspect(SCOPE, submitted.task_id).input.data
    assert spec.canonical_json(read) == spec.canonical_json(data)
    assert [type(read[k]) for k in ("one", "float")] == [int, float]
    for number in (2 ** 64, -(2 ** 63) - 1):
        with pytest.raises(spec.InvalidInput):
            submit(store, "key-2", data=[number])


def test_a_correlation_key_may_hold_noncharacters_but_no_control_character(
        store: LedgenceCore) -> None:
    key = "order-\ufdd0-\U0010ffff"
    submitted = submit(store, correlation_key=key)
    page = store.list_tasks(SCOPE, spec.TaskListQuery(spec.TaskFilters(correlation_key=key)))
    assert [item.task_id for item in page.items] == [submitted.task_id]
    with pytest.raises(spec.InvalidInput):
        submit(store, "key-2", correlation_key="order\x7f")
