"""ledgence-tasks: the clause catalogue (:data:`CLAUSES`, :data:`CATALOGUE_VERSION`): one entry
per rule with its normative sentence, its seed source, the checks that cover it, the
capabilities it requires and the choice it reads, each given the situations
:mod:`.situations` names for it; and the check names the entries share (``M``, ``E``,
``FAULT_CHECKS``).
Over 500 lines: one table of the contract's 98 clauses, read in order."""

from __future__ import annotations

import attrs

from ..clauses import Catalogue, Clause
from .options import RENEW_LOOKUP
from .situations import SITUATIONS

M = "machine"
E = "scenario:edges_of_"  # the edge-value scenarios (scenarios/ledgence_tasks/edges.py)
FAULT_CHECKS = tuple(f"fault:{name}" for name in (
    "submit", "acquire", "renew", "settle", "cancel", "expire_batch"))


def _situated(clauses: list[Clause]) -> list[Clause]:
    """Each clause with the situations :data:`SITUATIONS` names for it."""
    return [attrs.evolve(c, situations=SITUATIONS.get(c.id, ())) for c in clauses]


def _c(id: str, title: str, text: str, *checks: str, requires: tuple[str, ...] = (),
       choice: str | None = None) -> Clause:
    return Clause(id, title, text, checks, frozenset(requires), choice)


# The catalogue's version (fencepost.reports.baseline compares reports of one MAJOR only):
# MINOR grows when clauses are added, MAJOR when an existing clause id changes meaning or is
# removed.
CATALOGUE_VERSION = "2.1"  # 2.0: the seed callers' value domain, its refusals as codes;
# 2.1: LDG-DISPATCH-009, the routed queue

CLAUSES = Catalogue(_situated([
    # -- sessions
    _c("LDG-SESSION-001", "a session lasts 24 hours",
       "open_session returns a new session of the given scope, queue and concurrency expiring "
       "at now + 86 400 000.", M, "scenario:sessions_expire_and_never_revive"),
    _c("LDG-SESSION-002", "open_session validates its input",
       "A bad scope or queue (an empty tenant, namespace or queue, one over 128 UTF-8 "
       "bytes), or a concurrency that is not a positive integer (0, -1, \"2\"), answers "
       "invalid_input.", M, "scenario:sessions_expire_and_never_revive",
       f"{E}sessions_and_submissions", f"{E}lengths"),
    _c("LDG-SESSION-003", "extend_session knows its sessions",
       "extend_session of an unknown id answers unknown_session; of a malformed id (empty, "
       "or not a string) invalid_input.", M, "scenario:sessions_expire_and_never_revive",
       f"{E}sessions_and_submissions"),
    _c("LDG-SESSION-004", "an expired session is never revived",
       "extend_session before expires_at sets expires_at = now + 24 h and stores it (a later "
       "call past the expiry it replaced meets the new one); at or after it answers "
       "session_expired.", M, "scenario:sessions_expire_and_never_revive"),
    # -- submission
    _c("LDG-SUBMIT-001", "a submission creates one queued task",
       "accept_resolved_submission of a new key creates a queued task with submitted_at = "
       "available_at = now, no attempts, and exactly one `submitted` history event.",
       M, "scenario:submission_replay_ignores_key_order"),
    _c("LDG-SUBMIT-002", "a replay returns the winner unchanged",
       "A canonically identical submission (key order ignored, defaults explicit) returns the "
       "accepted task as it is now, with its own descriptor; the caller's descriptor never "
       "replaces it, and nothing is written.", M,
       "scenario:submission_replay_ignores_key_order"),
    _c("LDG-SUBMIT-003", "another input under a key conflicts",
       "A different canonical input under an accepted key answers conflict; 1 and 1.0 differ, "
       "and so do 0.0 and -0.0.", M, "scenario:changed_submission_conflicts"),
    _c("LDG-SUBMIT-004", "submissions are validated first",
       "A malformed command or descriptor answers invalid_input, and a descriptor for another "
       "program answers conflict, before anything is read or written: an empty idempotency "
       "key, program id or version, max_attempts outside 1..1000 (0, -1, 1001), a "
       "retry_delay_ms outside 0..86 400 000 (0 is valid), attempt_timeout_ms outside "
       "60 000..86 400 000 (0, -1, 86 400 001), a descriptor of size 0 or less or without a "
       "sha256 digest (\"\" too), data nested deeper than 64 containers, larger than 1 MiB or "
       "holding an integer outside -2^63..2^64-1, a scope or queue holding a noncharacter, a "
       "correlation key over 512 bytes or holding a control character (a Unicode "
       "noncharacter is allowed in it), an idempotency key over 255 bytes, a scope, queue, "
       "program id or version over 128 (every length in UTF-8 bytes, not characters).", M,
       "scenario:changed_submission_conflicts", f"{E}sessions_and_submissions",
       f"{E}lengths"),
    _c("LDG-SUBMIT-005", "keys are scoped",
       "The same idempotency key in another scope makes another task.", M,
       "scenario:submission_replay_ignores_key_order"),
    _c("LDG-SUBMIT-006", "concurrent submissions bind once",
       "Of N concurrent identical submissions of one key, all return the same task and one "
       "`submitted` event is written.", "race:concurrent_submissions",
       requires=("concurrency",)),
    _c("LDG-LOOKUP-001", "lookup reads the binding",
       "lookup_submission returns the task accepted under (scope, key), or none; a bad scope "
       "or key (empty, or longer than 255 UTF-8 bytes) answers invalid_input.", M,
       "scenario:submission_replay_ignores_key_order", f"{E}sessions_and_submissions",
       f"{E}lengths"),
    # -- reads and history
    _c("LDG-READ-001", "reads agree with the task",
       "status, result and inspect of a task in its scope return what the accepted operations "
       "imply: result's outcome is none while queued or active, then {kind: succeeded, "
       "output}, {kind: failed, failure} or {kind: cancelled}; a succeeded or failed outcome "
       "names the last attempt with its quiescence and execution_may_have_started as it "
       "ended, and its failure is the application's error, the failure report's error, phase "
       "and cleanup error, or attempt_lost (the seed's core observation.rs:89-160 at "
       "3abb9ee); status names the latest attempt. A malformed reference (a bad scope, an "
       "empty task id) answers invalid_input for every read, history and cancel.", M,
       "scenario:queued_cancel_is_terminal_and_idempotent", f"{E}reads"),
    _c("LDG-READ-002", "other scopes see not_found",
       "A missing task, or one of another scope, is not_found for every read (inspect_attempt "
       "included) and for cancel.",
       M, "scenario:queued_cancel_is_terminal_and_idempotent"),
    _c("LDG-READ-003", "inspect_attempt shows the attempt",
       "inspect_attempt returns the attempt's event, descriptor, lease, deadlines, state, "
       "last renewal, quiescence, settlement and finished_at; an attempt of another task is "
       "not_found, an empty attempt id invalid_input.", M, "scenario:finish_rules",
       f"{E}reads"),
    _c("LDG-READ-004", "reads never expire anything",
       "An attempt past its expiry still reads as active, with its task active, until a "
       "recovery scan, a cancel or its owner's next call finds it expired.", M,
       "scenario:exact_expiry_rejects_renew_and_settle_and_expires_once"),
    _c("LDG-READ-005", "stored values read back exactly",
       "A task's input data, and a settled attempt's report (a success output, a failure "
       "message, elapsed_ms), read back from every answer that carries them (the submission's "
       "snapshot, inspect, the Assigned event, result, inspect_attempt) exactly as given, "
       "within the seed's JSON domain: "
       "integers and floats apart (1 is not 1.0), -0.0 not 0.0, integers to the i64 and u64 "
       "bounds, any string (non-ASCII, empty, U+0000), 64 nested containers. An integer "
       "outside -2^63..2^64-1 answers invalid_input (LDG-SUBMIT-004).",
       "scenario:stored_values_read_back_exactly"),
    _c("LDG-HISTORY-001", "history is contiguous and paged",
       "history returns the task's events with sequence > after, ascending, at most 100; "
       "sequences start at 1 and have no gaps; replays and no-ops write nothing. An after "
       "that is not an integer >= 0 (-1, True) answers invalid_input.", M,
       "scenario:queued_cancel_is_terminal_and_idempotent",
       "scenario:history_pages_hold_at_most_100", f"{E}reads"),
    _c("LDG-HISTORY-002", "each transition writes its events",
       "Every event names its attempt (none for submitted and for a queued task's cancel) and "
       "the time of the transition: claimed; dispatch_authorized; cancel_requested; "
       "report_accepted; cleanup_confirmed; lease_expired; then exactly one of succeeded, "
       "failed, cancelled, retry_scheduled when an attempt finishes.", M,
       "scenario:finish_rules"),
    # -- cancel
    _c("LDG-CANCEL-001", "a queued task is cancelled at once",
       "cancel of a queued task makes it cancelled now (terminal_at, cancel_requested_at) and "
       "writes `cancel_requested` then `cancelled`.", M,
       "scenario:queued_cancel_is_terminal_and_idempotent"),
    _c("LDG-CANCEL-002", "cancel of a terminal task changes nothing",
       "cancel of a terminal or already cancel-requested task returns its state and writes "
       "nothing.", M, "scenario:queued_cancel_is_terminal_and_idempotent"),
    _c("LDG-CANCEL-003", "cancel of a live attempt only requests it",
       "cancel of an active task whose attempt is live sets cancel_requested_at = now, writes "
       "`cancel_requested`, cuts the authority deadline to min(itself, now + 30 000) and caps "
       "the lease by it, and answers active: the attempt is not finalized yet.", M,
       "scenario:cancel_of_live_attempt_requests_it"),
    _c("LDG-CANCEL-004", "cancel of an expired attempt finalizes it",
       "cancel of an active task whose attempt is no longer live writes `cancel_requested`, "
       "`lease_expired` and `cancelled`, marks the attempt lost and answers cancelled.", M,
       "scenario:cancel_of_expired_attempt_finalizes_it"),
    # -- acquisition
    _c("LDG-ACQ-001", "a claim takes the first eligible task",
       "acquire claims, among the tasks of the command's scope and queue that are queued, not "
       "cancel-requested, with available_at <= now and attempts left, the one first by "
       "(available_at, submitted_at, task_id); a retry is not claimable before its "
       "available_at.", M, "scenario:claim_order_and_eligibility"),
    _c("LDG-ACQ-002", "a claim starts an attempt",
       "The claimed task becomes active with attempt_count + 1 and a new current attempt of "
       "generation attempt_count + 1, deadline = now + attempt_timeout_ms and authority "
       "deadline = deadline + 30 000, owned by the (session, consumer), with state active, "
       "quiescence unconfirmed, execution_may_have_started false and no renewal, settlement "
       "or finished_at; the reply is Assigned with the descriptor, the event (task, run, "
       "attempt, attempt number, scope, data), the lease and its authority; `claimed` is "
       "written.", M,
       "scenario:claim_order_and_eligibility"),
    _c("LDG-ACQ-003", "the lease is capped",
       "A lease granted or renewed expires at min(now + 60 000, authority deadline, session "
       "expiry).", M, "scenario:lease_capped_by_session_expiry"),
    _c("LDG-ACQ-004", "acquisition checks the session first",
       "An unknown session answers unknown_session; an expired one session_expired, before "
       "any replay.", M, "scenario:lease_capped_by_session_expiry"),
    _c("LDG-ACQ-005", "acquisition validates its command",
       "A malformed command (an empty session id or queue, a negative consumer id or "
       "sequence), a scope or queue other than the session's, or a consumer id >= the "
       "session's concurrency answers invalid_input.", M,
       "scenario:acquisition_sequences", f"{E}acquisition_and_dispatch"),
    _c("LDG-ACQ-006", "sequences start at 1",
       "Sequence 0 (whether or not the consumer has a cursor), or a first sequence other "
       "than 1, answers out_of_order.", M,
       "scenario:acquisition_sequences"),
    _c("LDG-ACQ-007", "old sequences are obsolete",
       "A sequence below the consumer's cursor answers obsolete_operation.", M,
       "scenario:acquisition_sequences"),
    _c("LDG-ACQ-008", "gaps are out of order",
       "A sequence more than one above the cursor answers out_of_order; sequences are u64s, "
       "so 2^63 and 2^64 - 1 are above it too.", M, "scenario:acquisition_sequences",
       f"{E}sequences"),
    _c("LDG-ACQ-009", "an Empty replay stays Empty",
       "Repeating the cursor's sequence after an Empty answers Empty again, even when work "
       "has arrived since, and writes nothing.", M, "scenario:acquisition_sequences"),
    _c("LDG-ACQ-010", "a live assignment replays with fresh authority",
       "Repeating the cursor's sequence while its attempt is live answers the same assignment "
       "(its current lease) with authority computed now, and writes nothing.", M,
       "scenario:overtaking_a_live_assignment_is_busy"),
    _c("LDG-ACQ-011", "a lost assignment replays as ownership_lost",
       "Repeating the cursor's sequence once its attempt is no longer live answers the "
       "OwnershipLost reply naming the task and attempt.", M,
       "scenario:overtaking_a_live_assignment_is_busy"),
    _c("LDG-ACQ-012", "overtaking a live assignment is busy",
       "The next sequence while the consumer's previous attempt is live (an unconfirmed "
       "settlement included) answers busy and changes nothing.", M,
       "scenario:overtaking_a_live_assignment_is_busy"),
    _c("LDG-ACQ-013", "Pending changes nothing",
       "probe_acquisition with nothing to claim and finish_empty false answers Pending with "
       "the session's remaining ms; the cursor does not move.", M,
       "scenario:pending_changes_nothing"),
    _c("LDG-ACQ-014", "an empty finish commits Empty",
       "With nothing to claim, acquire (and probe_acquisition with finish_empty) answers Empty "
       "and moves the cursor to the sequence; probe replies say replayed, claimed or "
       "finalized_empty.", M, "scenario:acquisition_sequences"),
    _c("LDG-ACQ-015", "a passed deadline is unavailable, never Empty",
       "probe_acquisition whose deadline is at or before now (0 and negative deadlines "
       "included) answers unavailable and changes nothing, before the command's values are "
       "checked (an empty queue too; what the seed's types cannot hold, as a negative "
       "sequence, is invalid_input first).", M,
       "scenario:pending_changes_nothing", f"{E}acquisition_and_dispatch"),
    _c("LDG-ACQ-016", "each consumer has its own cursor",
       "Sequences are per (session, consumer): one consumer's live assignment or cursor "
       "never makes another consumer busy, obsolete or out of order.", M,
       "scenario:claim_order_and_eligibility"),
    _c("LDG-ACQ-017", "a drained queue hands each task out once",
       "Consumers acquiring concurrently from one queue claim every task at most once per "
       "attempt, and every queued task is claimed.", "race:consumers_drain_a_queue",
       requires=("concurrency",)),
    # -- liveness and authority
    _c("LDG-LIVE-001", "expiry is exact",
       "An attempt is live only while its task is active, it is current and active, now < "
       "lease expiry and now < authority deadline; at equality it is expired for every "
       "operation.", M, "scenario:exact_expiry_rejects_renew_and_settle_and_expires_once"),
    _c("LDG-AUTH-001", "authority is computed fresh",
       "Every authority reports expires_at (the lease's), remaining_ms (expiry - now while "
       "live, else 0), cancel_requested (cancel requested or now >= deadline), "
       "execution_remaining_ms (deadline - now while live and not cancel_requested, else 0: "
       "0 once a cancel is requested or the deadline is reached), renew_sequence (the last "
       "accepted renewal's, else 0) and dispatch_allowed (live, not cancel_requested, no "
       "settlement, and the last renewal's intent was dispatch).", M,
       "scenario:dispatch_renewal_authorizes_once"),
    _c("LDG-OWNER-001", "owner calls find their task",
       "renew, settle and confirm_quiescence with a malformed owner (a bad scope, a negative "
       "generation or consumer id; for renew an empty session id) answer invalid_input; the "
       "owner's other ids are only looked up and compared. settle and confirm_quiescence "
       "with a task missing in the owner's scope, or an attempt that is not one of the "
       "task's (an empty task or attempt id included), answer not_found. renew (option "
       "renew_lookup): cursor_first (the seed) answers ownership_lost unless the owner's "
       "consumer cursor assigned exactly the owner's task and attempt (a task never minted "
       "included), then not_found for a task missing in the owner's scope; task_first "
       "answers not_found for a task missing in the owner's scope before any ownership "
       "check.", M,
       "scenario:settle_conflicts", f"{E}owner_calls", choice=RENEW_LOOKUP),
    # -- renewal
    _c("LDG-RENEW-001", "renew extends a live lease",
       "The next renewal sequence of the exact live owner extends the lease to the capped "
       "expiry, records the renewal and answers the authority.", M,
       "scenario:renewal_replay_does_not_extend"),
    _c("LDG-RENEW-002", "renew needs the exact live owner",
       "An owner that differs in any field from the attempt's, an attempt that is not current, "
       "or one no longer live answers ownership_lost, before any sequence check.", M,
       "scenario:exact_expiry_rejects_renew_and_settle_and_expires_once"),
    _c("LDG-RENEW-003", "renew checks the session first",
       "An unknown owner session answers unknown_session, an expired one session_expired.",
       M, "scenario:lease_capped_by_session_expiry"),
    _c("LDG-RENEW-004", "renewal sequences are ordered",
       "Sequence 0 or one more than one above the last renewal answers out_of_order; one "
       "below it obsolete_operation. Sequences are u64s: 2^63 and 2^64 - 1 are above it.", M,
       "scenario:renewal_replay_does_not_extend", f"{E}sequences"),
    _c("LDG-RENEW-005", "a renewal replay does not extend",
       "Repeating the last renewal (same sequence and intent) answers fresh authority and "
       "leaves the lease as it was.", M, "scenario:renewal_replay_does_not_extend"),
    _c("LDG-RENEW-006", "a renewal sequence binds its intent",
       "The last renewal's sequence with another intent answers conflict.", M,
       "scenario:renewal_replay_does_not_extend"),
    _c("LDG-RENEW-007", "the first dispatch renewal authorizes dispatch once",
       "A dispatch renewal before the deadline, with no cancel requested and no settlement, "
       "sets execution_may_have_started and writes `dispatch_authorized` the first time "
       "only; at the deadline exactly it authorizes nothing.", M,
       "scenario:dispatch_renewal_authorizes_once", "scenario:dispatch_renewal_at_the_deadline"),
    _c("LDG-RENEW-008", "renew validates its command",
       "An intent other than keep_alive or dispatch (\"\" included), or a negative sequence, "
       "answers invalid_input.", M, "scenario:renewal_replay_does_not_extend",
       f"{E}owner_calls"),
    # -- settlement and quiescence
    _c("LDG-SETTLE-001", "settle accepts the live owner's report",
       "A first settlement from the exact live owner is accepted: receipt (operation id, "
       "task, attempt, accepted_at = now), already_accepted false, `report_accepted` "
       "written; the attempt keeps the settlement and its quiescence, and "
       "execution_may_have_started becomes true for a completed report, and for a failure "
       "report that says so (an attempt already marked stays marked); with confirmed "
       "quiescence the attempt finishes at once.", M,
       "scenario:finish_rules"),
    _c("LDG-SETTLE-002", "settle needs the live owner",
       "An owner that differs from the attempt's (in any field: an empty lease or session id "
       "or generation 0 included) answers ownership_lost; so does a matching owner whose "
       "attempt is no longer live and has no settlement.", M,
       "scenario:exact_expiry_rejects_renew_and_settle_and_expires_once", f"{E}owner_calls"),
    _c("LDG-SETTLE-003", "an identical re-send replays",
       "A canonically identical settlement of a settled attempt answers the original receipt "
       "with already_accepted true and the task's current state, even after expiry or a "
       "newer attempt, and writes nothing.", M,
       "scenario:settle_replay_after_retry_leaves_new_attempt"),
    _c("LDG-SETTLE-004", "a different settlement conflicts",
       "Any other settlement (operation id, report or quiescence) of a settled attempt "
       "answers conflict.", M, "scenario:settle_conflicts"),
    _c("LDG-SETTLE-005", "a report names its attempt and program",
       "A report whose context names another task or attempt than its owner, or another "
       "program or digest than the task's descriptor (an empty one included), answers "
       "conflict.", M, "scenario:settle_conflicts", f"{E}owner_calls"),
    _c("LDG-SETTLE-006", "settle validates its command",
       "A malformed settlement (report shape, failure kind or phase, quiescence, the empty "
       "ones included; an empty process id, a negative elapsed_ms; a cleanup error other "
       "than none or {kind, message}) answers invalid_input "
       "before the owner is looked up; an empty operation id, a success output nested more "
       "than 64 containers deep, or a settlement larger than 8 MiB canonically, answers "
       "invalid_input once the owner matched (a failure message "
       "may be empty). An application failure's kind and message are the program's own: "
       "any text, the empty one included, is accepted.", M, "scenario:settle_conflicts",
       f"{E}owner_calls", "scenario:application_failure_kinds"),
    _c("LDG-SETTLE-007", "an unconfirmed settlement keeps the task active",
       "With unconfirmed quiescence the task and attempt stay active (the consumer busy) "
       "until confirm_quiescence or expiry.", M,
       "scenario:unconfirmed_settlements"),
    _c("LDG-QUIESCE-001", "confirmation finishes the attempt",
       "confirm_quiescence of a live, settled, unconfirmed attempt writes `cleanup_confirmed` "
       "and finishes it by its report; it answers the task's state.", M,
       "scenario:unconfirmed_settlements"),
    _c("LDG-QUIESCE-002", "a confirmed attempt is unchanged",
       "confirm_quiescence of an attempt whose quiescence is confirmed answers the task's "
       "state and writes nothing.", M, "scenario:unconfirmed_settlements"),
    _c("LDG-QUIESCE-003", "there is nothing to confirm without a report",
       "confirm_quiescence of a live attempt without a settlement answers invalid_input.",
       M, "scenario:unconfirmed_settlements"),
    _c("LDG-QUIESCE-004", "confirmation needs the live owner",
       "A mismatched owner (an empty lease id or generation 0 included), or an unconfirmed "
       "attempt no longer live, answers ownership_lost.", M,
       "scenario:unconfirmed_settlements", f"{E}owner_calls"),
    # -- the finish rules
    _c("LDG-FINISH-001", "success succeeds",
       "A finished attempt whose report is a success makes the task succeeded (terminal_at "
       "now, outcome {kind: succeeded, output}) and the attempt succeeded.", M,
       "scenario:finish_rules"),
    _c("LDG-FINISH-002", "an application failure fails without retry",
       "A report whose outcome is a failure makes the task and the attempt failed, with "
       "attempts left or not.", M, "scenario:finish_rules"),
    _c("LDG-FINISH-003", "retryable failures retry",
       "An execution failure of kind unavailable, io, capacity, runtime, timed_out or "
       "cancelled, or an attempt lost without a report, requeues the task while "
       "attempt_count < max_attempts: queued, no current attempt, available_at = now + "
       "retry_delay_ms, `retry_scheduled`; the task and run ids stay.", M,
       "scenario:finish_rules"),
    _c("LDG-FINISH-004", "the attempt budget is final",
       "A retryable end with attempt_count = max_attempts fails the task instead.", M,
       "scenario:finish_rules"),
    _c("LDG-FINISH-005", "other failure kinds are final",
       "An execution failure of any other kind fails the task and the attempt.", M,
       "scenario:finish_rules"),
    _c("LDG-FINISH-006", "a cancel request wins",
       "When cancel was requested, a finishing attempt makes the task cancelled whatever its "
       "report; the attempt is cancelled if quiescence was confirmed, else lost.", M,
       "scenario:cancel_of_live_attempt_requests_it"),
    _c("LDG-FINISH-007", "a retry is a new attempt",
       "The claim of a retried task makes a new attempt id, lease and event with the next "
       "generation; the old owner can change nothing.", M,
       "scenario:settle_replay_after_retry_leaves_new_attempt"),
    # -- recovery
    _c("LDG-RECOVER-001", "expire_batch expires due attempts",
       "Each active task whose attempt is expired (now >= lease expiry) gets `lease_expired`, "
       "then finishes by the rules (lost without a report; an accepted report still decides); "
       "the answer counts examined and expired candidates.", M,
       "scenario:expire_batch_is_bounded"),
    _c("LDG-RECOVER-002", "the batch limit is 1..100",
       "expire_batch(0) and expire_batch(101), and a limit that is not an integer (-1, True), "
       "answer invalid_input.", M, "scenario:expire_batch_is_bounded",
       f"{E}listing_and_recovery"),
    _c("LDG-RECOVER-003", "a batch is bounded and earliest first",
       "A scan examines at most `limit` candidates, those with the earliest lease expiry.", M,
       "scenario:expire_batch_is_bounded", "scenario:recovery_takes_the_earliest_expiries"),
    _c("LDG-RECOVER-004", "nothing is finalized twice",
       "A scan never examines a task that is not active with an expired attempt: repeated "
       "scans after a recovery, a settlement or a cancel answer {0, 0} and write nothing.", M,
       "scenario:expire_batch_is_bounded"),
    _c("LDG-RECOVER-005", "concurrent scanners and settlers finalize once",
       "expire_batch scans running concurrently with each other and with settlements "
       "finalize every attempt exactly once and write each finishing event once.",
       "race:scanners_and_settlers", requires=("concurrency",)),
    # -- discovery
    _c("LDG-LIST-001", "a page lists the scope's tasks in order",
       "list_tasks answers the status of each task of the scope, as status() would, in "
       "descending (submitted_at, task_id) order with task ids compared as bytes, at most "
       "`limit` of them (default 50).", M, "scenario:pagination_ties_and_cursors"),
    _c("LDG-LIST-002", "filters select exactly",
       "state, queue, submitted_from (inclusive) and submitted_until (exclusive) filters keep "
       "exactly the matching tasks (submitted_until 0 none, submitted_from 0 all).", M,
       "scenario:pagination_filters", f"{E}listing_and_recovery"),
    _c("LDG-LIST-003", "the empty correlation key is a value",
       "correlation_key \"\" matches only tasks whose key is exactly \"\", not those without "
       "one.", M, "scenario:pagination_filters"),
    _c("LDG-LIST-004", "list queries are validated",
       "A bad scope or filter (a state that is not a task state, \"\" included; a queue "
       "that is no valid identifier: empty, past 128 UTF-8 bytes, holding a noncharacter; a "
       "correlation key past 512 bytes or holding a control character; a negative submission "
       "bound), submitted_from >= submitted_until, or a limit outside 1..100 (-1 included) "
       "answers invalid_input.", M, "scenario:pagination_filters",
       f"{E}listing_and_recovery"),
    _c("LDG-LIST-005", "a next cursor only when more rows existed",
       "next_cursor is present exactly when tasks beyond the page's last item matched; an "
       "exact last page has none.", M, "scenario:pagination_ties_and_cursors"),
    _c("LDG-LIST-006", "a cursor continues strictly after its position",
       "A page read with a cursor starts strictly after the cursor's (submitted_at, task_id), "
       "ties included, whatever the new limit; a cursor within the submission bounds continues "
       "like any other, one at submitted_from (inclusive) too, and so do cursors issued at "
       "timestamp 0 and at MAX_TIMESTAMP_MS (a position admits both ends).", M,
       "scenario:pagination_ties_and_cursors", "scenario:pagination_filters",
       "scenario:pagination_at_the_ends_of_time"),
    _c("LDG-LIST-007", "a cursor is bound to its scope and filters",
       "A cursor used with another scope or other filters, or a value no page issued (\"\" "
       "included), answers invalid_input; so does a well-formed cursor whose position no page "
       "could end at: a timestamp below 0 or past MAX_TIMESTAMP_MS, one outside the filters' "
       "submission bounds, a task id that is not valid text; and so does an issued cursor "
       "changed in its form where the seed's is refused: its hex in uppercase or spaced, a "
       "key or a position part no cursor has, a key twice, a part missing, another version, "
       "a time or a filter bound that is no integer, a filter key no filters have, a scope of "
       "three parts. A well-formed cursor no page issued at a position a page could end at "
       "(timestamp 0) may be refused, or read as that position (the seed reads it: its cursor "
       "carries no proof of issue).", M,
       "scenario:pagination_ties_and_cursors", "scenario:pagination_filters",
       f"{E}listing_and_recovery"),
    _c("LDG-LIST-008", "each page is its own snapshot",
       "A later page shows the tasks as they are when it is read: tasks submitted or changed "
       "between pages move in or out by the filters and the position alone, and a non-null "
       "cursor may lead to an empty page.", M, "scenario:pagination_under_writes"),
    _c("LDG-LIST-009", "a walk under concurrent writers is exact",
       "A walk of every page while other clients submit never returns a task twice, keeps "
       "every page ordered and within the filters, and returns every task that matched "
       "throughout exactly once.", "race:walk_under_submitters",
       requires=("concurrency",)),
    _c("LDG-LIST-010", "other scopes are never listed",
       "No page holds a task of another scope.", M, "scenario:pagination_filters"),
    # -- targeted dispatch
    _c("LDG-DISPATCH-001", "a ready task is claimed at its next generation",
       "claim_dispatch of a queued, available, not cancel-requested task at generation "
       "attempt_count + 1 claims it as acquire does (attempt, lease, authority, `claimed`, "
       "the cursor at the sequence), whatever the queue's order; the reply is Claimed with "
       "the assignment.", M, "scenario:dispatch_dispositions", requires=("dispatch",)),
    _c("LDG-DISPATCH-002", "the current generation is already handed off",
       "A claim of an active task at its current generation answers already_handed_off with "
       "the current attempt, and claims nothing.", M, "scenario:dispatch_dispositions",
       requires=("dispatch",)),
    _c("LDG-DISPATCH-003", "older generations and finished tasks are superseded",
       "A claim of a terminal or cancel-requested task, or at any generation below the "
       "current one (the last handed off or one further behind), answers "
       "terminal_or_superseded and claims nothing.", M,
       "scenario:dispatch_dispositions", requires=("dispatch",)),
    _c("LDG-DISPATCH-004", "a task not yet available is deferred",
       "A claim of a queued task whose available_at is after now answers deferred with that "
       "available_at and claims nothing.", M, "scenario:dispatch_dispositions",
       requires=("dispatch",)),
    _c("LDG-DISPATCH-005", "claim receipts replay exactly",
       "The same command at the same (session, consumer, sequence) answers the first reply "
       "again (a claimed assignment with authority now while live, else OwnershipLost; a "
       "handled one, already handed off, superseded or deferred, as it was); another command "
       "at that sequence, or an acquire of it, answers conflict.", M,
       "scenario:dispatch_receipts", "scenario:dispatch_dispositions", requires=("dispatch",)),
    _c("LDG-DISPATCH-006", "claims are sequenced with acquisition",
       "A claim shares its consumer's sequence with acquire and rechecks the session: "
       "unknown_session, session_expired, obsolete_operation, out_of_order and busy as for "
       "acquire; a handled disposition moves the cursor too.", M,
       "scenario:dispatch_receipts", f"{E}sequences", requires=("dispatch",)),
    _c("LDG-DISPATCH-007", "claims are validated",
       "Sequence 0 or less, a generation outside 1..1000 (0 and -1) or never issued, an empty "
       "task id, or a dispatch in another scope or queue than the consumer's answers "
       "invalid_input; a missing task not_found; "
       "a task of another queue or scope conflict; an active task at its next generation "
       "invalid_input (not issued yet).", M, "scenario:dispatch_dispositions",
       f"{E}acquisition_and_dispatch",
       requires=("dispatch",)),
    _c("LDG-DISPATCH-008", "no silent fallback to a queue scan",
       "A store that does not declare targeted dispatch rejects every claim_dispatch with "
       "invalid_input and claims nothing; one that declares it follows the dispositions.", M,
       "scenario:dispatch_dispositions"),
    _c("LDG-DISPATCH-009", "a routed queue is claimed from, never scanned",
       "A store with targeted dispatch routes the queue `dispatched` of every scope to external "
       "dispatch, and no other: probe_acquisition and acquire on it answer "
       "external_dispatch_required once the session and sequence checks pass (a replay still "
       "replays), claiming and writing nothing; claim_dispatch of a task of any other queue "
       "answers invalid_input once the task is found.", M, "scenario:dispatch_routes",
       requires=("dispatch",)),
    # -- concurrency
    _c("LDG-LIN-001", "concurrent calls are linearizable",
       "Every answer of a run where several clients call the store at once is the answer "
       "the model gives in one order of the calls that respects real time (a call that "
       "returned before another began comes first): nothing is lost, granted twice or seen "
       "half-done. A call whose connection was lost may have taken effect or not.",
       "concurrent", requires=("concurrency",)),
    # -- identity and durability
    _c("LDG-ID-001", "minted identifiers are unique",
       "Every session, task, run, attempt, lease and event id the store mints is new.", M),
    _c("LDG-DURABLE-001", "reopening keeps everything",
       "After a reopen every session, task, attempt, cursor, binding and history event is as "
       "before.", M, "scenario:reopen_keeps_everything", requires=("durable",)),
    # -- database failures
    _c("LDG-FAULT-001", "a database failure surfaces as unavailable",
       "When a statement of an operation fails, or its connection drops before COMMIT or after "
       "COMMIT was sent, the operation answers unavailable (or backend_unavailable), never an "
       "answer it would not give otherwise (Empty, ownership_lost, not_found...); ok only if it "
       "is exactly the answer due and its effect is stored.",
       *FAULT_CHECKS, requires=("fault_injection",)),
    _c("LDG-FAULT-002", "a failed operation leaves its before or its after",
       "After an operation met a database failure, every task, attempt and history reads back "
       "as it was either before the operation or after it (after, when it answered ok): never "
       "part of it.", *FAULT_CHECKS, requires=("fault_injection",)),
    _c("LDG-FAULT-003", "a repeated command reconciles",
       "The same command repeated after a database failure (submission key, acquisition "
       "sequence, renewal sequence, settlement, cancel, recovery batch) answers what it answers "
       "from the state the failure left: the committed answer when the first call committed, "
       "and its effect, history included, happens exactly once.",
       *FAULT_CHECKS, requires=("fault_injection",)),
]))
