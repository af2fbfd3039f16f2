"""The calls on a running attempt in the ``ledgence-tasks`` model: its owner's ``renew``,
``settle`` and ``confirm_quiescence`` (``LDG-OWNER-*``, ``LDG-RENEW-*``, ``LDG-SETTLE-*``,
``LDG-QUIESCE-*``), ``cancel`` (``LDG-CANCEL-*``) and the recovery scan, ``expire_batch``
(``LDG-RECOVER-*``), which finalizes attempts past their expiry.
"""

from __future__ import annotations

import itertools
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import MISSING, ByIdentity

from ..base import Ctx, OneOf, Step
from .records import (
    Draft,
    State,
    StoredAttempt,
    TaskRec,
    authority,
    check_under,
    find_task,
    finish,
    is_live,
    lease_expiry,
    live_failure,
    live_session,
    ok_step,
    refused_with,
)

# --- owner calls -------------------------------------------------------------------------------


def _owned(state: State, owner: Any, clause: str,
           missing_attempt: str = "not_found") -> tuple[TaskRec, StoredAttempt]:
    """The task (not_found when missing or of another scope), the attempt of that task
    (``missing_attempt``: not_found, or ownership_lost under ``clause``), whose stored owner is
    exactly ``owner`` (else ownership_lost under ``clause``). The ids are not checked as text:
    an empty task or attempt id finds nothing, an empty lease or session id or generation 0
    matches no owner. seed: settle and confirm_quiescence load the task, then the attempt by
    (task, attempt id), either missing not_found: crates/ledgence-adapter-postgres/src/
    persistence.rs:21-53 at 3abb9ee, delivery.rs:229-235 at 50df11a, storage.rs:231-237 at
    2b1bcd2; then compare the whole owner (check_owner:
    crates/ledgence-orchestration-core/src/lib.rs:245-251 at 220b133)."""
    rec = state.tasks.get(owner.task_id)
    if rec is None or rec.snapshot.input.scope != owner.scope:
        raise refused_with(spec.NotFound(str(owner.task_id)), "LDG-OWNER-001")
    att = state.attempts.get(owner.attempt_id)
    if att is None or att.task_id != owner.task_id:
        if missing_attempt == "not_found":
            raise refused_with(spec.NotFound(str(owner.attempt_id)), "LDG-OWNER-001")
        raise refused_with(spec.OwnershipLost("the owner does not hold this attempt"), clause)
    if att.owner != owner:
        raise refused_with(spec.OwnershipLost("the owner does not hold this attempt"), clause)
    return rec, att


def _cursor_holds(state: State, owner: Any) -> None:
    """renew under ``renew_lookup=cursor_first``: the owner's consumer cursor must have
    assigned exactly the owner's task and attempt, else ownership_lost (LDG-OWNER-001 when
    the owner's task is missing in its scope, a task never minted included; else
    LDG-RENEW-002). seed: crates/ledgence-adapter-postgres/src/delivery.rs:204-214 at
    50df11a (before the task is loaded at 215)."""
    cursor = state.cursors.get((owner.worker_session_id, owner.consumer_id))
    named = cursor.attempt if cursor is not None else None
    if named is not None and named == owner.attempt_id and (
            state.attempts[named].task_id == owner.task_id):
        return
    rec = state.tasks.get(owner.task_id)
    missing = rec is None or rec.snapshot.input.scope != owner.scope
    raise refused_with(spec.OwnershipLost("the consumer's cursor does not name this attempt"),
                  "LDG-OWNER-001" if missing else "LDG-RENEW-002")


def _renewing_owner(command: Any) -> None:
    """renew's owner checks: the owner's shape and scope, then its session id as text (the
    seed checks it before it locks the session: crates/ledgence-adapter-postgres/src/
    delivery.rs:199-200 at 50df11a); its other ids are only compared (ownership_lost)."""
    owner = spec.validate_owner(getattr(command, "owner", None))
    spec.validate_text(owner.worker_session_id, "worker_session_id")


def _renew(state: State, op: spec.Renew, ctx: Ctx) -> Step:
    now, command = ctx.now, op.command
    check_under("LDG-OWNER-001", lambda: _renewing_owner(command))
    check_under("LDG-RENEW-008", lambda: spec.validate_renew(command))
    owner = command.owner
    session = live_session(state, owner.worker_session_id, "LDG-RENEW-003", now)
    cursor_first = ctx.options.get(spec.RENEW_LOOKUP, spec.CURSOR_FIRST) == spec.CURSOR_FIRST
    if cursor_first:
        _cursor_holds(state, owner)
    rec, att = _owned(state, owner, "LDG-RENEW-002", missing_attempt="ownership_lost")
    if not is_live(rec, att, now):
        raise refused_with(spec.OwnershipLost("the attempt is no longer live"),
                      live_failure(rec, att, now, "LDG-RENEW-002"))
    last = att.snapshot.last_renewal
    last_seq = last.sequence if last is not None else 0
    seq = command.sequence
    if seq == 0:
        raise refused_with(spec.OutOfOrder("renewal sequences start at 1"), "LDG-RENEW-004")
    if seq < last_seq:
        raise refused_with(spec.ObsoleteOperation(f"renewal {seq}"), "LDG-RENEW-004")
    if seq == last_seq and last is not None:
        if last.intent != command.intent:
            raise refused_with(spec.Conflict("this renewal sequence had another intent"),
                          "LDG-RENEW-006")
        return ok_step(state, authority(rec, att, now), "LDG-RENEW-005")
    if seq > last_seq + 1:
        raise refused_with(spec.OutOfOrder(f"renewal {seq}"), "LDG-RENEW-004")
    d = Draft(state)
    name = owner.attempt_id
    expiry = lease_expiry(now, att.snapshot.authority_deadline, session)
    d.evolve_attempt(name, lease=attrs.evolve(att.snapshot.lease, expires_at=expiry),
                     last_renewal=command)
    clause = "LDG-RENEW-001" if expiry == now + spec.LEASE_MS else "LDG-ACQ-003"
    if (command.intent == spec.DISPATCH and not att.snapshot.execution_may_have_started
            and now < att.snapshot.deadline and rec.snapshot.cancel_requested_at is None
            and att.snapshot.settlement is None):
        d.evolve_attempt(name, execution_may_have_started=True)
        d.record(owner.task_id, "dispatch_authorized", now, name)
        clause = "LDG-RENEW-007"
    new = d.freeze()
    return ok_step(new, authority(new.tasks[owner.task_id], new.attempts[name], now), clause)


def started_after(snap: spec.AttemptSnapshot, report: Any) -> bool:
    """execution_may_have_started once ``report`` is accepted: a completed report proves the
    work ran; a failure report carries its own flag; an attempt already marked stays marked.
    seed: crates/ledgence-orchestration-core/src/lifecycle.rs:116-119 at 3abb9ee (observation.rs
    task_status treats a completed report without the flag as corrupt)."""
    return snap.execution_may_have_started or isinstance(report, spec.ExecutionReport) or bool(
        getattr(report, "execution_may_have_started", False))


_CANONICAL = ByIdentity(1024)


def _canonical(command: spec.SettleCommand) -> str:
    """``command``'s :func:`~fencepost.spec.ledgence_tasks.canonical_settlement`, worked out
    once per command: the settlement an attempt keeps is compared with every re-send, and
    the model's values are never changed in place. (A command whose canonical form cannot be
    made raises as ``canonical_settlement`` does, and is not kept.)"""
    found = _CANONICAL.get(command)
    if found is MISSING:
        found = _CANONICAL.put(command, spec.canonical_settlement(command))
    text: str = found
    return text


def _settle(state: State, op: spec.Settle, ctx: Ctx) -> Step:
    now, command = ctx.now, op.command
    check_under("LDG-OWNER-001", lambda: spec.validate_owner(getattr(command, "owner", None)))
    check_under("LDG-SETTLE-006", lambda: spec.validate_settle(command))
    owner = command.owner
    rec, att = _owned(state, owner, "LDG-SETTLE-002")
    # Once the owner matched, the seed's order: the operation id, the output's nesting, the
    # report's identity, the size.
    # seed: crates/ledgence-orchestration-core/src/lifecycle.rs:80-81, 283-306 at 3abb9ee.
    check_under("LDG-SETTLE-006", lambda: spec.check_operation_id(command))
    check_under("LDG-SETTLE-006", lambda: spec.check_report_output(command))
    check_under("LDG-SETTLE-005", lambda: spec.check_report_identity(command,
                                                                 rec.snapshot.descriptor))
    text = ""

    def sized() -> None:  # spec.check_settlement_size, its canonical form kept
        nonlocal text
        text = _canonical(command)
        spec.check_settlement_size(command, text)

    check_under("LDG-SETTLE-006", sized)
    stored = att.snapshot.settlement
    if stored is not None:
        if _canonical(stored) != text:  # spec.same_settlement
            raise refused_with(spec.Conflict("this attempt was settled differently"),
                          "LDG-SETTLE-004")
        assert att.receipt is not None
        return ok_step(state, spec.SettleReply(att.receipt, True, rec.snapshot.state),
                   "LDG-SETTLE-003")
    if not is_live(rec, att, now):
        raise refused_with(spec.OwnershipLost("the attempt is no longer live"),
                      live_failure(rec, att, now, "LDG-SETTLE-002"))
    d = Draft(state)
    name = owner.attempt_id
    receipt = spec.SettleReceipt(command.operation_id, owner.task_id, name, now)
    d.evolve_attempt(name, settlement=command, quiescence=command.quiescence,
                     execution_may_have_started=started_after(att.snapshot, command.report))
    d.attempts[name] = attrs.evolve(d.attempts[name], receipt=receipt)
    d.record(owner.task_id, "report_accepted", now, name)
    clause = "LDG-SETTLE-007"
    if command.quiescence == spec.CONFIRMED:
        clause = finish(d, owner.task_id, name, now)
    new = d.freeze()
    return ok_step(new, spec.SettleReply(receipt, False, new.tasks[owner.task_id].snapshot.state),
               clause)


def _confirm(state: State, op: spec.ConfirmQuiescence, ctx: Ctx) -> Step:
    now, owner = ctx.now, op.owner
    check_under("LDG-OWNER-001", lambda: spec.validate_owner(owner))
    rec, att = _owned(state, owner, "LDG-QUIESCE-004")
    if att.snapshot.quiescence == spec.CONFIRMED:
        return ok_step(state, rec.snapshot.state, "LDG-QUIESCE-002")
    if not is_live(rec, att, now):
        raise refused_with(spec.OwnershipLost("the attempt is no longer live"),
                      live_failure(rec, att, now, "LDG-QUIESCE-004"))
    if att.snapshot.settlement is None:
        raise refused_with(spec.InvalidInput("no accepted report to confirm"), "LDG-QUIESCE-003")
    d = Draft(state)
    d.evolve_attempt(owner.attempt_id, quiescence=spec.CONFIRMED)
    d.record(owner.task_id, "cleanup_confirmed", now, owner.attempt_id)
    effect = finish(d, owner.task_id, owner.attempt_id, now)
    new = d.freeze()
    return ok_step(new, new.tasks[owner.task_id].snapshot.state, "LDG-QUIESCE-001", effect)


# --- cancel and recovery -----------------------------------------------------------------------


def _cancel(state: State, op: spec.Cancel, ctx: Ctx) -> Step:
    now = ctx.now
    rec = find_task(state, op.scope, op.task_id)
    snap = rec.snapshot
    if snap.state in spec.TERMINAL_TASK_STATES or snap.cancel_requested_at is not None:
        return ok_step(state, snap.state, "LDG-CANCEL-002")
    d = Draft(state)
    task_id = snap.task_id
    if snap.state == "queued":
        d.evolve_task(task_id, state="cancelled", cancel_requested_at=now, terminal_at=now)
        d.tasks[task_id] = attrs.evolve(d.tasks[task_id], outcome={"kind": "cancelled"})
        d.record(task_id, "cancel_requested", now)
        d.record(task_id, "cancelled", now)
        return ok_step(d.freeze(), "cancelled", "LDG-CANCEL-001")
    name = snap.current_attempt_id
    assert name is not None
    att = state.attempts[name]
    d.evolve_task(task_id, cancel_requested_at=now)
    d.record(task_id, "cancel_requested", now, name)
    if is_live(rec, att, now):
        cut = min(att.snapshot.authority_deadline, now + spec.CLEANUP_GRACE_MS)
        lease = attrs.evolve(att.snapshot.lease,
                             expires_at=min(att.snapshot.lease.expires_at, cut))
        d.evolve_attempt(name, authority_deadline=cut, lease=lease)
        return ok_step(d.freeze(), "active", "LDG-CANCEL-003")
    d.record(task_id, "lease_expired", now, name)
    finish(d, task_id, name, now)
    return ok_step(d.freeze(), "cancelled", live_failure(rec, att, now, "LDG-CANCEL-004"))


def expired_candidates(state: State, now: int) -> list[TaskRec]:
    """Active tasks whose current attempt is past its lease expiry, earliest first."""
    due = []
    for rec in state.tasks.values():
        current = rec.snapshot.current_attempt_id
        if rec.snapshot.state == "active" and current is not None:
            att = state.attempts[current]
            if now >= att.snapshot.lease.expires_at:
                due.append(rec)
    return sorted(due, key=lambda r: _expiry_of(state, r))


def _expiry_of(state: State, rec: TaskRec) -> int:
    current = rec.snapshot.current_attempt_id
    assert current is not None
    return state.attempts[current].snapshot.lease.expires_at


def _expire_batch(state: State, op: spec.ExpireBatch, ctx: Ctx) -> Step | OneOf:
    now, limit = ctx.now, op.limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not (
            1 <= limit <= spec.MAX_RECOVERY_BATCH):
        raise refused_with(spec.InvalidInput("limit must be in 1..=100"), "LDG-RECOVER-002")
    due = expired_candidates(state, now)
    if not due:
        return ok_step(state, spec.RecoveryProgress(0, 0), "LDG-RECOVER-004")
    if len(due) <= limit:
        return _expire(state, due, now, "LDG-RECOVER-001")
    # The shortlist is the `limit` earliest; tasks tied with the last one may be either.
    cut = _expiry_of(state, due[limit - 1])
    sure = [r for r in due if _expiry_of(state, r) < cut]
    tied = [r for r in due if _expiry_of(state, r) == cut]
    picks = itertools.combinations(tied, limit - len(sure))
    steps = tuple(_expire(state, sure + list(p), now, "LDG-RECOVER-003") for p in picks)
    if len(steps) == 1:
        return steps[0]
    return OneOf(steps, "LDG-RECOVER-003", "the earliest expiries, any of those tied")


def _expire(state: State, shortlist: list[TaskRec], now: int, clause: str) -> Step:
    d = Draft(state)
    effects = set()
    boundary = False
    for rec in shortlist:
        task_id = rec.snapshot.task_id
        name = rec.snapshot.current_attempt_id
        assert name is not None
        boundary |= now == state.attempts[name].snapshot.lease.expires_at
        d.record(task_id, "lease_expired", now, name)
        effects.add(finish(d, task_id, name, now))
    if boundary and clause == "LDG-RECOVER-001":
        clause = "LDG-LIVE-001"
    # A bounded scan's read-backs show which tasks it took: the earliest-first rule's.
    effect = ("LDG-RECOVER-003" if clause == "LDG-RECOVER-003" else effects.pop()
              if len(effects) == 1 else "LDG-RECOVER-001")
    progress = spec.RecoveryProgress(len(shortlist), len(shortlist))
    return ok_step(d.freeze(), progress, clause, effect)


STEPS: dict[type, Any] = {
    spec.Renew: _renew,
    spec.Settle: _settle,
    spec.ConfirmQuiescence: _confirm,
    spec.Cancel: _cancel,
    spec.ExpireBatch: _expire_batch,
}
"""The step of each operation of this module, by op type."""
