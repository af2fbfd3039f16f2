"""The kit's uses of Hypothesis' internals are all in scenarios/hypothesis_compat.py, and a
Hypothesis release that moved one is refused loudly, never half-used."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import hypothesis

from fencepost.scenarios import hypothesis_compat

ROOT = Path(__file__).resolve().parent.parent


def test_this_hypothesis_has_every_internal_the_kit_uses() -> None:
    assert hypothesis_compat.missing() == []
    oldest, newest = (tuple(int(p) for p in v.split(".")) for v in hypothesis_compat.TESTED)
    version = tuple(int(p) for p in hypothesis.__version__.split(".")[:3])
    assert oldest <= version and version[:2] <= newest, hypothesis.__version__


def test_the_dependency_bound_is_the_tested_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    [pin] = [d for d in project["dependencies"] if d.startswith("hypothesis")]
    oldest, newest = hypothesis_compat.TESTED
    major, minor = newest.split(".")
    assert pin == f"hypothesis>={oldest},<{major}.{int(minor) + 1}"


def test_a_release_that_moved_an_internal_is_refused_with_what_moved() -> None:
    script = ("from hypothesis.internal.conjecture import shrinker\n"
              "del shrinker.Shrinker.check_calls\n"
              "import fencepost.scenarios.hypothesis_compat\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "fencepost.scenarios.hypothesis_compat.HypothesisMoved: fencepost cannot use "
        f"Hypothesis {hypothesis.__version__}: it does not have "
        "hypothesis.internal.conjecture.shrinker:Shrinker.check_calls (fencepost was tested "
        f"with Hypothesis {hypothesis_compat.TESTED[0]} to {hypothesis_compat.TESTED[1]}.x; "
        "install one of those)")


def test_a_release_whose_state_machines_choose_rules_otherwise_is_refused() -> None:
    """The stateful runner's rule strategy (what a one-draw machine's steps replace) is looked
    for on a machine made at import: a release without it is refused, not run slower."""
    script = ("from hypothesis import stateful\n"
              "init = stateful.RuleBasedStateMachine.__init__\n"
              "def without(self):\n"
              "    init(self)\n"
              "    del self._rules_strategy\n"
              "stateful.RuleBasedStateMachine.__init__ = without\n"
              "import fencepost.scenarios.hypothesis_compat\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].endswith(
        "it does not have hypothesis.stateful:RuleBasedStateMachine()._rules_strategy "
        f"(fencepost was tested with Hypothesis {hypothesis_compat.TESTED[0]} to "
        f"{hypothesis_compat.TESTED[1]}.x; install one of those)")


def test_no_other_module_reaches_into_hypothesis_internals() -> None:
    compat = ROOT / "scenarios" / "hypothesis_compat.py"
    users = []
    for path in sorted(ROOT.glob("[a-z]*/**/*.py")):
        if path == compat or ".venv" in path.parts or "build" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.startswith(("hypothesis.internal", "hypothesis.configuration"))
                   for n in names):
                users.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert users == []


def test_a_kit_run_draws_no_constants_from_local_source(tmp_path: Path) -> None:
    """Hypothesis parses every module outside site-packages for constants to draw
    now and then: a kit run skips that (a worker's first seed paid 0.25 s for it, and what a
    seed generates would depend on the modules loaded and their text), and leaves it to other
    Hypothesis runs of the process."""
    (tmp_path / "probe_constants.py").write_text("SIZES = [5, 6, 7, 4096]\nNAME = 'probe'\n")
    script = f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
import probe_constants
from hypothesis.internal.conjecture import providers
parsed = []
real = providers.constants_from_module
def recorded(module, **kw):
    parsed.append(module.__name__)
    return real(module, **kw)
providers.constants_from_module = recorded
from fencepost.api import check
check("adk-ledger", "memory", profile="quick", seed=1, concurrency=0)
print(len(parsed))
providers._get_local_constants()  # as another Hypothesis run of the process would
print("probe_constants" in parsed)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "True"]
