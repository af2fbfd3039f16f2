"""The situations of the adk-ledger clauses that one agreed step puts to the test.

:func:`situations` looks at the record before the step and at the step's answer and names the
cases of ``spec.adk_ledger.CLAUSES`` it reached: the lease boundary met exactly, one ms before
or after; the phase a record was claimed, written or deleted in; whose token was shown; what a
refusal was. The catalogue declares the same names (``Clause.situations``); a run that never
reaches one of a clause's situations passes it only weakly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from fencepost.spec import adk_ledger as spec
from fencepost.spec.adk_ledger import StoredInvocation
from fencepost.spec.ops import Op

from ..base import Ctx, Step
from .steps import (
    ARGUMENT_CLAUSES,
    State,
    admits,
    guard_edges,
    integer,
    valid_finish_phase,
)

AT, AFTER, JUST_BEFORE = "at lease_until exactly", "after lease_until", "at lease_until - 1"
Found = Iterator[tuple[str, str]]


def state_of(rec: StoredInvocation) -> str:
    """ready, running or finished: the three kinds of record a rule can start from."""
    if rec.phase == spec.READY:
        return "ready"
    return "running" if rec.phase == spec.RUNNING else "finished"


def boundary(now: int, lease_until: int) -> str | None:
    """Where ``now`` stands against a lease's end, when it is on a boundary that matters."""
    if now == lease_until:
        return AT
    if now == lease_until - 1:
        return JUST_BEFORE
    return AFTER if now > lease_until else None


def situations(before: State, op: Op, ctx: Ctx, step: Step) -> Found:
    """The (clause, situation) pairs the agreed ``step`` of ``op`` on ``before`` reached."""
    key = op.key()
    rec = before.get(key) if key is not None else None
    edges = () if admits(op, ctx.options) else guard_edges(op, ctx.options)
    yield from _arguments(op, edges, ctx.options, missing=key is not None and rec is None)
    if edges:
        return
    if isinstance(op, spec.Create):
        yield from _create(rec, op, step)
    elif isinstance(op, spec.Get):
        yield from _get(rec, ctx)
    elif isinstance(op, spec.Claim):
        yield from _claim(rec, op, step)
    elif isinstance(op, spec.Renew | spec.Checkpoint | spec.Finish):
        yield from _write(rec, op, step)
    elif isinstance(op, spec.Delete):
        yield from _delete(rec, ctx, step)


def _arguments(op: Op, edges: tuple[str, ...], options: Mapping[str, str],
               missing: bool) -> Found:
    """The ADK-ARG situations: each argument the guard refused, and the edges it takes (an
    empty id or token, a time of 0 or below), whatever the step then answered."""
    clause = ARGUMENT_CLAUSES[op.name]
    name = f"{op.name} of " if isinstance(op, spec.Get | spec.Delete) else ""
    if edges:
        yield from ((clause, f"{name}{e}") for e in edges)
        if missing and not isinstance(op, spec.Create):  # a create's id is missing anyway
            yield clause, "for a missing id"
        if (isinstance(op, spec.Finish) and isinstance(op.phase, str)
                and not valid_finish_phase(op.phase, options)):
            yield clause, "with a phase that is no finish phase too"
        return
    if getattr(op, "invocation_id", None) == "":
        yield clause, f"{name}an empty id"
    token = getattr(op, "owner_token", None)
    if isinstance(token, str | bytes) and len(token) == 0:
        yield clause, "an empty token"
    if isinstance(op, spec.Claim) and isinstance(token, str | bytes) and len(
            token.encode() if isinstance(token, str) else token) == 1:
        yield clause, "a token of one byte"
    now = getattr(op, "now_ms", None)
    if isinstance(now, int) and integer(now) and now <= 0:
        yield clause, "a now_ms of 0 or below"


def _create(rec: StoredInvocation | None, op: spec.Create, step: Step) -> Found:
    if rec is not None:
        yield "ADK-CREATE-003", f"over a {state_of(rec)} record"
        return
    keys = set(op.metadata)
    if keys - set(spec.METADATA_KEYS):
        yield "ADK-CREATE-002", "extra keys dropped"
    if set(spec.METADATA_KEYS) - keys:
        yield "ADK-CREATE-002", "an absent key"


def _get(rec: StoredInvocation | None, ctx: Ctx) -> Found:
    if rec is None:
        return
    yield "ADK-GET-002", f"a {state_of(rec)} record"
    if rec.owner is not None:
        yield "ADK-OWNER-001", "read after a claim"
    elif rec.phase in spec.FINISH_PHASES:
        yield "ADK-OWNER-001", "cleared by finish"
    if rec.token is not None and ctx.now >= rec.lease_until:
        yield "ADK-GET-003", "an expired lease nobody re-claimed"


def _claim(rec: StoredInvocation | None, op: spec.Claim, step: Step) -> Found:
    if rec is None:
        return
    clause = step.clause
    if clause == "ADK-CLAIM-004" and rec.lease_until <= 0:
        yield clause, "a lease that ends at 0 or below"
    if clause == "ADK-FINISH-003":
        yield clause, f"claimed after {rec.phase}"
    elif clause in ("ADK-CLAIM-004", "ADK-CLAIM-005"):
        where = boundary(op.now_ms, rec.lease_until)
        if where is not None:
            yield clause, where
        yield clause, ("by the owner's own token" if op.owner_token == rec.token
                       else "by another claimant")
    if step.outcome.code == "ok":
        yield "ADK-REV-001", "claim"
        if rec.outcome is not None:
            yield "ADK-CLAIM-006", "clears a previous outcome"


def _write(rec: StoredInvocation | None, op: spec.Renew | spec.Checkpoint | spec.Finish,
           step: Step) -> Found:
    clause, code = step.clause, step.outcome.code
    if clause == "ADK-FINISH-001":
        yield clause, ("for a missing id" if rec is None else
                       "with the owner's token" if rec.token == op.owner_token
                       else "with another token")
        if isinstance(op, spec.Finish) and op.phase == "":
            yield clause, "an empty phase"
    if rec is None:
        if clause == "ADK-WRITE-001":
            yield clause, f"{op.name} of a missing id"
        return
    if code != "ok":
        yield "ADK-WRITE-002", f"refused {code}"
    if clause == "ADK-FENCE-002":
        yield clause, f"{op.name} of a {state_of(rec)} record"
    elif clause == "ADK-FENCE-001":
        yield clause, f"{op.name} with the replaced token"
    elif clause in ("ADK-FENCE-003", "ADK-LEASE-001", "ADK-LEASE-002"):
        where = boundary(op.now_ms, rec.lease_until)
        if where is not None:
            yield clause, where
        if clause != "ADK-FENCE-003":
            yield clause, op.name
    if code == "ok":
        yield from _accepted(rec, op)


def _accepted(rec: StoredInvocation, op: spec.Renew | spec.Checkpoint | spec.Finish) -> Found:
    yield "ADK-REV-001", op.name
    if isinstance(op, spec.Finish):
        yield "ADK-FINISH-002", f"finished {op.phase}"
        return
    new_until = op.now_ms + op.lease_ms
    if new_until != rec.lease_until:
        change = "shortens" if new_until < rec.lease_until else "extends"
        clause = "ADK-RENEW-001" if isinstance(op, spec.Renew) else "ADK-CKPT-001"
        yield clause, f"{change} the lease"


def _delete(rec: StoredInvocation | None, ctx: Ctx, step: Step) -> Found:
    if rec is None:
        return
    clause = step.clause
    if clause == "ADK-DELETE-002":
        yield clause, ("a completed record" if rec.phase == spec.COMPLETED
                       else f"a {state_of(rec)} record")
    elif clause in ("ADK-DELETE-003", "ADK-DELETE-004"):
        where = boundary(ctx.now, rec.lease_until)
        if where is not None:
            yield clause, where
