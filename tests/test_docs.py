"""The documentation site builds strictly (a broken link or reference fails it), its contract
pages hold every clause of their catalogue, and every code sample on it runs."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import missing

from fencepost.explain import operations
from fencepost.registry import contract_named, contract_names
from fencepost.spec.values import value_classes_in

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BIN = str(Path(sys.executable).parent)
ENV = dict(os.environ, NO_MKDOCS_2_WARNING="1", PATH=BIN + os.pathsep + os.environ["PATH"])

pytestmark = pytest.mark.xdist_group("docs")


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(config), "-d", str(site)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)


def test_the_site_builds_strictly_with_a_page_per_contract(tmp_path: Path) -> None:
    result = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in contract_names():
        page = (tmp_path / "site" / "contracts" / name / "index.html").read_text()
        clauses = [c.id for c in contract_named(name).clauses]
        ids = re.findall(r'<h3 id="([^"]+)"', page)
        assert [i for i in ids if i in clauses] == clauses  # each its own anchor, in order
        for m in contract_named(name).mutants:
            assert f"<code>{m.name}</code>" in page
        for op, args, answer in operations(contract_named(name)):  # every method, its types
            assert f"<code>{html.escape(op + args, quote=False)}</code>" in page, op
            assert f"<code>{html.escape(answer, quote=False)}</code>" in page, op
        shapes = page.split('id="compared-shapes"', 1)[1].split('id="clauses"', 1)[0]
        assert re.findall(r"<h3 id=\"([^\"]+)\"", shapes) == [
            n.lower() for n, _ in value_classes_in(contract_named(name).spec)]


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    (docs / "index.md").write_text((docs / "index.md").read_text()
                                   + "\nSee [nowhere](nowhere.md).\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text((ROOT / "mkdocs.yml").read_text()
                      .replace("docs_dir: docs", f"docs_dir: {docs}")
                      .replace("  - docs/_hooks/", f"  - {DOCS}/_hooks/"))
    result = build(config, tmp_path / "site")
    assert result.returncode == 1
    assert "nowhere.md" in result.stdout + result.stderr


def samples(language: str) -> list[tuple[str, str]]:
    """(page, code) of every ``language`` block on the site's own pages."""
    found = []
    for page in sorted(DOCS.glob("*.md")):
        for code in re.findall(rf"```{language}\n(.*?)```", page.read_text(), re.S):
            found.append((page.name, code))
    return found


def test_the_install_sample_is_the_readmes_quickstart() -> None:
    """The two commands are the README's, which CI runs (tests/test_readme.py)."""
    readme = (ROOT / "README.md").read_text().split("## Quickstart", 1)[1]
    quickstart = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    assert [code for page, code in samples("sh") if ".venv/bin/pip" in code] == [quickstart]


def expected_codes(line: str) -> set[int]:
    """The exit codes a sample line may end with: 0, or what its trailing ``# exit N`` (or
    ``# exit N|M: why``) comment says, which the page shows the reader too."""
    said = re.search(r"#\s*exit\s+(\d+(?:\|\d+)*)", line)
    return {int(c) for c in said.group(1).split("|")} if said else {0}


def workdir(tmp: Path) -> Path:
    """A directory that looks like the repository's root (each top-level entry a link to the
    real one), so a sample's relative paths work and what it writes stays out of the tree."""
    for entry in ROOT.iterdir():
        if entry.name != ".git":
            (tmp / entry.name).symlink_to(entry)
    return tmp


@pytest.mark.parametrize(("page", "code"), [
    (page, code) for page, code in samples("sh") if ".venv/bin/pip" not in code])
def test_each_command_on_the_site_runs(page: str, code: str, tmp_path: Path) -> None:
    """A block's lines run one after another in one directory (a later line may read what an
    earlier one wrote), each ending with the exit code the page says."""
    for program, what in (("node", "Node.js"), ("escript", "Erlang")):
        if re.search(rf"\b{program}\b", code) and shutil.which(program) is None:
            missing(f"{what} is not installed ({program} not on PATH)", "toolchain")
    cwd = workdir(tmp_path)
    for line in code.strip().splitlines():
        result = subprocess.run(line, shell=True, cwd=cwd, env=ENV, capture_output=True,
                                text=True, timeout=600)
        assert result.returncode in expected_codes(line), \
            f"{page}: {line}\n{result.stdout}\n{result.stderr}"


def test_a_sample_that_ends_otherwise_than_its_page_says_fails() -> None:
    assert expected_codes("fencepost check adk-ledger") == {0}
    assert expected_codes("fencepost check x --adapter mutant:y   # exit 1") == {1}
    assert expected_codes("fencepost coverage x   # exit 0|3: 3 when a seed missed one") == {0, 3}


@pytest.mark.parametrize(("page", "code"), samples("python"))
def test_each_python_sample_on_the_site_runs(page: str, code: str, tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=ENV,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{page}\n{result.stdout}\n{result.stderr}"
