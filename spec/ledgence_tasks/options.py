"""ledgence-tasks: the choices (:data:`CHOICES`): the one point the seed leaves to the store's
order of checks, ``renew_lookup``, with its readings, its default and the seed's sources."""

from __future__ import annotations

from ..clauses import Choice

_PG = "crates/ledgence-adapter-postgres/src"
RENEW_LOOKUP, CURSOR_FIRST, TASK_FIRST = "renew_lookup", "cursor_first", "task_first"

CHOICES = (
    Choice(
        name=RENEW_LOOKUP,
        doc_says="the traits give renew no order of checks; the kit's reading was the "
        "reads' rule (a task missing in the owner's scope is not_found), as settle and "
        "confirm_quiescence answer",
        implementation_does="renew reads the owner's consumer cursor before the task: unless "
        "that cursor's assignment is the owner's (task, attempt), renew answers ownership_lost, "
        "so a task never minted is ownership_lost; only then is the task looked up (not_found "
        "in another scope)",
        default=CURSOR_FIRST,
        values=(
            (CURSOR_FIRST, "renew: session, then the consumer's cursor names the owner's task "
             "and attempt (else ownership_lost), then the task (else not_found)"),
            (TASK_FIRST, "renew: session, then the task (missing or of another scope: "
             "not_found), then the owner (else ownership_lost)"),
        ),
        source=f"{_PG}/delivery.rs:197-215 at 50df11a (renew_once: session 203, cursor "
        "204-214, task 215); settle_once 229-235 and storage.rs:231-237 at 2b1bcd2 "
        "(confirm_quiescence) load the task first",
    ),
)
