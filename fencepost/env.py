"""What an adapter factory receives: :class:`AdapterEnv` (defined with the contracts as data,
in :mod:`fencepost.spec.env`; this is its public import path)."""

from fencepost.spec.env import AdapterEnv

__all__ = ["AdapterEnv"]
