"""The pure packages (and the simulation and reports) are mypy --strict clean, and so are the
adapters typed so far: every module listed in ``STRICT_ADAPTERS``, the known-faulty stores
included (each is a subclass of its core, so mypy checks every override against the core)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

STRICT_ADAPTERS = (
    "adapters/__init__.py",
    "adapters/codec.py",
    "adapters/memory.py",
    "adapters/sql.py",
    "adapters/adk_ledger",
    "adapters/snodo_tasks",
    "adapters/faulty/__init__.py",
    "adapters/faulty/base.py",
    "adapters/faulty/adk_ledger.py",
    "adapters/faulty/adk_ledger_arguments.py",
    "adapters/faulty/snodo_tasks.py",
)
"""Files and folders (every module below them) that must stay mypy --strict clean. The rest of
``adapters/`` is on its way (issue 13); add a path here once it is clean."""


def _modules(paths: tuple[str, ...]) -> list[str]:
    """The import names (``fencepost.adapters...``) of the modules at ``paths``."""
    files: list[Path] = []
    for path in paths:
        found = ROOT / path
        files.extend(sorted(found.rglob("*.py")) if found.is_dir() else [found])
    modules = []
    for file in files:
        parts = file.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules.append(".".join(("fencepost", *parts)))
    return modules


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An installed copy of the package: mypy cannot follow setuptools' editable finder."""
    target = tmp_path_factory.mktemp("installed")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    return target


def _mypy(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *args],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )


def test_pure_packages_are_mypy_strict_clean(installed: Path) -> None:
    result = _mypy(installed, "-p", "fencepost.spec", "-p", "fencepost.model",
                   "-p", "fencepost.scenarios", "-p", "fencepost.reports")
    assert result.returncode == 0, result.stdout + result.stderr


def test_typed_adapters_are_mypy_strict_clean(installed: Path) -> None:
    modules = _modules(STRICT_ADAPTERS)
    # The modules they import are read for their types, but only these are judged.
    args = ["--follow-imports=silent"]
    for module in modules:
        args += ["-m", module]
    result = _mypy(installed, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"no issues found in {len(modules)} source files" in result.stdout, result.stdout


def test_the_typed_adapters_list_names_files_that_exist() -> None:
    missing = [path for path in STRICT_ADAPTERS if not (ROOT / path).exists()]
    assert missing == []
    assert "fencepost.adapters.faulty.adk_ledger" in _modules(STRICT_ADAPTERS)


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
