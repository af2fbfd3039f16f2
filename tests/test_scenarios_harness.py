"""fencepost.scenarios.harness: one check driving a store and its model, step by step."""

from __future__ import annotations

import uuid
from typing import Any

import attrs
import pytest

from fencepost.adapters.adk_ledger.memory import MemoryLedger
from fencepost.model.adk_ledger import owner_node
from fencepost.model.base import Step
from fencepost.mutants import mutant_factory
from fencepost.registry import contract_named
from fencepost.scenarios.evidence import Ending, Failure
from fencepost.scenarios.harness import (
    AdapterFault,
    ClauseViolation,
    Harness,
    StoreLost,
    World,
    blamed_on,
    violation,
)
from fencepost.scenarios.machine import run_machine
from fencepost.scenarios.runner import CLOCK_START, new_world, open_checked
from fencepost.scenarios.world import NotRunnable
from fencepost.spec import adk_ledger as adk
from fencepost.spec import ledgence_tasks as ledgence
from fencepost.spec import snodo_tasks as snodo
from fencepost.spec.errors import BackendUnavailable
from fencepost.spec.opaque import Forged, ForgedValue, Opaque, Ref, known
from fencepost.spec.outcome import Ok

ADK = contract_named("adk-ledger")
SNODO = contract_named("snodo-tasks")
META = {"workflow_id": "wf", "workflow_version": 1, "kind": "k"}
START = CLOCK_START  # the runner's simulated start


def _world(factory: Any, name: str = "adk-ledger") -> World:
    return new_world(contract_named(name).suite, factory, namespace=f"th{uuid.uuid4().hex[:8]}")


@pytest.fixture
def h() -> Any:
    world = _world(ADK.memory_factory())
    yield Harness(world)
    world.discard()


def _claimed(h: Harness, lease_ms: int = 100) -> None:
    h.apply("c1", adk.Create("a", META, {"n": 1}))
    h.apply("c1", adk.Claim("a", "node1", "t1", h.now, lease_ms))


def _mutant(name: str) -> Harness:
    return Harness(_world(mutant_factory(ADK, ADK.mutant(name), "memory")))


# --- violations ------------------------------------------------------------------------------


def test_each_clause_has_a_violation_class_of_its_own() -> None:
    one = violation("ADK-FENCE-001", "m", ())
    assert type(one) is type(violation("ADK-FENCE-001", "other", ()))
    assert type(one) is not type(violation("ADK-FENCE-002", "m", ()))
    assert type(one).__name__ == "Violation_ADK_FENCE_001"
    assert isinstance(one, ClauseViolation) and isinstance(one, AssertionError)
    assert (one.clause, one.message, str(one)) == ("ADK-FENCE-001", "m", "ADK-FENCE-001: m")


def test_the_ctx_is_the_same_object_until_the_clock_a_death_or_a_binding_changes_it(
        h: Harness) -> None:
    first = h.ctx()
    assert h.ctx() is first and (first.now, first.dead, first.minted) == (START, frozenset(), {})
    h.advance(5)
    moved = h.ctx()
    assert moved is not first and moved.now == START + 5 and h.ctx() is moved
    h.kill("node1")
    dead = h.ctx()
    assert dead.dead == frozenset({"node1"}) and h.ctx() is dead
    h.bind("task#1", "task#1", "T1")
    bound = h.ctx()
    assert bound.minted == {"task#1": "T1"} and bound is not dead and h.ctx() is bound
    assert (bound.now, bound.dead) == (START + 5, frozenset({"node1"}))


# --- apply -----------------------------------------------------------------------------------


def test_apply_returns_the_stores_answer_and_records_the_step(h: Harness) -> None:
    assert h.apply("c1", adk.Create("a", META, {"n": 1})) == Ok(None)
    claimed = h.apply("c1", adk.Claim("a", "node1", "t1", h.now, 100))
    assert claimed == Ok(adk.Invocation(
        "a", "wf", 1, "k", {"n": 1}, "running", None, True, "node1", START + 100, 1, START,
        START))
    # the model's answer holds the owner_node as the store's own value (owner_view=node)
    expected = Ok(attrs.evolve(claimed.value, owner=Opaque(owner_node("node1"))))
    assert [(s.actor, s.op.name, s.expected, s.actual) for s in h.trace] == [
        ("c1", "create", Ok(None), Ok(None)), ("c1", "claim", expected, claimed)]
    assert h.touched == {"a"}
    assert h.world.evidence.steps == 2
    assert h.world.evidence.exercised["ADK-CLAIM-003"] == 1


def test_a_refusal_the_model_expects_is_no_violation(h: Harness) -> None:
    _claimed(h)
    refused = h.apply("c2", adk.Claim("a", "node2", "t2", h.now, 100))
    assert refused.code == "invocation_owned"
    assert h.trace[-1].expected == refused


def test_a_differing_answer_raises_the_violated_clause_with_the_trace() -> None:
    h = _mutant("renew_revives_expired_lease")
    try:
        _claimed(h)
        h.advance(100)  # lease_until exactly: expired
        with pytest.raises(ClauseViolation) as caught:
            h.apply("c1", adk.Renew("a", "t1", h.now, 100))
        v = caught.value
        assert type(v).__name__ == "Violation_ADK_LEASE_001"
        assert v.clause == "ADK-LEASE-001"
        assert v.message == "renew answered ok; the contract requires error lease_expired"
        assert [s.op.name if s.op else s.note for s in v.trace] == [
            "create", "claim", "advance 100 ms", "renew"]
        assert v.trace[-1].expected.code == "lease_expired"
        assert v.render().startswith("ADK-LEASE-001: renew answered ok;")
        assert "<-- differs" in v.render()
    finally:
        h.world.discard()


def test_a_wrong_effect_is_caught_when_the_record_is_read_back() -> None:
    h = _mutant("checkpoint_keeps_lease")
    try:
        _claimed(h)
        h.advance(50)
        with pytest.raises(ClauseViolation) as caught:
            h.apply("c1", adk.Checkpoint("a", "t1", {"n": 2}, h.now, 100))
        v = caught.value
        assert v.clause == "ADK-CKPT-001"
        assert v.message.startswith("after checkpoint, get answered ok(")
        assert v.trace[-1].op == adk.Get("a")
        assert v.trace[-1].actor == "check"
        assert v.trace[-1].expected.value.lease_until == START + 150
        assert v.trace[-1].actual.value.lease_until == START + 100
    finally:
        h.world.discard()


class _CountedGets(MemoryLedger):
    gets: list[str] = []

    def get(self, invocation_id: str) -> adk.Invocation:
        type(self).gets.append(invocation_id)
        return super().get(invocation_id)


def test_a_read_that_changed_nothing_is_not_asked_again_and_a_change_is_read_back() -> None:
    _CountedGets.gets = []
    h = Harness(_world(ADK.memory_factory(_CountedGets)))
    try:
        h.apply("c1", adk.Create("a", META, {"n": 1}))
        assert _CountedGets.gets == ["a"]  # the create read back
        h.apply("c1", adk.Get("a"))
        h.apply("c1", adk.Get("b"))  # refused: not_found, also a read of an unchanged state
        assert _CountedGets.gets == ["a", "a", "b"]  # each asked once
        h.apply("c1", adk.Claim("a", "node1", "t1", h.now, 100))
        h.apply("c2", adk.Claim("a", "node2", "t2", h.now, 100))  # refused, read back
        assert _CountedGets.gets == ["a", "a", "b", "a", "a"]
    finally:
        h.world.discard()


def test_a_read_that_changed_nothing_is_not_asked_again_but_the_records_other_reads_are(
) -> None:
    """Of the reads that show a record (ledgence reads a task three ways), only the one the
    step itself just made is left out."""
    _CountedGets.gets = []
    h = Harness(_world(ADK.memory_factory(_CountedGets)))
    try:
        h.model = attrs.evolve(h.model, observe=lambda key, _b, _s: (adk.Get(key), adk.Get("z")))
        h.apply("c1", adk.Create("a", META, {"n": 1}))
        assert _CountedGets.gets == ["a", "z"]
        h.apply("c1", adk.Get("a"))
        assert _CountedGets.gets == ["a", "z", "a", "z"]  # the get, then the other read
    finally:
        h.world.discard()


def test_expect_answers_without_applying(h: Harness) -> None:
    step = h.expect_one(adk.Get("a"))
    assert step.outcome.code == "not_found"
    assert h.trace == [] and h.state is h.model.initial


# --- the clock and the world -----------------------------------------------------------------


def test_time_and_deaths_are_noted_in_the_trace(h: Harness) -> None:
    h.advance(5)
    h.set_time(START + 100)
    h.kill("node1")
    assert h.now == START + 100
    assert h.ctx().dead == frozenset({"node1"})
    assert not h.world.is_alive("node1") and h.world.is_alive("node2")
    assert [(s.at, s.note, s.event) for s in h.trace] == [
        (START + 5, "advance 5 ms", "clock"), (START + 100, f"set to {START + 100} ms", "clock"),
        (START + 100, "owner node1 dies", "kill")]


def test_reopening_a_durable_store_reads_every_touched_record_back(h: Harness) -> None:
    _claimed(h)
    h.reopen()
    assert h.world.evidence.exercised["ADK-DURABLE-001"] == 1
    assert [step.note for step in h.trace[2:]] == ["store closed and reopened"]  # agreed
    # read-backs are not steps of the trace


def test_a_reopen_tells_something_only_after_a_change_a_clock_move_or_a_death(
        h: Harness) -> None:
    assert h.reopen_would_tell()  # the first: that the store opens again at all
    _claimed(h)
    h.reopen()
    assert not h.reopen_would_tell()
    h.apply("c1", adk.Get("a"))  # a read changes nothing
    h.apply("c2", adk.Claim("a", "node2", "t2", h.now, 100))  # refused: the lease is live
    assert h.trace[-1].actual.code == "invocation_owned"
    assert not h.reopen_would_tell()
    h.advance(1)
    assert h.reopen_would_tell()
    h.reopen()
    h.kill("node1")
    assert h.reopen_would_tell()
    h.reopen()
    assert not h.reopen_would_tell()
    h.apply("c1", adk.Create("b", META, {"n": 2}))  # a new record
    assert h.reopen_would_tell()


@pytest.mark.parametrize("name", ["adk-ledger", "snodo-tasks", "ledgence-tasks"])
def test_the_state_machines_reopen_only_when_a_reopen_would_tell(name: str) -> None:
    """Between two reopens an op gave the model a new state, the clock moved or an owner
    died (before, 74 of adk's 118 reopens at 25 x 30 re-read what the last one had read)."""
    from fencepost.bench_tape import Applied, Clock, Killed, Reopened, tape_machine

    contract = contract_named(name)
    world = _world(contract.memory_factory(), name)
    open_checked(contract.suite, world)  # as a check opens it: its capabilities found
    try:
        run, tapes = tape_machine(contract.suite.machine_for, world, examples=20, steps=30,
                                  seed=1)
    finally:
        world.discard()
    assert not run.violations and run.lost is None
    reopens, idle = 0, []
    for k, tape in enumerate(tapes):
        state, now, dead, last = contract.suite.model.initial, tape.start, frozenset(), None
        for entry in tape.entries:
            if isinstance(entry, Applied):
                state = entry.state
            elif isinstance(entry, Clock):
                now = now + entry.ms if entry.kind == "advance" else entry.ms
            elif isinstance(entry, Killed):
                dead |= {entry.owner}
            elif isinstance(entry, Reopened):
                reopens += 1
                if last is not None and last[0] is state and last[1:] == (now, dead):
                    idle.append(k)
                last = (state, now, dead)
    assert reopens > 0
    assert idle == []


@pytest.mark.parametrize("name", ["adk-ledger", "snodo-tasks", "ledgence-tasks"])
def test_a_model_that_names_nothing_minted_says_so_and_the_others_do_name(name: str) -> None:
    """``names_minted`` False lets the harness skip filling in and binding names: it must be
    true of every answer the model gives in a run (read-backs' and options' included), and a
    model that leaves it True must need it."""
    contract = contract_named(name)
    world = _world(contract.memory_factory(), name)
    model, named = world.model, []

    def step(state: Any, op: Any, ctx: Any) -> Any:
        answer = model.step(state, op, ctx)
        for option in getattr(answer, "options", (answer,)):
            # known() changes a value exactly where it names something (here: anything)
            if known(option.outcome, lambda _name: "minted") != option.outcome:
                named.append((op.name, option.outcome))
        return answer

    world.model = attrs.evolve(model, step=step)
    open_checked(contract.suite, world)
    try:
        run = run_machine(contract.suite.machine_for(world), examples=20, steps=30, seed=1)
    finally:
        world.discard()
    assert not run.violations and run.lost is None and world.evidence.steps > 300
    assert (named == []) is (not model.names_minted), named[:3]


class _Forgetful:
    """A factory whose reopened store has lost everything."""

    def __init__(self) -> None:
        self.base = ADK.memory_factory()
        self.opens = 0

    def __call__(self, env: Any) -> Any:
        self.opens += 1
        if self.opens > 1:
            self.base.discard(env)
        return self.base(env)

    def discard(self, env: Any) -> None:
        self.base.discard(env)


def test_a_store_that_forgets_on_reopen_breaks_the_durable_clause() -> None:
    h = Harness(_world(_Forgetful()))
    try:
        h.apply("c1", adk.Create("a", META, {"n": 1}))
        with pytest.raises(ClauseViolation) as caught:
            h.reopen()
        assert caught.value.clause == "ADK-DURABLE-001"
        assert caught.value.message == (
            "after reopening, get answered error not_found; the contract requires ok("
            "Invocation(invocation_id='a', workflow_id='wf', workflow_version=1, kind='k', "
            "checkpoint={'n': 1}, phase='ready', outcome=None, owned=False, owner=None, "
            f"lease_until=0, revision=0, created_at={START}, updated_at={START}))")
    finally:
        h.world.discard()


def test_a_factory_that_raises_is_the_adapters_fault() -> None:
    def broken(env: Any) -> Any:
        raise RuntimeError("no database\nsecond line")

    world = _world(broken)
    with pytest.raises(AdapterFault, match=r"^the adapter factory raised RuntimeError: "
                                           r"no database$"):
        world.open()
    world.discard()
    assert world.live == []


class _Unavailable(MemoryLedger):
    def get(self, invocation_id: str) -> Any:
        raise BackendUnavailable("backend away")


class _Disconnected(MemoryLedger):
    def get(self, invocation_id: str) -> Any:
        raise ConnectionError("reset by peer")


class _AwayOnReopen(_Forgetful):
    """A factory whose second open raises ``error`` (the backend away, or another failure)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def __call__(self, env: Any) -> Any:
        self.opens += 1
        if self.opens > 1:
            raise self.error
        return self.base(env)


@pytest.mark.parametrize(("error", "lost"), [
    (BackendUnavailable("backend away"), True), (ConnectionError("reset by peer"), True),
    (RuntimeError("cannot reopen"), False)])
def test_a_reopen_the_backend_refuses_loses_the_check_and_any_other_failure_breaks_durability(
        error: BaseException, lost: bool) -> None:
    h = Harness(_world(_AwayOnReopen(error)))
    try:
        h.apply("c1", adk.Create("a", META, {"n": 1}))
        with pytest.raises(StoreLost if lost else ClauseViolation) as caught:
            h.reopen()
        assert isinstance(caught.value, ClauseViolation) is not lost
        said = f"{type(error).__name__}: {error}"
        assert str(caught.value) == (f"reopening the store: {said}" if lost else
                                     f"ADK-DURABLE-001: reopening the store raised {said}")
    finally:
        h.world.discard()


@pytest.mark.parametrize("store", [_Unavailable, _Disconnected])
def test_a_store_that_is_away_loses_the_check_instead_of_failing_it(store: type) -> None:
    h = Harness(_world(ADK.memory_factory(store)))
    try:
        with pytest.raises(StoreLost) as caught:
            h.apply("c1", adk.Create("a", META, {"n": 1}))  # its read-back is refused
        assert not isinstance(caught.value, ClauseViolation)
        assert str(caught.value).startswith("get: store unavailable (")
        assert [s.op.name for s in caught.value.trace] == ["create", "get"]
    finally:
        h.world.discard()


def test_a_fork_has_its_own_store_and_shares_the_clock_and_evidence(h: Harness) -> None:
    h.apply("c1", adk.Create("a", META, {"n": 1}))
    fork = h.world.fork("-f")
    other = Harness(fork)
    assert fork.namespace == h.world.namespace + "-f"
    assert fork.clock is h.world.clock and fork.evidence is h.world.evidence
    assert other.apply("c1", adk.Get("a")).code == "not_found"
    assert fork in h.world.live
    fork.discard()
    assert fork not in h.world.live


# --- blame -----------------------------------------------------------------------------------


def test_blamed_on_renames_any_violation_inside_and_counts_a_clean_block(h: Harness) -> None:
    with pytest.raises(ClauseViolation) as caught, blamed_on(h, "ADK-DURABLE-001"):
        raise violation("ADK-GET-002", "differs", ())
    assert (caught.value.clause, caught.value.message) == ("ADK-DURABLE-001", "differs")
    assert type(caught.value).__name__ == "Violation_ADK_DURABLE_001"
    with blamed_on(h, "ADK-REV-001"):
        pass
    assert h.world.evidence.exercised["ADK-REV-001"] == 1


def test_blamed_on_blocks_nest_and_each_gives_the_blame_back_when_it_ends(h: Harness) -> None:
    """Inside a block the blame is its clause; after it, the enclosing block's again (a read
    after a reap must not take the blame that belonged to the reap)."""
    with blamed_on(h, "ADK-DURABLE-001"):
        with pytest.raises(ClauseViolation) as inner, blamed_on(h, "ADK-REV-001", ["revision"]):
            assert h.blame == ("ADK-REV-001", frozenset({"revision"}))
            raise violation("ADK-REV-001", "its own clause", ())
        assert type(inner.value).__name__ == "Violation_ADK_REV_001"
        assert h.blame == ("ADK-DURABLE-001", None)
    assert h.blame is None


# --- values the store mints ------------------------------------------------------------------


@pytest.fixture
def s() -> Any:
    world = _world(SNODO.memory_factory(), "snodo-tasks")
    yield Harness(world)
    world.discard()


def _authorize(h: Harness, kind: str, task_id: str, name: str) -> Any:
    return h.apply("client", snodo.Authorize(snodo.Context("acme"), snodo.Action(kind, task_id)),
                   bind=name)


def test_bind_names_the_minted_value_for_later_refs(s: Harness) -> None:
    answer = _authorize(s, "create", "t1", "acc")
    meaning, real = s.bindings["acc"]
    assert real is answer.value
    assert (meaning.scope, meaning.kind, meaning.task_id) == ("acme", "create", "t1")
    assert s.trace[-1].bind == "acc"
    op = snodo.Get("t1", Ref("acc"))
    assert s.real(op) == snodo.Get("t1", real)
    assert s.real(op).access is real
    assert s.expect_one(op).outcome.code == s.run(s.world.open(), op).code


def test_a_reopen_takes_what_the_model_says_it_changes_and_reads_back_through_new_values(
        s: Harness) -> None:
    _authorize(s, "get", "t1", "obs:t1")
    old_real = s.bindings["obs:t1"][1]
    _authorize(s, "create", "t1", "acc")
    task = snodo.Task("t1", "working", None, s.now, s.now, None, 250, {}, None, None)
    s.apply("client", snodo.Create(task, snodo.Work("i", "job", {}, ()), Ref("acc")))
    s.apply("w1", snodo.Claim("t1", "w1", 100), bind="l1")
    steps = len(s.trace)
    s.reopen()
    assert s.bindings["acc"][0].store == s.bindings["l1"][0].store == "main, before a reopen"
    meaning, real = s.bindings["obs:t1"]
    assert meaning.store == "main" and real != old_real  # authorized again, read back through
    assert [t.op.name for t in s.trace[steps:] if t.op is not None] == ["authorize"]
    assert not s.reopen_would_tell()
    assert s.apply("w1", snodo.WorkerSnapshot("t1", Ref("l1"))).code == "stale_lease"


def test_a_forged_value_reaches_the_store_as_one_nobody_issued(s: Harness) -> None:
    sent = s.real(snodo.Get("t1", Forged("guess"))).access
    assert isinstance(sent, ForgedValue) and sent.label == "guess"


def test_a_reference_never_minted_makes_the_check_not_runnable_rather_than_failed(
        s: Harness) -> None:
    """A call the check needs was refused, as the run's options allow: the value it would
    have minted is never bound, and the check ends not runnable (its clauses unknown)."""
    with pytest.raises(NotRunnable) as caught:
        s.apply("w", snodo.Get("a", Ref("never")))
    assert not isinstance(caught.value, ClauseViolation)
    options = ", ".join(f"{k}={v}" for k, v in sorted(s.world.options.items()))
    assert "max_tasks=infinity" in options
    assert str(caught.value) == (
        "cannot go on: 'never' was never minted (a call the check needs was refused, as the "
        f"contract allows under the run's options: {options})")
    assert s.trace == []  # nothing reached the store


def test_alias_and_bind_share_one_binding(s: Harness) -> None:
    _authorize(s, "get", "t1", "obs")
    s.alias("again", "obs")
    assert s.bindings["again"] is s.bindings["obs"]
    s.bind("outside", "meaning", "value")
    assert s.bindings["outside"] == ("meaning", "value")


@attrs.frozen
class _Held:
    scope: Any
    task_id: Any


def test_a_new_name_keeps_what_was_filled_in_and_a_name_bound_again_forgets_it(
        h: Harness) -> None:
    h.bind("task#1", "task#1", "T1")
    expected = Ok(_Held(ledgence.Scope("t", "p"), Opaque("task#1")))
    filled = h._known(expected)
    h.bind("task#2", "task#2", "T2")
    assert h._known(expected) is filled  # kept: not walked again
    h.bind("task#1", "task#1", "T9")
    assert h._known(expected) == Ok(_Held(ledgence.Scope("t", "p"), "T9"))


def test_a_value_filled_in_before_a_name_was_minted_is_filled_in_again_after(
        h: Harness) -> None:
    """The harness remembers what it filled into a model value (the same record comes back
    step after step); a binding made since must show in the next fill of that same value,
    and in the minted names the model is given."""
    expected = Ok(_Held(ledgence.Scope("t", "p"), Opaque("task#1")))
    assert h._known(expected) is expected  # nothing minted: nothing to fill in
    h.bind("other", "other", "O")
    assert h._known(expected) == expected  # a binding, not this name's
    assert h.ctx().minted == {"other": "O"}
    for how in ("bind", "alias", "bind_minted"):
        if how == "bind":
            h.bind("task#1", "task#1", "T1")
        elif how == "alias":
            h.bind("t1", "task#1", "T2")
            h.alias("task#1", "t1")
        else:
            del h.bindings["task#1"]
            h._rebound()
            h.bind_minted(Ok(Opaque("task#1")), Ok("T3"))
        real = {"bind": "T1", "alias": "T2", "bind_minted": "T3"}[how]
        assert h._known(expected) == Ok(_Held(ledgence.Scope("t", "p"), real)), how
        assert h.ctx().minted["task#1"] == real, how


def test_minted_names_are_bound_and_one_value_for_two_names_breaks_the_mint_clause(
        h: Harness) -> None:
    h.model = attrs.evolve(h.model, mint_clause="X-ID-001")
    h.bind_minted(Ok((Opaque("task#1"), Opaque(("not", "a name")))), Ok(("T1", "other")))
    assert h.bindings == {"task#1": ("task#1", "T1")}
    assert h.ctx().minted == {"task#1": "T1"}
    assert h.world.evidence.exercised["X-ID-001"] == 1
    h.bind_minted(Ok(Opaque("task#1")), Ok("T1"))  # the same name again: nothing new
    with pytest.raises(ClauseViolation) as caught:
        h.bind_minted(Ok(Opaque("task#2")), Ok("T1"))
    assert caught.value.clause == "X-ID-001"
    assert caught.value.message == "the store minted 'T1' for task#2 and for task#1 before"


class _TwoIds(MemoryLedger):
    def get(self, invocation_id: str) -> Any:
        return ("A1", "B1")


def test_bind_takes_the_first_minted_value_and_every_named_one_is_bound() -> None:
    h = Harness(_world(ADK.memory_factory(_TwoIds)))
    try:
        def step(state: Any, op: Any, ctx: Any) -> Step:
            return Step(Ok((Opaque("run#1"), Opaque("attempt#1"))), state, "X-1", "X-1")

        h.model = attrs.evolve(h.model, step=step, observe=lambda *_: None, situations=None)
        assert h.apply("w", adk.Get("a"), bind="first") == Ok(("A1", "B1"))
        assert h.bindings == {"first": ("run#1", "A1"), "run#1": ("run#1", "A1"),
                              "attempt#1": ("attempt#1", "B1")}
        assert h.real(adk.Get(Ref("attempt#1"))) == adk.Get("B1")
        assert h.world.evidence.exercised["X-1"] == 1
    finally:
        h.world.discard()


# --- going on past a difference in fields alone (scripted checks) ----------------------------


def _finished_twice(h: Harness) -> None:
    """Two records claimed and finished, each read back: a store that keeps the owner after
    finish differs in ``owner`` after each finish, and in nothing else."""
    for inv in ("a", "b"):
        h.apply("c1", adk.Create(inv, META, {}))
        h.apply("c1", adk.Claim(inv, "node1", "t1", h.now, 100))
        h.apply("c1", adk.Finish(inv, "t1", "paused", None, {}, h.now))


def test_a_difference_in_fields_alone_fails_its_clause_once_and_the_check_goes_on() -> None:
    h = _mutant("finish_keeps_owner")
    h.world.check = "scenario:t"
    h.go_on = True
    _finished_twice(h)  # no violation raised: the check reached its end
    h.settle_repeats()
    failure = h.world.evidence.failures["ADK-OWNER-001"]
    assert list(h.world.evidence.failures) == ["ADK-OWNER-001"]
    assert (failure.check, failure.repeats) == ("scenario:t", 1)
    assert failure.message.startswith("after finish, get answered")
    assert "differed in 1 later answer of this check" in failure.message
    assert h.masked == {"owner": "ADK-OWNER-001"}
    assert h.state["b"].phase == "paused"  # went on from the model's state


def test_a_calls_own_answer_differing_in_fields_alone_goes_on_as_a_read_back_does() -> None:
    h = _mutant("finish_keeps_owner")
    h.world.check = "scenario:t"
    h.go_on = True
    h.apply("c1", adk.Create("a", META, {}))
    h.apply("c1", adk.Claim("a", "node1", "t1", h.now, 100))
    h.apply("c1", adk.Finish("a", "t1", "paused", None, {}, h.now))  # its read-back differs
    before = len(h.trace)
    answer = h.apply("c2", adk.Get("a"))  # and so does the call's own answer: in owner alone
    assert isinstance(answer, Ok) and answer.value.owner is not None
    assert h.trace[before].actual == answer
    h.settle_repeats()
    assert list(h.world.evidence.failures) == ["ADK-OWNER-001"]
    assert h.world.evidence.failures["ADK-OWNER-001"].repeats == 1


class _KeepsOwnerThenKind(MemoryLedger):
    """Keeps the owner after finish (``owner``: ADK-OWNER-001); once ``b`` is finished it also
    shows a kind it was never given (``kind``: ADK-CREATE-002)."""

    def _finished(self, row: Any, phase: str, outcome: Any, checkpoint: Any, now: int) -> Any:
        return attrs.evolve(super()._finished(row, phase, outcome, checkpoint, now),
                            owner=row.owner)

    def _view(self, row: Any) -> Any:
        view = super()._view(row)
        if view.invocation_id == "b" and view.phase == "paused":
            return attrs.evolve(view, kind="forgotten")
        return view


def test_a_new_field_beside_one_blamed_already_is_blamed_on_its_own_fields_clause() -> None:
    """After ``owner`` was blamed on its clause, a later answer that differs in ``owner`` and in
    a new field fails the new field's clause, not the step's (``finish``'s, ADK-FINISH-*);
    and the new field is masked under it."""
    h = Harness(_world(lambda env: _KeepsOwnerThenKind(env)))
    h.world.check = "scenario:t"
    h.go_on = True
    _finished_twice(h)
    assert list(h.world.evidence.failures) == ["ADK-OWNER-001", "ADK-CREATE-002"]
    assert h.masked == {"owner": "ADK-OWNER-001", "kind": "ADK-CREATE-002"}
    h.world.discard()


def test_without_go_on_the_first_difference_stops_the_check() -> None:
    h = _mutant("finish_keeps_owner")
    with pytest.raises(ClauseViolation) as stopped:
        _finished_twice(h)
    assert stopped.value.clause == "ADK-OWNER-001"
    assert h.world.evidence.failures == {}


def test_a_different_decision_stops_the_check_even_when_going_on() -> None:
    h = _mutant("renew_revives_expired_lease")
    h.go_on = True
    h.apply("c1", adk.Create("a", META, {}))
    h.apply("c1", adk.Claim("a", "node1", "t1", h.now, 10))
    with pytest.raises(ClauseViolation) as stopped:
        h.apply("c1", adk.Renew("a", "t1", h.now + 10, 10))  # ok where lease_expired is due
    assert stopped.value.clause == "ADK-LEASE-001"
    assert h.world.evidence.failures == {}


def test_blamed_on_with_fields_blames_only_those_fields() -> None:
    h = _mutant("finish_keeps_owner")
    h.go_on = True
    with blamed_on(h, "ADK-VALUE-001", ("checkpoint", "outcome")):
        _finished_twice(h)
    assert list(h.world.evidence.failures) == ["ADK-OWNER-001"]
    h = _mutant("finish_keeps_owner")
    h.go_on = True
    with blamed_on(h, "ADK-DURABLE-001"):
        _finished_twice(h)
    assert list(h.world.evidence.failures) == ["ADK-DURABLE-001"]


class _FinishKeepsCheckpoint(MemoryLedger):
    """Keeps a checkpoint finish was not given (``checkpoint``: a field without a clause of
    its own)."""

    def _finished(self, row: Any, phase: str, outcome: Any, checkpoint: Any, now: int) -> Any:
        return attrs.evolve(super()._finished(row, phase, outcome, checkpoint, now),
                            checkpoint={"kept": 1})


def test_blamed_on_with_fields_goes_on_past_those_fields_alone() -> None:
    """Inside ``blamed_on`` with fields, a difference in exactly those fields fails the block's
    clause, even in a field without a clause of its own, and the check goes on; a difference in
    a field of no clause outside them still stops it."""
    h = _mutant("finish_keeps_owner")
    h.go_on = True
    with blamed_on(h, "ADK-VALUE-001", ("owner",)):
        _finished_twice(h)
    assert list(h.world.evidence.failures) == ["ADK-VALUE-001"]
    assert h.masked == {"owner": "ADK-VALUE-001"}
    h.world.discard()
    h = Harness(_world(ADK.memory_factory(_FinishKeepsCheckpoint)))
    h.go_on = True
    with blamed_on(h, "ADK-VALUE-001", ("checkpoint",)):
        _finished_twice(h)
    assert list(h.world.evidence.failures) == ["ADK-VALUE-001"]
    assert h.repeats == {"ADK-VALUE-001": 1}
    h.world.discard()
    h = Harness(_world(ADK.memory_factory(_FinishKeepsCheckpoint)))
    h.go_on = True
    with pytest.raises(ClauseViolation) as stopped, blamed_on(h, "ADK-VALUE-001", ("outcome",)):
        _finished_twice(h)
    assert (stopped.value.clause, h.world.evidence.failures) == ("ADK-VALUE-001", {})
    h.world.discard()


class _RevisionMovesOnReopen(MemoryLedger):
    moved = 0

    def _view(self, row: Any) -> Any:
        view = super()._view(row)
        return attrs.evolve(view, revision=view.revision + self.moved)


class _MovedOnReopen(_Forgetful):
    """A factory whose reopened store shows every revision one higher."""

    def __init__(self) -> None:
        super().__init__()
        self.base = ADK.memory_factory(_RevisionMovesOnReopen)

    def __call__(self, env: Any) -> Any:
        self.opens += 1
        store = self.base(env)
        store.moved = int(self.opens > 1)
        return store


def test_a_difference_read_back_after_a_reopen_fails_durability_though_its_field_has_a_clause(
        ) -> None:
    """What differs after a reopen is what did not survive it: going on, a revision that moved
    across the reopen fails the durable clause, not the revision's own (ADK-REV-001)."""
    h = Harness(_world(_MovedOnReopen()))
    h.go_on = True
    try:
        h.apply("c1", adk.Create("a", META, {}))
        h.reopen()
        assert list(h.world.evidence.failures) == ["ADK-DURABLE-001"]
        assert h.masked == {"revision": "ADK-DURABLE-001"}
    finally:
        h.world.discard()


class _KeepsOwnerThenMore(_KeepsOwnerThenKind):
    """As :class:`_KeepsOwnerThenKind`, and ``b`` also shows a revision it never reached
    (``revision``: ADK-REV-001)."""

    def _view(self, row: Any) -> Any:
        view = super()._view(row)
        return attrs.evolve(view, revision=view.revision + 5) if view.kind == "forgotten" else view


def test_new_fields_of_several_clauses_beside_one_blamed_already_fail_the_steps_own_clause(
        ) -> None:
    """A later answer differing in a field blamed already and in two new fields of two
    clauses is no one field's fault: it fails the clause of the step's effect (finish's), and
    both new fields are masked under it."""
    h = Harness(_world(ADK.memory_factory(_KeepsOwnerThenMore)))
    h.go_on = True
    _finished_twice(h)
    assert list(h.world.evidence.failures) == ["ADK-OWNER-001", "ADK-FINISH-002"]
    assert h.masked == {"owner": "ADK-OWNER-001", "kind": "ADK-FINISH-002",
                        "revision": "ADK-FINISH-002"}
    h.world.discard()


def test_repeats_are_written_only_into_a_failure_this_check_found() -> None:
    """The report keeps the shortest failure of a clause; when another check's is kept, this
    check's repeats of that clause are not written into it."""
    h = _mutant("finish_keeps_owner")
    other = Failure("scenario:other", "the other check's", ())
    h.world.evidence.failures["ADK-OWNER-001"] = other
    h.world.check = "scenario:t"
    h.go_on = True
    _finished_twice(h)
    assert h.repeats == {"ADK-OWNER-001": 1}
    h.settle_repeats()
    assert h.world.evidence.failures == {"ADK-OWNER-001": other}
    h.world.discard()


def test_a_fork_of_the_check_shares_what_it_failed() -> None:
    h = _mutant("finish_keeps_owner")
    h.go_on = True
    other = h.on(h.world.fork("f"))
    try:
        _finished_twice(other)
    finally:
        other.world.discard()
    assert other.go_on and h.masked == {"owner": "ADK-OWNER-001"}
    assert h.repeats == {"ADK-OWNER-001": 1}


def test_a_difference_in_a_field_without_a_clause_of_its_own_stops_the_check() -> None:
    # updated_at is an effect of the write, not a read-back with a rule of its own: after it
    # differs, the model's state is no guide to the store's, so the check stops there.
    h = _mutant("get_touches_record")
    h.go_on = True
    h.apply("c1", adk.Create("a", META, {}))
    h.advance(5)
    with pytest.raises(ClauseViolation) as stopped:
        h.apply("c1", adk.Get("a"))
    assert (stopped.value.clause, stopped.value.after) == ("ADK-GET-002", ())
    assert h.world.evidence.failures == {}


def test_a_stop_after_going_on_is_not_concluded_rather_than_failed() -> None:
    from fencepost.scenarios.phases import run_one

    h0 = _mutant("finish_keeps_owner")
    world = h0.world

    def body(h: Harness) -> None:
        _finished_twice(h)  # goes on past the owner difference
        raise h._stop("ADK-REV-001", "a later difference")

    assert run_one(ADK.suite, world, "scenario:t", body, go_on=True) is False
    assert list(world.evidence.failures) == ["ADK-OWNER-001"]
    assert world.evidence.unknown == {"ADK-REV-001": (
        "scenario:t: not concluded: a later difference (after the check went on past a "
        "difference that failed ADK-OWNER-001, which it may follow from)")}
    assert world.evidence.ended["scenario:t"] == Ending(unknown="after ADK-OWNER-001 failed")



def test_an_id_that_is_no_string_names_no_record() -> None:
    # an argument edge sends a number or a forged value for an id: no record is read back for
    # it (after a reopen, the touched keys are sorted: a number among strings broke that)
    assert adk.Get(7).key() is None  # type: ignore[arg-type]
    assert snodo.Get(7, None).key() is None  # type: ignore[arg-type]
    assert snodo.Claim("t-1", "w0", 100).key() == "t-1"
    assert ledgence.Status(ledgence.Scope("acme", "main"), 7).key() is None
    assert ledgence.Status(ledgence.Scope("acme", "main"), Forged("task")).key() is None
    assert ledgence.Status(ledgence.Scope("acme", "main"), Ref("t")).key() == "t"


# --- what counts as put to the test ----------------------------------------------------------


def test_a_fields_clause_counts_only_when_an_agreed_answer_or_read_back_showed_the_field(
        h: Harness) -> None:
    """A pass must mean the rule was put to the test: a field's own clause (the model's
    ``field_clauses``) counts once per step whose answer or read-back showed that field and
    agreed, and never for a step that showed no record."""
    field_clauses = set(ADK.suite.model.field_clauses.values())
    h.apply("c1", adk.Get("a"))  # not_found: no record, no field shown
    assert not field_clauses & set(h.world.evidence.exercised)
    h.apply("c1", adk.Create("a", META, {"n": 1}))  # answers ok(None); its get shows them all
    assert {c: h.world.evidence.exercised.get(c) for c in field_clauses} == dict.fromkeys(
        field_clauses, 1)


def test_the_situations_the_model_names_for_an_agreed_step_are_counted(h: Harness) -> None:
    """Each (clause, situation) the model's ``situations`` names for a step the store agreed
    with is counted once (a run that never counts one passes that clause only weakly)."""
    model = ADK.suite.model
    assert model.situations is not None
    named: list[tuple[str, str]] = []
    for op in (adk.Create("a", META, {"n": 1}), adk.Create("a", META, {"n": 2}),
               adk.Claim("a", "node1", "t1", h.now, 100), adk.Get("a")):
        named += model.situations(h.state, h.for_model(op), h.ctx(), h.expect_one(op))
        h.apply("c1", op)
    assert named == [("ADK-CREATE-003", "over a ready record"), ("ADK-REV-001", "claim"),
                     ("ADK-GET-002", "a running record"), ("ADK-OWNER-001", "read after a claim")]
    counted = {(c, s): n for c, reached in h.world.evidence.situations.items()
               for s, n in reached.items()}
    assert counted == dict.fromkeys(named, 1)
