"""The moves of the ledgence-tasks tour (:mod:`.tour`): the walk's bookkeeping, where it
stands (read from the model's state), and one maker per call, clock move and argument edge.
Every move reads what it needs (the session, the task, the attempt, the sequence) from where
the walk stands when it is made, so that a label names one move wherever it is made."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import ForgedMeaning, Ref, resolve
from fencepost.spec.ops import Op

from ..tour_graph import ModelTourist, Move, Tourist
from .calls import DESCRIPTOR, PROGRAM, QUEUE, SCOPE, task_input

POLICY = spec.RetryPolicy(2, 5_000)
TIMEOUT = spec.ATTEMPT_TIMEOUT_MS[0]
REPORTS = ("success", "success unconfirmed", "io failure", "integrity failure",
           "application failure")
"""The settlements the owners send, by kind (each with an operation id of its own)."""


@attrs.frozen
class Driver:
    """A walk's bookkeeping: its prefix (the tasks' keys start with it)."""

    prefix: str

    def key(self, i: int) -> str:
        return f"{self.prefix}-k{i}"


def call(t: Tourist, actor: str, op: Op) -> Any:
    """``op`` as the tourist takes it: on the model alone, references are the model's names."""
    if isinstance(t, ModelTourist):
        op = resolve(op, lambda r: r.name if isinstance(r, Ref) else ForgedMeaning(r.label),
                     copy=False)
    return t.apply(actor, op)


def ref(name: str) -> Any:
    return Ref(name)


# -- where the walk stands (read from the model's state) -------------------------------------


def session_of(t: Tourist) -> spec.WorkerSession | None:
    sessions = t.state.sessions
    return next(iter(sessions.values())) if sessions else None


def task_of(t: Tourist, driver: Driver, i: int) -> Any:
    name = t.state.keys.get((SCOPE, driver.key(i)))
    return None if name is None else t.state.tasks[name]


def attempts_of(t: Tourist, task_id: str) -> list[Any]:
    """The task's attempts, the first first."""
    return sorted((a for a in t.state.attempts.values() if a.task_id == task_id),
                  key=lambda a: a.snapshot.event.attempt_no)


# -- the calls -----------------------------------------------------------------------------


def open_session(driver: Driver, t: Tourist) -> Driver:
    call(t, "worker", spec.OpenSession(SCOPE, QUEUE, 2))
    return driver


def extend_session(driver: Driver, t: Tourist) -> Driver:
    session = session_of(t)
    assert session is not None
    call(t, "worker", spec.ExtendSession(ref(session.id)))
    return driver


def extend_unknown(driver: Driver, t: Tourist) -> Driver:
    call(t, "worker", spec.ExtendSession(f"{driver.prefix}-no-session"))
    return driver


def task_input_for(other: bool) -> spec.TaskInput:
    return task_input(retry_policy=POLICY, attempt_timeout_ms=TIMEOUT,
                      correlation_key="order-8" if other else "order-7")


OTHER_DESCRIPTOR = attrs.evolve(DESCRIPTOR, digest="sha256:" + "cd" * 32)
"""The same program resolved to another archive (a re-send replays the first one's)."""


def submit(i: int, *, other: bool = False,
           descriptor: spec.ProgramDescriptor = DESCRIPTOR) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        call(t, "client", spec.AcceptResolvedSubmission(
            spec.SubmitCommand(driver.key(i), task_input_for(other)), descriptor))
        return driver
    return do


def lookup(i: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        call(t, "client", spec.LookupSubmission(SCOPE, driver.key(i)))
        return driver
    return do


def task_ref(driver: Driver, t: Tourist, i: int) -> Any:
    return ref(task_of(t, driver, i).snapshot.task_id)


def read_task(i: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        task = task_ref(driver, t, i)
        for read in (spec.Status, spec.Result):
            call(t, "client", read(SCOPE, task))
        call(t, "client", spec.History(SCOPE, task, 1))  # the observer reads after 0
        for att in attempts_of(t, task_of(t, driver, i).snapshot.task_id)[:-1]:
            # the observer reads the latest attempt; the ones before are read here
            call(t, "client", spec.InspectAttempt(SCOPE, task, ref(att.attempt_id)))
        return driver
    return do


def cancel_task(i: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        call(t, "client", spec.Cancel(SCOPE, task_ref(driver, t, i)))
        return driver
    return do


def acquire_command(t: Tourist, c: int, sequence: int) -> spec.AcquireCommand:
    session = session_of(t)
    assert session is not None
    return spec.AcquireCommand(SCOPE, QUEUE, ref(session.id), c, sequence)


def sequence_from(t: Tourist, c: int, step: int) -> int:
    """The cursor's sequence plus ``step`` (from 0 without a cursor)."""
    session = session_of(t)
    assert session is not None
    cursor = t.state.cursors.get((session.id, c))
    return (0 if cursor is None else cursor.sequence) + step


def acquire(c: int, step: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        call(t, f"c{c}", spec.Acquire(acquire_command(t, c, sequence_from(t, c, step))))
        return driver
    return do


def probe(c: int, step: int, finish_empty: bool, passed: bool = False) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        deadline = t.now if passed else t.now + spec.CONTROL_REQUEST_TIMEOUT_MS
        call(t, f"c{c}", spec.ProbeAcquisition(acquire_command(t, c, sequence_from(t, c, step)),
                                               finish_empty, deadline))
        return driver
    return do


def attempt_of(driver: Driver, t: Tourist, i: int, back: int) -> Any:
    """Task ``i``'s attempt ``back`` from its last (0: the last)."""
    return attempts_of(t, task_of(t, driver, i).snapshot.task_id)[-1 - back]


def owner_of(att: Any, **forged: Any) -> spec.LeaseOwner:
    o = att.owner
    real = spec.LeaseOwner(o.scope, ref(o.task_id), ref(o.attempt_id), ref(o.lease_id),
                           o.generation, ref(o.worker_session_id), o.consumer_id)
    return attrs.evolve(real, **forged)


SAME, OTHER = "the same intent", "the other intent"


def renew(i: int, back: int, step: int, intent: str) -> Any:
    """A renewal by the owner of task ``i``'s attempt ``back`` from its last, with the
    attempt's last renewal sequence plus ``step`` (0 before any) and ``intent`` (or the last
    renewal's own intent, or the other one)."""
    def do(driver: Driver, t: Tourist) -> Driver:
        att = attempt_of(driver, t, i, back)
        last = att.snapshot.last_renewal
        sequence = (0 if last is None else last.sequence) + step
        said = intent
        if intent in (SAME, OTHER):
            said = last.intent
            if intent == OTHER:
                said = spec.DISPATCH if said == spec.KEEP_ALIVE else spec.KEEP_ALIVE
        call(t, "worker", spec.Renew(spec.RenewCommand(owner_of(att), sequence, said)))
        return driver
    return do


def report_for(att: Any, kind: str) -> Any:
    context = spec.ExecutionContext(ref(att.task_id), ref(att.snapshot.event.attempt_id),
                                    PROGRAM, DESCRIPTOR.digest)
    if kind.startswith("success"):
        return spec.ExecutionReport(context, "proc-1", False,
                                    {"status": "success", "output": {"sent": 1}}, 20)
    if kind == "application failure":
        return spec.ExecutionReport(context, "proc-1", False, {
            "status": "failure", "kind": "runtime", "message": "bounced"}, 20)
    failed = kind.split()[0]
    # The final failure says execution did not start: an attempt a dispatch renewal marked
    # still ends with the flag set (the outcome reads the attempt, not the report).
    # The final one also failed its cleanup (the outcome carries that error back).
    return spec.ExecutionFailure(context, failed, f"{failed} failed", "execution",
                                 failed != "integrity",
                                 cleanup_error={"kind": "io", "message": "cleanup failed"}
                                 if failed == "integrity" else None)


def settle(i: int, back: int, kind: str) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        att = attempt_of(driver, t, i, back)
        quiescence = spec.UNCONFIRMED if kind.endswith("unconfirmed") else spec.CONFIRMED
        command = spec.SettleCommand(owner_of(att), f"op-{kind.replace(' ', '-')}",
                                     report_for(att, kind), quiescence)
        call(t, "worker", spec.Settle(command))
        return driver
    return do


def resend_under_another_id(i: int) -> Any:
    """The settlement task ``i``'s last attempt accepted, sent again under another operation
    id (a conflict: the operation id is part of the settlement)."""
    def do(driver: Driver, t: Tourist) -> Driver:
        att = attempt_of(driver, t, i, 0)
        kind = att.snapshot.settlement.operation_id.removeprefix("op-").replace("-", " ")
        quiescence = spec.UNCONFIRMED if kind.endswith("unconfirmed") else spec.CONFIRMED
        call(t, "worker", spec.Settle(spec.SettleCommand(
            owner_of(att), "op-another", report_for(att, kind), quiescence)))
        return driver
    return do


def with_a_forged(i: int, what: str) -> Any:
    """A call by task ``i``'s last attempt's owner with one part nobody issued: ``renew task``
    (a task id never minted), ``settle attempt`` (an attempt id the task never had),
    ``settle digest`` (a report naming another archive)."""
    def do(driver: Driver, t: Tourist) -> Driver:
        att = attempt_of(driver, t, i, 0)
        if what == "renew task":
            last = att.snapshot.last_renewal
            sequence = (0 if last is None else last.sequence) + 1
            who = owner_of(att, task_id=f"{driver.prefix}-no-task")
            call(t, "worker", spec.Renew(spec.RenewCommand(who, sequence, spec.KEEP_ALIVE)))
            return driver
        report = report_for(att, "success")
        who = owner_of(att)
        if what == "settle attempt":
            who = owner_of(att, attempt_id=f"{driver.prefix}-no-attempt")
        else:
            report = attrs.evolve(report, context=attrs.evolve(
                report.context, digest=OTHER_DESCRIPTOR.digest))
        call(t, "worker", spec.Settle(spec.SettleCommand(who, "op-success", report,
                                                         spec.CONFIRMED)))
        return driver
    return do


def confirm(i: int, back: int, *, forged: bool = False) -> Any:
    """Quiescence confirmed by the attempt's owner (``forged``: with a lease id nobody
    issued)."""
    def do(driver: Driver, t: Tourist) -> Driver:
        att = attempt_of(driver, t, i, back)
        who = owner_of(att, lease_id=f"{driver.prefix}-forged") if forged else owner_of(att)
        call(t, "worker", spec.ConfirmQuiescence(who))
        return driver
    return do


def expire_batch(limit: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        call(t, "ops", spec.ExpireBatch(limit))
        return driver
    return do


def reopen(driver: Driver, t: Tourist) -> Driver:
    t.reopen()
    return driver


# -- the clock -----------------------------------------------------------------------------


def session_end(driver: Driver, t: Tourist) -> int:
    session = session_of(t)
    assert session is not None
    return int(session.expires_at)


def available_point(i: int) -> Any:
    def when(driver: Driver, t: Tourist) -> int:
        return int(task_of(t, driver, i).snapshot.available_at)
    return when


def current_point(i: int, which: str) -> Any:
    def when(driver: Driver, t: Tourist) -> int:
        current = task_of(t, driver, i).snapshot.current_attempt_id
        a = t.state.attempts[current].snapshot
        return int({"lease": a.lease.expires_at, "deadline": a.deadline,
                    "authority": a.authority_deadline}[which])
    return when


def clock_to(when: Any, delta: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        t.set_time(when(driver, t) + delta)
        return driver
    return do


# -- arguments at their edges (the full scope) ------------------------------------------------


def edge_moves(driver: Driver, t: Tourist, session: spec.WorkerSession | None) -> list[Move]:
    out = [Move("expire_batch 0", expire_batch(0)),
           Move(f"expire_batch {spec.MAX_RECOVERY_BATCH + 1}",
                expire_batch(spec.MAX_RECOVERY_BATCH + 1))]
    if session is not None:
        out += [Move("c0 acquires with sequence 0", acquire_at(0, 0)),
                Move("c2 (outside the session) acquires", acquire_at(2, 1))]
    rec = task_of(t, driver, 0)
    if rec is not None:
        out.append(Move("t0's history after -1", history_after(-1)))
        if attempts_of(t, rec.snapshot.task_id):
            out += [Move("renew t0's last attempt with sequence 0", renew_zero),
                    Move("settle t0's last attempt with a forged lease id: success",
                         settle_forged)]
    return out


def acquire_at(c: int, sequence: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        call(t, f"c{c}", spec.Acquire(acquire_command(t, c, sequence)))
        return driver
    return do


def history_after(after: int) -> Any:
    def do(driver: Driver, t: Tourist) -> Driver:
        call(t, "client", spec.History(SCOPE, task_ref(driver, t, 0), after))
        return driver
    return do


def renew_zero(driver: Driver, t: Tourist) -> Driver:
    att = attempts_of(t, task_of(t, driver, 0).snapshot.task_id)[-1]
    call(t, "worker", spec.Renew(spec.RenewCommand(owner_of(att), 0, spec.KEEP_ALIVE)))
    return driver


def settle_forged(driver: Driver, t: Tourist) -> Driver:
    att = attempts_of(t, task_of(t, driver, 0).snapshot.task_id)[-1]
    command = spec.SettleCommand(owner_of(att, lease_id=f"{driver.prefix}-forged"),
                                 "op-success", report_for(att, "success"), spec.CONFIRMED)
    call(t, "worker", spec.Settle(command))
    return driver
