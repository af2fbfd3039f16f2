"""The kit's own errors (not contract errors): misuse and bad configuration."""

from __future__ import annotations


class FencepostError(Exception):
    """Root of the kit's own errors."""


class ConfigurationError(FencepostError, ValueError):
    """Bad usage or configuration: unknown contract, bad adapter spec, a store missing protocol
    methods, an unreachable database. The message says what to do instead; the CLI prints it as
    one line and exits 2."""
