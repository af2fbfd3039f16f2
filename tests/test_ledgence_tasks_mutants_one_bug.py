"""Each ledgence-tasks mutant differs from the correct store in its stated bug alone.

A mutant is the correct store with one known bug (:class:`fencepost.adapters.mutants.base.
Mutant`): every call its bug does not touch must answer as the correct store answers. Each case
runs short scripts on a fresh correct store (``memory``) and on a fresh mutant: the scripts
``alike`` must answer the same on both (they once showed a second difference), and the script
``bug`` must still answer otherwise (the mutant keeps its bug).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from conftest import Clock

from fencepost.adapter_spec import resolve_adapter
from fencepost.env import AdapterEnv
from fencepost.scenarios.ledgence_tasks import pagination as cursors
from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import ContractError

SCOPE = spec.Scope("tenant-a", "prod")
OTHER = spec.Scope("tenant-b", "prod")
PROGRAM = spec.Program("mailer", "1.2.0")
DIGEST = "sha256:" + "ab" * 32
ROUTED = spec.ROUTED_QUEUE

Script = Callable[[Any, Clock], list[Any]]


def _answers(adapter: str, script: Script) -> list[Any]:
    """What ``script`` reads off a fresh store of ``adapter`` whose clock starts at 1 000 (or
    at the script's ``start``)."""
    factory, _ = resolve_adapter("ledgence-tasks", adapter)
    clock = Clock(getattr(script, "start", 1_000))
    env = AdapterEnv(clock=clock, namespace=f"m{uuid.uuid4().hex[:10]}")
    store = factory(env)
    try:
        return script(store, clock)
    finally:
        store.close()
        getattr(factory, "discard", lambda _env: None)(env)


def _try(call: Callable[[], Any]) -> str:
    """ "ok", or the code of the contract error the call raised."""
    try:
        call()
        return "ok"
    except ContractError as e:
        return e.code


def submit_command(key: str = "key-1", **changes: Any) -> spec.SubmitCommand:
    task = spec.TaskInput(SCOPE, "emails", PROGRAM, "order-7", {"n": 1}, spec.RetryPolicy(3, 5000),
                          300_000)
    return spec.SubmitCommand(key, attrs.evolve(task, **changes))


def descriptor(**changes: Any) -> spec.ProgramDescriptor:
    return attrs.evolve(spec.ProgramDescriptor(PROGRAM, DIGEST, 2048), **changes)


def submit(store: Any, key: str = "key-1", **changes: Any) -> spec.TaskSnapshot:
    snapshot: spec.TaskSnapshot = store.accept_resolved_submission(
        submit_command(key, **changes), descriptor())
    return snapshot


def acquisition(session: str, sequence: int, queue: str = "emails",
                scope: spec.Scope = SCOPE) -> spec.AcquireCommand:
    return spec.AcquireCommand(scope, queue, session, 0, sequence)


def claim(session: str, task_id: str, sequence: int = 1,
          scope: spec.Scope = SCOPE) -> spec.ClaimCommand:
    return spec.ClaimCommand(acquisition(session, sequence, ROUTED, scope),
                             spec.DispatchRef(scope, ROUTED, task_id, 1))


def success(assignment: spec.Assignment, owner: spec.LeaseOwner | None = None
            ) -> spec.SettleCommand:
    event = assignment.event
    context = spec.ExecutionContext(event.task_id, event.attempt_id, PROGRAM, DIGEST)
    report = spec.ExecutionReport(context, "proc-1", False,
                                  {"status": "success", "output": {"sent": 1}}, 20)
    return spec.SettleCommand(owner or assignment.lease.owner, "op-1", report, spec.CONFIRMED)


def claimed(store: Any, queue: str = "emails") -> tuple[spec.WorkerSession, spec.Assignment]:
    """A session of one consumer and the assignment of a task it acquired at sequence 1."""
    session = store.open_session(SCOPE, queue, 1)
    submit(store)
    reply = store.acquire(acquisition(session.id, 1, queue))
    assert isinstance(reply, spec.AcquireAssigned)
    return session, reply.assignment


# -- the scripts -------------------------------------------------------------------------------


def result_of_a_succeeded_task(store: Any, clock: Clock) -> list[Any]:
    _, assignment = claimed(store)
    store.settle(success(assignment))
    outcome = store.result(SCOPE, assignment.event.task_id).outcome
    return [outcome["kind"] if outcome is not None else None]


def result_of_a_cancelled_task(store: Any, clock: Clock) -> list[Any]:
    task = submit(store)
    store.cancel(SCOPE, task.task_id)
    return [store.result(SCOPE, task.task_id).outcome]


def cancel_of_malformed_references(store: Any, clock: Clock) -> list[Any]:
    return [_try(lambda: store.cancel(spec.Scope("", "prod"), "task_x")),
            _try(lambda: store.cancel(SCOPE, "")),
            _try(lambda: store.cancel(SCOPE, "x" * 300))]


def cancel_twice(store: Any, clock: Clock) -> list[Any]:
    task = submit(store)
    store.cancel(SCOPE, task.task_id)
    clock.now += 5
    store.cancel(SCOPE, task.task_id)
    return [store.status(SCOPE, task.task_id).terminal_at]


def acquire_at_a_claimed_sequence(store: Any, clock: Clock) -> list[Any]:
    session = store.open_session(SCOPE, ROUTED, 1)
    task = submit(store, queue=ROUTED)
    store.claim_dispatch(claim(session.id, task.task_id))
    return [_try(lambda: store.acquire(acquisition(session.id, 1, ROUTED)))]


def replay_on_an_expired_session(store: Any, clock: Clock) -> list[Any]:
    session, _ = claimed(store)
    clock.now = session.expires_at
    return [_try(lambda: store.acquire(acquisition(session.id, 1)))]


def claims_of_routed_and_unrouted_tasks(store: Any, clock: Clock) -> list[Any]:
    session = store.open_session(SCOPE, ROUTED, 1)
    routed = submit(store, "routed", queue=ROUTED)
    unrouted = submit(store, "unrouted")
    elsewhere = store.open_session(SCOPE, "emails", 1)
    return [_try(lambda: store.claim_dispatch(claim(session.id, routed.task_id))),
            _try(lambda: store.claim_dispatch(spec.ClaimCommand(
                acquisition(elsewhere.id, 1), spec.DispatchRef(SCOPE, "emails",
                                                               unrouted.task_id, 1)))),
            _try(lambda: store.claim_dispatch(claim(session.id, unrouted.task_id, 2)))]


def acquire_of_the_routed_queue(store: Any, clock: Clock) -> list[Any]:
    session = store.open_session(SCOPE, ROUTED, 1)
    submit(store, queue=ROUTED)
    return [_try(lambda: store.acquire(acquisition(session.id, 1, ROUTED)))]


def writes_from_another_scope(store: Any, clock: Clock) -> list[Any]:
    """Cancel, claim, settle, renew and confirm of another scope's task."""
    session, assignment = claimed(store)
    owner = attrs.evolve(assignment.lease.owner, scope=OTHER)
    queued = submit(store, "queued")
    routed = submit(store, "routed", queue=ROUTED)
    foreign = store.open_session(OTHER, ROUTED, 1)
    return [_try(lambda: store.cancel(OTHER, queued.task_id)),
            _try(lambda: store.claim_dispatch(claim(foreign.id, routed.task_id, scope=OTHER))),
            _try(lambda: store.settle(success(assignment, owner))),
            _try(lambda: store.renew(spec.RenewCommand(owner, 1, spec.KEEP_ALIVE))),
            _try(lambda: store.confirm_quiescence(owner)),
            store.status(SCOPE, queued.task_id).state]


def reads_from_another_scope(store: Any, clock: Clock) -> list[Any]:
    task = submit(store)
    return [_try(lambda: store.status(OTHER, task.task_id)),
            _try(lambda: store.history(OTHER, task.task_id, 0))]


def session_used_at_its_expiry(store: Any, clock: Clock) -> list[Any]:
    """Acquire, renew and a claim at exactly the session's expires_at."""
    session, assignment = claimed(store)
    routed = store.open_session(SCOPE, ROUTED, 1)
    task = submit(store, "routed", queue=ROUTED)
    clock.now = session.expires_at
    return [_try(lambda: store.acquire(acquisition(session.id, 2))),
            _try(lambda: store.renew(spec.RenewCommand(assignment.lease.owner, 1,
                                                       spec.KEEP_ALIVE))),
            _try(lambda: store.claim_dispatch(claim(routed.id, task.task_id)))]


def extend_at_expiry(store: Any, clock: Clock) -> list[Any]:
    session = store.open_session(SCOPE, "emails", 1)
    clock.now = session.expires_at
    return [_try(lambda: store.extend_session(session.id))]


def open_session_with(*concurrencies: Any) -> Script:
    def script(store: Any, clock: Clock) -> list[Any]:
        return [_try(lambda c=c: store.open_session(SCOPE, "emails", c)) for c in concurrencies]
    script.__name__ = f"open_session_with{concurrencies!r}"
    return script


def submissions_with(*changes: dict[str, Any]) -> Script:
    """Submissions whose input (or, under "descriptor", the descriptor) has these changes."""
    def script(store: Any, clock: Clock) -> list[Any]:
        answers = []
        for i, change in enumerate(changes):
            change = dict(change)
            program = descriptor(**change.pop("descriptor", {}))
            command = submit_command(f"key-{i}", **change)
            answers.append(_try(lambda command=command, program=program:
                                store.accept_resolved_submission(command, program)))
        return answers
    script.__name__ = f"submissions_with{changes!r}"
    return script


def pages_with(*filters: spec.TaskFilters) -> Script:
    """A page of each filter, over one task submitted at 1 000."""
    def script(store: Any, clock: Clock) -> list[Any]:
        submit(store)
        answers = []
        for f in filters:
            try:
                answers.append(len(store.list_tasks(SCOPE, spec.TaskListQuery(f)).items))
            except ContractError as e:
                answers.append(e.code)
        return answers
    script.__name__ = f"pages_with{filters!r}"
    return script


def policy(max_attempts: Any = 3, retry_delay_ms: Any = 5000) -> dict[str, Any]:
    return {"retry_policy": spec.RetryPolicy(max_attempts, retry_delay_ms)}


def calls(*made: Callable[[Any], Any]) -> Script:
    """Each call on a fresh store: "ok" or its contract error's code."""
    def script(store: Any, clock: Clock) -> list[Any]:
        return [_try(lambda call=call: call(store)) for call in made]
    return script


def inspect_attempts(*attempt_ids: str) -> Script:
    def script(store: Any, clock: Clock) -> list[Any]:
        task = submit(store)
        return [_try(lambda a=a: store.inspect_attempt(SCOPE, task.task_id, a))
                for a in attempt_ids]
    script.__name__ = f"inspect_attempts{attempt_ids!r}"
    return script


def settles_by_owners(**changes: Any) -> Script:
    """settle with the owner changed by each change (a dict of the owner's fields)."""
    def script(store: Any, clock: Clock) -> list[Any]:
        _, assignment = claimed(store)
        owner = assignment.lease.owner
        return [_try(lambda c=c: store.settle(success(assignment, attrs.evolve(owner, **c))))
                for c in changes.values()]
    script.__name__ = f"settles_by_owners{changes!r}"
    return script


def renewals_with(*intents: Any) -> Script:
    def script(store: Any, clock: Clock) -> list[Any]:
        _, assignment = claimed(store)
        owner = assignment.lease.owner
        return [_try(lambda i=i: store.renew(spec.RenewCommand(owner, 1, i))) for i in intents]
    script.__name__ = f"renewals_with{intents!r}"
    return script


def nested(depth: int, leaf: Any) -> Any:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def probes_finishing_empty(*flags: Any) -> Script:
    def script(store: Any, clock: Clock) -> list[Any]:
        session = store.open_session(SCOPE, "emails", 1)
        return [type(store.probe_acquisition(acquisition(session.id, 1), f, 10**9)).__name__
                if f is True else
                _try(lambda f=f: store.probe_acquisition(acquisition(session.id, 1), f, 10**9))
                for f in flags]
    script.__name__ = f"probes_finishing_empty{flags!r}"
    return script


def probes_of(deadline: int, **changes: Any) -> Script:
    """probe_acquisition at ``deadline`` (1 000 is now: passed) with the command's or
    finish_empty's value changed by each change (a dict), on a session of one."""
    def script(store: Any, clock: Clock) -> list[Any]:
        session = store.open_session(SCOPE, "emails", 1)
        answers = []
        for given in changes.values():
            change = dict(given)
            flag = change.pop("finish_empty", True)
            command = attrs.evolve(acquisition(session.id, 1), **change)
            answers.append(_try(lambda c=command, f=flag: store.probe_acquisition(c, f,
                                                                                  deadline)))
        return answers
    script.__name__ = f"probes_of({deadline}, {changes!r})"
    return script


UNTYPED_PROBES: dict[str, dict[str, Any]] = {
    "consumer -1": {"consumer_id": -1}, "consumer 2^32": {"consumer_id": 2**32},
    "sequence -1": {"sequence": -1}, "sequence 2^64": {"sequence": 2**64},
    "no session id": {"worker_session_id": None}, "finish_empty 1": {"finish_empty": 1},
}
"""Probe values the seed's types cannot hold."""


def replayed_lease_near_the_session_expiry(ms_left: int) -> Script:
    """The lease a replay answers, less the session's expiry: claimed 50 s before the session
    expires (its lease capped by that expiry), replayed ``ms_left`` ms before it."""
    def script(store: Any, clock: Clock) -> list[Any]:
        session = store.open_session(SCOPE, "emails", 1)
        submit(store, attempt_timeout_ms=3_600_000)
        clock.now = session.expires_at - 50_000
        store.acquire(acquisition(session.id, 1))
        clock.now = session.expires_at - ms_left
        reply = store.acquire(acquisition(session.id, 1))
        return [reply.assignment.lease.expires_at - session.expires_at]
    script.__name__ = f"replayed_lease_near_the_session_expiry({ms_left})"
    return script


def replayed_lease_after(ms: int) -> Script:
    """The lease a replay answers ``ms`` after the claim, less the claim's."""
    def script(store: Any, clock: Clock) -> list[Any]:
        session = store.open_session(SCOPE, "emails", 1)
        submit(store)
        first = store.acquire(acquisition(session.id, 1)).assignment.lease.expires_at
        clock.now += ms
        return [store.acquire(acquisition(session.id, 1)).assignment.lease.expires_at - first]
    script.__name__ = f"replayed_lease_after({ms})"
    return script


def histories_after(*afters: int) -> Script:
    """The sequences of a cancelled task's history (three events) after each of ``afters``
    (or the code of the refusal)."""
    def script(store: Any, clock: Clock) -> list[Any]:
        task = submit(store).task_id
        store.cancel(SCOPE, task)
        pages = []
        for after in afters:
            try:
                pages.append([r.sequence for r in store.history(SCOPE, task, after)])
            except ContractError as e:
                pages.append(e.code)
        return pages
    script.__name__ = f"histories_after{afters}"
    return script


def acquires_after_the_first_at(*sequences: int) -> Script:
    """Acquires at each of ``sequences`` after the first (the cursor at 1, its task live)."""
    def script(store: Any, clock: Clock) -> list[Any]:
        session, _ = claimed(store)
        return [_try(lambda q=q: store.acquire(acquisition(session.id, q))) for q in sequences]
    script.__name__ = f"acquires_after_the_first_at{sequences}"
    return script


def claims_after_the_first_at(*sequences: int) -> Script:
    """Claims of a routed task at each of ``sequences`` after its claim at 1."""
    def script(store: Any, clock: Clock) -> list[Any]:
        session = store.open_session(SCOPE, ROUTED, 1)
        task = submit(store, queue=ROUTED).task_id
        store.claim_dispatch(claim(session.id, task))
        return [_try(lambda q=q: store.claim_dispatch(claim(session.id, task, q)))
                for q in sequences]
    script.__name__ = f"claims_after_the_first_at{sequences}"
    return script


def renewals_after_the_first_at(*sequences: int) -> Script:
    """Renewals at each of ``sequences`` after the renewal at 1."""
    def script(store: Any, clock: Clock) -> list[Any]:
        _, assignment = claimed(store)
        owner = assignment.lease.owner
        store.renew(spec.RenewCommand(owner, 1, spec.KEEP_ALIVE))
        return [_try(lambda q=q: store.renew(spec.RenewCommand(owner, q, spec.KEEP_ALIVE)))
                for q in sequences]
    script.__name__ = f"renewals_after_the_first_at{sequences}"
    return script


def elapsed_read_back(elapsed_ms: int) -> Script:
    """The elapsed_ms inspect_attempt reads back of a success reported with ``elapsed_ms`` (or
    the code of the settlement's refusal)."""
    def script(store: Any, clock: Clock) -> list[Any]:
        _, assignment = claimed(store)
        command = success(assignment)
        settled = _try(lambda: store.settle(attrs.evolve(
            command, report=attrs.evolve(command.report, elapsed_ms=elapsed_ms))))
        if settled != "ok":
            return [settled]
        snapshot = store.inspect_attempt(SCOPE, assignment.event.task_id,
                                         assignment.event.attempt_id)
        return [snapshot.settlement.report.elapsed_ms]
    script.__name__ = f"elapsed_read_back({elapsed_ms})"
    return script


def _sized(size: int, wide: bool) -> str:
    """``size`` UTF-8 bytes of "k", or of two-byte "\u00e9" (and a "k" for an odd size)."""
    return "\u00e9" * (size // 2) + "k" * (size % 2) if wide else "k" * size


def keys_of(*sizes: tuple[int, bool]) -> Script:
    """A submission under a key of each (size in bytes, wide) and its lookup."""
    def script(store: Any, clock: Clock) -> list[Any]:
        return [(_try(lambda k=k: submit(store, k)),
                 _try(lambda k=k: store.lookup_submission(SCOPE, k)))
                for k in (_sized(size, wide) for size, wide in sizes)]
    script.__name__ = f"keys_of{sizes}"
    return script


def submissions_naming(*sizes: tuple[int, bool]) -> Script:
    """Submissions with a queue, a tenant, a program id of each (size in bytes, wide)."""
    def script(store: Any, clock: Clock) -> list[Any]:
        answers = []
        for n, (size, wide) in enumerate(sizes):
            text = _sized(size, wide)
            program = spec.Program(text, "1.2.0")
            answers += [
                _try(lambda n=n, text=text: submit(store, f"q{n}", queue=text)),
                _try(lambda n=n, text=text: submit(store, f"t{n}",
                                                   scope=spec.Scope(text, "prod"))),
                _try(lambda n=n, program=program: store.accept_resolved_submission(
                    submit_command(f"p{n}", program=program), descriptor(program=program)))]
        return answers
    script.__name__ = f"submissions_naming{sizes}"
    return script


def owners_past_u32(call: str) -> Script:
    """``call`` (settle, confirm or renew) by the owner with its generation, then its consumer
    id, at 2^32."""
    def script(store: Any, clock: Clock) -> list[Any]:
        _, assignment = claimed(store)
        made = {"settle": lambda who: store.settle(success(assignment, who)),
                "confirm": store.confirm_quiescence,
                "renew": lambda who: store.renew(spec.RenewCommand(who, 1, spec.KEEP_ALIVE))}
        owner = assignment.lease.owner
        return [_try(lambda c=c: made[call](attrs.evolve(owner, **c)))
                for c in ({"generation": 2**32}, {"consumer_id": 2**32})]
    script.__name__ = f"owners_past_u32({call!r})"
    return script


def sessions_on_queues(*sizes: tuple[int, bool]) -> Script:
    """open_session on a queue of each (size in bytes, wide)."""
    def script(store: Any, clock: Clock) -> list[Any]:
        queues = [_sized(size, wide) for size, wide in sizes]
        return [_try(lambda q=q: store.open_session(SCOPE, q, 1)) for q in queues]
    script.__name__ = f"sessions_on_queues{sizes}"
    return script


def correlation_keys_of(*sizes: tuple[int, bool]) -> Script:
    """Submissions with a correlation key of each (size in bytes, wide)."""
    return submissions_with(*({"correlation_key": _sized(size, wide)} for size, wide in sizes))


def filtered_by(*texts: tuple[str, int, bool]) -> Script:
    """A page filtered by each (filter, size in bytes, wide): a queue or correlation key."""
    return pages_with(*(spec.TaskFilters(**{what: _sized(size, wide)})
                        for what, size, wide in texts))


def acquires_on_queues(*queues: str) -> Script:
    """An acquire at sequence 1 on each queue, by its own consumer of a session on "emails"
    of as many consumers."""
    def script(store: Any, clock: Clock) -> list[Any]:
        session = store.open_session(SCOPE, "emails", len(queues))
        return [_try(lambda c=c, q=q: store.acquire(spec.AcquireCommand(SCOPE, q, session.id, c,
                                                                        1)))
                for c, q in enumerate(queues)]
    script.__name__ = f"acquires_on_queues{queues}"
    return script


def claims_of_generations(*generations: int, times: int = 1) -> Script:
    """A routed task failed twice (two attempts, queued again, its retry due), then a claim of
    each generation, each by a session of its own (and sent ``times`` times): each
    disposition's kind, or the error's code."""
    def script(store: Any, clock: Clock) -> list[Any]:
        session = store.open_session(SCOPE, ROUTED, 1)
        task = submit(store, queue=ROUTED)
        for sequence in (1, 2):
            reply = store.claim_dispatch(attrs.evolve(
                claim(session.id, task.task_id, sequence), dispatch=spec.DispatchRef(
                    SCOPE, ROUTED, task.task_id, sequence)))
            assignment = reply.disposition.reply.assignment
            event = assignment.event
            context = spec.ExecutionContext(event.task_id, event.attempt_id, PROGRAM, DIGEST)
            store.settle(spec.SettleCommand(assignment.lease.owner, f"op-{sequence}",
                                            spec.ExecutionFailure(context, "io", "io failed",
                                                                  "execution", True),
                                            spec.CONFIRMED))
            clock.now += 5_000
        answers: list[Any] = []
        for generation in generations:  # each by a consumer of its own: none is busy
            claimant = store.open_session(SCOPE, ROUTED, 1)
            command = attrs.evolve(claim(claimant.id, task.task_id), dispatch=spec.DispatchRef(
                SCOPE, ROUTED, task.task_id, generation))
            for _ in range(times):
                try:
                    answers.append(type(store.claim_dispatch(command).disposition).__name__)
                except ContractError as e:
                    answers.append(e.code)
        return answers
    script.__name__ = f"claims_of_generations{generations}{' x' + str(times) if times > 1 else ''}"
    return script


def acquires_by_consumers(*consumers: int) -> Script:
    """An acquire at sequence 1 by each consumer of a session of one, a task queued."""
    def script(store: Any, clock: Clock) -> list[Any]:
        session = store.open_session(SCOPE, "emails", 1)
        submit(store)
        return [_try(lambda c=c: store.acquire(attrs.evolve(acquisition(session.id, 1),
                                                            consumer_id=c)))
                for c in consumers]
    script.__name__ = f"acquires_by_consumers{consumers}"
    return script



UNFILTERED = spec.TaskFilters()
"""A walk of every task."""

CURSOR_EDITS: dict[str, Callable[[Any], Any]] = {
    "issued": cursors.unchanged, "time -1": cursors.at_time(-1), "time 0": cursors.at_time(0),
    "version 2": cursors.with_key("version", 2), "a key more": cursors.with_key("after", None),
    "float time": cursors.time_as_float, "empty task id": cursors.with_task_id(""),
    "NUL task id": cursors.with_task_id("task\x00"), "third part": cursors.third_part,
    "no task id": cursors.no_task_id, "a filter key": cursors.with_filter("priority", None),
    "scope of three": cursors.scope_of_three,
    "float bound": cursors.with_filter("submitted_from", 1000.0),
    "no version": cursors.without_key("version"),
    "time 2000": cursors.at_time(2000),
    "time past the last": cursors.at_time(spec.MAX_TIMESTAMP_MS + 1),
}


def pages_after_cursors(*edits: str, upper: bool = False, spaced: bool = False,
                        twice: bool = False, filters: spec.TaskFilters = UNFILTERED) -> Script:
    """Three tasks submitted in one ms, a first page of one, and a page after its cursor as
    changed by each of :data:`CURSOR_EDITS` (written back as canonical JSON, in uppercase
    hex when ``upper``, a space after its first two digits when ``spaced``, its version
    written twice when ``twice``): how many tasks it lists, or the error's code."""
    def script(store: Any, clock: Clock) -> list[Any]:
        for k in range(3):
            submit(store, f"key-{k}")
        issued = store.list_tasks(SCOPE, spec.TaskListQuery(filters, 1)).next_cursor
        answers: list[Any] = []
        for edit in edits:
            document = CURSOR_EDITS[edit](json.loads(bytes.fromhex(issued)))
            cursor = spec.canonical_json(document).encode("utf-8").hex()
            cursor = cursors.version_twice(cursor) if twice else cursor
            cursor = cursor.upper() if upper else cursor
            cursor = cursors.spaced_hex(cursor) if spaced else cursor
            answers.append(_try_page(store, spec.TaskListQuery(filters, 50, cursor)))
        return answers
    script.__name__ = (f"pages_after_cursors{edits!r}{' in uppercase' if upper else ''}"
                       f"{' spaced' if spaced else ''}{' twice' if twice else ''}")
    return script


def all_but(*edits: str, filters: spec.TaskFilters = UNFILTERED) -> Script:
    """:func:`pages_after_cursors` of every edit but ``edits``, in lowercase hex."""
    return pages_after_cursors(*(e for e in CURSOR_EDITS if e not in edits), filters=filters)


def walk_from(start: int) -> Script:
    """Three tasks submitted at ``start``, where the store's clock begins, a first page of one,
    and the page after the cursor it issued: how many tasks that lists, or the error's code."""
    def script(store: Any, clock: Clock) -> list[Any]:
        for k in range(3):
            submit(store, f"key-{k}")
        issued = store.list_tasks(SCOPE, spec.TaskListQuery(UNFILTERED, 1)).next_cursor
        return [_try_page(store, spec.TaskListQuery(UNFILTERED, 50, issued))]
    script.start = start  # type: ignore[attr-defined]
    script.__name__ = f"walk_from({start})"
    return script


FROM_1000 = spec.TaskFilters(submitted_from=1000)
"""A walk bounded from 1 000 (the scripts' tasks are submitted then)."""
UNTIL_1001 = spec.TaskFilters(submitted_until=1001)
"""A walk bounded above just after the scripts' tasks."""


def _try_page(store: Any, query: spec.TaskListQuery) -> Any:
    try:
        return len(store.list_tasks(SCOPE, query).items)
    except ContractError as e:
        return e.code


CASES: list[tuple[str, Script, list[Script]]] = [
    # a length in bytes past the limit written in fewer characters than the limit
    ("key_length_in_characters", keys_of((256, True)),
     [keys_of((255, False), (256, False), (255, True), (512, True)),
      submissions_naming((129, True))]),
    ("id_length_in_characters", submissions_naming((129, True)),
     [submissions_naming((128, False), (129, False), (128, True), (258, True)),
      keys_of((256, True))]),
    ("session_queue_length_in_characters", sessions_on_queues((129, True)),
     [sessions_on_queues((128, False), (129, False), (128, True), (258, True)),
      submissions_naming((129, True))]),
    ("correlation_key_length_in_characters", correlation_keys_of((513, True)),
     [correlation_keys_of((512, False), (513, False), (512, True), (1026, True)),
      submissions_naming((129, True))]),
    ("filter_lengths_in_characters",
     filtered_by(("queue", 129, True), ("correlation_key", 513, True)),
     [filtered_by(("queue", 128, False), ("queue", 129, False), ("queue", 128, True),
                  ("queue", 258, True), ("correlation_key", 512, False),
                  ("correlation_key", 513, False), ("correlation_key", 512, True),
                  ("correlation_key", 1026, True))]),
    ("filter_text_unchecked", pages_with(spec.TaskFilters(correlation_key="order\x07")),
     [pages_with(spec.TaskFilters(queue=""), spec.TaskFilters(queue="emails"),
                 spec.TaskFilters(correlation_key=""), spec.TaskFilters(correlation_key="k\ufffe"),
                 spec.TaskFilters(queue=5))]),
    # past the seed's type alone: 2^32 (a u32), 2^64 (a u64)
    ("concurrency_past_u32_accepted", open_session_with(2**32),
     [open_session_with(2**32 - 1, -1, 0, "2")]),
    ("consumer_as_u32", acquires_by_consumers(2**32),
     [acquires_by_consumers(2**32 - 1, 1, -1, 0)]),
    ("claim_sequence_past_u64_ordered", claims_after_the_first_at(2**64),
     [claims_after_the_first_at(0, 1, 2, 3, 2**64 - 1, -1)]),
    ("renew_sequence_past_u64_ordered", renewals_after_the_first_at(2**64),
     [renewals_after_the_first_at(0, 1, 2, 4, 2**64 - 1, -1)]),
    ("elapsed_past_u64_accepted", elapsed_read_back(2**64),
     [elapsed_read_back(2**64 - 1), elapsed_read_back(0)]),
    ("confirm_owner_past_u32_compared", owners_past_u32("confirm"),
     [owners_past_u32("settle"), owners_past_u32("renew")]),
    ("renew_owner_past_u32_compared", owners_past_u32("renew"),
     [owners_past_u32("settle"), owners_past_u32("confirm")]),
    # from 2^63 to 2^64 - 1 alone (a u64 past the i64s): below the cursor or the last renewal,
    # or kept negative
    ("sequence_as_i64", acquires_after_the_first_at(2**63, 2**64 - 1),
     [acquires_after_the_first_at(0, 1, 2, 3, 2**63 - 1, 2**64),
      claims_after_the_first_at(0, 1, 2, 3, 2**63 - 1, 2**64)]),
    ("renew_sequence_as_i64", renewals_after_the_first_at(2**63, 2**64 - 1),
     [renewals_after_the_first_at(0, 1, 2, 4, 2**63 - 1, 2**64)]),
    ("elapsed_as_i64", elapsed_read_back(2**64 - 1),
     [elapsed_read_back(2**63 - 1), elapsed_read_back(0)]),
    # from 2^63 to 2^64 - 1 alone (a u64 past the i64s): the first page
    ("after_sequence_as_i64", histories_after(2**63, 2**64 - 1),
     [histories_after(0, 1, 2**63 - 1, 2**64, 2**70)]),
    # a check of the page cursor left out: the cursor changed so, and that alone, is read
    ("cursor_hex_case_ignored", pages_after_cursors("issued", upper=True), [all_but()]),
    ("cursor_unknown_keys_ignored", pages_after_cursors("a key more"),
     [all_but("a key more"), pages_after_cursors("version 2", upper=True)]),
    ("cursor_version_unchecked", pages_after_cursors("version 2"), [all_but("version 2")]),
    ("cursor_time_of_any_number", pages_after_cursors("float time"), [all_but("float time")]),
    ("cursor_task_id_unchecked", pages_after_cursors("empty task id", "NUL task id"),
     [all_but("empty task id", "NUL task id")]),
    ("cursor_position_truncated", pages_after_cursors("third part"), [all_but("third part")]),
    ("cursor_at_zero_is_no_cursor", pages_after_cursors("time 0"), [all_but("time 0")]),
    ("cursor_filter_keys_ignored", pages_after_cursors("a filter key"),
     [all_but("a filter key")]),
    ("cursor_scope_truncated", pages_after_cursors("scope of three"),
     [all_but("scope of three")]),
    ("cursor_query_unchecked", pages_after_cursors("float bound", filters=FROM_1000),
     [all_but("float bound"), all_but("float bound", "time 0", filters=FROM_1000)]),
    ("cursor_version_defaulted", pages_after_cursors("no version"), [all_but("no version")]),
    # a cursor at the lower bound, issued by a page ending there: the walk goes on
    ("cursor_at_from_bound_refused", pages_after_cursors("issued", filters=FROM_1000),
     [pages_after_cursors("issued"), all_but("issued", filters=FROM_1000)]),
    ("only_last_generation_superseded", claims_of_generations(1),
     [claims_of_generations(2, 4, 3)]),
    ("cursor_below_until_refused", pages_after_cursors("issued", filters=UNTIL_1001),
     [pages_after_cursors("issued"), all_but("issued", "time 0", filters=UNTIL_1001)]),
    ("older_generation_handed_off", claims_of_generations(3, 1),
     [claims_of_generations(3, 3), claims_of_generations(2)]),
    # a handled claim sent again: no receipt, so a new command at a used sequence
    ("handled_claims_keep_no_receipt", claims_of_generations(1, times=2),
     [claims_of_generations(3, times=2), claims_of_generations(1, 2, 3)]),
    ("cursor_past_until_accepted", pages_after_cursors("time 2000", filters=UNTIL_1001),
     [pages_after_cursors("issued", filters=UNTIL_1001), all_but("time 2000")]),
    ("zero_below_cursor_obsolete", acquires_after_the_first_at(0),
     [acquires_after_the_first_at(1, 2, 3), acquires_by_consumers(0)]),
    ("session_queue_prefix_fits", acquires_on_queues("email", "e"),
     [acquires_on_queues("emails", "emailsx", "reports", "mails")]),
    ("keep_alive_after_dispatch_replays", renewals_with(spec.DISPATCH, spec.KEEP_ALIVE),
     [renewals_with(spec.KEEP_ALIVE, spec.DISPATCH), renewals_with(spec.DISPATCH, spec.DISPATCH)]),
    ("cursor_spaces_ignored", pages_after_cursors("issued", spaced=True),
     [all_but(), pages_after_cursors("issued", upper=True)]),
    ("cursor_duplicate_keys_read", pages_after_cursors("issued", twice=True),
     [all_but(), pages_after_cursors("issued", spaced=True)]),
    ("cursor_past_max_timestamp", pages_after_cursors("time past the last"),
     [all_but("time past the last")]),
    # the cursor a page issued at either end of the timestamps a position admits
    ("cursor_at_zero_refused", walk_from(0),
     [walk_from(spec.MAX_TIMESTAMP_MS), all_but("time 0")]),
    ("cursor_at_max_timestamp_refused", walk_from(spec.MAX_TIMESTAMP_MS),
     [walk_from(0), all_but()]),
    ("result_hides_cancellation", result_of_a_cancelled_task, [result_of_a_succeeded_task]),
    ("cancel_twice_restamps", cancel_twice, [cancel_of_malformed_references]),
    ("replay_before_session_check", replay_on_an_expired_session,
     [acquire_at_a_claimed_sequence]),
    ("routed_queue_scanned", acquire_of_the_routed_queue, [claims_of_routed_and_unrouted_tasks]),
    ("foreign_scope_reads", reads_from_another_scope, [writes_from_another_scope]),
    ("expired_session_revived", extend_at_expiry, [session_used_at_its_expiry]),
    ("zero_concurrency_accepted", open_session_with(0),
     [open_session_with(-1, 0.5, False, "x", None, 0.0)]),
    # an edge stand-in taken for a bool or a float equal to 0 (False == 0 == 0.0)
    ("zero_max_attempts_accepted", submissions_with(policy(0)),
     [submissions_with(policy(False), policy(0.0))]),
    ("zero_timeout_is_the_default", submissions_with({"attempt_timeout_ms": 0}),
     [submissions_with({"attempt_timeout_ms": False}, {"attempt_timeout_ms": 0.0})]),
    ("empty_archive_accepted", submissions_with({"descriptor": {"size": 0}}),
     [submissions_with({"descriptor": {"size": False}}, {"descriptor": {"size": 0.0}})]),
    ("zero_until_is_no_bound", pages_with(spec.TaskFilters(submitted_until=0)),
     [pages_with(spec.TaskFilters(submitted_until=False),
                 spec.TaskFilters(submitted_until=0.0))]),
    ("empty_time_range_accepted", pages_with(spec.TaskFilters(submitted_from=5,
                                                              submitted_until=5)),
     [pages_with(spec.TaskFilters(submitted_from=1, submitted_until=True),
                 spec.TaskFilters(submitted_from=0, submitted_until=False))]),
    # an edge stand-in that also stood in for another value the correct store refuses
    ("empty_key_looked_up", calls(lambda s: s.lookup_submission(SCOPE, "")),
     [calls(lambda s: s.lookup_submission(SCOPE, None),
            lambda s: s.lookup_submission(SCOPE, 0))]),
    ("empty_program_part_accepted", submissions_with({"program": spec.Program("", "1.2.0")}),
     [submissions_with({"program": spec.Program("", None)}),
      calls(lambda s: s.accept_resolved_submission(
          submit_command(program=spec.Program("", "1.2.0")), None))]),
    ("negative_owner_numbers_compared", settles_by_owners(generation={"generation": -1}),
     [settles_by_owners(consumer_none={"generation": -1, "consumer_id": None},
                        consumer_true={"generation": -1, "consumer_id": True})]),
    ("empty_attempt_id_not_found", inspect_attempts(""),
     [inspect_attempts("a" * 300, "a\x00")]),
    ("numeric_string_concurrency", open_session_with("2"), [open_session_with("\u00b2")]),
    ("data_depth_unchecked", submissions_with({"data": nested(65, 1)}),
     [submissions_with({"data": nested(65, 2**64)}, {"data": nested(65, float("nan"))},
                       {"data": nested(65, "x" * spec.MAX_DATA_BYTES)})]),
    ("program_mismatch_accepted",
     submissions_with({"descriptor": {"program": spec.Program("other", "9")}}),
     [calls(lambda s: s.accept_resolved_submission(spec.SubmitCommand("k", None),
                                                   descriptor()))]),
    ("unknown_intent_is_keep_alive", renewals_with("bogus"), [renewals_with(None, 1, b"dispatch")]),
    ("probe_drops_finish_empty", probes_finishing_empty(True),
     [probes_finishing_empty("yes", None, 1)]),
    ("deadline_before_types", probes_of(1_000, **UNTYPED_PROBES),
     [probes_of(10**9, **UNTYPED_PROBES), probes_of(1_000, empty_queue={"queue": ""},
                                                    well_formed={})]),
    ("replay_extends_lease", replayed_lease_after(10_000),
     [replayed_lease_near_the_session_expiry(40_000)]),
]


@pytest.mark.parametrize("base", ["memory", "sqlite"])
@pytest.mark.parametrize(("name", "bug", "alike"), CASES, ids=[c[0] for c in CASES])
def test_a_mutant_differs_from_the_correct_store_in_its_bug_alone(
        name: str, bug: Script, alike: list[Script], base: str) -> None:
    """The scripts ``alike`` answer on the mutant as on the correct store it is built on;
    ``bug`` does not."""
    mutant = f"mutant:{name}@{base}"
    for script in alike:
        assert _answers(mutant, script) == _answers(base, script), script.__name__
    assert _answers(mutant, bug) != _answers(base, bug)


AS_ITS_BUG_SAYS: list[tuple[str, Script, list[Any]]] = [
    # a number past the seed's type is taken as any other: ordered, compared, paged
    ("after_past_u64_accepted", histories_after(2**64, 2**70), [[], []]),
    ("sequence_past_u64_ordered", acquires_after_the_first_at(2**64), ["out_of_order"]),
    ("owner_numbers_past_u32_compared", owners_past_u32("settle"), ["ownership_lost"] * 2),
    ("confirm_owner_past_u32_compared", owners_past_u32("confirm"), ["ownership_lost"] * 2),
    ("renew_owner_past_u32_compared", owners_past_u32("renew"), ["ownership_lost"] * 2),
    ("claim_sequence_past_u64_ordered", claims_after_the_first_at(2**64), ["out_of_order"]),
    ("renew_sequence_past_u64_ordered", renewals_after_the_first_at(2**64), ["out_of_order"]),
    ("concurrency_past_u32_accepted", open_session_with(2**32), ["ok"]),
    ("elapsed_past_u64_accepted", elapsed_read_back(2**64), [2**64]),
    # a u32 kept by wrapping: consumer 2^32 is consumer 0
    ("consumer_as_u32", acquires_by_consumers(2**32, 0), ["ok", "ok"]),
    # accepted, and found, where the seed refuses both
    ("key_length_in_characters", keys_of((256, True)), [("ok", "ok")]),
    ("id_length_in_characters", submissions_naming((129, True)), ["ok"] * 3),
    ("session_queue_length_in_characters", sessions_on_queues((129, True)), ["ok"]),
    ("filter_lengths_in_characters",
     filtered_by(("queue", 129, True), ("correlation_key", 513, True)), [0, 0]),
    ("filter_text_unchecked", pages_with(spec.TaskFilters(queue="q" * 129),
                                         spec.TaskFilters(queue="emails\ufdd0"),
                                         spec.TaskFilters(correlation_key="k" * 513),
                                         spec.TaskFilters(correlation_key="order\x07")),
     [0, 0, 0, 0]),
    ("correlation_key_length_in_characters", correlation_keys_of((513, True)), ["ok"]),
    # a u64 past the i64s wraps below the cursor or the last renewal, or is kept negative
    ("sequence_as_i64", acquires_after_the_first_at(2**63, 2**64 - 1), ["obsolete_operation"] * 2),
    ("sequence_as_i64", claims_after_the_first_at(2**63, 2**64 - 1), ["obsolete_operation"] * 2),
    ("renew_sequence_as_i64", renewals_after_the_first_at(2**63, 2**64 - 1),
     ["obsolete_operation"] * 2),
    ("elapsed_as_i64", elapsed_read_back(2**64 - 1), [-1]),
    # a check of the page cursor left out: the walk goes on after the changed cursor
    ("cursor_hex_case_ignored", pages_after_cursors("issued", upper=True), [2]),
    ("cursor_unknown_keys_ignored", pages_after_cursors("a key more"), [2]),
    ("cursor_version_unchecked", pages_after_cursors("version 2"), [2]),
    ("cursor_time_of_any_number", pages_after_cursors("float time"), [2]),
    ("cursor_task_id_unchecked", pages_after_cursors("empty task id", "NUL task id"), [0, 0]),
    ("cursor_position_truncated", pages_after_cursors("third part"), [2]),
    ("cursor_at_zero_is_no_cursor", pages_after_cursors("time 0"), [3]),  # the first page
    ("cursor_filter_keys_ignored", pages_after_cursors("a filter key"), [2]),
    ("cursor_scope_truncated", pages_after_cursors("scope of three"), [2]),
    ("cursor_query_unchecked", pages_after_cursors("float bound", filters=FROM_1000), [2]),
    ("cursor_version_defaulted", pages_after_cursors("no version"), [2]),
    ("cursor_at_from_bound_refused", pages_after_cursors("issued", filters=FROM_1000),
     ["invalid_input"]),
    # a generation behind the last handed off taken for the next: claimed
    ("only_last_generation_superseded", claims_of_generations(1), ["ClaimClaimed"]),
    ("cursor_below_until_refused", pages_after_cursors("issued", filters=UNTIL_1001),
     ["invalid_input"]),
    ("cursor_past_until_accepted", pages_after_cursors("time 2000", filters=UNTIL_1001), [3]),
    ("zero_below_cursor_obsolete", acquires_after_the_first_at(0), ["obsolete_operation"]),
    ("session_queue_prefix_fits", acquires_on_queues("email", "e"), ["ok", "ok"]),
    ("keep_alive_after_dispatch_replays", renewals_with(spec.DISPATCH, spec.KEEP_ALIVE),
     ["ok", "ok"]),
    ("cursor_spaces_ignored", pages_after_cursors("issued", spaced=True), [2]),
    ("cursor_duplicate_keys_read", pages_after_cursors("issued", twice=True), [2]),
    ("cursor_past_max_timestamp", pages_after_cursors("time past the last"), [3]),
    ("cursor_at_zero_refused", walk_from(0), ["invalid_input"]),
    ("cursor_at_zero_refused", pages_after_cursors("time 0"), ["invalid_input"]),  # forged
    ("cursor_at_max_timestamp_refused", walk_from(spec.MAX_TIMESTAMP_MS), ["invalid_input"]),
    # an older generation of an active task told of the current attempt
    ("older_generation_handed_off", claims_of_generations(3, 1),
     ["ClaimClaimed", "ClaimAlreadyHandedOff"]),
    ("handled_claims_keep_no_receipt", claims_of_generations(1, times=2),
     ["ClaimTerminalOrSuperseded", "conflict"]),
    # a passed deadline answered before the seed's types are decoded
    ("deadline_before_types", probes_of(1_000, **UNTYPED_PROBES), ["unavailable"] * 6),
    # the empty id is accepted, not a descriptor of another program (the old stand-in was
    # written into the descriptor too: ok)
    ("empty_program_part_accepted",
     submissions_with({"program": spec.Program("", "1.2.0"),
                       "descriptor": {"program": spec.Program("other", "9")}}), ["conflict"]),
    # any id that is no string, a list included (the old lookup crashed: unhashable)
    ("session_id_type_unchecked", calls(lambda s: s.extend_session(["ws"]),
                                        lambda s: s.extend_session(5)),
     ["unknown_session", "unknown_session"]),
]


@pytest.mark.parametrize("base", ["memory", "sqlite"])
@pytest.mark.parametrize(("name", "script", "answers"), AS_ITS_BUG_SAYS,
                         ids=[c[0] for c in AS_ITS_BUG_SAYS])
def test_a_call_within_a_mutants_bug_is_answered_as_its_bug_says(
        name: str, script: Script, answers: list[Any], base: str) -> None:
    """Where a call is within the bug's reach, the mutant answers as its bug says, and
    nothing else goes wrong on the way (the correct store refuses these calls)."""
    assert _answers(f"mutant:{name}@{base}", script) == answers
    assert _answers(base, script) != answers
