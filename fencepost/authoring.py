"""Everything a contract's author imports, from one module (as ``hypothesis.stateful`` is for
machines).

A contract outside the kit is one package of a few modules (see docs/extending.md, "Adding a
contract" and ``tests/external/tiny_register``), each importing only this module from the kit:

- the contract as data: :func:`operation` on an :class:`Op` subclass per operation,
  :class:`ContractError` subclasses for its refusals, :class:`Clause` (with
  :func:`situation`\\ s), :class:`Choice` and :class:`Setting` (named options) gathered in a
  :class:`Catalogue`;
- the reference model: a pure ``step(state, op, ctx) -> Step`` answering :class:`Ok` or
  :class:`Err` and naming the clause each decision follows, wrapped in a
  :class:`ContractModel`;
- the stores: a factory ``factory(env: AdapterEnv) -> store``, and :class:`Mutant`, a
  mutant with the clause that must catch it;
- the checks: :class:`Scenarios` and :class:`Races` (registries of scripted checks run on a
  :class:`Harness`), a :class:`WorldMachine` subclass (the state machine), gathered in a
  :class:`Suite`; and the declaration, a :class:`Contract` returned by the function its
  ``fencepost.contracts`` entry point names;
- a new kind of check: a :class:`CheckKind` (its ``fencepost.check_kinds`` entry point), whose
  ``run`` gets a :class:`PartRun`, finds what a contract declares for it with
  :func:`material`, runs each check with :func:`run_one` and says so with a :class:`Said`.

Blame stays with the model: every difference between the store's answer and the model's is
charged to the clause the model's :class:`Step` names for that decision (``clause`` for the
answer, ``effect_clause`` for what a read-back shows), narrowed by the model's
``field_clauses``, ``refusal_clauses`` and ``answer_clause`` (see :class:`ContractModel`).
"""

from __future__ import annotations

from fencepost.adapters.mutants.base import Mutant
from fencepost.model.base import ContractModel, Ctx, Step
from fencepost.scenarios.checks import Races, Scenarios
from fencepost.scenarios.harness import Harness, World
from fencepost.scenarios.kinds import CheckKind, PartRun, material
from fencepost.scenarios.machine import WorldMachine
from fencepost.scenarios.phases import run_one
from fencepost.scenarios.said import Said
from fencepost.scenarios.suite import Suite
from fencepost.spec.clauses import Catalogue, Choice, Clause, Setting, Situation, situation
from fencepost.spec.errors import ContractError
from fencepost.spec.ops import Op, operation
from fencepost.spec.outcome import Err, Ok

from .contract import Contract, Factory
from .env import AdapterEnv

__all__ = [
    "AdapterEnv",
    "Catalogue",
    "CheckKind",
    "Choice",
    "Clause",
    "Contract",
    "ContractError",
    "ContractModel",
    "Ctx",
    "Err",
    "Factory",
    "Harness",
    "Mutant",
    "Ok",
    "Op",
    "PartRun",
    "Races",
    "Said",
    "Scenarios",
    "Setting",
    "Situation",
    "Step",
    "Suite",
    "World",
    "WorldMachine",
    "material",
    "operation",
    "run_one",
    "situation",
]
