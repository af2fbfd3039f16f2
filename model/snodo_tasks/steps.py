"""Reference model of the ``snodo-tasks`` contract.

The rules, one per operation, over the state of :mod:`.records` (``task_id ->
Agg``; accesses and leases by their meaning, :class:`AccessM` and :class:`LeaseM`, which the
harness binds to the store's real opaque values). ``claim_next`` answers :class:`OneOf` over
every recoverable task. Where the seed's stores disagree the model follows ``ctx.options``
(``spec.CHOICES``; by default the upstream Memory store's order of checks). Arguments the seed's
Store functions have no clause for are refused first (:mod:`.arguments`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.clauses import limit
from fencepost.spec.opaque import Opaque, Ref, agree
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Err, Ok

from ..base import ContractModel, Ctx, OneOf, Step, reads_and_refusals
from .arguments import event_refusal, guard, task_problem
from .records import (
    EMPTY,
    MAIN,
    AccessM,
    Agg,
    ClaimM,
    LeaseM,
    State,
    expired,
    foreign_clause,
    live,
    recoverable,
)
from .restart import reopened


def _put(state: State, task_id: str, agg: Agg) -> State:
    return state.with_({task_id: agg})


def _err(state: State, code: str, clause: str, payload: Any = None) -> Step:
    return Step(Err(code, "", payload), state, clause, clause)


def _active(agg: Agg) -> bool:
    return agg.snapshot.task.status not in spec.TERMINAL


# --- requests ----------------------------------------------------------------------------------


def _authorize(state: State, op: spec.Authorize, ctx: Ctx) -> Step:
    meaning = AccessM(MAIN, op.context.tenant, op.action.kind, op.action.task_id)
    return Step(Ok(Opaque(meaning)), state, "SNODO-AUTH-001", "SNODO-AUTH-001")


def _create(state: State, op: spec.Create, ctx: Ctx) -> Step:
    a = op.access
    task_id = op.task.id
    if not (isinstance(a, AccessM) and a.store == MAIN and a.kind == "create"
            and a.task_id == task_id):
        clause = "SNODO-AUTH-004" if not isinstance(a, AccessM) else (
            foreign_clause(a.store) if a.store != MAIN else
            "SNODO-AUTH-002" if a.kind == "create" else "SNODO-CREATE-003")
        return _err(state, "unauthorized_action", clause)
    invalid = task_problem(op.task, op.work)
    validate_last = spec.option(ctx.options, "create_validation_order") == "last"
    if invalid is not None and not validate_last:
        return _err(state, "invalid_task", "SNODO-ARG-005")
    capacity_first = spec.option(ctx.options, "create_check_order") == "capacity_first"
    full = None if task_id in state and not capacity_first else _full(state, a.scope, ctx)
    if full is not None:
        return full
    if task_id in state:
        return _err(state, "already_exists", "SNODO-CREATE-002")
    if invalid is not None:
        return _err(state, "invalid_task", "SNODO-ARG-005")
    snap = spec.Snapshot(op.task, op.work, 0, 0, None, None, {}, {})
    agg = Agg(a.scope, snap, incarnation=state.creates + 1)
    return Step(Ok(snap), state.with_({task_id: agg}, creates=state.creates + 1),
                "SNODO-CREATE-001", "SNODO-CREATE-001")


def _full(state: State, scope: str | None, ctx: Ctx) -> Step | None:
    """The capacity refusal a create into ``scope`` meets now, if any."""
    if len(state) >= limit(ctx.options.get("max_tasks", "infinity")):
        return _err(state, "capacity_exceeded", "SNODO-CAP-001", "max_tasks")
    active = sum(1 for g in state.values() if g.scope == scope and _active(g))
    if active >= limit(ctx.options.get("max_active_tasks_per_scope", "infinity")):
        return _err(state, "capacity_exceeded", "SNODO-CAP-002", "max_active_tasks_per_scope")
    return None


def _readable(agg: Agg | None, a: Any, task_id: str, now: int) -> str | None:
    """None when ``a`` may read the task; else the clause a store that let it read breaks."""
    if agg is None:
        return "SNODO-GET-002"
    if not isinstance(a, AccessM) or a.store != MAIN:
        return foreign_clause(a.store) if isinstance(a, AccessM) else "SNODO-AUTH-004"
    if a.scope != agg.scope:
        return "SNODO-AUTH-003"
    if a.kind not in ("get", "update", "cancel"):
        return "SNODO-AUTH-001"
    if a.task_id != task_id:
        return "SNODO-AUTH-002"
    if expired(agg.snapshot, now):
        return "SNODO-TTL-001"
    return None


def _get(state: State, op: spec.Get, ctx: Ctx) -> Step:
    agg = state.get(op.task_id)
    refused = _readable(agg, op.access, op.task_id, ctx.now)
    if refused is not None or agg is None:
        return _err(state, "not_found", refused or "SNODO-GET-002")
    return Step(Ok(agg.snapshot), state, "SNODO-GET-001", "SNODO-GET-001")


# --- claims and leases -------------------------------------------------------------------------


def _grant(state: State, task_id: str, agg: Agg, owner: str, lease_ms: int, now: int,
           clause: str) -> Step:
    gen = agg.generation + 1
    claim = ClaimM(owner, gen, now + lease_ms)
    new = attrs.evolve(agg, claim=claim, generation=gen)
    lease = LeaseM(MAIN, task_id, owner, gen, now + lease_ms, agg.incarnation)
    return Step(Ok(spec.Claimed(agg.snapshot, Opaque(lease))), _put(state, task_id, new), clause,
                clause)


def _claim(state: State, op: spec.Claim, ctx: Ctx) -> Step:
    agg = state.get(op.task_id)
    if agg is None:
        return _err(state, "not_found", "SNODO-CLAIM-001")
    s = agg.snapshot
    if s.task.status in spec.TERMINAL or s.work is None:
        return _err(state, "unavailable", "SNODO-CLAIM-002")
    if s.retry_at is not None and ctx.now < s.retry_at:
        return _err(state, "deferred", "SNODO-CLAIM-006", math.ceil(s.retry_at - ctx.now))
    if live(agg, ctx.now):
        return _err(state, "unavailable", "SNODO-CLAIM-004")
    clause = "SNODO-CLAIM-005" if agg.claim is not None else "SNODO-CLAIM-003"
    return _grant(state, op.task_id, agg, op.owner_id, op.lease_ms, ctx.now, clause)


def _claim_next(state: State, op: spec.ClaimNext, ctx: Ctx) -> Step | OneOf:
    options = tuple(
        _grant(state, tid, agg, op.owner_id, op.lease_ms, ctx.now, "SNODO-CLAIM-007")
        for tid, agg in sorted(state.items())
        if recoverable(agg, ctx.now)
    )
    if not options:
        return Step(Ok(None), state, "SNODO-CLAIM-007", "SNODO-CLAIM-007")
    if len(options) == 1:
        return options[0]
    ids = sorted(t for t, agg in state.items() if recoverable(agg, ctx.now))
    return OneOf(options, "SNODO-CLAIM-007", f"a claim of one of the recoverable tasks {ids}")


def lease_state(state: State, lease: Any, now: int, check_expiry: bool = True) -> str | None:
    """None when ``lease`` is the live claim's; else the clause a store accepting it breaks."""
    if not isinstance(lease, LeaseM) or lease.store != MAIN:
        return foreign_clause(lease.store) if isinstance(lease, LeaseM) else "SNODO-AUTH-004"
    agg = state.get(lease.task_id)
    if agg is not None and agg.incarnation != lease.incarnation:
        return "SNODO-TTL-003"
    if agg is None or agg.claim is None:
        return "SNODO-LEASE-004"
    c = agg.claim
    if (c.owner_id, c.generation, c.expires_at) != (lease.owner_id, lease.generation,
                                                     lease.expires_at):
        return "SNODO-LEASE-001" if c.generation != lease.generation else "SNODO-LEASE-002"
    if check_expiry and now >= c.expires_at:
        return "SNODO-LEASE-003"
    return None


def _renew(state: State, op: spec.Renew, ctx: Ctx) -> Step:
    refused = lease_state(state, op.lease, ctx.now)
    if refused is not None:
        return _err(state, "stale_lease", refused)
    lease: LeaseM = op.lease
    agg = state[lease.task_id]
    assert agg.claim is not None
    expires: float = ctx.now + op.lease_ms
    if expires == agg.claim.expires_at and spec.option(
            ctx.options, "same_expiry_renewal") == "successor":
        expires = spec.microsecond_after(agg.claim.expires_at)
    new = attrs.evolve(agg, claim=attrs.evolve(agg.claim, expires_at=expires))
    fresh = attrs.evolve(lease, expires_at=expires)
    return Step(Ok(Opaque(fresh)), _put(state, lease.task_id, new), "SNODO-LEASE-002",
                "SNODO-LEASE-002")


def _release(state: State, op: spec.Release, ctx: Ctx) -> Step:
    refused = lease_state(state, op.lease, ctx.now, check_expiry=False)
    if refused is not None:
        return _err(state, "stale_lease", refused)
    lease: LeaseM = op.lease
    new = attrs.evolve(state[lease.task_id], claim=None)
    return Step(Ok(None), _put(state, lease.task_id, new), "SNODO-LEASE-004", "SNODO-LEASE-004")


def _worker_snapshot(state: State, op: spec.WorkerSnapshot, ctx: Ctx) -> Step:
    agg = state.get(op.task_id)
    if agg is None:
        return _err(state, "not_found", "SNODO-WS-001")
    refused = _worker_lease(state, op.lease, op.task_id, ctx.now)
    if refused is not None:
        return _err(state, "stale_lease", refused)
    return Step(Ok(agg.snapshot), state, "SNODO-WS-001", "SNODO-WS-001")


def _worker_lease(state: State, lease: Any, task_id: str, now: int) -> str | None:
    if isinstance(lease, LeaseM) and lease.store == MAIN and lease.task_id != task_id:
        return "SNODO-LEASE-005"
    return lease_state(state, lease, now)


# --- transitions -------------------------------------------------------------------------------


def _forged_request(state: State, options: Mapping[str, str]) -> Step:
    return _err(state, spec.option(options, "forged_request_authority"), "SNODO-AUTH-004")


def _authority_shape(state: State, op: spec.TransitionOp, options: Mapping[str, str]
                     ) -> Step | None:
    """What transition_check_order=authority_first refuses before reading the task: the
    authority's type, store, action, task id and event kind (a lease's store and task)."""
    auth = op.authority
    if isinstance(auth, spec.RequestAuthority):
        a = auth.access
        if not isinstance(a, AccessM):
            return _forged_request(state, options)
        if a.store != MAIN:
            return _err(state, "not_found", foreign_clause(a.store))
        return _request_action(state, a, op)
    lease = auth.lease
    if not isinstance(lease, LeaseM):
        return _err(state, "unauthorized_action", "SNODO-AUTH-004")
    if lease.store != MAIN:
        return _err(state, "stale_lease", foreign_clause(lease.store))
    if lease.task_id != op.task_id:
        return _err(state, "stale_lease", "SNODO-LEASE-005")
    if op.event.kind not in spec.WORKER_KINDS:
        return _err(state, "unauthorized_action", "SNODO-LEASE-006")
    return None


def _request_action(state: State, a: AccessM, op: spec.TransitionOp) -> Step | None:
    """An access sends only its own request kind (update or cancel) on its own task."""
    if a.kind not in ("update", "cancel"):
        return _err(state, "unauthorized_action", "SNODO-AUTH-001")
    if a.task_id != op.task_id:
        return _err(state, "unauthorized_action", "SNODO-AUTH-002")
    if spec.REQUEST_KINDS.get(op.event.kind) != a.kind:
        return _err(state, "unauthorized_action", "SNODO-AUTH-001")
    return None


def _authority(state: State, op: spec.TransitionOp, agg: Agg, ctx: Ctx) -> Step | None:
    auth, now = op.authority, ctx.now
    if isinstance(auth, spec.RequestAuthority):
        a = auth.access
        if not isinstance(a, AccessM):
            return _forged_request(state, ctx.options)
        if a.store != MAIN:
            return _err(state, "not_found", foreign_clause(a.store))
        if a.scope != agg.scope:
            return _err(state, "not_found", "SNODO-AUTH-003")
        if expired(agg.snapshot, now):
            return _err(state, "not_found", "SNODO-TTL-001")
        return _request_action(state, a, op)
    refused = _worker_lease(state, auth.lease, op.task_id, now)
    if refused is not None:
        return _err(state, "stale_lease", refused)
    if op.event.kind not in spec.WORKER_KINDS:
        return _err(state, "unauthorized_action", "SNODO-LEASE-006")
    return None


def _transition(state: State, op: spec.TransitionOp, ctx: Ctx) -> Step:
    if spec.option(ctx.options, "transition_check_order") == "authority_first":
        early = _authority_shape(state, op, ctx.options)
        if early is not None:
            return early
    agg = state.get(op.task_id)
    if agg is None:
        return _err(state, "not_found", "SNODO-GET-002")
    refused = _authority(state, op, agg, ctx)
    if refused is not None:
        return refused
    invalid = event_refusal(op.event)
    if invalid is not None:
        code, clause, _ = invalid
        kind = op.event.kind if code == "unsupported_event_kind" else None
        return _err(state, code, clause, kind)
    seen = agg.seen.get(op.event.id)
    if seen is not None:
        if not agree(seen[0], op.event):  # the seed pins ^event: 1 and 1.0 are two events
            return _err(state, "event_id_reused", "SNODO-TX-004")
        dup = attrs.evolve(seen[1], outcome=spec.DUPLICATE, snapshot=agg.snapshot)
        return Step(Ok(dup), state, "SNODO-TX-003", "SNODO-TX-003")
    if op.expected_revision != agg.snapshot.revision:
        return _err(state, "conflict", "SNODO-TX-001", agg.snapshot)
    committed = committed_at(agg.snapshot.task.last_updated_at, ctx.now, ctx.options)
    step = reduce(state, op.task_id, agg, op.event, committed)
    if op.event.id in state.ghosts.get(op.task_id, ()):
        # The id was seen by a reaped incarnation only: a store answering duplicate kept it.
        step = attrs.evolve(step, clause="SNODO-TTL-003")
    return step


def committed_at(last_updated_at: float, now: int, options: Mapping[str, str]) -> float:
    """now, or one step (committed_at_step) past last_updated_at when the clock did not move
    past it."""
    if last_updated_at < now:
        return now
    micro = spec.option(options, "committed_at_step") == "microsecond"
    return spec.microsecond_after(last_updated_at) if micro else last_updated_at + 1


def reduce(state: State, task_id: str, agg: Agg, event: spec.Event, committed: float) -> Step:
    """Apply ``event`` at ``committed``; the reducer of the notes, rule by rule."""
    snap, task, data = agg.snapshot, agg.snapshot.task, event.data
    if task.status in spec.TERMINAL:
        return _unchanged(state, snap, {}, committed, "SNODO-RED-001")
    effects: dict[str, Any] = {}
    if event.kind == "input_requested":
        key, request = data["key"], data["request"]
        if key in snap.input_history:
            return _err(state, "duplicate_input_key", "SNODO-RED-002")
        task = attrs.evolve(task, status=spec.INPUT_REQUIRED,
                            input_requests={**task.input_requests, key: request})
        snap = attrs.evolve(snap, input_history={**snap.input_history, key: request})
        clause = "SNODO-RED-002"
    elif event.kind == "input_responses_accepted":
        matched = {k: v for k, v in data["responses"].items() if k in task.input_requests}
        if not matched:
            return _unchanged(state, snap, {"accepted_input_responses": {}}, committed,
                              "SNODO-RED-003")
        left = {k: v for k, v in task.input_requests.items() if k not in matched}
        task = attrs.evolve(task, input_requests=left,
                            status=spec.WORKING if not left else spec.INPUT_REQUIRED)
        snap = attrs.evolve(snap, accepted_input_responses={**snap.accepted_input_responses,
                                                            **matched})
        effects = {"accepted_input_responses": matched}
        clause = "SNODO-RED-003"
    elif event.kind == "retry_requested":
        failure = {"error": data["error"], "statusMessage": data["statusMessage"]}
        delays = snap.work.retry_policy if snap.work is not None else ()
        if snap.retry_count < len(delays):
            delay = delays[snap.retry_count]
            snap = attrs.evolve(snap, retry_count=snap.retry_count + 1,
                                retry_at=committed + delay, last_failure=failure)
            effects = {"retry": {"disposition": "scheduled", "retry_at": committed + delay,
                                 "delay_ms": delay, "retry_count": snap.retry_count}}
            clause = "SNODO-RED-004"
        else:
            task = _terminal(task, spec.FAILED, None, data["error"], data["statusMessage"])
            snap = attrs.evolve(snap, retry_at=None, last_failure=failure)
            effects = {"retry": {"disposition": "exhausted", "retry_at": None,
                                 "delay_ms": None, "retry_count": snap.retry_count}}
            clause = "SNODO-RED-005"
    else:
        task = {
            "completed": lambda: _terminal(task, spec.COMPLETED, data["result"], None, None),
            "failed": lambda: _terminal(task, spec.FAILED, None, data["error"],
                                        data["statusMessage"]),
            "cancelled": lambda: _terminal(task, spec.CANCELLED, None, None,
                                           spec.CANCEL_MESSAGE),
        }[event.kind]()
        snap = attrs.evolve(snap, retry_at=None)
        clause = "SNODO-RED-006"
    task = attrs.evolve(task, last_updated_at=committed)
    snap = attrs.evolve(snap, task=task, revision=snap.revision + 1)
    result = spec.Transition(spec.APPLIED, snap, effects, snap.revision, committed)
    new = attrs.evolve(agg, snapshot=snap, seen={**agg.seen, event.id: (event, result)})
    return Step(Ok(result), _put(state, task_id, new), clause, clause)


def _terminal(task: spec.Task, status: str, result: Any, error: Any,
              message: str | None) -> spec.Task:
    return attrs.evolve(task, status=status, result=result, error=error, status_message=message,
                        input_requests={})


def _unchanged(state: State, snap: spec.Snapshot, effects: dict[str, Any], committed: float,
               clause: str) -> Step:
    result = spec.Transition(spec.UNCHANGED, snap, effects, snap.revision, committed)
    return Step(Ok(result), state, clause, clause)


def _expiry(task: spec.Task) -> int:
    assert task.ttl_ms is not None
    at: int = task.created_at + task.ttl_ms
    return at


def _reap(state: State, op: spec.Reap, ctx: Ctx) -> Step:
    gone = sorted(t for t, g in state.items() if expired(g.snapshot, ctx.now))
    if spec.option(ctx.options, "reap_order") == "expiry":
        gone.sort(key=lambda t: _expiry(state[t].snapshot.task))
    return Step(Ok(gone), state.with_({}, drop=tuple(gone)), "SNODO-TTL-002", "SNODO-TTL-002")


_STEPS: dict[type, Any] = {
    spec.Authorize: _authorize,
    spec.Create: _create,
    spec.Get: _get,
    spec.Claim: _claim,
    spec.ClaimNext: _claim_next,
    spec.Renew: _renew,
    spec.Release: _release,
    spec.TransitionOp: _transition,
    spec.WorkerSnapshot: _worker_snapshot,
    spec.Reap: _reap,
}


def step(state: State, op: Op, ctx: Ctx) -> Step | OneOf:
    """Apply ``op``: the outcome, the next state and the clause that decided it. Arguments
    the seed's Store functions have no clause for answer function_clause before anything."""
    refused = guard(op)
    if refused is not None:
        return _err(state, "function_clause", refused[0])
    return _STEPS[type(op)](state, op, ctx)  # type: ignore[no-any-return]


def observer(task_id: str, bindings: Mapping[str, Any], _state: Any = None) -> Op | None:
    """How the harness reads a task back: ``get`` through the get-access the checks bind as
    ``obs:<task_id>`` when they create the task (reads need an access of the task's scope)."""
    name = f"obs:{task_id}"
    if name not in bindings:
        return None
    return spec.Get(task_id, Ref(name))


def _situations(before: State, op: Op, ctx: Ctx, step: Step) -> Any:
    from .situations import situations  # it builds on this module's State

    return situations(before, op, ctx, step)


MODEL = ContractModel(
    name=spec.CONTRACT,
    initial=EMPTY,
    step=step,
    observe=observer,
    field_clauses={
        "revision": "SNODO-TX-002",
        "event_revision": "SNODO-TX-002",
        "committed_at": "SNODO-TX-005",
        "last_updated_at": "SNODO-TX-005",
    },
    choices=spec.CHOICES,
    durable_clause="SNODO-DURABLE-001",
    reopen=reopened,
    names_minted=False,
    pure=reads_and_refusals("get", "worker_snapshot"),
    settings=spec.SETTINGS,
    refusal_clauses={
        ("claim", "deferred"): "SNODO-CLAIM-006",
        ("claim_next", "deferred"): "SNODO-CLAIM-006",
        ("create", "capacity_exceeded", "max_tasks"): "SNODO-CAP-001",
        ("create", "capacity_exceeded", "max_active_tasks_per_scope"): "SNODO-CAP-002",
        ("create", "already_exists"): "SNODO-TTL-003",
        # a valid call refused as if it broke a guard or the seed's validation
        ("claim", "function_clause"): "SNODO-ARG-001",
        ("claim_next", "function_clause"): "SNODO-ARG-001",
        ("renew", "function_clause"): "SNODO-ARG-002",
        ("transition", "function_clause"): "SNODO-ARG-003",
        ("authorize", "function_clause"): "SNODO-ARG-004",
        ("get", "function_clause"): "SNODO-ARG-004",
        ("worker_snapshot", "function_clause"): "SNODO-ARG-004",
        ("create", "function_clause"): "SNODO-ARG-005",
        ("create", "invalid_task"): "SNODO-ARG-005",
        ("transition", "invalid_event_id"): "SNODO-ARG-006",
        ("transition", "invalid_input_key"): "SNODO-ARG-006",
        ("transition", "invalid_input_responses"): "SNODO-ARG-006",
        ("transition", "invalid_event_data"): "SNODO-ARG-007",
        ("transition", "invalid_input_request"): "SNODO-ARG-007",
        ("transition", "invalid_task_result"): "SNODO-ARG-007",
        ("transition", "invalid_task_error"): "SNODO-ARG-007",
        ("transition", "invalid_status_message"): "SNODO-ARG-007",
        ("transition", "unsupported_event_kind"): "SNODO-ARG-007",
    },
    situations=_situations,
)
