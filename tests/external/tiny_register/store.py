"""A correct in-memory tiny-register store, and one with a real-world bug."""

from __future__ import annotations

from typing import Any

from fencepost.authoring import AdapterEnv, Mutant

from .spec import NotFound, VersionConflict


class MemoryRegister:
    capabilities: frozenset[str] = frozenset()

    def __init__(self, env: AdapterEnv) -> None:
        self.data: dict[str, tuple[Any, int]] = {}

    def put(self, register: str, value: Any, version: int) -> int:
        current = self.data.get(register, (None, 0))[1]
        if not self.accepts(version, current):
            raise VersionConflict(f"{register} is at version {current}")
        self.data[register] = (value, current + 1)
        return current + 1

    def accepts(self, version: int, current: int) -> bool:
        return version == current

    def get(self, register: str) -> dict[str, Any]:
        if register not in self.data:
            raise NotFound(register)
        value, version = self.data[register]
        return {"value": value, "version": version}


class MemoryRegisterFactory:
    def __init__(self, store_class: type[MemoryRegister] = MemoryRegister) -> None:
        self.store_class = store_class

    def __call__(self, env: AdapterEnv) -> MemoryRegister:
        return self.store_class(env)


class LastWriterWins(MemoryRegister):
    """Ignores the version it is given: a stale writer overwrites a newer value."""

    def accepts(self, version: int, current: int) -> bool:
        return True


MUTANTS = (
    Mutant("last_writer_wins", "a put at a stale version overwrites the newer value",
           "TINY-PUT-002", LastWriterWins, bases=("memory",)),
)


def make_last_writer_wins(env: AdapterEnv) -> MemoryRegister:
    return LastWriterWins(env)
