"""pytest plugin: one test per clause of a contract, against your adapter.

    pytest --fencepost-contract adk-ledger --fencepost-adapter mypkg.store:make_ledger

runs the whole conformance check once and reports each clause as a test: pass, fail (with the
numbered counterexample and the replay command), skip (unsupported: the store lacks a
capability), or fail for an unknown verdict (a check could not conclude; never a pass).
With ``--fencepost-baseline OLD/report.json``, a clause known in the baseline (failing there
too) is xfail, a regression fails saying so, an improvement passes with a warning.
Registered through the ``pytest11`` entry point; it imports nothing heavy unless asked to run.
"""

from __future__ import annotations

import traceback
import warnings
from typing import Any

import pytest

# The run's outcome, computed once per pytest run: its report, or the exception it raised.
_REPORT_KEY = pytest.StashKey[Any]()
_ERROR_KEY = pytest.StashKey[Exception]()
_OPTIONS_KEY = pytest.StashKey[dict[str, str]]()
_BASELINE_KEY = pytest.StashKey[Any]()
_COMPARISON_KEY = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fencepost", "fencepost conformance suite")
    group.addoption("--fencepost-contract", metavar="NAME",
                    help="run the conformance suite of this contract (e.g. adk-ledger)")
    group.addoption("--fencepost-adapter", metavar="SPEC", default=None,
                    help="adapter spec: memory, sqlite (default), a database URL, or "
                         "MODULE:FACTORY")
    group.addoption("--fencepost-profile", default=None,
                    choices=("quick", "standard", "thorough"), help="default quick")
    group.addoption("--fencepost-seed", type=int, default=None)
    group.addoption("--fencepost-option", action="append", default=[], metavar="NAME=VALUE")
    group.addoption("--fencepost-strict", action="store_true",
                    help="a clause that passed without reaching each of its situations fails "
                         "as unknown (default: a weak pass is a pass, with a warning)")
    group.addoption("--fencepost-call-timeout", type=float, default=None, metavar="SECONDS",
                    help="how long one store call may take before the run stops with the "
                         "clauses at stake unknown (default 10, or FENCEPOST_CALL_TIMEOUT)")
    group.addoption("--fencepost-shrink-budget", metavar="SECONDS[/TOTAL]", default=None,
                    help="how long each broken clause's counterexample is shrunk, and all of "
                         "them (default: the profile's; none: no limit; 0: no shrinking)")
    group.addoption("--fencepost-jobs", type=int, default=None, metavar="N",
                    help="run the check's independent parts in N processes (default 1: the "
                         "verdicts are the same at any N)")
    group.addoption("--fencepost-require", action="append", default=[], metavar="CAP",
                    help="the store must declare capability CAP (repeatable): a store without "
                         "it fails every clause's test with that configuration error, instead "
                         "of skipping the clauses that need it as unsupported")
    group.addoption("--fencepost-only", action="store_true",
                    help="run only the conformance suite, deselecting every other test")
    group.addoption("--fencepost-baseline", metavar="PATH", default=None,
                    help="a report.json of an earlier run (fencepost check --report DIR): a "
                         "clause failing there too is xfail, a regression fails, an "
                         "improvement passes with a warning")


class ClauseItem(pytest.Item):
    """The verdict of one clause."""

    def __init__(self, *, clause_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clause_id = clause_id

    def runtest(self) -> None:
        report = _report(self.config)
        verdict = next(v for v in report.verdicts if v.clause.id == self.clause_id)
        change = _change(self.config, report, self.clause_id)
        if change is not None:
            _against_baseline(change, verdict, report)
        if verdict.status == "unsupported":
            pytest.skip(verdict.reason)
        if verdict.status == "fail" and verdict.failure is not None:
            raise ClauseFailed(_verdict_text(verdict, report))
        if verdict.status == "unknown":
            raise ClauseFailed(_verdict_text(verdict, report))
        if verdict.weak:
            warnings.warn(pytest.PytestWarning(
                f"{verdict.clause.id} passed weakly: situations never reached: "
                + "; ".join(verdict.unreached)), stacklevel=1)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ClauseFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "fencepost", None, f"{self.name}"


class ClauseFailed(AssertionError):
    """A clause failed or could not be decided."""


def _verdict_text(verdict: Any, report: Any) -> str:
    """What a clause's failure says: its counterexample, or why it is unknown or unsupported."""
    from fencepost.reports.views import failure_steps

    if verdict.status == "fail" and verdict.failure is not None:
        return (f"{verdict.clause.id} ({verdict.clause.title}) failed in "
                f"{verdict.failure.check}\n  rule: {verdict.clause.text}\n  "
                f"{verdict.failure.message}\n{failure_steps(verdict.failure)}\n"
                f"replay: {report.replay}")
    return f"{verdict.clause.id}: verdict {verdict.status}: {verdict.reason}"


def _change(config: pytest.Config, report: Any, clause_id: str) -> Any:
    """The clause's change against ``--fencepost-baseline`` (None without one)."""
    baseline = config.stash.get(_BASELINE_KEY, None)
    if baseline is None:
        return None
    comparison = config.stash.get(_COMPARISON_KEY, None)
    if comparison is None:
        from fencepost.reports.baseline import compare

        comparison = config.stash[_COMPARISON_KEY] = compare(baseline, report)
    return comparison.change(clause_id)


def _against_baseline(change: Any, verdict: Any, report: Any) -> None:
    """xfail a known clause, fail a regression (whatever its verdict now), warn of an
    improvement; the other clauses go on as without a baseline."""
    if change.kind == "known":
        was = change.was.status
        pytest.xfail("known: failing in the baseline" if was == "fail"
                     else f"known: {was} in the baseline")
    if change.kind == "regression":
        was = "passed" if change.was.status == "pass" else f"was {change.was.status}"
        raise ClauseFailed(f"regression: {was} in the baseline\n"
                           + _verdict_text(verdict, report))
    if change.kind == "improvement":
        warnings.warn(pytest.PytestWarning(
            f"{verdict.clause.id} passes now; it was {change.was.status} in the baseline (an "
            "improvement: write a new baseline to keep it)"), stacklevel=1)


def _report(config: pytest.Config) -> Any:
    """The run's report; the check runs on the first call only, and an exception it raised is
    raised again (without running it again) for every later clause."""
    error = config.stash.get(_ERROR_KEY, None)
    if error is not None:
        raise ClauseFailed(_could_not_run(error)) from None
    report = config.stash.get(_REPORT_KEY, None)
    if report is None:
        from fencepost.api import check
        from fencepost.errors import ConfigurationError

        try:
            report = check(
                config.getoption("fencepost_contract"),
                config.getoption("fencepost_adapter") or "sqlite",
                profile=config.getoption("fencepost_profile") or "quick",
                seed=config.getoption("fencepost_seed"),
                options=config.stash[_OPTIONS_KEY],
                strict=config.getoption("fencepost_strict"),
                call_timeout_s=_timeout(config),
                shrink_budget=config.getoption("fencepost_shrink_budget"),
                jobs=config.getoption("fencepost_jobs") or 1,
                require=config.getoption("fencepost_require") or (),
            )
        except Exception as e:
            config.stash[_ERROR_KEY] = e
            if not isinstance(e, ConfigurationError):
                raise  # the first clause shows the whole traceback
            raise ClauseFailed(_could_not_run(e)) from None
        config.stash[_REPORT_KEY] = report
    return report


def _timeout(config: pytest.Config) -> float:
    from fencepost.scenarios.guard import DEFAULT_CALL_TIMEOUT_S

    seconds = config.getoption("fencepost_call_timeout")
    return DEFAULT_CALL_TIMEOUT_S if seconds is None else float(seconds)


def _could_not_run(error: BaseException) -> str:
    from fencepost.errors import ConfigurationError

    if isinstance(error, ConfigurationError):
        return f"fencepost: {error}"
    first = "".join(traceback.format_exception_only(error)).strip().splitlines()[0]
    return f"the conformance check raised {first} (its traceback is the first clause's failure)"


_GIVEN_ONLY_WITH_A_CONTRACT = (
    ("fencepost_adapter", "--fencepost-adapter"),
    ("fencepost_profile", "--fencepost-profile"),
    ("fencepost_seed", "--fencepost-seed"),
    ("fencepost_option", "--fencepost-option"),
    ("fencepost_strict", "--fencepost-strict"),
    ("fencepost_call_timeout", "--fencepost-call-timeout"),
    ("fencepost_shrink_budget", "--fencepost-shrink-budget"),
    ("fencepost_jobs", "--fencepost-jobs"),
    ("fencepost_require", "--fencepost-require"),
    ("fencepost_only", "--fencepost-only"),
    ("fencepost_baseline", "--fencepost-baseline"),
)


def pytest_configure(config: pytest.Config) -> None:
    """A usage mistake is one usage error here, before collection: an unknown contract, a bad
    option, a fencepost flag without a contract. (The adapter spec is resolved once the tests
    are collected, when the project's own directories are importable.)"""
    name = config.getoption("fencepost_contract", None)
    if not name:
        given = [flag for dest, flag in _GIVEN_ONLY_WITH_A_CONTRACT
                 if config.getoption(dest, None) not in (None, False, [])]
        if given:
            from fencepost.registry import contract_names

            raise pytest.UsageError(
                f"fencepost: {', '.join(given)} given without --fencepost-contract; add "
                f"--fencepost-contract NAME (one of {', '.join(contract_names())})")
        return
    from fencepost.errors import ConfigurationError
    from fencepost.registry import parse_options, validate_capabilities, validate_options

    try:
        options = validate_options(
            name, parse_options(config.getoption("fencepost_option"), "--fencepost-option"))
        try:
            validate_capabilities(name, config.getoption("fencepost_require") or ())
        except ConfigurationError as e:
            raise ConfigurationError(f"--fencepost-require: {e}") from None
        _shrink_budget_and_jobs(config)
        baseline = config.getoption("fencepost_baseline", None)
        if baseline:
            config.stash[_BASELINE_KEY] = _baseline(name, baseline)
    except ConfigurationError as e:
        raise pytest.UsageError(f"fencepost: {e}") from None
    config.stash[_OPTIONS_KEY] = options


def _shrink_budget_and_jobs(config: pytest.Config) -> None:
    """``--fencepost-shrink-budget`` must read as a budget, ``--fencepost-jobs`` be 1 or more
    (a ConfigurationError otherwise)."""
    from fencepost.errors import ConfigurationError
    from fencepost.scenarios.shrinking import Shrinking

    budget = config.getoption("fencepost_shrink_budget", None)
    if budget is not None:
        try:
            Shrinking.parse(budget)
        except ValueError as e:
            raise ConfigurationError(f"--fencepost-shrink-budget: {e}") from None
    jobs = config.getoption("fencepost_jobs", None)
    if jobs is not None and jobs < 1:
        raise ConfigurationError(f"--fencepost-jobs must be 1 or more, not {jobs}")


def _baseline(contract_name: str, path: str) -> Any:
    """The ``--fencepost-baseline`` report, read and found comparable before collection."""
    from fencepost.registry import contract_named
    from fencepost.reports.baseline import comparable, load_baseline

    baseline = load_baseline(path, "--fencepost-baseline")
    comparable(baseline, contract_name, contract_named(contract_name).catalogue_version,
               what=f"--fencepost-baseline {path}")
    return baseline


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """With a baseline, one line: how the run compares with it."""
    comparison = config.stash.get(_COMPARISON_KEY, None)
    if comparison is not None:
        terminalreporter.write_line(
            f"fencepost: against --fencepost-baseline {config.getoption('fencepost_baseline')}"
            f": {comparison.counts()}")


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    name = config.getoption("fencepost_contract")
    if not name:
        return
    from fencepost.adapter_spec import resolve_adapter
    from fencepost.errors import ConfigurationError
    from fencepost.registry import contract_named

    contract = contract_named(name)  # validated in pytest_configure
    try:
        # validation only: the sqlite adapter makes its directory when a store is opened
        resolve_adapter(name, config.getoption("fencepost_adapter") or "sqlite")
    except ConfigurationError as e:
        raise pytest.UsageError(f"fencepost: {e}") from None
    if config.getoption("fencepost_only") and items:
        config.hook.pytest_deselected(items=list(items))
        items.clear()
    for clause in contract.clauses:
        items.append(
            ClauseItem.from_parent(
                session,
                name=f"{name}::{clause.id}",
                nodeid=f"fencepost::{name}::{clause.id}",
                clause_id=clause.id,
            )
        )
