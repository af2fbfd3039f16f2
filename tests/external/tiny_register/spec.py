"""The tiny-register contract as data: operations, errors, clauses, capabilities."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.authoring import Catalogue, Clause, ContractError, Op, operation

CONTRACT = "tiny-register"


class NotFound(ContractError):
    code = "not_found"


class VersionConflict(ContractError):
    code = "version_conflict"


@operation(CONTRACT, "put")
@attrs.frozen
class Put(Op):
    register: str
    value: Any
    version: int

    def key(self) -> str:
        return self.register


@operation(CONTRACT, "get")
@attrs.frozen
class Get(Op):
    register: str

    def key(self) -> str:
        return self.register


CLAUSES = Catalogue([
    Clause("TINY-PUT-001", "A put at the current version writes",
           "put(register, value, version) with version the register's current version (0 "
           "for a new one) stores value and answers version + 1.",
           ("scenario:put_then_get", "machine")),
    Clause("TINY-PUT-002", "A put at another version is refused",
           "put with any other version answers version_conflict and changes nothing.",
           ("scenario:stale_put", "machine")),
    Clause("TINY-GET-001", "A missing key is not found",
           "get of a register never put answers not_found.", ("scenario:put_then_get", "machine")),
])

PROTOCOL_METHODS = ("put", "get")
CAPABILITIES: dict[str, str] = {}
