"""Answers checked against their declared types (``fencepost.spec.shapes``) before the kit's
threads read them: exact verdicts of ``holds``, every protocol method's answer declared, every
answer of a correct store of the declared shape, and a malformed one left unread."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any, Literal

import attrs
import pytest

from fencepost.api import check
from fencepost.registry import contract_named
from fencepost.scenarios import concurrent
from fencepost.spec import ledgence_tasks as ldg
from fencepost.spec import shapes
from fencepost.spec import snodo_tasks as snodo
from fencepost.spec.outcome import Err, Ok
from fencepost.spec.shapes import answer_hints, holds

CONTRACTS = ("adk-ledger", "snodo-tasks", "ledgence-tasks")


@attrs.frozen
class _Inner:
    at: int
    name: str | None = None


@attrs.frozen
class _Outer:
    inner: _Inner
    tags: tuple[str, ...] = ()
    data: Mapping[str, Any] = attrs.field(factory=dict)


@pytest.mark.parametrize(("hint", "value", "held"), [
    (int, 3, True), (int, True, False), (int, 3.0, False), (bool, True, True), (bool, 1, False),
    (float, 1.5, True), (float, 1, True), (float, False, False), (float, math.inf, False),
    (float, math.nan, False), (float | None, -math.inf, False), (str, "x", True),
    (str, b"x", False), (bytes, b"x", True), (None, None, True), (None, 0, False),
    (int | None, None, True), (int | None, "1", False), (Literal["a", 1], 1, True),
    (Literal["a", 1], True, False), (tuple[int, ...], (1, 2), True),
    (tuple[int, ...], [1, 2], False), (tuple[int, str], (1, "a"), True),
    (tuple[int, str], (1, 2), False), (list[int], [1, "2"], False),
    (Mapping[str, int], {"a": 1}, True), (Mapping[str, int], {"a": "1"}, False),
    (dict[str, Any], {1: 1}, False), (Any, object(), True),
    (_Outer, _Outer(_Inner(1)), True), (_Outer, _Inner(1), False), (_Outer, None, False),
])
def test_a_value_holds_its_declared_type_or_not(hint: Any, value: Any, held: bool) -> None:
    assert holds(hint, value) is held


def test_a_field_of_another_type_deep_inside_does_not_hold() -> None:
    broken = copy.copy(_Inner(1))
    object.__setattr__(broken, "name", 5)
    assert holds(_Outer, _Outer(_Inner(1, "n"), ("t",), {"k": [1]})) is True
    assert holds(_Outer, _Outer(broken)) is False
    nested: list[Any] = []
    for _ in range(shapes.DEPTH + 2):
        nested = [nested]
    assert holds(list[Any], nested) is True  # Any is not followed
    assert holds(list[list[Any]], [[1]]) is True


@pytest.mark.parametrize("name", CONTRACTS)
def test_every_protocol_method_declares_its_answer(name: str) -> None:
    contract = contract_named(name)
    assert sorted(answer_hints(contract.spec)) == sorted(contract.suite.protocol_methods)


def test_an_acquisition_answers_one_of_its_replies() -> None:
    hints = answer_hints(ldg)
    assert hints["acquire"] == ldg.AcquireEmpty | ldg.AcquireAssigned | ldg.AcquireOwnershipLost
    assert holds(hints["acquire"], ldg.AcquireEmpty(1)) is True
    assert holds(hints["acquire"], None) is False
    assert holds(hints["probe_acquisition"], ldg.ProbeCompleted(ldg.AcquireEmpty(1),
                                                                "finalized_empty")) is True
    assert holds(hints["probe_acquisition"], ldg.ProbeCompleted(None, "replayed")) is False


@pytest.mark.parametrize("name", CONTRACTS)
@pytest.mark.parametrize("adapter", ["memory", "sqlite"])
def test_every_answer_of_a_correct_store_is_of_its_declared_shape(
        name: str, adapter: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A correct store's concurrent run: the workload learns from every answer (a shape the
    kit got wrong would quietly weaken every run)."""
    refused: list[str] = []
    checked = [0]

    def counted(answers: Mapping[str, Any], op: Any, outcome: Any) -> bool:
        checked[0] += 1
        held = shapes.well_formed(answers, op, outcome)
        if not held:
            refused.append(f"{op.name}: {outcome!r}"[:300])
        return held

    monkeypatch.setattr(concurrent, "well_formed", counted)
    report = check(name, adapter, profile="quick", seed=1)
    assert report.concurrent is not None and checked[0] == report.concurrent.calls
    assert refused == []


def test_a_snodo_snapshot_of_another_shape_is_not_learned_from() -> None:
    """A snapshot whose retry_at is no time (a conflict's payload, or an answer): the worker
    reads nothing of it (the model judges it)."""
    work = contract_named("snodo-tasks").suite.workload
    assert work is not None
    workload = work("x")
    worker = workload.worker(0)
    snap = snodo.Snapshot(
        snodo.Task("x1", snodo.WORKING, None, 5, 5, 10, 250, {}, None, None),
        snodo.Work("idem", "render", {}, ()), 1, 0, None, None, {}, {})
    broken = copy.copy(snap)
    object.__setattr__(broken, "retry_at", (x for x in ()))
    infinite = attrs.evolve(snap, retry_at=math.inf)
    op = snodo.Get("x1", None)
    worker.saw(op, Err("conflict", "", broken), 5)
    worker.saw(op, Ok(broken), 5)
    worker.saw(op, Ok(infinite), 5)
    assert workload.snapshot("x1") is None and list(workload.boundaries()) == []
    worker.saw(op, Ok(snap), 5)
    assert workload.snapshot("x1") == snap


def test_the_blame_of_an_answer_of_another_shape_reads_none_of_its_fields() -> None:
    """ledgence's attribution compares a recovery scan's counts at an expiry boundary; counts
    that are no integers are not compared (that raised TypeError: the kit's crash), and the
    step's own clause is broken."""
    from fencepost.model.ledgence_tasks.blame import answer_clause

    progress = ldg.RecoveryProgress(1, 1)
    odd = copy.copy(progress)
    object.__setattr__(odd, "expired", "one")
    op = ldg.ExpireBatch(100)
    assert answer_clause(op, "LDG-LIVE-001", Ok(progress), Ok(odd)) is None
    # well formed: more expired than the model (the store judged the attempt not live)
    assert answer_clause(op, "LDG-LIVE-001", Ok(progress), Ok(ldg.RecoveryProgress(2, 2))) == (
        "LDG-RECOVER-001")
