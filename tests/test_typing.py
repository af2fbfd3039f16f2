"""The pure packages (and the simulation and reports) are mypy --strict clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_pure_packages_are_mypy_strict_clean(tmp_path: Path) -> None:
    # mypy cannot follow setuptools' editable finder, so type-check an installed copy.
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(tmp_path),
         str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "-p", "fencepost.spec", "-p", "fencepost.model", "-p", "fencepost.scenarios",
         "-p", "fencepost.reports"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
