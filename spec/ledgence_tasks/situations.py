"""The situations of the ledgence-tasks clauses: the cases that put each rule to the test.

A clause whose rule has more than one case names them here (``Clause.situations``): the
liveness boundaries met 1 ms before, exactly and 1 ms after; which of the three bounds caps a
lease; the cursor an acquisition meets; how an attempt finishes; which bound of a batch or a
history page is reached and which exceeded by one; and, for LDG-OWNER-001, each reading of
``renew_lookup``. ``model/ledgence_tasks/situations.py`` names those each agreed step reached;
a run that misses one passes the clause only weakly. A clause with one case names none.
"""

from __future__ import annotations

from ..clauses import Situation, situation
from .delivery import HISTORY_REASONS, RETRYABLE_FAILURE_KINDS

BEFORE, AT, AFTER = ("1 ms before the lease expiry", "at the lease expiry exactly",
                     "1 ms after the lease expiry")
PAST = "after the lease expiry"
AT_SESSION, PAST_SESSION = "at the session expiry exactly", "after the session expiry"
EMPTY, ASSIGNED = "after an Empty", "after an assignment"
DISPATCH_AT_DEADLINE = ("a first dispatch 1 ms before the deadline",
                        "a first dispatch at the deadline exactly",
                        "a first dispatch 1 ms after the deadline")
UNISSUED_POSITIONS = ("a well-formed cursor at timestamp -1",
                      "a well-formed cursor before submitted_from",
                      "a well-formed cursor at submitted_until",
                      "a well-formed cursor past submitted_until",
                      "a well-formed cursor past MAX_TIMESTAMP_MS")
MALFORMED_CURSORS = ("an issued cursor in uppercase", "a cursor with a key no cursor has",
                     "a cursor of version 2", "a cursor whose time is a float",
                     "a cursor whose task id is empty", "a cursor whose task id holds NUL",
                     "a cursor whose position has a third part",
                     "a cursor whose position lacks its task id",
                     "a cursor whose filters have a key no filters have",
                     "a cursor whose scope has three parts",
                     "a cursor lacking its version",
                     "an issued cursor with a space in its hex",
                     "an issued cursor with its version twice",
                     "a cursor whose filter bound is a float")
"""Issued cursors changed in a way the seed's ``decode_cursor`` refuses
(``crates/ledgence-orchestration-api/src/discovery.rs`` at 9f0c292: lowercase hex digits only,
no key twice (its tests at 617473e),
``deny_unknown_fields`` on the cursor, its filters and its position, a two-field ``Scope``,
version 1, each of the cursor's four fields present (none is an ``Option``), ``Timestamp``
integers, a task id its ``validate_text`` takes, ``lib.rs`` at 06e3b0e: not empty, no control
character)."""
FORGED_AT_ZERO = "a well-formed cursor at timestamp 0, never issued"
"""A position a page could end at, in the issued cursor's own encoding: the seed reads it as
that position (``TaskPosition::validate`` takes 0), a store that keeps its cursors refuses it."""
ISSUED_AT_THE_ENDS = ("a cursor issued at timestamp 0", "a cursor issued at MAX_TIMESTAMP_MS")
"""Walks on a store whose clock starts at either end of the timestamps a position admits (the
seed's ``TaskPosition::validate``: 0 through MAX_TIMESTAMP_MS, both included)."""
HANDLED_REPLAYS = ("an already_handed_off claim replayed", "a superseded claim replayed",
                   "a deferred claim replayed")
"""A claim that claimed nothing keeps its receipt too: sent again, it is replayed."""
EXACT_VALUES = ("1 and 1.0 apart", "-0.0 apart from 0.0", "integers at the i64 and u64 bounds",
                "non-ASCII, empty and NUL strings", "64 nested containers")
DEEP_OUTPUT = "a success output nested 65 deep"
EXTENSION_READ_BACK = "extended again past the expiry an extension replaced"
OUTCOME_READ_BACKS = ("an outcome finished with quiescence unconfirmed",
                      "an outcome marked started by a dispatch renewal alone",
                      "an execution failure with its phase and cleanup error",
                      "an attempt lost on the last attempt")
"""What a finished task's outcome carries besides its output (the seed's ``TaskOutcome``):
the last attempt's quiescence and execution_may_have_started as it ended, the failure
report's phase and cleanup error, the lost attempt's own failure."""
OVERLAPPED = "a change overlapped another call on its record"  # the runner counts it
BY_ID = "the earliest expiries are not the lowest ids"
BY_SUBMISSION = "the earliest expiries are not the first submitted"


def _renew_readings(case: str) -> tuple[Situation, ...]:
    return tuple(situation(f"{case} ({value})", renew_lookup=value)
                 for value in ("cursor_first", "task_first"))


SITUATIONS: dict[str, tuple[str | Situation, ...]] = {
    # sessions and submission
    "LDG-SESSION-002": ("a bad scope", "a bad queue", "concurrency 0"),
    "LDG-SESSION-003": ("an unknown id", "a malformed id"),
    "LDG-SESSION-004": ("1 ms before expires_at", "at expires_at exactly", "after expires_at",
                        EXTENSION_READ_BACK),
    "LDG-SUBMIT-002": ("another descriptor given", "a task changed since"),
    "LDG-SUBMIT-003": ("data equal as Python values", "another field"),
    "LDG-SUBMIT-004": ("a malformed command", "another program's descriptor"),
    "LDG-LOOKUP-001": ("a bound key", "an unbound key"),
    # reads and history
    "LDG-READ-001": ("a queued task", "an active task", "a succeeded task", "a failed task",
                     "a cancelled task", *OUTCOME_READ_BACKS),
    "LDG-READ-002": ("a missing task", "another scope's task",
                     "inspect_attempt in another scope", "cancel in another scope"),
    "LDG-READ-003": ("the current attempt", "an earlier attempt", "another task's attempt"),
    "LDG-READ-004": (AT, PAST),
    "LDG-READ-005": (*(f"task input: {case}" for case in EXACT_VALUES),
                     "a success output read back", "a failure message read back",
                     "a report's elapsed_ms past the i64s"),
    "LDG-HISTORY-001": ("after 0", "after inside the history", "after the last event",
                        "exactly 100 events after", "101 events after", "a negative after"),
    "LDG-HISTORY-002": tuple(f"`{reason}` written" for reason in HISTORY_REASONS),
    # cancel
    "LDG-CANCEL-002": ("a succeeded task", "a failed task", "a cancelled task",
                       "a cancel-requested task"),
    "LDG-CANCEL-003": ("the deadline cut to now + 30 000", "a deadline already within 30 000",
                       BEFORE),
    "LDG-CANCEL-004": (PAST, "with an accepted report"),
    # acquisition
    "LDG-ACQ-001": ("a retry not yet due passed over", "another queue's or scope's task "
                    "passed over", "available_at order unlike submission order"),
    "LDG-ACQ-003": ("a claim capped by now + 60 000", "a claim capped by the session expiry",
                    "a renewal capped by now + 60 000",
                    "a renewal capped by the authority deadline",
                    "a renewal capped by the session expiry"),
    "LDG-ACQ-004": ("an unknown session", AT_SESSION, PAST_SESSION, "a replay refused"),
    "LDG-ACQ-005": ("another scope than the session's", "another queue than the session's",
                    "a consumer id at the concurrency"),
    "LDG-ACQ-006": ("sequence 0", "sequence 0 beside a cursor", "a first sequence other than 1"),
    "LDG-ACQ-007": (EMPTY, ASSIGNED),
    "LDG-ACQ-008": (EMPTY, ASSIGNED),
    "LDG-ACQ-009": ("work arrived since", "a probe without finish_empty"),
    "LDG-ACQ-010": ("by acquire", "by probe_acquisition", "after a renewal", BEFORE),
    "LDG-ACQ-011": (PAST, "a finished attempt"),
    "LDG-ACQ-012": ("a live assignment", "an unconfirmed settlement"),
    "LDG-ACQ-014": ("by acquire", "by probe_acquisition"),
    "LDG-ACQ-015": ("a deadline at now", "a deadline before now"),
    "LDG-ACQ-016": ("beside another consumer's live assignment",
                    "a first sequence other than 1 beside another cursor"),
    "LDG-ACQ-017": ("a wave claiming one task each", "a wave finding the queue empty"),
    # liveness and authority
    "LDG-LIVE-001": (BEFORE, AT, AFTER, "at the authority deadline exactly",
                     "renew at the expiry", "settle at the expiry",
                     "confirm_quiescence at the expiry", "cancel at the expiry",
                     "an acquisition replay at the expiry", "a scan at the expiry"),
    "LDG-AUTH-001": ("while live", "after a cancel request",
                     "past the deadline, the lease still live", "dispatch allowed"),
    "LDG-OWNER-001": ("a malformed owner", "a task of another scope", "a task never minted",
                      "an attempt never minted",
                      *_renew_readings("renew: a task never minted")),
    # renewal
    "LDG-RENEW-001": ("keep_alive", "a later dispatch renewal", BEFORE),
    "LDG-RENEW-002": ("an owner that differs", "a superseded attempt", "a finished attempt",
                      PAST, "a replay after the expiry", "a replay after a retry"),
    "LDG-RENEW-003": ("an unknown session", AT_SESSION, PAST_SESSION),
    "LDG-RENEW-004": ("sequence 0", "a gap", "one below the last"),
    "LDG-RENEW-005": ("keep_alive", "dispatch"),
    "LDG-RENEW-006": ("a dispatch at a keep_alive's sequence",
                      "a keep_alive at a dispatch's sequence"),
    "LDG-RENEW-007": ("the first", "once already authorized", *DISPATCH_AT_DEADLINE,
                      "after a cancel request", "after a settlement"),
    "LDG-RENEW-008": ("another intent", "a negative sequence"),
    # settlement and quiescence
    "LDG-SETTLE-001": ("a success report", "a failure that started",
                       "a failure that never started",
                       "a never-started failure after a dispatch renewal", "unconfirmed"),
    "LDG-SETTLE-002": ("an owner that differs", PAST, "an attempt lost to recovery"),
    "LDG-SETTLE-003": ("while live", "after it finished", PAST, "after a retry"),
    "LDG-SETTLE-004": ("another operation id", "another report", "another quiescence"),
    "LDG-SETTLE-005": ("another attempt", "another program", "another digest"),
    "LDG-SETTLE-006": ("a malformed report", "an unknown failure kind", "a bad quiescence",
                       "over 8 MiB", DEEP_OUTPUT,
                       "an application failure of the program's own kind"),
    "LDG-QUIESCE-001": ("a success report", "a retryable failure"),
    "LDG-QUIESCE-004": ("an owner that differs", PAST),
    # the finish rules
    "LDG-FINISH-001": ("by settle", "by confirm_quiescence", "by a scan"),
    "LDG-FINISH-002": ("attempts left", "the last attempt"),
    "LDG-FINISH-003": (*RETRYABLE_FAILURE_KINDS, "lost without a report"),
    "LDG-FINISH-004": ("a retryable failure", "a lost attempt"),
    "LDG-FINISH-005": ("in execution", "before execution"),
    "LDG-FINISH-006": ("quiescence confirmed", "quiescence unconfirmed"),
    "LDG-FINISH-007": ("a retry claimed by acquire",
                       situation("a retry claimed by claim_dispatch", "dispatch"),
                       "the old owner refused"),
    # recovery
    "LDG-RECOVER-001": ("without a report", "with an unconfirmed report",
                        "a cancel-requested task", "several due at once"),
    "LDG-RECOVER-002": ("limit 0", "limit 101"),
    "LDG-RECOVER-003": ("as many due as the limit", "one more due than the limit", BY_ID,
                        BY_SUBMISSION),
    "LDG-RECOVER-004": ("after a recovery", "after a settlement", "after a cancel"),
    "LDG-RECOVER-005": ("a scan racing a cancel", "a scan racing a settlement"),
    # discovery
    "LDG-LIST-001": ("ties on submitted_at", "limit 1", "limit 100", "the default limit"),
    "LDG-LIST-002": ("state", "queue", "submitted_from met exactly",
                     "submitted_until met exactly"),
    "LDG-LIST-004": ("limit 0", "limit 101", "submitted_from >= submitted_until",
                     "a bad filter"),
    "LDG-LIST-005": ("an exact last page", "one row beyond the page"),
    "LDG-LIST-006": ("ties across the cursor", "a new limit", "a cursor at submitted_from",
                     *ISSUED_AT_THE_ENDS),
    "LDG-LIST-007": ("another scope", "other filters", "a value no page issued",
                     *UNISSUED_POSITIONS, *MALFORMED_CURSORS, FORGED_AT_ZERO),
    # targeted dispatch
    "LDG-DISPATCH-003": tuple(situation(s, "dispatch") for s in (
        "a terminal task", "a cancel-requested task", "an older generation",
        "a generation behind the last handed off", "an older generation of an active task")),
    "LDG-DISPATCH-005": tuple(situation(s, "dispatch") for s in (
        "a live claim replayed", "a lost claim replayed", "another command at the sequence",
        "an acquire at a claimed sequence", *HANDLED_REPLAYS)),
    "LDG-DISPATCH-006": tuple(situation(s, "dispatch") for s in (
        "an unknown session", "an expired session", "out of order", "busy")),
    "LDG-DISPATCH-007": tuple(situation(s, "dispatch") for s in (
        "sequence 0", "a generation out of range", "a generation never issued",
        "a missing task", "a dispatch in another queue than the consumer's",
        "the next generation of an active task")),
    "LDG-DISPATCH-009": tuple(situation(s, "dispatch") for s in (
        "an acquire on the routed queue", "a probe on the routed queue",
        "a claim of a task of another queue")),
    # concurrency
    "LDG-LIN-001": (situation(OVERLAPPED, "concurrency"),),
}
