"""Named scripted scenarios: every case the erlang_adk implementation's own tests cover, and more.

Each scenario is a plain function of a :class:`Harness`; the model supplies every expected
answer, so a scenario only says what happens, never what should come back.
"""

from __future__ import annotations

from fencepost.spec import adk_ledger as spec

from ..checks import Scenarios
from ..harness import Harness, blamed_on
from . import edges
from .durable import reopen
from .meta import create_metadata, token

SCENARIOS = Scenarios()
scenario = SCENARIOS.register

META = {"workflow_id": "wf-1", "workflow_version": 3, "kind": "agent", "tenant": "dropped"}


def _claimed(h: Harness, inv: str, coord: str, token: spec.Token, lease: int) -> None:
    h.apply(coord, spec.Claim(inv, coord, token, h.now, lease))


@scenario()
def create_then_get(h: Harness, p: str) -> None:
    h.apply("client", spec.Create(f"{p}-a", META, {"step": 0}))
    h.apply("client", spec.Get(f"{p}-a"))
    h.apply("client", spec.Create(f"{p}-b", create_metadata(h.world.options, {}), {}))
    h.apply("client", spec.Get(f"{p}-b"))


@scenario()
def create_twice(h: Harness, p: str) -> None:
    h.apply("client", spec.Create(f"{p}-a", META, {"step": 0}))
    h.advance(5)
    h.apply("client", spec.Create(f"{p}-a", create_metadata(h.world.options, {"kind": "other"}),
                                  {"step": 9}))
    h.apply("client", spec.Get(f"{p}-a"))
    _claimed(h, f"{p}-a", "c1", token("t1"), 10)
    h.apply("client", spec.Create(f"{p}-a", META, {}))  # over a running record
    h.apply("c1", spec.Finish(f"{p}-a", token("t1"), "failed", "boom", {}, h.now))
    h.apply("client", spec.Create(f"{p}-a", META, {}))  # over a finished one
    h.apply("client", spec.Get(f"{p}-a"))


@scenario()
def get_missing(h: Harness, p: str) -> None:
    h.apply("client", spec.Get(f"{p}-never"))
    h.apply("client", spec.Create(f"{p}-a", META, {}))
    h.apply("client", spec.Delete(f"{p}-a"))
    h.apply("client", spec.Get(f"{p}-a"))


@scenario()
def missing_invocation(h: Harness, p: str) -> None:
    inv = f"{p}-never"
    h.apply("c1", spec.Claim(inv, "c1", token("t1"), h.now, 10))
    h.apply("c1", spec.Renew(inv, token("t1"), h.now, 10))
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 1}, h.now, 10))
    h.apply("c1", spec.Finish(inv, token("t1"), "completed", None, {}, h.now))
    h.apply("client", spec.Delete(inv))


@scenario()
def finish_phase_validated_first(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("c1", spec.Finish(f"{p}-never", token("t1"), "done", None, {}, h.now))
    h.apply("client", spec.Create(inv, META, {}))
    _claimed(h, inv, "c1", token("t1"), 10)
    h.apply("c1", spec.Finish(inv, token("t1"), "running", None, {"step": 9}, h.now))
    h.apply("c1", spec.Finish(inv, token("t1"), "ready", None, {"step": 9}, h.now))
    h.apply("c2", spec.Finish(inv, "t-forged", "bogus", None, {}, h.now))
    # the empty phase is no finish phase, in any reading
    h.apply("c1", spec.Finish(inv, token("t1"), "", None, {}, h.now))
    h.apply("c1", spec.Finish(f"{p}-never", token("t1"), "", None, {}, h.now))
    h.apply("c1", spec.Finish(inv, token("t1"), "failed", "boom", {"step": 1}, h.now))


@scenario()
def arguments_at_their_edges(outer: Harness, p: str) -> None:
    """Every argument the seed's guards refuse, sent to a missing, a ready, a running and a
    finished record (the guard comes first: each is refused and changes nothing); then the
    edges they take: the empty id (no record) and token (no holder), times of 0 and below.
    On a store of its own, as the empty id cannot be prefixed; the run drops it at its end
    with every other (``World.live``), where a failing discard is the adapter's fault, not a
    reason to doubt these verdicts."""
    _arguments_at_their_edges(outer.on(outer.world.fork(f"{p}arg")), p)


def _arguments_at_their_edges(h: Harness, p: str) -> None:
    inv, options = f"{p}-a", h.world.options
    if options.get("empty_strings") != "accepted":
        h.apply("client", spec.Create("", META, {}))

    def refused(actor: str) -> None:
        for op in edges.malformed(options, inv, actor, token("t1"), h.now):
            h.apply(actor, op)

    refused("c1")
    h.apply("client", spec.Create(inv, META, {"step": 0}))
    refused("c1")
    _claimed(h, inv, "c1", token("t1"), 10)
    refused("c1")
    for op in edges.empty_strings(inv, "c2", h.now):
        h.apply("c2", op)
    h.apply("c1", spec.Finish(inv, token("t1"), "paused", None, {"step": 1}, h.now))
    refused("c2")
    _times_at_and_below_zero(h, f"{p}-b")
    _tokens_of_one_byte(h, f"{p}-d")
    if options.get("empty_strings") == "accepted":
        _empty_strings_taken(h, f"{p}-c")


def _times_at_and_below_zero(h: Harness, inv: str) -> None:
    """Any integer is a time (mnesia.erl:99, 140, 154, 172: is_integer(Now) only): a lease
    taken at -10 for 10 ms ends at 0 and is live, owned and fenced until then."""
    h.apply("client", spec.Create(inv, META, {}))
    h.apply("c1", spec.Claim(inv, "c1", token("t1"), -10, 10))
    h.apply("client", spec.Get(inv))
    h.apply("c2", spec.Claim(inv, "c2", token("t2"), -5, 10))
    h.apply("c1", spec.Renew(inv, token("t1"), -1, 1))
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 1}, -1, 1))
    h.apply("c1", spec.Renew(inv, token("t1"), 0, 10))
    h.apply("c2", spec.Claim(inv, "c2", token("t2"), 0, 10))
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 2}, 0, 10))
    h.apply("c2", spec.Finish(inv, token("t2"), "paused", None, {"step": 2}, 0))
    h.apply("c1", spec.Claim(inv, "c1", token("t3"), -20, 5))
    h.apply("c1", spec.Finish(inv, token("t3"), "completed", "done", {}, -16))


def _tokens_of_one_byte(h: Harness, inv: str) -> None:
    """The shortest token a claim takes in every reading: one byte, as text and as bytes
    (mnesia.erl:98, ``byte_size(OwnerToken) > 0``); each holds the record like any other."""
    h.apply("client", spec.Create(inv, META, {}))
    _claimed(h, inv, "c1", "t", 10)
    h.apply("c1", spec.Renew(inv, "t", h.now, 10))
    h.apply("c1", spec.Finish(inv, "t", "paused", None, {"step": 1}, h.now))
    _claimed(h, inv, "c2", b"\xff", 10)
    h.apply("c1", spec.Checkpoint(inv, "t", {"step": 2}, h.now, 10))
    h.apply("c2", spec.Finish(inv, b"\xff", "completed", None, {}, h.now))


def _empty_strings_taken(h: Harness, inv: str) -> None:
    """Under empty_strings=accepted the empty id and the empty token are like any other (the
    empty id is unprefixed, so it is deleted again at once)."""
    h.apply("client", spec.Create("", META, {}))
    h.apply("client", spec.Get(""))
    h.apply("client", spec.Delete(""))
    h.apply("client", spec.Create(inv, META, {}))
    _claimed(h, inv, "c1", "", 10)
    h.apply("c1", spec.Renew(inv, "", h.now, 10))
    h.apply("c1", spec.Finish(inv, "", "completed", None, {}, h.now))


@scenario()
def failed_outcome_is_normalized(h: Harness, p: str) -> None:
    """failed and cancelled keep the store's own outcome (finish_outcome=normalized), even for
    a none or a raw error payload: present, and the same on every read until a claim clears
    it; paused and timed_out keep theirs as given."""
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {"step": 0}))
    for k, (phase, outcome) in enumerate((("failed", {"error": "boom", "stack": ["f", 1]}),
                                          ("cancelled", None), ("failed", None),
                                          ("timed_out", "late"), ("paused", {"ask": "user"}))):
        _claimed(h, inv, "c1", f"t{k}", 10)
        h.apply("c1", spec.Finish(inv, f"t{k}", phase, outcome, {"step": k}, h.now))
        h.apply("client", spec.Get(inv))
        h.advance(1)
        h.apply("client", spec.Get(inv))


@scenario()
def stale_token_cannot_commit_after_takeover(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {"step": 0}))
    _claimed(h, inv, "c1", token("t1"), 10)
    h.advance(10)
    _claimed(h, inv, "c2", token("t2"), 10)
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 1}, h.now, 10))
    h.apply("c1", spec.Finish(inv, token("t1"), "completed", "zombie", {"step": 1}, h.now))
    h.apply("c1", spec.Renew(inv, token("t1"), h.now, 10))
    h.apply("c2", spec.Checkpoint(inv, token("t2"), {"step": 1}, h.now + 1, 10))
    h.advance(20)
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 2}, h.now, 10))
    h.apply("c1", spec.Renew(inv, token("t1"), h.now, 10))


@scenario()
def expired_owner_cannot_write_at_boundary(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {"step": 0}))
    start = h.now
    _claimed(h, inv, "c1", token("t1"), 10)
    h.set_time(start + 10)
    h.apply("c1", spec.Renew(inv, token("t1"), h.now, 10))
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 1}, h.now, 10))
    h.apply("c1", spec.Finish(inv, token("t1"), "completed", "late", {"step": 1}, h.now))
    h.apply("c2", spec.Checkpoint(inv, "t-other", {"step": 1}, h.now, 10))
    h.apply("client", spec.Get(inv))
    h.advance(1)  # past the boundary: still expired, and the owner may take it back
    h.apply("c1", spec.Renew(inv, token("t1"), h.now, 10))
    h.apply("c1", spec.Claim(inv, "c1", token("t1"), h.now, 10))


@scenario()
def live_owner_blocks_claim_until_boundary(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {}))
    start = h.now
    _claimed(h, inv, "c1", token("t1"), 10)
    h.set_time(start + 9)
    h.apply("c2", spec.Claim(inv, "c2", token("t2"), h.now, 10))
    h.apply("c1", spec.Claim(inv, "c1", token("t1"), h.now, 10))
    h.set_time(start + 10)
    h.apply("c2", spec.Claim(inv, "c2", token("t2"), h.now, 10))
    h.set_time(start + 19)
    h.apply("c2", spec.Renew(inv, token("t2"), h.now, 10))
    h.apply("c2", spec.Checkpoint(inv, token("t2"), {"step": 2}, h.now, 5))


@scenario()
def renew_can_shorten_lease(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {}))
    _claimed(h, inv, "c1", token("t1"), 30)
    h.advance(2)
    h.apply("c1", spec.Renew(inv, token("t1"), h.now, 1))
    h.apply("c2", spec.Claim(inv, "c2", token("t2"), h.now + 1, 10))


@scenario()
def pause_resume_complete(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {"step": 0}))
    _claimed(h, inv, "c1", token("t1"), 10)
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 1}, h.now, 10))
    h.apply("c1", spec.Finish(inv, token("t1"), "paused", {"waiting": "input"}, {"step": 1}, h.now))
    h.apply("c1", spec.Renew(inv, token("t1"), h.now, 10))
    h.advance(1)
    _claimed(h, inv, "c2", token("t2"), 10)
    h.apply("c2", spec.Finish(inv, token("t2"), "completed", "done", {"step": 2}, h.now))
    h.apply("c3", spec.Claim(inv, "c3", token("t3"), h.now, 10))
    h.apply("c2", spec.Checkpoint(inv, token("t2"), {"step": 3}, h.now, 10))
    h.apply("c2", spec.Finish(inv, token("t2"), "completed", "again", {"step": 3}, h.now))
    h.apply("client", spec.Get(inv))


@scenario("durable")
def reopen_preserves_checkpoint_and_fence(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {"step": 0}))
    _claimed(h, inv, "c1", token("t1"), 10)
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 1}, h.now, 10))
    reopen(h)
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 2}, h.now + 1, 10))
    h.advance(11)
    _claimed(h, inv, "c2", token("t2"), 10)
    reopen(h)
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {"step": 3}, h.now, 10))
    h.apply("c2", spec.Checkpoint(inv, token("t2"), {"step": 3}, h.now, 10))
    h.apply("c2", spec.Finish(inv, token("t2"), "failed", {"error": "boom"}, {"step": 3}, h.now))
    h.apply("client", spec.Get(inv))
    reopen(h)
    h.apply("client", spec.Get(inv))


@scenario()
def delete_completed(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {}))
    _claimed(h, inv, "c1", token("t1"), 10)
    h.apply("c1", spec.Finish(inv, token("t1"), "completed", "done", {}, h.now))
    h.apply("client", spec.Delete(inv))
    h.apply("client", spec.Get(inv))


@scenario()
def delete_live_owned(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {}))
    start = h.now
    _claimed(h, inv, "c1", token("t1"), 10)
    h.set_time(start + 9)
    h.apply("client", spec.Delete(inv))
    h.set_time(start + 10)
    h.apply("client", spec.Delete(inv))
    h.apply("client", spec.Create(inv, META, {}))
    _claimed(h, inv, "c1", token("t2"), 10)
    h.advance(11)
    h.apply("client", spec.Delete(inv))  # a lease that ended a ms ago
    h.apply("client", spec.Create(inv, META, {}))
    _claimed(h, inv, "c1", token("t3"), 10)
    h.apply("c1", spec.Finish(inv, token("t3"), "paused", None, {}, h.now))
    h.apply("client", spec.Delete(inv))  # a finished record that is not completed


@scenario()
def expired_lease_still_owned(h: Harness, p: str) -> None:
    inv = f"{p}-a"
    h.apply("client", spec.Create(inv, META, {}))
    _claimed(h, inv, "c1", token("t1"), 5)
    h.advance(50)
    h.apply("client", spec.Get(inv))


@scenario("owner_liveness")
def dead_owner_is_replaced_early(h: Harness, p: str) -> None:
    inv, other = f"{p}-a", f"{p}-b"
    h.apply("client", spec.Create(inv, META, {}))
    h.apply("client", spec.Create(other, META, {}))
    _claimed(h, inv, f"{p}-c1", token("t1"), 100)
    _claimed(h, other, f"{p}-c1", token("t9"), 100)
    h.kill(f"{p}-c1")
    h.advance(1)
    _claimed(h, inv, f"{p}-c2", token("t2"), 100)
    h.apply("c1", spec.Checkpoint(inv, token("t1"), {}, h.now, 10))
    h.apply("client", spec.Delete(other))


def _nested(depth: int) -> object:
    value: object = "bottom"
    for level in range(depth):
        value = [level, value] if level % 2 else {"level": value}
    return value


EXACT = {
    "one": 1, "one_float": 1.0, "minus_zero": -0.0, "huge": 1.5e300, "big": 2**70,
    "below_int64": -(2**63) - 1, "pair": (1, "a"), "nested_tuple": [1, [2, (3, (4,))]],
    "bytes": b"\xff\x00\xfe", "text": "Gr\u00fc\u00dfe, \u4e16\u754c \U0001f600",
    "empty": "", "int_keys": {1: "a", 2: {3: 4.5}}, "tuple_key": {(1, 2): "x"},
    "none": None, "flags": [True, False], "deep": _nested(40),
}
"""Values a store keeps that tell lossy storage apart: 1 and 1.0, -0.0, tuples and lists,
bytes that are no UTF-8 (an Erlang binary that is text reads back as text, so only these are
unambiguous), integers beyond 64 bits, non-ASCII and empty strings, keys that are no strings,
40 levels of nesting."""


VALUE_FIELDS = ("checkpoint", "outcome", "workflow_id", "workflow_version", "kind")
"""The fields that hold what the caller gave."""


@scenario()
def stored_values_come_back_exactly(h: Harness, p: str) -> None:
    """ADK-VALUE-001: the checkpoint, metadata values and outcome read back exactly as given,
    after create, checkpoint and finish (and after reopening, on a durable store)."""
    inv, clause = f"{p}-a", "ADK-VALUE-001"
    meta = create_metadata(h.world.options, {"workflow_id": ("wf", b"\xfe"),
                                             "workflow_version": 2**70, "kind": 1.0})
    with blamed_on(h, clause, VALUE_FIELDS):
        h.apply("client", spec.Create(inv, meta, EXACT))
        h.reached(clause, "a created checkpoint")
        _claimed(h, inv, "c1", token("t1"), 10)
        h.apply("c1", spec.Checkpoint(inv, token("t1"), {**EXACT, "step": 2}, h.now, 10))
        h.reached(clause, "a checkpoint written")
        h.apply("c1", spec.Finish(inv, token("t1"), "completed", {"result": EXACT},
                                  {**EXACT, "step": 3}, h.now))
        h.reached(clause, "a finished checkpoint and outcome")
    if "durable" in h.world.capabilities:
        reopen(h)
        h.reached(clause, "after reopening")
