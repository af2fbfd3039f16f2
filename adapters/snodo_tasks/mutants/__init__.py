"""The snodo-tasks mutants: each is the correct core with one real-world bug.
Over 500 lines: a catalogue of one-hook classes (each a ``TasksCore`` that overrides one of
its hooks), each a few lines; the ones at the value boundary are in :mod:`.values`.

The kit's own tests require every one of them to be caught by its expected clause.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, TypeGuard

import attrs

from fencepost.adapters.mutants import flaky as _flaky
from fencepost.adapters.mutants.base import Mutant, int32, round_trip
from fencepost.adapters.snodo_tasks import validation
from fencepost.adapters.snodo_tasks.core import TasksCore
from fencepost.adapters.snodo_tasks.records import Access, Aggregate, Claim, Lease, Txn
from fencepost.adapters.snodo_tasks.reducer import Reduced, reduce_event
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.errors import ContractError

from . import db_failures as _faults
from . import values as _values


class OldLeaseAccepted(TasksCore):
    """A lease is checked by its task alone (genuine, of this task, the task claimed): a
    re-claim does not fence the old lease, whoever holds it."""

    def _lease_matches(self, aggregate: Aggregate, lease: Any) -> bool:
        return (self._genuine_lease(lease) and lease.task_id == aggregate.task_id
                and aggregate.claim is not None)

    def _lease_valid(self, aggregate: Aggregate, lease: Any, now: int) -> bool:
        return self._lease_matches(aggregate, lease) and self._claim_live(aggregate.claim, now)


class ExpiredLeaseAccepted(TasksCore):
    def _lease_valid(self, aggregate: Aggregate, lease: Any, now: int) -> bool:
        return self._lease_matches(aggregate, lease)


class ReleaseByAnyLeaseOfTheTask(TasksCore):
    def _lease_matches(self, aggregate: Aggregate, lease: Any) -> bool:
        if aggregate.claim is None and self._genuine_lease(lease):
            return lease.task_id == aggregate.task_id
        return super()._lease_matches(aggregate, lease)


class RenewKeepsOldExpiry(TasksCore):
    """renew hands out a new expiry but stores nothing: the old lease stays the valid one."""

    def _store_renewal(self, txn: Txn, aggregate: Aggregate, claim: Claim,
                       expires_at: float) -> None:
        pass


class ClaimIgnoresRetryAt(TasksCore):
    """claim takes a task whose retry is pending; claim_next still waits for it (as the SQL
    stores' claim_next, which filters retry_at in its query, always did)."""

    def _check_claimable(self, aggregate: Aggregate, now: int) -> None:
        due = attrs.evolve(aggregate.snapshot, retry_at=None)
        super()._check_claimable(attrs.evolve(aggregate, snapshot=due), now)


class DeferredRoundedDown(TasksCore):
    def _deferred_ms(self, retry_at: float, now: int) -> int:
        return super()._deferred_ms(retry_at, now) - 1


class ClaimNextTakesClaimedTasks(TasksCore):
    def _recoverable(self, aggregate: Aggregate, now: int) -> bool:
        snap = aggregate.snapshot
        return snap.task.status not in spec.TERMINAL and self._retry_due(snap, now)


class ClaimSelectThenUpdate(TasksCore):
    """Checks the task in one transaction and grants the claim in another."""

    def claim(self, task_id: str, owner_id: str, lease_ms: int) -> spec.Claimed:
        self._check_claim_call(task_id, owner_id, lease_ms)
        with self._transaction() as txn:
            self._check_claimable(self._require(txn, task_id), self.env.clock())
        round_trip(self.env)
        with self._transaction() as txn:
            aggregate = self._require(txn, task_id)
            return self._grant(txn, aggregate, owner_id, lease_ms,
                               self.env.clock())


class LostUpdate(TasksCore):
    def _revision_ok(self, snapshot: spec.Snapshot, expected_revision: int) -> bool:
        return True


class RevisionCheckedOutsideTheWrite(TasksCore):
    """Checks expected_revision in one transaction and applies the event in another. The
    arguments are checked first, as the seed's guard does: a revision of 0.0 or False is no
    revision, even where it equals the task's."""

    def transition(self, task_id: str, expected_revision: int, event: spec.Event,
                   authority: spec.RequestAuthority | spec.WorkerAuthority) -> spec.Transition:
        self._check_transition_args(task_id, expected_revision, authority)
        with self._transaction() as txn:
            found = txn.load(task_id)
        if found is not None and found.snapshot.revision == expected_revision:
            round_trip(self.env)
            expected_revision = self._current_revision(task_id, expected_revision)
        return super().transition(task_id, expected_revision, event, authority)

    def _current_revision(self, task_id: str, otherwise: int) -> int:
        with self._transaction() as txn:
            found = txn.load(task_id)
            return otherwise if found is None else found.snapshot.revision


class DuplicateAppliedTwice(TasksCore):
    def _seen(self, aggregate: Aggregate, event: spec.Event) -> spec.Transition | None:
        return None


class ReusedEventIdReplays(TasksCore):
    def _seen(self, aggregate: Aggregate, event: spec.Event) -> spec.Transition | None:
        found = aggregate.seen.get(event.id)
        return None if found is None else found[1]


class EventsComparedLoosely(TasksCore):
    """Compares a replayed event with ``==``, where 1 == 1.0 == True."""

    def _seen(self, aggregate: Aggregate, event: spec.Event) -> spec.Transition | None:
        found = aggregate.seen.get(event.id)
        if found is None:
            return None
        if found[0] != event:
            raise spec.EventIdReused(f"event id {event.id!r} was used for another event")
        return found[1]


class CommittedAtIsNow(TasksCore):
    def _committed_at(self, task: spec.Task, now: int) -> int:
        return now


class ForeignTenantSeesTasks(TasksCore):
    def _same_scope(self, access: Access, aggregate: Aggregate) -> bool:
        return True


class GetAccessCancels(TasksCore):
    def _check_authority(self, aggregate: Aggregate, event: spec.Event, authority: Any,
                         now: int) -> None:
        if isinstance(authority, spec.RequestAuthority) and self._genuine_access(
                authority.access) and authority.access.kind == "get":
            authority = spec.RequestAuthority(attrs.evolve(authority.access, kind="cancel"))
        super()._check_authority(aggregate, event, authority, now)


class AccessForAnyTask(TasksCore):
    def get(self, task_id: str, access: Any) -> spec.Snapshot:
        if self._genuine_access(access):
            access = attrs.evolve(access, task_id=task_id)
        return super().get(task_id, access)


class AcceptsOtherStoresAccesses(TasksCore):
    def _genuine_access(self, access: object) -> TypeGuard[Access]:
        return type(access) is Access


class LeaseSendsRequestEvents(TasksCore):
    def _check_authority(self, aggregate: Aggregate, event: spec.Event, authority: Any,
                         now: int) -> None:
        if isinstance(authority, spec.WorkerAuthority) and event.kind in spec.REQUEST_KINDS:
            if not self._lease_valid(aggregate, authority.lease, now):
                raise spec.StaleLease("stale")
            return
        super()._check_authority(aggregate, event, authority, now)


class CreateOverwrites(TasksCore):
    """create replaces a task stored under its id (counted as gone); a create that is
    refused leaves it in place."""

    def _check_create(self, txn: Txn, task: spec.Task, work: spec.Work,
                      scope: str | None) -> None:
        replaced = txn.load(task.id)
        if replaced is not None:
            txn.delete(task.id)
        try:
            super()._check_create(txn, task, work, scope)
        except ContractError:
            if replaced is not None:
                txn.insert(replaced)
            raise


class CreateWithAnyAccess(TasksCore):
    def create(self, task: spec.Task, work: spec.Work, access: Any) -> spec.Snapshot:
        if self._genuine_access(access):
            access = attrs.evolve(access, kind="create", task_id=task.id)
        return super().create(task, work, access)


class MaxTasksCountsActiveOnly(TasksCore):
    """max_tasks is compared with the active tasks (of every scope), forgetting terminal and
    expired ones."""

    def _store_full(self, txn: Txn, scope: str | None) -> bool:
        return self.max_tasks is not None and txn.count_active_everywhere() >= self.max_tasks


class ScopeLimitCountsEveryScope(TasksCore):
    """max_active_tasks_per_scope is compared with the active tasks of every scope, after
    max_tasks as in the correct store."""

    def _check_capacity(self, txn: Txn, scope: str | None) -> None:
        if self._store_full(txn, scope):
            raise spec.CapacityExceeded(f"{self.max_tasks} tasks stored", payload="max_tasks")
        limit = self.max_active_per_scope
        if limit is not None and txn.count_active_everywhere() >= limit:
            raise spec.CapacityExceeded(f"{limit} active tasks in every scope",
                                        payload="max_active_tasks_per_scope")


class CapacityCheckedOutsideTheTransaction(TasksCore):
    """Counts in one transaction, inserts in another: concurrent creates overshoot."""

    def create(self, task: spec.Task, work: spec.Work, access: Any) -> spec.Snapshot:
        scope = self._create_scope(task, work, access)
        with self._transaction() as txn:
            self._check_create(txn, task, work, scope)
        round_trip(self.env)
        with self._transaction() as txn:
            if txn.load(task.id) is not None:
                raise spec.AlreadyExists(task.id)
            return self._insert_task(txn, task, work, scope)


class GetIgnoresTtl(TasksCore):
    def _hidden_by_ttl(self, aggregate: Aggregate, now: int) -> bool:
        return False


class ReapsOneMsEarly(TasksCore):
    def _reap_ids(self, txn: Txn, now: int) -> list[str]:
        return super()._reap_ids(txn, now + 1)


class WorkerSnapshotChecksLeaseFirst(TasksCore):
    def _worker_task_missing(self, task_id: str) -> ContractError:
        return spec.StaleLease("stale")


class TerminalTasksChange(TasksCore):
    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        if snapshot.task.status in spec.TERMINAL:
            working = attrs.evolve(snapshot, task=attrs.evolve(snapshot.task, status="working"))
            return reduce_event(working, event, committed_at)
        return super()._reduce(snapshot, event, committed_at)


class InputKeyOverwritten(TasksCore):
    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        if event.kind == "input_requested":
            key = event.data["key"]
            history = {k: v for k, v in snapshot.input_history.items() if k != key}
            snapshot = attrs.evolve(snapshot, input_history=history)
        return super()._reduce(snapshot, event, committed_at)


class PartialResponsesResumeWork(TasksCore):
    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        reduced, effects = super()._reduce(snapshot, event, committed_at)
        if reduced is not None and event.kind == "input_responses_accepted":
            reduced = attrs.evolve(reduced, task=attrs.evolve(reduced.task, status="working"))
        return reduced, effects


class RetryUsesLastDelay(TasksCore):
    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        reduced, effects = super()._reduce(snapshot, event, committed_at)
        work = snapshot.work
        if (event.kind == "retry_requested" and reduced is not None and work is not None
                and reduced.retry_at is not None):
            delay = work.retry_policy[-1]
            reduced = attrs.evolve(reduced, retry_at=committed_at + delay)
            effects = {"retry": {**effects["retry"], "retry_at": committed_at + delay,
                                 "delay_ms": delay}}
        return reduced, effects


class TtlAsI32(TasksCore):
    """Keeps ttl_ms in a 32-bit signed integer (an INT column): from 2^31 on the stored TTL
    wraps negative, and the task is expired from its creation (create echoes the TTL given)."""

    def _insert_task(self, txn: Txn, task: spec.Task, work: spec.Work,
                     scope: str | None) -> spec.Snapshot:
        stored = super()._insert_task(txn, attrs.evolve(task, ttl_ms=int32(task.ttl_ms)), work,
                                      scope)
        return attrs.evolve(stored, task=task)


class ClaimExpiryAsI32(TasksCore):
    """Keeps a claim's expiry (ms) in a 32-bit signed integer: a real date's wraps, and the
    claim it grants has expired, or lives on, whatever its lease_ms said."""

    def _grant(self, txn: Txn, aggregate: Aggregate, owner_id: str, lease_ms: int,
               now: int) -> spec.Claimed:
        claimed = super()._grant(txn, aggregate, owner_id, lease_ms, now)
        claim = aggregate.claim
        if claim is not None and int32(claim.expires_at) != claim.expires_at:
            aggregate.claim = attrs.evolve(claim, expires_at=int32(claim.expires_at))
            txn.save(aggregate)
        return claimed


class RetryDelayAsI32(TasksCore):
    """Keeps retry delays in 32-bit signed integers (an INT column, Java's int): from 2^31 on a
    delay wraps negative, 4 294 967 295 to -1, and the retry is due before it was asked."""

    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        reduced, effects = super()._reduce(snapshot, event, committed_at)
        retry = effects.get("retry") if isinstance(effects, dict) else None
        if not isinstance(retry, dict):
            return reduced, effects
        delay_ms = retry.get("delay_ms")
        if reduced is not None and isinstance(delay_ms, int) and int32(delay_ms) != delay_ms:
            delay = int32(delay_ms)
            reduced = attrs.evolve(reduced, retry_at=committed_at + delay)
            effects = {"retry": {**retry, "retry_at": committed_at + delay, "delay_ms": delay}}
        return reduced, effects


class ExhaustedRetryCounts(TasksCore):
    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        reduced, effects = super()._reduce(snapshot, event, committed_at)
        if event.kind == "retry_requested" and reduced is not None and reduced.retry_at is None:
            reduced = attrs.evolve(reduced, retry_count=reduced.retry_count + 1)
        return reduced, effects


class CancelKeepsMessage(TasksCore):
    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        reduced, effects = super()._reduce(snapshot, event, committed_at)
        if event.kind == "cancelled" and reduced is not None:
            message = snapshot.task.status_message
            reduced = attrs.evolve(reduced,
                                   task=attrs.evolve(reduced.task, status_message=message))
        return reduced, effects


class ReopenKeepsClaimsLive(TasksCore):
    """Under ``reopen_claims=released``: a claim of the earlier boot still blocks its task
    until its lease would have expired."""

    @property
    def _reopen_releases(self) -> bool:
        return False


class ReopenReleasesClaims(TasksCore):
    """Under ``reopen_claims=kept``: a reopen releases every claim made before it (the task
    claimable at once)."""

    @property
    def _reopen_releases(self) -> bool:
        return True


class ReopenKeepsValues(TasksCore):
    """One boot for ever: a reopened store still honours the accesses and leases it issued
    before, and their claims stay live."""

    def _booted_id(self, storage: str) -> str:
        return storage


class BootEndsAtFirstClose(TasksCore):
    """Ends its boot when any instance closes (a restart hook on a pool's connection close):
    the instances opened next are a new boot and refuse what the ones still open issued."""

    def _closes_the_boot(self) -> bool:
        return True


class ValuesPerConnection(TasksCore):
    """Each instance opened is a boot of its own, also beside an open one: a worker's
    connection refuses the accesses and leases another connection issued."""

    def _booted_id(self, storage: str) -> str:
        return f"{storage}#{secrets.token_hex(4)}"


class ClaimOfMissingIsUnavailable(TasksCore):
    """claim of a missing task answers unavailable; its arguments are checked first, as the
    seed's guard does."""

    def claim(self, task_id: str, owner_id: str, lease_ms: int) -> spec.Claimed:
        self._check_claim_call(task_id, owner_id, lease_ms)
        with self._transaction() as txn:
            if txn.load(task_id) is None:
                raise spec.Unavailable(task_id)
        return super().claim(task_id, owner_id, lease_ms)


class TerminalTasksClaimable(TasksCore):
    def _check_claimable(self, aggregate: Aggregate, now: int) -> None:
        snap = aggregate.snapshot
        if snap.task.status in spec.TERMINAL:
            snap = attrs.evolve(snap, task=attrs.evolve(snap.task, status="working"))
            aggregate = attrs.evolve(aggregate, snapshot=snap)
        super()._check_claimable(aggregate, now)


class ClaimHidesExpiredTasks(TasksCore):
    """claim applies the TTL (the seed's stores do not): an expired task is not_found. Its
    arguments are checked first, as the seed's guard does."""

    def claim(self, task_id: str, owner_id: str, lease_ms: int) -> spec.Claimed:
        self._check_claim_call(task_id, owner_id, lease_ms)
        with self._transaction() as txn:
            aggregate = txn.load(task_id)
            if aggregate is not None and self._expired(aggregate, self.env.clock()):
                raise spec.NotFound(task_id)
        return super().claim(task_id, owner_id, lease_ms)


class ClaimIgnoresLiveClaim(TasksCore):
    def _check_claimable(self, aggregate: Aggregate, now: int) -> None:
        super()._check_claimable(attrs.evolve(aggregate, claim=None), now)


class ClaimLiveAtExpiry(TasksCore):
    def _claim_live(self, claim: Any, now: int) -> bool:
        return (claim is not None and now <= claim.expires_at
                and (claim.store_id == self.store_id or not self._reopen_releases))


class CreateDropsWork(TasksCore):
    def create(self, task: spec.Task, work: spec.Work, access: Any) -> spec.Snapshot:
        snapshot = super().create(task, work, access)
        with self._transaction() as txn:
            aggregate = self._require(txn, task.id)
            aggregate.snapshot = attrs.evolve(aggregate.snapshot, work=None)
            txn.save(aggregate)
        return attrs.evolve(snapshot, work=None)


class ReadsNeedGetAccess(TasksCore):
    def get(self, task_id: str, access: Any) -> spec.Snapshot:
        self._check_task_id(task_id)
        if self._genuine_access(access) and access.kind != "get":
            raise spec.NotFound(task_id)
        return super().get(task_id, access)


class MissingTaskIsUnauthorized(TasksCore):
    def get(self, task_id: str, access: Any) -> spec.Snapshot:
        self._check_task_id(task_id)
        with self._transaction() as txn:
            if txn.load(task_id) is None:
                raise spec.UnauthorizedAction(task_id)
        return super().get(task_id, access)


class LeaseNamesTheTask(TasksCore):
    """worker_snapshot reads the task the lease names, not the one asked for."""

    def worker_snapshot(self, task_id: str, lease: Any) -> spec.Snapshot:
        self._check_task_id(task_id)
        if self._genuine_lease(lease):
            task_id = lease.task_id
        return super().worker_snapshot(task_id, lease)


class ReapLeavesSeenEvents(TasksCore):
    """reap deletes the task row but its seen-event ledger survives a re-create."""

    _ghosts: dict[str, dict[str, tuple[spec.Event, spec.Transition]]] = {}

    def _reap_one(self, txn: Txn, task_id: str) -> None:
        aggregate = txn.load(task_id)
        if aggregate is not None:
            self._ghosts[f"{self.store_id}/{task_id}"] = dict(aggregate.seen)
        super()._reap_one(txn, task_id)

    def create(self, task: spec.Task, work: spec.Work, access: Any) -> spec.Snapshot:
        snapshot = super().create(task, work, access)
        ghosts = self._ghosts.pop(f"{self.store_id}/{task.id}", None)
        if ghosts:
            with self._transaction() as txn:
                aggregate = self._require(txn, task.id)
                aggregate.seen.update(ghosts)
                txn.save(aggregate)
        return snapshot


class AppliedEventKeepsRevision(TasksCore):
    """An applied event that does not end the task keeps the revision (a terminal event still
    raises it)."""

    def transition(self, task_id: str, expected_revision: int, event: spec.Event,
                   authority: spec.RequestAuthority | spec.WorkerAuthority) -> spec.Transition:
        result = super().transition(task_id, expected_revision, event, authority)
        before = result.snapshot.revision - 1
        if result.outcome != spec.APPLIED or event.kind in ("completed", "failed", "cancelled"):
            return result
        kept = attrs.evolve(result, snapshot=attrs.evolve(result.snapshot, revision=before),
                            event_revision=before)
        with self._transaction() as txn:
            aggregate = self._require(txn, task_id)
            aggregate.snapshot = attrs.evolve(aggregate.snapshot, revision=before)
            aggregate.seen[event.id] = (event, kept)  # a replay answers what this one did
            txn.save(aggregate)
        return kept


# --- one reading of a named option (spec.CHOICES) where the other is due ----------------------


class RenewalMovesSameExpiry(TasksCore):
    """Always moves a same-expiry renewal to the successor (SQLite's reading)."""

    def _renewed_expiry(self, current: float, candidate: float) -> float:
        return spec.microsecond_after(current) if candidate == current else candidate


class RenewalKeepsSameExpiry(TasksCore):
    """Always hands back the identical lease on a same-expiry renewal (Memory's reading)."""

    def _renewed_expiry(self, current: float, candidate: float) -> float:
        return candidate


class ForgedAccessNotFound(TasksCore):
    def _forged_request(self, task_id: str) -> ContractError:
        return spec.NotFound(task_id)


class ForgedAccessUnauthorized(TasksCore):
    def _forged_request(self, task_id: str) -> ContractError:
        return spec.UnauthorizedAction("not an access")


class AuthorityCheckedBeforeRow(TasksCore):
    def _authority_first(self) -> bool:
        return True


class RowReadBeforeAuthority(TasksCore):
    def _authority_first(self) -> bool:
        return False


class CapacityCheckedBeforeExists(TasksCore):
    def _capacity_first(self) -> bool:
        return True


class ExistsCheckedBeforeCapacity(TasksCore):
    def _capacity_first(self) -> bool:
        return False


class CommittedAtStepsOneMicrosecond(TasksCore):
    def _committed_at(self, task: spec.Task, now: int) -> float:
        return now if task.last_updated_at < now else spec.microsecond_after(task.last_updated_at)


class CommittedAtStepsOneMillisecond(TasksCore):
    def _committed_at(self, task: spec.Task, now: int) -> float:
        return now if task.last_updated_at < now else task.last_updated_at + 1


class ReapsInExpiryOrder(TasksCore):
    def _reap_ids(self, txn: Txn, now: int) -> list[str]:
        return list(txn.expired_ids(now, self._expired))


class ReapsInIdOrder(TasksCore):
    def _reap_ids(self, txn: Txn, now: int) -> list[str]:
        return sorted(txn.expired_ids(now, self._expired))


# --- wrong only in a hard situation (a bound met exactly, several candidates) ------------------


class MaxTasksOffByOne(TasksCore):
    """max_tasks compared with > instead of >=: a store holding exactly max_tasks takes one
    more (one below the limit and one above it, it answers right)."""

    def _store_full(self, txn: Txn, scope: str | None) -> bool:
        return self.max_tasks is not None and txn.count_tasks() > self.max_tasks


class RequestsSeeTheTtlsLastMs(TasksCore):
    """Request transitions compare the TTL with > where get and reap use >=: at exactly
    created_at + ttl_ms a cancel or an input answer still reaches the task."""

    def _check_authority(self, aggregate: Aggregate, event: spec.Event, authority: Any,
                         now: int) -> None:
        task = aggregate.snapshot.task
        if isinstance(authority, spec.RequestAuthority) and task.ttl_ms is not None \
                and now == task.created_at + task.ttl_ms:
            now -= 1
        super()._check_authority(aggregate, event, authority, now)


class ClaimNextIgnoresRetryAmongSeveral(TasksCore):
    """With two or more tasks due, claim_next takes the first free task in creation order by
    a second query that lost the retry_at filter: a task whose retry is pending is claimed,
    but only while several others are due (a lone due task goes by the filtered query)."""

    def claim_next(self, owner_id: str, lease_ms: int) -> spec.Claimed | None:
        self._check_claim_args(owner_id, lease_ms)
        with self._transaction() as txn:
            now = self.env.clock()
            first = txn.find_recoverable(now, self._recoverable)
            second = first is not None and txn.find_recoverable(
                now, lambda a, at: a.task_id != first and self._recoverable(a, at))
            taken = second and txn.find_recoverable(now, self._free)
            if taken:
                return self._grant(txn, self._require(txn, taken), owner_id,
                                   lease_ms, now)
        return super().claim_next(owner_id, lease_ms)

    def _free(self, aggregate: Aggregate, now: int) -> bool:
        snap = aggregate.snapshot
        return (snap.task.status not in spec.TERMINAL and snap.work is not None
                and not self._claim_live(aggregate.claim, now))


# --- arguments at their edges (the SNODO-ARG clauses): a guard or a validation missing ----------


class ZeroLeaseClaims(TasksCore):
    """lease_ms checked with >= 0: claim and claim_next of 0 grant a claim already expired."""

    def _lease_ms_ok(self, lease_ms: Any) -> bool:
        return validation.whole(lease_ms) and lease_ms >= 0


class LeaseMsOfAnyNumber(TasksCore):
    """lease_ms checked as a positive number: 1.5 and True (== 1) are taken."""

    def _lease_ms_ok(self, lease_ms: Any) -> bool:
        return isinstance(lease_ms, int | float) and lease_ms > 0


class LeaseOfOneRefused(TasksCore):
    """claim's and claim_next's lease_ms checked with > 1 (a minimum written one too high):
    a lease of 1 ms is refused."""

    def _lease_ms_ok(self, lease_ms: Any) -> bool:
        return super()._lease_ms_ok(lease_ms) and lease_ms != 1


class EmptyOwnerClaims(TasksCore):
    def _owner_ok(self, owner_id: Any) -> bool:
        return isinstance(owner_id, str)


class RenewByZero(TasksCore):
    """renew takes a lease_ms of 0 (or less): the live claim now expires at once. (A bool is
    still no lease_ms.)"""

    def _renewal_ms_ok(self, lease_ms: Any) -> bool:
        return validation.whole(lease_ms)


class RenewalOfOneRefused(TasksCore):
    """renew's lease_ms checked with > 1: a renewal of 1 ms is refused."""

    def _renewal_ms_ok(self, lease_ms: Any) -> bool:
        return super()._renewal_ms_ok(lease_ms) and lease_ms != 1


class NegativeRevisionConflicts(TasksCore):
    """No guard on expected_revision: -1 is compared and answers conflict (what the stores
    behind the seed's guard would do)."""

    def _revision_arg_ok(self, expected_revision: Any) -> bool:
        return True


class BoolRevisionAccepted(TasksCore):
    """isinstance(rev, int) takes True, which equals revision 1."""

    def _revision_arg_ok(self, expected_revision: Any) -> bool:
        return isinstance(expected_revision, int) and expected_revision >= 0


class BareLeaseIsAuthority(TasksCore):
    """A bare lease (neither request nor worker authority) is checked as a worker's; any
    other value is still no authority."""

    def _authority_kind_ok(self, authority: Any) -> bool:
        return super()._authority_kind_ok(authority) or type(authority) is Lease


class AuthorizeMintsAnything(TasksCore):
    """Any action kind and the empty task id are taken; a task id that is no string is not."""

    def _action_ok(self, action: spec.Action) -> bool:
        return isinstance(action.task_id, str)


class EmptyIdReadRefused(TasksCore):
    """get refuses the empty task id as a bad argument (the seed's guard is is_binary only)."""

    def get(self, task_id: str, access: Any) -> spec.Snapshot:
        if task_id == "":
            raise spec.FunctionClause("empty task id")
        return super().get(task_id, access)


class ZeroTtlStored(TasksCore):
    """ttl_ms checked only for its type: a ttl of 0 (or less) is stored, expired at once."""

    def _task_problem(self, task: spec.Task, work: spec.Work) -> str | None:
        if validation.whole(task.ttl_ms) and task.ttl_ms <= 0:  # a bool is no ttl
            task = attrs.evolve(task, ttl_ms=1)
        return super()._task_problem(task, work)


class TimingOfOneRefused(TasksCore):
    """ttl_ms and poll_interval_ms checked with > 1: a task of ttl or poll interval 1 ms is
    refused as invalid."""

    def _task_problem(self, task: spec.Task, work: spec.Work) -> str | None:
        if any(validation.whole(ms) and ms == 1 for ms in (task.ttl_ms,
                                                          task.poll_interval_ms)):
            return "ttl_ms and poll_interval_ms must be greater than 1"
        return super()._task_problem(task, work)


class EmptyWorkTypeStored(TasksCore):
    """An empty type or idempotency key is taken; the other one is still checked."""

    def _task_problem(self, task: spec.Task, work: spec.Work) -> str | None:
        if work.type == "":
            work = attrs.evolve(work, type="t")
        if work.idempotency_key == "":
            work = attrs.evolve(work, idempotency_key="k")
        return super()._task_problem(task, work)


class WorkNoneStored(TasksCore):
    """create of no work stores a task nothing can ever claim."""

    def create(self, task: spec.Task, work: Any, access: Any) -> spec.Snapshot:
        if work is not None:
            return super().create(task, work, access)
        snapshot = super().create(task, spec.Work("-", "-", {}, ()), access)
        with self._transaction() as txn:
            aggregate = self._require(txn, task.id)
            aggregate.snapshot = attrs.evolve(aggregate.snapshot, work=None)
            txn.save(aggregate)
        return attrs.evolve(snapshot, work=None)


class TaskValidatedFirst(TasksCore):
    def _validate_early(self) -> bool:
        return True


class TaskValidatedLast(TasksCore):
    def _validate_early(self) -> bool:
        return False


class EmptyEventIdApplied(TasksCore):
    """The empty event id is taken as any other: the rest of the event is still checked."""

    def _event_problem(self, event: spec.Event) -> ContractError | None:
        if event.id == "":
            return super()._event_problem(attrs.evolve(event, id="-"))
        return super()._event_problem(event)


class EmptyInputKeyOpened(TasksCore):
    """The empty input key is taken as any other: the rest of the event is still checked."""

    def _event_problem(self, event: spec.Event) -> ContractError | None:
        data = event.data
        if event.kind == "input_requested" and isinstance(data, Mapping) \
                and data.get("key") == "":
            return super()._event_problem(attrs.evolve(event, data={**data, "key": "-"}))
        return super()._event_problem(event)


class EmptyTenantIsNoTenant(TasksCore):
    """Scopes compared by truth value: the empty tenant and no tenant are one scope."""

    def _same_scope(self, access: Access, aggregate: Aggregate) -> bool:
        return (access.scope or None) == (aggregate.scope or None)


class ZeroRetryDelayExhausts(TasksCore):
    """`if delay:` reads a delay of 0 as no delay left: the task fails instead of retrying."""

    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        work = snapshot.work
        if event.kind == "retry_requested" and work is not None and \
                snapshot.retry_count < len(work.retry_policy) and \
                work.retry_policy[snapshot.retry_count] == 0:
            spent = attrs.evolve(work, retry_policy=work.retry_policy[:snapshot.retry_count])
            snapshot = attrs.evolve(snapshot, work=spent)
            reduced, effects = super()._reduce(snapshot, event, committed_at)
            return (None if reduced is None else attrs.evolve(reduced, work=work)), effects
        return super()._reduce(snapshot, event, committed_at)


def _m(name: str, bug: str, clause: str, mixin: type, *bases: str) -> Mutant:
    return Mutant(name, bug, clause, mixin, bases or ("memory", "sqlite"))


MUTANTS = (
    _m("old_lease_accepted", "an old lease is still accepted after a re-claim",
       "SNODO-LEASE-001", OldLeaseAccepted),
    _m("expired_lease_accepted", "renew/worker events accepted after the lease expired",
       "SNODO-LEASE-003", ExpiredLeaseAccepted),
    _m("release_by_stale_lease", "release by a stale lease frees the task again",
       "SNODO-LEASE-004", ReleaseByAnyLeaseOfTheTask),
    _m("renew_keeps_old_expiry", "renew returns a new lease but stores nothing",
       "SNODO-LEASE-002", RenewKeepsOldExpiry),
    _m("claim_ignores_retry_at", "claim ignores a pending retry_at", "SNODO-CLAIM-006",
       ClaimIgnoresRetryAt),
    _m("deferred_rounded_down", "deferred ms rounded down (deferred(0) one ms before)",
       "SNODO-CLAIM-006", DeferredRoundedDown),
    _m("claim_next_takes_claimed", "claim_next returns a task under a live claim",
       "SNODO-CLAIM-007", ClaimNextTakesClaimedTasks, "memory"),
    _m("claim_select_then_update", "claim checks and writes in two transactions",
       "SNODO-CLAIM-008", ClaimSelectThenUpdate),
    _m("claim_race_in_history", "the same non-atomic claim, caught by the linearizability "
       "check of a concurrent run: two claims of one task both win", "SNODO-LIN-001",
       ClaimSelectThenUpdate),
    _m("lost_update", "transition ignores expected_revision", "SNODO-TX-001", LostUpdate),
    _m("revision_checked_outside_write", "expected_revision checked outside the write "
       "transaction", "SNODO-TX-006", RevisionCheckedOutsideTheWrite),
    _m("duplicate_applied_twice", "a replayed event id is applied again", "SNODO-TX-003",
       DuplicateAppliedTwice),
    _m("reused_event_id_replays", "an event id reused for another event replays the first",
       "SNODO-TX-004", ReusedEventIdReplays),
    _m("events_compared_loosely", "a replayed event compared with ==: data with 1.0 or true "
       "where the first had 1 replays it as a duplicate", "SNODO-TX-004", EventsComparedLoosely),
    _m("committed_at_is_now", "committed_at does not move past last_updated_at",
       "SNODO-TX-005", CommittedAtIsNow),
    _m("foreign_tenant_get", "a foreign tenant's access reads the task", "SNODO-AUTH-003",
       ForeignTenantSeesTasks),
    _m("get_access_cancels", "a get-access is accepted for cancel", "SNODO-AUTH-001",
       GetAccessCancels),
    _m("access_for_any_task", "get ignores the access's task id", "SNODO-AUTH-002",
       AccessForAnyTask),
    _m("accepts_other_stores_accesses", "an access minted by another store is accepted",
       "SNODO-AUTH-004", AcceptsOtherStoresAccesses),
    _m("lease_sends_request_events", "a worker lease is accepted for request events",
       "SNODO-LEASE-006", LeaseSendsRequestEvents),
    _m("create_overwrites", "create replaces an existing task", "SNODO-CREATE-002",
       CreateOverwrites),
    _m("create_with_any_access", "create accepts any access of the store",
       "SNODO-CREATE-003", CreateWithAnyAccess),
    _m("max_tasks_counts_active_only", "max_tasks counts only active tasks", "SNODO-CAP-001",
       MaxTasksCountsActiveOnly),
    _m("scope_limit_counts_every_scope", "the per-scope limit counts every scope's tasks",
       "SNODO-CAP-002", ScopeLimitCountsEveryScope),
    _m("capacity_outside_transaction", "capacity checked outside the insert transaction",
       "SNODO-CAP-003", CapacityCheckedOutsideTheTransaction),
    _m("get_ignores_ttl", "get returns an expired task", "SNODO-TTL-001", GetIgnoresTtl),
    _m("reaps_one_ms_early", "reap deletes tasks 1 ms before their TTL", "SNODO-TTL-002",
       ReapsOneMsEarly),
    _m("worker_snapshot_lease_first", "worker_snapshot of a missing task says stale_lease",
       "SNODO-WS-001", WorkerSnapshotChecksLeaseFirst),
    _m("terminal_tasks_change", "an event changes a terminal task", "SNODO-RED-001",
       TerminalTasksChange),
    _m("input_key_overwritten", "input_requested reuses a key already used",
       "SNODO-RED-002", InputKeyOverwritten),
    _m("partial_responses_resume", "partial input responses set the status to working",
       "SNODO-RED-003", PartialResponsesResumeWork),
    _m("ttl_as_i32", "ttl_ms is kept in a 32-bit signed integer: a TTL of 30 days is "
       "negative, the task expired at once", "SNODO-CREATE-001", TtlAsI32),
    _m("claim_expiry_as_i32", "a claim's expiry is kept in a 32-bit signed integer: at a "
       "real date it has expired at once", "SNODO-CLAIM-004", ClaimExpiryAsI32),
    _m("retry_delay_as_i32", "retry delays are kept in 32-bit signed integers: the longest, "
       "4 294 967 295 ms, is -1", "SNODO-RED-004", RetryDelayAsI32),
    _m("retry_uses_last_delay", "retry uses the last delay of the list, not the next",
       "SNODO-RED-004", RetryUsesLastDelay),
    _m("exhausted_retry_counts", "an exhausted retry still bumps retry_count",
       "SNODO-RED-005", ExhaustedRetryCounts),
    _m("cancel_keeps_message", "cancelled keeps the previous status message",
       "SNODO-RED-006", CancelKeepsMessage),
    _m("claim_of_missing_unavailable", "claim of a missing task answers unavailable",
       "SNODO-CLAIM-001", ClaimOfMissingIsUnavailable),
    _m("terminal_tasks_claimable", "claim accepts a completed, failed or cancelled task",
       "SNODO-CLAIM-002", TerminalTasksClaimable),
    _m("claim_hides_expired_tasks", "claim applies the TTL and answers not_found",
       "SNODO-CLAIM-003", ClaimHidesExpiredTasks),
    _m("claim_ignores_live_claim", "claim takes a task under a live claim",
       "SNODO-CLAIM-004", ClaimIgnoresLiveClaim),
    _m("claim_live_at_expiry", "a claim is still live at its expiry (<= for <)",
       "SNODO-CLAIM-005", ClaimLiveAtExpiry),
    _m("create_drops_work", "create stores the task without its work", "SNODO-CREATE-001",
       CreateDropsWork),
    _m("reads_need_get_access", "get refuses update and cancel accesses", "SNODO-GET-001",
       ReadsNeedGetAccess),
    _m("missing_task_unauthorized", "get of a missing task answers unauthorized_action",
       "SNODO-GET-002", MissingTaskIsUnauthorized),
    _m("lease_names_the_task", "worker_snapshot reads the task its lease names",
       "SNODO-LEASE-005", LeaseNamesTheTask),
    _m("reap_leaves_seen_events", "reap leaves the event ledger behind for a re-created id",
       "SNODO-TTL-003", ReapLeavesSeenEvents),
    _m("applied_event_keeps_revision", "an applied event does not raise the revision",
       "SNODO-TX-002", AppliedEventKeepsRevision),
    Mutant("reopen_keeps_claims_live", "a reopen voids every lease, but its claim still "
           "blocks the task until it would have expired (reopen_claims=released)",
           "SNODO-DURABLE-001", ReopenKeepsClaimsLive, options={"reopen_claims": "released"}),
    _m("reopen_releases_claims", "a reopen releases every claim made before it: another "
       "worker takes the task while the old lease would still run", "SNODO-DURABLE-001",
       ReopenReleasesClaims),
    _m("reopen_keeps_values", "a reopened store still honours the accesses and leases it "
       "issued before", "SNODO-DURABLE-001", ReopenKeepsValues),
    _m("boot_ends_at_first_close", "closing one connection of several restarts the store: "
       "the connection opened next refuses the accesses and leases of those still open",
       "SNODO-DURABLE-001", BootEndsAtFirstClose),
    _m("values_per_connection", "every connection opened is a restart: a second connection "
       "refuses the leases and accesses the first issued", "SNODO-DURABLE-001",
       ValuesPerConnection),
    _m("max_tasks_off_by_one", "a store holding exactly max_tasks takes one more (> for >=)",
       "SNODO-CAP-001", MaxTasksOffByOne),
    _m("requests_see_the_ttls_last_ms", "a request transition at exactly the TTL still "
       "reaches the task (> for >=)", "SNODO-TTL-001", RequestsSeeTheTtlsLastMs),
    _m("claim_next_ignores_retry_among_several", "with several tasks due, claim_next takes a "
       "task whose retry is pending", "SNODO-CLAIM-007", ClaimNextIgnoresRetryAmongSeveral,
       "memory"),
    _m("zero_lease_ms_claims", "claim and claim_next take a lease_ms of 0 (>= 0 for > 0): "
       "the claim is expired as it is granted", "SNODO-ARG-001", ZeroLeaseClaims),
    _m("lease_ms_of_any_number", "a lease_ms of 1.5 or True is taken (a number, not an "
       "integer)", "SNODO-ARG-001", LeaseMsOfAnyNumber),
    _m("lease_of_one_refused", "claim and claim_next refuse a lease_ms of 1 (> 1 for > 0)",
       "SNODO-ARG-001", LeaseOfOneRefused),
    _m("empty_owner_claims", "claim and claim_next take the empty owner id", "SNODO-ARG-001",
       EmptyOwnerClaims),
    _m("renewal_of_one_refused", "renew refuses a lease_ms of 1 (> 1 for > 0)",
       "SNODO-ARG-002", RenewalOfOneRefused),
    _m("renew_by_zero", "renew takes a lease_ms of 0: the live claim expires at once",
       "SNODO-ARG-002", RenewByZero),
    _m("negative_revision_conflicts", "transition compares an expected_revision of -1 "
       "(conflict) instead of refusing it", "SNODO-ARG-003", NegativeRevisionConflicts),
    _m("bool_revision_accepted", "transition takes True as expected_revision 1",
       "SNODO-ARG-003", BoolRevisionAccepted),
    _m("bare_lease_is_authority", "a bare lease, neither request nor worker authority, sends "
       "worker events", "SNODO-ARG-003", BareLeaseIsAuthority),
    _m("authorize_mints_anything", "authorize mints an access for the empty task id or an "
       "unknown action", "SNODO-ARG-004", AuthorizeMintsAnything),
    _m("empty_id_read_refused", "get refuses the empty task id as a bad argument (it is "
       "not_found)", "SNODO-GET-002", EmptyIdReadRefused),
    _m("zero_ttl_stored", "create stores a task with a ttl_ms of 0 or less (expired at once)",
       "SNODO-ARG-005", ZeroTtlStored),
    _m("timing_of_one_refused", "create refuses a ttl_ms or poll_interval_ms of 1 (> 1 for "
       "> 0)", "SNODO-ARG-005", TimingOfOneRefused),
    _m("empty_work_type_stored", "create stores work with an empty type or idempotency key",
       "SNODO-ARG-005", EmptyWorkTypeStored),
    _m("work_none_stored", "create stores a task without work (never claimable)",
       "SNODO-ARG-005", WorkNoneStored),
    _m("empty_event_id_applied", "transition applies an event whose id is empty",
       "SNODO-ARG-006", EmptyEventIdApplied),
    _m("empty_input_key_opened", "input_requested opens the empty input key", "SNODO-ARG-006",
       EmptyInputKeyOpened),
    _m("empty_tenant_is_no_tenant", "scopes compared by truth value: the empty tenant reads "
       "and cancels the tasks of no tenant", "SNODO-AUTH-003", EmptyTenantIsNoTenant),
    _m("zero_retry_delay_exhausts", "a retry delay of 0 is read as none left: the task fails",
       "SNODO-RED-004", ZeroRetryDelayExhausts),
    *_faults.MUTANTS,
    *_flaky.flaky_mutants(spec),
    *_values.MUTANTS,
    # Each named option's two readings: the store that follows the other one is caught.
    _m("renewal_moves_same_expiry", "a renewal to the same expiry moves it 1 us, so the value "
       "renewed goes stale (same_expiry_renewal=identical)", "SNODO-LEASE-002",
       RenewalMovesSameExpiry),
    Mutant("renewal_keeps_same_expiry", "a renewal to the same expiry hands back the same "
           "lease, which stays valid (same_expiry_renewal=successor)", "SNODO-LEASE-002",
           RenewalKeepsSameExpiry, options={"same_expiry_renewal": "successor"}),
    _m("forged_access_not_found", "a forged request authority in transition answers "
       "not_found (forged_request_authority=unauthorized_action)", "SNODO-AUTH-004",
       ForgedAccessNotFound),
    Mutant("forged_access_unauthorized", "a forged request authority in transition answers "
           "unauthorized_action (forged_request_authority=not_found)", "SNODO-AUTH-004",
           ForgedAccessUnauthorized, options={"forged_request_authority": "not_found"}),
    _m("authority_checked_before_row", "transition refuses a wrong action before reading the "
       "task: a foreign tenant's task answers unauthorized_action "
       "(transition_check_order=row_first)", "SNODO-AUTH-003", AuthorityCheckedBeforeRow),
    Mutant("row_read_before_authority", "transition reads the task before the authority's "
           "action: a foreign tenant's task answers not_found "
           "(transition_check_order=authority_first)", "SNODO-AUTH-003",
           RowReadBeforeAuthority, options={"transition_check_order": "authority_first"}),
    _m("capacity_checked_before_exists", "create of an existing id in a full store answers "
       "capacity_exceeded (create_check_order=exists_first)", "SNODO-CREATE-002",
       CapacityCheckedBeforeExists),
    Mutant("exists_checked_before_capacity", "create of an existing id in a full store "
           "answers already_exists (create_check_order=capacity_first)", "SNODO-CAP-001",
           ExistsCheckedBeforeCapacity, options={"create_check_order": "capacity_first"}),
    _m("committed_at_steps_one_us", "committed_at steps 1 us past a still clock "
       "(committed_at_step=millisecond)", "SNODO-TX-005", CommittedAtStepsOneMicrosecond),
    Mutant("committed_at_steps_one_ms", "committed_at steps 1 ms past a still clock "
           "(committed_at_step=microsecond)", "SNODO-TX-005", CommittedAtStepsOneMillisecond,
           options={"committed_at_step": "microsecond"}),
    _m("reaps_in_expiry_order", "reap answers the ids in expiry order (reap_order=task_id)",
       "SNODO-TTL-002", ReapsInExpiryOrder),
    Mutant("reaps_in_id_order", "reap answers the ids sorted (reap_order=expiry)",
           "SNODO-TTL-002", ReapsInIdOrder, options={"reap_order": "expiry"}),
    _m("task_validated_first", "create validates the task before already_exists: an invalid "
       "task under an existing id answers invalid_task (create_validation_order=last)",
       "SNODO-CREATE-002", TaskValidatedFirst),
    Mutant("task_validated_last", "create validates the task after already_exists: an "
           "invalid task under an existing id answers already_exists "
           "(create_validation_order=after_access)", "SNODO-ARG-005", TaskValidatedLast,
           options={"create_validation_order": "after_access"}),
)
