"""ledgence-tasks end to end on the memory store: every clause passes, every
known-faulty store is caught by its clause, and the CLI says plainly what is not there yet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fencepost.adapters.faulty.ledgence_tasks import MUTANTS
from fencepost.api import check
from fencepost.mutants import run_mutants
from fencepost.spec import ledgence_tasks as spec

ALL = {c.id for c in spec.CLAUSES}


def test_memory_store_passes_every_clause() -> None:
    report = check("ledgence-tasks", "memory", seed=3)
    assert {v.clause.id: v.status for v in report.verdicts} == {c: "pass" for c in ALL}, [
        (v.clause.id, v.status, v.reason) for v in report.verdicts if v.status != "pass"
    ]


@pytest.mark.parametrize("name", [m.name for m in MUTANTS])
def test_faulty_store_is_caught_by_its_clause(name: str) -> None:
    [row] = run_mutants("ledgence-tasks", base="memory", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"


@pytest.mark.parametrize("name", [m.name for m in MUTANTS if "sqlite" in m.bases])
def test_faulty_sqlite_store_is_caught_by_its_clause(name: str) -> None:
    [row] = run_mutants("ledgence-tasks", base="sqlite", only=[name])
    assert row.caught, f"{name} escaped on SQLite; failed clauses: {row.caught_by}"


def test_sqlite_store_passes_every_clause() -> None:
    report = check("ledgence-tasks", "sqlite", seed=3)
    assert {v.clause.id: v.status for v in report.verdicts} == {c: "pass" for c in ALL}


def test_postgresql_store_passes_every_clause(pg_url: str) -> None:
    report = check("ledgence-tasks", pg_url, seed=3)
    assert {v.clause.id: v.status for v in report.verdicts} == {c: "pass" for c in ALL}


def test_non_string_json_keys_are_invalid_input() -> None:
    from fencepost.spec.ledgence_submission import canonical_json

    with pytest.raises(spec.InvalidInput, match="keys must be strings"):
        canonical_json({1: "x", None: "y"})


def test_cli_checks_sqlite(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "ledgence-tasks", "--quiet",
         "--seed", "4"],
        cwd=tmp_path, env=dict(os.environ), capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(ALL)} pass, 0 fail" in result.stdout
