"""The ledgence-tasks mutants for paginated discovery and targeted dispatch. Each is the
correct core with one bug, caught by its expected clause."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.adapters.ledgence_tasks.core import (
    ACTIVE,
    DISPATCH,
    QUEUED,
    Cursor,
    LedgenceCore,
    PageCursor,
    PageQuery,
    TaskRecord,
    Txn,
)
from fencepost.adapters.ledgence_tasks.mutants.cursors import CURSOR_MUTANTS
from fencepost.adapters.mutants.base import Mutant
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import ContractError

_EVERY_ROW = 1_000_000_000
"""A LIMIT no test namespace reaches: the mutants that read "every row" of a walk use it."""


# -- paginated discovery --------------------------------------------------------------------------


class OffsetPagination(LedgenceCore):
    """The cursor carries an offset (how many items the walk has returned) and a page is
    ``ORDER BY ... OFFSET n``: every task submitted between pages shifts the later ones down,
    so a walk under concurrent submitters returns tasks twice (race walk_under_submitters;
    the scripted pagination_under_writes shows it too, as LDG-LIST-006)."""

    def _page_query(self, scope: spec.Scope, filters: spec.TaskFilters,
                    position: tuple[Any, ...] | None, limit: int) -> PageQuery:
        query = super()._page_query(scope, filters, None, limit)
        return attrs.evolve(query, offset=position[0] if position is not None else 0)

    def _next_position(self, shown: list[TaskRecord],
                       position: tuple[Any, ...] | None) -> tuple[Any, ...]:
        # The cursor's shape stays (an int, a non-empty str): the int is the offset.
        return ((position[0] if position is not None else 0) + len(shown), "offset")


class CursorOnSubmittedAtOnly(LedgenceCore):
    """The keyset is ``submitted_at < :at`` only: the rest of the tasks tied with a page's
    last item are skipped."""

    def _page_query(self, scope: spec.Scope, filters: spec.TaskFilters,
                    position: tuple[Any, ...] | None, limit: int) -> PageQuery:
        return super()._page_query(scope, filters, position[:1] if position else None, limit)


class TieBreakerAscending(LedgenceCore):
    """``ORDER BY submitted_at DESC, task_id`` (the DESC forgotten on the tie-breaker): tasks
    submitted in the same ms list in ascending task id order."""

    def _page_rows(self, txn: Txn, query: PageQuery) -> list[TaskRecord]:
        rows = super()._page_rows(txn, query)
        return sorted(rows, key=lambda r: (-r.snapshot.submitted_at, r.task_id))


class CursorIgnoresFilters(LedgenceCore):
    """A cursor is checked against the scope only: one issued for other filters continues
    this walk from its position."""

    def _cursor_fits(self, cursor: PageCursor, scope: spec.Scope,
                     filters: spec.TaskFilters) -> bool:
        return bool(cursor.scope == scope)


class PageAcrossScopes(LedgenceCore):
    """The page query has no scope condition (the filters are thought to be enough)."""

    def _page_query(self, scope: spec.Scope, filters: spec.TaskFilters,
                    position: tuple[Any, ...] | None, limit: int) -> PageQuery:
        return attrs.evolve(super()._page_query(scope, filters, position, limit), scope=None)


class CursorOnExactLastPage(LedgenceCore):
    """``has_more = len(rows) >= limit``: an exact last page still gets a next_cursor."""

    def _has_more(self, rows: list[TaskRecord], limit: int) -> bool:
        return len(rows) >= limit


class SubmittedUntilInclusive(LedgenceCore):
    """``submitted_at <= :until``: a task submitted exactly at submitted_until is listed."""

    def _page_query(self, scope: spec.Scope, filters: spec.TaskFilters,
                    position: tuple[Any, ...] | None, limit: int) -> PageQuery:
        if filters.submitted_until is not None:
            filters = attrs.evolve(filters, submitted_until=filters.submitted_until + 1)
        return super()._page_query(scope, filters, position, limit)


class EmptyKeyMatchesNone(LedgenceCore):
    """``COALESCE(correlation_key, '') = :key``: the filter ``""`` also lists the tasks
    submitted without a correlation key."""

    def _page_rows(self, txn: Txn, query: PageQuery) -> list[TaskRecord]:
        if query.filters.correlation_key != "":
            return super()._page_rows(txn, query)
        loose = attrs.evolve(query, filters=attrs.evolve(query.filters, correlation_key=None),
                             limit=_EVERY_ROW)
        rows = [r for r in super()._page_rows(txn, loose)
                if not r.snapshot.input.correlation_key]
        return rows[:query.limit]


class EmptyTimeRangeAccepted(LedgenceCore):
    """The time range is checked with ``from > until``: an empty range (from == until) is
    accepted and answers an empty page."""

    def _check_list_query(self, scope: spec.Scope, query: spec.TaskListQuery) -> None:
        f = getattr(query, "filters", None)
        if (isinstance(query, spec.TaskListQuery) and isinstance(f, spec.TaskFilters)
                and type(f.submitted_from) is int and type(f.submitted_until) is int
                and f.submitted_from == f.submitted_until):
            query = attrs.evolve(query, filters=attrs.evolve(
                f, submitted_until=f.submitted_until + 1))
        super()._check_list_query(scope, query)


class WalkSnapshotCached(LedgenceCore):
    """A walk's rows are read once, at its first page, and kept in the store object (a
    server-side result set); later pages are cut from that result set, so tasks submitted,
    cancelled or claimed since still show as they were."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._walks: dict[tuple[Any, Any], list[TaskRecord]] = {}

    def _page_rows(self, txn: Txn, query: PageQuery) -> list[TaskRecord]:
        key = (query.scope, query.filters)
        if query.after is None:
            rows: list[TaskRecord] = super()._page_rows(txn, attrs.evolve(query,
                                                                          limit=_EVERY_ROW))
            self._walks[key] = rows
            return rows[:query.limit]
        cached = self._walks.get(key)
        if cached is None:
            return super()._page_rows(txn, query)
        after = query.after
        return [r for r in cached if query.sort_key(r)[:len(after)] < after][:query.limit]


# -- targeted dispatch ----------------------------------------------------------------------------


class ClaimLeavesTaskQueued(LedgenceCore):
    """The claim's guarded update of the task row (``... WHERE attempt_count = :n``) compares
    attempt_count with the generation instead of generation - 1: it matches no row, so the
    attempt, its lease, `claimed` and the cursor are written but the task stays queued with
    no current attempt."""

    def _claim_target(self, txn: Txn, task: TaskRecord, session: spec.WorkerSession,
                      command: spec.ClaimCommand, now: int) -> spec.ClaimClaimed:
        claimed = super()._claim_target(txn, task, session, command, now)
        txn.save_task(task)  # the UPDATE matched no row: the task row is as it was
        return claimed


class HandedOffIsSuperseded(LedgenceCore):
    """Any generation up to attempt_count is answered terminal_or_superseded, the current
    attempt's included."""

    def _disposition(self, task: TaskRecord, generation: int, now: int) -> Any:
        disposition = super()._disposition(task, generation, now)
        if isinstance(disposition, spec.ClaimAlreadyHandedOff):
            return spec.ClaimTerminalOrSuperseded()
        return disposition


class OldGenerationOfQueuedTask(LedgenceCore):
    """A queued task is judged by its state alone: an older generation of a retried task is
    taken for the next one (deferred, or claimed once available)."""

    def _disposition(self, task: TaskRecord, generation: int, now: int) -> Any:
        snap = task.snapshot
        if snap.state == QUEUED and not self._superseded(task):
            generation = max(generation, snap.attempt_count + 1)
        return super()._disposition(task, generation, now)


class OnlyLastGenerationSuperseded(LedgenceCore):
    """A queued task supersedes only the generation it last handed off: one further behind
    (generation 1 of a task retried twice) is taken for the next one."""

    def _disposition(self, task: TaskRecord, generation: int, now: int) -> Any:
        snap = task.snapshot
        if snap.state == QUEUED and not self._superseded(task) and generation < snap.attempt_count:
            generation = snap.attempt_count + 1
        return super()._disposition(task, generation, now)


class OlderGenerationHandedOff(LedgenceCore):
    """An active task answers already_handed_off to any generation up to its current one:
    an older generation is told of the current attempt instead of being superseded."""

    def _disposition(self, task: TaskRecord, generation: int, now: int) -> Any:
        snap = task.snapshot
        if snap.state == ACTIVE and not self._superseded(task) and generation < snap.attempt_count:
            generation = snap.attempt_count
        return super()._disposition(task, generation, now)


class DeferredIsClaimed(LedgenceCore):
    """The claim does not compare available_at with now: a task in its retry backoff is
    claimed instead of deferred."""

    def _disposition(self, task: TaskRecord, generation: int, now: int) -> Any:
        disposition = super()._disposition(task, generation, now)
        return None if isinstance(disposition, spec.ClaimDeferred) else disposition


class ReceiptIgnoresCommand(LedgenceCore):
    """A receipt is looked up by (session, consumer, sequence) and answered without comparing
    the command: another claim at that sequence gets the first one's reply."""

    def _same_claim(self, stored: spec.ClaimCommand, command: spec.ClaimCommand) -> bool:
        return True


class HandledClaimsKeepNoReceipt(LedgenceCore):
    """Only a claim that claimed keeps its receipt: a handled claim (already handed off,
    deferred, superseded) moves the consumer's cursor and keeps nothing, so sending it again
    is a new command at a used sequence (a conflict), not its replay."""

    def _store_receipt(self, txn: Txn, command: spec.ClaimCommand, disposition: Any) -> None:
        if isinstance(disposition, spec.ClaimClaimed):
            super()._store_receipt(txn, command, disposition)


class ClaimSequenceGapsAccepted(LedgenceCore):
    """A claim checks only that its sequence is past the consumer's cursor: a first sequence
    other than 1, and gaps, are accepted."""

    def _claim_sequence(self, cursor: Cursor | None, sequence: int) -> None:
        if cursor is None or sequence > cursor.sequence + 1:
            return
        super()._claim_sequence(cursor, sequence)


class NeverIssuedGenerationAccepted(LedgenceCore):
    """Any generation in 1..1000 is taken for issued; the disposition rules answer it."""

    def _generation_issued(self, task: TaskRecord, generation: int) -> bool:
        return True


class ClaimOfAnotherQueueTaken(LedgenceCore):
    """The claimed task is looked up by scope and id, its queue checked for being routed but
    not for being the one the claim names: a consumer of another queue takes the routed
    task."""

    def _dispatch_task(self, txn: Txn, dispatch: spec.DispatchRef) -> TaskRecord:
        found = self._require(txn, dispatch.scope, dispatch.task_id)
        return super()._dispatch_task(txn, attrs.evolve(
            dispatch, queue=found.snapshot.input.queue))


class NextGenerationConflicts(LedgenceCore):
    """A claim at the next generation of an active task answers conflict (the kit's old
    reading), where the seed answers invalid_input: that generation was never issued."""

    def _next_generation_while_active(self, task: TaskRecord,
                                      generation: int) -> ContractError:
        return spec.Conflict(f"task {task.task_id!r} is active")


class FallbackQueueScan(LedgenceCore):
    """A store without targeted dispatch (it does not declare ``dispatch``) answers a claim by
    acquiring from the queue: whatever acquire would claim, not the named task."""

    capabilities = LedgenceCore.capabilities - {DISPATCH}

    def _claim_unsupported(self, command: Any) -> spec.ClaimReply:
        spec.validate_claim(command)
        return spec.ClaimReply(command, spec.ClaimClaimed(self.acquire(command.acquisition)))


class RoutedQueueScanned(LedgenceCore):
    """Acquisition ignores routes: the routed queue is scanned like any other (a store that
    routes in its claims only: a claim still takes a routed task and refuses another)."""

    def _routed(self, queue: str) -> bool:
        return False

    def _dispatch_task(self, txn: Txn, dispatch: spec.DispatchRef) -> TaskRecord:
        """The correct claim's lookup, routes checked as the correct store checks them."""
        task = self._require(txn, dispatch.scope, dispatch.task_id)
        if not super()._routed(task.snapshot.input.queue):
            raise spec.InvalidInput(spec.UNROUTED_CLAIM)
        if task.snapshot.input.queue != dispatch.queue:
            raise spec.Conflict(f"task {dispatch.task_id!r} is not in queue {dispatch.queue!r}")
        return task


class UnroutedTaskClaimed(LedgenceCore):
    """claim_dispatch takes a task of any queue (routes checked by acquisition only)."""

    def _dispatch_task(self, txn: Any, dispatch: spec.DispatchRef) -> Any:
        task = self._require(txn, dispatch.scope, dispatch.task_id)
        if task.snapshot.input.queue != dispatch.queue:
            raise spec.Conflict(f"task {dispatch.task_id!r} is not in queue {dispatch.queue!r}")
        return task


MUTANTS: tuple[Mutant, ...] = (
    Mutant("offset_pagination", "the cursor encodes an offset, not the keyset position",
           "LDG-LIST-009", OffsetPagination),
    Mutant("cursor_on_submitted_at_only", "the cursor continues after submitted_at only: ties "
           "are skipped", "LDG-LIST-006", CursorOnSubmittedAtOnly),
    Mutant("tie_breaker_ascending", "tasks submitted in the same ms list in ascending task id "
           "order", "LDG-LIST-001", TieBreakerAscending),
    Mutant("cursor_ignores_filters", "a cursor issued for other filters is accepted",
           "LDG-LIST-007", CursorIgnoresFilters),
    *CURSOR_MUTANTS,
    Mutant("page_across_scopes", "a page lists tasks of other scopes", "LDG-LIST-010",
           PageAcrossScopes),
    Mutant("cursor_on_exact_last_page", "an exact last page has a next_cursor", "LDG-LIST-005",
           CursorOnExactLastPage),
    Mutant("submitted_until_inclusive", "submitted_until is inclusive", "LDG-LIST-002",
           SubmittedUntilInclusive),
    Mutant("empty_key_matches_none", "correlation key \"\" also lists tasks without a key",
           "LDG-LIST-003", EmptyKeyMatchesNone),
    Mutant("empty_time_range_accepted", "submitted_from == submitted_until is accepted",
           "LDG-LIST-004", EmptyTimeRangeAccepted),
    Mutant("walk_snapshot_cached", "later pages are served from the rows read at the first "
           "page", "LDG-LIST-008", WalkSnapshotCached),
    Mutant("claim_leaves_task_queued", "a targeted claim writes the attempt but leaves the task "
           "queued", "LDG-DISPATCH-001", ClaimLeavesTaskQueued),
    Mutant("handed_off_is_superseded", "a claim at the current generation answers "
           "terminal_or_superseded", "LDG-DISPATCH-002", HandedOffIsSuperseded),
    Mutant("old_generation_of_queued_task", "an older generation of a retried task is deferred "
           "or claimed", "LDG-DISPATCH-003", OldGenerationOfQueuedTask),
    Mutant("only_last_generation_superseded", "a generation further behind than the last "
           "handed off is claimed", "LDG-DISPATCH-003", OnlyLastGenerationSuperseded),
    Mutant("older_generation_handed_off", "an older generation of an active task answers "
           "already_handed_off", "LDG-DISPATCH-003", OlderGenerationHandedOff),
    Mutant("deferred_is_claimed", "a task not yet available is claimed", "LDG-DISPATCH-004",
           DeferredIsClaimed),
    Mutant("receipt_ignores_command", "another claim at a claimed sequence replays the first",
           "LDG-DISPATCH-005", ReceiptIgnoresCommand),
    Mutant("handled_claims_keep_no_receipt", "a handled claim sent again is a conflict, not "
           "its replay", "LDG-DISPATCH-005", HandledClaimsKeepNoReceipt),
    Mutant("claim_sequence_gaps_accepted", "a claim may skip sequences", "LDG-DISPATCH-006",
           ClaimSequenceGapsAccepted),
    Mutant("never_issued_generation_accepted", "a claim at a generation never issued is "
           "answered", "LDG-DISPATCH-007", NeverIssuedGenerationAccepted),
    Mutant("claim_of_another_queue_taken", "a claim naming a routed task in another queue "
           "takes it", "LDG-DISPATCH-007", ClaimOfAnotherQueueTaken),
    Mutant("next_generation_conflicts", "a claim at the next generation of an active task "
           "answers conflict", "LDG-DISPATCH-007", NextGenerationConflicts),
    Mutant("fallback_queue_scan", "without targeted dispatch, a claim acquires from the queue",
           "LDG-DISPATCH-008", FallbackQueueScan),
    Mutant("routed_queue_scanned", "acquire takes a task of the routed queue",
           "LDG-DISPATCH-009", RoutedQueueScanned),
    Mutant("unrouted_task_claimed", "claim_dispatch takes a task of an unrouted queue",
           "LDG-DISPATCH-009", UnroutedTaskClaimed),
)
