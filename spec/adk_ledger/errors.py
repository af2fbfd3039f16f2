"""adk-ledger: the errors, one :class:`~fencepost.spec.errors.ContractError` subclass per seed
error (``code`` is the seed's atom), and :data:`ARGUMENT_ERRORS`, each operation's answer to
arguments its guard excludes."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ContractError


class AlreadyExists(ContractError):
    code = "already_exists"


class NotFound(ContractError):
    code = "not_found"


class Completed(ContractError):
    code = "completed"


class InvocationOwned(ContractError):
    code = "invocation_owned"


class StaleOwner(ContractError):
    code = "stale_owner"


class LeaseExpired(ContractError):
    code = "lease_expired"


class InvalidTerminalPhase(ContractError):
    code = "invalid_terminal_phase"


# The answers of the seed's function heads to arguments their guards exclude (a Python store,
# which nothing stands in front of, checks them itself, before it reads anything): an id,
# token or owner that is no string, a time that is no integer (``True`` and ``2.5`` are none),
# a lease_ms that is no positive integer, metadata, a checkpoint that is no mapping, a phase
# that is no string; and, under ``empty_strings=refused`` (the seed), the empty id of create
# and the empty token of claim. The ADK-ARG clauses say which operation checks what.


class InvalidCreateArguments(ContractError):
    """create's guard (mnesia.erl:52-54, answered at 79-80)."""

    code = "invalid_create_arguments"


class InvalidInvocationId(ContractError):
    """get's and delete's guard: the id is no string (mnesia.erl:82 and 93-94, 197 and
    215-216). An empty id is a string: ``not_found``."""

    code = "invalid_invocation_id"


class InvalidClaimArguments(ContractError):
    """claim's guard (mnesia.erl:96-99, answered at 135-136)."""

    code = "invalid_claim_arguments"


class InvalidRenewArguments(ContractError):
    """renew's guard (mnesia.erl:138-140, answered at 149-150)."""

    code = "invalid_renew_arguments"


class InvalidCheckpointArguments(ContractError):
    """checkpoint's guard (mnesia.erl:152-154, answered at 166-168)."""

    code = "invalid_checkpoint_arguments"


class InvalidFinishArguments(ContractError):
    """finish's guard (mnesia.erl:170-172, answered at 193-195), checked before the phase is
    validated: a phase that is no string is this, not ``invalid_terminal_phase``."""

    code = "invalid_finish_arguments"


ARGUMENT_ERRORS: Mapping[str, type[ContractError]] = {
    "create": InvalidCreateArguments,
    "get": InvalidInvocationId,
    "delete": InvalidInvocationId,
    "claim": InvalidClaimArguments,
    "renew": InvalidRenewArguments,
    "checkpoint": InvalidCheckpointArguments,
    "finish": InvalidFinishArguments,
}
"""Each operation's answer to arguments its guard excludes."""
