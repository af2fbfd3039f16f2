"""Where the kit follows the ledgence seed's implementation, with exact answers: on the model and
on the built-in stores (memory, SQLite, PostgreSQL when reachable).

- authority: execution time is 0 once a cancel is requested or the deadline is reached
  (orchestration-core lib.rs ``authority()``);
- a claim starts the attempt with quiescence ``unconfirmed`` (acquisition.rs, PostgreSQL);
- an accepted settlement sets ``execution_may_have_started`` (lifecycle.rs ``settle()``);
- settle and confirm_quiescence of an attempt the task never had answer not_found;
- renew reads the consumer's cursor before the task (option ``renew_lookup``);
- an owner's ids are only looked up and compared (an empty lease id is ownership_lost, an
  empty task id not_found: persistence.rs ``load_task``, core lib.rs ``check_owner``), the
  operation id is checked once the owner matched and a report's context compared, not
  checked as text (lifecycle.rs ``validate_report``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from conftest import Clock

from fencepost.adapters.ledgence_tasks.core import LedgenceCore
from fencepost.adapters.ledgence_tasks.memory import MemoryLedgenceFactory
from fencepost.adapters.ledgence_tasks.sql import SqlLedgenceFactory
from fencepost.env import AdapterEnv
from fencepost.model import ledgence_tasks as model
from fencepost.model.base import Ctx, Step
from fencepost.model.ledgence_tasks import records
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.outcome import Err, Ok

SCOPE = spec.Scope("tenant-a", "prod")
PROGRAM = spec.Program("mailer", "1.2.0")
DESCRIPTOR = spec.ProgramDescriptor(PROGRAM, "sha256:" + "ab" * 32, 4096)
START = 1_000
TIMEOUT = 120_000  # a deadline that comes before the session's expiry


class Bench:
    """One store on one clock, with the steps every test here takes."""

    def __init__(self, factory: Any, options: dict[str, str] | None = None) -> None:
        self.factory, self.clock = factory, Clock(START)
        self.env = AdapterEnv(clock=self.clock, namespace=f"seed_{uuid.uuid4().hex[:12]}",
                              options=dict(options or {}))
        self.store: LedgenceCore = factory(self.env)

    def close(self) -> None:
        self.store.close()
        self.factory.discard(self.env)
        getattr(self.factory, "close", lambda: None)()  # its pooled connections

    def claim(self, key: str = "key-1", consumer: int = 0, **changes: Any) -> spec.Assignment:
        task = spec.TaskInput(SCOPE, "emails", PROGRAM, attempt_timeout_ms=TIMEOUT, **changes)
        self.store.accept_resolved_submission(spec.SubmitCommand(key, task), DESCRIPTOR)
        if not hasattr(self, "session"):
            self.session = self.store.open_session(SCOPE, "emails", 2)
        reply = self.store.acquire(spec.AcquireCommand(SCOPE, "emails", self.session.id,
                                                       consumer, 1))
        assert isinstance(reply, spec.AcquireAssigned)
        return reply.assignment

    def attempt(self, assignment: spec.Assignment) -> spec.AttemptSnapshot:
        owner = assignment.lease.owner
        return self.store.inspect_attempt(SCOPE, owner.task_id, owner.attempt_id)


def context(assignment: spec.Assignment) -> spec.ExecutionContext:
    owner = assignment.lease.owner
    return spec.ExecutionContext(owner.task_id, owner.attempt_id, PROGRAM, DESCRIPTOR.digest)


def completed(assignment: spec.Assignment) -> spec.ExecutionReport:
    return spec.ExecutionReport(context(assignment), "proc-1", False,
                                {"status": "success", "output": {"sent": 1}}, 20)


def failed(assignment: spec.Assignment, started: bool) -> spec.ExecutionFailure:
    return spec.ExecutionFailure(context(assignment), "integrity", "bad", "admission", started)


def settle(bench: Bench, assignment: spec.Assignment, report: Any,
           quiescence: str = spec.CONFIRMED) -> spec.SettleReply:
    return bench.store.settle(spec.SettleCommand(assignment.lease.owner, "op-1", report,
                                                 quiescence))


@pytest.fixture(params=("memory", "sqlite", "postgresql"))
def factory(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return MemoryLedgenceFactory()
    if request.param == "sqlite":
        return SqlLedgenceFactory(f"sqlite:///{tmp_path}/ledgence.db")
    return SqlLedgenceFactory(request.getfixturevalue("pg_url"))


@pytest.fixture
def bench(factory: Any) -> Iterator[Bench]:
    b = Bench(factory)
    yield b
    b.close()


# --- authority --------------------------------------------------------------------------------


def test_after_a_cancel_request_renew_reports_no_execution_time(bench: Bench) -> None:
    a = bench.claim()
    assert a.authority.execution_remaining_ms == TIMEOUT
    bench.clock.now = START + 1_000
    assert bench.store.cancel(SCOPE, a.lease.owner.task_id) == "active"
    authority = bench.store.renew(spec.RenewCommand(a.lease.owner, 1, spec.KEEP_ALIVE))
    assert authority == spec.Authority(expires_at=START + 31_000, remaining_ms=30_000,
                                       execution_remaining_ms=0, renew_sequence=1,
                                       cancel_requested=True, dispatch_allowed=False)


def test_at_the_deadline_the_live_lease_has_no_execution_time(bench: Bench) -> None:
    a = bench.claim()
    for at in range(START + 50_000, START + TIMEOUT, 50_000):  # keep the lease alive
        bench.clock.now = at
        bench.store.renew(spec.RenewCommand(a.lease.owner, (at - START) // 50_000,
                                            spec.KEEP_ALIVE))
    bench.clock.now = START + TIMEOUT - 1
    one_before = bench.store.renew(spec.RenewCommand(a.lease.owner, 3, spec.KEEP_ALIVE))
    assert (one_before.execution_remaining_ms, one_before.cancel_requested) == (1, False)
    bench.clock.now = START + TIMEOUT
    at_deadline = bench.store.renew(spec.RenewCommand(a.lease.owner, 4, spec.DISPATCH))
    assert at_deadline == spec.Authority(
        expires_at=START + TIMEOUT + 30_000, remaining_ms=30_000, execution_remaining_ms=0,
        renew_sequence=4, cancel_requested=True, dispatch_allowed=False)


# --- quiescence and execution_may_have_started ------------------------------------------------


def test_a_claimed_attempt_reads_quiescence_unconfirmed(bench: Bench) -> None:
    a = bench.claim()
    snap = bench.attempt(a)
    assert (snap.quiescence, snap.execution_may_have_started, snap.settlement) == (
        spec.UNCONFIRMED, False, None)


def test_a_completed_settlement_marks_execution_started(bench: Bench) -> None:
    a = bench.claim()
    assert settle(bench, a, completed(a)).task_state == "succeeded"
    snap = bench.attempt(a)
    assert (snap.state, snap.quiescence, snap.execution_may_have_started) == (
        "succeeded", spec.CONFIRMED, True)


def test_an_unconfirmed_completed_settlement_marks_it_at_once(bench: Bench) -> None:
    a = bench.claim()
    assert settle(bench, a, completed(a), spec.UNCONFIRMED).task_state == "active"
    snap = bench.attempt(a)
    assert (snap.state, snap.quiescence, snap.execution_may_have_started) == (
        "active", spec.UNCONFIRMED, True)


@pytest.mark.parametrize("started", [False, True])
def test_a_failure_settlement_carries_its_own_flag(bench: Bench, started: bool) -> None:
    a = bench.claim()
    assert settle(bench, a, failed(a, started)).task_state == "failed"
    assert bench.attempt(a).execution_may_have_started is started


def test_a_dispatched_attempt_stays_marked_after_a_failure_that_did_not_start(
        bench: Bench) -> None:
    a = bench.claim()
    bench.store.renew(spec.RenewCommand(a.lease.owner, 1, spec.DISPATCH))
    settle(bench, a, failed(a, False))
    assert bench.attempt(a).execution_may_have_started is True


# --- result's outcome, as the seed's API serializes it -----------------------------------------


def outcome(bench: Bench, a: spec.Assignment) -> Any:
    return bench.store.result(SCOPE, a.lease.owner.task_id).outcome


def ended(a: spec.Assignment, kind: str, quiescence: str, started: bool,
          **rest: Any) -> dict[str, Any]:
    return {"kind": kind, "attempt_id": a.lease.owner.attempt_id, "quiescence": quiescence,
            "execution_may_have_started": started, **rest}


def test_a_success_outcome_names_its_attempt(bench: Bench) -> None:
    a = bench.claim()
    settle(bench, a, completed(a))
    assert outcome(bench, a) == ended(a, "succeeded", spec.CONFIRMED, True,
                                      output={"sent": 1})


def test_an_application_failure_is_the_applications_error(bench: Bench) -> None:
    a = bench.claim()
    report = attrs.evolve(completed(a), outcome={"status": "failure", "kind": "runtime",
                                                 "message": "bounced"})
    settle(bench, a, report)
    assert outcome(bench, a) == ended(a, "failed", spec.CONFIRMED, True, failure={
        "kind": "application", "error": {"kind": "runtime", "message": "bounced"}})


def test_an_execution_failure_keeps_its_phase_and_cleanup_error(bench: Bench) -> None:
    a = bench.claim()
    report = attrs.evolve(failed(a, False), phase="cleanup",
                          cleanup_error={"kind": "io", "message": "left behind"})
    settle(bench, a, report)
    assert outcome(bench, a) == ended(a, "failed", spec.CONFIRMED, False, failure={
        "kind": "execution", "error": {"kind": "integrity", "message": "bad"},
        "phase": "cleanup", "cleanup_error": {"kind": "io", "message": "left behind"}})


def test_a_cleanup_error_as_text_is_invalid_input(bench: Bench) -> None:
    a = bench.claim()
    with pytest.raises(spec.InvalidInput):
        settle(bench, a, attrs.evolve(failed(a, True), cleanup_error="left behind"))


def test_an_outcome_keeps_the_dispatch_mark_the_report_did_not_make(bench: Bench) -> None:
    a = bench.claim()
    bench.store.renew(spec.RenewCommand(a.lease.owner, 1, spec.DISPATCH))
    settle(bench, a, failed(a, False))
    assert outcome(bench, a)["execution_may_have_started"] is True


def test_an_unconfirmed_report_decided_at_expiry_reads_unconfirmed(bench: Bench) -> None:
    a = bench.claim()
    settle(bench, a, completed(a), spec.UNCONFIRMED)
    bench.clock.now = a.lease.expires_at
    assert bench.store.expire_batch(10).expired == 1
    assert outcome(bench, a) == ended(a, "succeeded", spec.UNCONFIRMED, True,
                                      output={"sent": 1})


def test_an_attempt_lost_on_the_last_attempt_fails_with_no_message(bench: Bench) -> None:
    a = bench.claim(retry_policy=spec.RetryPolicy(1, 0))
    authority = bench.store.renew(spec.RenewCommand(a.lease.owner, 1, spec.DISPATCH))
    bench.clock.now = authority.expires_at
    assert bench.store.expire_batch(10).expired == 1
    assert outcome(bench, a) == ended(a, "failed", spec.UNCONFIRMED, True,
                                      failure={"kind": "attempt_lost"})


# --- owner lookups ----------------------------------------------------------------------------


def test_settle_and_confirm_of_an_attempt_never_minted_are_not_found(bench: Bench) -> None:
    a = bench.claim()
    forged = attrs.evolve(a.lease.owner, attempt_id="att_never_minted")
    with pytest.raises(spec.NotFound):
        bench.store.settle(spec.SettleCommand(forged, "op-1", completed(a), spec.CONFIRMED))
    with pytest.raises(spec.NotFound):
        bench.store.confirm_quiescence(forged)
    with pytest.raises(spec.OwnershipLost):  # renew: the cursor names another attempt
        bench.store.renew(spec.RenewCommand(forged, 1, spec.KEEP_ALIVE))


def test_renew_of_a_task_never_minted_is_ownership_lost_by_default(bench: Bench) -> None:
    a = bench.claim()
    forged = attrs.evolve(a.lease.owner, task_id="task_never_minted")
    with pytest.raises(spec.OwnershipLost):
        bench.store.renew(spec.RenewCommand(forged, 1, spec.KEEP_ALIVE))
    with pytest.raises(spec.NotFound):  # settle loads the task first
        bench.store.settle(spec.SettleCommand(forged, "op-1", completed(a), spec.CONFIRMED))


def test_renew_of_a_task_never_minted_is_not_found_under_task_first(factory: Any) -> None:
    bench = Bench(factory, {spec.RENEW_LOOKUP: spec.TASK_FIRST})
    try:
        a = bench.claim()
        forged = attrs.evolve(a.lease.owner, task_id="task_never_minted")
        with pytest.raises(spec.NotFound):
            bench.store.renew(spec.RenewCommand(forged, 1, spec.KEEP_ALIVE))
    finally:
        bench.close()


def test_renew_by_a_consumer_whose_cursor_moved_on_is_ownership_lost(bench: Bench) -> None:
    a = bench.claim(consumer=0)
    other = attrs.evolve(a.lease.owner, consumer_id=1)  # consumer 1 has no cursor
    with pytest.raises(spec.OwnershipLost):
        bench.store.renew(spec.RenewCommand(other, 1, spec.KEEP_ALIVE))


# --- owners and reports at their edges ---------------------------------------------------------

OWNER_EDGES = [
    ({"lease_id": ""}, spec.OwnershipLost),
    ({"worker_session_id": ""}, spec.OwnershipLost),
    ({"generation": 0}, spec.OwnershipLost),
    ({"task_id": ""}, spec.NotFound),
    ({"attempt_id": ""}, spec.NotFound),
    ({"consumer_id": -1}, spec.InvalidInput),
    ({"scope": spec.Scope("tenant-a", "")}, spec.InvalidInput),
]


@pytest.mark.parametrize(("changes", "error"), OWNER_EDGES)
def test_settle_and_confirm_compare_an_owner_at_its_edges(
        bench: Bench, changes: dict[str, Any], error: type[Exception]) -> None:
    a = bench.claim()
    forged = attrs.evolve(a.lease.owner, **changes)
    with pytest.raises(error):
        bench.store.settle(spec.SettleCommand(forged, "op-1", completed(a), spec.CONFIRMED))
    with pytest.raises(error):
        bench.store.confirm_quiescence(forged)


@pytest.mark.parametrize(("changes", "error"), [
    ({"worker_session_id": ""}, spec.InvalidInput),  # renew checks its session id first
    ({"task_id": ""}, spec.OwnershipLost),  # the cursor names another task
    ({"lease_id": ""}, spec.OwnershipLost),
    ({"generation": 0}, spec.OwnershipLost),
])
def test_renew_of_an_owner_at_its_edges(bench: Bench, changes: dict[str, Any],
                                        error: type[Exception]) -> None:
    a = bench.claim()
    forged = attrs.evolve(a.lease.owner, **changes)
    with pytest.raises(error):
        bench.store.renew(spec.RenewCommand(forged, 1, spec.KEEP_ALIVE))


def test_an_empty_operation_id_is_refused_only_once_the_owner_matched(bench: Bench) -> None:
    a = bench.claim()
    with pytest.raises(spec.InvalidInput):
        bench.store.settle(spec.SettleCommand(a.lease.owner, "", completed(a), spec.CONFIRMED))
    forged = attrs.evolve(a.lease.owner, lease_id="")
    with pytest.raises(spec.OwnershipLost):
        bench.store.settle(spec.SettleCommand(forged, "", completed(a), spec.CONFIRMED))


@pytest.mark.parametrize("field", ["digest", "task_id", "attempt_id"])
def test_a_report_naming_an_empty_context_conflicts(bench: Bench, field: str) -> None:
    a = bench.claim()
    report = attrs.evolve(completed(a), context=attrs.evolve(context(a), **{field: ""}))
    with pytest.raises(spec.Conflict):
        settle(bench, a, report)


def test_a_failure_with_an_empty_message_is_accepted(bench: Bench) -> None:
    a = bench.claim()
    report = spec.ExecutionFailure(context(a), "integrity", "", "execution", True)
    assert settle(bench, a, report).task_state == "failed"
    assert bench.store.result(SCOPE, a.lease.owner.task_id).outcome == {
        "kind": "failed", "attempt_id": a.lease.owner.attempt_id, "quiescence": "confirmed",
        "execution_may_have_started": True,
        "failure": {"kind": "execution", "error": {"kind": "integrity", "message": ""},
                    "phase": "execution", "cleanup_error": None}}


# --- the model says the same ------------------------------------------------------------------


def _model_claim(options: dict[str, str] | None = None) -> tuple[model.State, Ctx]:
    ctx = Ctx(now=START, options=options or {})
    state = model.EMPTY
    task = spec.TaskInput(SCOPE, "emails", PROGRAM, attempt_timeout_ms=TIMEOUT)
    for op in (spec.AcceptResolvedSubmission(spec.SubmitCommand("k", task), DESCRIPTOR),
               spec.OpenSession(SCOPE, "emails", 1),
               spec.Acquire(spec.AcquireCommand(SCOPE, "emails", "ws#2", 0, 1))):
        step = model.step(state, op, ctx)
        assert isinstance(step, Step) and isinstance(step.outcome, Ok)
        state = step.state
    return state, ctx


def test_the_model_claims_with_quiescence_unconfirmed() -> None:
    state, _ = _model_claim()
    assert state.attempts["attempt#3"].snapshot.quiescence == spec.UNCONFIRMED


def test_the_model_cuts_execution_time_at_a_cancel_request() -> None:
    state, ctx = _model_claim()
    step = model.step(state, spec.Cancel(SCOPE, "task#1"), attrs.evolve(ctx, now=START + 1))
    assert isinstance(step, Step)
    rec, att = step.state.tasks["task#1"], step.state.attempts["attempt#3"]
    authority = records.authority(rec, att, START + 1)
    assert (authority.execution_remaining_ms, authority.remaining_ms) == (0, 30_000)


@pytest.mark.parametrize(("options", "code", "clause"), [
    ({}, "ownership_lost", "LDG-OWNER-001"),
    ({spec.RENEW_LOOKUP: spec.TASK_FIRST}, "not_found", "LDG-OWNER-001"),
])
def test_the_model_renews_a_task_never_minted_by_the_option(
        options: dict[str, str], code: str, clause: str) -> None:
    state, ctx = _model_claim(options)
    owner = attrs.evolve(state.attempts["attempt#3"].owner, task_id="task_never_minted")
    step = model.step(state, spec.Renew(spec.RenewCommand(owner, 1, spec.KEEP_ALIVE)), ctx)
    assert isinstance(step, Step) and isinstance(step.outcome, Err)
    assert (step.outcome.code, step.clause) == (code, clause)


def _model_settle(state: model.State, ctx: Ctx, owner: spec.LeaseOwner,
                  operation_id: str = "op-1") -> Step:
    report = spec.ExecutionReport(spec.ExecutionContext("task#1", "attempt#3", PROGRAM,
                                                        DESCRIPTOR.digest),
                                  "proc-1", False, {"status": "success", "output": 1}, 20)
    step = model.step(state, spec.Settle(spec.SettleCommand(owner, operation_id, report,
                                                            spec.CONFIRMED)), ctx)
    assert isinstance(step, Step)
    return step


@pytest.mark.parametrize(("changes", "code", "clause"), [
    ({"lease_id": ""}, "ownership_lost", "LDG-SETTLE-002"),
    ({"worker_session_id": ""}, "ownership_lost", "LDG-SETTLE-002"),
    ({"generation": 0}, "ownership_lost", "LDG-SETTLE-002"),
    ({"task_id": ""}, "not_found", "LDG-OWNER-001"),
    ({"attempt_id": ""}, "not_found", "LDG-OWNER-001"),
    ({"consumer_id": -1}, "invalid_input", "LDG-OWNER-001"),
    ({"generation": -1}, "invalid_input", "LDG-OWNER-001"),
])
def test_the_model_settles_an_owner_at_its_edges_as_the_seed(
        changes: dict[str, Any], code: str, clause: str) -> None:
    state, ctx = _model_claim()
    step = _model_settle(state, ctx, attrs.evolve(state.attempts["attempt#3"].owner, **changes))
    assert isinstance(step.outcome, Err)
    assert (step.outcome.code, step.clause) == (code, clause)


def test_the_model_checks_the_operation_id_after_the_owner() -> None:
    state, ctx = _model_claim()
    owner = state.attempts["attempt#3"].owner
    for who, code, clause in ((owner, "invalid_input", "LDG-SETTLE-006"),
                              (attrs.evolve(owner, lease_id=""), "ownership_lost",
                               "LDG-SETTLE-002")):
        step = _model_settle(state, ctx, who, operation_id="")
        assert isinstance(step.outcome, Err)
        assert (step.outcome.code, step.clause) == (code, clause)


def test_the_model_matches_a_resend_canonically_and_refuses_an_oversized_settlement() -> None:
    """A re-send is the same settlement when its canonical JSON is (1 and 1.0 differ); the
    8 MiB limit applies to a command's canonical form, a re-send's too."""
    state, ctx = _model_claim()
    owner = state.attempts["attempt#3"].owner

    def settle(output: Any, at: Any = None) -> Step:
        report = spec.ExecutionReport(spec.ExecutionContext("task#1", "attempt#3", PROGRAM,
                                                            DESCRIPTOR.digest),
                                      "proc-1", False, {"status": "success", "output": output},
                                      20)
        step = model.step(at or state, spec.Settle(spec.SettleCommand(owner, "op-1", report,
                                                                      spec.UNCONFIRMED)), ctx)
        assert isinstance(step, Step)
        return step

    huge = settle("x" * spec.SETTLEMENT_MAX_BYTES)
    assert isinstance(huge.outcome, Err)
    assert (huge.outcome.code, huge.clause) == ("invalid_input", "LDG-SETTLE-006")
    first = settle({"n": 1})
    assert first.clause == "LDG-SETTLE-007" and isinstance(first.outcome, Ok)
    again = settle({"n": 1}, first.state)
    assert again.clause == "LDG-SETTLE-003" and isinstance(again.outcome, Ok)
    other = settle({"n": 1.0}, first.state)
    assert isinstance(other.outcome, Err)
    assert (other.outcome.code, other.clause) == ("conflict", "LDG-SETTLE-004")
    resent_huge = settle("x" * spec.SETTLEMENT_MAX_BYTES, first.state)
    assert isinstance(resent_huge.outcome, Err)
    assert (resent_huge.outcome.code, resent_huge.clause) == ("invalid_input", "LDG-SETTLE-006")


# --- routes: the queue `dispatched` is claimed from, never scanned (LDG-DISPATCH-009) ---------


def test_a_routed_queue_answers_external_dispatch_and_keeps_no_sequence(bench: Bench) -> None:
    """delivery.rs probe_acquisition_once: ExternalDispatchRequired once the sequence holds,
    before any scan, nothing committed (the next sequence is still the first)."""
    routed = spec.TaskInput(SCOPE, spec.ROUTED_QUEUE, PROGRAM, attempt_timeout_ms=TIMEOUT)
    task = bench.store.accept_resolved_submission(spec.SubmitCommand("r", routed), DESCRIPTOR)
    session = bench.store.open_session(SCOPE, spec.ROUTED_QUEUE, 1)
    first = spec.AcquireCommand(SCOPE, spec.ROUTED_QUEUE, session.id, 0, 1)
    with pytest.raises(spec.ExternalDispatchRequired):
        bench.store.acquire(first)
    with pytest.raises(spec.ExternalDispatchRequired):
        bench.store.probe_acquisition(first, True, START + 1_000)
    with pytest.raises(spec.OutOfOrder):
        bench.store.acquire(attrs.evolve(first, sequence=2))
    claimed = bench.store.claim_dispatch(spec.ClaimCommand(
        first, spec.DispatchRef(SCOPE, spec.ROUTED_QUEUE, task.task_id, 1)))
    assert isinstance(claimed.disposition, spec.ClaimClaimed)


def test_a_task_of_an_unrouted_queue_is_never_claimed(bench: Bench) -> None:
    """dispatch_claim.rs claim_dispatch_once: invalid_input once the task is found."""
    bench.claim()  # a task of "emails" claimed, and the session of that queue
    plain = bench.store.accept_resolved_submission(spec.SubmitCommand("p", spec.TaskInput(
        SCOPE, "emails", PROGRAM, attempt_timeout_ms=TIMEOUT)), DESCRIPTOR)
    command = spec.AcquireCommand(SCOPE, "emails", bench.session.id, 1, 1)
    with pytest.raises(spec.NotFound):
        bench.store.claim_dispatch(spec.ClaimCommand(command, spec.DispatchRef(
            SCOPE, "emails", "task_never_minted", 1)))
    with pytest.raises(spec.InvalidInput, match=spec.UNROUTED_CLAIM):
        bench.store.claim_dispatch(spec.ClaimCommand(command, spec.DispatchRef(
            SCOPE, "emails", plain.task_id, 1)))
    assert bench.store.status(SCOPE, plain.task_id).state == "queued"


@pytest.mark.parametrize(("capabilities", "code"), [
    (frozenset({"dispatch"}), "external_dispatch_required"), (frozenset(), "ok")])
def test_the_model_routes_the_queue_only_with_targeted_dispatch(
        capabilities: frozenset[str], code: str) -> None:
    ctx = Ctx(now=START, options={}, capabilities=capabilities)
    state = model.EMPTY
    task = spec.TaskInput(SCOPE, spec.ROUTED_QUEUE, PROGRAM, attempt_timeout_ms=TIMEOUT)
    for op in (spec.AcceptResolvedSubmission(spec.SubmitCommand("k", task), DESCRIPTOR),
               spec.OpenSession(SCOPE, spec.ROUTED_QUEUE, 1)):
        step = model.step(state, op, ctx)
        assert isinstance(step, Step)
        state = step.state
    step = model.step(state, spec.Acquire(spec.AcquireCommand(SCOPE, spec.ROUTED_QUEUE,
                                                              "ws#2", 0, 1)), ctx)
    assert isinstance(step, Step) and step.outcome.code == code
    if code != "ok":
        assert step.clause == "LDG-DISPATCH-009" and step.state is state


# --- probe_acquisition: a passed deadline before the command's values ---------------------------


def test_a_passed_deadline_comes_before_the_commands_values(bench: Bench) -> None:
    """storage.rs probe_acquisition is run_until(deadline, probe_acquisition_once), and the
    command's values are checked inside: a passed deadline with an empty queue is
    unavailable; a value the seed's types cannot hold is still invalid_input first."""
    session = bench.store.open_session(SCOPE, "emails", 1)
    empty_queue = spec.AcquireCommand(SCOPE, "", session.id, 0, 1)
    with pytest.raises(spec.Unavailable):
        bench.store.probe_acquisition(empty_queue, True, START - 1)
    with pytest.raises(spec.InvalidInput):
        bench.store.probe_acquisition(attrs.evolve(empty_queue, sequence=-1), True, START - 1)
    with pytest.raises(spec.InvalidInput):
        bench.store.probe_acquisition(empty_queue, True, START + 1_000)


def test_the_model_answers_a_passed_deadline_before_the_commands_values() -> None:
    ctx = Ctx(now=START, options={})
    empty_queue = spec.AcquireCommand(SCOPE, "", "ws#1", 0, 1)
    for deadline, code, clause in ((START, "unavailable", "LDG-ACQ-015"),
                                   (START + 1, "invalid_input", "LDG-ACQ-005")):
        step = model.step(model.EMPTY, spec.ProbeAcquisition(empty_queue, True, deadline), ctx)
        assert isinstance(step, Step) and isinstance(step.outcome, Err)
        assert (step.outcome.code, step.clause) == (code, clause)
