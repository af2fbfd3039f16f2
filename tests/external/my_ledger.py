"""An adk-ledger adapter written the way an adapter author would: outside fencepost, against
the protocol only. The README walks through checking it:

    PYTHONPATH=tests/external fencepost check adk-ledger --adapter my_ledger:make_ledger

It keeps records in a dict under a lock, declares only the ``concurrency`` capability (so the
durability and owner-liveness clauses are reported unsupported, not failed), and follows the
seed's order of checks: each operation first refuses arguments of the wrong type, as the seed's
function heads do.
"""

from __future__ import annotations

import threading
from typing import Any

from fencepost import AdapterEnv
from fencepost.spec.adk_ledger import (
    FINISH_PHASES,
    AlreadyExists,
    Completed,
    InvalidCheckpointArguments,
    InvalidClaimArguments,
    InvalidCreateArguments,
    InvalidFinishArguments,
    InvalidInvocationId,
    InvalidRenewArguments,
    InvalidTerminalPhase,
    Invocation,
    InvocationOwned,
    LeaseExpired,
    NotFound,
    StaleOwner,
)


def _guard(admitted: bool, error: type[Exception]) -> None:
    """The seed's function heads refuse arguments of the wrong type before anything else."""
    if not admitted:
        raise error("arguments outside the operation's guard")


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _lease(value: Any) -> bool:
    return _integer(value) and value > 0


class DictLedger:
    capabilities = frozenset({"concurrency"})

    def __init__(self, clock: Any) -> None:
        self._clock = clock
        self._rows: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def create(self, invocation_id: str, metadata: Any, checkpoint: Any) -> None:
        _guard(isinstance(invocation_id, str) and invocation_id != ""
               and isinstance(metadata, dict) and isinstance(checkpoint, dict),
               InvalidCreateArguments)
        with self._lock:
            if invocation_id in self._rows:
                raise AlreadyExists(invocation_id)
            now = self._clock()
            self._rows[invocation_id] = {
                "workflow_id": metadata.get("workflow_id"),
                "workflow_version": metadata.get("workflow_version"),
                "kind": metadata.get("kind"),
                "checkpoint": dict(checkpoint), "phase": "ready", "outcome": None,
                "token": None, "owner": None, "lease_until": 0, "revision": 0,
                "created_at": now, "updated_at": now,
            }

    def get(self, invocation_id: str) -> Invocation:
        _guard(isinstance(invocation_id, str), InvalidInvocationId)
        with self._lock:
            return self._view(invocation_id, self._row(invocation_id))

    def claim(self, invocation_id: str, owner: str, owner_token: str | bytes, now_ms: int,
              lease_ms: int) -> Invocation:
        # a token is a binary: text or bytes, as the seed's caller makes them
        _guard(isinstance(invocation_id, str) and isinstance(owner, str)
               and isinstance(owner_token, str | bytes) and len(owner_token) > 0
               and _integer(now_ms)
               and _lease(lease_ms), InvalidClaimArguments)
        with self._lock:
            row = self._row(invocation_id)
            if row["phase"] == "completed":
                raise Completed(invocation_id)
            if row["token"] is not None and now_ms < row["lease_until"]:
                raise InvocationOwned(invocation_id)
            row.update(phase="running", outcome=None, token=owner_token, owner=owner,
                       lease_until=now_ms + lease_ms, revision=row["revision"] + 1,
                       updated_at=now_ms)
            return self._view(invocation_id, row)

    def renew(self, invocation_id: str, owner_token: str | bytes, now_ms: int,
              lease_ms: int) -> None:
        _guard(self._write_args(invocation_id, owner_token, now_ms) and _lease(lease_ms),
               InvalidRenewArguments)
        with self._lock:
            row = self._writable(invocation_id, owner_token, now_ms)
            row.update(lease_until=now_ms + lease_ms, revision=row["revision"] + 1,
                       updated_at=now_ms)

    def checkpoint(self, invocation_id: str, owner_token: str | bytes, checkpoint: Any, now_ms: int,
                   lease_ms: int) -> None:
        _guard(self._write_args(invocation_id, owner_token, now_ms) and _lease(lease_ms)
               and isinstance(checkpoint, dict), InvalidCheckpointArguments)
        with self._lock:
            row = self._writable(invocation_id, owner_token, now_ms)
            row.update(checkpoint=dict(checkpoint), lease_until=now_ms + lease_ms,
                       revision=row["revision"] + 1, updated_at=now_ms)

    def finish(self, invocation_id: str, owner_token: str | bytes, phase: str, outcome: Any,
               checkpoint: Any, now_ms: int) -> None:
        _guard(self._write_args(invocation_id, owner_token, now_ms) and isinstance(phase, str)
               and isinstance(checkpoint, dict), InvalidFinishArguments)
        if phase not in FINISH_PHASES:
            raise InvalidTerminalPhase(phase)
        with self._lock:
            row = self._writable(invocation_id, owner_token, now_ms)
            if phase in ("failed", "cancelled"):  # like the seed: never store a raw error payload
                outcome = {"phase": phase, "reason": "redacted"}
            row.update(phase=phase, outcome=outcome, checkpoint=dict(checkpoint), token=None,
                       owner=None, lease_until=0, revision=row["revision"] + 1,
                       updated_at=now_ms)

    def delete(self, invocation_id: str) -> None:
        _guard(isinstance(invocation_id, str), InvalidInvocationId)
        with self._lock:
            row = self._row(invocation_id)
            if row["token"] is not None and self._clock() < row["lease_until"]:
                raise InvocationOwned(invocation_id)
            del self._rows[invocation_id]

    @staticmethod
    def _write_args(invocation_id: Any, token: Any, now_ms: Any) -> bool:
        return (isinstance(invocation_id, str) and isinstance(token, str | bytes)
                and _integer(now_ms))

    def _row(self, invocation_id: str) -> dict[str, Any]:
        try:
            return self._rows[invocation_id]
        except KeyError:
            raise NotFound(invocation_id) from None

    def _writable(self, invocation_id: str, token: str, now_ms: int) -> dict[str, Any]:
        row = self._row(invocation_id)
        if row["phase"] != "running" or row["token"] != token:
            raise StaleOwner(invocation_id)
        if now_ms >= row["lease_until"]:
            raise LeaseExpired(invocation_id)
        return row

    @staticmethod
    def _view(invocation_id: str, row: dict[str, Any]) -> Invocation:
        return Invocation(
            invocation_id=invocation_id, workflow_id=row["workflow_id"],
            workflow_version=row["workflow_version"], kind=row["kind"],
            checkpoint=dict(row["checkpoint"]), phase=row["phase"], outcome=row["outcome"],
            owned=row["token"] is not None, owner=row["owner"],
            lease_until=row["lease_until"], revision=row["revision"],
            created_at=row["created_at"], updated_at=row["updated_at"],
        )


def make_ledger(env: AdapterEnv) -> DictLedger:
    """The factory: ``fencepost check adk-ledger --adapter my_ledger:make_ledger``."""
    return DictLedger(env.clock)


def make_zombie_ledger(env: AdapterEnv) -> DictLedger:
    """The same ledger with a zombie-write bug: checkpoint skips the token check."""
    ledger = DictLedger(env.clock)

    def checkpoint(invocation_id: str, owner_token: str | bytes, checkpoint: Any, now_ms: int,
                   lease_ms: int) -> None:
        with ledger._lock:
            row = ledger._row(invocation_id)
            if row["phase"] != "running" or now_ms >= row["lease_until"]:
                raise StaleOwner(invocation_id)
            row.update(checkpoint=dict(checkpoint), lease_until=now_ms + lease_ms,
                       revision=row["revision"] + 1, updated_at=now_ms)

    ledger.checkpoint = checkpoint  # type: ignore[method-assign]
    return ledger


def make_incomplete(env: AdapterEnv) -> object:
    """A factory whose store lacks protocol methods (the CLI must exit 2)."""
    return object()
