"""The one import package ``fencepost`` maps the design card's folders; nothing else installs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from conftest import source_copy

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"spec", "model", "adapters", "scenarios", "reports"}


def _declared() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(data["tool"]["setuptools"]["packages"])


def test_every_package_folder_is_declared() -> None:
    found = {"fencepost"}
    for folder in FOLDERS:
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT).parts
            found.add(".".join(("fencepost", *rel)))
    assert found == _declared()


def test_wheel_holds_only_the_fencepost_package(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", str(tmp_path), str(source_copy(tmp_path / "source"))],
        check=True, capture_output=True, timeout=300,
    )
    [wheel] = tmp_path.glob("fencepost-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.startswith("fencepost-")}
    assert top == {"fencepost"}
    for must in ("fencepost/spec/adk_ledger/__init__.py", "fencepost/model/adk_ledger/steps.py",
                 "fencepost/adapters/adk_ledger/sql.py", "fencepost/py.typed",
                 "fencepost/scenarios/adk_ledger/machine.py", "fencepost/reports/render.py",
                 "fencepost/spec/adk_ledger/catalogue.py", "fencepost/spec/snodo_tasks/ops.py",
                 "fencepost/spec/ledgence_tasks/delivery.py"):
        assert must in names


def test_a_fencepost_folder_in_the_working_directory_hides_nothing(tmp_path: Path) -> None:
    """The README's first line installs the package (not editable) and runs ``fencepost check``
    in the repository's root, whose folder ``fencepost`` is not the installed package (setuptools
    maps ``spec`` and the others into it). The supervised child must import the installed kit,
    not a ``fencepost`` folder of its working directory: here one that cannot be imported. A
    usage error the child finds is then one line, exit 2 (with the folder first on the child's
    path, the child died importing it: a traceback, and the run 'ended abruptly', exit 3)."""
    (tmp_path / "fencepost").mkdir()
    (tmp_path / "fencepost" / "__init__.py").write_text(
        "raise ImportError('the working directory shadowed the installed fencepost')\n")
    (tmp_path / "R").write_text("a file")
    result = subprocess.run(
        [sys.executable, "-P", "-c", "import sys; from fencepost.cli import main; "
         "sys.exit(main())", "check", "adk-ledger", "--report", "R", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "fencepost: error: --report R is a file; name a directory (it is created if "
        "missing)\n")
