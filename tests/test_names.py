"""The kit's tests are named by what they test, by one rule:

- ``test_<layer>_<module>[_<aspect>].py`` tests one module (or package) of a layer: spec,
  model, adapters, scenarios, reports (``test_spec_opaque.py`` tests ``spec/opaque.py``);
- ``test_<contract>[_<aspect>].py`` runs one contract end to end (``test_snodo_tasks.py``);
- any other ``test_<feature>.py`` tests one behaviour across the layers (``test_cli.py``,
  ``test_hostile.py``, ``test_adding_a_contract.py``).

This test holds the first form to it (the module must exist) and asks each built-in contract
for a test of the second form."""

from __future__ import annotations

from pathlib import Path

from fencepost.registry import contract_names

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
LAYERS = ("spec", "model", "adapters", "scenarios", "reports")


def _named_module(layer: str, rest: str) -> bool:
    """Does ``rest`` (``ledgence_tasks_memory``) start with a module or package of ``layer``,
    at a word boundary?"""
    names = {p.stem for p in (ROOT / layer).glob("*.py")} | {
        p.name for p in (ROOT / layer).iterdir() if (p / "__init__.py").exists()}
    return any(rest == n or rest.startswith(n + "_") for n in names)


def test_layer_tests_name_a_module_of_their_layer() -> None:
    wrong = []
    for path in sorted(TESTS.glob("test_*.py")):
        name = path.stem.removeprefix("test_")
        layer = next((la for la in LAYERS if name.startswith(la + "_")), None)
        if layer is not None and not _named_module(layer, name.removeprefix(layer + "_")):
            wrong.append(f"{path.name}: no module of {layer}/ is named in it")
    assert wrong == []


def test_every_contract_has_its_end_to_end_test() -> None:
    """Each built-in contract's ``test_<contract>.py`` (an installed plugin's are its own)."""
    missing = [c for c in ("adk-ledger", "snodo-tasks", "ledgence-tasks")
               if c in contract_names()
               and not list(TESTS.glob(f"test_{c.replace('-', '_')}*.py"))]
    assert missing == []


def test_the_rule_sees_a_wrong_name() -> None:
    assert not _named_module("spec", "nosuch")
    assert _named_module("spec", "opaque") and _named_module("adapters", "ledgence_tasks_sql")
