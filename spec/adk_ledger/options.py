"""adk-ledger: the choices, each a point where the seed's documentation and its implementation
differ (:data:`CHOICES`), with the readings a store may take and the seed's sources."""

from __future__ import annotations

from ..clauses import Choice

_MNESIA = "hsalap7/erlang_adk src/workflows/durability/adk_invocation_ledger_mnesia.erl"
_BEHAVIOUR = "src/workflows/durability/adk_invocation_ledger.erl"

CHOICES = (
    Choice(
        name="store_clock",
        doc_says="time is explicit (NowMs) on every operation",
        implementation_does="create timestamps and delete's ownership check read the store's clock",
        default="store",
        values=(("store", "create and delete read env.clock(), the injected simulated clock"),),
        source=f"{_MNESIA}:58 (create reads the clock), 348-350 (delete's check reads it); "
        f"{_BEHAVIOUR}:14-43 (no NowMs on create or delete)",
    ),
    Choice(
        name="finish_phases",
        doc_says="finish takes any atom as Phase",
        implementation_does="finish accepts completed, failed, timed_out, cancelled, paused and "
        "answers invalid_terminal_phase otherwise",
        default="strict",
        values=(
            ("strict", "only the five finish phases; others -> invalid_terminal_phase"),
            ("any", "any non-empty phase except ready/running is accepted"),
        ),
        source=f"{_MNESIA}:170-175; {_BEHAVIOUR}:37-38 (Phase :: atom())",
    ),
    Choice(
        name="renew_atomic",
        doc_says="create/claim/checkpoint/finish must be atomic (renew not listed)",
        implementation_does="every operation is one transaction, renew included",
        default="atomic",
        values=(
            ("atomic", "renew racing a takeover: exactly one of them succeeds (checked)"),
            ("non_atomic", "the renew-versus-takeover race is not checked"),
        ),
        source=f"{_MNESIA}:138-148, 285-310 (renew runs in one transaction); "
        f"{_BEHAVIOUR}:3-5",
    ),
    Choice(
        name="delete_completed",
        doc_says="a completed invocation is immutable",
        implementation_does="delete removes completed records like any unowned record",
        default="allowed",
        values=(
            ("allowed", "delete of a completed record succeeds"),
            ("forbidden", "delete of a completed record answers completed"),
        ),
        source=f"{_MNESIA}:197-213, 348 (no token: deleted, whatever the phase)",
    ),
    Choice(
        name="metadata_keys",
        doc_says="create takes Metadata :: map() (any keys)",
        implementation_does="create reads workflow_id, workflow_version and kind with maps:get "
        "and aborts when one is missing; its only caller always passes all three",
        default="required",
        values=(
            ("required", "every create the kit sends carries all three keys"),
            ("optional", "creates may omit keys; an absent key reads as none"),
        ),
        source=f"{_MNESIA}:62-67 (maps:get of each key); "
        "src/workflows/core/adk_workflow_run.erl:324-328 (the caller passes all three); "
        f"{_BEHAVIOUR}:14-15",
    ),
    Choice(
        name="finish_outcome",
        doc_says="finish stores Outcome :: term() as given",
        implementation_does="for failed and cancelled, finish stores a normalized outcome of "
        "its own (the failure projected to a safe reason, with the checkpoint), never the raw "
        "payload; other phases store the outcome as given",
        default="normalized",
        values=(
            ("normalized", "failed/cancelled: the store's own value, present (not none) and "
             "the same on every read and across reopen; other phases: as given"),
            ("as_given", "every phase stores exactly the given outcome"),
        ),
        source=f"{_MNESIA}:177, 338-346 (persisted_outcome); src/workflows/core/"
        "adk_workflow.erl:1776-1788 (terminal_outcome)",
    ),
    Choice(
        name="empty_strings",
        doc_says="InvocationId and OwnerToken are binary(), the empty one included",
        implementation_does="create refuses an empty id (invalid_create_arguments) and claim "
        "an empty token (invalid_claim_arguments); get, delete and the writes take any binary, "
        "the empty one is just no record or no holder",
        default="refused",
        values=(
            ("refused", "create of an empty id and claim with an empty token are refused"),
            ("accepted", "the empty id and the empty token are an id and a token like any "
             "other"),
        ),
        source=f"{_MNESIA}:53 (create: byte_size(InvocationId) > 0), 98 (claim: "
        "byte_size(OwnerToken) > 0), 82, 139, 153, 171, 197 (the others: is_binary only); "
        f"{_BEHAVIOUR}:14, 22 (InvocationId, OwnerToken :: binary())",
    ),
    Choice(
        name="owned_view",
        doc_says="(silent) owned reads as 'somebody holds the lease'",
        implementation_does="owned is true while a token is stored, ignoring expiry",
        default="token_stored",
        values=(
            ("token_stored", "owned = a token is stored"),
            ("live_lease", "owned = a token is stored and now < lease_until (now = env.clock())"),
        ),
        source=f"{_MNESIA}:367 (owned => OwnerToken =/= undefined)",
    ),
    Choice(
        name="owner_view",
        doc_says="(the view's owner_node) the coordinator that holds the invocation",
        implementation_does="claim stores node(OwnerPid) as owner_node: every coordinator on "
        "one node reads back the same value; it is undefined after create and after finish",
        default="node",
        values=(
            ("node", "default, the seed's reading: owner is a value of the store's own for "
             "the claimant, present while a token is stored, the same on every read for one "
             "claimant (reopen included), none after create and finish; which value, and "
             "whether two claimants share it, is the store's"),
            ("claimant", "owner is exactly the owner given to the last successful claim"),
        ),
        source=f"{_MNESIA}:117 (owner_node = node(OwnerPid)), 185-187 (cleared by finish), "
        "368 (shown as owner_node), 333-336 (liveness is asked of the pid, not of "
        "owner_node); src/workflows/core/adk_workflow_run.erl:336 (the caller passes self())",
    ),
)
