"""The tiny-register reference model: a pure step function over {register: (value, version)}."""

from __future__ import annotations

from typing import Any

from fencepost.authoring import ContractModel, Ctx, Err, Ok, Op, Step

from . import spec

State = dict[str, tuple[Any, int]]


def step(state: State, op: Op, ctx: Ctx) -> Step:
    if isinstance(op, spec.Put):
        current = state.get(op.register, (None, 0))[1]
        if op.version != current:
            return Step(Err("version_conflict"), state, "TINY-PUT-002", "TINY-PUT-002")
        return Step(Ok(current + 1), {**state, op.register: (op.value, current + 1)},
                    "TINY-PUT-001", "TINY-PUT-001")
    assert isinstance(op, spec.Get)
    if op.register not in state:
        return Step(Err("not_found"), state, "TINY-GET-001", "TINY-GET-001")
    value, version = state[op.register]
    return Step(Ok({"value": value, "version": version}), state, "TINY-PUT-001",
                "TINY-PUT-001")


def observe(key: str, bindings: Any, state: State) -> Op:
    return spec.Get(key)


MODEL = ContractModel(name=spec.CONTRACT, initial={}, step=step, observe=observe,
                      field_clauses={}, choices=(), durable_clause="TINY-PUT-001")
