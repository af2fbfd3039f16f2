"""adk-ledger: the clause catalogue (:data:`CLAUSES`, :data:`CATALOGUE_VERSION`): one entry per
rule with its normative sentence, the checks that cover it, the capabilities it requires, the
choice it reads and its situations; and the check names the entries share (``M``, ``ARGS``,
``FAULT_CHECKS``)."""

from __future__ import annotations

from ..clauses import Catalogue, Clause, Situation, situation
from .data import FINISH_PHASES

M = "machine"  # the hypothesis state machine, differential against the model after every step
FAULT_CHECKS = tuple(f"fault:{name}" for name in (
    "create", "claim", "renew", "checkpoint", "finish", "delete"))


_WRITE_OPS = ("renew", "checkpoint", "finish")


ARGS = "scenario:arguments_at_their_edges"
_EDGES = ("a lease_ms of 0", "a negative lease_ms", "a lease_ms that is no integer",
          "a now_ms that is no integer", "an id that is no string", "a token that is no binary")
"""The guard's refusals claim, renew and checkpoint share."""


def _each(template: str, *values: str) -> tuple[str, ...]:
    return tuple(template.format(v) for v in values)


def _c(
    id: str,
    title: str,
    text: str,
    *checks: str,
    requires: tuple[str, ...] = (),
    choice: str | None = None,
    situations: tuple[str | Situation, ...] = (),
) -> Clause:
    return Clause(id, title, text, checks, frozenset(requires), choice, situations)


# The catalogue's version (fencepost.reports.baseline compares reports of one MAJOR only):
# MINOR grows when clauses are added, MAJOR when an existing clause id changes meaning or is
# removed.
CATALOGUE_VERSION = "2.0"  # 2.0: tokens are binaries (bytes admitted), owner is owner_node

CLAUSES = Catalogue(
    [
        _c("ADK-CREATE-001", "create stores a fresh ready record",
           "create of a new id stores phase ready, outcome none, no owner, lease_until 0, "
           "revision 0, the given checkpoint, and created_at = updated_at = the store's clock.",
           M, "scenario:create_then_get", choice="store_clock"),
        _c("ADK-CREATE-002", "create keeps exactly three metadata keys",
           "create keeps workflow_id, workflow_version and kind from the metadata and drops "
           "every other key. Under metadata_keys=required (the seed) every create carries all "
           "three; under optional an absent key reads as none.",
           M, "scenario:create_then_get", choice="metadata_keys",
           situations=("extra keys dropped",
                       situation("an absent key", metadata_keys="optional"))),
        _c("ADK-CREATE-003", "create never overwrites",
           "create of an existing id answers already_exists and writes nothing.",
           M, "scenario:create_twice",
           situations=("over a ready record", "over a running record", "over a finished record")),
        _c("ADK-CREATE-004", "concurrent creates of one id have one winner",
           "Of N concurrent creates of one id exactly one returns ok; the others answer "
           "already_exists, and the record is the winner's.",
           "race:concurrent_creates", requires=("concurrency",)),
        _c("ADK-GET-001", "get of a missing id is not_found",
           "get of an id that was never created, or was deleted, answers not_found.",
           M, "scenario:get_missing"),
        _c("ADK-GET-002", "get agrees with the ledger",
           "get returns the record's view (no token): every field equals what the accepted "
           "operations so far imply.",
           M,
           situations=("a ready record", "a running record", "a finished record")),
        _c("ADK-GET-003", "owned means a token is stored",
           "owned is true while a token is stored, also after the lease expired and before "
           "anybody re-claimed; it is false after create and after finish.",
           M, "scenario:expired_lease_still_owned", choice="owned_view",
           situations=("an expired lease nobody re-claimed",)),
        _c("ADK-CLAIM-001", "claim of a missing id is not_found",
           "claim of an id that does not exist answers not_found.", M,
           "scenario:missing_invocation"),
        _c("ADK-CLAIM-002", "completed is final for claim",
           "claim of a completed invocation answers completed, whatever its lease.",
           M, "scenario:pause_resume_complete"),
        _c("ADK-CLAIM-003", "an unowned invocation is claimable",
           "claim succeeds on an invocation with no token stored in any phase but completed "
           "(ready, failed, timed_out, cancelled, paused).",
           M, "scenario:pause_resume_complete"),
        _c("ADK-CLAIM-004", "a live lease blocks every claimant",
           "While now < lease_until and the owner is not known dead, claim answers "
           "invocation_owned, also for the owner's own token, and changes nothing.",
           M, "scenario:live_owner_blocks_claim_until_boundary",
           situations=("at lease_until - 1", "by the owner's own token", "by another claimant",
                       "a lease that ends at 0 or below")),
        _c("ADK-CLAIM-005", "a lease is expired at lease_until",
           "At now >= lease_until a claim by anybody succeeds (the boundary is expired).",
           M, "scenario:live_owner_blocks_claim_until_boundary",
           situations=("at lease_until exactly", "after lease_until", "by the owner's own token",
                       "by another claimant")),
        _c("ADK-CLAIM-006", "what a successful claim does",
           "A successful claim sets phase running, clears the outcome, stores the new token and "
           "owner, sets lease_until = now + lease_ms and updated_at = now, keeps the checkpoint, "
           "and returns the new view (its owner as ADK-OWNER-001 says).",
           M, "scenario:pause_resume_complete",
           situations=("clears a previous outcome",)),
        _c("ADK-OWNER-001", "owner reads back as the seed's owner_node",
           "Under owner_view=node (the seed) the view's owner is a value of the store's own "
           "(in the seed node(OwnerPid)): present while a token is stored, the same on every "
           "read for one claimant until its record is finished or claimed by another (reopen "
           "included), none after create and after finish. Under owner_view=claimant it is "
           "exactly the owner given to the last successful claim.",
           M, "scenario:pause_resume_complete", choice="owner_view",
           situations=("read after a claim", "cleared by finish")),
        _c("ADK-CLAIM-007", "a dead owner's lease can be taken early",
           "When env.is_alive(owner) is false, claim succeeds before lease_until.",
           M, "scenario:dead_owner_is_replaced_early", requires=("owner_liveness",)),
        _c("ADK-CLAIM-008", "concurrent claimants have exactly one winner",
           "Of N claimants released at once on an expired or unowned invocation, exactly one "
           "succeeds; the others answer invocation_owned.",
           "race:concurrent_claimants", requires=("concurrency",),
           situations=("on an expired lease", "on an unowned record")),
        _c("ADK-WRITE-001", "writes to a missing id are not_found",
           "renew, checkpoint and finish (with a valid phase) of a missing id answer not_found.",
           M, "scenario:missing_invocation",
           situations=_each("{} of a missing id", *_WRITE_OPS)),
        _c("ADK-WRITE-002", "a refused write changes nothing",
           "A refused renew, checkpoint or finish leaves revision, lease_until, checkpoint, "
           "phase, outcome and updated_at unchanged.",
           M, "scenario:expired_owner_cannot_write_at_boundary",
           situations=_each("refused {}", "stale_owner", "lease_expired",
                             "invalid_terminal_phase")),
        _c("ADK-FENCE-001", "a replaced owner is fenced",
           "After a takeover, renew, checkpoint and finish with the previous token answer "
           "stale_owner.",
           M, "scenario:stale_token_cannot_commit_after_takeover",
           situations=_each("{} with the replaced token", *_WRITE_OPS)),
        _c("ADK-FENCE-002", "nobody writes to an unowned record",
           "renew, checkpoint and finish on a ready or finished record answer stale_owner, "
           "whatever the token.",
           M, "scenario:pause_resume_complete",
           situations=(*_each("{} of a ready record", *_WRITE_OPS),
                       *_each("{} of a finished record", *_WRITE_OPS))),
        _c("ADK-FENCE-003", "a wrong token on an expired lease is stale, not expired",
           "When the stored token differs, writes answer stale_owner even if the lease expired.",
           M, "scenario:stale_token_cannot_commit_after_takeover",
           situations=("at lease_until exactly", "after lease_until")),
        _c("ADK-LEASE-001", "an expired owner cannot write",
           "With the stored token at now >= lease_until, renew, checkpoint and finish answer "
           "lease_expired, even when nobody claimed since: an expired token cannot revive itself.",
           M, "scenario:expired_owner_cannot_write_at_boundary",
           situations=("at lease_until exactly", "after lease_until", *_WRITE_OPS)),
        _c("ADK-LEASE-002", "a live owner can write",
           "With the stored token on a running record at now < lease_until (lease_until - 1 "
           "included), renew, checkpoint and finish are accepted.",
           M, "scenario:live_owner_blocks_claim_until_boundary",
           situations=("at lease_until - 1", *_WRITE_OPS)),
        _c("ADK-RENEW-001", "what renew does",
           "renew sets lease_until = now + lease_ms (a smaller value shortens the lease) and "
           "updated_at = now, and changes nothing else but the revision.",
           M, "scenario:renew_can_shorten_lease",
           situations=("shortens the lease", "extends the lease")),
        _c("ADK-RENEW-002", "renew is atomic against a takeover",
           "A renew just before lease_until racing a claim at lease_until: exactly one of them "
           "succeeds.",
           "race:renew_versus_takeover", requires=("concurrency",), choice="renew_atomic"),
        _c("ADK-CKPT-001", "checkpoint replaces the checkpoint and extends the lease",
           "checkpoint replaces the stored checkpoint, sets lease_until = now + lease_ms and "
           "updated_at = now.",
           M, "scenario:reopen_preserves_checkpoint_and_fence",
           situations=("shortens the lease", "extends the lease")),
        _c("ADK-FINISH-001", "finish validates the phase first",
           "finish with a phase outside completed, failed, timed_out, cancelled, paused answers "
           "invalid_terminal_phase before reading the record (also for a missing id).",
           M, "scenario:finish_phase_validated_first", choice="finish_phases",
           situations=("for a missing id", "with the owner's token", "with another token",
                       "an empty phase")),
        _c("ADK-FINISH-002", "what finish does",
           "finish sets the phase, outcome and checkpoint, clears token and owner, sets "
           "lease_until 0 and updated_at = now. The outcome of failed and cancelled is, under "
           "finish_outcome=normalized (the seed), the store's own value: present and the same "
           "on every read until the next claim; under as_given, and for the other phases, "
           "exactly the given outcome.",
           M, "scenario:pause_resume_complete", "scenario:failed_outcome_is_normalized",
           choice="finish_outcome",
           situations=_each("finished {}", *FINISH_PHASES)),
        _c("ADK-FINISH-003", "only completed is final",
           "After finish with failed, timed_out, cancelled or paused the invocation can be "
           "claimed again (resume).",
           M, "scenario:pause_resume_complete",
           situations=_each("claimed after {}", *FINISH_PHASES[1:])),
        _c("ADK-REV-001", "revision counts accepted writes",
           "revision is 0 at create and grows by exactly 1 on every successful claim, renew, "
           "checkpoint and finish.",
           M,
           situations=("claim", *_WRITE_OPS)),
        _c("ADK-DELETE-001", "delete of a missing id is not_found",
           "delete of an id that does not exist answers not_found.", M,
           "scenario:missing_invocation"),
        _c("ADK-DELETE-002", "an unowned record can be deleted",
           "delete removes a record with no token stored, completed records included.",
           M, "scenario:delete_completed", choice="delete_completed",
           situations=("a ready record", "a completed record", "a finished record")),
        _c("ADK-DELETE-003", "a live owner blocks delete",
           "delete of a record whose lease is live by the store's clock (owner not known dead) "
           "answers invocation_owned and removes nothing.",
           M, "scenario:delete_live_owned",
           situations=("at lease_until - 1",)),
        _c("ADK-DELETE-004", "an expired owner does not block delete",
           "delete of a record whose token's lease expired by the store's clock "
           "(clock >= lease_until) removes it.",
           M, "scenario:delete_live_owned", choice="store_clock",
           situations=("at lease_until exactly", "after lease_until")),
        _c("ADK-DELETE-005", "a dead owner does not block delete",
           "delete of a record whose owner is known dead removes it before lease_until.",
           M, "scenario:dead_owner_is_replaced_early", requires=("owner_liveness",)),
        _c("ADK-ARG-001", "create refuses what its guard excludes",
           "create with an id that is no string, or metadata or a checkpoint that is no "
           "mapping, answers invalid_create_arguments and writes nothing; so does an empty id "
           "under empty_strings=refused (the seed), where under accepted it is an id like "
           "any other.",
           M, ARGS, choice="empty_strings",
           situations=("an empty id", "an id that is no string", "metadata that is no mapping",
                       "a checkpoint that is no mapping")),
        _c("ADK-ARG-002", "get and delete take any string as an id",
           "get and delete of an id that is no string answer invalid_invocation_id and change "
           "nothing; an empty id is a string, and not_found when no record has it.",
           M, ARGS,
           situations=("get of an id that is no string", "delete of an id that is no string",
                       "get of an empty id", "delete of an empty id")),
        _c("ADK-ARG-003", "claim refuses what its guard excludes, first",
           "claim with an id or owner that is no string, a token that is neither text nor bytes "
           "(an Erlang binary is either), a now_ms that is no integer, or "
           "a lease_ms that is no positive integer (0, negative, a float) answers "
           "invalid_claim_arguments before the record is read (a missing id too) and changes "
           "nothing; so does an empty token under empty_strings=refused (the seed), and no "
           "longer one: a token of one byte is taken (byte_size(OwnerToken) > 0). No other "
           "argument is refused: an empty id is missing (not_found), and any integer is a "
           "time, so a claim at 0 or below follows the same rules (its lease may end at 0 or "
           "below).",
           M, ARGS, choice="empty_strings",
           situations=(*_EDGES, "an owner that is no string", "an empty token",
                       "a token of one byte", "an empty id", "a now_ms of 0 or below",
                       "for a missing id")),
        _c("ADK-ARG-004", "renew and checkpoint refuse what their guards exclude, first",
           "renew and checkpoint with an id that is no string, a token that is no binary (text "
           "or bytes), a now_ms that is no integer, a lease_ms that is no positive integer, "
           "or (checkpoint) a checkpoint that is no mapping answer invalid_renew_arguments "
           "and invalid_checkpoint_arguments before the record is read (a missing id too), "
           "and change nothing. No other argument is refused: an empty token is a token "
           "nobody holds (stale_owner), an empty id is missing (not_found), a now_ms of 0 or "
           "below is a time.",
           M, ARGS,
           situations=(*_EDGES, "a checkpoint that is no mapping", "an empty token", "an empty id",
                       "a now_ms of 0 or below", "for a missing id")),
        _c("ADK-ARG-005", "finish refuses what its guard excludes, before the phase",
           "finish with a phase that is no string, a checkpoint that is no mapping, a now_ms "
           "that is no integer, an id that is no string or a token that is no binary answers "
           "invalid_finish_arguments before the phase is validated and the record read, and "
           "changes nothing. An empty phase is a string that names no finish phase "
           "(ADK-FINISH-001); an empty token is a token nobody holds (stale_owner); a now_ms "
           "of 0 or below is a time.",
           M, ARGS,
           situations=("a phase that is no string", "a checkpoint that is no mapping",
                       "a now_ms that is no integer", "a token that is no binary",
                       "an id that is no string", "with a phase that is no finish phase too",
                       "an empty token", "an empty id", "a now_ms of 0 or below",
                       "for a missing id")),
        _c("ADK-VALUE-001", "stored values come back exactly",
           "The checkpoint of create, checkpoint and finish, the metadata values kept and the "
           "outcome of a finish stored as given read back exactly as given, for any term the "
           "wire codec carries: 1 and 1.0, tuples and lists, bytes (not UTF-8) and text, "
           "integers beyond 64 bits, non-ASCII and empty strings, keys that are no strings, "
           "deep nesting. A store keeps Erlang terms (mnesia.erl:68, 159, 182-184).",
           "scenario:stored_values_come_back_exactly",
           situations=("a created checkpoint", "a checkpoint written",
                       "a finished checkpoint and outcome",
                       situation("after reopening", "durable"))),
        _c("ADK-LIN-001", "concurrent calls are linearizable",
           "Every answer of a run where several clients call the store at once is the answer "
           "the model gives in one order of the calls that respects real time (a call that "
           "returned before another began comes first): nothing is lost, granted twice or seen "
           "half-done. A call whose connection was lost may have taken effect or not.",
           "concurrent", requires=("concurrency",),
           situations=("a change overlapped another call on its record",)),
        _c("ADK-DURABLE-001", "reopening keeps the ledger and its fences",
           "After the store is closed and reopened with the same env, every record, checkpoint, "
           "token and lease is as before: the old owner keeps writing, a stale one stays fenced.",
           M, "scenario:reopen_preserves_checkpoint_and_fence", requires=("durable",),
           situations=("a live lease kept", "a finished record kept")),
        _c("ADK-FAULT-001", "a database failure surfaces as backend_unavailable",
           "When a statement of an operation fails, or its connection drops before COMMIT or "
           "after COMMIT was sent, the operation answers backend_unavailable, never an answer "
           "it would not give otherwise (not_found, invocation_owned, stale_owner...); ok only "
           "if it is exactly the answer due and its effect is stored.",
           *FAULT_CHECKS, requires=("fault_injection",)),
        _c("ADK-FAULT-002", "a failed operation leaves its before or its after",
           "After an operation met a database failure, every record reads back as it was "
           "either before the operation or after it (after, when it answered ok): never part "
           "of it.",
           *FAULT_CHECKS, requires=("fault_injection",)),
    ]
)
