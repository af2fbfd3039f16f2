"""The tiny-register declaration: the target of its ``fencepost.contracts`` entry point."""

from __future__ import annotations

from fencepost.authoring import Contract


def declare() -> Contract:
    from fencepost.authoring import Suite

    from . import spec
    from .checks import RACES, SCENARIOS, machine_for
    from .model import MODEL
    from .store import MUTANTS, MemoryRegister, MemoryRegisterFactory

    return Contract(
        name="tiny-register", summary="a versioned register (the README's example contract)",
        spec=spec, suite=Suite.of(spec, MODEL, machine_for, SCENARIOS, RACES),
        memory=MemoryRegisterFactory, memory_store=MemoryRegister, mutants=MUTANTS)
