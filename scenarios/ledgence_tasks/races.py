"""Real-thread races for ledgence-tasks: one key submitted at once, consumers draining one
queue, and recovery scanners racing cancellers and settlers.

Each race that acquires or scans runs on a store of its own (:func:`isolated`): acquisition
sees a whole queue and ``expire_batch`` the whole store.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.errors import BackendUnavailable, told
from fencepost.spec.opaque import Ref
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Ok, Outcome, agrees
from fencepost.spec.shapes import holds

from ..checks import Races
from ..guard import Guarded, RunStopped
from ..harness import Harness, StoreLost, violation
from ..races import release_together, settle_race
from .calls import (
    DESCRIPTOR,
    SCOPE,
    acquire,
    lease_expiry,
    open_ws,
    owner,
    submit_task,
    success,
    task_input,
)

RACES = Races()
race = RACES.register


@contextmanager
def isolated(h: Harness, suffix: str) -> Iterator[Harness]:
    """A harness on a store of its own, discarded afterwards."""
    world = h.world.fork(suffix)
    try:
        yield Harness(world)
    finally:
        world.discard()


@race
def concurrent_submissions(h: Harness, p: str, n: int, round_no: int) -> None:
    """N identical submissions of one key at once: one task, one `submitted` event."""
    command = spec.SubmitCommand(f"{p}-k", task_input(data={"round": round_no}))
    ops = [spec.AcceptResolvedSubmission(command, DESCRIPTOR) for _ in range(n)]
    actors = [f"client{k}" for k in range(n)]
    outcomes = release_together(h.world.open(), ops, run=h.run)
    settle_race(h, "LDG-SUBMIT-006", actors, ops, outcomes, winners_expected=n)
    task = f"task#{h.state.minted}"
    h.apply("client", spec.History(SCOPE, Ref(task), 0))


def _assigned(outcome: Outcome) -> spec.AcquireAssigned | None:
    """The assignment an acquire answered, if the answer is one of the declared shape (any
    other answer is the model's to judge, never read here)."""
    value = getattr(outcome, "value", None)
    return value if isinstance(outcome, Ok) and holds(spec.AcquireAssigned, value) else None


def _claimed(outcome: Outcome) -> str | None:
    assigned = _assigned(outcome)
    return assigned.assignment.event.task_id if assigned is not None else None


def _wave(h: Harness, clause: str, ops: list[Op], actors: list[str]) -> list[Outcome]:
    """Release ``ops`` at once; adopt them in the order of the tasks they claimed (any other
    order of claims from one queue cannot explain them), checking each answer."""
    outcomes = release_together(h.world.open(), ops, run=h.run)
    claimed = [_claimed(o) for o in outcomes]
    taken = [c for c in claimed if c is not None]
    if len(set(taken)) != len(taken):
        raise violation(clause, f"{len(taken) - len(set(taken))} task(s) handed to two "
                        f"consumers at once: {outcomes}", tuple(h.trace))
    names = {real: name for name, (_, real) in h.bindings.items() if name.startswith("task#")}

    def position(k: int) -> tuple[int, int, str]:
        rec = h.state.tasks.get(names.get(claimed[k], ""))
        if rec is None:  # Empty answers come after every claim
            return (1 << 62, 0, "")
        return (rec.snapshot.available_at, rec.snapshot.submitted_at, rec.snapshot.task_id)

    for k in sorted(range(len(ops)), key=position):
        step = h.linearize(actors[k], ops[k], outcomes[k])
        if not agrees(step.outcome, outcomes[k]):
            raise violation(clause, f"{actors[k]}'s {ops[k].name} answered {outcomes[k]}; in "
                            f"no order of the racing claims can it (expected {step.outcome})",
                            tuple(h.trace))
    return outcomes


@race
def consumers_drain_a_queue(h: Harness, p: str, n: int, round_no: int) -> None:
    """N consumers acquire at once from a queue of 2N tasks, three waves: each wave claims
    the N earliest tasks left, each exactly once, and the last finds the queue empty."""
    clause = "LDG-ACQ-017"
    with isolated(h, f"{p}d") as w:
        ws = open_ws(w, concurrency=n)
        tasks = []
        for k in range(2 * n):
            tasks.append(submit_task(w, f"{p}-{k}", retry_policy=spec.RetryPolicy(1, 0)))
            w.advance(1)
        actors = [f"consumer{k}" for k in range(n)]
        for wave in (1, 2, 3):
            ops: list[Op] = [spec.Acquire(spec.AcquireCommand(SCOPE, "emails", Ref(ws), k, wave))  # type: ignore[arg-type]
                             for k in range(n)]
            outcomes = _wave(w, clause, ops, actors)
            for k, outcome in enumerate(outcomes):
                if wave == 3:
                    continue
                if _claimed(outcome) is None:
                    raise violation(clause, f"consumer {k} found no task in wave {wave} with "
                                    f"{n * (3 - wave)} queued", tuple(w.trace))
                attempt = f"attempt#{_attempt_of(w, outcome)}"
                w.apply(actors[k], spec.Settle(spec.SettleCommand(
                    owner(w, attempt), "op-1", success(w, attempt), spec.CONFIRMED)))
        for t in tasks:
            w.check_record(spec.Status(SCOPE, Ref(t)), w.expect_one(spec.Status(SCOPE, Ref(t))),
                           clause=clause)
        h.exercised(clause)
        h.reached(clause, "a wave claiming one task each")
        h.reached(clause, "a wave finding the queue empty")


def _attempt_of(h: Harness, outcome: Outcome) -> str:
    """The model's number of the attempt an answer assigned."""
    assigned = _assigned(outcome)
    real = assigned.assignment.event.attempt_id if assigned is not None else ""
    for name, (_, bound) in h.bindings.items():
        if name.startswith("attempt#") and bound == real:
            return name.removeprefix("attempt#")
    return "none"


@race
def scanners_and_settlers(h: Harness, p: str, n: int, round_no: int) -> None:
    """Recovery scanners race cancellers of the expired attempts and settlers of the live
    ones: every expired attempt is finalized exactly once (by a scan or by its cancel, never
    both), the scanners' expired counts add up to the scans' share, and every live attempt
    settles."""
    clause = "LDG-RECOVER-005"
    due_count = max(2, n // 2)
    with isolated(h, f"{p}s") as w:
        ws = open_ws(w, concurrency=2 * due_count)
        due, live = [], []
        for k in range(due_count):
            due.append((submit_task(w, f"{p}-d{k}", retry_policy=spec.RetryPolicy(2, 0)), k))
            acquire(w, ws, k, 1)
        w.advance(30_000)
        for k in range(due_count):
            live.append((submit_task(w, f"{p}-l{k}"), due_count + k))
            acquire(w, ws, due_count + k, 1)
        attempts = {t: w.state.tasks[t].snapshot.current_attempt_id for t, _ in due + live}
        w.advance(lease_expiry(w, attempts[due[0][0]] or "") - w.now)  # exactly at expiry
        scanners: list[Op] = [spec.ExpireBatch(100) for _ in range(max(1, n - due_count))]
        cancels: list[Op] = [spec.Cancel(SCOPE, Ref(t)) for t, _ in due]
        settles: list[Op] = [spec.Settle(spec.SettleCommand(
            owner(w, attempts[t] or ""), "op-1", success(w, attempts[t] or ""), spec.CONFIRMED))
            for t, _ in live]
        ops = scanners + cancels + settles
        outcomes = release_together(w.world.open(), ops, run=w.run)
        _check_recovery(w, clause, scanners, cancels, settles, outcomes,
                        [t for t, _ in due], attempts)
        h.exercised(clause)
        h.reached(clause, "a scan racing a cancel")
        h.reached(clause, "a scan racing a settlement")


def _check_recovery(w: Harness, clause: str, scanners: list[Op], cancels: list[Op],
                    settles: list[Op], outcomes: list[Outcome], due: list[str],
                    attempts: dict[str, str | None]) -> None:
    scans = outcomes[:len(scanners)]
    cancelled = outcomes[len(scanners):len(scanners) + len(cancels)]
    settled = outcomes[len(scanners) + len(cancels):]
    for k, op in enumerate(settles):  # settles touch only live attempts: any order
        step = w.linearize("settler", op, settled[k])
        if not agrees(step.outcome, settled[k]):
            raise violation(clause, f"a settlement of a live attempt racing recovery answered "
                            f"{settled[k]} (expected {step.outcome})", tuple(w.trace))
    # Each expired attempt was finalized by a scan (then cancelled as a queued retry) or by
    # its cancel; the store's history of the task says which, and the model follows it: the
    # cancels that came first, then the scans (which expire every attempt still due), then
    # the cancels of the tasks the scans took.
    racing = list(zip(due, cancels, cancelled, strict=True))
    scanned = {t for t in due if _scanned_first(w, t)}
    for t, cancel, outcome in [r for r in racing if r[0] not in scanned]:
        _cancel_racing(w, clause, t, cancel, outcome)
    _step_scans(w, scanners)
    for t, cancel, outcome in [r for r in racing if r[0] in scanned]:
        _cancel_racing(w, clause, t, cancel, outcome)
    by_scan = len(scanned)
    total = 0
    for outcome in scans:
        progress: Any = getattr(outcome, "value", None)
        if not holds(spec.RecoveryProgress, progress) or not (
                0 <= progress.expired <= progress.examined <= 100):
            raise violation(clause, f"a racing expire_batch answered {outcome}", tuple(w.trace))
        total += progress.expired
    if total != by_scan:
        raise violation(clause, f"the scans report {total} expirations but {by_scan} task(s) "
                        f"show one in their history", tuple(w.trace))
    for t in attempts:
        w.check_record(spec.Status(SCOPE, Ref(t)), w.expect_one(spec.Status(SCOPE, Ref(t))),
                       clause=clause)


def _scanned_first(w: Harness, task: str) -> bool:
    """Does the store's history of ``task`` show a scan expiring its attempt (and scheduling
    the retry its cancel then found queued)?"""
    history = w.run(w.world.open(), spec.History(SCOPE, Ref(task), 0))
    events: Any = history.value if isinstance(history, Ok) else None
    reasons = ([r.event.reason for r in events]
               if holds(list[spec.RecordedHistoryEvent], events) else [])
    return reasons[2:4] == ["lease_expired", "retry_scheduled"]


def _cancel_racing(w: Harness, clause: str, task: str, cancel: Op, outcome: Outcome) -> None:
    """Adopt the answer of ``task``'s cancel at this point of the order; it must be the
    model's."""
    step = w.linearize("canceller", cancel, outcome)
    if not agrees(step.outcome, outcome):
        raise violation(clause, f"cancel of {task} racing recovery answered {outcome} "
                        f"(expected {step.outcome})", tuple(w.trace))


def _step_scans(w: Harness, scanners: list[Op]) -> None:
    """Step the model through the scanners' calls, one after the other: the first expires
    every attempt still due, the rest find none.

    Their answers are held to the race's own rule instead of these steps (``expired <=
    examined``, and the expirations add up to the histories'): scans that overlap share the
    due attempts between them and pass over a task another transaction holds, which the
    model, stepping a scan as one atomic call, does not."""
    for op in scanners:
        w.state = w.expect_one(op).state


# --- a pagination walk under concurrent submitters ---------------------------------------------


@attrs.frozen
class Walk:
    """What one walk saw: its pages, the tasks it returned in order, the tasks that existed
    (and matched) before it started, and every broken invariant."""

    pages: int
    returned: tuple[str, ...]
    before: frozenset[str]
    submitted: int
    problems: tuple[str, ...]


def walk_under_writers(store: Any, scope: spec.Scope, prefix: str, writers: int = 4,
                       per_writer: int = 250, initial: int = 100, limit: int = 37) -> Walk:
    """Submit ``initial`` tasks, then walk every page (``limit`` per page) while ``writers``
    threads submit ``per_writer`` tasks each, and check the snapshot invariants: items in the
    scope, strictly descending within and across pages, never a task twice, and every task
    that existed before the walk returned exactly once."""

    def submit(key: str) -> str:
        snapshot = store.accept_resolved_submission(
            spec.SubmitCommand(key, task_input(scope)), DESCRIPTOR)
        if type(snapshot) is not spec.TaskSnapshot or type(snapshot.task_id) is not str:
            raise ValueError(f"accept_resolved_submission answered a {type(snapshot).__name__}"
                             ", not a TaskSnapshot with a text task_id")
        return snapshot.task_id

    try:
        before = frozenset(submit(f"{prefix}-seed{k}") for k in range(initial))
    except BackendUnavailable:
        raise
    except Exception as e:  # noqa: BLE001 - the store's answer, reported as a broken walk
        return Walk(0, (), frozenset(), 0,
                    (f"submitting the tasks before the walk: {type(e).__name__}: {told(e)}",))
    start = threading.Barrier(writers + 1)
    errors: list[str] = []
    written = threading.Condition()
    progress = {"done": 0, "writers": writers}

    def writer(w: int) -> None:
        start.wait()
        try:
            for k in range(per_writer):
                submit(f"{prefix}-w{w}-{k}")
                with written:
                    progress["done"] += 1
                    written.notify_all()
        except Exception as e:  # noqa: BLE001 - reported as a broken walk
            errors.append(f"writer {w}: {type(e).__name__}: {told(e)}")
        except RunStopped:
            pass  # the run was stopped: the reader's next call says so, this thread just ends
        finally:
            with written:
                progress["writers"] -= 1
                written.notify_all()

    # Before each page the reader waits (on a condition, not a clock) until the writers have
    # committed their share for that page, so every page is read between submissions.
    stride = max(1, writers * per_writer // (initial // limit + 1))

    def writes_before(page_no: int) -> None:
        with written:
            written.wait_for(lambda: progress["done"] >= page_no * stride
                             or progress["writers"] == 0, timeout=60)

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(writers)]
    for t in threads:
        t.start()
    start.wait()
    returned: list[spec.TaskStatus] = []
    problems: list[str] = []
    pages, cursor = 0, None
    while True:
        writes_before(pages)
        query = spec.TaskListQuery(spec.TaskFilters(), limit, cursor)
        try:
            page = store.list_tasks(scope, query)
        except Exception as e:  # noqa: BLE001 - a refused page breaks the walk
            problems.append(f"page {pages + 1} raised {type(e).__name__}: {told(e)}")
            break
        if not _plain_page(page):
            problems.append(f"page {pages + 1} is a {type(page).__name__}, not a TaskPage of "
                            "TaskStatus items with text ids, integer times and Scopes")
            break
        pages += 1
        if len(page.items) > limit:
            problems.append(f"page {pages} holds {len(page.items)} items, limit {limit}")
        returned.extend(page.items)
        cursor = page.next_cursor
        if cursor is None or pages > 10 * (initial + writers * per_writer):
            break
    for t in threads:
        t.join(120)
    problems += errors
    keys = [(s.submitted_at, str(s.task_id).encode("utf-8")) for s in returned]
    ids = [str(s.task_id) for s in returned]
    problems += [f"a task of scope {s.scope} was listed" for s in returned if s.scope != scope]
    problems += [f"item {k + 1} ({ids[k]}) is not after item {k} ({ids[k - 1]})"
                 for k in range(1, len(keys)) if not keys[k] < keys[k - 1]]
    seen: dict[str, int] = {}
    for task_id in ids:
        seen[task_id] = seen.get(task_id, 0) + 1
    problems += [f"{t} returned {n} times" for t, n in seen.items() if n > 1]
    problems += [f"{t} existed before the walk and was skipped" for t in sorted(before - set(seen))]
    return Walk(pages, tuple(ids), before, len(before) + writers * per_writer, tuple(problems))


def _plain_page(page: Any) -> bool:
    """Is ``page`` a TaskPage whose items hold what the walk reads as plain values (never
    an object of the store's whose comparisons could lie or raise)?"""
    return type(page) is spec.TaskPage and type(page.items) in (tuple, list) and all(
        type(s) is spec.TaskStatus and type(s.task_id) is str and type(s.submitted_at) is int
        and type(s.scope) is spec.Scope and type(s.scope.tenant_id) is str
        and type(s.scope.namespace) is str for s in page.items)


@race
def walk_under_submitters(h: Harness, p: str, n: int, round_no: int) -> None:
    """A reader walks every page while writers submit: no repeats, no skips of tasks that
    existed before, strictly ordered pages."""
    clause = "LDG-LIST-009"
    with isolated(h, f"{p}w") as w:
        try:
            walk = walk_under_writers(Guarded(w.world.open(), w.world.guard), SCOPE, p,
                                      writers=max(2, n // 2), per_writer=15, initial=20,
                                      limit=7)
        except BackendUnavailable as e:
            raise StoreLost(f"a walk under writers: store unavailable ({e})",
                            tuple(w.trace)) from e
        if any("BackendUnavailable" in problem for problem in walk.problems):
            raise StoreLost("a walk under writers: store unavailable ("
                            + next(x for x in walk.problems if "BackendUnavailable" in x) + ")",
                            tuple(w.trace))
        w.note("reader", f"walked {walk.pages} pages ({len(walk.returned)} items) while "
               f"{max(2, n // 2)} writers submitted; {len(walk.before)} tasks existed before")
        if walk.problems:
            raise violation(clause, "; ".join(walk.problems[:5]), tuple(w.trace))
        h.exercised(clause)
