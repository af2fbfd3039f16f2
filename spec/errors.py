"""The root of every contract's error hierarchy, and the kit's own errors (misuse and bad
configuration), which every layer may raise."""

from __future__ import annotations

from typing import Any, ClassVar


class ContractError(Exception):
    """An answer the contract allows a store to give instead of a result.

    Each contract module subclasses this once per seed error; ``code`` is the seed's own word
    (``stale_owner``, ``lease_expired``...). Adapters raise these; the kit turns them into
    ``Err(code, detail, payload)`` outcomes. ``payload`` is part of the answer where the seed
    carries one (``deferred(ms)``, ``conflict(snapshot)``) and is compared; ``detail`` is free
    text for people and is not.
    """

    code: ClassVar[str] = "contract_error"

    def __init__(self, detail: str = "", payload: Any = None) -> None:
        super().__init__(detail or self.code)
        self.detail = detail
        self.payload = payload


class BackendUnavailable(ContractError):
    """The store's backend could not answer (connection lost, server down). Not a contract
    verdict: a check that meets it reports ``unknown``, never pass or fail."""

    code = "backend_unavailable"


class FencepostError(Exception):
    """Root of the kit's own errors."""


class ConfigurationError(FencepostError, ValueError):
    """Bad usage or configuration: unknown contract, bad adapter spec, a store missing protocol
    methods, an unreachable database. The message says what to do instead; the CLI prints it as
    one line and exits 2."""


def told(e: BaseException) -> str:
    """What an exception says (``str(e)``, as plain text), even when its ``__str__`` raises or
    gives a ``str`` subclass of its own: a store's exception must never crash the kit that
    reports it."""
    try:
        return str.__str__(str(e))  # plain text, though its __str__ gave a str subclass
    except BaseException:  # noqa: BLE001 - whatever it raises, the answer is a description
        return f"<a {type(e).__name__} whose str() raised>"


def exception_said(e: BaseException) -> str:
    """``Kind: first line of its text`` (the kind alone when it says nothing)."""
    text = told(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__
