"""adk-ledger: the values the ledger keeps and answers: owner tokens, phases, the metadata keys
kept, :class:`Invocation` (what ``get`` and ``claim`` return) and :class:`StoredInvocation` (the
record schema the stores and the model share)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ..values import value_class

Token = str | bytes
"""An owner token: an Erlang binary, which in Python is text or bytes. The seed's caller sends
``crypto:strong_rand_bytes(32)`` (adk_workflow_run.erl:332): raw bytes, seldom valid UTF-8; the
ledger takes any binary (mnesia.erl:98, 139, 153, 171). A store compares tokens as values
(``==``): the kit never sends one token once as text and once as bytes."""

READY, RUNNING, COMPLETED = "ready", "running", "completed"
FINISH_PHASES = ("completed", "failed", "timed_out", "cancelled", "paused")
PHASES = (READY, RUNNING, *FINISH_PHASES)
METADATA_KEYS = ("workflow_id", "workflow_version", "kind")


@value_class
@attrs.frozen
class Invocation:
    """What ``get`` and ``claim`` return: the record without its owner token.

    ``owner`` is the seed's ``owner_node`` (choice ``owner_view``): under ``node`` (the seed)
    a value of the store's own for the claimant (in the seed ``node(OwnerPid)``: the same for
    every coordinator of one node), present while a token is stored and the same on every
    read for one claimant; under ``claimant`` exactly the owner given to the last successful
    claim. ``None`` after create and once finished. ``owned`` is true while a token is stored,
    even after the lease expired (choice ``owned_view``).
    """

    invocation_id: str
    workflow_id: Any
    workflow_version: Any
    kind: Any
    checkpoint: Mapping[str, Any]
    phase: str
    outcome: Any
    owned: bool
    owner: str | None
    lease_until: int
    revision: int
    created_at: int
    updated_at: int


@attrs.frozen
class StoredInvocation:
    """What a store keeps for one invocation (the record schema, declared once for the
    stores and the model): :class:`Invocation`'s fields with the owner ``token`` in place of
    ``owned`` (``owned`` is derived from it, see choice ``owned_view``)."""

    invocation_id: str
    workflow_id: Any
    workflow_version: Any
    kind: Any
    checkpoint: Mapping[str, Any]
    phase: str
    outcome: Any
    token: Token | None
    owner: str | None
    lease_until: int
    revision: int
    created_at: int
    updated_at: int

    @classmethod
    def created(cls, invocation_id: str, metadata: Mapping[str, Any],
                checkpoint: Mapping[str, Any], now: int) -> StoredInvocation:
        """A record as ``create`` leaves it at ``now``: ready, unowned, revision 0 (an absent
        metadata key reads as none)."""
        return cls(
            invocation_id=invocation_id, workflow_id=metadata.get("workflow_id"),
            workflow_version=metadata.get("workflow_version"), kind=metadata.get("kind"),
            checkpoint=checkpoint, phase=READY, outcome=None, token=None, owner=None,
            lease_until=0, revision=0, created_at=now, updated_at=now)

    def shown(self, owned: bool,
              copied: Callable[[Any], Any] | None = None) -> Invocation:
        """The record as ``get`` and ``claim`` answer it (a copy of its checkpoint), ``owned``
        as the store's reading of choice ``owned_view`` decides; with ``copied``, each of the
        caller's values (metadata, checkpoint, outcome) is ``copied(value)`` instead (a store
        that keeps its records as objects copies them deep)."""
        keep = _as_kept if copied is None else copied
        return Invocation(
            invocation_id=self.invocation_id, workflow_id=keep(self.workflow_id),
            workflow_version=keep(self.workflow_version), kind=keep(self.kind),
            checkpoint=dict(self.checkpoint) if copied is None else copied(self.checkpoint),
            phase=self.phase, outcome=keep(self.outcome), owned=owned, owner=self.owner,
            lease_until=self.lease_until, revision=self.revision, created_at=self.created_at,
            updated_at=self.updated_at)


def _as_kept(value: Any) -> Any:
    return value
