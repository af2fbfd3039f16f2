"""Operations as data: one frozen class per protocol method, serializable to JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import attrs

from .values import decode, encode

_OPS: dict[str, dict[str, type[Op]]] = {}


class Op:
    """Base of every operation. ``name`` is the protocol method the op calls."""

    contract: ClassVar[str]
    name: ClassVar[str]

    def arguments(self) -> dict[str, Any]:
        return {a.name: getattr(self, a.name) for a in attrs.fields(type(self))}  # type: ignore[arg-type]

    def invoke(self, store: Any) -> Any:
        """Call the matching method of ``store`` with this op's arguments, positionally in the
        protocol's order (so an adapter's own parameter names do not matter)."""
        return getattr(store, self.name)(*self.arguments().values())

    def key(self) -> str | None:
        """The record this op touches (for partitioning and for observation)."""
        return None

    def to_json(self) -> dict[str, Any]:
        return {"op": self.name, **{k: encode(v) for k, v in self.arguments().items()}}

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments().items())
        return f"{self.name}({args})"


OpT = TypeVar("OpT", bound=type[Op])


def operation(contract: str, name: str) -> Callable[[OpT], OpT]:
    """Class decorator for an ``@attrs.frozen`` op class: name it after the protocol method and
    register it for JSON decoding."""

    def register(cls: OpT) -> OpT:
        cls.contract = contract
        cls.name = name
        _OPS.setdefault(contract, {})[name] = cls
        return cls

    return register


def operations(contract: str) -> dict[str, type[Op]]:
    """The op classes of ``contract`` by protocol method name (its spec module imported)."""
    return dict(_OPS.get(contract, {}))


def op_from_json(contract: str, data: dict[str, Any]) -> Op:
    """Rebuild an op saved with :meth:`Op.to_json`."""
    cls = _OPS[contract][data["op"]]
    return cls(**{k: decode(v) for k, v in data.items() if k != "op"})
