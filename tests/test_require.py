"""No silent certification: a store that leaves clauses unsupported by not declaring a
capability they need is warned about (the clauses named, from the catalogue), and ``--require
CAP`` turns a missing capability into a one-line configuration error (exit 2), also with
``--jobs`` and through the pytest plugin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fencepost.registry import contract_named
from fencepost.scenarios.injection import FAULT_INJECTION

PLAIN = '''
from fencepost.adapters.adk_ledger.memory import MemoryLedger, MemoryLedgerFactory


class Plain(MemoryLedger):
    """The correct memory store, declaring no capability at all."""

    capabilities = frozenset()


make = MemoryLedgerFactory(Plain)
'''


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    (tmp_path / "plain_store.py").write_text(PLAIN)
    return tmp_path


def fencepost(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fencepost.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_a_store_declaring_nothing_is_warned_about_with_the_clauses_it_leaves(
        plain: Path) -> None:
    result = fencepost(plain, "check", "adk-ledger", "--adapter", "plain_store:make",
                       "--seed", "1", "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    clauses = contract_named("adk-ledger").clauses
    left: dict[str, list[str]] = {}
    for clause in clauses:
        for cap in sorted(clause.requires - {FAULT_INJECTION}):
            left.setdefault(cap, []).append(clause.id)
    assert left.keys() == {"concurrency", "durable", "owner_liveness"}
    [warning] = [line for line in result.stderr.splitlines() if "warning" in line]
    count = len({c for ids in left.values() for c in ids})
    assert warning.startswith(f"fencepost: warning: {count} clauses not put to the test: the "
                              "store does not declare ")
    for cap, ids in left.items():
        assert f"{cap} ({', '.join(ids)})" in warning
    assert warning.endswith("declare what it has in store.capabilities, or give --require CAP "
                            "to make a missing capability an error")
    [headline] = [line for line in result.stdout.splitlines()
                  if line.startswith("adk-ledger on plain_store:make: ")]
    unsupported = sum(1 for c in clauses if c.requires)
    assert (f"{unsupported} unsupported (the store does not declare concurrency, durable, "
            f"owner_liveness) of {len(clauses)} clauses") in headline


def test_a_store_declaring_what_it_has_gets_no_warning(tmp_path: Path) -> None:
    """The memory store declares every capability but fault injection, which is found (an
    engine), not declared: nothing to warn about."""
    result = fencepost(tmp_path, "check", "adk-ledger", "--adapter", "memory", "--seed", "1",
                       "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning" not in result.stderr
    assert "does not declare" not in result.stdout


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_require_turns_a_missing_capability_into_exit_2(plain: Path, jobs: str) -> None:
    result = fencepost(plain, "check", "adk-ledger", "--adapter", "plain_store:make",
                       "--require", "concurrency", "--require", "durable", "--jobs", jobs,
                       "--quiet")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        "fencepost: error: --require concurrency, durable: Plain does not declare them (its "
        "capabilities: none)"]


def test_require_met_runs_as_before_and_an_unknown_one_is_named(tmp_path: Path) -> None:
    met = fencepost(tmp_path, "check", "adk-ledger", "--adapter", "memory", "--seed", "1",
                    "--require", "concurrency", "--quiet")
    assert met.returncode == 0, met.stdout + met.stderr
    wrong = fencepost(tmp_path, "check", "adk-ledger", "--adapter", "memory", "--require",
                      "fast")
    assert wrong.returncode == 2
    assert wrong.stderr.splitlines() == [
        "fencepost: error: --require: unknown capability 'fast' for adk-ledger; known: durable, "
        "owner_liveness, concurrency, fault_injection"]


def test_the_plugin_fails_every_clause_with_the_missing_capability(plain: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--fencepost-contract",
         "adk-ledger", "--fencepost-adapter", "plain_store:make", "--fencepost-require",
         "concurrency", "--fencepost-only"],
        cwd=plain, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    clauses = len(contract_named("adk-ledger").clauses)
    assert f"{clauses} failed" in result.stdout
    assert "--require concurrency: Plain does not declare it (its capabilities: none)" \
        in result.stdout
