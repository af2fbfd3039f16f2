"""snodo-tasks end to end: the built-in stores pass every clause, every faulty one is caught,
the catalogue is wired to real checks, and an external factory plugs in (CLI and pytest)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fencepost.adapters.faulty.snodo_tasks import MUTANTS
from fencepost.api import check
from fencepost.mutants import run_mutants
from fencepost.spec import snodo_tasks as spec

EXTERNAL = str(Path(__file__).parent / "external")
ALL = {c.id for c in spec.CLAUSES}
FAULT = frozenset(c.id for c in spec.CLAUSES if "fault_injection" in c.requires)


def assert_all_pass(adapter: str, unsupported: frozenset[str] = frozenset()) -> None:
    report = check("snodo-tasks", adapter, seed=5)
    expected = {c: "unsupported" if c in unsupported else "pass" for c in ALL}
    assert {v.clause.id: v.status for v in report.verdicts} == expected, [
        (v.clause.id, v.status, v.reason) for v in report.verdicts if v.status != "pass"
    ]
    assert report.exit_code == 0


def test_memory_store_passes_every_clause() -> None:
    assert_all_pass("memory", unsupported=FAULT)  # no SQLAlchemy engine to inject faults into


def test_sqlite_store_passes_every_clause() -> None:
    assert_all_pass("sqlite")


def test_postgresql_store_passes_every_clause(pg_url: str) -> None:
    assert_all_pass(pg_url)


@pytest.mark.parametrize("name", [m.name for m in MUTANTS if "memory" in m.bases])
def test_faulty_store_is_caught_by_its_clause(name: str) -> None:
    [row] = run_mutants("snodo-tasks", base="memory", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"


RACY = [m.name for m in MUTANTS
        if any(c.startswith("race:") for c in spec.CLAUSES[m.expected_clause].checks)]


@pytest.mark.parametrize("name", RACY)
def test_non_atomic_store_is_caught_on_sqlite(name: str) -> None:
    [row] = run_mutants("snodo-tasks", base="sqlite", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=EXTERNAL)
    return subprocess.run([sys.executable, "-m", "fencepost.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_external_factory_through_cli_and_plugin(tmp_path: Path) -> None:
    ok = _cli("check", "snodo-tasks", "--adapter", "my_tasks:make_tasks", "--seed", "2",
              "--quiet", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{len(ALL - FAULT)} pass, 0 fail, 0 unknown, {len(FAULT)} unsupported" in ok.stdout
    leaky = _cli("check", "snodo-tasks", "--adapter", "my_tasks:make_leaky_tasks", "--seed", "2",
                 "--quiet", cwd=tmp_path)
    assert leaky.returncode == 1
    assert "SNODO-AUTH-003 FAILED" in leaky.stdout
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf",
         "--fencepost-only", "--fencepost-contract", "snodo-tasks",
         "--fencepost-adapter", "my_tasks:make_leaky_tasks", "--fencepost-seed", "2"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=EXTERNAL), capture_output=True, text=True,
        timeout=600,
    )
    assert plugin.returncode == 1, plugin.stdout
    assert "FAILED fencepost::snodo-tasks::SNODO-AUTH-003" in plugin.stdout
