"""pytest plugin: one test per clause of a contract, against your adapter.

    pytest --fencepost-contract adk-ledger --fencepost-adapter mypkg.store:make_ledger

runs the whole conformance check once and reports each clause as a test: pass, fail (with the
numbered counterexample and the replay command), skip (unsupported: the store lacks a
capability), or fail for an unknown verdict (a check could not conclude; never a pass).
Registered through the ``pytest11`` entry point; it imports nothing heavy unless asked to run.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

_REPORT_KEY = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fencepost", "fencepost conformance suite")
    group.addoption("--fencepost-contract", metavar="NAME",
                    help="run the conformance suite of this contract (e.g. adk-ledger)")
    group.addoption("--fencepost-adapter", metavar="SPEC", default="sqlite",
                    help="adapter spec: memory, sqlite, a database URL, or MODULE:FACTORY")
    group.addoption("--fencepost-profile", default="quick",
                    choices=("quick", "standard", "thorough"))
    group.addoption("--fencepost-seed", type=int, default=None)
    group.addoption("--fencepost-option", action="append", default=[], metavar="NAME=VALUE")
    group.addoption("--fencepost-strict", action="store_true",
                    help="a clause that passed without reaching each of its situations fails "
                         "as unknown (default: a weak pass is a pass, with a warning)")
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
    report = config.stash.get(_REPORT_KEY, None)
    if report is None:
        from fencepost.api import check

        report = check(
            config.getoption("fencepost_contract"),
            config.getoption("fencepost_adapter"),
            profile=config.getoption("fencepost_profile"),
            seed=config.getoption("fencepost_seed"),
            options=_options(config.getoption("fencepost_option")),
            strict=config.getoption("fencepost_strict"),
        )
        config.stash[_REPORT_KEY] = report
    return report


def _options(pairs: list[str]) -> dict[str, str]:
    return dict(p.split("=", 1) for p in pairs if "=" in p)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    name = config.getoption("fencepost_contract")
    if not name:
        return
    from fencepost.errors import ConfigurationError
    from fencepost.registry import contract, resolve_adapter

    try:
        entry = contract(name)
        resolve_adapter(name, config.getoption("fencepost_adapter"))
    except ConfigurationError as e:
        raise pytest.UsageError(f"fencepost: {e}") from None
    if config.getoption("fencepost_only") and items:
        config.hook.pytest_deselected(items=list(items))
        items.clear()
    for clause in entry.load_spec().CLAUSES:
        items.append(
            ClauseItem.from_parent(
                session,
                name=f"{name}::{clause.id}",
                nodeid=f"fencepost::{name}::{clause.id}",
                clause_id=clause.id,
            )
        )
