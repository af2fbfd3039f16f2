"""Unit tests of the adk-ledger reference model (``fencepost.model.adk_ledger``).

Each test pins one rule of the contract notes (shared/contracts/adk-ledger.md): the exact
outcome, the exact next state or view, and the clause the model names for it.
"""

from __future__ import annotations

import copy
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fencepost.model.adk_ledger import (
    EMPTY,
    answer_clause,
    default_options,
    owner_node,
    step,
    view,
)
from fencepost.model.adk_ledger.situations import situations
from fencepost.model.base import Ctx
from fencepost.spec.adk_ledger import (
    Checkpoint,
    Claim,
    Create,
    Delete,
    Finish,
    Get,
    Invocation,
    Renew,
    StoredInvocation,
)
from fencepost.spec.opaque import Opaque, Shown, agree
from fencepost.spec.outcome import Err, Ok

META = {"workflow_id": "wf", "workflow_version": 3, "kind": "sequential"}
CP0 = {"step": 0}
CP1 = {"other": 1}
CREATED_AT = 100
T0, LEASE = 1000, 10  # first claim at T0 with lease LEASE -> lease_until 1010
LEASE_UNTIL = T0 + LEASE
WRITES = ("renew", "checkpoint", "finish")
WRITE_EFFECT = {"renew": "ADK-RENEW-001", "checkpoint": "ADK-CKPT-001", "finish": "ADK-FINISH-002"}
RESUMABLE = ("failed", "timed_out", "cancelled", "paused")


# --- helpers ------------------------------------------------------------------------------------


def ctx(now: int = 0, *, dead=(), caps=(), **options: str) -> Ctx:
    return Ctx(now, frozenset(dead), default_options(options), frozenset(caps))


def run(state, op, now: int = 0, **kw):
    return step(state, op, ctx(now, **kw))


def ok(state, op, now: int = 0, **kw):
    """Step that must succeed; returns the next state."""
    s = run(state, op, now, **kw)
    assert s.outcome.code == "ok", s
    return s.state


def record(**changes) -> StoredInvocation:
    """The record right after create("i1", META, CP0) at the store clock CREATED_AT."""
    base = StoredInvocation(
        invocation_id="i1", workflow_id="wf", workflow_version=3, kind="sequential",
        checkpoint=CP0, phase="ready", outcome=None, token=None, owner=None, lease_until=0,
        revision=0, created_at=CREATED_AT, updated_at=CREATED_AT,
    )
    return attrs.evolve(base, **changes)


def claimed_record(**changes) -> StoredInvocation:
    """The record after claim("i1", "c1", "t1", T0, LEASE)."""
    base = record(phase="running", token="t1", owner="c1", lease_until=LEASE_UNTIL, revision=1,
                  updated_at=T0)
    return attrs.evolve(base, **changes)


def created():
    return ok(EMPTY, Create("i1", META, CP0), now=CREATED_AT)


def claimed():
    return ok(created(), Claim("i1", "c1", "t1", T0, LEASE), now=T0)


def finished(phase: str):
    return ok(claimed(), Finish("i1", "t1", phase, f"{phase}-out", CP1, T0 + 5), now=T0 + 5)


def write(kind: str, token: str, now: int, inv: str = "i1"):
    if kind == "renew":
        return Renew(inv, token, now, LEASE)
    if kind == "checkpoint":
        return Checkpoint(inv, token, {"written": kind}, now, LEASE)
    return Finish(inv, token, "completed", "done", {"written": kind}, now)


def assert_refused(state, op, code: str, clause: str, effect: str | None = None, now=0, **kw):
    s = run(state, op, now, **kw)
    assert s.outcome == Err(code)
    assert (s.clause, s.effect_clause) == (clause, effect or clause)
    assert s.state == state  # nothing written
    return s


# --- create -------------------------------------------------------------------------------------


def test_create_stores_fresh_ready_record_stamped_by_store_clock():
    s = run(EMPTY, Create("i1", META, CP0), now=CREATED_AT)
    assert s.outcome == Ok(None)
    assert (s.clause, s.effect_clause) == ("ADK-CREATE-001", "ADK-CREATE-001")
    assert s.state == {"i1": record()}


def test_create_keeps_only_the_three_metadata_keys():
    state = ok(EMPTY, Create("i1", {**META, "tenant": "x", "secret": 1}, CP0), now=CREATED_AT)
    assert state == {"i1": record()}
    got = run(state, Get("i1"), now=CREATED_AT).outcome.value
    assert (got.workflow_id, got.workflow_version, got.kind) == ("wf", 3, "sequential")


def test_create_reads_absent_metadata_keys_as_none_and_that_rule_decides():
    # metadata_keys=optional; the seed itself aborts here, and by default no create omits one.
    s = run(EMPTY, Create("i1", {"kind": "agent"}, CP0), now=CREATED_AT, metadata_keys="optional")
    assert (s.clause, s.effect_clause) == ("ADK-CREATE-002", "ADK-CREATE-001")
    assert s.state["i1"] == record(workflow_id=None, workflow_version=None, kind="agent")


def test_create_of_existing_id_is_already_exists_and_writes_nothing():
    state = created()
    s = assert_refused(state, Create("i1", {"kind": "other"}, CP1), "already_exists",
                       "ADK-CREATE-003", now=CREATED_AT + 50)
    assert s.state["i1"] == record()


# --- get ----------------------------------------------------------------------------------------


def test_get_of_missing_id_is_not_found():
    assert_refused(EMPTY, Get("nope"), "not_found", "ADK-GET-001")
    gone = ok(created(), Delete("i1"), now=CREATED_AT)
    assert_refused(gone, Get("i1"), "not_found", "ADK-GET-001")


def test_get_returns_view_without_token():
    state = claimed()
    s = run(state, Get("i1"), now=T0 + 1, owner_view="claimant")
    assert (s.clause, s.effect_clause) == ("ADK-GET-002", "ADK-GET-002")
    assert s.state == state
    assert s.outcome == Ok(Invocation(
        invocation_id="i1", workflow_id="wf", workflow_version=3, kind="sequential",
        checkpoint=CP0, phase="running", outcome=None, owned=True, owner="c1",
        lease_until=LEASE_UNTIL, revision=1, created_at=CREATED_AT, updated_at=T0,
    ))
    assert "token" not in {a.name for a in attrs.fields(Invocation)}
    assert "t1" not in attrs.astuple(s.outcome.value)


def test_owner_reads_as_the_stores_node_value_per_claimant_by_default():
    # mnesia.erl:117 stores node(OwnerPid): a value of the store's own, one per claimant name
    # in the model (two claimants of one node may share it), none after create and finish.
    shown = run(claimed(), Get("i1"), now=T0 + 1).outcome.value.owner
    assert shown == Opaque(owner_node("c1"))
    assert isinstance(shown.meaning, Shown)
    assert run(created(), Get("i1"), now=CREATED_AT).outcome.value.owner is None
    assert run(finished("paused"), Get("i1"), now=T0 + 5).outcome.value.owner is None
    assert agree(shown, "nonode@nohost") and agree(shown, "c1") and not agree(shown, None)


def test_tokens_are_binaries_text_or_bytes():
    raw = b"\xff\x00token"
    state = ok(created(), Claim("i1", "c1", raw, T0, LEASE), now=T0)
    assert state["i1"].token == raw
    assert run(state, Renew("i1", raw, T0 + 1, LEASE), now=T0 + 1).outcome == Ok(None)
    assert run(state, Renew("i1", "t1", T0 + 1, LEASE), now=T0 + 1).outcome == Err("stale_owner")
    assert_refused(created(), Claim("i1", "c1", b"", T0, LEASE), "invalid_claim_arguments",
                   "ADK-ARG-003", now=T0)
    assert_refused(state, Renew("i1", 7, T0 + 1, LEASE), "invalid_renew_arguments",
                   "ADK-ARG-004", now=T0 + 1)


def test_owned_means_token_stored_even_after_expiry():
    assert run(created(), Get("i1"), now=CREATED_AT).outcome.value.owned is False
    assert run(claimed(), Get("i1"), now=LEASE_UNTIL + 10_000).outcome.value.owned is True
    assert run(finished("paused"), Get("i1"), now=T0 + 5).outcome.value.owned is False


def test_owned_view_live_lease_option_hides_expired_token():
    state = claimed()
    live = run(state, Get("i1"), now=LEASE_UNTIL - 1, owned_view="live_lease").outcome.value
    expired = run(state, Get("i1"), now=LEASE_UNTIL, owned_view="live_lease").outcome.value
    assert (live.owned, expired.owned) == (True, False)
    assert expired == attrs.evolve(live, owned=False)


def test_a_record_read_again_is_the_same_view_and_each_reading_its_own():
    # one view object per record and reading: the harness's memos by identity then skip it
    state = claimed()
    first, again = (run(state, Get("i1"), now=T0 + 1).outcome.value for _ in range(2))
    assert first is again and first.owner == Opaque(Shown("owner_node of c1"))
    claimant = run(state, Get("i1"), now=T0 + 1, owner_view="claimant").outcome.value
    hidden = run(state, Get("i1"), now=LEASE_UNTIL, owned_view="live_lease").outcome.value
    assert (claimant.owner, hidden.owned, hidden.owner) == ("c1", False, first.owner)
    assert claimant == attrs.evolve(first, owner="c1")
    assert hidden == attrs.evolve(first, owned=False)
    moved = ok(state, Renew("i1", "t1", T0 + 2, LEASE), now=T0 + 2)
    assert run(moved, Get("i1"), now=T0 + 2).outcome.value.lease_until == T0 + 2 + LEASE


# --- claim --------------------------------------------------------------------------------------


def test_claim_of_missing_id_is_not_found():
    assert_refused(created(), Claim("nope", "c1", "t1", T0, LEASE), "not_found", "ADK-CLAIM-001",
                   now=T0)


def test_claim_of_completed_invocation_is_completed():
    state = finished("completed")
    for now in (T0 + 6, LEASE_UNTIL, LEASE_UNTIL + 10_000):
        assert_refused(state, Claim("i1", "c2", "t2", now, LEASE), "completed", "ADK-CLAIM-002",
                       now=now)


def test_claim_of_ready_invocation_sets_running_lease_and_returns_view():
    s = run(created(), Claim("i1", "c1", "t1", T0, LEASE), now=T0)
    assert (s.clause, s.effect_clause) == ("ADK-CLAIM-003", "ADK-CLAIM-006")
    assert s.state == {"i1": claimed_record()}
    assert s.outcome == Ok(view(claimed_record(), ctx(T0)))


@pytest.mark.parametrize("phase", RESUMABLE)
def test_unowned_finished_invocation_is_claimable_again(phase):
    now = T0 + 20
    s = run(finished(phase), Claim("i1", "c2", "t2", now, 30), now=now)
    assert (s.clause, s.effect_clause) == ("ADK-FINISH-003", "ADK-CLAIM-006")
    expected = claimed_record(checkpoint=CP1, token="t2", owner="c2", lease_until=now + 30,
                              revision=3, updated_at=now)
    assert s.state == {"i1": expected}  # outcome cleared, finish checkpoint kept
    assert s.outcome == Ok(view(expected, ctx(now)))


@pytest.mark.parametrize("claimant", [("c2", "t2"), ("c1", "t1")], ids=["other", "same_token"])
def test_live_lease_blocks_claim_at_lease_until_minus_one(claimant):
    owner, token = claimant
    now = LEASE_UNTIL - 1
    assert_refused(claimed(), Claim("i1", owner, token, now, 30), "invocation_owned",
                   "ADK-CLAIM-004", now=now)


def test_claim_succeeds_at_lease_until_exactly():
    s = run(claimed(), Claim("i1", "c2", "t2", LEASE_UNTIL, 30), now=LEASE_UNTIL)
    assert (s.clause, s.effect_clause) == ("ADK-CLAIM-005", "ADK-CLAIM-006")
    expected = claimed_record(token="t2", owner="c2", lease_until=LEASE_UNTIL + 30, revision=2,
                              updated_at=LEASE_UNTIL)
    assert s.state == {"i1": expected}
    assert s.outcome == Ok(view(expected, ctx(LEASE_UNTIL)))


def test_same_token_reclaims_after_expiry_like_any_claimant():
    now = LEASE_UNTIL + 5
    s = run(claimed(), Claim("i1", "c1", "t1", now, LEASE), now=now)
    assert s.clause == "ADK-CLAIM-005"
    assert s.state["i1"] == claimed_record(lease_until=now + LEASE, revision=2, updated_at=now)


def test_dead_owner_is_claimed_early_only_with_liveness_capability():
    now = T0 + 1
    op = Claim("i1", "c2", "t2", now, 30)
    assert_refused(claimed(), op, "invocation_owned", "ADK-CLAIM-004", now=now, dead={"c1"})
    assert_refused(claimed(), op, "invocation_owned", "ADK-CLAIM-004", now=now, dead={"cX"},
                   caps={"owner_liveness"})
    s = run(claimed(), op, now=now, dead={"c1"}, caps={"owner_liveness"})
    assert (s.clause, s.effect_clause) == ("ADK-CLAIM-007", "ADK-CLAIM-006")
    assert s.state["i1"] == claimed_record(token="t2", owner="c2", lease_until=now + 30,
                                           revision=2, updated_at=now)


# --- the shared write guard ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", WRITES)
def test_write_to_missing_id_is_not_found(kind):
    assert_refused(claimed(), write(kind, "t1", T0 + 1, inv="nope"), "not_found", "ADK-WRITE-001",
                   now=T0 + 1)


@pytest.mark.parametrize("kind", WRITES)
def test_stale_owner_cannot_write_after_takeover(kind):
    state = ok(claimed(), Claim("i1", "c2", "t2", LEASE_UNTIL, 30), now=LEASE_UNTIL)
    now = LEASE_UNTIL + 1
    assert_refused(state, write(kind, "t1", now), "stale_owner", "ADK-FENCE-001", "ADK-WRITE-002",
                   now=now)


@pytest.mark.parametrize("kind", WRITES)
def test_wrong_token_on_expired_lease_is_stale_owner_not_lease_expired(kind):
    assert_refused(claimed(), write(kind, "t9", LEASE_UNTIL), "stale_owner", "ADK-FENCE-003",
                   "ADK-WRITE-002", now=LEASE_UNTIL)


@pytest.mark.parametrize("kind", WRITES)
def test_nobody_writes_to_ready_record(kind):
    for token in ("t1", "anything"):
        assert_refused(created(), write(kind, token, T0), "stale_owner", "ADK-FENCE-002",
                       "ADK-WRITE-002", now=T0)


@pytest.mark.parametrize("phase", ("completed", *RESUMABLE))
@pytest.mark.parametrize("kind", WRITES)
def test_former_owner_cannot_write_to_finished_record(kind, phase):
    assert_refused(finished(phase), write(kind, "t1", T0 + 6), "stale_owner", "ADK-FENCE-002",
                   "ADK-WRITE-002", now=T0 + 6)


@pytest.mark.parametrize("kind", WRITES)
def test_expired_owner_cannot_write_at_lease_until_and_nothing_changes(kind):
    state = claimed()
    for now in (LEASE_UNTIL, LEASE_UNTIL + 500):  # nobody re-claimed: still no revival
        s = assert_refused(state, write(kind, "t1", now), "lease_expired", "ADK-LEASE-001",
                           "ADK-WRITE-002", now=now)
        assert s.state["i1"] == claimed_record()


@pytest.mark.parametrize("kind", WRITES)
def test_live_owner_can_write_at_lease_until_minus_one(kind):
    now = LEASE_UNTIL - 1
    s = run(claimed(), write(kind, "t1", now), now=now)
    assert s.outcome == Ok(None)
    assert (s.clause, s.effect_clause) == ("ADK-LEASE-002", WRITE_EFFECT[kind])
    assert s.state["i1"].revision == 2 and s.state["i1"].updated_at == now


def test_renew_extends_lease_and_changes_nothing_else():
    s = run(claimed(), Renew("i1", "t1", T0 + 4, 50), now=T0 + 4)
    assert s.state == {"i1": claimed_record(lease_until=T0 + 54, revision=2, updated_at=T0 + 4)}


def test_renew_may_shorten_the_lease():
    state = ok(claimed(), Renew("i1", "t1", T0 + 1, 100), now=T0 + 1)
    state = ok(state, Renew("i1", "t1", T0 + 2, 3), now=T0 + 2)
    assert state["i1"] == claimed_record(lease_until=T0 + 5, revision=3, updated_at=T0 + 2)
    assert_refused(state, Renew("i1", "t1", T0 + 5, 100), "lease_expired", "ADK-LEASE-001",
                   "ADK-WRITE-002", now=T0 + 5)
    assert ok(state, Claim("i1", "c2", "t2", T0 + 5, 10), now=T0 + 5)["i1"].owner == "c2"


def test_checkpoint_replaces_checkpoint_and_extends_lease():
    state = ok(claimed(), Checkpoint("i1", "t1", CP1, T0 + 5, 40), now=T0 + 5)
    assert state == {"i1": claimed_record(checkpoint=CP1, lease_until=T0 + 45, revision=2,
                                          updated_at=T0 + 5)}
    assert "step" not in state["i1"].checkpoint  # replaced, not merged


def test_finish_sets_phase_outcome_checkpoint_and_clears_ownership():
    s = run(claimed(), Finish("i1", "t1", "failed", {"why": "boom"}, CP1, T0 + 5), now=T0 + 5,
            finish_outcome="as_given")
    assert s.outcome == Ok(None)
    assert (s.clause, s.effect_clause) == ("ADK-LEASE-002", "ADK-FINISH-002")
    expected = record(checkpoint=CP1, phase="failed", outcome={"why": "boom"}, revision=2,
                      updated_at=T0 + 5)
    assert s.state == {"i1": expected}
    got = run(s.state, Get("i1"), now=T0 + 5).outcome.value
    assert (got.owned, got.owner, got.lease_until, got.outcome) == (False, None, 0, {"why": "boom"})


@pytest.mark.parametrize("phase", ["failed", "cancelled"])
def test_a_normalized_outcome_is_the_stores_own_value_named_after_its_finish(phase):
    s = run(claimed(), Finish("i1", "t1", phase, None, CP1, T0 + 5), now=T0 + 5)
    outcome = s.state["i1"].outcome
    assert isinstance(outcome, Opaque) and outcome.meaning.startswith(
        f"{phase} outcome of i1 (created {CREATED_AT}, revision 2, {T0 + 5} ms, ")
    assert run(s.state, Get("i1"), now=T0 + 6).outcome.value.outcome == outcome
    other = run(claimed(), Finish("i1", "t1", phase, "boom", CP1, T0 + 5), now=T0 + 5)
    assert other.state["i1"].outcome != outcome  # another finish: another name


@pytest.mark.parametrize("phase", ["completed", "paused", "timed_out"])
def test_other_phases_keep_the_outcome_as_given_by_default(phase):
    s = run(claimed(), Finish("i1", "t1", phase, {"why": "x"}, CP1, T0 + 5), now=T0 + 5)
    assert s.state["i1"].outcome == {"why": "x"}


@pytest.mark.parametrize("phase", ["running", "ready", "done", ""])
def test_finish_rejects_invalid_phase_before_reading(phase):
    now = T0 + 1
    for state, inv, token in ((claimed(), "i1", "t1"), (claimed(), "i1", "t9"),
                              (EMPTY, "nope", "t1")):
        assert_refused(state, Finish(inv, token, phase, None, CP1, now), "invalid_terminal_phase",
                       "ADK-FINISH-001", "ADK-WRITE-002", now=now)


def test_finish_phases_any_option_accepts_other_phase_names():
    now = T0 + 1
    s = run(claimed(), Finish("i1", "t1", "archived", "x", CP1, now), now=now,
            finish_phases="any")
    assert s.outcome == Ok(None)
    assert s.state["i1"] == record(checkpoint=CP1, phase="archived", outcome="x", revision=2,
                                   updated_at=now)
    for bad in ("running", "ready", ""):
        assert_refused(claimed(), Finish("i1", "t1", bad, "x", CP1, now),
                       "invalid_terminal_phase", "ADK-FINISH-001", "ADK-WRITE-002", now=now,
                       finish_phases="any")
    assert_refused(claimed(), Finish("i1", "t1", "archived", "x", CP1, now),
                   "invalid_terminal_phase", "ADK-FINISH-001", "ADK-WRITE-002", now=now)


def test_pause_resume_complete_then_final():
    state = ok(claimed(), Checkpoint("i1", "t1", {"step": 1}, T0 + 2, LEASE), now=T0 + 2)
    state = ok(state, Finish("i1", "t1", "paused", "need input", {"step": 1}, T0 + 3), now=T0 + 3)
    assert state["i1"] == record(checkpoint={"step": 1}, phase="paused", outcome="need input",
                                 revision=3, updated_at=T0 + 3)
    resumed = run(state, Claim("i1", "c2", "t2", T0 + 50, LEASE), now=T0 + 50)
    assert resumed.clause == "ADK-FINISH-003"
    assert resumed.outcome.value.checkpoint == {"step": 1}
    assert resumed.outcome.value.outcome is None
    state = ok(resumed.state, Finish("i1", "t2", "completed", "ok", {"step": 2}, T0 + 55),
               now=T0 + 55)
    assert state["i1"] == record(checkpoint={"step": 2}, phase="completed", outcome="ok",
                                 revision=5, updated_at=T0 + 55)
    assert_refused(state, Claim("i1", "c3", "t3", T0 + 60, LEASE), "completed", "ADK-CLAIM-002",
                   now=T0 + 60)
    for kind in WRITES:
        assert_refused(state, write(kind, "t2", T0 + 60), "stale_owner", "ADK-FENCE-002",
                       "ADK-WRITE-002", now=T0 + 60)


# --- delete -------------------------------------------------------------------------------------


def test_delete_of_missing_id_is_not_found():
    assert_refused(created(), Delete("nope"), "not_found", "ADK-DELETE-001", now=CREATED_AT)


@pytest.mark.parametrize("phase", ["ready", "completed", *RESUMABLE])
def test_delete_removes_unowned_record_in_any_phase(phase):
    state = created() if phase == "ready" else finished(phase)
    state = {**state, "i2": attrs.evolve(state["i1"], invocation_id="i2")}
    s = run(state, Delete("i1"), now=T0 + 6)
    assert s.outcome == Ok(None)
    assert (s.clause, s.effect_clause) == ("ADK-DELETE-002", "ADK-DELETE-002")
    assert s.state == {"i2": state["i2"]}


def test_delete_of_live_owned_record_by_store_clock_is_invocation_owned():
    assert_refused(claimed(), Delete("i1"), "invocation_owned", "ADK-DELETE-003",
                   now=LEASE_UNTIL - 1)


def test_delete_of_expired_owned_record_by_store_clock_removes_it():
    s = run(claimed(), Delete("i1"), now=LEASE_UNTIL)
    assert s.outcome == Ok(None)
    assert (s.clause, s.effect_clause) == ("ADK-DELETE-004", "ADK-DELETE-004")
    assert s.state == {}


def test_delete_of_dead_owners_record_needs_liveness_capability():
    now = T0 + 1
    assert_refused(claimed(), Delete("i1"), "invocation_owned", "ADK-DELETE-003", now=now,
                   dead={"c1"})
    s = run(claimed(), Delete("i1"), now=now, dead={"c1"}, caps={"owner_liveness"})
    assert s.outcome == Ok(None)
    assert (s.clause, s.effect_clause) == ("ADK-DELETE-005", "ADK-DELETE-005")
    assert s.state == {}


def test_delete_completed_forbidden_option():
    assert_refused(finished("completed"), Delete("i1"), "completed", "ADK-DELETE-002",
                   now=T0 + 6, delete_completed="forbidden")
    s = run(finished("paused"), Delete("i1"), now=T0 + 6, delete_completed="forbidden")
    assert (s.outcome, s.state) == (Ok(None), {})


# --- the guards of the seed's function heads ---------------------------------------------------

NOT_A_STRING, NOT_AN_INTEGER, NOT_A_MAPPING = None, 2.5, ["step", 1]
MALFORMED = [
    (Create(NOT_A_STRING, META, CP0), "invalid_create_arguments", "ADK-ARG-001"),
    (Create("", META, CP0), "invalid_create_arguments", "ADK-ARG-001"),
    (Create("i1", NOT_A_MAPPING, CP0), "invalid_create_arguments", "ADK-ARG-001"),
    (Create("i1", META, NOT_A_STRING), "invalid_create_arguments", "ADK-ARG-001"),
    (Get(NOT_A_STRING), "invalid_invocation_id", "ADK-ARG-002"),
    (Delete(7), "invalid_invocation_id", "ADK-ARG-002"),
    (Claim("i1", "c2", "t2", T0, 0), "invalid_claim_arguments", "ADK-ARG-003"),
    (Claim("i1", "c2", "t2", T0, -1), "invalid_claim_arguments", "ADK-ARG-003"),
    (Claim("i1", "c2", "t2", T0, True), "invalid_claim_arguments", "ADK-ARG-003"),
    (Claim("i1", "c2", "t2", NOT_AN_INTEGER, LEASE), "invalid_claim_arguments", "ADK-ARG-003"),
    (Claim("i1", "c2", "", T0, LEASE), "invalid_claim_arguments", "ADK-ARG-003"),
    (Claim("i1", NOT_A_STRING, "t2", T0, LEASE), "invalid_claim_arguments", "ADK-ARG-003"),
    (Renew("i1", "t1", T0 + 1, 0), "invalid_renew_arguments", "ADK-ARG-004"),
    (Renew("i1", NOT_A_STRING, T0 + 1, LEASE), "invalid_renew_arguments", "ADK-ARG-004"),
    (Checkpoint("i1", "t1", NOT_A_MAPPING, T0 + 1, LEASE), "invalid_checkpoint_arguments",
     "ADK-ARG-004"),
    (Checkpoint("i1", "t1", CP1, T0 + 1, -5), "invalid_checkpoint_arguments", "ADK-ARG-004"),
    (Finish("i1", "t1", 5, None, CP1, T0 + 1), "invalid_finish_arguments", "ADK-ARG-005"),
    (Finish("i1", "t1", "running", None, NOT_A_MAPPING, T0 + 1), "invalid_finish_arguments",
     "ADK-ARG-005"),
    (Finish("i1", "t1", "completed", None, CP1, NOT_AN_INTEGER), "invalid_finish_arguments",
     "ADK-ARG-005"),
]


@pytest.mark.parametrize("record_in", ["missing", "ready", "running", "finished"])
@pytest.mark.parametrize(("op", "code", "clause"), MALFORMED)
def test_the_guard_refuses_first_and_changes_nothing(record_in, op, code, clause):
    state = {"missing": EMPTY, "ready": created(), "running": claimed(),
             "finished": finished("paused")}[record_in]
    for options in ({}, {"finish_phases": "any"}):
        assert_refused(state, op, code, clause, now=T0 + 1, **options)


def test_the_empty_strings_the_guards_take_are_no_record_and_no_holder():
    assert_refused(claimed(), Get(""), "not_found", "ADK-GET-001")
    assert_refused(claimed(), Delete(""), "not_found", "ADK-DELETE-001")
    assert_refused(claimed(), Claim("", "c2", "t2", T0, LEASE), "not_found", "ADK-CLAIM-001")
    assert_refused(claimed(), Renew("i1", "", T0 + 1, LEASE), "stale_owner", "ADK-FENCE-001",
                   "ADK-WRITE-002")
    assert_refused(claimed(), Finish("i1", "", "completed", None, CP1, T0 + 1), "stale_owner",
                   "ADK-FENCE-001", "ADK-WRITE-002")


def test_under_empty_strings_accepted_the_empty_id_and_token_are_like_any_other():
    state = ok(EMPTY, Create("", META, CP0), now=CREATED_AT, empty_strings="accepted")
    state = ok(state, Claim("", "c1", "", T0, LEASE), now=T0, empty_strings="accepted")
    assert state[""].token == ""
    assert run(state, Renew("", "", T0 + 1, LEASE), now=T0 + 1).outcome == Ok(None)


def test_any_integer_is_a_time_and_a_lease_may_end_at_zero():
    state = ok(created(), Claim("i1", "c1", "t1", -10, LEASE))
    assert (state["i1"].lease_until, view(state["i1"], ctx()).owned) == (0, True)
    assert_refused(state, Claim("i1", "c2", "t2", -1, LEASE), "invocation_owned", "ADK-CLAIM-004")
    assert run(state, Renew("i1", "t1", -1, 1)).outcome == Ok(None)
    assert_refused(state, Renew("i1", "t1", 0, 1), "lease_expired", "ADK-LEASE-001",
                   "ADK-WRITE-002")
    s = run(state, Claim("i1", "c2", "t2", 0, LEASE))
    assert (s.outcome.code, s.clause, s.state["i1"].lease_until) == ("ok", "ADK-CLAIM-005", 10)


def test_the_empty_phase_names_no_finish_phase_under_either_reading():
    for reading in ("strict", "any"):
        assert_refused(claimed(), Finish("i1", "t1", "", None, CP1, T0 + 1),
                       "invalid_terminal_phase", "ADK-FINISH-001", "ADK-WRITE-002", now=T0 + 1,
                       finish_phases=reading)


def test_a_refusal_the_guard_does_not_give_breaks_the_guards_clause():
    assert answer_clause(Get(""), "ADK-GET-001", Err("not_found"),
                         Err("invalid_invocation_id")) == "ADK-ARG-002"
    assert answer_clause(Claim("i1", "c1", "t1", -5, LEASE), "ADK-CLAIM-003", Ok(None),
                         Err("invalid_claim_arguments")) == "ADK-ARG-003"
    assert answer_clause(Claim("i1", "c1", "t1", 0, LEASE), "ADK-ARG-003",
                         Err("invalid_claim_arguments"), Ok(None)) is None


def test_situations_name_each_refused_argument_and_each_edge_taken():
    def found(state, op, **options):
        c = ctx(T0 + 1, **options)
        return set(situations(state, op, c, step(state, op, c)))

    assert found(EMPTY, Renew("i1", NOT_A_STRING, NOT_AN_INTEGER, 0)) == {
        ("ADK-ARG-004", "a token that is no binary"),
        ("ADK-ARG-004", "a now_ms that is no integer"),
        ("ADK-ARG-004", "a lease_ms of 0"), ("ADK-ARG-004", "for a missing id")}
    assert found(claimed(), Finish("i1", "t1", "running", None, NOT_A_MAPPING, T0)) == {
        ("ADK-ARG-005", "a checkpoint that is no mapping"),
        ("ADK-ARG-005", "with a phase that is no finish phase too")}
    assert found(claimed(), Get(7)) == {("ADK-ARG-002", "get of an id that is no string")}
    assert ("ADK-ARG-002", "delete of an empty id") in found(claimed(), Delete(""))
    state = ok(created(), Claim("i1", "c1", "t1", -10, LEASE))
    assert found(state, Claim("i1", "c2", "t2", -1, LEASE)) >= {
        ("ADK-ARG-003", "a now_ms of 0 or below"),
        ("ADK-CLAIM-004", "a lease that ends at 0 or below")}


# --- purity -------------------------------------------------------------------------------------


def test_step_does_not_mutate_input_state():
    base = ok(claimed(), Create("i2", META, {"nested": [1]}), now=T0)
    snapshot = copy.deepcopy(dict(base))
    ops = [
        Create("i3", META, CP0), Get("i1"), Claim("i2", "c2", "t2", T0, LEASE),
        Renew("i1", "t1", T0 + 1, 99), Checkpoint("i1", "t1", CP1, T0 + 1, 5),
        Finish("i1", "t1", "completed", "ok", CP1, T0 + 1), Delete("i2"), Delete("i1"),
        Claim("i1", "c9", "t9", T0 + 1, 5),
    ]
    for op in ops:
        run(base, op, now=LEASE_UNTIL)
        assert base == snapshot, op

    given = {"k": "v"}
    state = ok(EMPTY, Create("i1", META, given), now=CREATED_AT)
    given["k"] = "changed"
    assert state["i1"].checkpoint == {"k": "v"}


# -- the fast test of the guards is the guards ---------------------------------------------------

_ANY_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2),
                       st.sampled_from(["", "x"]), st.dictionaries(st.just("k"), st.just(1)),
                       st.lists(st.just(1), max_size=1))
_FITTING = {"metadata": {}, "checkpoint": {}, "now_ms": 5, "lease_ms": 10,
            "phase": "completed", "outcome": None}


def _field(name: str) -> st.SearchStrategy[Any]:
    """Mostly a value the guard takes (so that one wrong argument is often the only one)."""
    return st.one_of(st.just(_FITTING.get(name, "x")), st.just(_FITTING.get(name, "x")),
                     _ANY_VALUE)


_OPS = st.one_of(*(st.builds(kind, *[_field(f.name) for f in attrs.fields(kind)])
                   for kind in (Create, Get, Claim, Renew, Checkpoint, Finish, Delete)))


@pytest.mark.parametrize("empty", ["refused", "accepted"])
def test_admits_is_exactly_an_empty_list_of_guard_edges_on_the_edge_calls(empty: str) -> None:
    from fencepost.model.adk_ledger import admits, guard_edges
    from fencepost.scenarios.adk_ledger.edges import empty_strings, malformed

    options = {**default_options(), "empty_strings": empty}
    calls = [*malformed(options, "i", "o", "t", 5), *empty_strings("i", "o", 5),
             Claim("i", "o", "t", 5, 10), Finish("i", "t", "completed", None, {}, 5)]
    assert [admits(op, options) for op in calls] == [not guard_edges(op, options)
                                                     for op in calls]
    assert any(admits(op, options) for op in calls)
    assert not all(admits(op, options) for op in calls)


@settings(max_examples=500)
@given(op=_OPS, empty=st.sampled_from(["refused", "accepted"]))
def test_admits_is_exactly_an_empty_list_of_guard_edges(op: Any, empty: str) -> None:
    from fencepost.model.adk_ledger import admits, guard_edges

    options = {**default_options(), "empty_strings": empty}
    assert admits(op, options) == (not guard_edges(op, options))
