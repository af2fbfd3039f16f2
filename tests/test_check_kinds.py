"""A kind of check declared outside the kit runs through ``check``, ``--jobs``, ``mutants`` and
the pytest plugin, with no kit file and no file of the contract edited: the check-kind seam.

The kind is tests/external/probe_kind (its ``fencepost.check_kinds`` entry point), its checks
for tiny-register are tests/external/probe_kind/tiny_register.py (``fencepost.checks``), the
contract is tests/external/tiny_register; all are "installed" as test_adding_a_contract does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from test_adding_a_contract import fencepost, install, kit_imports, plugin_passes_tiny_register

from fencepost.registry import contract_named
from fencepost.scenarios.kinds import kinds, parts_of
from fencepost.scenarios.profiles import PROFILES

ENTRY_POINTS = """[fencepost.contracts]
tiny-register = tiny_register.contract:declare

[fencepost.check_kinds]
probe = probe_kind:KIND

[fencepost.checks]
tiny-register.probe = probe_kind.tiny_register:PROBES
"""


@pytest.fixture
def installed(tmp_path: Path) -> dict[str, str]:
    return install(tmp_path, "probe-kind", ENTRY_POINTS)


def test_the_built_in_kinds_cut_a_run_into_their_parts() -> None:
    assert [k.name for k in kinds()] == ["scenario", "fault", "machine", "tour", "race",
                                         "concurrent"]
    suite = contract_named("adk-ledger").suite
    races = tuple((f"race:{name}",) for name in suite.races)
    assert parts_of(suite) == (("scenario", "fault"), ("machine",), ("tour",), *races,
                               ("concurrent",))
    # the tour is a part only of a run that asks for it (--tour)
    quick = PROFILES["quick"]
    assert parts_of(suite, quick) == (("scenario", "fault"), ("machine",), *races,
                                      ("concurrent",))
    assert ("tour",) in parts_of(suite, attrs.evolve(quick, tour="ci"))


def test_the_kind_is_a_part_of_every_run_of_a_contract_that_has_it(
        installed: dict[str, str], tmp_path: Path) -> None:
    result = fencepost(installed, tmp_path, "check", "tiny-register", "--adapter", "memory",
                       "--seed", "1", "--report", "R", "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((tmp_path / "R" / "report.json").read_text())
    assert "probe" in report["timings"], report["timings"]
    assert {c["id"]: c["status"] for c in report["clauses"]} == {
        "TINY-PUT-001": "pass", "TINY-PUT-002": "pass", "TINY-GET-001": "pass"}


def test_its_checks_fail_the_clause_they_break(installed: dict[str, str],
                                               tmp_path: Path) -> None:
    """Run first (and the run stopped there), the probe is what finds the stale overwrite;
    its counterexample names it."""
    code = ("import fencepost.api as api\n"
            "r = api.check('tiny-register', 'tiny_register.store:make_last_writer_wins', "
            "seed=1, first=('probe',), stop_when=lambda e: 'TINY-PUT-002' in e.failures)\n"
            "[v] = [v for v in r.verdicts if v.clause.id == 'TINY-PUT-002']\n"
            "print(v.status, v.failure.check, len(v.failure.trace))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=installed,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == ["fail", "probe:stale_overwrite", "3"]


def test_it_runs_as_a_part_of_its_own_with_jobs(installed: dict[str, str],
                                                tmp_path: Path) -> None:
    result = fencepost(installed, tmp_path, "check", "tiny-register", "--adapter",
                       "tiny_register.store:make_last_writer_wins", "--seed", "1", "--jobs", "2",
                       "--report", "R", "--quiet")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "R" / "report.json").read_text())
    assert "probe" in report["timings"], report["timings"]
    assert {c["id"]: c["status"] for c in report["clauses"]}["TINY-PUT-002"] == "fail"


def test_mutants_and_the_plugin_run_it(installed: dict[str, str], tmp_path: Path) -> None:
    result = fencepost(installed, tmp_path, "mutants", "tiny-register", "--report", "M",
                       "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    [row] = json.loads((tmp_path / "M" / "mutants.json").read_text())
    assert (row["name"], row["caught"]) == ("last_writer_wins", True)
    plugin_passes_tiny_register(installed, tmp_path)


@pytest.mark.parametrize(("declared", "said"), [
    ("probe = probe_kind:NOTHING",
     "the check kind 'probe' (probe_kind:NOTHING) cannot be loaded: AttributeError: module "
     "'probe_kind' has no attribute 'NOTHING'"),
    ("machine = probe_kind:KIND",
     "the check kind 'machine' (probe_kind:KIND) is one of the kit's own (scenario, fault, "
     "machine, tour, race, concurrent); give it another name"),
    ("probe = probe_kind:run",
     "the entry point probe = probe_kind:run must name a fencepost.authoring.CheckKind("
     "name='probe', ...), not <function run at "),
])
def test_a_kind_that_cannot_be_used_is_one_configuration_error(
        tmp_path: Path, declared: str, said: str) -> None:
    env = install(tmp_path, "bad-kind", ENTRY_POINTS.replace("probe = probe_kind:KIND", declared))
    result = fencepost(env, tmp_path, "check", "tiny-register", "--adapter", "memory",
                       "--seed", "1", "--quiet")
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.splitlines()
    if said.endswith(" at "):  # the rest is the object's address
        assert line.startswith(f"fencepost: error: {said}"), line
    else:
        assert line == f"fencepost: error: {said}"


def test_the_kind_imports_the_authoring_module_alone() -> None:
    found = kit_imports("probe_kind")
    assert set(found) == {"fencepost.authoring"}, found
