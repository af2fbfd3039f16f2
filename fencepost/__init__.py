"""Fencepost: a deterministic simulation and conformance kit for lease-fenced task stores.

The public entry points::

    fencepost.check(contract, adapter, profile="quick", seed=None, options=None) -> RunReport
    fencepost.assert_conforms(contract, adapter, ...)   # raises AssertionError on any failure
    fencepost.AdapterEnv                                 # what factory(env) receives

``check`` and ``assert_conforms`` are imported on first use, so importing fencepost is cheap.
"""

from typing import Any

from .env import AdapterEnv
from .errors import ConfigurationError, FencepostError

__version__ = "0.1.0"
__all__ = [
    "AdapterEnv",
    "ConfigurationError",
    "FencepostError",
    "assert_conforms",
    "check",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in ("check", "assert_conforms"):
        from . import api as _api

        return getattr(_api, name)
    raise AttributeError(f"module 'fencepost' has no attribute {name!r}")
