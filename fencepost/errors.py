"""The kit's own errors (not contract errors): misuse and bad configuration (defined in
:mod:`fencepost.spec.errors`, which every layer may import; this is their public import
path)."""

from fencepost.spec.errors import ConfigurationError, FencepostError

__all__ = ["ConfigurationError", "FencepostError"]
