"""Check the checker: run the kit against every mutant of a contract.

A mutant: a store with one known, real-world bug, each caught by the clause it breaks. Each
contract lists its own (``Contract.mutants``, from ``adapters/<contract>/mutants/``), each a
:class:`~fencepost.adapters.mutants.base.Mutant`."""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from fencepost.adapters.mutants.base import Expected, Mutant
from fencepost.reports.render import UNAVAILABLE
from fencepost.reports.verdict import UNKNOWN, RunReport
from fencepost.scenarios.said import Progress, Said, quiet
from fencepost.spec.outcome import Crash

from .adapter_spec import TempSqliteFactory
from .api import check
from .contract import Contract
from .env import AdapterEnv
from .errors import ConfigurationError
from .registry import contract_named
from .wire_spec import exec_factory

if TYPE_CHECKING:
    from fencepost.scenarios.evidence import Evidence

BASES = ("memory", "sqlite", "exec")
"""What a mutant is built on: the memory or SQLite store, or the memory store served over
the wire protocol (``fencepost serve --mutant NAME``, run as ``exec:``): the same bugs, caught
through fencepost-wire/1."""


@attrs.frozen
class MutantRow:
    """One line of the mutants table (and of ``mutants.json``). ``expected`` is what the
    expected clause must be (``fail``, or ``unknown`` for a store whose backend faults);
    ``caught_by`` the clauses that failed, and for an expected ``unknown`` the clauses unknown
    for the store's faulted calls."""

    name: str
    bug: str
    expected_clause: str
    options: dict[str, str]
    caught: bool
    caught_by: list[str]
    steps: int
    seconds: float
    expected: str = "fail"
    crashed: bool = False
    """The counterexample shown holds an answer the store raised that is no contract error
    (:class:`~fencepost.spec.outcome.Crash`). Unless the mutant's bug is such a raise on its
    base (``Mutant.crashes``), it broke on its way and is not ``caught``: the catch would not show
    the kit telling its bug from the rule."""


def mutant_factory(contract: Contract, mutant: Any, base: str) -> Callable[[AdapterEnv], Any]:
    """A factory for ``mutant`` built on the correct ``base`` store."""
    if base == "exec":
        return exec_factory(contract, shlex.join([sys.executable, "-m", "fencepost.cli", "serve",
                                               contract.name, "--mutant", mutant.name]))
    store_class = mutant.store_class(contract.store_class(base))
    if base == "memory":
        return contract.memory_factory(store_class)
    return TempSqliteFactory(contract, store_class)


def elsewhere(contract_name: str, base: str, only: list[str] | None = None
              ) -> dict[str, list[str]]:
    """The mutants (of ``only``, if given) that do not run on ``base``, by the
    base they need: ``{"sqlite": ["commit_failure_ignored", ...]}`` (a fault only SQL shows)."""
    out: dict[str, list[str]] = {}
    for mutant in contract_named(contract_name).mutants:
        if not runs_on(mutant, base) and (not only or mutant.name in only):
            out.setdefault(mutant.bases[0], []).append(mutant.name)
    return out


def runs_on(mutant: Any, base: str) -> bool:
    """Can ``mutant`` be built on ``base`` (over the wire: if it runs on memory)?"""
    return base in mutant.bases or (base == "exec" and "memory" in mutant.bases)


def expected_on(mutant: Mutant, base: str) -> Expected:
    """What ``mutant``'s clause must be on ``base``: its own expectation, except that over the
    wire a bug that is a raise (``Mutant.crashes``) is a fault the kit cannot tell from a
    backend that failed, so its clause is expected unknown (the store unavailable), never a
    pass."""
    if base == "exec" and mutant.expected == Expected.FAIL and mutant.crashes_on(base):
        return Expected.UNKNOWN
    return mutant.expected


def _judged(mutant: Mutant, base: str) -> Callable[[Evidence], bool]:
    """Has the mutant's clause got its expected verdict yet (the point at which its run may
    stop): failed, or for an expected unknown, failed or lost."""
    clause = mutant.expected_clause
    if expected_on(mutant, base) == Expected.UNKNOWN:
        return lambda evidence: clause in evidence.failures or clause in evidence.unknown
    return lambda evidence: clause in evidence.failures


def caught(mutant: Mutant, report: RunReport, base: str = "memory") -> tuple[bool, list[str]]:
    """Was ``mutant`` caught in ``report`` on ``base``, and by which clauses. A bug is caught
    when its clause failed. A store expected ``unknown`` (its backend faults, see
    :class:`~fencepost.adapters.mutants.base.Expected`) is caught when its clause is unknown
    because more of the concurrent run's calls faulted than the profile allows, and no clause
    failed (it is otherwise correct: a failure would be the kit crying wolf). A bug that is a
    raise, over the wire (:func:`expected_on`), is caught when its clause failed or is
    unknown because the store was unavailable."""
    failed = [v.clause.id for v in report.failed()]
    if expected_on(mutant, base) == Expected.FAIL:
        return mutant.expected_clause in failed, failed
    if mutant.expected == Expected.FAIL:  # a raise, over the wire
        lost = [v.clause.id for v in report.verdicts
                if v.status == UNKNOWN and UNAVAILABLE in v.reason]
        return mutant.expected_clause in failed + lost, failed + lost
    faulted = [v.clause.id for v in report.verdicts
               if v.status == UNKNOWN and v.concurrent is not None and v.concurrent.exceeded]
    return mutant.expected_clause in faulted and not failed, failed + faulted


def run_mutants(
    contract_name: str,
    *,
    base: str = "memory",
    profile: str = "quick",
    seed: int = 1,
    only: list[str] | None = None,
    progress: Progress = quiet,
) -> list[MutantRow]:
    """Run the kit against each mutant of ``contract_name`` built on ``base``."""
    if base not in BASES:
        raise ConfigurationError(f"mutants run on {' or '.join(BASES)}, not {base!r}")
    contract = contract_named(contract_name)
    mutants = [m for m in contract.mutants if runs_on(m, base) and (not only or m.name in only)]
    if not mutants and not only:
        raise ConfigurationError(f"{contract_name} has no mutants on {base}")
    if only and len(mutants) != len(set(only)):
        catalogue = {m.name for m in contract.mutants}
        unknown = [name for name in only if name not in catalogue]
        if unknown:
            known = ", ".join(m.name for m in contract.mutants)
            raise ConfigurationError(f"unknown mutant {', '.join(unknown)}; known: {known}")
        needs = "; ".join(f"{', '.join(names)} only on --adapter {other}"
                          for other, names in elsewhere(contract_name, base, only).items())
        raise ConfigurationError(f"not on --adapter {base}: {needs}")
    rows = []
    for k, mutant in enumerate(mutants, 1):
        progress(Said("mutant", f"mutant {k}/{len(mutants)}: {mutant.name}"))
        rows.append(run_mutant(contract, mutant, base=base, profile=profile, seed=seed))
    return rows


def run_mutant(contract: Contract, mutant: Mutant, *, base: str, profile: str,
               seed: int) -> MutantRow:
    """Run the kit against ``mutant`` built on ``base``, until its clause is judged."""
    started = time.perf_counter()
    report = check(
        contract.name,
        mutant_factory(contract, mutant, base),
        profile=profile,
        seed=seed,
        options=dict(mutant.options),
        stop_when=_judged(mutant, base),
        first=contract.clauses[mutant.expected_clause].checks,
    )
    failed = report.failed()
    by_id = {v.clause.id: v for v in failed}
    shown = by_id.get(mutant.expected_clause) or (failed[0] if failed else None)
    trace = shown.failure.trace if shown is not None and shown.failure else ()
    found, caught_by = caught(mutant, report, base)
    crashed = any(isinstance(step.actual, Crash) for step in trace)
    return MutantRow(
        name=mutant.name,
        bug=mutant.bug,
        expected_clause=mutant.expected_clause,
        options=dict(mutant.options),
        caught=found and (mutant.crashes_on(base) or not crashed),
        caught_by=caught_by,
        steps=len(trace),
        seconds=round(time.perf_counter() - started, 2),
        expected=str(expected_on(mutant, base)),
        crashed=crashed,
    )
