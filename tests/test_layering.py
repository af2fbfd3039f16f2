"""The layering docs/architecture.md's "Layout" states (from the project's design card), read
from every module's imports (``ast``, relative imports resolved): each layer imports only
itself and the layers below it, and spec and model are pure (no adapters, databases, threads,
wall clock or global randomness). And no module is over 500 lines without saying why."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FRONT = "fencepost"
MAY_IMPORT = {
    "spec": {"spec"},
    "model": {"spec", "model"},
    "adapters": {"spec", "adapters"},
    "scenarios": {"spec", "model", "scenarios"},
    "reports": {"spec", "model", "scenarios", "reports"},
    FRONT: {"spec", "model", "adapters", "scenarios", "reports", FRONT},
}
"""Layer -> the layers its modules may import (the front, ``fencepost/``, may import all)."""

PURE = ("spec", "model")
IMPURE = ("sqlalchemy", "psycopg", "sqlite3", "threading", "time", "datetime", "random", "os",
          "socket")


def modules() -> Iterator[tuple[str, Path]]:
    """(layer, path) of every module of the package."""
    for layer in MAY_IMPORT:
        for path in sorted((ROOT / layer).rglob("*.py")):
            yield layer, path


def imports(layer: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path`` (relative ones resolved)."""
    inner = path.relative_to(ROOT / layer).with_suffix("").parts
    package = [FRONT, *([] if layer == FRONT else [layer]), *inner[:-1]]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                assert node.module is not None
                yield node.lineno, node.module
            else:
                base = package[:len(package) - (node.level - 1)]
                yield node.lineno, ".".join([*base, *([node.module] if node.module else [])])


def layer_of(module: str) -> str | None:
    """The layer of a module of the package, or None for anything else."""
    parts = module.split(".")
    if parts[0] != FRONT:
        return None
    return parts[1] if len(parts) > 1 and parts[1] in MAY_IMPORT else FRONT


def test_the_layering_test_reads_every_module() -> None:
    read = {path for _, path in modules()}
    every = {p for layer in MAY_IMPORT for p in (ROOT / layer).rglob("*.py")}
    assert read == every and len(read) > 100


def test_each_layer_imports_only_itself_and_the_layers_below() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} ({layer}) imports {name}"
        for layer, path in modules()
        for line, name in imports(layer, path)
        if (target := layer_of(name)) is not None and target not in MAY_IMPORT[layer]
    ]
    assert offenders == []


def test_pure_layers_import_nothing_impure() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for layer, path in modules() if layer in PURE
        for line, name in imports(layer, path)
        if name.split(".")[0] in IMPURE
    ]
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


CONTRACT_PACKAGES = ("adk_ledger", "snodo_tasks", "ledgence_tasks")


@pytest.mark.parametrize("name", ["adk-ledger", "snodo-tasks", "ledgence-tasks"])
def test_loading_one_contract_imports_no_other_contracts_modules(name: str) -> None:
    """A campaign worker loads one contract: another's spec, model, stores and mutants are
    about 0.15-0.2 s of its start-up for nothing (the shared mutant modules once imported all
    three)."""
    code = (
        "import sys; from fencepost.registry import contract_named; "
        f"c = contract_named({name!r}); c.suite, c.mutants, c.deep; "
        f"print(sorted({{p for m in sys.modules if m.startswith('fencepost.') "
        f"for p in m.split('.') if p in {CONTRACT_PACKAGES!r}}}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == repr([name.replace("-", "_")])


def test_no_module_imports_another_modules_private_names() -> None:
    """A name another module uses is public: one starting with ``_`` stays in its module."""
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno} imports {alias.name} from {node.module}"
        for _, path in modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert found == []


MAX_LINES = 500
LONG_REASON = "Over 500 lines:"


def test_no_module_is_over_500_lines_without_a_reason() -> None:
    """A module of the package is at most 500 lines, unless the first paragraph of its
    docstring has a line starting ``Over 500 lines:`` that says why it stays one module."""
    offenders = []
    for _, path in modules():
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        first = doc.split("\n\n")[0].splitlines()
        if not any(line.startswith(LONG_REASON) and line[len(LONG_REASON):].strip()
                   for line in first):
            offenders.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert offenders == []
