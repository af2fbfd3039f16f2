"""Each snodo-tasks mutant differs from the correct store in its own bug alone: on the calls
where a mutant once carried a second difference, it answers as the correct store does, and
on its bug it still does not."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from fencepost.adapter_spec import resolve_adapter
from fencepost.env import AdapterEnv
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.errors import ContractError

Call = Callable[..., Any]
Script = Callable[[Any, "_Clock", Call], None]


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


def _answers(adapter: str, script: Script, **options: str) -> list[str]:
    """What ``script`` sees on a fresh store of ``adapter``: each call's "ok" or its refusal's
    code (with its payload, if any)."""
    factory, _ = resolve_adapter("snodo-tasks", adapter)
    clock = _Clock()
    env = AdapterEnv(clock=clock, namespace=f"one{uuid.uuid4().hex[:10]}", options=options)
    store = factory(env)
    answers: list[str] = []

    def call(name: str, *args: Any) -> Any:
        try:
            result = getattr(store, name)(*args)
        except ContractError as e:
            answers.append(e.code if e.payload is None else f"{e.code}({e.payload!r})")
            return None
        answers.append("ok")
        return result

    try:
        script(store, clock, call)
    finally:
        store.close()
        factory.discard(env)
    return answers


def _alike(name: str, script: Script, **options: str) -> None:
    assert _answers(f"mutant:{name}", script, **options) == _answers("memory", script, **options)


def _access(store: Any, kind: str, task_id: Any, tenant: str | None = "acme") -> Any:
    return store.authorize(spec.Context(tenant), spec.Action(kind, task_id))


def _task(task_id: str, now: int, ttl_ms: Any = None) -> spec.Task:
    return spec.Task(task_id, spec.WORKING, None, now, now, ttl_ms, 250, {}, None, None)


def _work(**fields: Any) -> spec.Work:
    return spec.Work(**{"idempotency_key": "idem", "type": "render", "input": {},
                        "retry_policy": (), **fields})


def _create(store: Any, clock: _Clock, call: Call, task_id: str, ttl_ms: Any = None,
            tenant: str | None = "acme", **work: Any) -> None:
    call("create", _task(task_id, clock.now, ttl_ms), _work(**work),
         _access(store, "create", task_id, tenant))


# -- arguments: the seed's guard stands in front of every store, a mutant's bug behind it ----


def _claim_args(store: Any, clock: _Clock, call: Call) -> None:
    """claim with arguments the guard refuses, of a missing and of an expired task."""
    _create(store, clock, call, "a", ttl_ms=10)
    clock.now += 20
    for task_id in ("a", "missing"):
        call("claim", task_id, "w", 0)
        call("claim", task_id, "", 100)
    call("claim", "", "w", 100)


def _claim_next_args(store: Any, clock: _Clock, call: Call) -> None:
    """claim_next with arguments the guard refuses, two tasks due."""
    _create(store, clock, call, "a")
    _create(store, clock, call, "b")
    call("claim_next", "w", 0)
    call("claim_next", "", 100)


def _read_args(store: Any, clock: _Clock, call: Call) -> None:
    """get and worker_snapshot of a task id that is no string."""
    _create(store, clock, call, "a")
    claimed = call("claim", "a", "w", 100)
    for kind in ("get", "update"):
        call("get", 7, _access(store, kind, "a"))
    call("worker_snapshot", 7, claimed.lease)


def _transition_args(store: Any, clock: _Clock, call: Call) -> None:
    """transition with a revision that equals the task's but is no integer, and of a missing
    task with arguments the guard refuses."""
    _create(store, clock, call, "a")
    claimed = call("claim", "a", "w", 100)
    done = spec.Event("e1", "completed", {"result": {}})
    worker = spec.WorkerAuthority(claimed.lease)
    call("transition", "a", 0.0, done, worker)
    call("transition", "missing", -1, done, worker)
    call("transition", "missing", 0, done, None)


ARGUMENTS = [
    ("claim_of_missing_unavailable", _claim_args),
    ("claim_hides_expired_tasks", _claim_args),
    ("claim_next_ignores_retry_among_several", _claim_next_args),
    ("missing_task_unauthorized", _read_args),
    ("reads_need_get_access", _read_args),
    ("lease_names_the_task", _read_args),
    ("revision_checked_outside_write", _transition_args),
]


@pytest.mark.parametrize(("name", "script"), ARGUMENTS)
def test_a_mutant_refuses_what_the_guard_refuses_before_its_bug(name: str,
                                                                script: Script) -> None:
    """These mutants read the task before they checked the call's arguments: claim('', ...),
    claim(.., lease_ms=0) and get(7, ..) answered unavailable, not_found or
    unauthorized_action, worker_snapshot(7, lease) read the lease's task, claim_next(.., 0)
    granted a claim, and transition(.., 0.0, ..) applied. The seed's guard refuses each with
    function_clause before any store is reached, its bug behind it included."""
    _alike(name, script)


def _bug_of_reading_first(store: Any, clock: _Clock, call: Call) -> None:
    _create(store, clock, call, "a", ttl_ms=10)
    _create(store, clock, call, "b")
    claimed = call("claim", "b", "w", 100)
    clock.now += 20
    call("claim", "missing", "w", 100)  # claim_of_missing_unavailable
    call("claim", "a", "w", 100)  # claim_hides_expired_tasks
    call("get", "missing", _access(store, "get", "missing"))  # missing_task_unauthorized
    call("get", "b", _access(store, "update", "b"))  # reads_need_get_access
    call("worker_snapshot", "missing", claimed.lease)  # lease_names_the_task


def test_the_mutants_that_read_first_still_have_their_bug() -> None:
    correct = _answers("memory", _bug_of_reading_first)
    assert correct == ["ok", "ok", "ok", "not_found", "ok", "not_found", "ok", "not_found"]
    bugs = {"claim_of_missing_unavailable": (4, "unavailable"),
            "claim_hides_expired_tasks": (5, "not_found"),
            "missing_task_unauthorized": (6, "unauthorized_action"),
            "reads_need_get_access": (7, "not_found"),
            "lease_names_the_task": (8, "ok")}
    for name, (at, answer) in bugs.items():
        assert _answers(f"mutant:{name}", _bug_of_reading_first) == [
            *correct[:at - 1], answer, *correct[at:]], name


# -- values a check of the wrong width took beside the bug's own ------------------------------


def _renew(lease_ms: Any) -> Script:
    def script(store: Any, clock: _Clock, call: Call) -> None:
        _create(store, clock, call, "a")
        claimed = call("claim", "a", "w", 100)
        call("renew", claimed.lease, lease_ms)
    return script


def _create_with(ttl_ms: Any = None, **work: Any) -> Script:
    def script(store: Any, clock: _Clock, call: Call) -> None:
        _create(store, clock, call, "a", ttl_ms=ttl_ms, **work)
    return script


def _authorize(kind: Any, task_id: Any) -> Script:
    def script(store: Any, clock: _Clock, call: Call) -> None:
        call("authorize", spec.Context("acme"), spec.Action(kind, task_id))
    return script


def _authority(make: Callable[[Any], Any]) -> Script:
    """A completion sent with the authority ``make`` builds from the worker's lease."""
    def script(store: Any, clock: _Clock, call: Call) -> None:
        _create(store, clock, call, "a")
        claimed = call("claim", "a", "w", 100)
        call("transition", "a", 0, spec.Event("e1", "completed", {"result": {}}),
             make(claimed.lease))
    return script


def _retry_after(delay_ms: int) -> Script:
    """A retry of ``delay_ms`` requested and the claim was released: claim again at once."""
    def script(store: Any, clock: _Clock, call: Call) -> None:
        _create(store, clock, call, "a", retry_policy=(delay_ms,))
        claimed = call("claim", "a", "w", 100)
        clock.now += 10
        failure = {"error": {"code": "timeout"}, "statusMessage": "upstream timed out"}
        call("transition", "a", 0, spec.Event("r1", "retry_requested", failure),
             spec.WorkerAuthority(claimed.lease))
        call("release", claimed.lease)
        call("claim", "a", "w", 100)
    return script


def _created_then_read(ttl_ms: int) -> Script:
    """A task created with ``ttl_ms``, read at once."""
    def script(store: Any, clock: _Clock, call: Call) -> None:
        _create(store, clock, call, "a", ttl_ms=ttl_ms)
        call("get", "a", _access(store, "get", "a"))
    return script


WIDTHS = [
    ("ttl_as_i32", _created_then_read(30 * 86_400_000),
     [_created_then_read(2**31 - 1), _created_then_read(1)]),
    ("retry_delay_as_i32", _retry_after(spec.MAX_RETRY_DELAY_MS),
     [_retry_after(2**31 - 1), _retry_after(0), _retry_after(1)]),
    ("renew_by_zero", _renew(0), [_renew(True), _renew(False)]),
    ("zero_ttl_stored", _create_with(ttl_ms=0), [_create_with(ttl_ms=False)]),
    ("empty_work_type_stored", _create_with(type=""),
     [_create_with(type="", idempotency_key=5), _create_with(type=None, idempotency_key="")]),
    ("authorize_mints_anything", _authorize("get", ""),
     [_authorize("get", 7), _authorize("get", None), _authorize("nothing", 7)]),
    ("bare_lease_is_authority", _authority(lambda lease: lease),
     [_authority(lambda lease: None), _authority(lambda lease: "lease"),
      _authority(lambda lease: {"lease": lease})]),
]


@pytest.mark.parametrize(("name", "bug", "alike"), WIDTHS)
def test_a_mutant_takes_what_its_bug_takes_and_nothing_more(
        name: str, bug: Script, alike: list[Script]) -> None:
    """renew_by_zero took a lease_ms of True (isinstance(x, int) takes a bool),
    zero_ttl_stored a ttl_ms of False, empty_work_type_stored an idempotency key of 5 beside
    an empty type (it replaced both fields when one was empty), authorize_mints_anything a
    task id of 7 or None, bare_lease_is_authority any value at all as authority (None answered
    stale_lease): the correct store refuses each, and the bug needs none of them."""
    for script in alike:
        _alike(name, script)
    assert _answers(f"mutant:{name}", bug) != _answers("memory", bug)


def test_the_longest_retry_delay_defers_the_claim_by_all_of_it_but_in_an_i32() -> None:
    """4 294 967 295 ms kept whole defers the next claim by that much; kept in an i32 it is
    -1, and the claim is taken at once."""
    longest = _retry_after(spec.MAX_RETRY_DELAY_MS)
    assert _answers("memory", longest)[-1] == f"deferred({spec.MAX_RETRY_DELAY_MS})"
    assert _answers("mutant:retry_delay_as_i32", longest)[-1] == "ok"


def test_a_ttl_of_a_month_reads_back_but_in_an_i32_the_task_is_expired() -> None:
    month = _created_then_read(30 * 86_400_000)
    assert _answers("memory", month) == ["ok", "ok"]
    assert _answers("mutant:ttl_as_i32", month) == ["ok", "not_found"]


# -- event validation: a mutant lets its own value through and checks the rest ----------------


def _event(event: spec.Event) -> Script:
    """``event`` sent by the worker holding the task's live claim."""
    def script(store: Any, clock: _Clock, call: Call) -> None:
        _create(store, clock, call, "a")
        claimed = call("claim", "a", "w", 100)
        call("transition", "a", 0, event, spec.WorkerAuthority(claimed.lease))
    return script


ASK = {"key": "k", "request": {"method": "elicitation/create"}}

EVENTS = [
    # (mutant, what its bug takes, what it takes it as, events that carry more than that)
    ("empty_event_id_applied", lambda e: attrs.evolve(e, id="-"),
     spec.Event("", "completed", {"result": {}}),
     [spec.Event("", "completed", {"result": "not a mapping"}),
      spec.Event("", "completed", {"result": {}, "extra": 1})]),
    ("empty_input_key_opened", lambda e: attrs.evolve(e, data={**e.data, "key": "-"}),
     spec.Event("e", "input_requested", {**ASK, "key": ""}),
     [spec.Event("", "input_requested", {**ASK, "key": ""}),
      spec.Event("e", "input_requested", {"key": "", "request": {"no": "method"}}),
      spec.Event("e", "input_requested", {**ASK, "key": "", "extra": 1})]),
    ("error_of_any_value_stored", lambda e: attrs.evolve(e, data={**e.data, "error": {}}),
     spec.Event("e", "failed", {"error": "not a mapping", "statusMessage": None}),
     [spec.Event("e", "failed", {"error": "not a mapping", "statusMessage": 5}),
      spec.Event("e", "retry_requested", {"error": 7, "statusMessage": ["no"]})]),
]


@pytest.mark.parametrize(("name", "taken_as", "bug", "more"), EVENTS)
def test_an_event_mutant_checks_the_rest_of_the_event_as_the_correct_store(
        name: str, taken_as: Callable[[spec.Event], spec.Event], bug: spec.Event,
        more: list[spec.Event]) -> None:
    """empty_event_id_applied skipped every check of an event whose id was empty (a result
    that is no mapping was stored, data of another shape applied), empty_input_key_opened
    every check of an input_requested with the empty key (the event id, the request's
    method, the data's shape), error_of_any_value_stored the status message beside a bad
    error. Each answers an event carrying its bug's value as the correct store answers the
    same event with a value it takes."""
    for event in more:
        assert _answers(f"mutant:{name}", _event(event)) == _answers("memory",
                                                                   _event(taken_as(event)))
    assert _answers("memory", _event(bug))[-1] != "ok"
    assert _answers(f"mutant:{name}", _event(bug))[-1] == "ok"


def test_empty_input_key_opened_answers_data_that_is_no_mapping() -> None:
    """It read event.data.get('key') before the data's shape was checked: data that is no
    mapping raised AttributeError out of transition instead of invalid_event_data."""
    event = _event(spec.Event("e", "input_requested", [("key", "")]))  # type: ignore[arg-type]
    _alike("empty_input_key_opened", event)


# -- create_overwrites: a refused create leaves the task it would have replaced ---------------


def _refused_creates_over(store: Any, clock: _Clock, call: Call) -> None:
    """Creates of an existing id refused before the bug (another access, no Work) or by a
    later check (an invalid work), each followed by a read of the task."""
    _create(store, clock, call, "a")
    refused = [(_work(), _access(store, "get", "a")), (None, _access(store, "create", "a")),
               (_work(retry_policy=(-1,)), _access(store, "create", "a"))]
    for work, access in refused:
        call("create", _task("a", clock.now), work, access)
        call("get", "a", _access(store, "get", "a"))


def test_a_refused_create_leaves_the_task_create_overwrites_would_replace() -> None:
    """create_overwrites deleted the stored task in a transaction of its own before create's
    checks: a create refused for its access (unauthorized_action), its work (function_clause)
    or its task (invalid_task) destroyed the task it never replaced (the kit's machine: create
    with a get access -> unauthorized_action, then get -> not_found, under SNODO-AUTH-002,
    AUTH-004, CREATE-003, DURABLE-001). The refusal itself is the bug's (no already_exists);
    the task must stay."""
    mutant = _answers("mutant:create_overwrites", _refused_creates_over)
    assert mutant == ["ok", "unauthorized_action", "ok", "function_clause", "ok",
                      "invalid_task", "ok"]
    assert _answers("memory", _refused_creates_over)[-2] == "already_exists"

    def replace(store: Any, clock: _Clock, call: Call) -> None:
        _create(store, clock, call, "a")
        _create(store, clock, call, "a")
    assert _answers("memory", replace) == ["ok", "already_exists"]
    assert _answers("mutant:create_overwrites", replace) == ["ok", "ok"]


# -- claim_ignores_retry_at: claim's bug, not claim_next's -------------------------------------


def _pending_retry(store: Any, clock: _Clock, call: Call) -> None:
    """A task whose retry is pending, released: claim_next, then claim."""
    _create(store, clock, call, "d", retry_policy=(60_000,))
    claimed = call("claim", "d", "w1", 100)
    retry = spec.Event("r", "retry_requested", {"error": {}, "statusMessage": None})
    call("transition", "d", 0, retry, spec.WorkerAuthority(claimed.lease))
    call("release", claimed.lease)
    call("claim_next", "w2", 100)
    call("claim", "d", "w3", 100)


@pytest.mark.parametrize("base", ["memory", "sqlite"])
def test_claim_ignores_retry_at_is_claims_bug_alone(base: str) -> None:
    """The mutant made the shared predicate _retry_due always true, so on memory claim_next
    took the pending task too (SNODO-CLAIM-007 failed at seed 1: claim_next answered s12-d,
    retry_at 60 s ahead) while on SQLite its query's retry_at filter kept it waiting: a second
    bug on one base only. Now claim_next waits on both and claim takes the task."""
    mutant = f"mutant:claim_ignores_retry_at@{base}"
    assert _answers(base, _pending_retry)[-1] == "deferred(60001)"
    assert _answers(mutant, _pending_retry) == _answers(base, _pending_retry)[:-1] + ["ok"]


# -- the capacity mutants: which tasks a limit counts ------------------------------------------


def _cancel(store: Any, call: Call, task_id: str) -> None:
    call("transition", task_id, 0, spec.Event(f"stop-{task_id}", "cancelled", {}),
         spec.RequestAuthority(_access(store, "cancel", task_id)))


def _other_scope_active(store: Any, clock: _Clock, call: Call) -> None:
    """max_tasks=2: a task in acme, one in umbrella, a third in acme (all active)."""
    for task_id, tenant in (("a", "acme"), ("b", "umbrella"), ("c", "acme")):
        _create(store, clock, call, task_id, tenant=tenant)


def _terminal_counted(store: Any, clock: _Clock, call: Call) -> None:
    """Two tasks, one of them cancelled, then a third."""
    _create(store, clock, call, "a")
    _create(store, clock, call, "b")
    _cancel(store, call, "a")
    _create(store, clock, call, "c")


def _both_limits(store: Any, clock: _Clock, call: Call) -> None:
    _create(store, clock, call, "a")
    _create(store, clock, call, "b")


def test_max_tasks_counts_active_only_counts_every_scopes_active_tasks() -> None:
    """The mutant counted the creating scope's active tasks alone (count_active(scope)): a
    create in acme went through with max_tasks=2 tasks stored, one of them in umbrella (the
    kit's race creates_at_capacity saw 2 of 8 creates succeed, SNODO-CAP-003). Forgetting
    terminal tasks is its bug."""
    name = "mutant:max_tasks_counts_active_only"
    _alike(name.split(":")[1], _other_scope_active, max_tasks="2")
    assert _answers("memory", _terminal_counted, max_tasks="2")[-1] == \
        "capacity_exceeded('max_tasks')"
    assert _answers(name, _terminal_counted, max_tasks="2")[-1] == "ok"


def test_scope_limit_counts_every_scope_counts_active_tasks_after_max_tasks() -> None:
    """The mutant compared the per-scope limit with every task stored, terminal ones too (a
    cancelled task blocked the scope's next create), and before max_tasks (a create over both
    limits answered capacity_exceeded('max_active_tasks_per_scope'), the correct store
    'max_tasks'). Counting other scopes' tasks is its bug."""
    name = "scope_limit_counts_every_scope"
    _alike(name, _terminal_counted, max_active_tasks_per_scope="2")
    _alike(name, _both_limits, max_active_tasks_per_scope="1", max_tasks="1")
    options = {"max_active_tasks_per_scope": "2"}
    assert _answers("memory", _other_scope_active, **options)[-1] == "ok"
    assert _answers(f"mutant:{name}", _other_scope_active, **options)[-1] == \
        "capacity_exceeded('max_active_tasks_per_scope')"


# -- applied_event_keeps_revision: a replay answers what the event answered --------------------


def test_applied_event_keeps_revision_replays_the_revision_it_answered() -> None:
    """The mutant answered an applied input_requested with event_revision 0 (its bug: the
    revision stays) but left revision 1 in its ledger, so the event's replay answered
    event_revision 1, a revision the task never had, where a replay answers the original
    result (SNODO-TX-003, the bug of duplicate_applied_twice and replay_reads_task_row)."""
    seen: dict[str, list[int]] = {}

    def ask_twice(store: Any, clock: _Clock, call: Call) -> None:
        _create(store, clock, call, "a")
        worker = spec.WorkerAuthority(call("claim", "a", "w", 100).lease)
        ask = spec.Event("ask", "input_requested", ASK)
        first = call("transition", "a", 0, ask, worker)
        replay = call("transition", "a", first.snapshot.revision, ask, worker)
        seen[store.__class__.__name__] = [first.event_revision, replay.event_revision,
                                          replay.snapshot.revision]
    _answers("memory", ask_twice)
    _answers("mutant:applied_event_keeps_revision", ask_twice)
    assert sorted(seen.values()) == [[0, 0, 0], [1, 1, 1]]


# -- a mutant follows the options its bug is not about -----------------------------------------


def _claim_after_reopen(adapter: str, wait_ms: int, **options: str) -> str:
    """A claim of 1 s, the store reopened (a new boot), ``wait_ms`` later another claim."""
    factory, _ = resolve_adapter("snodo-tasks", adapter)
    clock = _Clock()
    env = AdapterEnv(clock=clock, namespace=f"one{uuid.uuid4().hex[:10]}", options=options)
    first = factory(env)
    first.create(_task("a", clock.now), _work(), _access(first, "create", "a"))
    first.claim("a", "w1", 1_000)
    first.close()
    again = factory(env)
    clock.now += wait_ms
    try:
        again.claim("a", "w2", 1_000)
        return "ok"
    except ContractError as e:
        return e.code
    finally:
        again.close()
        factory.discard(env)


def test_claim_live_at_expiry_follows_reopen_claims() -> None:
    """ClaimLiveAtExpiry rewrote _claim_live without its reopen_claims=released clause: under
    that option a claim of an earlier boot still blocked its task after a reopen. Its bug is
    the expiry's own ms alone."""
    mutant = "mutant:claim_live_at_expiry"
    assert _claim_after_reopen(mutant, 0, reopen_claims="released") == "ok"
    assert _claim_after_reopen("memory", 0, reopen_claims="released") == "ok"
    assert _claim_after_reopen("memory", 1_000) == "ok"
    assert _claim_after_reopen(mutant, 1_000) == "unavailable"


def _reaped(adapter: str, at: int, **options: str) -> list[str]:
    """What reap answers at ``at`` ms with b's TTL ending at 1_100 and a's at 1_200."""
    factory, _ = resolve_adapter("snodo-tasks", adapter)
    clock = _Clock()
    env = AdapterEnv(clock=clock, namespace=f"one{uuid.uuid4().hex[:10]}", options=options)
    store = factory(env)
    try:
        for task_id, ttl_ms in (("b", 100), ("a", 200)):
            store.create(_task(task_id, clock.now, ttl_ms), _work(),
                         _access(store, "create", task_id))
        clock.now = at
        return list(store.reap())
    finally:
        store.close()
        factory.discard(env)


def test_reaps_one_ms_early_follows_reap_order() -> None:
    """ReapsOneMsEarly sorted what it reaped whatever reap_order said: under
    reap_order=expiry it answered ['a', 'b'] where the correct store answers ['b', 'a']. Its
    bug is the ms."""
    mutant = "mutant:reaps_one_ms_early"
    assert _reaped(mutant, 1_300, reap_order="expiry") == _reaped(
        "memory", 1_300, reap_order="expiry") == ["b", "a"]
    assert (_reaped("memory", 1_099), _reaped(mutant, 1_099)) == ([], ["b"])
