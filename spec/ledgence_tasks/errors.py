"""ledgence-tasks: the errors, one :class:`~fencepost.spec.errors.ContractError` subclass per
variant of the seed's ``ContractError`` (``code`` is its name), and :data:`ERRORS`, all of them."""

from __future__ import annotations

from ..errors import ContractError


class InvalidInput(ContractError):
    code = "invalid_input"


class ExternalDispatchRequired(ContractError):
    code = "external_dispatch_required"


class Conflict(ContractError):
    code = "conflict"


class OwnershipLost(ContractError):
    code = "ownership_lost"


class UnknownSession(ContractError):
    code = "unknown_session"


class SessionExpired(ContractError):
    code = "session_expired"


class ObsoleteOperation(ContractError):
    code = "obsolete_operation"


class OutOfOrder(ContractError):
    code = "out_of_order"


class Busy(ContractError):
    code = "busy"


class NotFound(ContractError):
    code = "not_found"


class Unavailable(ContractError):
    """The store could not complete the operation (database error, deadline): never an empty
    queue, never proof that ownership was lost."""

    code = "unavailable"


ERRORS = (InvalidInput, ExternalDispatchRequired, Conflict, OwnershipLost, UnknownSession,
          SessionExpired, ObsoleteOperation, OutOfOrder, Busy, NotFound, Unavailable)
