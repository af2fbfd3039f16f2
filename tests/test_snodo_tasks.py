"""snodo-tasks end to end: the built-in stores pass every clause, every faulty one is caught,
the catalogue is wired to real checks, and an external factory plugs in (CLI and pytest)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fencepost.adapters.faulty.snodo_tasks import MUTANTS
from fencepost.api import check
from fencepost.mutants import run_mutants
from fencepost.scenarios.snodo_tasks.suite import SUITE
from fencepost.spec import snodo_tasks as spec

EXTERNAL = str(Path(__file__).parent / "external")
ALL = {c.id for c in spec.CLAUSES}


def assert_all_pass(adapter: str) -> None:
    report = check("snodo-tasks", adapter, seed=5)
    assert {v.clause.id: v.status for v in report.verdicts} == {c: "pass" for c in ALL}, [
        (v.clause.id, v.status, v.reason) for v in report.verdicts if v.status != "pass"
    ]
    assert report.exit_code == 0


def test_memory_store_passes_every_clause() -> None:
    assert_all_pass("memory")


def test_sqlite_store_passes_every_clause() -> None:
    assert_all_pass("sqlite")


def test_postgresql_store_passes_every_clause(pg_url: str) -> None:
    assert_all_pass(pg_url)


@pytest.mark.parametrize("name", [m.name for m in MUTANTS])
def test_faulty_store_is_caught_by_its_clause(name: str) -> None:
    [row] = run_mutants("snodo-tasks", base="memory", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"


RACY = [m.name for m in MUTANTS
        if any(c.startswith("race:") for c in spec.CLAUSES[m.expected_clause].checks)]


@pytest.mark.parametrize("name", RACY)
def test_non_atomic_store_is_caught_on_sqlite(name: str) -> None:
    [row] = run_mutants("snodo-tasks", base="sqlite", only=[name])
    assert row.caught, f"{name} escaped; failed clauses: {row.caught_by}"


def test_every_clause_has_a_faulty_store_but_ttl_003() -> None:
    covered = {m.expected_clause for m in MUTANTS}
    assert ALL - covered <= {"SNODO-TTL-003", "SNODO-GET-001", "SNODO-GET-002",
                             "SNODO-CREATE-001", "SNODO-CLAIM-001", "SNODO-CLAIM-002",
                             "SNODO-CLAIM-003", "SNODO-CLAIM-004", "SNODO-CLAIM-005",
                             "SNODO-TX-002"}
    assert len(MUTANTS) >= 14


def test_catalogue_is_well_formed_and_wired() -> None:
    ids = [c.id for c in spec.CLAUSES]
    assert len(ids) == len(set(ids)) >= 35
    assert all(re.fullmatch(r"SNODO-[A-Z]+-\d{3}", i) for i in ids)
    for clause in spec.CLAUSES:
        for name in clause.checks:
            kind, _, rest = name.partition(":")
            if kind != "machine":
                assert rest in (SUITE.scenarios if kind == "scenario" else SUITE.races), name
    named = {c for clause in spec.CLAUSES for c in clause.checks}
    assert {f"scenario:{n}" for n in SUITE.scenarios} <= named
    assert {f"race:{n}" for n in SUITE.races} <= named


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=EXTERNAL)
    return subprocess.run([sys.executable, "-m", "fencepost.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_external_factory_through_cli_and_plugin(tmp_path: Path) -> None:
    ok = _cli("check", "snodo-tasks", "--adapter", "my_tasks:make_tasks", "--seed", "2",
              "--quiet", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{len(ALL)} pass, 0 fail" in ok.stdout
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
