"""The kit's own suite under pytest-xdist: a module marked ``xdist_group`` runs on one worker,
so its module-scoped fixture (a costly run, an install) is made once (see pyproject's
``--dist loadgroup`` and the ``pytest<9.2`` pin beside it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GROUPED = '''
import os
import pytest

pytestmark = pytest.mark.xdist_group("one")


@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    with open(os.path.join(os.path.dirname(__file__), "workers.txt"), "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
'''

OTHERS = '''
def test_other_one():
    pass


def test_other_two():
    pass
'''


def test_a_marked_module_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "test_others.py").write_text(OTHERS)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup",
         "-p", "no:cacheprovider", "-p", "no:fencepost", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    workers = (tmp_path / "workers.txt").read_text().split()
    assert len(workers) == 6 and len(set(workers)) == 1, workers
