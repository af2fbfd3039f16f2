"""adk-ledger: the contract's name, the capabilities a store may declare, and the protocol
(:class:`InvocationLedger`, the seven methods an adapter implements, :data:`PROTOCOL_METHODS`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from .data import Invocation, Token

CONTRACT = "adk-ledger"

CAPABILITIES = {
    "durable": "calling the factory again with the same env reopens the same data",
    "owner_liveness": "claim and delete consult env.is_alive(owner) and proceed early for a "
    "dead owner",
    "concurrency": "the store may be called from several threads at once (race checks)",
    "fault_injection": "found, not declared: the store's `engine` attribute is the SQLAlchemy "
    "Engine all its transactions run on; the kit injects database failures through its event "
    "hooks (the FAULT clauses)",
}


@runtime_checkable
class InvocationLedger(Protocol):
    """The seven operations of ``adk_invocation_ledger``, one to one.

    Each first refuses the arguments the seed's guard excludes, with its own error
    (:data:`ARGUMENT_ERRORS`; the ADK-ARG clauses say exactly which), before it reads
    anything. Example: ``claim("i1", "c1", "t1", now, 0)`` ->
    ``raise InvalidClaimArguments("lease_ms must be a positive integer")``.
    """

    def create(
        self, invocation_id: str, metadata: Mapping[str, Any], checkpoint: Mapping[str, Any]
    ) -> None: ...

    def get(self, invocation_id: str) -> Invocation: ...

    def claim(
        self, invocation_id: str, owner: str, owner_token: Token, now_ms: int, lease_ms: int
    ) -> Invocation: ...

    def renew(
        self, invocation_id: str, owner_token: Token, now_ms: int, lease_ms: int
    ) -> None: ...

    def checkpoint(
        self,
        invocation_id: str,
        owner_token: Token,
        checkpoint: Mapping[str, Any],
        now_ms: int,
        lease_ms: int,
    ) -> None: ...

    def finish(
        self,
        invocation_id: str,
        owner_token: Token,
        phase: str,
        outcome: Any,
        checkpoint: Mapping[str, Any],
        now_ms: int,
    ) -> None: ...

    def delete(self, invocation_id: str) -> None: ...


PROTOCOL_METHODS = ("create", "get", "claim", "renew", "checkpoint", "finish", "delete")
