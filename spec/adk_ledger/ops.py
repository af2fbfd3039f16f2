"""adk-ledger: the operations as data, one frozen :class:`~fencepost.spec.ops.Op` class per
protocol method, registered for the contract on import (:func:`~fencepost.spec.ops.operation`);
:data:`WRITES` are the three that need the owner's token."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..ops import Op, operation
from .data import Token
from .protocol import CONTRACT


class _Keyed(Op):
    invocation_id: str

    def key(self) -> str | None:
        # An id that is no string (sent to prove the guards) names no record.
        return self.invocation_id if isinstance(self.invocation_id, str) else None


@operation(CONTRACT, "create")
@attrs.frozen
class Create(_Keyed):
    invocation_id: str
    metadata: Mapping[str, Any]
    checkpoint: Mapping[str, Any]


@operation(CONTRACT, "get")
@attrs.frozen
class Get(_Keyed):
    invocation_id: str


@operation(CONTRACT, "claim")
@attrs.frozen
class Claim(_Keyed):
    invocation_id: str
    owner: str
    owner_token: Token
    now_ms: int
    lease_ms: int


@operation(CONTRACT, "renew")
@attrs.frozen
class Renew(_Keyed):
    invocation_id: str
    owner_token: Token
    now_ms: int
    lease_ms: int


@operation(CONTRACT, "checkpoint")
@attrs.frozen
class Checkpoint(_Keyed):
    invocation_id: str
    owner_token: Token
    checkpoint: Mapping[str, Any]
    now_ms: int
    lease_ms: int


@operation(CONTRACT, "finish")
@attrs.frozen
class Finish(_Keyed):
    invocation_id: str
    owner_token: Token
    phase: str
    outcome: Any
    checkpoint: Mapping[str, Any]
    now_ms: int


@operation(CONTRACT, "delete")
@attrs.frozen
class Delete(_Keyed):
    invocation_id: str


WRITES = (Renew, Checkpoint, Finish)
