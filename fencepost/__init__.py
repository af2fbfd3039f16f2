"""Fencepost: a deterministic simulation and conformance kit for lease-fenced task stores.

The public entry points::

    fencepost.check(contract, adapter, profile="quick", seed=None, options=None) -> RunReport
    fencepost.assert_conforms(contract, adapter, ...)   # raises AssertionError on any failure
    fencepost.check_concurrent(contract, adapter, threads=8, ops=5000) -> ConcurrentRun
    fencepost.AdapterEnv                                 # what factory(env) receives

``check``, ``assert_conforms`` and ``check_concurrent`` are imported on first use, so importing
fencepost is cheap; type checkers see their real signatures.
"""

from typing import TYPE_CHECKING, Any

from .env import AdapterEnv
from .errors import ConfigurationError, FencepostError

if TYPE_CHECKING:
    from .api import assert_conforms, check, check_concurrent

__version__ = "0.1.0"
__all__ = [
    "AdapterEnv",
    "ConfigurationError",
    "FencepostError",
    "assert_conforms",
    "check",
    "check_concurrent",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in ("check", "assert_conforms", "check_concurrent"):
        from . import api as _api

        return getattr(_api, name)
    raise AttributeError(f"module 'fencepost' has no attribute {name!r}")
