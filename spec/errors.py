"""The root of every contract's error hierarchy."""

from __future__ import annotations

from typing import ClassVar


class ContractError(Exception):
    """An answer the contract allows a store to give instead of a result.

    Each contract module subclasses this once per seed error; ``code`` is the seed's own word
    (``stale_owner``, ``lease_expired``...). Adapters raise these; the kit turns them into
    ``Err(code)`` outcomes.
    """

    code: ClassVar[str] = "contract_error"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail or self.code)
        self.detail = detail


class Unavailable(ContractError):
    """The store could not answer (connection lost, server down). Not a contract verdict:
    a check that meets it reports ``unknown``, never pass or fail."""

    code = "unavailable"
