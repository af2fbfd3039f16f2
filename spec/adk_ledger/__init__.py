"""The ``adk-ledger`` contract: the erlang_adk durable invocation ledger.

This package is the contract's public face: import every name from here. Its modules split the
contract along its parts: :mod:`.protocol` (the name, the capabilities and the seven methods of
:class:`InvocationLedger`), :mod:`.data` (tokens, phases, :class:`Invocation` and the record
schema), :mod:`.errors` (one error per seed error and each operation's argument error),
:mod:`.ops` (the operations as data, registered for the contract when this package is
imported), :mod:`.options` (``CHOICES``) and :mod:`.catalogue` (``CLAUSES``).

An adapter is any object with the seven methods of :class:`InvocationLedger`, built by a factory
``factory(env) -> store`` (see :class:`fencepost.AdapterEnv`). Time is explicit where the seed
passes ``NowMs``; ``create`` timestamps and ``delete``'s ownership check read ``env.clock()``.

Example::

    from fencepost.spec.adk_ledger import StaleOwner

    def checkpoint(self, invocation_id, owner_token, checkpoint, now_ms, lease_ms):
        row = self._rows.get(invocation_id)
        if row is None:
            raise NotFound(invocation_id)
        if row.token != owner_token:
            raise StaleOwner(invocation_id)
        ...
"""

from __future__ import annotations

from ..errors import BackendUnavailable, ContractError
from .catalogue import ARGS as ARGS
from .catalogue import CATALOGUE_VERSION as CATALOGUE_VERSION
from .catalogue import CLAUSES
from .catalogue import FAULT_CHECKS as FAULT_CHECKS
from .catalogue import M as M
from .data import COMPLETED as COMPLETED
from .data import FINISH_PHASES, PHASES, Invocation, Token
from .data import METADATA_KEYS as METADATA_KEYS
from .data import READY as READY
from .data import RUNNING as RUNNING
from .data import StoredInvocation as StoredInvocation
from .errors import (
    ARGUMENT_ERRORS,
    AlreadyExists,
    Completed,
    InvalidCheckpointArguments,
    InvalidClaimArguments,
    InvalidCreateArguments,
    InvalidFinishArguments,
    InvalidInvocationId,
    InvalidRenewArguments,
    InvalidTerminalPhase,
    InvocationOwned,
    LeaseExpired,
    NotFound,
    StaleOwner,
)
from .ops import WRITES as WRITES
from .ops import Checkpoint, Claim, Create, Delete, Finish, Get, Renew
from .options import CHOICES
from .protocol import CAPABILITIES, CONTRACT, InvocationLedger
from .protocol import PROTOCOL_METHODS as PROTOCOL_METHODS

# What ``from fencepost.spec.adk_ledger import *`` gives (a replay script's first line); the
# names imported ``as`` themselves above are public too, but not star-exported.
__all__ = [
    "CONTRACT",
    "PHASES",
    "FINISH_PHASES",
    "CAPABILITIES",
    "CHOICES",
    "CLAUSES",
    "Invocation",
    "InvocationLedger",
    "Token",
    "ContractError",
    "AlreadyExists",
    "NotFound",
    "Completed",
    "InvocationOwned",
    "StaleOwner",
    "LeaseExpired",
    "InvalidTerminalPhase",
    "InvalidCreateArguments",
    "InvalidInvocationId",
    "InvalidClaimArguments",
    "InvalidRenewArguments",
    "InvalidCheckpointArguments",
    "InvalidFinishArguments",
    "ARGUMENT_ERRORS",
    "BackendUnavailable",
    "Create",
    "Get",
    "Claim",
    "Renew",
    "Checkpoint",
    "Finish",
    "Delete",
]
