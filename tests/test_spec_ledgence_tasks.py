"""ledgence-tasks, first slice: submission validation and canonical matching, exactly."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from fencepost.spec import ledgence_tasks as spec

SCOPE = spec.Scope("tenant-a", "prod")
DIGEST = "sha256:" + "ab" * 32


def task(**changes: Any) -> spec.TaskInput:
    base = spec.TaskInput(SCOPE, "emails", spec.Program("mailer", "1.2.0"), data={"to": "x"})
    return attrs.evolve(base, **changes)


def test_key_order_and_explicit_defaults_do_not_matter() -> None:
    a = task(data={"a": 1, "b": {"c": [1, 2]}})
    b = task(data={"b": {"c": [1, 2]}, "a": 1}, retry_policy=spec.RetryPolicy(3, 5000),
             attempt_timeout_ms=300_000)
    assert spec.same_submission(a, b)


@pytest.mark.parametrize(("left", "right"), [
    (1, 1.0),
    (0.0, -0.0),
    ([1, 2], [2, 1]),
    ("1", 1),
    (True, 1),
    (None, {}),
])
def test_different_json_values_never_match(left: Any, right: Any) -> None:
    assert not spec.same_submission(task(data={"v": left}), task(data={"v": right}))


def test_every_field_takes_part_in_matching() -> None:
    base = task()
    for changed in (task(queue="other"), task(program=spec.Program("mailer", "1.2.1")),
                    task(retry_policy=spec.RetryPolicy(4, 5000)), task(attempt_timeout_ms=60_000),
                    task(correlation_key=""), task(scope=spec.Scope("tenant-b", "prod"))):
        assert not spec.same_submission(base, changed)


def test_canonical_form_is_exact_text() -> None:
    assert spec.canonical(task(data={"z": -0.0, "a": [1, 1.5]})) == (
        '{"attempt_timeout_ms":300000,"data":{"a":[1,1.5],"z":-0.0},'
        '"program":{"id":"mailer","version":"1.2.0"},"queue":"emails",'
        '"retry_policy":{"max_attempts":3,"retry_delay_ms":5000},'
        '"scope":{"namespace":"prod","tenant_id":"tenant-a"}}'
    )


@pytest.mark.parametrize(("changes", "message"), [
    ({"queue": ""}, "queue must not be empty"),
    ({"queue": "q" * 129}, "longer than 128 bytes"),
    ({"queue": "a\x07b"}, "control"),
    ({"queue": "a\ufdd0"}, "noncharacter"),
    ({"queue": "a\U0001fffe"}, "noncharacter"),
    ({"program": spec.Program("Mailer", "1")}, "[a-z0-9._-]"),
    ({"program": spec.Program("..", "1")}, "not . or .."),
    ({"correlation_key": "k" * 513}, "longer than 512 bytes"),
    ({"retry_policy": spec.RetryPolicy(0, 5000)}, "max_attempts"),
    ({"retry_policy": spec.RetryPolicy(1001, 5000)}, "max_attempts"),
    ({"retry_policy": spec.RetryPolicy(3, 86_400_001)}, "retry_delay_ms"),
    ({"attempt_timeout_ms": 59_999}, "attempt_timeout_ms"),
    ({"attempt_timeout_ms": 86_400_001}, "attempt_timeout_ms"),
    ({"data": {"x": float("nan")}}, "NaN"),
])
def test_invalid_input_is_refused_with_the_reason(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(spec.InvalidInput) as caught:
        spec.validate_input(task(**changes))
    assert message in caught.value.detail
    assert caught.value.code == "invalid_input"


def test_range_boundaries_are_inclusive() -> None:
    for ok in (task(retry_policy=spec.RetryPolicy(1, 0)),
               task(retry_policy=spec.RetryPolicy(1000, 86_400_000)),
               task(attempt_timeout_ms=60_000), task(attempt_timeout_ms=86_400_000),
               task(correlation_key=""), task(queue="q" * 128)):
        assert spec.validate_input(ok) is ok


def test_data_nesting_limit_is_64() -> None:
    deep: Any = 1
    for _ in range(64):
        deep = [deep]
    spec.validate_input(task(data=deep))
    with pytest.raises(spec.InvalidInput, match="deeper than 64"):
        spec.validate_input(task(data=[deep]))


def test_submission_checks_key_descriptor_and_program() -> None:
    command = spec.SubmitCommand("key-1", task())
    good = spec.ProgramDescriptor(spec.Program("mailer", "1.2.0"), DIGEST, 10)
    spec.validate_submission(command, good)
    with pytest.raises(spec.InvalidInput, match="longer than 255"):
        spec.validate_submission(spec.SubmitCommand("k" * 256, task()), good)
    with pytest.raises(spec.InvalidInput, match="sha256"):
        spec.validate_submission(command, attrs.evolve(good, digest="md5:00"))
    with pytest.raises(spec.Conflict):
        spec.validate_submission(command, attrs.evolve(good, program=spec.Program("mailer", "2")))


def test_errors_carry_the_seed_variant_names() -> None:
    assert [e.code for e in spec.ERRORS] == [
        "invalid_input", "external_dispatch_required", "conflict", "ownership_lost",
        "unknown_session", "session_expired", "obsolete_operation", "out_of_order", "busy",
        "not_found", "unavailable"]


def test_delivery_values_round_trip_through_json() -> None:
    import json

    from fencepost.spec.values import decode, encode

    owner = spec.LeaseOwner(SCOPE, "task_1", "att_1", "lease_1", 1, "ws_1", 0)
    authority = spec.Authority(60_000, 60_000, 300_000, 0, False, False)
    descriptor = spec.ProgramDescriptor(spec.Program("mailer", "1.2.0"), DIGEST, 10)
    event = spec.AssignmentEvent("evt_1", "task_1", "run_1", "att_1", 1, SCOPE, {"n": -0.0})
    reply = spec.AcquireAssigned(1, spec.Assignment(descriptor, event, spec.Lease(owner, 60_000),
                                                    authority, 300_000))
    back = decode(json.loads(json.dumps(encode(reply))))
    assert back == reply


def test_protocol_methods_match_the_traits() -> None:
    declared = [n for n in vars(spec.TaskStore) if not n.startswith("_")]
    declared += [n for n in vars(spec.RecoveryStore) if not n.startswith("_")]
    assert sorted(declared) == sorted(spec.PROTOCOL_METHODS)
