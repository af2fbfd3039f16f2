"""The one-call API: check an adapter against a contract from Python.

Example (in your own test suite)::

    import fencepost

    def test_my_ledger_conforms():
        fencepost.assert_conforms("adk-ledger", "mypkg.store:make_ledger")
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from fencepost.reports.verdict import RunReport, judge
from fencepost.scenarios.evidence import Evidence
from fencepost.scenarios.runner import PROFILES, Progress, run_suite

from . import __version__
from .errors import ConfigurationError
from .registry import Factory, contract, resolve_adapter


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
) -> RunReport:
    """Run every check of ``contract_name`` against ``adapter`` and return the report.

    ``adapter`` is an adapter spec (``"memory"``, ``"sqlite"``, a database URL,
    ``"module:factory"``) or a factory callable ``factory(env) -> store``. Raises
    :class:`~fencepost.errors.ConfigurationError` for bad input; a contract violation is never
    raised, it is in the report (``report.exit_code``, ``report.failed()``).
    """
    entry = contract(contract_name)
    if profile not in PROFILES:
        raise ConfigurationError(f"unknown profile {profile!r}; use {', '.join(PROFILES)}")
    factory, name = resolve_adapter(contract_name, adapter)
    suite = entry.load_suite()
    seed = new_seed() if seed is None else seed
    result = run_suite(
        suite,
        factory,
        profile=PROFILES[profile],
        seed=seed,
        options=options,
        progress=progress or (lambda _: None),
        stop_when=stop_when,
    )
    verdicts = judge(suite.clauses, result.evidence, result.capabilities, result.gated_off)
    replay = ["fencepost", "check", contract_name, "--adapter", name, "--profile", profile,
              "--seed", str(seed)]
    for key, value in sorted((options or {}).items()):
        replay += ["--option", f"{key}={value}"]
    return RunReport(
        contract=contract_name,
        adapter=name,
        kit_version=__version__,
        profile=profile,
        seed=seed,
        options=dict(result.options),
        capabilities=result.capabilities,
        timings=dict(result.timings),
        steps=result.steps,
        examples=result.examples,
        verdicts=tuple(verdicts),
        replay=shlex.join(replay),
    )

def assert_conforms(contract_name: str, adapter: str | Factory, **kwargs: Any) -> RunReport:
    """Like :func:`check`, but raise ``AssertionError`` listing every failed or unknown clause
    with its counterexample. Returns the report when everything applicable passed."""
    from fencepost.reports.render import render_failures

    report = check(contract_name, adapter, **kwargs)
    if report.exit_code != 0:
        raise AssertionError(render_failures(report))
    return report
