"""The one import package ``fencepost`` maps the design card's folders; nothing else installs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

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
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    [wheel] = tmp_path.glob("fencepost-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.startswith("fencepost-")}
    assert top == {"fencepost"}
    for must in ("fencepost/spec/adk_ledger.py", "fencepost/model/adk_ledger.py",
                 "fencepost/adapters/adk_ledger/sql.py", "fencepost/py.typed",
                 "fencepost/scenarios/adk_ledger/machine.py", "fencepost/reports/render.py"):
        assert must in names
