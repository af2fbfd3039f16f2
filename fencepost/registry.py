"""Contracts by name (found through the ``fencepost.contracts`` entry points), and the checks of
the options and capabilities a command names for one. Adapter specs are
:mod:`fencepost.adapter_spec`'s; ``exec:`` adapters :mod:`fencepost.wire_spec`'s."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points

from .contract import Contract
from .errors import ConfigurationError

ENTRY_POINTS = "fencepost.contracts"
"""The entry-point group contracts are declared in (name = "module:function")."""

def contract_names() -> tuple[str, ...]:
    """The names of every installed contract, in alphabetical order. Nothing is imported."""
    return tuple(sorted(_entry_points()))


def contract_named(name: str) -> Contract:
    """The contract ``name``, declared by its entry point (imported once, on first use)."""
    points = _entry_points()
    if name not in points:
        raise ConfigurationError(
            f"unknown contract {name!r}; choose one of {', '.join(contract_names())}")
    return _load(name, points[name])


@functools.cache
def _entry_points() -> dict[str, EntryPoint]:
    """The ``fencepost.contracts`` entry points (read once per process: reading them scans
    every installed distribution)."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINTS):
        found.setdefault(point.name, point)  # a distribution found twice on the path
    return found


@functools.cache
def _load(name: str, point: EntryPoint) -> Contract:
    try:
        declare = point.load()
        declared = declare()
    except Exception as e:  # noqa: BLE001 - a broken plugin, said as such
        raise ConfigurationError(
            f"the contract {name!r} ({point.value}) cannot be loaded: "
            f"{type(e).__name__}: {e}") from e
    if not isinstance(declared, Contract) or declared.name != name:
        raise ConfigurationError(
            f"the entry point {name} = {point.value} must name a function returning "
            f"fencepost.contract.Contract(name={name!r}, ...), not {declared!r:.80}")
    return declared


def parse_options(pairs: Iterable[str], flag: str = "--option") -> dict[str, str]:
    """``["NAME=VALUE", ...]`` as a dict; a pair without ``=`` or a name is a
    ConfigurationError (it is never dropped)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigurationError(f"{flag} takes NAME=VALUE, not {pair!r}")
        out[key] = value
    return out


def validate_options(contract_name: str, options: Mapping[str, str]) -> dict[str, str]:
    """``options`` if each names a choice or setting of the contract with an allowed value
    (as the run itself checks them), else ConfigurationError naming the known ones."""
    from fencepost.model.base import options_with_defaults

    contract = contract_named(contract_name)
    try:
        options_with_defaults(contract.choices, options, contract.settings)
    except ValueError as e:
        raise ConfigurationError(str(e)) from None
    return dict(options)


def validate_capabilities(contract_name: str, names: Iterable[str]) -> frozenset[str]:
    """``names`` if each is a capability of the contract, else ConfigurationError."""
    known = contract_named(contract_name).capabilities
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ConfigurationError(
            f"unknown capability {', '.join(map(repr, unknown))} for {contract_name}; "
            f"known: {', '.join(known)}")
    return frozenset(names)
