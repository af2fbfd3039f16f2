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
    ({"retry_policy": spec.RetryPolicy(-1, 5000)}, "max_attempts"),
    ({"retry_policy": spec.RetryPolicy(3, -1)}, "retry_delay_ms"),
    ({"attempt_timeout_ms": 0}, "attempt_timeout_ms"),
    ({"attempt_timeout_ms": -1}, "attempt_timeout_ms"),
    ({"program": spec.Program("", "1")}, "must not be empty"),
    ({"program": spec.Program("mailer", "")}, "must not be empty"),
    ({"scope": spec.Scope("tenant-a", "")}, "must not be empty"),
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


@pytest.mark.parametrize("code", range(128))
def test_ascii_text_is_refused_exactly_where_the_character_sets_say(code: int) -> None:
    # ASCII text skips the search of the whole set (see _holds_refused): every ASCII character,
    # alone and inside other text, must be refused by identifiers and correlation keys
    # exactly when the set holds it.
    for text in (chr(code), f"ab{chr(code)}cd"):
        refused = spec.submission._REFUSED_CHARACTERS.search(text) is not None
        control = spec.submission._CONTROL_CHARACTERS.search(text) is not None
        assert refused == control == (code < 0x20 or code == 0x7F)
        if refused:
            with pytest.raises(spec.InvalidInput, match="contains a control or noncharacter"):
                spec.validate_text(text, "queue")
            with pytest.raises(spec.InvalidInput, match="contains a control character"):
                spec.validate_correlation_key(text, "correlation_key")
        else:
            assert spec.validate_text(text, "queue") == text
            assert spec.validate_correlation_key(text, "correlation_key") == text


def test_a_text_subclass_cannot_pass_for_printable() -> None:
    class Lying(str):
        def isascii(self) -> bool:
            return True

        def isprintable(self) -> bool:
            return True

    with pytest.raises(spec.InvalidInput, match="contains a control or noncharacter"):
        spec.validate_text(Lying("a\x07b"), "queue")
    with pytest.raises(spec.InvalidInput, match="contains a control or noncharacter"):
        spec.validate_text(Lying("a\ufdd0"), "queue")


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
    with pytest.raises(spec.InvalidInput, match="must not be empty"):
        spec.validate_submission(spec.SubmitCommand("", task()), good)
    for size in (0, -1):
        with pytest.raises(spec.InvalidInput, match="positive size"):
            spec.validate_submission(command, attrs.evolve(good, size=size))
    with pytest.raises(spec.InvalidInput, match="sha256"):
        spec.validate_submission(command, attrs.evolve(good, digest=""))
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


# --- the delivery commands at their edges --------------------------------------------------------

OWNER = spec.LeaseOwner(SCOPE, "task_1", "att_1", "lease_1", 1, "ws_1", 0)


@pytest.mark.parametrize("changes", [
    {"task_id": ""}, {"attempt_id": ""}, {"lease_id": ""}, {"worker_session_id": ""},
    {"generation": 0}, {"lease_id": "x" * 200},
])
def test_an_owner_the_seed_only_compares_is_well_formed(changes: dict[str, Any]) -> None:
    owner = attrs.evolve(OWNER, **changes)
    assert spec.validate_owner(owner) is owner


@pytest.mark.parametrize("changes", [
    {"generation": -1}, {"consumer_id": -1}, {"generation": True}, {"consumer_id": "0"},
    {"task_id": None}, {"scope": spec.Scope("tenant-a", "")}, {"scope": spec.Scope("", "x")},
])
def test_an_owner_the_seed_cannot_hold_is_invalid(changes: dict[str, Any]) -> None:
    with pytest.raises(spec.InvalidInput):
        spec.validate_owner(attrs.evolve(OWNER, **changes))


@pytest.mark.parametrize(("sequence", "intent", "session"), [
    (-1, spec.KEEP_ALIVE, "ws_1"), (True, spec.KEEP_ALIVE, "ws_1"), (1, "", "ws_1"),
    (1, "sprint", "ws_1"), (1, spec.KEEP_ALIVE, ""),
])
def test_a_renewal_at_its_edges_is_invalid(sequence: Any, intent: str, session: str) -> None:
    owner = attrs.evolve(OWNER, worker_session_id=session)
    with pytest.raises(spec.InvalidInput):
        spec.validate_renew(spec.RenewCommand(owner, sequence, intent))


def _report(**changes: Any) -> spec.ExecutionReport:
    base = spec.ExecutionReport(spec.ExecutionContext("task_1", "att_1",
                                                      spec.Program("mailer", "1.2.0"), DIGEST),
                                "proc-1", False, {"status": "success", "output": 1}, 0)
    return attrs.evolve(base, **changes)


def _failure(**changes: Any) -> spec.ExecutionFailure:
    base = spec.ExecutionFailure(_report().context, "io", "", "execution", True)
    return attrs.evolve(base, **changes)


@pytest.mark.parametrize("report", [
    _report(process_id=""), _report(elapsed_ms=-1), _failure(phase=""), _failure(kind=""),
    _failure(phase="warmup"),
    _report(outcome={"status": "failure", "kind": 7, "message": "m"}),
    _report(outcome={"status": "failure", "kind": "declined", "message": None}),
])
def test_a_report_the_seed_cannot_hold_is_invalid(report: Any) -> None:
    with pytest.raises(spec.InvalidInput):
        spec.validate_settle(spec.SettleCommand(OWNER, "op-1", report, spec.CONFIRMED))


@pytest.mark.parametrize("kind", ["declined", "", "runtime", "carte_refus\u00e9e \u2717"])
def test_an_application_failure_kind_is_the_programs_own_text(kind: str) -> None:
    """``ProgramOutcome::Failure { kind: String, .. }``: not a worker error kind."""
    report = _report(outcome={"status": "failure", "kind": kind, "message": ""})
    command = spec.SettleCommand(OWNER, "op-1", report, spec.CONFIRMED)
    assert spec.validate_settle(command) is command


def test_the_checks_after_the_owner_take_the_empty_values_the_seed_compares() -> None:
    empty_digest = _report(context=attrs.evolve(_report().context, digest=""))
    command = spec.SettleCommand(OWNER, "", empty_digest, spec.CONFIRMED)
    assert spec.validate_settle(command) is command  # the shape holds: "" is a string
    with pytest.raises(spec.InvalidInput, match="operation_id"):
        spec.check_operation_id(command)
    descriptor = spec.ProgramDescriptor(spec.Program("mailer", "1.2.0"), DIGEST, 10)
    with pytest.raises(spec.Conflict):
        spec.check_report_identity(command, descriptor)
    quiet = spec.SettleCommand(OWNER, "op-1", _failure(), spec.CONFIRMED)  # message ""
    assert spec.validate_settle(quiet) is quiet


@pytest.mark.parametrize("query", [
    spec.TaskListQuery(limit=-1), spec.TaskListQuery(limit=0), spec.TaskListQuery(limit=True),
    spec.TaskListQuery(spec.TaskFilters(state="")),
    spec.TaskListQuery(spec.TaskFilters(submitted_from=-1)),
    spec.TaskListQuery(spec.TaskFilters(queue="")),
])
def test_a_list_query_at_its_edges_is_invalid(query: spec.TaskListQuery) -> None:
    with pytest.raises(spec.InvalidInput):
        spec.validate_list_query(SCOPE, query)


def test_zero_submission_bounds_are_valid() -> None:
    for filters in (spec.TaskFilters(submitted_from=0), spec.TaskFilters(submitted_until=0),
                    spec.TaskFilters(correlation_key="")):
        query = spec.TaskListQuery(filters)
        assert spec.validate_list_query(SCOPE, query) is query


@pytest.mark.parametrize(("sequence", "consumer", "generation", "task"), [
    (0, 0, 1, "task_1"), (-1, 0, 1, "task_1"), (1, -1, 1, "task_1"), (1, 0, 0, "task_1"),
    (1, 0, -1, "task_1"), (1, 0, 1001, "task_1"), (1, 0, 1, ""),
])
def test_a_claim_at_its_edges_is_invalid(sequence: int, consumer: int, generation: int,
                                         task: str) -> None:
    acquisition = spec.AcquireCommand(SCOPE, "emails", "ws_1", consumer, sequence)
    dispatch = spec.DispatchRef(SCOPE, "emails", task, generation)
    with pytest.raises(spec.InvalidInput):
        spec.validate_claim(spec.ClaimCommand(acquisition, dispatch))
