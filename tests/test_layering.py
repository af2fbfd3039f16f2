"""spec and model are pure: no adapters, databases, threads, wall clock or global randomness."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PURE = ("spec", "model")
FORBIDDEN = ("sqlalchemy", "psycopg", "sqlite3", "threading", "time", "datetime", "random",
             "os", "socket", "fencepost.adapters", "fencepost.scenarios")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_pure_packages_import_nothing_impure() -> None:
    offenders = []
    for package in PURE:
        for path in sorted((ROOT / package).glob("*.py")):
            for name in _imports(path):
                if any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
                    offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_importing_spec_and_model_loads_no_database_driver() -> None:
    code = (
        "import sys, fencepost.spec.adk_ledger, fencepost.model.adk_ledger;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'psycopg', 'sqlite3')"
        " or m.startswith('fencepost.adapters')];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
