"""The adk-ledger mutants: each is the correct core with one real-world bug.
Over 500 lines: a catalogue of one-hook classes, each a few lines; the ones for arguments at
their edges are already in :mod:`.arguments`.

The kit's own tests require every one of them to be caught by its expected clause.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from functools import cached_property
from typing import Any

import attrs

from fencepost.adapters.adk_ledger.core import LedgerCore
from fencepost.adapters.mutants import flaky as _flaky
from fencepost.adapters.mutants.base import Mutant, int32, lossy_json, round_trip
from fencepost.spec import adk_ledger as spec
from fencepost.spec.adk_ledger import StoredInvocation
from fencepost.spec.env import AdapterEnv

from . import arguments as _arguments
from . import db_failures as _faults


class CreateStampsZero(LedgerCore):
    def create(self, invocation_id: str, metadata: Mapping[str, Any],
               checkpoint: Mapping[str, Any]) -> None:
        super().create(invocation_id, metadata, checkpoint)
        with self._locked(invocation_id) as slot:
            slot.update(attrs.evolve(self._require(slot), created_at=0, updated_at=0))


class CreateMisreadsVersion(LedgerCore):
    """Reads the version from the key ``version``, not ``workflow_version`` (its arguments
    checked first, as any create's are)."""

    def create(self, invocation_id: str, metadata: Mapping[str, Any],
               checkpoint: Mapping[str, Any]) -> None:
        self._check_create(invocation_id, metadata, checkpoint)
        renamed = {k: v for k, v in metadata.items() if k != "workflow_version"}
        renamed["workflow_version"] = metadata.get("version")
        super().create(invocation_id, renamed, checkpoint)


class CreateOverwrites(LedgerCore):
    """create replaces a record that is there (its arguments checked first)."""

    def create(self, invocation_id: str, metadata: Mapping[str, Any],
               checkpoint: Mapping[str, Any]) -> None:
        self._check_create(invocation_id, metadata, checkpoint)
        with self._locked(invocation_id) as slot:
            if slot.row is not None:
                slot.remove()
        super().create(invocation_id, metadata, checkpoint)


class CreateCheckThenInsert(LedgerCore):
    """Checks for the id in one transaction and upserts in another (its arguments checked
    first)."""

    def create(self, invocation_id: str, metadata: Mapping[str, Any],
               checkpoint: Mapping[str, Any]) -> None:
        self._check_create(invocation_id, metadata, checkpoint)
        with self._locked(invocation_id) as slot:
            exists = slot.row is not None
        if exists:
            raise spec.AlreadyExists(invocation_id)
        round_trip(self.env)
        with self._locked(invocation_id) as slot:
            if slot.row is not None:
                slot.remove()
        super().create(invocation_id, metadata, checkpoint)


class GetOfMissingIsBlank(LedgerCore):
    def get(self, invocation_id: str) -> spec.Invocation:
        try:
            return super().get(invocation_id)
        except spec.NotFound:
            return spec.Invocation(invocation_id, None, None, None, {}, "ready", None, False,
                                   None, 0, 0, 0, 0)


class GetTouchesRecord(LedgerCore):
    """An ORM ``onupdate`` column: every read through the session bumps updated_at."""

    def get(self, invocation_id: str) -> spec.Invocation:
        with self._locked(invocation_id) as slot:
            row = self._require(slot)
            row = attrs.evolve(row, updated_at=self.env.clock())
            slot.update(row)
            return self._view(row)


class OwnedMeansLive(LedgerCore):
    def _view(self, row: StoredInvocation) -> spec.Invocation:
        view = super()._view(row)
        return attrs.evolve(view, owned=view.owned and self.env.clock() < row.lease_until)


class ClaimCreatesMissing(LedgerCore):
    """claim upserts: a missing invocation is made (no metadata, an empty checkpoint) and
    claimed, where the seed answers not_found. Its arguments are checked first, as any claim's
    are: a refused claim makes nothing."""

    def claim(self, invocation_id: str, owner: str, owner_token: spec.Token, now_ms: int,
              lease_ms: int) -> spec.Invocation:
        self._check_claim(invocation_id, owner, owner_token, now_ms, lease_ms)
        with self._locked(invocation_id) as slot:
            if slot.row is None:
                slot.insert(StoredInvocation.created(invocation_id, {}, {}, self.env.clock()))
        return super().claim(invocation_id, owner, owner_token, now_ms, lease_ms)


class ClaimCompleted(LedgerCore):
    def _check_claimable(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        if row.phase != spec.COMPLETED:
            super()._check_claimable(row, token, now)


class ReadyNotClaimable(LedgerCore):
    """The claim's WHERE clause lists the resumable phases and forgets ``ready``."""

    def _claimable(self, row: StoredInvocation, now: int) -> bool:
        return row.phase != spec.READY and super()._claimable(row, now)


class SameTokenReclaims(LedgerCore):
    def _check_claimable(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        if not (row.token == token and row.phase == spec.RUNNING):
            super()._check_claimable(row, token, now)


class ClaimBoundaryOffByOne(LedgerCore):
    def _claimable(self, row: StoredInvocation, now: int) -> bool:
        return row.token is None or now > row.lease_until or self._owner_dead(row)


class ClaimKeepsOutcome(LedgerCore):
    def _claimed(self, row: StoredInvocation, owner: str, token: spec.Token, now: int,
                 lease_ms: int) -> StoredInvocation:
        return attrs.evolve(super()._claimed(row, owner, token, now, lease_ms), outcome=row.outcome)


class LeaseUntilAsI32(LedgerCore):
    """Keeps lease_until in a 32-bit signed integer: now + lease_ms at a real date wraps, and
    the lease it stores has ended long ago, or never ends."""

    def _claimed(self, row: StoredInvocation, owner: str, token: spec.Token, now: int,
                 lease_ms: int) -> StoredInvocation:
        claimed = super()._claimed(row, owner, token, now, lease_ms)
        return attrs.evolve(claimed, lease_until=int32(claimed.lease_until))

    def _renewed(self, row: StoredInvocation, now: int, lease_ms: int) -> StoredInvocation:
        renewed = super()._renewed(row, now, lease_ms)
        return attrs.evolve(renewed, lease_until=int32(renewed.lease_until))


class IgnoresDeadOwners(LedgerCore):
    def _owner_dead(self, row: StoredInvocation) -> bool:
        return False


class DeleteIgnoresDeadOwners(LedgerCore):
    def _lease_blocks_delete(self, row: StoredInvocation) -> bool:
        return self._live(row, self.env.clock())


class _Traffic:
    """The calls in flight on each namespace, over every store of a run (the SQL stores of one
    factory are several objects, so one instance serves the class), and a place where a
    non-atomic claim parks between its read and its write."""

    WAIT_S = 2.0
    """The longest a claim stays parked: a bound against a hang, not a delay (it leaves as soon
    as every other call in flight has finished or parked too)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._calls: Counter[str] = Counter()
        self._parked: Counter[str] = Counter()
        self._round: Counter[str] = Counter()
        self._arrivals: Counter[str] = Counter()

    @contextmanager
    def call(self, namespace: str) -> Iterator[None]:
        with self._changed:
            self._calls[namespace] += 1
            self._arrivals[namespace] += 1
        try:
            yield
        finally:
            with self._changed:
                self._calls[namespace] -= 1
                self._release_if_all_parked(namespace)

    def settle(self, env: AdapterEnv) -> None:
        """Park until no call has begun on the env's namespace for a round trip: every call
        made meanwhile (a whole burst of a concurrent run, a race's parties) has read by
        then."""
        namespace = env.namespace
        deadline = time.monotonic() + self.WAIT_S
        while True:
            with self._changed:
                seen = self._arrivals[namespace]
            self.park(env)
            round_trip(env)
            with self._changed:
                if self._arrivals[namespace] == seen or time.monotonic() > deadline:
                    return

    def park(self, env: AdapterEnv) -> None:
        """Wait until every other call in flight on the env's namespace has finished or is
        parked here too (at once for a call made alone). The wait is for other calls, so the
        env hears of it first (``env.waiting()``)."""
        namespace = env.namespace
        env.waiting()
        with self._changed:
            round_ = self._round[namespace]
            self._parked[namespace] += 1
            self._release_if_all_parked(namespace)
            if not self._changed.wait_for(lambda: self._round[namespace] != round_,
                                          self.WAIT_S):
                self._parked[namespace] -= 1

    def _release_if_all_parked(self, namespace: str) -> None:
        parked = self._parked[namespace]
        if parked and parked >= self._calls[namespace]:
            self._parked[namespace] = 0
            self._round[namespace] += 1
            self._changed.notify_all()


class ClaimSelectThenUpdate(LedgerCore):
    """Reads and decides in one transaction, writes unconditionally in a second one.

    The race is widened inside the store, which is the test's subject: between the two
    transactions it waits until every other call in flight on the store has finished or
    reached the same point, and no call has begun for a round trip (:meth:`_Traffic.settle`).
    So every claim made meanwhile (a burst of a concurrent run, a race's parties) reads before
    any of them writes, and overlapping claims of one claimable invocation all win on every
    run, not only when threads happen to interleave inside the round trip (a claimant blocked
    on the first transaction's SQLite lock may wake only after its busy handler's sleep). A
    call made alone waits two round trips.
    """

    _traffic = _Traffic()

    def _in_flight(self) -> AbstractContextManager[None]:
        return self._traffic.call(self.env.namespace)

    def create(self, invocation_id: str, metadata: Mapping[str, Any],
               checkpoint: Mapping[str, Any]) -> None:
        with self._in_flight():
            super().create(invocation_id, metadata, checkpoint)

    def get(self, invocation_id: str) -> spec.Invocation:
        with self._in_flight():
            return super().get(invocation_id)

    def renew(
            self, invocation_id: str, owner_token: spec.Token, now_ms: int, lease_ms: int
    ) -> None:
        with self._in_flight():
            super().renew(invocation_id, owner_token, now_ms, lease_ms)

    def checkpoint(self, invocation_id: str, owner_token: spec.Token, checkpoint: Mapping[str, Any],
                   now_ms: int, lease_ms: int) -> None:
        with self._in_flight():
            super().checkpoint(invocation_id, owner_token, checkpoint, now_ms, lease_ms)

    def finish(self, invocation_id: str, owner_token: spec.Token, phase: str, outcome: Any,
               checkpoint: Mapping[str, Any], now_ms: int) -> None:
        with self._in_flight():
            super().finish(invocation_id, owner_token, phase, outcome, checkpoint, now_ms)

    def delete(self, invocation_id: str) -> None:
        with self._in_flight():
            super().delete(invocation_id)

    def claim(self, invocation_id: str, owner: str, owner_token: spec.Token, now_ms: int,
              lease_ms: int) -> spec.Invocation:
        with self._in_flight():
            self._check_claim(invocation_id, owner, owner_token, now_ms, lease_ms)
            with self._locked(invocation_id) as slot:
                self._check_claimable(self._require(slot), owner_token, now_ms)
            round_trip(self.env)
            self._traffic.settle(self.env)
            with self._locked(invocation_id) as slot:
                return self._grant(slot, self._require(slot), owner, owner_token, now_ms,
                                   lease_ms)


class RenewReadThenWrite(LedgerCore):
    """Checks the token in one transaction and extends the lease in a second one."""

    def renew(
            self, invocation_id: str, owner_token: spec.Token, now_ms: int, lease_ms: int
    ) -> None:
        self._check_renew(invocation_id, owner_token, now_ms, lease_ms)
        with self._locked(invocation_id) as slot:
            self._check_writer(self._require(slot), owner_token, now_ms)
        round_trip(self.env)
        with self._locked(invocation_id) as slot:
            row = self._renewed(self._require(slot), now_ms, lease_ms)
            slot.update(attrs.evolve(row, token=owner_token, phase=spec.RUNNING))


class MissingWriteIsStale(LedgerCore):
    """Writes look the record up with the token in the WHERE clause: no row -> stale_owner
    (their arguments checked first, as any write's are)."""

    def _stale_if_missing(self, invocation_id: str) -> None:
        with self._locked(invocation_id) as slot:
            if slot.row is None:
                raise spec.StaleOwner(invocation_id)

    def renew(
            self, invocation_id: str, owner_token: spec.Token, now_ms: int, lease_ms: int
    ) -> None:
        self._check_renew(invocation_id, owner_token, now_ms, lease_ms)
        self._stale_if_missing(invocation_id)
        super().renew(invocation_id, owner_token, now_ms, lease_ms)

    def checkpoint(self, invocation_id: str, owner_token: spec.Token, checkpoint: Mapping[str, Any],
                   now_ms: int, lease_ms: int) -> None:
        self._check_checkpoint(invocation_id, owner_token, checkpoint, now_ms, lease_ms)
        self._stale_if_missing(invocation_id)
        super().checkpoint(invocation_id, owner_token, checkpoint, now_ms, lease_ms)

    def finish(self, invocation_id: str, owner_token: spec.Token, phase: str, outcome: Any,
               checkpoint: Mapping[str, Any], now_ms: int) -> None:
        self._check_finish(invocation_id, owner_token, phase, checkpoint, now_ms)
        self._stale_if_missing(invocation_id)
        super().finish(invocation_id, owner_token, phase, outcome, checkpoint, now_ms)


class RefusedWriteBumpsRevision(LedgerCore):
    def renew(
            self, invocation_id: str, owner_token: spec.Token, now_ms: int, lease_ms: int
    ) -> None:
        try:
            super().renew(invocation_id, owner_token, now_ms, lease_ms)
        except (spec.StaleOwner, spec.LeaseExpired):
            with self._locked(invocation_id) as slot:
                row = self._require(slot)
                slot.update(attrs.evolve(row, revision=row.revision + 1))
            raise


class ZombieCheckpoint(LedgerCore):
    """checkpoint checks the lease but not the token (its arguments are checked, the token's
    type too)."""

    def checkpoint(self, invocation_id: str, owner_token: spec.Token, checkpoint: Any, now_ms: int,
                   lease_ms: int) -> None:
        self._check_checkpoint(invocation_id, owner_token, checkpoint, now_ms, lease_ms)
        with self._locked(invocation_id) as slot:
            token = self._require(slot).token
        super().checkpoint(invocation_id, token or owner_token, checkpoint, now_ms, lease_ms)


class NullTokenMatchesAnyone(LedgerCore):
    """SQL NULL semantics: ``token <> :t`` is unknown for NULL, so nothing looks stale."""

    def _stale(self, row: StoredInvocation, token: spec.Token) -> bool:
        return row.token is not None and row.token != token


class ExpiryCheckedBeforeToken(LedgerCore):
    def _check_writer(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        if row.token is not None and not self._live(row, now):
            raise spec.LeaseExpired(row.invocation_id)
        super()._check_writer(row, token, now)


class RenewRevivesExpiredLease(LedgerCore):
    def _check_renewer(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        if not (row.phase == spec.RUNNING and row.token == token):
            super()._check_renewer(row, token, now)


class LeaseBoundaryOffByOne(LedgerCore):
    def _live(self, row: StoredInvocation, now: int) -> bool:
        return now <= row.lease_until


class WritesRefusedJustBeforeExpiry(LedgerCore):
    def _check_writer(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        super()._check_writer(row, token, now)
        if now >= row.lease_until - 1:
            raise spec.LeaseExpired(row.invocation_id)


class RenewNeverShortens(LedgerCore):
    def _renewed(self, row: StoredInvocation, now: int, lease_ms: int) -> StoredInvocation:
        renewed = super()._renewed(row, now, lease_ms)
        return attrs.evolve(renewed, lease_until=max(row.lease_until, renewed.lease_until))


class RenewKeepsRevision(LedgerCore):
    def _renewed(self, row: StoredInvocation, now: int, lease_ms: int) -> StoredInvocation:
        return attrs.evolve(super()._renewed(row, now, lease_ms), revision=row.revision)


class CheckpointKeepsLease(LedgerCore):
    def _checkpointed(self, row: StoredInvocation, checkpoint: Mapping[str, Any], now: int,
                      lease_ms: int) -> StoredInvocation:
        checkpointed = super()._checkpointed(row, checkpoint, now, lease_ms)
        return attrs.evolve(checkpointed, lease_until=row.lease_until)


class CheckpointWriteBehind(LedgerCore):
    """Holds checkpoints in a per-process cache and writes them only at finish."""

    @cached_property
    def _cache(self) -> dict[str, dict[str, Any]]:
        """The checkpoints not written yet, by invocation id (this object's only)."""
        return {}

    def _checkpointed(self, row: StoredInvocation, checkpoint: Mapping[str, Any], now: int,
                      lease_ms: int) -> StoredInvocation:
        # Cached where the checkpoint would be stored: the row keeps the one it had.
        self._cache[row.invocation_id] = dict(checkpoint)
        return super()._checkpointed(row, row.checkpoint, now, lease_ms)

    def _view(self, row: StoredInvocation) -> spec.Invocation:
        view = super()._view(row)
        if row.invocation_id in self._cache and row.phase == spec.RUNNING:
            return attrs.evolve(view, checkpoint=self._cache[row.invocation_id])
        return view

    def finish(self, invocation_id: str, owner_token: spec.Token, phase: str, outcome: Any,
               checkpoint: Mapping[str, Any], now_ms: int) -> None:
        super().finish(invocation_id, owner_token, phase, outcome, checkpoint, now_ms)
        self._cache.pop(invocation_id, None)

    def delete(self, invocation_id: str) -> None:
        super().delete(invocation_id)
        self._cache.pop(invocation_id, None)

    def create(self, invocation_id: str, metadata: Mapping[str, Any],
               checkpoint: Mapping[str, Any]) -> None:
        super().create(invocation_id, metadata, checkpoint)
        self._cache.pop(invocation_id, None)


class FinishAnyPhase(LedgerCore):
    def _valid_finish_phase(self, phase: Any) -> bool:
        return True


class FinishKeepsOwner(LedgerCore):
    def _finished(self, row: StoredInvocation, phase: str, outcome: Any,
                  checkpoint: Mapping[str, Any], now: int) -> StoredInvocation:
        return attrs.evolve(super()._finished(row, phase, outcome, checkpoint, now),
                            owner=row.owner)


class OwnerReadAsOfNow(LedgerCore):
    """Shows the owner with the time it was read (a per-request session id in the place of the
    node): present, but different on every read."""

    def _view(self, row: StoredInvocation) -> spec.Invocation:
        view = super()._view(row)
        if view.owner is None:
            return view
        return attrs.evolve(view, owner=f"{view.owner}@{self.env.clock()}")




class ValuesThroughJson(LedgerCore):
    """Keeps checkpoints, metadata values and outcomes in JSON columns: what JSON cannot say
    comes back changed."""

    def create(self, invocation_id: str, metadata: Mapping[str, Any],
               checkpoint: Mapping[str, Any]) -> None:
        if isinstance(metadata, Mapping) and isinstance(checkpoint, Mapping):
            metadata, checkpoint = lossy_json(metadata), lossy_json(checkpoint)
        super().create(invocation_id, metadata, checkpoint)

    def _checkpointed(self, row: StoredInvocation, checkpoint: Mapping[str, Any], now: int,
                      lease_ms: int) -> StoredInvocation:
        return super()._checkpointed(row, lossy_json(checkpoint), now, lease_ms)

    def finish(self, invocation_id: str, owner_token: spec.Token, phase: str, outcome: Any,
               checkpoint: Any, now_ms: int) -> None:
        if isinstance(checkpoint, Mapping):
            outcome, checkpoint = lossy_json(outcome), lossy_json(checkpoint)
        super().finish(invocation_id, owner_token, phase, outcome, checkpoint, now_ms)


class FailedOutcomeDropped(LedgerCore):
    """Redacts a failure by storing nothing: the normalized outcome is not there."""

    def _stored_outcome(self, phase: str, outcome: Any, checkpoint: Mapping[str, Any]) -> Any:
        if phase in ("failed", "cancelled"):
            return None
        return super()._stored_outcome(phase, outcome, checkpoint)


class NormalizedOutcomeUnstable(LedgerCore):
    """Normalizes a failure when it is read, stamping the read's time: each read differs."""

    def _view(self, row: StoredInvocation) -> spec.Invocation:
        view = super()._view(row)
        if row.phase not in ("failed", "cancelled"):
            return view
        return attrs.evolve(view, outcome={"phase": row.phase, "read_at": self.env.clock()})


class NormalizesWhenAsGiven(LedgerCore):
    """The seed's normalization kept when the run asks for outcomes as given."""

    def _stored_outcome(self, phase: str, outcome: Any, checkpoint: Mapping[str, Any]) -> Any:
        if phase in ("failed", "cancelled"):
            return {"phase": phase, "reason": "redacted"}
        return outcome


class CreateRequiresEveryKey(LedgerCore):
    """Reads each metadata key as the seed does (``maps:get``): an absent key is a crash
    (after the guard, which refuses metadata that is no map)."""

    def create(self, invocation_id: str, metadata: Mapping[str, Any],
               checkpoint: Mapping[str, Any]) -> None:
        self._check_create(invocation_id, metadata, checkpoint)
        missing = [k for k in spec.METADATA_KEYS if k not in metadata]
        if missing:
            raise KeyError(missing[0])
        super().create(invocation_id, metadata, checkpoint)


class PausedIsFinal(LedgerCore):
    def _check_claimable(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        if row.phase == "paused":
            raise spec.Completed(row.invocation_id)
        super()._check_claimable(row, token, now)


class DeleteOfMissingSucceeds(LedgerCore):
    def delete(self, invocation_id: str) -> None:
        try:
            super().delete(invocation_id)
        except spec.NotFound:
            return


class CompletedIsUndeletable(LedgerCore):
    def _deletable(self, row: StoredInvocation) -> bool:
        if row.phase == spec.COMPLETED:
            raise spec.Completed(row.invocation_id)
        return super()._deletable(row)


class DeleteIgnoresOwner(LedgerCore):
    def _deletable(self, row: StoredInvocation) -> bool:
        return True


class DeleteBlockedByAnyToken(LedgerCore):
    def _lease_blocks_delete(self, row: StoredInvocation) -> bool:
        return not self._owner_dead(row)


MUTANTS = (
    Mutant("create_stamps_zero", "create leaves created_at/updated_at at 0 instead of the store "
           "clock", "ADK-CREATE-001", CreateStampsZero),
    Mutant("create_misreads_version", "create reads metadata key 'version' instead of "
           "'workflow_version'", "ADK-CREATE-002", CreateMisreadsVersion),
    Mutant("create_overwrites", "create of an existing id replaces the record",
           "ADK-CREATE-003", CreateOverwrites),
    Mutant("create_check_then_insert", "create checks for the id and upserts in two "
           "transactions", "ADK-CREATE-004", CreateCheckThenInsert),
    Mutant("get_missing_blank", "get of a missing id returns a blank record",
           "ADK-GET-001", GetOfMissingIsBlank),
    Mutant("get_touches_record", "get bumps updated_at (an ORM onupdate column)",
           "ADK-GET-002", GetTouchesRecord),
    Mutant("owned_means_live", "owned turns false when the lease expires", "ADK-GET-003",
           OwnedMeansLive),
    Mutant("claim_creates_missing", "claim of a missing id creates it", "ADK-CLAIM-001",
           ClaimCreatesMissing),
    Mutant("claim_completed", "claim allowed on a completed invocation", "ADK-CLAIM-002",
           ClaimCompleted),
    Mutant("ready_not_claimable", "claim forgets the ready phase (only resumes)",
           "ADK-CLAIM-003", ReadyNotClaimable),
    Mutant("same_token_reclaims", "the same token re-claims a live lease", "ADK-CLAIM-004",
           SameTokenReclaims),
    Mutant("claim_boundary_off_by_one", "claim treats lease_until itself as live (> for >=)",
           "ADK-CLAIM-005", ClaimBoundaryOffByOne),
    Mutant("claim_keeps_outcome", "claim does not clear the previous outcome",
           "ADK-CLAIM-006", ClaimKeepsOutcome),
    Mutant("lease_until_as_i32", "lease_until is kept in a 32-bit signed integer: at a real "
           "date it wraps", "ADK-CLAIM-006", LeaseUntilAsI32),
    Mutant("ignores_dead_owners", "declares owner_liveness but claim ignores dead owners",
           "ADK-CLAIM-007", IgnoresDeadOwners),
    Mutant("claim_select_then_update", "claim reads and decides in one transaction, writes in "
           "another", "ADK-CLAIM-008", ClaimSelectThenUpdate),
    Mutant("claim_race_in_history", "the same non-atomic claim, to be caught by the "
           "linearizability check of a concurrent run: two claims of one invocation both win",
           "ADK-LIN-001", ClaimSelectThenUpdate),
    Mutant("missing_write_is_stale", "renew/checkpoint/finish of a missing id answer "
           "stale_owner", "ADK-WRITE-001", MissingWriteIsStale),
    Mutant("refused_write_bumps_revision", "a refused renew still bumps the revision",
           "ADK-WRITE-002", RefusedWriteBumpsRevision),
    Mutant("zombie_checkpoint", "checkpoint without token check (zombie write)",
           "ADK-FENCE-001", ZombieCheckpoint),
    Mutant("null_token_matches_anyone", "a NULL token compares as no mismatch (SQL NULL "
           "semantics)", "ADK-FENCE-002", NullTokenMatchesAnyone),
    Mutant("expiry_before_token", "the lease is checked before the token",
           "ADK-FENCE-003", ExpiryCheckedBeforeToken),
    Mutant("renew_revives_expired_lease", "renew accepted after expiry when nobody re-claimed",
           "ADK-LEASE-001", RenewRevivesExpiredLease),
    Mutant("lease_boundary_off_by_one", "a lease is live at lease_until (<= for <)",
           "ADK-LEASE-001", LeaseBoundaryOffByOne),
    Mutant("writes_refused_before_expiry", "writes refused at lease_until - 1 (early expiry)",
           "ADK-LEASE-002", WritesRefusedJustBeforeExpiry),
    Mutant("renew_never_shortens", "renew keeps the later of the old and new lease_until",
           "ADK-RENEW-001", RenewNeverShortens),
    Mutant("renew_read_then_write", "renew checks the token and writes in two transactions",
           "ADK-RENEW-002", RenewReadThenWrite),
    Mutant("checkpoint_keeps_lease", "checkpoint does not extend the lease", "ADK-CKPT-001",
           CheckpointKeepsLease),
    Mutant("finish_any_phase", "finish accepts any phase", "ADK-FINISH-001", FinishAnyPhase),
    Mutant("finish_keeps_owner", "finish leaves the owner set (one read-back field wrong: "
           "every other clause still gets its verdict)", "ADK-OWNER-001", FinishKeepsOwner),
    Mutant("owner_read_as_of_now", "the owner shows a value made at read time, different on "
           "every read", "ADK-OWNER-001", OwnerReadAsOfNow),
    Mutant("values_through_json", "checkpoints, metadata and outcomes kept through plain "
           "JSON: tuples, bytes, integer keys and 1.0 come back changed", "ADK-VALUE-001",
           ValuesThroughJson),
    Mutant("failed_outcome_dropped", "a failed or cancelled finish stores no outcome at all",
           "ADK-FINISH-002", FailedOutcomeDropped),
    Mutant("normalized_outcome_unstable", "the normalized outcome of a failure is made at read "
           "time (it carries the read's clock), so two reads differ", "ADK-FINISH-002",
           NormalizedOutcomeUnstable),
    Mutant("normalizes_when_as_given", "failed/cancelled outcomes normalized although the run "
           "asks for outcomes as given", "ADK-FINISH-002", NormalizesWhenAsGiven,
           options={"finish_outcome": "as_given"}),
    Mutant("create_requires_every_key", "create fails on an absent metadata key where the run "
           "allows absent keys", "ADK-CREATE-002", CreateRequiresEveryKey,
           options={"metadata_keys": "optional"}, crashes=("memory", "sqlite")),
    Mutant("paused_is_final", "a paused invocation cannot be resumed", "ADK-FINISH-003",
           PausedIsFinal),
    Mutant("renew_keeps_revision", "renew does not bump the revision", "ADK-REV-001",
           RenewKeepsRevision),
    Mutant("delete_missing_succeeds", "delete of a missing id answers ok", "ADK-DELETE-001",
           DeleteOfMissingSucceeds),
    Mutant("completed_undeletable", "delete refuses completed records", "ADK-DELETE-002",
           CompletedIsUndeletable),
    Mutant("delete_ignores_owner", "delete removes a live owned record", "ADK-DELETE-003",
           DeleteIgnoresOwner),
    Mutant("delete_blocked_by_any_token", "an expired token still blocks delete",
           "ADK-DELETE-004", DeleteBlockedByAnyToken),
    Mutant("delete_ignores_dead_owners", "delete waits for a dead owner's lease",
           "ADK-DELETE-005", DeleteIgnoresDeadOwners),
    Mutant("checkpoint_write_behind", "checkpoints cached in the process, lost on reopen",
           "ADK-DURABLE-001", CheckpointWriteBehind),
    *_arguments.ADK_LEDGER,
    *_faults.MUTANTS,
    *_flaky.flaky_mutants(spec),
)
