"""The situations of the snodo-tasks clauses that one agreed step puts to the test.
Over 500 lines: it mirrors the catalogue, one small function per operation naming the
situations its clauses declare, so that a situation is found beside its siblings.

:func:`situations` looks at the store before the step and at the step's answer and names the
cases of ``spec.snodo_tasks.CLAUSES`` it reached: a lease expiry, retry_at or TTL met exactly or
one ms before; the status a rule starts from; whose authority was shown (the wrong action,
another task's, another scope's, another store's, a forged one, a fenced lease); a bound reached
and exceeded; candidates whose id order differs from the order they were created or expire in;
where the seed's stores disagree, the reading of the option in force (``"a still clock
(millisecond)"``); and which argument was at its edge (``"claim with a lease_ms of 0"``, from
:mod:`.arguments`). The catalogue declares the same names (``Clause.situations``);
a run that never reaches one of a clause's situations passes it only weakly.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.clauses import limit
from fencepost.spec.ops import Op

from ..base import Ctx, Step
from .arguments import event_refusal, guard, task_problem
from .records import MAIN, AccessM, Agg, LeaseM, State, expired, live, recoverable
from .steps import lease_state

Found = Iterator[tuple[str, str]]
FENCED_OPS = {"renew": "renew", "release": "release", "transition": "a worker event"}


def _reading(ctx: Ctx, option: str) -> str:
    return spec.option(ctx.options, option)


def expiry(agg: Agg) -> int | None:
    """When the task's TTL runs out (created_at + ttl_ms), or None without a TTL."""
    task = agg.snapshot.task
    return None if task.ttl_ms is None else task.created_at + task.ttl_ms


def _terminal(agg: Agg) -> bool:
    return agg.snapshot.task.status in spec.TERMINAL


def situations(before: State, op: Op, ctx: Ctx, step: Step) -> Found:
    """The (clause, situation) pairs the agreed ``step`` of ``op`` on ``before`` reached."""
    refused = guard(op)
    if refused is not None:  # the other arguments may be of any type: nothing else is read
        yield refused
        yield from _guarded(before, op, ctx)
        return
    found = _BY_OP.get(type(op))
    if found is not None:
        yield from found(before, op, ctx, step)


def _guarded(before: State, op: Op, ctx: Ctx) -> Found:
    """What a refused guard was sent over: a live lease renewed, a missing task."""
    if isinstance(op, spec.Renew) and lease_state(before, op.lease, ctx.now) is None:
        yield "SNODO-ARG-002", "of a live lease"
    elif isinstance(op, spec.TransitionOp) and isinstance(op.task_id, str) \
            and op.task_id not in before:
        yield "SNODO-ARG-003", "on a missing task"


# --- requests ----------------------------------------------------------------------------------


def _stranger(access: Any) -> str | None:
    """'a forged access' / "another store's access" for a value this store never issued."""
    if not isinstance(access, AccessM):
        return "a forged access"
    return "another store's access" if access.store != MAIN else None


def _no_tenant_against_another(a: AccessM, agg: Agg) -> Found:
    """A named tenant against no tenant; the empty tenant against no tenant too."""
    if (a.scope is None) != (agg.scope is None):
        yield "SNODO-AUTH-003", "between no tenant and a named one"
        if "" in (a.scope, agg.scope):
            yield "SNODO-AUTH-003", "between the empty tenant and no tenant"


def _get(before: State, op: spec.Get, ctx: Ctx, step: Step) -> Found:
    agg, a, clause = before.get(op.task_id), op.access, step.clause
    if agg is None:
        yield "SNODO-GET-002", ("the empty task id" if op.task_id == ""
                                else "a reaped task" if op.task_id in before.ghosts
                                else "never created")
        return
    if clause == "SNODO-AUTH-004" and _stranger(a):
        yield clause, str(_stranger(a))
    elif clause == "SNODO-AUTH-003":
        yield clause, "get from another scope"
        yield from _no_tenant_against_another(a, agg)
    elif clause == "SNODO-AUTH-001" and a.kind == "create":
        yield clause, "a create-access reads"
    elif clause == "SNODO-AUTH-002":
        yield clause, "get with another task's access"
    elif clause == "SNODO-TTL-001":
        yield clause, "get at the TTL exactly" if ctx.now == expiry(agg) else "after the TTL"
    elif clause == "SNODO-GET-001":
        if a.kind in ("update", "cancel"):
            yield clause, "through an update or cancel access"
        if expiry(agg) == ctx.now + 1:
            yield clause, "1 ms before the TTL"


def _create(before: State, op: spec.Create, ctx: Ctx, step: Step) -> Found:
    a, clause, task_id = op.access, step.clause, op.task.id
    invalid = task_problem(op.task, op.work) if isinstance(a, AccessM) else None
    if clause == "SNODO-ARG-005" and invalid is not None:
        yield clause, invalid
        if task_id in before:
            yield clause, "an invalid task over an existing id (after_access)"
        return
    if clause == "SNODO-CREATE-002" and invalid is not None:
        yield clause, "an invalid task over an existing id (last)"
    if clause == "SNODO-AUTH-004" and _stranger(a):
        yield clause, str(_stranger(a))
    elif clause == "SNODO-AUTH-002":
        yield clause, "create with another task's access"
    elif clause == "SNODO-CREATE-003":
        yield clause, "with a get-access" if a.kind == "get" else "with an update or cancel access"
    if not isinstance(a, AccessM) or clause in ("SNODO-AUTH-002", "SNODO-AUTH-004",
                                                "SNODO-CREATE-003"):
        return
    existing = before.get(task_id)
    if existing is not None:
        yield from _over_existing(before, existing, a, ctx, step)
    else:
        yield from _capacity(before, a.scope, ctx, step)
        if step.outcome.code == "ok" and task_id in before.ghosts:
            yield "SNODO-TTL-003", "a reaped id created again"


def _over_existing(before: State, agg: Agg, a: AccessM, ctx: Ctx, step: Step) -> Found:
    full = len(before) >= limit(ctx.options.get("max_tasks", "infinity"))
    if step.clause == "SNODO-CREATE-002":
        yield step.clause, ("over an expired task" if expired(agg.snapshot, ctx.now)
                            else "over a terminal task" if _terminal(agg)
                            else "over an active task")
        if full:
            yield step.clause, "an existing id in a full store (exists_first)"
    elif step.clause == "SNODO-CAP-001" and full:
        yield step.clause, "an existing id in a full store (capacity_first)"


def _capacity(before: State, scope: str | None, ctx: Ctx, step: Step) -> Found:
    """max_tasks and the scope's limit: the create that fills one, the one refused at it, and
    what counts towards it (terminal and expired tasks for the store, not for the scope)."""
    most = limit(ctx.options.get("max_tasks", "infinity"))
    per_scope = limit(ctx.options.get("max_active_tasks_per_scope", "infinity"))
    stored = len(before)
    if step.clause == "SNODO-CAP-001":
        yield step.clause, "a create into a full store"
        if sum(1 for g in before.values() if not _terminal(g)) < most:
            yield step.clause, "a terminal task counts"
        if sum(1 for g in before.values() if not expired(g.snapshot, ctx.now)) < most:
            yield step.clause, "an expired task counts"
        return
    active: dict[str | None, int] = {}
    ended = 0
    for g in before.values():
        if not _terminal(g):
            active[g.scope] = active.get(g.scope, 0) + 1
        elif g.scope == scope:
            ended += 1
    mine = active.get(scope, 0)
    if step.clause == "SNODO-CAP-002":
        yield step.clause, "a create into a full scope"
        return
    if step.outcome.code != "ok":
        return
    if stored == most - 1:
        yield "SNODO-CAP-001", "the create that fills the store"
    if mine == per_scope - 1:
        yield "SNODO-CAP-002", "the create that fills the scope"
    if any(n >= per_scope for s, n in active.items() if s != scope):
        yield "SNODO-CAP-002", "another scope at its limit"
    if mine + ended >= per_scope:
        yield "SNODO-CAP-002", "a terminal task no longer counts"


# --- claims and leases -------------------------------------------------------------------------


def _claim(before: State, op: spec.Claim, ctx: Ctx, step: Step) -> Found:
    agg, clause, now = before.get(op.task_id), step.clause, ctx.now
    if agg is None:
        return
    snap, claim = agg.snapshot, agg.claim
    if clause == "SNODO-CLAIM-002":
        yield clause, f"a {snap.task.status} task"
    elif clause == "SNODO-CLAIM-006":
        assert snap.retry_at is not None
        if snap.retry_at - now == 1:
            yield clause, "1 ms before retry_at"
        if snap.retry_at != math.floor(snap.retry_at):
            yield clause, "a retry_at with a us part (microsecond)"
        if live(agg, now):
            yield clause, "over a live claim"
    elif clause == "SNODO-CLAIM-004" and claim is not None:
        if claim.expires_at - now == 1:
            yield clause, "1 ms before expiry"
        if op.owner_id == claim.owner_id:
            yield clause, "by the same owner"
        yield from _old_ms(agg, ctx)
    elif clause == "SNODO-CLAIM-005" and claim is not None:
        yield clause, "at the expiry exactly" if now == claim.expires_at else "after the expiry"
    elif clause == "SNODO-CLAIM-003" and agg.generation:
        yield clause, "a released task"
    if step.outcome.code == "ok" and snap.retry_at is not None:
        if clause == "SNODO-CLAIM-003":
            yield clause, "a task whose retry fell due"
        if now == snap.retry_at:
            yield "SNODO-CLAIM-006", "at retry_at exactly"


def _claim_next(before: State, op: spec.ClaimNext, ctx: Ctx, step: Step) -> Found:
    if not before:
        return
    clause, now = "SNODO-CLAIM-007", ctx.now
    due = [t for t, g in before.items() if recoverable(g, now)]
    if not due:
        yield clause, "nothing recoverable"
    if len(due) > 1 and sorted(due) != sorted(due, key=lambda t: before[t].incarnation):
        yield clause, "several recoverable, id order not creation order"
    going = [g for g in before.values() if not _terminal(g) and g.snapshot.work is not None]
    if any(g.snapshot.retry_at is not None and now < g.snapshot.retry_at for g in going):
        yield clause, "passes a deferred task over"
    if any(live(g, now) for g in going):
        yield clause, "passes a claimed task over"
    taken = getattr(step.outcome, "value", None)
    if isinstance(taken, spec.Claimed) and before[taken.snapshot.task.id].claim is not None:
        yield clause, "takes an expired claim"


def _lease(before: State, lease: Any, op_name: str, ctx: Ctx, step: Step) -> Found:
    """Whose lease a renew, release, worker_snapshot or worker event showed, as the deciding
    clause says: forged, another store's, a reaped task's, a fenced or replaced one."""
    clause = step.clause
    if clause == "SNODO-AUTH-004":
        yield clause, "a forged lease" if not isinstance(lease, LeaseM) else "another store's lease"
        return
    if not isinstance(lease, LeaseM) or lease.store != MAIN:
        return
    agg = before.get(lease.task_id)
    if clause == "SNODO-TTL-003":
        yield clause, "an old lease of a reaped task"
    elif clause == "SNODO-LEASE-001" and agg is not None and agg.claim is not None:
        if op_name in FENCED_OPS:
            yield clause, f"{FENCED_OPS[op_name]} by a fenced lease"
        if agg.claim.owner_id == lease.owner_id:
            yield clause, "the same owner's older lease"
    elif clause == "SNODO-LEASE-002" and step.outcome.code != "ok":
        yield clause, "the replaced value used"


def _old_ms(agg: Agg, ctx: Ctx) -> Found:
    """A claim renewed 1 us past its old expiry (same_expiry_renewal=successor), met in that
    old expiry's ms: still live."""
    claim = agg.claim
    if claim is not None and claim.expires_at != math.floor(claim.expires_at) \
            and ctx.now == math.floor(claim.expires_at):
        yield "SNODO-LEASE-002", "live in the old expiry's ms (successor)"


def _leased(before: State, lease: object) -> Any:
    """The task a lease of this store names, before the step (None: no such lease or task)."""
    if not isinstance(lease, LeaseM) or lease.store != MAIN:
        return None
    return before.get(lease.task_id)


def _renew(before: State, op: spec.Renew, ctx: Ctx, step: Step) -> Found:
    yield from _lease(before, op.lease, "renew", ctx, step)
    agg = _leased(before, op.lease)
    if agg is None or agg.claim is None:
        return
    old = agg.claim.expires_at
    if step.clause == "SNODO-LEASE-003":
        yield step.clause, "renew at the expiry exactly" if ctx.now == old else "after the expiry"
    elif step.outcome.code == "ok":
        new = ctx.now + op.lease_ms
        yield step.clause, ("shortens the lease" if new < old else "extends the lease"
                            if new > old else "a renewal to the same expiry "
                            f"({_reading(ctx, 'same_expiry_renewal')})")
        yield from _old_ms(agg, ctx)


def _release(before: State, op: spec.Release, ctx: Ctx, step: Step) -> Found:
    yield from _lease(before, op.lease, "release", ctx, step)
    lease, agg = op.lease, _leased(before, op.lease)
    if agg is None or lease.incarnation != agg.incarnation:
        return
    if step.outcome.code == "ok" and agg.claim is not None and ctx.now >= agg.claim.expires_at:
        yield "SNODO-LEASE-004", "after the expiry"
    elif step.clause == "SNODO-LEASE-004" and agg.claim is None \
            and agg.generation == lease.generation:
        yield step.clause, "a second release"


def _worker_snapshot(before: State, op: spec.WorkerSnapshot, ctx: Ctx, step: Step) -> Found:
    agg = before.get(op.task_id)
    if agg is None:
        yield "SNODO-WS-001", "the empty task id" if op.task_id == "" else "a missing task"
        return
    yield from _lease(before, op.lease, "worker_snapshot", ctx, step)
    if step.clause == "SNODO-LEASE-005":
        yield step.clause, "worker_snapshot of another task"
    elif step.clause == "SNODO-LEASE-003" and agg.claim is not None \
            and ctx.now > agg.claim.expires_at:
        yield step.clause, "after the expiry"
    elif step.outcome.code == "ok" and agg.claim is not None:
        if agg.claim.expires_at - ctx.now == 1:
            yield "SNODO-WS-001", "1 ms before expiry"
        yield from _old_ms(agg, ctx)


# --- transitions -------------------------------------------------------------------------------


def _transition(before: State, op: spec.TransitionOp, ctx: Ctx, step: Step) -> Found:
    agg = before.get(op.task_id)
    if isinstance(op.authority, spec.RequestAuthority):
        yield from _request(before, op, op.authority.access, agg, ctx, step)
    else:
        lease = getattr(op.authority, "lease", op.authority)
        yield from _worker(before, op, lease, agg, ctx, step)
    if agg is not None:
        yield from _event(agg, op, ctx, step)


def _wrong_action(a: AccessM, op: spec.TransitionOp) -> bool:
    return (a.kind not in ("update", "cancel") or a.task_id != op.task_id
            or spec.REQUEST_KINDS.get(op.event.kind) != a.kind)


def _request(before: State, op: spec.TransitionOp, a: Any, agg: Agg | None, ctx: Ctx,
             step: Step) -> Found:
    clause = step.clause
    if not isinstance(a, AccessM):
        yield "SNODO-AUTH-004", (
            "a forged request authority on a missing task" if agg is None else
            f"a forged request authority ({_reading(ctx, 'forged_request_authority')})")
        return
    if a.store != MAIN:
        yield "SNODO-AUTH-004", "another store's access"
        return
    if agg is not None and a.scope != agg.scope:
        yield "SNODO-AUTH-003", "a request from another scope"
        yield from _no_tenant_against_another(a, agg)
        if _wrong_action(a, op):
            order = _reading(ctx, "transition_check_order")
            yield "SNODO-AUTH-003", f"a wrong action from another scope ({order})"
    if clause == "SNODO-TTL-001" and agg is not None:
        yield clause, ("a request at the TTL exactly" if ctx.now == expiry(agg)
                       else "after the TTL")
    elif clause == "SNODO-AUTH-001":
        yield clause, ("a get or create access sends an event" if a.kind in ("get", "create")
                       else "an empty event kind" if op.event.kind == ""
                       else "an update-access cancels" if a.kind == "update"
                       else "a cancel-access answers input")
    elif clause == "SNODO-AUTH-002":
        yield clause, "a request with another task's access"


def _worker(before: State, op: spec.TransitionOp, lease: Any, agg: Agg | None, ctx: Ctx,
            step: Step) -> Found:
    clause = step.clause
    if isinstance(lease, LeaseM) and lease.store == MAIN and lease.task_id != op.task_id:
        yield "SNODO-LEASE-005", ("a worker event on another task" if agg is not None
                                  else "a worker event on a missing task")
        return
    if agg is None:
        return
    yield from _lease(before, lease, "transition", ctx, step)
    if not isinstance(lease, LeaseM) or lease.store != MAIN:
        return
    claim = agg.claim
    fenced = (claim is not None and lease.incarnation == agg.incarnation
              and lease.generation < claim.generation)
    if fenced and op.event.kind in spec.REQUEST_KINDS:
        order = _reading(ctx, "transition_check_order")
        yield "SNODO-LEASE-001", f"a fenced lease sends a request kind ({order})"
    if clause == "SNODO-LEASE-003" and claim is not None:
        yield clause, ("a worker event at the expiry exactly" if ctx.now == claim.expires_at
                       else "after the expiry")
    elif clause == "SNODO-LEASE-006":
        yield clause, ("a lease cancels" if op.event.kind == "cancelled"
                       else "a lease sends an empty kind" if op.event.kind == ""
                       else "a lease answers input")
    elif step.outcome.code == "ok":
        yield from _old_ms(agg, ctx)


def _event(agg: Agg, op: spec.TransitionOp, ctx: Ctx, step: Step) -> Found:
    """What the event met once its authority passed: a replay, a reused id, a stale revision,
    the clock, and the reducer's case."""
    clause, snap, event = step.clause, agg.snapshot, op.event
    if clause in ("SNODO-ARG-006", "SNODO-ARG-007"):
        yield from _invalid_event(agg, op)
        return
    seen = agg.seen.get(event.id)
    if clause == "SNODO-TX-003" and seen is not None:
        same = op.expected_revision == seen[1].event_revision - 1
        yield clause, ("the same expected_revision" if same else "a different expected_revision")
        if isinstance(op.authority, spec.RequestAuthority):
            yield clause, "a request event replayed"
    elif clause == "SNODO-TX-004" and seen is not None:
        yield clause, ("the same kind, other data" if seen[0].kind == event.kind
                       else "another kind")
        if seen[0] == event:  # equal to Python, not to the seed
            yield clause, "data equal only loosely (1 and 1.0)"
    elif clause == "SNODO-TX-001":
        yield clause, ("a revision behind" if op.expected_revision < snap.revision
                       else "a revision ahead")
    elif clause == "SNODO-TTL-003":
        yield clause, "an event id seen before the reap"
    if step.outcome.code != "ok":
        if clause == "SNODO-RED-002":
            yield clause, ("a key still open" if event.data["key"] in snap.task.input_requests
                           else "a key answered before")
        return
    if clause == "SNODO-TX-003":
        return
    if snap.task.last_updated_at < ctx.now:
        yield "SNODO-TX-005", "the clock moved on"
    else:
        yield "SNODO-TX-005", f"a still clock ({_reading(ctx, 'committed_at_step')})"
    yield from _reduced(agg, op, ctx, step)


def _invalid_event(agg: Agg, op: spec.TransitionOp) -> Found:
    """The event the seed's validation refused, and what it came before: a stale revision, a
    reused id, a terminal task."""
    invalid = event_refusal(op.event)
    if invalid is None:
        return
    _, clause, situation = invalid
    yield clause, situation
    if op.expected_revision != agg.snapshot.revision:
        yield clause, "over a stale expected_revision"
    if isinstance(op.event.id, str) and op.event.id in agg.seen:
        yield clause, "under an id seen before"
    if _terminal(agg):
        yield clause, "on a terminal task"


def _reduced(agg: Agg, op: spec.TransitionOp, ctx: Ctx, step: Step) -> Found:
    clause, snap, data = step.clause, agg.snapshot, op.event.data
    task = snap.task
    if clause == "SNODO-RED-001":
        yield clause, f"a {task.status} task"
    elif clause == "SNODO-RED-003":
        yield clause, _responses(task.input_requests, data["responses"])
    elif clause == "SNODO-RED-004":
        yield clause, "the first delay" if snap.retry_count == 0 else "a later delay"
        delay = snap.work.retry_policy[snap.retry_count] if snap.work is not None else None
        if delay == 0:
            yield clause, "a delay of 0"
        elif delay == spec.MAX_RETRY_DELAY_MS:
            yield clause, "the longest delay"
    elif clause == "SNODO-RED-005":
        policy = snap.work.retry_policy if snap.work is not None else ()
        yield clause, "the policy used up" if policy else "no policy at all"
    elif clause == "SNODO-RED-006":
        if task.input_requests:
            yield clause, "with an open input request"
        if snap.retry_at is not None:
            yield clause, "with a retry pending"


def _responses(open_keys: Mapping[str, Any], responses: Mapping[str, Any]) -> str:
    answered = set(responses) & set(open_keys)
    if not answered:
        return "no outstanding key matched"
    return "the last open key answered" if answered == set(open_keys) else "some keys left open"


def _reap(before: State, op: spec.Reap, ctx: Ctx, step: Step) -> Found:
    clause, now = "SNODO-TTL-002", ctx.now
    gone = [t for t, g in before.items() if expired(g.snapshot, now)]
    for task_id in gone:
        g = before[task_id]
        if expiry(g) == now:
            yield clause, "at the TTL exactly"
        if live(g, now):
            yield clause, "a claimed task reaped"
        if _terminal(g):
            yield clause, "a terminal task reaped"
    if any(expiry(g) == now + 1 for g in before.values()):
        yield clause, "1 ms before the TTL"
    by_expiry = sorted(gone, key=lambda t: (expiry(before[t]), t))
    order = _reading(ctx, "reap_order")
    if by_expiry != sorted(gone):
        yield clause, f"expiry order differs from id order ({order})"
    if order == "expiry" and len({expiry(before[t]) for t in gone}) < len(gone):
        yield clause, "an expiry tie broken by id (expiry)"


_BY_OP: dict[type, Any] = {
    spec.Get: _get,
    spec.Create: _create,
    spec.Claim: _claim,
    spec.ClaimNext: _claim_next,
    spec.Renew: _renew,
    spec.Release: _release,
    spec.WorkerSnapshot: _worker_snapshot,
    spec.TransitionOp: _transition,
    spec.Reap: _reap,
}
