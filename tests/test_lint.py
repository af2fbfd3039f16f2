"""The tree is ruff clean under the project's own settings (pyproject's [tool.ruff]): findings
crept in while nothing ran ruff."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
         str(ROOT / "pyproject.toml"), *args],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )


def test_the_tree_is_ruff_clean() -> None:
    result = _ruff(".")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All checks passed!" in result.stdout


def test_ruff_runs_with_the_projects_rules(tmp_path: Path) -> None:
    """The check above can fail: an unsorted import (I001) and a line over 100 characters
    (E501) are found under the same settings."""
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nimport os\n\nx = '" + "y" * 100 + "'\n"
                   "print(os, sys, x)\n")
    result = _ruff(str(bad), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "I001" in result.stdout and "E501" in result.stdout, result.stdout
