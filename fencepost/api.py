"""The one-call API: check an adapter against a contract from Python.

Example (in your own test suite)::

    import fencepost

    def test_my_ledger_conforms():
        fencepost.assert_conforms("adk-ledger", "mypkg.store:make_ledger")
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Collection, Mapping
from typing import Any

from hypothesis.database import ExampleDatabase

from fencepost.reports.verdict import RunReport, judge
from fencepost.scenarios.concurrent import ConcurrentRun
from fencepost.scenarios.evidence import Evidence
from fencepost.scenarios.guard import DEFAULT_CALL_TIMEOUT_S
from fencepost.scenarios.interrupt import Interrupted
from fencepost.scenarios.profiles import MAX_FAULTED
from fencepost.scenarios.runner import RunResult, run_suite
from fencepost.scenarios.said import Progress, quiet
from fencepost.scenarios.shrinking import Shrinking

from . import __version__
from .adapter_spec import adapter_options, resolve_adapter
from .contract import Factory
from .errors import ConfigurationError
from .example_db import example_database
from .registry import contract_named
from .run_config import RunConfig


def new_seed() -> int:
    return int.from_bytes(os.urandom(4), "big")

def check(
    contract_name: str,
    adapter: str | Factory,
    *,
    profile: str = "quick",
    seed: int | None = None,
    options: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    stop_when: Callable[[Evidence], bool] | None = None,
    concurrency: int | None = None,
    concurrent_ops: int | None = None,
    strict: bool = False,
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    first: Collection[str] = (),
    shrink_budget: str | Shrinking | None = None,
    example_db: str | ExampleDatabase | None = None,
    jobs: int = 1,
    require: Collection[str] = (),
    tour: str | None = None,
) -> RunReport:
    """Run every check of ``contract_name`` against ``adapter`` and return the report.

    ``adapter`` is an adapter spec (``"memory"``, ``"sqlite"``, a database URL,
    ``"module:factory"``) or a factory callable ``factory(env) -> store``. ``concurrency`` and
    ``concurrent_ops`` override the profile's concurrent run (workers, calls; 0 workers: none).
    ``progress`` is called with a :class:`~fencepost.scenarios.said.Said` as each check or
    phase starts (its ``phase``, and ``str()`` of it the line to show). With ``strict``, a
    clause that passed without reaching each of its situations is ``unknown`` rather than a
    weak pass. A store call that does not return within
    ``call_timeout_s`` stops the run: the clauses at stake are ``unknown``, the verdicts
    reached so far stay. The checks named in ``first`` (a clause's ``checks``) run before the
    others; with ``stop_when`` this finds one clause's failure soonest. ``shrink_budget``
    (``"3"``, ``"3/10"``: seconds per clause / in all, ``"none"``, ``"0"``: no shrinking; by
    default the profile's) bounds how long a broken clause's counterexample is shrunk: one cut
    short is still a failure, marked not minimal. ``example_db`` (a directory, a ``redis://``
    URL or a Hypothesis ``ExampleDatabase``) is where the state machine replays earlier
    failures from first and saves the ones it finds. ``jobs`` > 1 runs the run's independent
    parts in that many processes (an adapter given as a spec string; a factory object, or a
    run with ``first`` or ``stop_when``, runs in this process), with the same verdicts and
    counterexamples as ``jobs=1`` (see :mod:`fencepost.parallel`). A capability in ``require``
    the store does not declare is a ConfigurationError before any check runs. ``tour`` (a
    scope: ``full``, ``ci``) adds the transition tour (see :mod:`fencepost.scenarios.tour`);
    "" none, even at a profile that includes it. Ctrl-C raises
    :class:`~fencepost.scenarios.runner.Interrupted`, whose ``report`` holds the partial
    report, after the run's data was dropped. Raises
    :class:`~fencepost.errors.ConfigurationError` for bad input; a contract violation is never
    raised, it is in the report (``report.exit_code``, ``report.failed()``).
    """
    contract = contract_named(contract_name)
    config = RunConfig.of(
        contract_name, seed=new_seed() if seed is None else seed, profile=profile,
        options=options, concurrency=concurrency, concurrent_ops=concurrent_ops, strict=strict,
        call_timeout_s=call_timeout_s, shrink_budget=shrink_budget, jobs=jobs, require=require,
        tour=tour)
    database = example_database(example_db) if example_db is not None else None
    factory, name = resolve_adapter(contract_name, adapter)
    run_options = {**adapter_options(contract_name, adapter), **config.options}
    run: Callable[[], RunResult]
    if (config.jobs > 1 and isinstance(adapter, str) and stop_when is None and not first
            and not isinstance(example_db, ExampleDatabase)):
        from .parallel import run_parts

        run = functools.partial(
            run_parts, contract_name, adapter, jobs=config.jobs, profile=config.profile,
            seed=config.seed, options=run_options, progress=progress or quiet,
            call_timeout_s=config.call_timeout_s, example_db=example_db, require=config.require)
    else:
        run = functools.partial(
            run_suite, contract.suite, factory, profile=config.profile, seed=config.seed,
            options=run_options, progress=progress or quiet, stop_when=stop_when,
            call_timeout_s=config.call_timeout_s, first=first, example_db=database,
            require=config.require)

    def report_of(result: RunResult) -> RunReport:
        verdicts = judge(contract.clauses, result.evidence, result.capabilities,
                         result.gated_off, result.options, strict=config.strict)
        return RunReport(
            contract=contract_name,
            adapter=name,
            kit_version=__version__,
            profile=profile,
            seed=config.seed,
            options=dict(result.options),
            capabilities=result.capabilities,
            timings=dict(result.timings),
            steps=result.steps,
            examples=result.examples,
            verdicts=tuple(verdicts),
            replay=config.replay(name),
            history=result.history,
            faults=tuple(result.evidence.faults),
            stopped=result.evidence.stopped,
            concurrent=result.evidence.concurrent,
            tour=result.evidence.tour,
            catalogue_version=contract.catalogue_version,
            pure=contract.suite.model.pure,
        )

    try:
        result = run()
    except Interrupted as stop:
        stop.report = report_of(stop.result) if stop.result is not None else None
        raise
    return report_of(result)

def assert_conforms(contract_name: str, adapter: str | Factory, **kwargs: Any) -> RunReport:
    """Like :func:`check`, but raise ``AssertionError`` listing every failed or unknown clause
    with its counterexample. Returns the report when everything applicable passed."""
    from fencepost.reports.render import render_failures

    report = check(contract_name, adapter, **kwargs)
    if report.exit_code != 0:
        raise AssertionError(render_failures(report))
    return report


def check_concurrent(
    contract_name: str,
    adapter: str | Factory,
    *,
    threads: int = 8,
    ops: int = 5000,
    seed: int | None = None,
    options: Mapping[str, str] | None = None,
    budget_s: float = 60.0,
    max_faulted: float = MAX_FAULTED,
    progress: Progress | None = None,
) -> ConcurrentRun:
    """Only the concurrent run: ``threads`` workers make at least ``ops`` calls on a store of
    their own, and the history is checked for linearizability (``run.verdict``;
    ``run.history.save(path)`` keeps it for ``fencepost analyze``). ``run.answers`` counts its
    answered and faulted calls; when more than the share ``max_faulted`` of them faulted, the
    history is not checked (``run.verdict`` is None). The store must declare the capability
    ``concurrency``."""
    from fencepost.scenarios.concurrent import run_concurrent
    from fencepost.scenarios.runner import close_factory, drop_live, new_world, open_checked

    suite = contract_named(contract_name).suite
    if suite.workload is None:
        raise ConfigurationError(f"{contract_name} has no concurrent workload")
    factory, _name = resolve_adapter(contract_name, adapter)
    world = new_world(suite, factory, options=options, namespace=f"q{new_seed():08x}")
    try:
        store = open_checked(suite, world)
        if "concurrency" not in world.capabilities:
            raise ConfigurationError(
                f"{type(store).__name__} does not declare the capability concurrency")
        return run_concurrent(world, suite.workload("c"), threads=threads, ops=ops,
                              seed=new_seed() if seed is None else seed,
                              partition=suite.partition, budget_s=budget_s,
                              max_faulted=max_faulted,
                              progress=progress or quiet)
    finally:
        drop_live(world)
        interrupted = close_factory(world)
        if interrupted is not None:
            raise interrupted
