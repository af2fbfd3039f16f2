"""pytest plugin: one test per clause of a contract, against your adapter.

    pytest --fencepost-contract adk-ledger --fencepost-adapter mypkg.store:make_ledger

runs the whole conformance check once and reports each clause as a test: pass, fail (with the
numbered counterexample and the replay command), skip (unsupported: the store lacks a
capability), or fail for an unknown verdict (a check could not conclude; never a pass).
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
    group.addoption("--fencepost-only", action="store_true",
                    help="run only the conformance suite, deselecting every other test")


class ClauseItem(pytest.Item):
    """The verdict of one clause."""

    def __init__(self, *, clause_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clause_id = clause_id

    def runtest(self) -> None:
        from fencepost.reports.render import render_trace

        report = _report(self.config)
        verdict = next(v for v in report.verdicts if v.clause.id == self.clause_id)
        if verdict.status == "unsupported":
            pytest.skip(verdict.reason)
        if verdict.status == "fail" and verdict.failure is not None:
            raise ClauseFailed(
                f"{verdict.clause.id} ({verdict.clause.title}) failed in {verdict.failure.check}"
                f"\n  rule: {verdict.clause.text}\n  {verdict.failure.message}\n"
                f"{render_trace(verdict.failure.trace)}\nreplay: {report.replay}"
            )
        if verdict.status == "unknown":
            raise ClauseFailed(f"{verdict.clause.id}: verdict unknown: {verdict.reason}")
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
    ("fencepost_only", "--fencepost-only"),
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
    from fencepost.registry import parse_options, validate_options

    try:
        options = validate_options(
            name, parse_options(config.getoption("fencepost_option"), "--fencepost-option"))
    except ConfigurationError as e:
        raise pytest.UsageError(f"fencepost: {e}") from None
    config.stash[_OPTIONS_KEY] = options


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    name = config.getoption("fencepost_contract")
    if not name:
        return
    from fencepost.errors import ConfigurationError
    from fencepost.registry import contract, resolve_adapter

    entry = contract(name)  # validated in pytest_configure
    try:
        # validation only: the sqlite adapter makes its directory when a store is opened
        resolve_adapter(name, config.getoption("fencepost_adapter") or "sqlite")
    except ConfigurationError as e:
        raise pytest.UsageError(f"fencepost: {e}") from None
    if config.getoption("fencepost_only") and items:
        config.hook.pytest_deselected(items=list(items))
        items.clear()
    for clause in entry.clauses:
        items.append(
            ClauseItem.from_parent(
                session,
                name=f"{name}::{clause.id}",
                nodeid=f"fencepost::{name}::{clause.id}",
                clause_id=clause.id,
            )
        )
