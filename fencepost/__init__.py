"""Fencepost: a deterministic simulation and conformance kit for lease-fenced task stores."""

from .env import AdapterEnv

__version__ = "0.1.0"
__all__ = ["AdapterEnv", "__version__"]
