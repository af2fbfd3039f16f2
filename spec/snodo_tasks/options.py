"""snodo-tasks: the options. :data:`CHOICES` names each point where the seed's own stores
disagree (its readings, its default, the sources), :func:`option` reads one from a store's
``env.options``, :data:`SETTINGS` are the capacity limits, and :func:`microsecond_after` is
the seed SQLite store's time step that one reading follows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..clauses import Choice, Setting
from .sources import (
    DETS,
    DETS_TEST,
    MEMORY,
    SNAPSHOT,
    SQLITE,
    TIMESTAMP,
)


def microsecond_after(ms: float) -> float:
    """The time 1 us after ``ms``, in ms: the seed SQLite store's step (its timestamps count
    whole microseconds, timestamp.ex:44). Computed from the whole number of microseconds, so
    that any number of steps gives the float nearest the exact decimal (``1000.002``, never
    the running sum ``1000.0020000000001``), as an adapter counting microseconds answers."""
    return (round(ms * 1000) + 1) / 1000


# Where the seed's own stores disagree. Each default is what the upstream stores share or,
# failing that, the reference store's reading (the upstream Memory store); it says which.
CHOICES = (
    Choice(
        name="same_expiry_renewal",
        doc_says="Memory: a renewal whose new expiry (now + lease_ms) equals the old one hands "
        "back the identical lease, and the value renewed stays valid",
        implementation_does="SQLite: such a renewal moves the expiry to its successor (1 us "
        "later), so the value renewed goes stale",
        default="identical",
        values=(
            ("identical", "default, the reference (Memory) store's reading: the same lease "
             "comes back; the old value stays valid"),
            ("successor", "the SQLite store's reading: the expiry moves 1 us (0.001 ms) past "
             "the old one; the old value is stale, the new one is live through the old "
             "expiry's ms"),
        ),
        source=f"{MEMORY}:253-265 (Memory: the lease with expires_at = now + lease_ms); "
        f"{SQLITE}:549-587 (SQLite: renewal_expiry at 584-587); {TIMESTAMP}:44 (successor "
        "= +1 us)",
    ),
    Choice(
        name="forged_request_authority",
        doc_says="the notes (SNODO-AUTH-004 before): a value the store never minted, used as "
        "request authority in transition, is not_found",
        implementation_does="both upstream stores answer unauthorized_action (a value that is "
        "not the store's access type falls to a catch-all); an access of the same type minted "
        "by another store of the same kind is not_found in both",
        default="unauthorized_action",
        values=(
            ("unauthorized_action", "default, what both upstream stores do"),
            ("not_found", "the kit's former reading: a forged request authority is not_found"),
        ),
        source=f"{MEMORY}:419-421 (Memory: authorize_transition's catch-all), 382-383 "
        f"(another store's access: not_found); {SQLITE}:690-691 (SQLite: prepare_authority's "
        "catch-all), 667-668 (another store's access: not_found)",
    ),
    Choice(
        name="transition_check_order",
        doc_says="Memory: transition reads the task first (missing -> not_found), then checks "
        "the authority against it",
        implementation_does="SQLite: transition checks the authority's shape (its type, store, "
        "action, task id and event kind; a lease's store and task id) before it reads the "
        "task, so those refusals do not depend on whether the task exists or whose it is",
        default="row_first",
        values=(
            ("row_first", "default, the reference (Memory) store's order: missing -> "
             "not_found; request authority: other store or scope, or expired -> not_found, "
             "then action and event kind -> unauthorized_action; worker authority: invalid "
             "or expired lease -> stale_lease, then a request kind -> unauthorized_action"),
            ("authority_first", "the SQLite store's order: first, without reading the task, "
             "request authority: not an access -> forged_request_authority's answer, "
             "another store's -> not_found, action not update/cancel on this id or event "
             "kind not the action's -> unauthorized_action; worker authority: not a lease -> "
             "unauthorized_action, another store's or another task's -> stale_lease, a "
             "request kind -> unauthorized_action; then missing -> not_found, then the "
             "scope and expiry (not_found) or the lease's claim and expiry (stale_lease)"),
        ),
        source=f"{MEMORY}:315-325 (Memory: the row is fetched at 317 before "
        f"authorize_transition at 318), 373-431; {SQLITE}:212-228 (SQLite: "
        "prepare_authority before the transaction), 660-691 (prepare_authority), 693-725 "
        "(the row, then scope, expiry or lease)",
    ),
    Choice(
        name="create_check_order",
        doc_says="Memory: create of an existing id answers already_exists before capacity is "
        "counted",
        implementation_does="SQL: create counts capacity first and inserts after, so a full "
        "store answers capacity_exceeded even for an id that exists",
        default="exists_first",
        values=(
            ("exists_first", "default, the reference (Memory) store's order: already_exists, "
             "then capacity_exceeded"),
            ("capacity_first", "the SQLite store's order: capacity_exceeded, then "
             "already_exists"),
        ),
        source=f"{MEMORY}:164-173 (Memory: has_key at 169 before exceeded_limit at 172); "
        f"{SQLITE}:346-383 (SQLite: insert_bounded checks capacity at 367, the insert's "
        "conflict answers already_exists at 359)",
    ),
    Choice(
        name="committed_at_step",
        doc_says="Memory: when the clock did not move past last_updated_at, committed_at is "
        "last_updated_at + 1 ms",
        implementation_does="SQLite: it is last_updated_at + 1 us (its timestamps are in us)",
        default="millisecond",
        values=(
            ("millisecond", "default, the reference (Memory) store's step: last_updated_at + 1"),
            ("microsecond", "the SQLite store's step: last_updated_at + 0.001 (a float ms "
             "value); retry_at = committed_at + delay follows, and deferred stays the "
             "remaining ms rounded up"),
        ),
        source=f"{MEMORY}:632-639 (Memory: monotonic_timestamp adds 1 ms); {SQLITE}:937-947 "
        f"(SQLite: monotonic_microseconds takes the successor); {TIMESTAMP}:44",
    ),
    Choice(
        name="reopen_claims",
        doc_says="SQLite and PostgreSQL: a restart voids every access and lease issued before "
        "(each store config has an identity of its own) but not the claims: a claim stays "
        "live until its lease's deadline, and nobody can release it meanwhile",
        implementation_does="DETS: every open advances a persisted boot epoch; a claim of an "
        "earlier epoch is not live, so its task can be claimed at once, at the next generation",
        default="kept",
        values=(
            ("kept", "default, the SQL stores' reading: a claim made before a reopen blocks "
             "its task until its lease would have expired"),
            ("released", "the DETS store's reading: a reopen releases every claim made "
             "before it"),
        ),
        source=f"{MEMORY}:146 (Memory: a store_id of its own per start, no data kept); "
        f"{SQLITE}:106 (SQLite: new/1's identity: make_ref(), one per config; claim_live?/2 "
        f"compares claim_expires_at_us alone; its README: \"Store restart does not invalidate "
        f"healthy claims\"); {DETS}:38-43, 382, 828-832 (DETS: a boot epoch advanced on "
        f"every open, which claim_live? compares); {DETS_TEST}:27-114",
    ),
    Choice(
        name="reap_order",
        doc_says="Memory: reap answers the reaped ids sorted",
        implementation_does="SQLite: reap answers them in expiry order (created_at + ttl_ms, "
        "then id), at most a batch per call",
        default="task_id",
        values=(
            ("task_id", "default, the reference (Memory) store's order: the ids sorted"),
            ("expiry", "the SQLite store's order: by created_at + ttl_ms, ties by id"),
        ),
        source=f"{MEMORY}:278-287, 538-543 (Memory: expired_task_ids sorts the ids); "
        f"{SQLITE}:622-649 (SQLite: ordered by expires_at_us, then task_id, at 628)",
    ),
    Choice(
        name="create_validation_order",
        doc_says="Memory: create validates the task and its work (Task.validate! and "
        "Work.validate, through Snapshot.new) last, after already_exists and capacity: an "
        "invalid task under an existing id answers already_exists, into a full store "
        "capacity_exceeded",
        implementation_does="SQLite: create validates them right after the access check, "
        "before its transaction counts capacity or inserts: an invalid task answers "
        "invalid_task whatever the store holds",
        default="last",
        values=(
            ("last", "default, the reference (Memory) store's order: unauthorized_action, "
             "already_exists and capacity_exceeded (in create_check_order's order), then "
             "invalid_task"),
            ("after_access", "the SQLite store's order: unauthorized_action, invalid_task, "
             "then already_exists and capacity_exceeded (in create_check_order's order)"),
        ),
        source=f"{MEMORY}:164-191 (Memory: Snapshot.new at 176, in the branch after has_key "
        f"at 169 and exceeded_limit at 172; the rescue at 189-190 answers invalid_task); "
        f"{SQLITE}:151-162 (SQLite: Snapshot.new at 153, after authorize_create at 152 and "
        f"before transact_write at 156; the rescue at 160-161); {SNAPSHOT}:48-56 "
        "(Snapshot.new runs Task.validate! at 49 and Work.validate through validate at 52)",
    ),
)


def option(options: Mapping[str, Any], name: str) -> str:
    """The value of choice ``name`` in ``options`` (a store's ``env.options``), or its
    default when it is not given.

    Example::

        if option(env.options, "reap_order") == "expiry": ...
    """
    value = options.get(name)
    if value is None:
        return next(c.default for c in CHOICES if c.name == name)
    return str(value)

SETTINGS = (
    Setting("max_tasks", "infinity", "stored tasks (terminal and expired count until reaped)"),
    Setting("max_active_tasks_per_scope", "infinity",
            "working or input_required tasks per scope"),
)
