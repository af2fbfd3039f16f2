"""The ledgence-tasks tour's scope (see :mod:`fencepost.scenarios.tour`).

**Bound.** One worker session (concurrency 2) with ``consumers`` consumers, ``tasks`` tasks
in one queue of one scope, each with at most two attempts (``max_attempts`` 2), a retry
delay of 5 s and the shortest attempt timeout (60 s: the claim's lease and execution
deadline, and its authority deadline 30 s later). Moves: open the session (and, before,
extend an unknown one), extend it; submit each task, then its key again with another input,
the same input with another archive, and a lookup of it; read (status, result, history after
1, the attempts before the last) and cancel it; each consumer acquires with its next
sequence, a skipped one, replays its cursor's sequence, goes back one (at 2 or more), probes
waiting, finishing and with a deadline already passed; the owner of each task's last attempt
and of the one before renews (the next sequence, keep_alive or dispatch; on the current
attempt also a skipped one, the same with its intent and with the other intent, the one
before), settles (success, success with quiescence unconfirmed, a retryable and a final
execution failure, an application failure; the same settlement sent again is its re-send,
another one a conflict) and confirms quiescence (the last one's owner also with a forged
lease id; it also renews with a forged task id, settles with a forged attempt id, names
another archive, sends its settlement again under another operation id); recovery
(``expire_batch`` 100); the clock to the session's end, to each current attempt's lease end
(also 30 s before it: a renewal there extends the lease) and queued task's available_at, at
-1 and 0 ms (``full``: also +1 ms, the session's end -1/+1 and each attempt's execution and
authority deadlines); with ``durable`` the store is reopened; and in ``full`` calls with an
argument at its edge (sequence 0, a consumer outside the session, renewal 0, a forged lease
id, expire_batch 0 and 101, history after -1). ``ci`` and ``full``: one task, one consumer (a
second consumer, ``consumers=2``, multiplies the graph twelvefold: 407,813 edges at the ci
scope's other bounds; a second task more).

**Abstraction.** The session: absent, or its end relative to now (``-1`` once passed,
``far`` beyond 1,000 s: every lease the bound makes ends sooner, so the session's end
decides nothing until the clock is sent to it). Per task: absent, or its state, attempt
count (at most 2), whether a cancel was requested and, while queued, its available_at
relative to now (``-1`` once passed); its current attempt's holder (the consumer), state,
quiescence, settlement (by kind), execution_may_have_started, last renewal (sequence capped
at 2 in ``full``, 1 in ``ci``, where no move goes back one; intent) and lease end, deadline
and authority deadline relative to now (``-1`` once passed); the attempts before it by
state, quiescence and settlement alone. The tasks' order by (available_at, submitted_at)
(two tasks submitted in one ms tie: the store claims either, and the tour leads its walk
back). Per consumer: no cursor, or its sequence (capped at 2) and what it assigned (Empty,
or a task's generation). Ids, absolute times, history, outcomes, receipts and finished
attempts' times are left out: no guard reads them. A finished attempt is never live whatever
its times (``is_live`` and ``at_boundary`` need it current:
model/ledgence_tasks/records.py:179-195); a re-sent settlement is compared by content alone
(model/ledgence_tasks/attempts.py:152-157); a time already passed decides only as passed
(the clock never goes back; every guard compares with ``<``/``>=`` against now:
records.py:179-195, acquisition.py:37-41, attempts.py:230-238); sequences decide only
against the cursor (acquisition.py:70-88, attempts.py:102-112). The read-backs compare
everything left out exactly, on every move.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import attrs

from fencepost.spec import ledgence_tasks as spec

from ..tour_graph import Move, Tourist
from .tour_moves import (
    OTHER,
    OTHER_DESCRIPTOR,
    REPORTS,
    SAME,
    Driver,
    acquire,
    attempts_of,
    available_point,
    cancel_task,
    clock_to,
    confirm,
    current_point,
    edge_moves,
    expire_batch,
    extend_session,
    extend_unknown,
    lookup,
    open_session,
    probe,
    read_task,
    renew,
    reopen,
    resend_under_another_id,
    session_end,
    session_of,
    settle,
    submit,
    task_of,
    with_a_forged,
)

FAR = 1_000_000
"""A session end further than this from now is ``far`` (see the module's docstring)."""
HALF = spec.LEASE_MS // 2
"""The clock is also sent this far before a lease's end: a renewal there extends it by as
much (before the authority deadline caps it)."""


def _rel(at: int, now: int) -> int:
    return max(at - now, -1)


def _settled(att: Any) -> str | None:
    settlement = att.snapshot.settlement
    return None if settlement is None else settlement.operation_id


@attrs.frozen(eq=False)
class LedgenceScope:
    """The ledgence-tasks scope (see the module's docstring)."""

    name: str = "ledgence-tasks"
    tasks: int = 2
    consumers: int = 2
    edges: bool = True
    near_session: bool = True
    reports: tuple[str, ...] = REPORTS
    deadlines: bool = True
    after: bool = True
    own_store: bool = True
    first: Any = None
    """A smaller scope whose tour runs first (see
    :class:`fencepost.scenarios.tour_graph.Scope`)."""

    @property
    def bound(self) -> str:
        return (f"1 session, {self.consumers} consumer{'s' if self.consumers > 1 else ''}, "
                f"{self.tasks} task{'s' if self.tasks > 1 else ''} in one queue (2 attempts "
                "each, timeout 60 s, retry delay 5 s); sequences: the next, the same, one "
                "skipped, one back; owners of the current attempt and the one before; five "
                "settlements; the clock to each boundary -1/0/+1 ms"
                + ("; arguments at their edges" if self.edges else "")
                + ("" if self.first is None else f"; {self.first.name}'s tour first"))

    def start(self, prefix: str) -> Driver:
        return Driver(prefix)

    # -- the abstraction -----------------------------------------------------------------

    def abstract(self, driver: Driver, t: Tourist) -> Hashable:
        now, state = t.now, t.state
        session = session_of(t)
        if session is None:
            where: Hashable = None
        else:
            left = session.expires_at - now
            where = "far" if left > FAR else max(left, -1)
        tasks: list[Hashable] = []
        keys: list[tuple[int, int, int]] = []
        for i in range(self.tasks):
            rec = task_of(t, driver, i)
            if rec is None:
                tasks.append(None)
                continue
            snap = rec.snapshot
            keys.append((snap.available_at, snap.submitted_at, i))
            attempts = attempts_of(t, snap.task_id)
            current = snap.current_attempt_id
            ended = tuple((a.snapshot.state, a.snapshot.quiescence, _settled(a))
                          for a in attempts if a.attempt_id != current)
            live: Hashable = None
            if current is not None:
                a = state.attempts[current].snapshot
                last = a.last_renewal
                live = (a.lease.owner.consumer_id, a.state, a.quiescence, _settled(
                    state.attempts[current]), a.execution_may_have_started,
                    None if last is None else (min(last.sequence, 2 if self.edges else 1),
                                               last.intent),
                    _rel(a.lease.expires_at, now), _rel(a.deadline, now),
                    _rel(a.authority_deadline, now))
            tasks.append((snap.state, snap.attempt_count, snap.cancel_requested_at is not None,
                          _rel(snap.available_at, now) if snap.state == "queued" else None,
                          live, ended))
        order = tuple(i for *_, i in sorted(keys))
        cursors: list[Hashable] = []
        for c in range(self.consumers):
            cursor = None if session is None else state.cursors.get((session.id, c))
            if cursor is None:
                cursors.append(None)
                continue
            held: Hashable = None
            if cursor.attempt is not None:
                att = state.attempts[cursor.attempt]
                held = (self._index(driver, t, att.task_id), att.snapshot.event.attempt_no)
            cursors.append((min(cursor.sequence, 2), held))
        return where, tuple(tasks), order, tuple(cursors)

    def _index(self, driver: Driver, t: Tourist, task_id: str) -> int:
        for i in range(self.tasks):
            rec = task_of(t, driver, i)
            if rec is not None and rec.snapshot.task_id == task_id:
                return i
        raise ValueError(task_id)

    # -- the moves -----------------------------------------------------------------------

    def moves(self, driver: Driver, t: Tourist) -> Sequence[Move]:
        session = session_of(t)
        out: list[Move] = []
        if session is None:
            out += [Move("open the session", open_session),
                    Move("extend an unknown session", extend_unknown)]
        else:
            out.append(Move("extend the session", extend_session))
        for i in range(self.tasks):
            out += self._task_moves(driver, t, i)
        if session is not None:
            for c in range(self.consumers):
                out += self._consumer_moves(t, session, c)
        out.append(Move("expire_batch 100", expire_batch(100)))
        out += self._clock_moves(driver, t)
        if "durable" in t.capabilities:
            out.append(Move("reopen the store", reopen))
        if self.edges:
            out += edge_moves(driver, t, session)
        return out

    def _task_moves(self, driver: Driver, t: Tourist, i: int) -> list[Move]:
        rec = task_of(t, driver, i)
        out = [Move(f"submit t{i}", submit(i, other=False))]
        if rec is None:
            return out
        if rec.snapshot.current_attempt_id is None or self.edges:  # the key's rules read
            # no attempt: once for each other state of the task is enough in the ci scope
            out += [Move(f"submit t{i}'s key with another input", submit(i, other=True)),
                    Move(f"submit t{i} again with another archive",
                         submit(i, descriptor=OTHER_DESCRIPTOR)),
                    Move(f"look t{i}'s key up", lookup(i))]
        out += [Move(f"read t{i}", read_task(i)), Move(f"cancel t{i}", cancel_task(i))]
        attempts = attempts_of(t, rec.snapshot.task_id)
        roles: list[tuple[str, int]] = []
        if attempts:
            roles.append((f"t{i}'s last attempt", 0))
        if len(attempts) > 1:
            roles.append((f"t{i}'s attempt before", 1))
        for said, back in roles:
            att = attempts[-1 - back]
            last = att.snapshot.last_renewal
            seq = 0 if last is None else last.sequence
            renewals = [("the next sequence", 1, spec.KEEP_ALIVE)]
            current = att.attempt_id == rec.snapshot.current_attempt_id
            if current:  # an attempt that ended is refused before its sequence is read
                renewals += [("the next sequence to dispatch", 1, spec.DISPATCH),
                             ("a sequence skipped", 2, spec.KEEP_ALIVE)]
            if current and last is not None:
                renewals += [("the same sequence", 0, SAME),
                             ("the same sequence, the other intent", 0, OTHER)]
            if current and seq >= 2 and self.edges:
                renewals.append(("the sequence before", -1, spec.KEEP_ALIVE))
            out += [Move(f"renew {said} with {what}", renew(i, back, step, intent))
                    for what, step, intent in renewals]
            out += [Move(f"settle {said}: {kind}", settle(i, back, kind))
                    for kind in self.reports]
            out.append(Move(f"confirm quiescence of {said}", confirm(i, back)))
        if attempts:
            last = f"t{i}'s last attempt"
            out += [Move(f"confirm quiescence of {last} with a forged lease id",
                         confirm(i, 0, forged=True)),
                    Move(f"renew {last} with a forged task id", with_a_forged(i, "renew task")),
                    Move(f"settle {last} with a forged attempt id: success",
                         with_a_forged(i, "settle attempt")),
                    Move(f"settle {last}: success naming another archive",
                         with_a_forged(i, "settle digest"))]
            if attempts[-1].snapshot.settlement is not None:
                out.append(Move(f"settle {last}: its settlement under another operation id",
                                resend_under_another_id(i)))
        return out

    def _consumer_moves(self, t: Tourist, session: spec.WorkerSession, c: int) -> list[Move]:
        cursor = t.state.cursors.get((session.id, c))
        at = 0 if cursor is None else cursor.sequence
        out = [Move(f"c{c} acquires with its next sequence", acquire(c, 1)),
               Move(f"c{c} acquires with a sequence skipped", acquire(c, 2)),
               Move(f"c{c} probes with its next sequence, waiting", probe(c, 1, False)),
               Move(f"c{c} probes with its next sequence, finishing", probe(c, 1, True))]
        if cursor is None or self.edges:  # refused before the cursor is read
            out.append(Move(f"c{c} probes with its next sequence, the deadline passed",
                            probe(c, 1, True, passed=True)))
        if at:
            out.append(Move(f"c{c} replays its sequence", acquire(c, 0)))
        if at >= 2:
            out.append(Move(f"c{c} acquires with the sequence before", acquire(c, -1)))
        return out

    def _clock_moves(self, driver: Driver, t: Tourist) -> list[Move]:
        points: list[tuple[str, Any]] = []
        session = session_of(t)
        if session is not None:
            points.append(("the session's end", session_end))
        for i in range(self.tasks):
            rec = task_of(t, driver, i)
            if rec is None:
                continue
            if rec.snapshot.state == "queued":
                points.append((f"t{i}'s available_at", available_point(i)))
            if rec.snapshot.current_attempt_id is not None:
                points.append((f"t{i}'s lease end", current_point(i, "lease")))
                if self.deadlines:
                    points += [(f"t{i}'s deadline", current_point(i, "deadline")),
                               (f"t{i}'s authority deadline", current_point(i, "authority"))]
        out = []
        for said, when in points:
            at = when(driver, t)
            deltas = [(-1, " -1 ms"), (0, ""), (1, " +1 ms")]
            if said.endswith("lease end"):  # a renewal there extends the lease (RENEW-001)
                deltas.insert(0, (-HALF, f" -{HALF // 1000} s"))
            for delta, tail in deltas:
                if (said == "the session's end" and delta and not self.near_session
                        or delta > 0 and not self.after):
                    continue
                if at + delta > t.now:
                    out.append(Move(f"the clock to {said}{tail}", clock_to(when, delta)))
        return out


_CI = LedgenceScope(name="ledgence-tasks (ci)", tasks=1, consumers=1, edges=False,
                    near_session=False, deadlines=False, after=False)
SCOPES = {
    "full": LedgenceScope(tasks=1, consumers=1, first=_CI),
    "ci": _CI,
}
"""The named scopes: ``full`` (the bench's: 4,799 states, 227,347 edges; every clock boundary
and argument edge; it runs ``ci``'s tour first) and ``ci`` (1,056 states, 33,279 edges: lease
ends and available_at only, no argument edges)."""
