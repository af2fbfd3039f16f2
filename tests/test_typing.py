"""The whole package is mypy --strict clean, and its public entry points are typed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import source_copy

# One worker runs this module (its module-scoped fixture is costly): see pyproject's --dist.
pytestmark = pytest.mark.xdist_group("typing")

ROOT = Path(__file__).resolve().parent.parent

@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An installed copy of the package: mypy cannot follow setuptools' editable finder."""
    target = tmp_path_factory.mktemp("installed")
    source = source_copy(tmp_path_factory.mktemp("source"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         str(source)],
        check=True, capture_output=True, timeout=300,
    )
    return target


def _mypy(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *args],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )


@pytest.mark.long
def test_the_whole_package_is_mypy_strict_clean(installed: Path) -> None:
    """Every module, the adapters and the mutants included (each is a subclass of
    its core, so mypy checks every override against the core)."""
    result = _mypy(installed, "-p", "fencepost")
    assert result.returncode == 0, result.stdout + result.stderr
    modules = sum(1 for _ in (installed / "fencepost").rglob("*.py"))
    assert f"no issues found in {modules} source files" in result.stdout, result.stdout


def test_the_public_entry_points_type_check_with_their_signatures(installed: Path) -> None:
    """``fencepost.check`` is loaded lazily but typed: a misspelt keyword is a type error."""
    user = installed / "fencepost_user.py"
    user.write_text('import fencepost\n\n'
                    'report = fencepost.check("adk-ledger", "memory", profile="quick")\n'
                    'reveal_type(report)\n'
                    'fencepost.check("adk-ledger", "memory", profil="quick")\n')
    result = _mypy(installed, "--follow-imports=silent", str(user))
    notes = [line for line in result.stdout.splitlines() if line.startswith(user.name)]
    assert 'Revealed type is "fencepost.reports.verdict.RunReport"' in notes[0], result.stdout
    assert 'Unexpected keyword argument "profil" for "check"' in notes[1], result.stdout
