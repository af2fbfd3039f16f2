"""The ledger's rules written once over a tiny storage interface.

``LedgerCore`` implements the seven operations on top of ``_locked(invocation_id)``, a context
manager that holds the record's lock (a mutex, ``BEGIN IMMEDIATE``, ``SELECT ... FOR UPDATE``)
and yields a :class:`Slot`. The memory and SQLAlchemy stores only provide storage; the
mutants override one small predicate each. This is an implementation of the
contract independent of the reference model: the model is the oracle it is checked against.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

import attrs

from fencepost.spec import adk_ledger as spec
from fencepost.spec.adk_ledger import StoredInvocation
from fencepost.spec.env import AdapterEnv


def is_integer(value: Any) -> bool:
    """An integer as the seed's guards mean it (``is_integer``): not a bool, not a float."""
    return isinstance(value, int) and not isinstance(value, bool)


class Slot(Protocol):
    """The locked place of one invocation: its row (``None`` when absent) and how to change it."""

    row: StoredInvocation | None

    def insert(self, row: StoredInvocation) -> None: ...

    def update(self, row: StoredInvocation) -> None: ...

    def remove(self) -> None: ...


class LedgerCore:
    """The adk-ledger rules, in the seed implementation's order of checks."""

    capabilities: frozenset[str] = frozenset({"durable", "owner_liveness", "concurrency"})
    _copied: Callable[[Any], Any] | None = None
    """How an answer copies the caller's values it shows (see ``StoredInvocation.shown``)."""

    def __init__(self, env: AdapterEnv) -> None:
        self.env = env
        # The documented choices (spec.CHOICES) this store follows; defaults = the seed's.
        self.options = {c.name: str(env.options.get(c.name, c.default)) for c in spec.CHOICES}

    # -- storage, provided by subclasses --------------------------------------------------------

    def _locked(self, invocation_id: str) -> AbstractContextManager[Slot]:
        raise NotImplementedError

    def _reading(self, invocation_id: str) -> AbstractContextManager[Slot]:
        """The invocation for a read that writes nothing: by default the same as
        :meth:`_locked`; a storage may read it without the lock (one consistent read)."""
        return self._locked(invocation_id)

    def close(self) -> None:
        """Release connections; the data stays (see the ``durable`` capability)."""

    # -- predicates the mutants bend ----------------------------------------------------

    def _live(self, row: StoredInvocation, now: int) -> bool:
        return now < row.lease_until

    def _owner_dead(self, row: StoredInvocation) -> bool:
        return row.owner is not None and not self.env.is_alive(row.owner)

    def _claimable(self, row: StoredInvocation, now: int) -> bool:
        return row.token is None or not self._live(row, now) or self._owner_dead(row)

    def _check_writer(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        if self._stale(row, token):
            raise spec.StaleOwner(row.invocation_id)
        if not self._live(row, now):
            raise spec.LeaseExpired(row.invocation_id)

    def _stale(self, row: StoredInvocation, token: spec.Token) -> bool:
        """``token`` is not the running owner's (no owner matches no token)."""
        return row.phase != spec.RUNNING or row.token is None or row.token != token

    def _valid_finish_phase(self, phase: Any) -> bool:
        if self.options["finish_phases"] == "any":
            return isinstance(phase, str) and phase not in ("", spec.READY, spec.RUNNING)
        return phase in spec.FINISH_PHASES

    # -- the guards of the seed's function heads (adk_invocation_ledger_mnesia.erl: create
    # 52-54, get 82, claim 96-99, renew 138-140, checkpoint 152-154, finish 170-172, delete 197)

    def _empty_refused(self) -> bool:
        return self.options["empty_strings"] == "refused"

    def _valid_id(self, invocation_id: Any, creating: bool = False) -> bool:
        if not isinstance(invocation_id, str):
            return False
        return bool(invocation_id) or not (creating and self._empty_refused())

    def _valid_token(self, token: Any, claiming: bool = False) -> bool:
        """A binary (text or bytes, as ``is_binary``), non-empty for a claim under
        ``empty_strings=refused``."""
        if not isinstance(token, str | bytes):
            return False
        return len(token) > 0 or not (claiming and self._empty_refused())

    def _valid_time(self, now_ms: Any) -> bool:
        return is_integer(now_ms)

    def _valid_lease(self, lease_ms: Any) -> bool:
        return is_integer(lease_ms) and lease_ms > 0

    def _valid_write_lease(self, lease_ms: Any) -> bool:
        return self._valid_lease(lease_ms)

    def _valid_checkpoint(self, checkpoint: Any) -> bool:
        return isinstance(checkpoint, Mapping)

    def _valid_phase_type(self, phase: Any) -> bool:
        return isinstance(phase, str)

    def _check_claim(self, invocation_id: Any, owner: Any, token: Any, now_ms: Any,
                     lease_ms: Any) -> None:
        if not (self._valid_id(invocation_id) and isinstance(owner, str)
                and self._valid_token(token, claiming=True) and self._valid_time(now_ms)
                and self._valid_lease(lease_ms)):
            raise spec.InvalidClaimArguments(
                f"{invocation_id!r}: id and owner must be strings, the token a non-empty binary "
                "(text or bytes), now_ms an integer, lease_ms a positive integer")

    def _check_write(self, error: type[spec.ContractError], invocation_id: Any, token: Any,
                     now_ms: Any, *lease_ms: Any) -> None:
        if not (self._valid_id(invocation_id) and self._valid_token(token)
                and self._valid_time(now_ms) and all(map(self._valid_write_lease, lease_ms))):
            raise error(f"{invocation_id!r}: the id must be a string, the token a binary (text "
                        "or bytes), now_ms an integer"
                        + (", lease_ms a positive integer" if lease_ms else ""))

    def _deletable(self, row: StoredInvocation) -> bool:
        if row.token is None:
            if row.phase == spec.COMPLETED and self.options["delete_completed"] == "forbidden":
                raise spec.Completed(row.invocation_id)
            return True
        return not self._lease_blocks_delete(row)

    def _lease_blocks_delete(self, row: StoredInvocation) -> bool:
        """An owned record stays while its lease is live and its owner alive."""
        return self._live(row, self.env.clock()) and not self._owner_dead(row)

    # -- the protocol ---------------------------------------------------------------------------

    def create(
        self, invocation_id: str, metadata: Mapping[str, Any], checkpoint: Mapping[str, Any]
    ) -> None:
        self._check_create(invocation_id, metadata, checkpoint)
        with self._locked(invocation_id) as slot:
            if slot.row is not None:
                raise spec.AlreadyExists(invocation_id)
            now = self.env.clock()
            slot.insert(StoredInvocation.created(invocation_id, metadata, dict(checkpoint), now))

    def _check_create(self, invocation_id: Any, metadata: Any, checkpoint: Any) -> None:
        """create's guard, before any record is looked at."""
        if not (self._valid_id(invocation_id, creating=True) and isinstance(metadata, Mapping)
                and self._valid_checkpoint(checkpoint)):
            raise spec.InvalidCreateArguments(
                f"{invocation_id!r}: the id must be a non-empty string, metadata and "
                "checkpoint mappings")

    def get(self, invocation_id: str) -> spec.Invocation:
        self._check_id(invocation_id)
        with self._reading(invocation_id) as slot:
            return self._view(self._require(slot))

    def claim(
        self, invocation_id: str, owner: str, owner_token: spec.Token, now_ms: int, lease_ms: int
    ) -> spec.Invocation:
        self._check_claim(invocation_id, owner, owner_token, now_ms, lease_ms)
        with self._locked(invocation_id) as slot:
            row = self._require(slot)
            self._check_claimable(row, owner_token, now_ms)
            return self._grant(slot, row, owner, owner_token, now_ms, lease_ms)

    def _check_claimable(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        """Why ``row`` cannot be claimed at ``now``: completed, or owned. ``token`` is the
        claimant's; the seed does not look at it (a live lease is owned whoever asks)."""
        if row.phase == spec.COMPLETED:
            raise spec.Completed(row.invocation_id)
        if not self._claimable(row, now):
            raise spec.InvocationOwned(row.invocation_id)

    def _grant(self, slot: Slot, row: StoredInvocation, owner: str, token: spec.Token, now: int,
               lease_ms: int) -> spec.Invocation:
        """Write the claim of ``row`` to ``slot`` and answer the claimed invocation."""
        claimed = self._claimed(row, owner, token, now, lease_ms)
        slot.update(claimed)
        return self._view(claimed)

    def _claimed(self, row: StoredInvocation, owner: str, token: spec.Token, now: int,
                 lease_ms: int) -> StoredInvocation:
        return attrs.evolve(
            row,
            phase=spec.RUNNING,
            outcome=None,
            token=token,
            owner=owner,
            lease_until=now + lease_ms,
            revision=row.revision + 1,
            updated_at=now,
        )

    def renew(
            self, invocation_id: str, owner_token: spec.Token, now_ms: int, lease_ms: int
    ) -> None:
        self._check_renew(invocation_id, owner_token, now_ms, lease_ms)
        with self._locked(invocation_id) as slot:
            row = self._require(slot)
            self._check_renewer(row, owner_token, now_ms)
            slot.update(self._renewed(row, now_ms, lease_ms))

    def _check_renew(self, invocation_id: Any, token: Any, now_ms: Any, lease_ms: Any) -> None:
        """renew's guard, before any record is looked at."""
        self._check_write(spec.InvalidRenewArguments, invocation_id, token, now_ms, lease_ms)

    def _check_renewer(self, row: StoredInvocation, token: spec.Token, now: int) -> None:
        """renew's fence: the same as every write's (:meth:`_check_writer`)."""
        self._check_writer(row, token, now)

    def _renewed(self, row: StoredInvocation, now: int, lease_ms: int) -> StoredInvocation:
        """What renew stores: the lease runs ``lease_ms`` from ``now``, the revision moves."""
        return attrs.evolve(row, lease_until=now + lease_ms, revision=row.revision + 1,
                            updated_at=now)

    def checkpoint(
        self,
        invocation_id: str,
        owner_token: spec.Token,
        checkpoint: Mapping[str, Any],
        now_ms: int,
        lease_ms: int,
    ) -> None:
        self._check_checkpoint(invocation_id, owner_token, checkpoint, now_ms, lease_ms)
        with self._locked(invocation_id) as slot:
            row = self._require(slot)
            self._check_writer(row, owner_token, now_ms)
            slot.update(self._checkpointed(row, checkpoint, now_ms, lease_ms))

    def _check_checkpoint(self, invocation_id: Any, token: Any, checkpoint: Any, now_ms: Any,
                          lease_ms: Any) -> None:
        """checkpoint's guard, before any record is looked at."""
        self._check_write(spec.InvalidCheckpointArguments, invocation_id, token, now_ms,
                          lease_ms)
        if not self._valid_checkpoint(checkpoint):
            raise spec.InvalidCheckpointArguments(f"{invocation_id!r}: checkpoint is no mapping")

    def _checkpointed(self, row: StoredInvocation, checkpoint: Mapping[str, Any], now: int,
                      lease_ms: int) -> StoredInvocation:
        """What checkpoint stores: the new checkpoint, the lease running ``lease_ms`` from
        ``now``, the revision moved."""
        return attrs.evolve(row, checkpoint=dict(checkpoint), lease_until=now + lease_ms,
                            revision=row.revision + 1, updated_at=now)

    def finish(
        self,
        invocation_id: str,
        owner_token: spec.Token,
        phase: str,
        outcome: Any,
        checkpoint: Mapping[str, Any],
        now_ms: int,
    ) -> None:
        self._check_finish(invocation_id, owner_token, phase, checkpoint, now_ms)
        with self._locked(invocation_id) as slot:
            row = self._require(slot)
            self._check_writer(row, owner_token, now_ms)
            slot.update(self._finished(row, phase, outcome, checkpoint, now_ms))

    def _check_finish(self, invocation_id: Any, token: Any, phase: Any, checkpoint: Any,
                      now_ms: Any) -> None:
        """finish's guard and then its phase, before any record is looked at."""
        self._check_write(spec.InvalidFinishArguments, invocation_id, token, now_ms)
        if not (self._valid_phase_type(phase) and self._valid_checkpoint(checkpoint)):
            raise spec.InvalidFinishArguments(
                f"{invocation_id!r}: phase must be a string, checkpoint a mapping")
        if not self._valid_finish_phase(phase):
            raise spec.InvalidTerminalPhase(repr(phase))

    def _finished(self, row: StoredInvocation, phase: str, outcome: Any,
                  checkpoint: Mapping[str, Any], now: int) -> StoredInvocation:
        """What finish stores: the phase, outcome and checkpoint, no owner, no lease."""
        return attrs.evolve(
            row,
            phase=phase,
            outcome=self._stored_outcome(phase, outcome, checkpoint),
            checkpoint=dict(checkpoint),
            token=None,
            owner=None,
            lease_until=0,
            revision=row.revision + 1,
            updated_at=now,
        )

    def _stored_outcome(self, phase: str, outcome: Any, checkpoint: Mapping[str, Any]) -> Any:
        """What finish stores: like the seed's ledger, under finish_outcome=normalized a failed
        or cancelled finish keeps a safe projection of the outcome (its kind, never the raw
        payload) with the checkpoint; otherwise the outcome as given."""
        if phase not in ("failed", "cancelled") or self.options["finish_outcome"] == "as_given":
            return outcome
        kind = "none" if outcome is None else type(outcome).__name__
        return {"phase": phase, "reason": {"external": kind}, "checkpoint": dict(checkpoint)}

    def delete(self, invocation_id: str) -> None:
        self._check_id(invocation_id)
        with self._locked(invocation_id) as slot:
            row = self._require(slot)
            if not self._deletable(row):
                raise spec.InvocationOwned(invocation_id)
            slot.remove()

    # -- helpers --------------------------------------------------------------------------------

    def _check_id(self, invocation_id: Any) -> None:
        if not self._valid_id(invocation_id):
            raise spec.InvalidInvocationId(f"{invocation_id!r} is no string")

    @staticmethod
    def _require(slot: Slot) -> StoredInvocation:
        if slot.row is None:
            raise spec.NotFound()
        return slot.row

    def _view(self, row: StoredInvocation) -> spec.Invocation:
        owned = row.token is not None
        if self.options["owned_view"] == "live_lease":
            owned = owned and self.env.clock() < row.lease_until
        return row.shown(owned, self._copied)
