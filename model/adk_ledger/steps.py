"""Reference model of the ``adk-ledger`` contract: the executable form of its clauses.

The state is an immutable mapping ``invocation_id -> StoredInvocation`` (the record schema of
:mod:`fencepost.spec.adk_ledger`, which the stores keep too). :func:`step` applies one
operation in the order the seed implementation checks, and names the clause that decided the
answer.

Example::

    >>> from fencepost.spec.adk_ledger import Create, Claim
    >>> from fencepost.model.base import Ctx
    >>> s = step(EMPTY, Create("i1", {"kind": "agent"}, {}), Ctx(now=0))
    >>> step(s.state, Claim("i1", "c1", "t1", 5, 10), Ctx(now=5)).outcome.value.lease_until
    15
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.spec import adk_ledger as spec
from fencepost.spec.adk_ledger import StoredInvocation
from fencepost.spec.opaque import MISSING, ByIdentity, Opaque, Shown
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Err, Ok, Outcome

from ..base import (
    ContractModel,
    Ctx,
    Step,
    as_mapping,
    field_diff,
    options_with_defaults,
    reads_and_refusals,
)

State = Mapping[str, "StoredInvocation"]
EMPTY: State = {}


def default_options(given: Mapping[str, str] | None = None) -> dict[str, str]:
    return options_with_defaults(spec.CHOICES, given or {})


_VIEWS = ByIdentity(4_096)
"""record -> {(owned, claimant shown): its view}: a record is read back step after step, and
the same view object lets the harness's walks of it (its memos by identity) be skipped."""


def view(rec: StoredInvocation, ctx: Ctx) -> spec.Invocation:
    owned = rec.token is not None
    if ctx.options.get("owned_view") == "live_lease":
        owned = owned and ctx.now < rec.lease_until
    claimant = rec.owner is None or ctx.options.get("owner_view") == "claimant"
    views = _VIEWS.get(rec)
    if views is MISSING:
        views = _VIEWS.put(rec, {})
    found: spec.Invocation | None = views.get((owned, claimant))
    if found is None:
        found = views[(owned, claimant)] = _view(rec, owned, claimant)
    return found


def _view(rec: StoredInvocation, owned: bool, claimant: bool) -> spec.Invocation:
    shown = rec.shown(owned)
    if claimant or rec.owner is None:
        return shown
    # The seed shows node(OwnerPid): a value of the store's own, the same on every read for
    # one claimant (the harness binds the first value read under this name). The model's
    # answer holds a placeholder where a store's holds text.
    node: Any = Opaque(owner_node(rec.owner))
    return attrs.evolve(shown, owner=node)


def owner_node(owner: str) -> Shown:
    """The name the model gives the store's ``owner_node`` for claimant ``owner``."""
    return Shown(f"owner_node of {owner}")


def _put(state: State, rec: StoredInvocation) -> State:
    return {**state, rec.invocation_id: rec}


def _refuse(state: State, code: str, clause: str, effect: str | None = None) -> Step:
    return Step(Err(code), state, clause, effect or clause)


def _owner_dead(rec: StoredInvocation, ctx: Ctx) -> bool:
    return (
        "owner_liveness" in ctx.capabilities and rec.owner is not None and rec.owner in ctx.dead
    )


def _create(state: State, op: spec.Create, ctx: Ctx) -> Step:
    if op.invocation_id in state:
        return _refuse(state, "already_exists", "ADK-CREATE-003")
    meta = as_mapping(op.metadata)
    # An absent key reading as none is the metadata_keys=optional rule (the seed never sees one).
    decided = ("ADK-CREATE-002" if any(k not in meta for k in spec.METADATA_KEYS)
               else "ADK-CREATE-001")
    rec = StoredInvocation.created(op.invocation_id, meta, as_mapping(op.checkpoint), ctx.now)
    return Step(Ok(None), _put(state, rec), decided, "ADK-CREATE-001")


def _get(state: State, op: spec.Get, ctx: Ctx) -> Step:
    rec = state.get(op.invocation_id)
    if rec is None:
        return _refuse(state, "not_found", "ADK-GET-001")
    return Step(Ok(view(rec, ctx)), state, "ADK-GET-002", "ADK-GET-002")


def _claim(state: State, op: spec.Claim, ctx: Ctx) -> Step:
    rec = state.get(op.invocation_id)
    if rec is None:
        return _refuse(state, "not_found", "ADK-CLAIM-001")
    if rec.phase == spec.COMPLETED:
        return _refuse(state, "completed", "ADK-CLAIM-002")
    if rec.token is None:
        decided = "ADK-FINISH-003" if rec.phase in spec.FINISH_PHASES else "ADK-CLAIM-003"
    elif op.now_ms >= rec.lease_until:
        decided = "ADK-CLAIM-005"
    elif _owner_dead(rec, ctx):
        decided = "ADK-CLAIM-007"
    else:
        return _refuse(state, "invocation_owned", "ADK-CLAIM-004")
    new = attrs.evolve(
        rec,
        phase=spec.RUNNING,
        outcome=None,
        token=op.owner_token,
        owner=op.owner,
        lease_until=op.now_ms + op.lease_ms,
        revision=rec.revision + 1,
        updated_at=op.now_ms,
    )
    return Step(Ok(view(new, ctx)), _put(state, new), decided, "ADK-CLAIM-006")


def _write_guard(
        state: State, invocation_id: str, token: spec.Token, now: int
) -> Step | StoredInvocation:
    """The guard renew, checkpoint and finish share, in the implementation's order."""
    rec = state.get(invocation_id)
    if rec is None:
        return _refuse(state, "not_found", "ADK-WRITE-001")
    if rec.phase != spec.RUNNING or rec.token is None:
        return _refuse(state, "stale_owner", "ADK-FENCE-002", "ADK-WRITE-002")
    if rec.token != token:
        clause = "ADK-FENCE-003" if now >= rec.lease_until else "ADK-FENCE-001"
        return _refuse(state, "stale_owner", clause, "ADK-WRITE-002")
    if now >= rec.lease_until:
        return _refuse(state, "lease_expired", "ADK-LEASE-001", "ADK-WRITE-002")
    return rec


def _renew(state: State, op: spec.Renew, ctx: Ctx) -> Step:
    rec = _write_guard(state, op.invocation_id, op.owner_token, op.now_ms)
    if isinstance(rec, Step):
        return rec
    new = attrs.evolve(
        rec, lease_until=op.now_ms + op.lease_ms, revision=rec.revision + 1, updated_at=op.now_ms
    )
    return Step(Ok(None), _put(state, new), "ADK-LEASE-002", "ADK-RENEW-001")


def _checkpoint(state: State, op: spec.Checkpoint, ctx: Ctx) -> Step:
    rec = _write_guard(state, op.invocation_id, op.owner_token, op.now_ms)
    if isinstance(rec, Step):
        return rec
    new = attrs.evolve(
        rec,
        checkpoint=as_mapping(op.checkpoint),
        lease_until=op.now_ms + op.lease_ms,
        revision=rec.revision + 1,
        updated_at=op.now_ms,
    )
    return Step(Ok(None), _put(state, new), "ADK-LEASE-002", "ADK-CKPT-001")


def valid_finish_phase(phase: Any, options: Mapping[str, str]) -> bool:
    if options.get("finish_phases") == "any":  # a phase that is no string met the guard
        return isinstance(phase, str) and phase not in ("", spec.READY, spec.RUNNING)
    return phase in spec.FINISH_PHASES


NORMALIZED_PHASES = ("failed", "cancelled")
"""The finish phases whose outcome the seed's ledger normalizes (``persisted_outcome``)."""


def stored_outcome(rec: StoredInvocation, op: spec.Finish, ctx: Ctx) -> Any:
    """The outcome a finish stores. Under ``finish_outcome=normalized`` (the seed) failed and
    cancelled store a value of the store's own: the model answers a placeholder named after
    this very finish, which the first read binds to the store's value and every later read
    (reopen included) must return unchanged. The name holds everything the finish was given,
    so two finishes share a name only when a deterministic store stores the same value."""
    if op.phase not in NORMALIZED_PHASES or ctx.options.get("finish_outcome") == "as_given":
        return op.outcome
    given = zlib.crc32(repr((op.outcome, op.checkpoint)).encode())
    return Opaque(f"{op.phase} outcome of {rec.invocation_id} (created {rec.created_at}, "
                  f"revision {rec.revision + 1}, {op.now_ms} ms, {given:08x})")


def _finish(state: State, op: spec.Finish, ctx: Ctx) -> Step:
    if not valid_finish_phase(op.phase, ctx.options):
        return _refuse(state, "invalid_terminal_phase", "ADK-FINISH-001", "ADK-WRITE-002")
    rec = _write_guard(state, op.invocation_id, op.owner_token, op.now_ms)
    if isinstance(rec, Step):
        return rec
    new = attrs.evolve(
        rec,
        phase=op.phase,
        outcome=stored_outcome(rec, op, ctx),
        checkpoint=as_mapping(op.checkpoint),
        token=None,
        owner=None,
        lease_until=0,
        revision=rec.revision + 1,
        updated_at=op.now_ms,
    )
    return Step(Ok(None), _put(state, new), "ADK-LEASE-002", "ADK-FINISH-002")


def _delete(state: State, op: spec.Delete, ctx: Ctx) -> Step:
    rec = state.get(op.invocation_id)
    if rec is None:
        return _refuse(state, "not_found", "ADK-DELETE-001")
    if rec.token is None:
        if rec.phase == spec.COMPLETED and ctx.options.get("delete_completed") == "forbidden":
            return _refuse(state, "completed", "ADK-DELETE-002")
        decided = "ADK-DELETE-002"
    elif ctx.now >= rec.lease_until:
        decided = "ADK-DELETE-004"
    elif _owner_dead(rec, ctx):
        decided = "ADK-DELETE-005"
    else:
        return _refuse(state, "invocation_owned", "ADK-DELETE-003")
    rest = {k: v for k, v in state.items() if k != op.invocation_id}
    return Step(Ok(None), rest, decided, decided)


# --- the seed's guards: what each function head of adk_invocation_ledger_mnesia.erl admits ------

ARGUMENT_CLAUSES = {
    "create": "ADK-ARG-001", "get": "ADK-ARG-002", "delete": "ADK-ARG-002",
    "claim": "ADK-ARG-003", "renew": "ADK-ARG-004", "checkpoint": "ADK-ARG-004",
    "finish": "ADK-ARG-005",
}
ARGUMENT_CODES = frozenset(e.code for e in spec.ARGUMENT_ERRORS.values())


def integer(value: Any) -> bool:
    """An integer as the seed's ``is_integer`` means it: ``True`` and ``2.5`` are none."""
    return isinstance(value, int) and not isinstance(value, bool)


def _text(name: str, value: Any, non_empty: bool = False) -> str | None:
    if not isinstance(value, str):
        return f"{'an' if name[0] in 'aeio' else 'a'} {name} that is no string"
    return f"an empty {name}" if non_empty and value == "" else None


def binary(value: Any) -> bool:
    """An Erlang binary as Python carries it: text or bytes (``is_binary``)."""
    return isinstance(value, str | bytes)


def _token(value: Any, non_empty: bool = False) -> str | None:
    if not binary(value):
        return "a token that is no binary"
    return "an empty token" if non_empty and len(value) == 0 else None


def _lease(value: Any) -> str | None:
    if not integer(value):
        return "a lease_ms that is no integer"
    if value > 0:
        return None
    return "a lease_ms of 0" if value == 0 else "a negative lease_ms"


_TIMED = (spec.Claim, spec.Renew, spec.Checkpoint, spec.Finish)
_LEASED = (spec.Claim, spec.Renew, spec.Checkpoint)
_CHECKPOINTED = (spec.Create, spec.Checkpoint, spec.Finish)


def guard_edges(op: Op, options: Mapping[str, str]) -> tuple[str, ...]:
    """What the seed's guard for ``op`` refuses in its arguments, as the ADK-ARG clauses'
    situations name them; empty when the guard admits every argument (mnesia.erl: create
    52-54, get 82, claim 96-99, renew 138-140, checkpoint 152-154, finish 170-172, delete
    197). Only create's id and claim's token must be non-empty (53, 98), and only under
    ``empty_strings=refused``."""
    refuse_empty = options.get("empty_strings", "refused") == "refused"
    found = [_text("id", op.invocation_id,  # type: ignore[attr-defined]
                   non_empty=refuse_empty and isinstance(op, spec.Create))]
    if isinstance(op, spec.Claim):
        found += [_text("owner", op.owner), _token(op.owner_token, refuse_empty)]
    elif isinstance(op, spec.WRITES):
        found.append(_token(op.owner_token))
    if isinstance(op, _TIMED):
        found.append(None if integer(op.now_ms) else "a now_ms that is no integer")
    if isinstance(op, _LEASED):
        found.append(_lease(op.lease_ms))
    if isinstance(op, spec.Create) and not isinstance(op.metadata, Mapping):
        found.append("metadata that is no mapping")
    if (isinstance(op, _CHECKPOINTED)
            and not isinstance(op.checkpoint, Mapping)):
        found.append("a checkpoint that is no mapping")
    if isinstance(op, spec.Finish) and not isinstance(op.phase, str):
        found.append("a phase that is no string")
    return tuple(f for f in found if f is not None)


def _text_ok(value: Any, non_empty: bool = False) -> bool:
    return isinstance(value, str) and not (non_empty and value == "")


def _token_ok(value: Any, non_empty: bool = False) -> bool:
    return binary(value) and not (non_empty and len(value) == 0)


def admits(op: Op, options: Mapping[str, str]) -> bool:
    """``not guard_edges(op, options)``, without building the reasons: every step asks, and
    nearly every op is admitted (tests/test_model_adk_ledger.py holds the two to each other)."""
    refuse_empty = options.get("empty_strings", "refused") == "refused"
    o: Any = op
    kind = type(o)
    if kind is spec.Get or kind is spec.Delete:
        return isinstance(o.invocation_id, str)
    if kind is spec.Create:
        return (_text_ok(o.invocation_id, refuse_empty) and isinstance(o.metadata, Mapping)
                and isinstance(o.checkpoint, Mapping))
    if kind not in _TIMED or not (isinstance(o.invocation_id, str) and integer(o.now_ms)):
        return not guard_edges(op, options)
    if kind is spec.Claim:
        return (isinstance(o.owner, str) and _token_ok(o.owner_token, refuse_empty)
                and _lease(o.lease_ms) is None)
    if not binary(o.owner_token):
        return False
    if kind is spec.Renew:
        return _lease(o.lease_ms) is None
    if kind is spec.Checkpoint:
        return _lease(o.lease_ms) is None and isinstance(o.checkpoint, Mapping)
    return isinstance(o.checkpoint, Mapping) and isinstance(o.phase, str)


def _malformed(state: State, op: Op, ctx: Ctx) -> Step | None:
    if admits(op, ctx.options):
        return None
    return _refuse(state, spec.ARGUMENT_ERRORS[op.name].code, ARGUMENT_CLAUSES[op.name])


_STEPS: dict[type, Any] = {
    spec.Create: _create,
    spec.Get: _get,
    spec.Claim: _claim,
    spec.Renew: _renew,
    spec.Checkpoint: _checkpoint,
    spec.Finish: _finish,
    spec.Delete: _delete,
}


def step(state: State, op: Op, ctx: Ctx) -> Step:
    """Apply ``op`` to ``state`` at ``ctx``; return the outcome, next state and deciding clause.
    The guard of the op's function head comes first, as in the seed."""
    return _malformed(state, op, ctx) or _STEPS[type(op)](state, op, ctx)


# Fields whose lone mismatch after an accepted step points at a narrower clause than the step's.
FIELD_CLAUSES = {
    "revision": "ADK-REV-001",
    "owned": "ADK-GET-003",
    "workflow_id": "ADK-CREATE-002",
    "workflow_version": "ADK-CREATE-002",
    "kind": "ADK-CREATE-002",
    "owner": "ADK-OWNER-001",
}


def _situations(before: State, op: Op, ctx: Ctx, step: Step) -> Any:
    from .situations import situations  # it builds on this module's StoredInvocation

    return situations(before, op, ctx, step)


def answer_clause(op: Op, step_clause: str, expected: Outcome, actual: Outcome) -> str | None:
    """A refusal for malformed arguments the guard does not give breaks the guard's clause
    (an empty id, a time below 0 refused: the clause says no other argument is). A view that
    differs from the model's in its outcome alone, on a failed or cancelled record, breaks the
    finish rule (a normalized outcome lost or changed between reads), whichever operation read
    it."""
    if actual.code in ARGUMENT_CODES and expected.code != actual.code:
        return ARGUMENT_CLAUSES.get(op.name)
    value, seen = getattr(expected, "value", None), getattr(actual, "value", None)
    if (isinstance(value, spec.Invocation) and value.phase in NORMALIZED_PHASES
            and field_diff(value, seen) == ("outcome",)):
        return "ADK-FINISH-002"
    return None


MODEL = ContractModel(
    name=spec.CONTRACT,
    initial=EMPTY,
    step=step,
    observe=lambda key, _bindings, _state: spec.Get(key),
    field_clauses=FIELD_CLAUSES,
    choices=spec.CHOICES,
    durable_clause="ADK-DURABLE-001",
    pure=reads_and_refusals("get"),
    answer_clause=answer_clause,
    situations=_situations,
)
