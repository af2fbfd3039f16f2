"""A contract from a package outside the kit, found by its entry point, runs through ``check``,
``mutants`` and the pytest plugin: docs/extending.md's "Adding a contract", with no kit file edited.

The package is tests/external/tiny_register; the test "installs" it the way pip would for the
entry point's sake, as a ``.dist-info`` directory on the path of the commands it runs."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXTERNAL = Path(__file__).parent / "external"


def install(tmp_path: Path, name: str, entry_points: str) -> dict[str, str]:
    """The environment of a process in which the distribution ``name`` of the packages in
    tests/external is installed with ``entry_points`` (an ``entry_points.txt``)."""
    site = tmp_path / "site"
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    return dict(os.environ, PYTHONPATH=os.pathsep.join((str(site), str(EXTERNAL))))


@pytest.fixture
def installed(tmp_path: Path) -> dict[str, str]:
    """The environment of a process in which tiny-register is installed."""
    return install(tmp_path, "tiny-register",
                   "[fencepost.contracts]\ntiny-register = tiny_register.contract:declare\n")


def fencepost(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fencepost.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_contract_is_listed(installed: dict[str, str], tmp_path: Path) -> None:
    result = fencepost(installed, tmp_path, "list")
    assert result.returncode == 0, result.stderr
    assert "tiny-register" in result.stdout
    result = fencepost(installed, tmp_path, "list", "tiny-register")
    assert result.returncode == 0, result.stderr
    assert "TINY-PUT-002" in result.stdout
    assert "mutants: 1 (fencepost mutants tiny-register)" in result.stdout


def test_a_correct_store_passes_every_clause(installed: dict[str, str], tmp_path: Path) -> None:
    result = fencepost(installed, tmp_path, "check", "tiny-register", "--adapter", "memory",
                       "--seed", "1", "--report", "R", "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((tmp_path / "R" / "report.json").read_text())
    assert {c["id"]: c["status"] for c in report["clauses"]} == {
        "TINY-PUT-001": "pass", "TINY-PUT-002": "pass", "TINY-GET-001": "pass"}


def test_a_broken_store_fails_its_clause(installed: dict[str, str], tmp_path: Path) -> None:
    result = fencepost(installed, tmp_path, "check", "tiny-register", "--adapter",
                       "tiny_register.store:make_last_writer_wins", "--seed", "1", "--report",
                       "R", "--quiet")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "R" / "report.json").read_text())
    statuses = {c["id"]: c["status"] for c in report["clauses"]}
    assert statuses["TINY-PUT-002"] == "fail"
    assert statuses["TINY-GET-001"] == "pass"


def test_mutants_catches_its_mutant(installed: dict[str, str], tmp_path: Path) -> None:
    result = fencepost(installed, tmp_path, "mutants", "tiny-register", "--report", "M",
                       "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    [row] = json.loads((tmp_path / "M" / "mutants.json").read_text())
    assert (row["name"], row["caught"], row["expected_clause"]) == (
        "last_writer_wins", True, "TINY-PUT-002")


def plugin_passes_tiny_register(env: dict[str, str], cwd: Path) -> None:
    """The pytest plugin runs tiny-register on memory: its three clauses pass."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--fencepost-contract",
         "tiny-register", "--fencepost-adapter", "memory", "--fencepost-seed", "1"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_the_plugin_runs_it(installed: dict[str, str], tmp_path: Path) -> None:
    plugin_passes_tiny_register(installed, tmp_path)


def kit_imports(package: str) -> dict[str, list[str]]:
    """The modules of the kit ``tests/external/PACKAGE`` imports, with where."""
    found: dict[str, list[str]] = {}
    for path in sorted((EXTERNAL / package).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                if name.split(".")[0] == "fencepost":
                    found.setdefault(name, []).append(f"{path.name}:{node.lineno}")
    return found


def test_a_contract_outside_imports_the_authoring_module_alone() -> None:
    """What the kit offers a contract's author is one module: ``fencepost.authoring``."""
    found = kit_imports("tiny_register")
    assert set(found) == {"fencepost.authoring"}, found


def test_analyze_reads_a_history_of_it(installed: dict[str, str], tmp_path: Path) -> None:
    """A saved history names its contract; analyze finds a third-party one by entry point."""
    lines = [{"fencepost": "history", "version": 1, "contract": "tiny-register"},
             {"process": "p1", "op": {"op": "get", "args": {"register": "r"}}, "invoked": 0,
              "completed": 1, "outcome": {"err": "not_found", "detail": "", "payload": None},
              "at": 1000}]
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = fencepost(installed, tmp_path, "analyze", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("linearizable"), result.stdout
