"""Every argument of ledgence-tasks sent at its edges: empty strings, zero, negative numbers, a
bool or a string where an integer belongs, None where an id belongs.

The seed's commands are Rust types, so a negative number, one past its type (2^32 for a u32,
2^64 for a u64), a non-integer or an unknown vocabulary word cannot reach its store at all (the
kit refuses it: invalid_input); every other edge gets the answer the seed's code gives it,
often not invalid_input: an empty lease id in a settle matches no owner (ownership_lost), an
empty task id finds no task (not_found), an empty digest in a report conflicts, retry_delay_ms
0 and a failure message "" are accepted, submitted_until 0 keeps nothing. Each scenario ends
with the valid call the refusals must have left possible (nothing they refused wrote anything).
The mutants of ``adapters/ledgence_tasks/mutants/edges.py`` are each caught here.
"""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..checks import Scenarios
from ..harness import Harness
from .calls import (
    DESCRIPTOR,
    QUEUE,
    SCOPE,
    acquire,
    claim,
    command,
    confirm,
    context,
    failure,
    history,
    last_attempt,
    on_own_store,
    open_ws,
    owner,
    page,
    probe,
    reads,
    renew,
    settle,
    submit,
    submit_task,
    success,
    task_input,
)

NO_NAMESPACE = spec.Scope("acme", "")

SCENARIOS = Scenarios()
scenario = on_own_store(SCENARIOS)


@scenario()
def edges_of_sessions_and_submissions(h: Harness, p: str) -> None:
    """Concurrency -1, "2" and 2^32 (past the seed's u32), an empty namespace, a None session
    id; an empty key looked up and submitted; an empty program id and version, 0 and -1
    attempts, a delay of -1 (0 is valid), timeouts 0 and -1, an archive of size 0 and -1 and
    an empty digest, data holding 2^64 or -2^63 - 1, data 65 deep or over 1 MiB, 1001
    attempts, a delay or a timeout past a day, a correlation key of 513 bytes, a queue
    holding a noncharacter: all refused, nothing bound."""
    for concurrency in (-1, "2", spec.U32_MAX + 1):
        h.apply("worker", spec.OpenSession(SCOPE, QUEUE, concurrency))  # type: ignore[arg-type]
    h.apply("worker", spec.OpenSession(NO_NAMESPACE, QUEUE, 1))
    h.apply("worker", spec.ExtendSession(None))
    h.apply("client", spec.LookupSubmission(SCOPE, ""))
    h.apply("client", spec.LookupSubmission(NO_NAMESPACE, f"{p}-k"))
    key = f"{p}-k"
    submit(h, "", task_input())
    for program in (spec.Program("", "1.2.0"), spec.Program("mailer", "")):
        submit(h, key, task_input(program=program), attrs.evolve(DESCRIPTOR, program=program))
    for policy in (spec.RetryPolicy(0, 5000), spec.RetryPolicy(-1, 5000),
                   spec.RetryPolicy(3, -1)):
        submit(h, key, task_input(retry_policy=policy))
    for timeout in (0, -1):
        submit(h, key, task_input(attempt_timeout_ms=timeout))
    for size in (0, -1):
        submit(h, key, task_input(), attrs.evolve(DESCRIPTOR, size=size))
    submit(h, key, task_input(), attrs.evolve(DESCRIPTOR, digest=""))
    submit(h, key, task_input(scope=NO_NAMESPACE))
    for number in (spec.JSON_INTEGERS[1] + 1, spec.JSON_INTEGERS[0] - 1):
        submit(h, key, task_input(data={"n": [number]}))  # past u64, below i64
    too_deep: list[object] = []
    for _ in range(spec.MAX_DATA_DEPTH):
        too_deep = [too_deep]  # 65 nested lists
    submit(h, key, task_input(data=too_deep))
    submit(h, key, task_input(data="x" * spec.MAX_DATA_BYTES))  # with its quotes: 1 MiB + 2
    for over in (spec.RetryPolicy(spec.MAX_ATTEMPTS[1] + 1, 0),
                 spec.RetryPolicy(3, spec.RETRY_DELAY_MS[1] + 1)):
        submit(h, key, task_input(retry_policy=over))
    submit(h, key, task_input(attempt_timeout_ms=spec.ATTEMPT_TIMEOUT_MS[1] + 1))
    submit(h, key, task_input(correlation_key="k" * (spec.MAX_CORRELATION_KEY_BYTES + 1)))
    submit(h, key, task_input(queue="emails\ufdd0"))  # a noncharacter in an identifier
    h.apply("client", spec.LookupSubmission(SCOPE, key))  # none of those bound the key
    submit(h, key, task_input(retry_policy=spec.RetryPolicy(1, 0)))  # a delay of 0 is valid
    h.apply("client", spec.LookupSubmission(SCOPE, key))


def sized(start: str, size: int, wide: bool) -> str:
    """Text of exactly ``size`` UTF-8 bytes beginning with ``start``: filled with "k", or
    (``wide``) with "\u00e9", two bytes and one character (one UTF-16 unit too), and a "k"
    if one byte is left."""
    left = size - len(start.encode())
    return start + ("\u00e9" * (left // 2) + "k" * (left % 2) if wide else "k" * left)


@scenario()
def edges_of_lengths(h: Harness, p: str) -> None:
    """Text limits count UTF-8 bytes, as the seed's ``validate_text`` does (``value.len()`` of
    a Rust str: ``crates/ledgence-orchestration-api/src/lib.rs`` at 06e3b0e; the
    correlation key's 512 in ``submission.rs:94-100`` at 99136b5): an idempotency key of 255
    bytes, an identifier of 128 and a correlation key of 512 are accepted, one byte more is
    refused, also when it is written in two-byte characters, fewer than the limit (a store
    counting characters, as a VARCHAR(255) column or a JavaScript string's length does,
    accepts those). The list filters count the same (the queue's 128 and the correlation
    key's 512: ``TaskFilters::validate`` in ``discovery.rs:24-33`` at 9f0c292): a page
    filtered by one byte more is refused; one at the limit lists the tasks that have it."""
    for wide in (False, True):
        at = f"{p}-{int(wide)}"
        submit(h, sized(at, spec.MAX_IDEMPOTENCY_KEY_BYTES + 1, wide), task_input())
        h.apply("client", spec.LookupSubmission(SCOPE, sized(
            at, spec.MAX_IDEMPOTENCY_KEY_BYTES + 1, wide)))
        key = sized(at, spec.MAX_IDEMPOTENCY_KEY_BYTES, wide)
        submit(h, key, task_input())
        h.apply("client", spec.LookupSubmission(SCOPE, key))
        for size in (spec.MAX_ID_BYTES + 1, spec.MAX_ID_BYTES):
            queue = sized("q", size, wide)
            submit(h, f"{at}-queue-{size}", task_input(queue=queue))
            h.apply("worker", spec.OpenSession(SCOPE, queue, 1))
            scope = spec.Scope(sized("t", size, wide), "prod")
            submit(h, f"{at}-tenant-{size}", task_input(scope=scope))
            program = spec.Program(sized("m", size, wide), "1.2.0")
            submit(h, f"{at}-program-{size}", task_input(program=program),
                   attrs.evolve(DESCRIPTOR, program=program))
        for size in (spec.MAX_CORRELATION_KEY_BYTES + 1, spec.MAX_CORRELATION_KEY_BYTES):
            submit(h, f"{at}-correlation-{size}",
                   task_input(correlation_key=sized("c", size, wide)))
            page(h, correlation_key=sized("c", size, wide))
        for size in (spec.MAX_ID_BYTES + 1, spec.MAX_ID_BYTES):
            page(h, queue=sized("q", size, wide))


@scenario()
def edges_of_reads(h: Harness, p: str) -> None:
    """An empty task id for every read, history and cancel, an empty namespace (for
    inspect_attempt too: ``storage.rs`` inspect_attempt at 2b1bcd2 checks the scope and the
    task id before it reads), an empty attempt id; history after True and -1 (refused), after
    0, and after the last i64 and the
    first and last u64 past it (the seed's after_sequence is a u64, compared as one: nothing
    after them; ``storage.rs`` history at 2b1bcd2, ``sequence > ($2::text)::ldg_u64``), and
    after 2^64, which no u64 holds (refused)."""
    t = submit_task(h, f"{p}-a")
    h.apply("client", spec.Cancel(SCOPE, Ref(t)))  # three events: after 1 is not after 0
    for read in (spec.Status, spec.Result, spec.Inspect, spec.Cancel):
        h.apply("client", read(SCOPE, ""))
    h.apply("client", spec.Status(NO_NAMESPACE, Ref(t)))
    h.apply("client", spec.History(SCOPE, "", 0))
    h.apply("client", spec.InspectAttempt(SCOPE, Ref(t), ""))
    h.apply("client", spec.InspectAttempt(NO_NAMESPACE, Ref(t), "a"))  # the scope comes first
    h.apply("client", spec.InspectAttempt(SCOPE, "", "a"))
    h.apply("client", spec.InspectAttempt(SCOPE, "task_never_minted", "a"))  # no such task
    for after in (True, -1, 0, 2**63 - 1, 2**63, 2**64 - 1, spec.U64_MAX + 1):
        history(h, t, after)


@scenario()
def edges_of_acquisition_and_dispatch(h: Harness, p: str) -> None:
    """Consumer -1 and 2^32, sequence -1 and 2^64 (past the seed's u32 and u64), an empty
    session id and queue, deadlines 0 and -1 (the passed deadline first, with an empty queue
    too); claims (of the routed queue's task) at generation -1, of an empty task id, at
    sequence -1 and 2^64, and naming the task in another queue than its own (conflict:
    ``classify_dispatch`` in ``crates/ledgence-orchestration-core/src/dispatch.rs:18-23`` at
    cf91d0d): all refused, no cursor moved, so the well-formed acquire that follows claims
    the first task."""
    ws = open_ws(h, concurrency=2)
    routed = open_ws(h, concurrency=2, queue=spec.ROUTED_QUEUE)
    t = submit_task(h, f"{p}-a")
    u = submit_task(h, f"{p}-b", queue=spec.ROUTED_QUEUE)
    h.advance(1_000)  # deadline 0 is before now
    acquire(h, ws, -1, 1)
    acquire(h, ws, spec.U32_MAX + 1, 1)
    acquire(h, ws, 0, -1)
    acquire(h, ws, 0, spec.U64_MAX + 1)
    h.apply(f"{ws}/0", spec.Acquire(spec.AcquireCommand(SCOPE, QUEUE, "", 0, 1)))
    h.apply(f"{ws}/0", spec.Acquire(command(ws, 0, 1, queue="")))
    for deadline in (0, -1):
        probe(h, ws, 0, 1, finish_empty=True, deadline=deadline)
    # A passed deadline comes before the command's values: unavailable, not invalid_input.
    h.apply(f"{ws}/0", spec.ProbeAcquisition(command(ws, 0, 1, queue=""), True, 0))
    # But not before the seed's types, which decode before any call runs: a value they cannot
    # hold is invalid_input even with the deadline passed.
    untyped: tuple[Any, ...] = (command(ws, -1, 1), command(ws, spec.U32_MAX + 1, 1),
                                command(ws, 0, -1), command(ws, 0, spec.U64_MAX + 1),
                                spec.AcquireCommand(SCOPE, QUEUE, None, 0, 1))  # type: ignore[arg-type]
    for bad in untyped:
        h.apply(f"{ws}/0", spec.ProbeAcquisition(bad, True, 0))
    # A deadline to come: the command's values are checked (an empty session id, consumer
    # -1), and a deadline or finish_empty of another type is refused (a float, a bool, 1).
    later = h.now + spec.CONTROL_REQUEST_TIMEOUT_MS
    h.apply(f"{ws}/0", spec.ProbeAcquisition(spec.AcquireCommand(SCOPE, QUEUE, "", 0, 1), True,
                                             later))
    h.apply(f"{ws}/0", spec.ProbeAcquisition(command(ws, -1, 1), True, later))
    odd: tuple[Any, ...] = (float(later), True)
    for at in odd:
        h.apply(f"{ws}/0", spec.ProbeAcquisition(command(ws, 0, 1), True, at))
    one: Any = 1
    h.apply(f"{ws}/0", spec.ProbeAcquisition(command(ws, 0, 1), one, later))
    h.apply(f"{ws}/0", spec.ProbeAcquisition(command(ws, 0, 1), one, 0))
    claim(h, routed, 1, 1, u, -1, queue=spec.ROUTED_QUEUE)
    claim(h, routed, 1, 1, "", 1, queue=spec.ROUTED_QUEUE)
    claim(h, routed, 1, -1, u, 1, queue=spec.ROUTED_QUEUE)
    claim(h, routed, 1, spec.U64_MAX + 1, u, 1, queue=spec.ROUTED_QUEUE)
    claim(h, ws, 1, 1, u, 1)  # the routed task named in another queue: conflict
    claim(h, routed, 1, 1, u, 1, queue=spec.ROUTED_QUEUE)  # the well-formed claim: claimed
    acquire(h, ws, 0, 1)
    reads(h, t, last_attempt(h))


PAST_THE_I64S = (2**63, 2**64 - 1)
"""Sequences a store keeping the seed's u64s in i64s wraps negative: the first past the last
i64 and the last u64."""


@scenario()
def edges_of_sequences(h: Harness, p: str) -> None:
    """Acquisition, claim and renewal sequences past the last i64. The seed's are u64s
    (AcquireCommand, RenewCommand: ``delivery.rs`` at 1c9ece5), compared in Rust and bound as
    text cast to its u64 domain (``sequence=($3::text)::ldg_u64``: the cursor in
    ``delivery.rs`` at 50df11a, the claim receipt's lookup in ``dispatch_claim.rs`` at
    62b9783): 2^63 and 2^64 - 1 skip past a cursor or a last renewal at 1 (out_of_order),
    where a store comparing i64s sees them below it (obsolete_operation) and one binding them
    as a BIGINT fails."""
    ws = open_ws(h, concurrency=2)
    routed = open_ws(h, concurrency=2, queue=spec.ROUTED_QUEUE)
    t = submit_task(h, f"{p}-a")
    u = submit_task(h, f"{p}-b", queue=spec.ROUTED_QUEUE)
    for seq in PAST_THE_I64S:  # a first sequence other than 1
        acquire(h, ws, 0, seq)
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    for seq in PAST_THE_I64S:
        acquire(h, ws, 0, seq)
    renew(h, a, 1)
    for seq in PAST_THE_I64S:
        renew(h, a, seq)
    for seq in PAST_THE_I64S:  # no receipt there, and no cursor yet
        claim(h, routed, 1, seq, u, 1, queue=spec.ROUTED_QUEUE)
    claim(h, routed, 1, 1, u, 1, queue=spec.ROUTED_QUEUE)
    for seq in PAST_THE_I64S:
        claim(h, routed, 1, seq, u, 1, queue=spec.ROUTED_QUEUE)
    reads(h, t, a)


@scenario()
def edges_of_owner_calls(h: Harness, p: str) -> None:
    """Owners with an empty lease, session, task or attempt id, generation 0, -1 and 2^32,
    consumer -1 and 2^32 and an empty namespace, for settle, confirm_quiescence and renew;
    failure reports with an empty phase or kind, a report with an empty process id or
    elapsed_ms -1 or 2^64, quiescence "", operation id "", an output nested 65 deep, an empty
    digest, task or attempt id in the report; intent "", a renewal sequence of 2^64. Then the
    renewal and the settlement (with a failure message "") those left possible."""
    ws = open_ws(h)
    t = submit_task(h, f"{p}-a", retry_policy=spec.RetryPolicy(1, 0))
    acquire(h, ws, 0, 1)
    a = last_attempt(h)
    ok = success(h, a)
    forged = ({"lease_id": ""}, {"worker_session_id": ""}, {"generation": 0},
              {"task_id": ""}, {"attempt_id": ""}, {"consumer_id": -1}, {"generation": -1},
              {"scope": NO_NAMESPACE}, {"generation": spec.U32_MAX + 1},
              {"consumer_id": spec.U32_MAX + 1})
    for changes in forged:
        settle(h, a, ok, who=owner(h, a, **changes))
    settle(h, a, attrs.evolve(failure(h, a), phase=""))
    settle(h, a, attrs.evolve(failure(h, a), kind=""))
    settle(h, a, attrs.evolve(ok, process_id=""))
    settle(h, a, attrs.evolve(ok, elapsed_ms=-1))
    settle(h, a, attrs.evolve(ok, elapsed_ms=spec.U64_MAX + 1))
    settle(h, a, ok, quiescence="")
    settle(h, a, ok, operation_id="")
    deep: list[object] = []
    for _ in range(spec.MAX_DATA_DEPTH):
        deep = [deep]  # 65 nested lists: one past the seed's output limit
    settle(h, a, success(h, a, deep))
    for field in ("digest", "task_id", "attempt_id"):
        settle(h, a, attrs.evolve(ok, context=context(h, a, **{field: ""})))
    for changes in forged:
        confirm(h, a, who=owner(h, a, **changes))
    for changes in forged:
        renew(h, a, 1, who=owner(h, a, **changes))
    renew(h, a, 1, "")
    renew(h, a, spec.U64_MAX + 1)
    renew(h, a, 1)  # nothing before was a renewal: this is the first
    quiet = spec.ExecutionFailure(context(h, a), "integrity", "", "execution", True)
    settle(h, a, quiet)  # an empty message is a message
    reads(h, t, a)


@scenario()
def edges_of_listing_and_recovery(h: Harness, p: str) -> None:
    """Page limits -1, an empty cursor, an empty state filter, submitted_from -1, a queue
    filter holding a noncharacter, a correlation key filter holding a control character
    (refused: ``TaskFilters::validate`` in ``discovery.rs:24-33`` at 9f0c292); submitted_until
    0 (an empty page) and submitted_from 0 (every task); expire_batch(-1) and
    expire_batch(True) (refused)."""
    for k in range(2):
        submit_task(h, f"{p}-{k}")
        h.advance(10)
    page(h, -1)
    page(h, 2, "")
    page(h, state="")
    page(h, queue="emails\ufdd0")
    page(h, correlation_key="order\x07")
    page(h, submitted_from=-1)
    page(h, submitted_until=0)
    page(h, submitted_from=0)
    for limit in (-1, True):
        h.apply("ops", spec.ExpireBatch(limit))
