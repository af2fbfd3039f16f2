"""The ledgence model's view of its answers (every minted name an Opaque, whatever holds it)
and the identifiers the spec remembers as valid: both are on every step's path, written for
speed, and must answer exactly what the plain rules say."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from fencepost.model.ledgence_tasks import records
from fencepost.model.ledgence_tasks.records import EMPTY, ok_step
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Opaque
from fencepost.spec.outcome import Ok

SCOPE = spec.Scope("tenant-a", "ns-a")


def _input(data: Any = None) -> spec.TaskInput:
    return spec.TaskInput(SCOPE, "emails", spec.Program("mailer", "1.2.0"), "order-7", data)


def _descriptor() -> spec.ProgramDescriptor:
    return spec.ProgramDescriptor(spec.Program("mailer", "1.2.0"), "sha256:" + "ab" * 32, 10)


def _snapshot(data: Any = None, attempt: str | None = None) -> spec.TaskSnapshot:
    return spec.TaskSnapshot("task#1", "run#1", "key#1", _input(data), _descriptor(),
                             "active" if attempt else "queued", 1000, 1000, None, None,
                             1 if attempt else 0, attempt)


def _view(value: Any) -> Any:
    records._VIEWED.clear()
    outcome = ok_step(EMPTY, value, "LDG-READ-001").outcome
    assert isinstance(outcome, Ok)
    return outcome.value


def test_every_minted_name_in_a_record_is_opaque_and_other_text_stays() -> None:
    view = _view(_snapshot(attempt="attempt#2"))
    assert view == spec.TaskSnapshot(
        Opaque("task#1"), Opaque("run#1"), "key#1", _input(), _descriptor(), "active", 1000,
        1000, None, None, 1, Opaque("attempt#2"))
    assert type(view.idempotency_key) is str  # 'key' is no kind of name the model mints


def test_parts_without_a_name_are_the_same_objects() -> None:
    snap = _snapshot()
    view = _view(snap)
    assert view.input is snap.input and view.descriptor is snap.descriptor
    plain = spec.WorkerSession("ws-x", SCOPE, "emails", 2, 5000)
    assert _view(plain) is plain


def test_names_inside_containers_and_records_inside_records_are_found() -> None:
    data = {"parent": "task#9", "tags": ["a", "lease#3"], "pair": ("event#4", 1.5), "n": 1}
    view = _view(_snapshot(data))
    assert view.input.data == {"parent": Opaque("task#9"), "tags": ["a", Opaque("lease#3")],
                               "pair": (Opaque("event#4"), 1.5), "n": 1}
    assert view.input.scope is SCOPE
    page = spec.TaskPage((records.status_of(records.TaskRec(_snapshot(), ())),), None)
    assert _view(page).items[0].task_id == Opaque("task#1")


def test_text_of_a_str_subclass_is_tested_as_text() -> None:
    class Text(str):
        __slots__ = ()

    view = _view(spec.WorkerSession(Text("ws#4"), SCOPE, Text("q#1"), 1, 5000))
    assert view.id == Opaque("ws#4")
    assert view.queue == "q#1" and type(view.queue) is Text


def test_a_name_must_be_the_whole_text() -> None:
    for text in ("task#", "task#1x", " task#1", "tasks#1", "task#-1", "TASK#1"):
        assert _view(spec.WorkerSession(text, SCOPE, "q", 1, 5000)).id == text


def test_a_record_of_keyword_only_fields_is_viewed_too() -> None:
    @attrs.frozen(kw_only=True)
    class Named:
        task: str
        count: int

    assert _view(Named(task="task#5", count=2)) == Named(task=Opaque("task#5"), count=2)


def test_a_record_viewed_again_is_the_same_view() -> None:
    snap = _snapshot(attempt="attempt#2")
    records._VIEWED.clear()
    first = ok_step(EMPTY, snap, "LDG-READ-001").outcome
    again = ok_step(EMPTY, snap, "LDG-READ-001").outcome
    assert isinstance(first, Ok) and isinstance(again, Ok)
    assert first.value is again.value


@pytest.mark.parametrize("max_bytes", [spec.MAX_ID_BYTES, spec.MAX_ID_BYTES + 1])
def test_a_text_remembered_as_a_valid_identifier_is_still_held_to_a_tighter_rule(
        max_bytes: int) -> None:
    text = "q" * spec.MAX_ID_BYTES
    assert spec.validate_text(text, "queue", max_bytes) == text
    assert spec.validate_text(text, "queue") == text  # remembered now
    with pytest.raises(spec.InvalidInput, match="queue is longer than 127 bytes"):
        spec.validate_text(text, "queue", spec.MAX_ID_BYTES - 1)
    with pytest.raises(spec.InvalidInput, match="contains a control character"):
        spec.validate_text(text + "\x07", "queue", 500,
                           refused=spec.submission._CONTROL_CHARACTERS,
                           refused_what="a control character")


def test_an_identifier_remembered_as_valid_does_not_vouch_for_an_equal_subclass() -> None:
    assert spec.validate_text("ab", "queue") == "ab"

    class Claims(str):
        __slots__ = ()

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return hash("ab")

    with pytest.raises(spec.InvalidInput, match="contains a control or noncharacter"):
        spec.validate_text(Claims("a\x07"), "queue")


def test_an_empty_text_allowed_once_is_not_remembered_for_identifiers() -> None:
    assert spec.validate_text("", "correlation_key", allow_empty=True) == ""
    with pytest.raises(spec.InvalidInput, match="queue must not be empty"):
        spec.validate_text("", "queue")


def test_a_text_valid_under_another_set_is_not_remembered_for_identifiers() -> None:
    text = "note\ufdd0"  # a noncharacter: refused in identifiers, not by the control set
    assert spec.validate_text(text, "note", refused=spec.submission._CONTROL_CHARACTERS) == text
    with pytest.raises(spec.InvalidInput, match="contains a control or noncharacter"):
        spec.validate_text(text, "queue")
