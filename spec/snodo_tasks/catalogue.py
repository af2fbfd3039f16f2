"""snodo-tasks: the clause catalogue (:data:`CLAUSES`, :data:`CATALOGUE_VERSION`): one entry per
rule with its normative sentence and seed sources, the checks that cover it, the capabilities
it requires, the option it reads and its situations; the argument and value clauses
(:data:`ARGUMENT_CLAUSES`, :data:`VALUE_CLAUSES`) it includes; and the check names the entries
share (``M``, ``EDGE``, ``FAULT_CHECKS``)."""

from __future__ import annotations

from ..clauses import Catalogue, Clause, Situation, situation
from .data import MAX_RETRY_DELAY_MS, TERMINAL
from .edges import count_edge, text_edge
from .options import CHOICES
from .sources import EVENT, JSON_VALUE, MEMORY, RETRY_POLICY, SQLITE, STORE, TASK, TIMESTAMP, WORK

M = "machine"
FAULT_CHECKS = tuple(f"fault:{name}" for name in (
    "create", "claim", "claim_next", "renew", "release", "transition"))


def _c(id: str, title: str, text: str, *checks: str, requires: tuple[str, ...] = (),
       choice: str | None = None, situations: tuple[str | Situation, ...] = ()) -> Clause:
    return Clause(id, title, text, checks, frozenset(requires), choice, situations)


def _each(template: str, *values: str) -> tuple[str, ...]:
    return tuple(template.format(v) for v in values)


def _readings(case: str, option: str) -> tuple[Situation, ...]:
    """``case`` once per reading of the named option, each reachable only under its own:
    ``"a still clock (millisecond)"`` under committed_at_step=millisecond..."""
    choice = next(c for c in CHOICES if c.name == option)
    return tuple(situation(f"{case} ({value})", **{option: value}) for value, _ in choice.values)


# The seed's guards (store.ex) and validations at every argument's edges: the empty string, 0,
# negative numbers, a value of the wrong type (a float, a bool, a string for a number).
EDGE = "scenario:arguments_at_their_edges"


def _edges(arg: str, prefix: str = "", count: bool = False) -> tuple[str, ...]:
    """Every edge of one argument, as situations: ``claim with an empty owner``..."""
    if count:
        return tuple(f"{prefix}{count_edge(arg, v)}" for v in (0, -1, 1.5))
    return tuple(f"{prefix}{text_edge(arg, v)}" for v in ("", 7))


ARGUMENT_CLAUSES = (
    _c("SNODO-ARG-001", "claim and claim_next take only the seed's argument types",
       "claim with a task id or owner id, or claim_next with an owner id, that is not a "
       "non-empty string, or either with a lease_ms that is not a positive integer (0, "
       "negative, a float, a bool, a string), answers function_clause before anything is "
       "read or claimed: the seed's Store.claim/4 and claim_next/3 have no function clause "
       f"for them ({STORE}:164-166, 177-179). (Behind that guard the seed's stores differ: "
       f"Memory would grant a claim already expired, {MEMORY}:222-234, 611-621; SQLite "
       f"refuses a negative one, {TIMESTAMP}:36-41.)", M, EDGE,
       situations=(*_edges("task id", "claim with "), *_edges("owner", "claim with "),
                   *_edges("lease_ms", "claim with ", count=True),
                   *_edges("owner", "claim_next with "),
                   *_edges("lease_ms", "claim_next with ", count=True))),
    _c("SNODO-ARG-002", "renew takes only a positive lease_ms",
       "renew with a lease_ms that is not a positive integer answers function_clause, "
       "whatever the lease (live, stale or forged), and the claim stays as it was "
       f"({STORE}:186-187; a live lease renewed by 0 would expire at once, "
       f"{MEMORY}:253-265).", M, EDGE,
       situations=(*_edges("lease_ms", count=True), "of a live lease")),
    _c("SNODO-ARG-003", "transition takes only the seed's argument types",
       "transition with a task id that is not a string, an expected_revision that is not a "
       "non-negative integer (-1, a float, a bool, a string) or an authority that is neither "
       "request nor worker authority (a bare lease) answers function_clause before the task "
       f"is read, on a missing task too ({STORE}:210-218). The empty task id passes the "
       "guard: no task has it (not_found; under transition_check_order=authority_first the "
       "authority's refusal may come first).", M, EDGE,
       situations=("a task id that is no string", "a negative expected_revision",
                   "an expected_revision that is no integer",
                   "an authority neither request nor worker", "on a missing task")),
    _c("SNODO-ARG-004", "authorize, get and worker_snapshot take only the seed's types",
       "authorize with an action kind other than create, get, update and cancel, or a task "
       "id that is not a non-empty string, answers function_clause and mints nothing; get "
       "and worker_snapshot with a task id that is not a string answer function_clause "
       f"({STORE}:137-139, 151, 157-158). The empty task id passes get's and "
       "worker_snapshot's guard (SNODO-GET-002, SNODO-WS-001).", M, EDGE,
       situations=("authorize an empty action kind", "authorize an unknown action kind",
                   *_edges("task id", "authorize "),
                   "get of a task id that is no string",
                   "worker_snapshot of a task id that is no string")),
    _c("SNODO-ARG-005", "create takes only a task and work the seed's validation accepts",
       f"create with a work that is no Work answers function_clause ({STORE}:145-146). "
       "create of a task whose status is not one of the five, whose status_message is "
       "neither None nor a string, whose times are not numbers or last_updated_at precedes "
       "created_at, whose ttl_ms or poll_interval_ms is neither None nor a positive integer, "
       "that holds input requests (at creation no key is in use), whose result or error is "
       "neither None nor a JSON-safe mapping (spec.json_safe), or whose payload is not its "
       "status's (working and cancelled: neither; completed: a result, no error; failed: an "
       "error, no result; input_required: impossible without requests); or of work whose "
       "idempotency_key or type is not a non-empty string, whose input is not a JSON-safe "
       f"mapping or whose retry delays are not integers from 0 to {MAX_RETRY_DELAY_MS}, "
       f"answers invalid_task and stores nothing ({TASK}:163-171, 190-248, 311-343; "
       f"{WORK}:91-108; {RETRY_POLICY}:17 and valid_delay?). Under create_validation_order=last "
       "(default) it comes after unauthorized_action, already_exists and "
       "capacity_exceeded; under after_access right after unauthorized_action. A task may "
       "be created completed (with a result), and a retry delay may be 0.", M, EDGE,
       choice="create_validation_order",
       situations=("a work that is no Work", "an empty status", "an unknown status",
                   "a status_message that is no string", "a time that is no number",
                   "last_updated_at before created_at",
                   *_edges("ttl_ms", count=True), *_edges("poll_interval_ms", count=True),
                   "a task created with input requests", "a result or error that is no mapping",
                   "a result or error that is not JSON-safe", "a work input that is not JSON-safe",
                   "a payload that is not its status's",
                   *_edges("idempotency key"), *_edges("work type"),
                   "a work input that is no mapping", "a negative retry delay",
                   "a retry delay that is no integer", f"a retry delay over {MAX_RETRY_DELAY_MS}",
                   situation("an invalid task over an existing id (after_access)",
                             create_validation_order="after_access"))),
    _c("SNODO-ARG-006", "transition takes only an event the seed's validation accepts",
       "Once the authority passed, transition of an event whose id is not a non-empty string "
       "answers invalid_event_id; of an input_requested whose key is not a non-empty string, "
       "invalid_input_key; of an input_responses_accepted with a response key that is not a "
       "non-empty string, invalid_input_responses: before a replay, a reused id, the "
       "revision or a terminal task is looked at, and nothing is stored "
       f"({MEMORY}:319, {SQLITE}:693-725 (Event.validate after the authority); "
       f"{EVENT}:83-100, 171-185, 212-218). An event kind no authority may send, the empty "
       "one included, is unauthorized_action (SNODO-AUTH-001, SNODO-LEASE-006).", M, EDGE,
       situations=(*_edges("event id"), *_edges("input key"),
                   "an empty response key", "over a stale expected_revision",
                   "under an id seen before", "on a terminal task")),
    _c("SNODO-ARG-007", "transition takes only event data the seed's validation accepts",
       "Once the authority passed and the event id is valid, transition answers, in this "
       "order: invalid_event_data for data that is no mapping or whose fields are not "
       "exactly its kind's (input_requested: key, request; input_responses_accepted: "
       "responses; completed: result; retry_requested and failed: error, statusMessage; "
       "cancelled: none), checked before the input key (SNODO-ARG-006); "
       "invalid_input_request for a request that is not a JSON-safe mapping with a "
       "non-empty string method; invalid_input_responses for responses that are not a "
       "JSON-safe mapping, or a response that is no mapping; invalid_task_result for a "
       "result, and invalid_task_error for an error, that is not a JSON-safe mapping; "
       "invalid_status_message for a statusMessage neither None nor a string (after the "
       "error). As SNODO-ARG-006, before a replay, a reused id, the revision or a terminal "
       f"task is looked at, and nothing is stored ({MEMORY}:319 before apply_or_replay "
       f"at 320, which checks the id at 328-334 and the revision at 336; {EVENT}:83-100, "
       f"171-247; {TASK}:174-180; {JSON_VALUE}:67-77). JSON-safe: None, a bool, a string, an "
       "integer, a finite float, a list or a string-keyed mapping of them (spec.json_safe; "
       "no tuple). A kind outside the six is {:unsupported_event_kind, kind} in Event."
       "validate (unsupported_event_kind, payload the kind), but both upstream stores "
       "refuse it at the authority first (unauthorized_action, SNODO-AUTH-001, "
       "SNODO-LEASE-006), so no store answers it from transition.", M, EDGE,
       situations=("event data that is no mapping", "event data missing a field",
                   "event data with an extra field", "an input request that is no mapping",
                   "an input request without a string method",
                   "an input request with an empty method",
                   "an input request that is not JSON-safe", "responses that are no mapping",
                   "responses that are not JSON-safe", "a response that is no mapping",
                   "a result that is no mapping", "a result that is not JSON-safe",
                   "an error that is no mapping", "an error that is not JSON-safe",
                   "a status message that is no string", "over a stale expected_revision",
                   "under an id seen before", "on a terminal task")),
)

VALUE_CLAUSES = (
    _c("SNODO-VALUE-001", "stored values read back exactly",
       "Every value a store keeps from its caller reads back exactly as given, in type and "
       "value, within the seed's JSON-safe domain (spec.json_safe): work.input; a completed "
       "event's result; a failed or retry_requested event's error and statusMessage "
       "(task.error, last_failure); input requests (task.input_requests, input_history); "
       "accepted responses (accepted_input_responses and the transition's effects). 1 and "
       "1.0 are different values; an integer past 2**53 keeps every digit; -0.0 stays -0.0; "
       "non-ASCII and empty strings stay as they are; lists and mappings keep their nesting. "
       f"JSONValue.valid? admits every number and integer size and sets no depth limit "
       f"({JSON_VALUE}:67-77; its decoder refuses integers over 64 digits, 22 and 55-61, so the "
       "kit's stay within 20); the Memory store keeps the terms it is given "
       f"({MEMORY}:176, 344-371), and Erlang keeps -0.0 apart from 0.0 (OTP 27). The kit "
       "nests 64 levels deep.", "scenario:values_read_back_exactly",
       situations=("work input", "a result", "an error and its status message",
                   "a retry's last_failure", "an input request", "an accepted response")),
)

# The catalogue's version (fencepost.reports.baseline compares reports of one MAJOR only):
# MINOR grows when clauses are added, MAJOR when an existing clause id changes meaning or is
# removed.
CATALOGUE_VERSION = "2.0"  # 2.0: the seed callers' value domain, its refusals as codes

CLAUSES = Catalogue([
    _c("SNODO-AUTH-001", "an access is bound to its action",
       "An access authorizes only its own action: create-access cannot read; get-access cannot "
       "send events; only update-access sends input_responses_accepted and only cancel-access "
       "sends cancelled (else unauthorized_action).", M, "scenario:access_bound_to_action",
       situations=("a create-access reads", "a get or create access sends an event",
                   "an update-access cancels", "a cancel-access answers input",
                   "an empty event kind")),
    _c("SNODO-AUTH-002", "an access is bound to its task id",
       "An access for one task id neither reads nor changes another task (not_found for get, "
       "unauthorized_action for create and request transitions).",
       M, "scenario:cross_task_access",
       situations=("get with another task's access", "create with another task's access",
                   "a request with another task's access")),
    _c("SNODO-AUTH-003", "tenants are concealed from each other",
       "A task created in one scope is not_found for every access of another scope, for get "
       "and for request transitions; never data, and never an answer that depends on the "
       "task. Under transition_check_order=row_first (default) a request transition from "
       "another scope is not_found whatever its action; under authority_first an access whose "
       "action or event kind is wrong answers unauthorized_action before the task is read "
       "(the same answer whether the task exists or whose it is), and a right one not_found.",
       M, "scenario:foreign_scope_sees_not_found", "scenario:authority_checked_against_row",
       choice="transition_check_order",
       situations=("get from another scope", "a request from another scope",
                   "between no tenant and a named one", "between the empty tenant and no tenant",
                   *_readings("a wrong action from another scope", "transition_check_order"))),
    _c("SNODO-AUTH-004", "forged and foreign-store values are refused",
       "An access or lease the store never issued, or issued by another store, is refused: "
       "not_found for reads, unauthorized_action for create, stale_lease for worker use "
       "(under transition_check_order=authority_first a value that is no lease at all is "
       "unauthorized_action in a worker transition). In a request transition another "
       "store's access is not_found; a value that is no access at all answers "
       "forged_request_authority's value: unauthorized_action (default) or not_found "
       "(under row_first, a missing task is not_found first).",
       "scenario:forged_and_cross_store_values", "scenario:forged_access_in_transition",
       choice="forged_request_authority",
       situations=("a forged access", "another store's access", "a forged lease",
                   "another store's lease", "a forged request authority on a missing task",
                   *_readings("a forged request authority", "forged_request_authority"))),
    _c("SNODO-CREATE-001", "create stores the task at revision 0",
       "create with a create-access for the task's id stores the task and its work in one step "
       "and returns the snapshot at revision 0 with no retries, inputs or failures.",
       M, "scenario:create_get_claim_complete"),
    _c("SNODO-CREATE-002", "create never overwrites",
       "create of an existing id answers already_exists and changes nothing; when the store "
       "is also at a capacity limit, already_exists comes first under "
       "create_check_order=exists_first (default) and capacity_exceeded under capacity_first; "
       "for an invalid task, already_exists comes first under create_validation_order=last "
       "(default), invalid_task under after_access.",
       M, "scenario:create_get_claim_complete", "scenario:create_in_a_full_store",
       choice="create_check_order",
       situations=("over an active task", "over a terminal task", "over an expired task",
                   situation("an existing id in a full store (exists_first)",
                             create_check_order="exists_first"),
                   situation("an invalid task over an existing id (last)",
                             create_validation_order="last"))),
    _c("SNODO-CREATE-003", "create needs a create-access for that id",
       "create with any other access answers unauthorized_action and stores nothing.",
       M, "scenario:access_bound_to_action",
       situations=("with a get-access", "with an update or cancel access")),
    _c("SNODO-CAP-001", "max_tasks bounds the store",
       "create answers capacity_exceeded(max_tasks) when the stored count (terminal and expired "
       "tasks included until reaped) is at max_tasks; for an id that exists too, only under "
       "create_check_order=capacity_first (else already_exists).", "scenario:capacity_limits",
       "scenario:create_in_a_full_store",
       situations=("the create that fills the store", "a create into a full store",
                   "a terminal task counts", "an expired task counts",
                   situation("an existing id in a full store (capacity_first)",
                             create_check_order="capacity_first"))),
    _c("SNODO-CAP-002", "max_active_tasks_per_scope bounds a tenant",
       "create answers capacity_exceeded(max_active_tasks_per_scope) when the scope's working "
       "and input_required tasks reach the limit; other scopes are unaffected.",
       "scenario:capacity_limits",
       situations=("the create that fills the scope", "a create into a full scope",
                   "another scope at its limit", "a terminal task no longer counts")),
    _c("SNODO-CAP-003", "capacity holds under concurrent creates",
       "Of N concurrent creates against a limit of k free places, exactly k succeed.",
       "race:creates_at_capacity", requires=("concurrency",),
       situations=("racing for max_tasks", "racing for a scope's limit", "a place already taken")),
    _c("SNODO-GET-001", "get returns the current snapshot",
       "get with a get, update or cancel access of the task's scope returns the snapshot the "
       "accepted operations so far imply.", M, "scenario:create_get_claim_complete",
       situations=("through an update or cancel access", "1 ms before the TTL")),
    _c("SNODO-GET-002", "get of a missing task is not_found",
       "get of a task that does not exist (never created or reaped) answers not_found; so "
       "does get of the empty task id, which passes get's guard and no task can have.", M,
       "scenario:ttl_hides_then_reaps", "scenario:arguments_at_their_edges",
       situations=("never created", "a reaped task", "the empty task id")),
    _c("SNODO-TTL-001", "an expired task is hidden from requests",
       "At now >= created_at + ttl_ms, get and request transitions answer not_found, until and "
       "after reaping.", M, "scenario:ttl_hides_then_reaps", "scenario:ttl_of_a_month",
       situations=("get at the TTL exactly", "a request at the TTL exactly", "after the TTL")),
    _c("SNODO-TTL-002", "reap removes exactly the expired aggregates",
       "reap deletes every task with now >= created_at + ttl_ms, whatever its status or claim, "
       "and nothing else; a second reap returns none of them. It returns their ids sorted "
       "under reap_order=task_id (default), or by expiry (created_at + ttl_ms, ties by id) "
       "under reap_order=expiry.", "scenario:ttl_hides_then_reaps",
       "scenario:reap_answers_in_order", "scenario:ttl_of_a_month", choice="reap_order",
       situations=("at the TTL exactly", "1 ms before the TTL", "a claimed task reaped",
                   "a terminal task reaped",
                   *_readings("expiry order differs from id order", "reap_order"),
                   situation("an expiry tie broken by id (expiry)", reap_order="expiry"))),
    _c("SNODO-TTL-003", "a reaped aggregate is gone entirely",
       "After reaping, the id can be created again from scratch: no old claim, generation, "
       "seen event ids or input history survive.", "scenario:ttl_hides_then_reaps",
       situations=("a reaped id created again", "an old lease of a reaped task",
                   "an event id seen before the reap")),
    _c("SNODO-CLAIM-001", "claim of a missing task is not_found",
       "claim of a task that does not exist answers not_found.", M),
    _c("SNODO-CLAIM-002", "terminal tasks are unavailable",
       "claim of a completed, failed or cancelled task answers unavailable.",
       M, "scenario:create_get_claim_complete",
       situations=_each("a {} task", *TERMINAL)),
    _c("SNODO-CLAIM-003", "a due task with no live claim is claimable",
       "claim succeeds on a non-terminal task with work, no retry pending and no live claim; "
       "it returns the snapshot at an unchanged revision and a new lease.",
       M, "scenario:create_get_claim_complete",
       situations=("a released task", "a task whose retry fell due")),
    _c("SNODO-CLAIM-004", "a live claim makes the task unavailable",
       "While a claim is live (now < its expiry), claim answers unavailable.",
       M, "scenario:create_get_claim_complete",
       situations=("1 ms before expiry", "by the same owner")),
    _c("SNODO-CLAIM-005", "a claim expires exactly at its expiry",
       "At now >= expiry the task can be claimed again, at a higher generation.",
       M, "scenario:renew_boundary_exact",
       situations=("at the expiry exactly", "after the expiry")),
    _c("SNODO-CLAIM-006", "a pending retry defers claim by the exact remaining ms",
       "While now < retry_at, claim answers deferred(ceil(retry_at - now)) (deferred(1) one ms "
       "before; a retry_at with a us part rounds up too), checked before the live-claim "
       "check; at retry_at the task is due.",
       M, "scenario:retry_defers_claims", "scenario:retry_at_the_longest_delay",
       situations=("1 ms before retry_at", "at retry_at exactly", "over a live claim",
                   situation("a retry_at with a us part (microsecond)",
                             committed_at_step="microsecond"))),
    _c("SNODO-CLAIM-007", "claim_next picks only recoverable tasks",
       "claim_next returns a task that is non-terminal, has work, has its retry due and no live "
       "claim (any such task; the order is the store's), or nothing when none is.",
       M, "scenario:release_then_claim_next", "scenario:claim_next_among_several",
       situations=("nothing recoverable", "several recoverable, id order not creation order",
                   "passes a deferred task over", "passes a claimed task over",
                   "takes an expired claim")),
    _c("SNODO-CLAIM-008", "racing claimers have one winner",
       "Of N concurrent claims of one task exactly one succeeds; the rest answer unavailable.",
       "race:racing_claimers", requires=("concurrency",),
       situations=("a fresh task", "an expired claim", "a released task", "a retry just due")),
    _c("SNODO-LEASE-001", "every claim fences the earlier leases",
       "After a re-claim, every lease of an earlier claim is stale_lease for renew, release, "
       "worker_snapshot and worker transitions. A worker transition of such a lease with a "
       "request kind is stale_lease under transition_check_order=row_first (default) and "
       "unauthorized_action under authority_first (the kind is checked before the claim); on "
       "a missing task it is not_found under row_first. (The seed fences by the claim's "
       "generation, which its lease carries; the kit sees a lease only whole, so how a store "
       "fences is its own.)", M, "scenario:old_lease_is_stale",
       "scenario:authority_checked_against_row", choice="transition_check_order",
       situations=(*_each("{} by a fenced lease", "renew", "release", "a worker event"),
                   "the same owner's older lease",
                   *_readings("a fenced lease sends a request kind", "transition_check_order"))),
    _c("SNODO-LEASE-002", "renew replaces the lease",
       "renew of a valid, unexpired lease returns a lease with expiry now + lease_ms (which may "
       "shorten it) and leaves the task and revision unchanged; the lease it replaced is "
       "stale. When now + lease_ms equals the old expiry, under "
       "same_expiry_renewal=identical (default) the same lease comes back and the old value "
       "stays valid; under successor the expiry moves 1 us (0.001 ms) past the old one, so "
       "the old value is stale and the claim stays live through the old expiry's ms.",
       M, "scenario:renew_boundary_exact", "scenario:renew_to_the_same_expiry",
       choice="same_expiry_renewal",
       situations=("shortens the lease", "extends the lease", "the replaced value used",
                   *_readings("a renewal to the same expiry", "same_expiry_renewal"),
                   situation("live in the old expiry's ms (successor)",
                             same_expiry_renewal="successor"))),
    _c("SNODO-LEASE-003", "an expired lease cannot be renewed",
       "At now >= expiry, renew, worker_snapshot and worker transitions answer stale_lease.",
       M, "scenario:renew_boundary_exact",
       situations=("renew at the expiry exactly", "a worker event at the expiry exactly",
                   "after the expiry")),
    _c("SNODO-LEASE-004", "release needs identity only",
       "release of the current claim's lease succeeds even after expiry and frees the task; a "
       "second release, or a release by a replaced lease, answers stale_lease.",
       M, "scenario:release_then_claim_next",
       situations=("after the expiry", "a second release")),
    _c("SNODO-LEASE-005", "a lease binds its task",
       "A lease for one task is stale_lease for worker_snapshot and transitions of another.",
       M, "scenario:forged_and_cross_store_values",
       situations=("worker_snapshot of another task", "a worker event on another task",
                   "a worker event on a missing task")),
    _c("SNODO-LEASE-006", "a lease is not request access",
       "A worker lease cannot send input_responses_accepted or cancelled (unauthorized_action).",
       M, "scenario:access_bound_to_action",
       situations=("a lease answers input", "a lease cancels", "a lease sends an empty kind")),
    _c("SNODO-WS-001", "worker_snapshot reads through a live lease",
       "worker_snapshot with the current, unexpired lease returns the snapshot; missing task "
       "-> not_found (the empty task id included).", M, "scenario:old_lease_is_stale",
       "scenario:arguments_at_their_edges",
       situations=("a missing task", "1 ms before expiry", "the empty task id")),
    _c("SNODO-TX-001", "a stale expected revision conflicts",
       "transition with expected_revision != the current revision answers conflict carrying "
       "the current snapshot, and changes nothing.", M, "scenario:two_writers_one_revision",
       situations=("a revision behind", "a revision ahead")),
    _c("SNODO-TX-002", "an applied event adds exactly one revision",
       "An applied event raises the revision by exactly 1 and sets last_updated_at = "
       "committed_at; event_revision is the new revision.", M,
       "scenario:create_get_claim_complete"),
    _c("SNODO-TX-003", "a replayed event is a duplicate with the original result",
       "An event id seen before with the identical event answers duplicate with the original "
       "event_revision, effects and committed_at, whatever expected_revision is.",
       M, "scenario:create_get_claim_complete",
       situations=("the same expected_revision", "a different expected_revision",
                   "a request event replayed")),
    _c("SNODO-TX-004", "an event id is never reused for another event",
       "An event id seen before with a different event answers event_id_reused. Events are "
       "compared exactly, as the seed's pin (^event, memory.ex:329): data with 1.0 where the "
       "first had 1, or true where it had 1, is another event.", M,
       "scenario:event_ids_compared_exactly",
       situations=("another kind", "the same kind, other data",
                   "data equal only loosely (1 and 1.0)")),
    _c("SNODO-TX-005", "committed_at never goes backwards",
       "committed_at = now, or, when the clock did not move past last_updated_at, "
       "last_updated_at + 1 (committed_at_step=millisecond, default) or last_updated_at + "
       "0.001 (microsecond).", M, "scenario:commits_past_a_still_clock",
       choice="committed_at_step",
       situations=("the clock moved on", *_readings("a still clock", "committed_at_step"))),
    _c("SNODO-TX-006", "concurrent writers at one revision: one applies",
       "Two writers with the same expected revision: exactly one is applied, the other "
       "answers conflict.", "race:two_writers_one_revision", requires=("concurrency",),
       situations=("an input answer among them", "a cancel among them")),
    _c("SNODO-RED-001", "terminal tasks never change",
       "Any event on a completed, failed or cancelled task is unchanged: no revision, no "
       "history, no field changes.", M, "scenario:create_get_claim_complete",
       situations=_each("a {} task", *TERMINAL)),
    _c("SNODO-RED-002", "input requests open once per key",
       "input_requested with a key never used sets status input_required and records the "
       "request; a key used before answers duplicate_input_key.", M,
       "scenario:input_round_trip",
       situations=("a key still open", "a key answered before")),
    _c("SNODO-RED-003", "input responses close outstanding requests",
       "input_responses_accepted takes only outstanding keys (none -> unchanged); when none "
       "remain outstanding the status returns to working.", M, "scenario:input_round_trip",
       situations=("no outstanding key matched", "some keys left open",
                   "the last open key answered")),
    _c("SNODO-RED-004", "retry follows the exact delay list",
       "retry_requested with a delay left: retry_count + 1, retry_at = committed_at + "
       "delays[retry_count], last_failure set, status unchanged. A delay of 0 is a delay "
       "(the retry is due at committed_at), not an exhausted policy; the longest delay, "
       f"{MAX_RETRY_DELAY_MS} ms, the cap the seed's exponential policies reach by default, "
       "is kept whole.", M,
       "scenario:retry_defers_claims", "scenario:arguments_at_their_edges",
       "scenario:retry_at_the_longest_delay",
       situations=("the first delay", "a later delay", "a delay of 0", "the longest delay")),
    _c("SNODO-RED-005", "an exhausted retry fails the task",
       "retry_requested with no delay left fails the task with the event's error and status "
       "message; retry_at is cleared and retry_count unchanged.", M,
       "scenario:retry_defers_claims",
       situations=("no policy at all", "the policy used up")),
    _c("SNODO-RED-006", "terminal events set exactly their payload",
       "completed sets the result (status message cleared), failed the error and message, "
       "cancelled the message 'Cancellation requested'; each clears retry_at and inputs.",
       M, "scenario:create_get_claim_complete",
       situations=("with an open input request", "with a retry pending")),
    *ARGUMENT_CLAUSES,
    *VALUE_CLAUSES,
    _c("SNODO-LIN-001", "concurrent calls are linearizable",
       "Every answer of a run where several clients call the store at once is the answer "
       "the model gives in one order of the calls that respects real time (a call that "
       "returned before another began comes first): nothing is lost, granted twice or seen "
       "half-done. A call whose connection was lost may have taken effect or not.",
       "concurrent", requires=("concurrency",),
       situations=("a change overlapped another call on its record",)),
    _c("SNODO-DURABLE-001", "a reopen keeps every record and fences what came before",
       "A reopen is a restart of the store: every task, its work, revision, lease generation "
       "and seen event ids read back as before, while every access and lease issued before is "
       "void (get answers not_found, create unauthorized_action, a worker call stale_lease). "
       "A claim made before stays live until its deadline (reopen_claims=kept, the SQL "
       "stores') or is released, its task claimable at once at the next generation "
       "(reopen_claims=released, the DETS store's boot epoch). A store opened while another "
       "is open is no restart: another connection to the same store, it honours the accesses "
       "and leases the other issued, and they its, also once a third has closed.", M,
       "scenario:reopen_fences_the_last_boot", "scenario:stores_open_together_share_values",
       requires=("durable",), choice="reopen_claims",
       situations=("an access of the last boot refused", "a lease of the last boot fenced",
                   "a claim of the last boot met",
                   "a value honoured after another store closed")),
    _c("SNODO-FAULT-001", "a database failure surfaces as backend_unavailable",
       "When a statement of an operation fails, or its connection drops before COMMIT or after "
       "COMMIT was sent, the operation answers backend_unavailable, never an answer it would "
       "not give otherwise (not_found, unavailable, stale_lease, an empty claim_next...); ok "
       "only if it is exactly the answer due and its effect is stored.",
       *FAULT_CHECKS, requires=("fault_injection",)),
    _c("SNODO-FAULT-002", "a failed operation leaves its before or its after",
       "After an operation met a database failure, every task reads back as it was either "
       "before the operation or after it (after, when it answered ok): never part of it.",
       *FAULT_CHECKS, requires=("fault_injection",)),
])
