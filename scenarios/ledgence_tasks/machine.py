"""The ledgence-tasks state machine: submitters, workers, clients and a recovery scanner.

Two scopes share one queue name; workers open sessions of one to three consumers (0 and -1
too), acquire with the next, the same, an old or a future sequence (some through
``probe_acquisition`` without finishing empty or with a passed deadline), renew with keep-alive
or dispatch intent, settle with every kind of report and quiescence (re-sending earlier
settlements, forging owners in one field, an empty lease or task id among them), and confirm
quiescence; clients read, page history (after -1 too) and cancel; a scanner runs
``expire_batch`` (limits 0, 101 and -1 too); the clock jumps to exact lease, authority,
deadline, retry and session boundaries. Each step is one integer Hypothesis draws, read
through the table :data:`PICKS` (:mod:`..one_draw`: the rule and its arguments, with stated
weights). Every answer, and every task the step changed (its latest attempt and history too), is
compared with the model after every step.
"""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import strategies as st
from hypothesis.stateful import initialize

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..one_draw import OneDrawMachine, Pick
from .calls import (
    DESCRIPTOR,
    OTHER,
    SCOPE,
    app_failure,
    command,
    failure,
    owner,
    success,
    task_input,
)

SCOPES = (SCOPE, OTHER)
DATA: tuple[Any, ...] = ({"n": 1}, {"n": 1.0}, {"n": 1, "z": -0.0}, {"z": -0.0, "n": 1},
                         {"n": [1, 2]})
POLICIES = (None, spec.RetryPolicy(3, 5000), spec.RetryPolicy(2, 0), spec.RetryPolicy(1, 0))
TIMEOUTS = (None, 60_000, 120_000)
FILTERS = (spec.TaskFilters(), spec.TaskFilters(), spec.TaskFilters(state="queued"),
           spec.TaskFilters(state="active"), spec.TaskFilters(correlation_key="order-7"),
           spec.TaskFilters(correlation_key=""), spec.TaskFilters(queue="emails"))
QUEUE = "emails"
ROUTED = spec.ROUTED_QUEUE
"""Routed to external dispatch in a store that declares ``dispatch``: claimed from, never
acquired from (LDG-DISPATCH-009); a queue like another in one that does not."""
QUEUES = (QUEUE, QUEUE, QUEUE, ROUTED)
BOOLEANS = (False, True)

_SCOPE = ("scope", SCOPES)
_N = ("n", tuple(range(10)))
_M = ("m", tuple(range(10)))
_CONFIRMED = ("quiescence", (spec.CONFIRMED, spec.CONFIRMED, spec.UNCONFIRMED))
PICKS = (
    Pick("read", 8, (_SCOPE, _N, ("read", (spec.Status, spec.Result, spec.Inspect)))),
    Pick("lookup", 3, (_SCOPE, ("key", ("a", "b", "never")))),
    Pick("inspect_attempt", 4, (_SCOPE, _N, _M)),
    Pick("history", 4, (_SCOPE, _N, ("after", (0, 0, 1, 2, 5, -1)))),
    Pick("submit", 5, (_SCOPE, ("key", ("a", "b", "c", "d")), ("data", DATA),
                       ("policy", POLICIES), ("timeout", TIMEOUTS), ("queue", QUEUES))),
    Pick("cancel", 3, (_SCOPE, _N)),
    Pick("open_session", 3, (_SCOPE, ("concurrency", (0, 1, 2, 3, -1)), ("queue", QUEUES))),
    Pick("extend_session", 3, (_N,)),
    Pick("acquire", 5, (_N, ("consumer", (0, 0, 1, 2, 3)),
                        ("offset", (1, 1, 1, 1, 0, 0, -1, 2)))),
    Pick("probe", 4, (_N, ("consumer", (0, 1)), ("offset", (1, 1, 0)),
                      ("finish_empty", BOOLEANS),
                      ("deadline", (spec.CONTROL_REQUEST_TIMEOUT_MS,) * 3 + (1, 0)))),
    Pick("acquire_next", 6, (("consumer", (0, 1, 2)),)),
    Pick("renew_current", 5, (_M, ("intent", (spec.KEEP_ALIVE, spec.DISPATCH)))),
    Pick("settle_current", 5, (_M, ("report", ("success", "app", "io", "unavailable",
                                               "integrity")), _CONFIRMED)),
    Pick("renew", 5, (_M, ("offset", (1, 1, 1, 0, 0, -1, 2)),
                      ("intent", (spec.KEEP_ALIVE, spec.KEEP_ALIVE, spec.DISPATCH)),
                      ("forge", ("none",) * 6 + ("generation", "consumer", "lease")))),
    Pick("settle", 5, (_M, ("report", ("success", "success", "app", "io", "timed_out",
                                       "integrity")), _CONFIRMED,
                       ("operation", ("op-1", "op-1", "op-2")),
                       ("forge", ("none",) * 6 + ("generation", "scope", "task")))),
    Pick("resend_settlement", 3, (("k", tuple(range(10))),)),
    Pick("confirm_quiescence", 4, (_M, ("forge", ("none",) * 5 + ("consumer", "lease")))),
    Pick("list_first_page", 3, (_SCOPE, ("filters", FILTERS), ("limit", (1, 2, 3, 50)))),
    Pick("list_next_page", 3, (("limit", (1, 2, 3)),
                               ("misuse", ("none",) * 6 + ("scope", "filters")))),
    Pick("claim_dispatch", 4, (_N, ("consumer", (0, 1, 2)), ("offset", (1, 1, 1, 0, 2)),
                               ("generation", (1, 1, 0, -1, 2)))),
    Pick("expire_batch", 3, (("limit", (1, 2, 100, 100, 0, 101, -1)),)),
    Pick("to_boundary", 5, (_M, ("which", ("lease", "lease", "authority", "deadline",
                                           "available", "session")),
                            ("delta", (0, 0, -1, 1)))),
    Pick("reopen", 2, needs="durable"),
    Pick("advance", 5, (("ms", (1, 1000, 10_000, spec.LEASE_MS, spec.SESSION_MS)),)),
)
"""What a step may do and how often (percent of the steps; reopen only where the store can be
reopened): a read first, the step every shrunk step tends to; a clock move last, where the
engine's largest constants land. A step that needs what the state does not have (a live
attempt, a settlement to re-send, a cursor) falls back to its general form (renew, settle, the
first page) or, for a re-send, does nothing."""


class LedgenceMachine(OneDrawMachine):
    """Each example on a store of its own (acquisition and recovery see the whole store)."""

    picks = PICKS
    own_store = True

    def __init__(self) -> None:
        super().__init__()
        self.settlements: list[spec.SettleCommand] = []
        self.walk: tuple[spec.Scope, spec.TaskFilters] | None = None  # a cursor is bound

    @initialize(concurrency=st.sampled_from([1, 2, 3]), tasks=st.integers(1, 3),
                routed=st.integers(0, 2))
    def workers_and_work(self, concurrency: int, tasks: int, routed: int) -> None:
        """Every example starts with a session of the first scope and some queued work; and
        with ``routed``, a session of the routed queue and that many tasks of it to claim."""
        self.h.apply("worker", spec.OpenSession(SCOPE, QUEUE, concurrency))
        if routed:
            self.h.apply("worker", spec.OpenSession(SCOPE, ROUTED, 2))
        for k in range(tasks + routed):
            self.h.apply("client", spec.AcceptResolvedSubmission(
                spec.SubmitCommand(f"{self.prefix}-init{k}", task_input(
                    SCOPE, queue=QUEUE if k < tasks else ROUTED,
                    retry_policy=spec.RetryPolicy(2, 0), attempt_timeout_ms=60_000)),
                DESCRIPTOR))
            self.h.advance(1)

    # -- names the model knows -----------------------------------------------------------------

    def _names(self, prefix: str) -> list[str]:
        return [k for k in self.h.bindings if k.startswith(prefix)]

    def task(self, n: int) -> Ref | str:
        names = self._names("task#")
        return Ref(names[n % len(names)]) if names else "task_never_minted"

    def attempt(self, n: int) -> str | None:
        names = [a for a in self._names("attempt#") if a in self.h.state.attempts]
        if not names:
            return None
        current = [a for a in names
                   if self.h.state.attempts[a].snapshot.state == "active"]
        pool = current if current and n % 3 else names
        return pool[n % len(pool)]

    def session(self, n: int) -> str:
        names = self._names("ws#")
        return names[n % len(names)] if names else "ws_never_minted"

    # -- submitters and clients ----------------------------------------------------------------

    def submit(self, scope: spec.Scope, key: str, data: object,
               policy: spec.RetryPolicy | None, timeout: int | None, queue: str) -> None:
        changes: dict[str, Any] = {"data": data, "queue": queue}
        if policy is not None:
            changes["retry_policy"] = policy
        if timeout is not None:
            changes["attempt_timeout_ms"] = timeout
        self.h.apply("client", spec.AcceptResolvedSubmission(
            spec.SubmitCommand(f"{self.prefix}-{key}", task_input(scope, **changes)),
            DESCRIPTOR))

    def lookup(self, scope: spec.Scope, key: str) -> None:
        self.h.apply("client", spec.LookupSubmission(scope, f"{self.prefix}-{key}"))

    def read(self, scope: spec.Scope, n: int, read: type) -> None:
        self.h.apply("client", read(scope, self.task(n)))

    def inspect_attempt(self, scope: spec.Scope, n: int, m: int) -> None:
        attempt = self.attempt(m)
        self.h.apply("client", spec.InspectAttempt(
            scope, self.task(n), Ref(attempt) if attempt else "attempt_never_minted"))

    def history(self, scope: spec.Scope, n: int, after: int) -> None:
        self.h.apply("client", spec.History(scope, self.task(n), after))

    def cancel(self, scope: spec.Scope, n: int) -> None:
        self.h.apply("client", spec.Cancel(scope, self.task(n)))

    # -- sessions and acquisition --------------------------------------------------------------

    def open_session(self, scope: spec.Scope, concurrency: int, queue: str) -> None:
        self.h.apply("worker", spec.OpenSession(scope, queue, concurrency))

    def extend_session(self, n: int) -> None:
        ws = self.session(n)
        self.h.apply("worker", spec.ExtendSession(Ref(ws) if "#" in ws else ws))

    def _command(self, n: int, consumer: int, offset: int,
                 ws: str | None = None) -> spec.AcquireCommand:
        ws = self.session(n) if ws is None else ws
        session = self.h.state.sessions.get(ws)
        scope, queue = (session.scope, session.queue) if session is not None else (SCOPE, QUEUE)
        cursor = self.h.state.cursors.get((ws, consumer))
        seq = max(0, (cursor.sequence if cursor is not None else 0) + offset)
        return command(ws, consumer, seq, scope=scope, queue=queue)

    def acquire(self, n: int, consumer: int, offset: int) -> None:
        self.h.apply(f"consumer{consumer}", spec.Acquire(self._command(n, consumer, offset)))

    def probe(self, n: int, consumer: int, offset: int, finish_empty: bool,
              deadline: int) -> None:
        self.h.apply(f"consumer{consumer}", spec.ProbeAcquisition(
            self._command(n, consumer, offset), finish_empty, self.h.now + deadline))

    def acquire_next(self, consumer: int) -> None:
        """The well-behaved worker: the first session's consumer asks for the next task."""
        self.h.apply(f"consumer{consumer}", spec.Acquire(self._command(0, consumer, 1)))

    def live_attempts(self) -> list[str]:
        state = self.h.state
        return [a for a in self._names("attempt#") if a in state.attempts
                and state.attempts[a].snapshot.state == "active"
                and state.tasks[state.attempts[a].task_id].snapshot.current_attempt_id == a]

    def renew_current(self, m: int, intent: str) -> None:
        """The well-behaved worker renews its current attempt with the next sequence (with no
        live attempt: a renew of any attempt, as :meth:`renew`)."""
        live = self.live_attempts()
        if not live:
            self.renew(m, 1, intent, "none")
            return
        self.renew_next(live[m % len(live)], intent)

    def renew_next(self, attempt: str, intent: str) -> None:
        last = self.h.state.attempts[attempt].snapshot.last_renewal
        seq = (last.sequence if last is not None else 0) + 1
        self.h.apply("worker", spec.Renew(spec.RenewCommand(owner(self.h, attempt), seq,
                                                            intent)))

    def settle_current(self, m: int, report: str, quiescence: str) -> None:
        """The well-behaved worker settles its current attempt (with no live attempt: a settle
        of any attempt, as :meth:`settle`)."""
        live = self.live_attempts()
        if not live:
            self.settle(m, report, quiescence, "op-1", "none")
            return
        self.settle_as(live[m % len(live)], report, quiescence, "op-1", "none")

    # -- owners --------------------------------------------------------------------------------

    def _owner(self, attempt: str, forge: str) -> spec.LeaseOwner:
        real = owner(self.h, attempt)
        forged: dict[str, dict[str, Any]] = {
                  "none": {}, "generation": {"generation": real.generation + 1},
                  "consumer": {"consumer_id": real.consumer_id + 1},
                  # edges the seed only compares: an empty id matches no owner (or no task)
                  "lease": {"lease_id": ""}, "task": {"task_id": ""},
                  "scope": {"scope": OTHER if real.scope == SCOPE else SCOPE}}
        return attrs.evolve(real, **forged[forge])

    def renew(self, m: int, offset: int, intent: str, forge: str) -> None:
        attempt = self.attempt(m)
        if attempt is None:
            return
        last = self.h.state.attempts[attempt].snapshot.last_renewal
        seq = max(0, (last.sequence if last is not None else 0) + offset)
        self.h.apply("worker", spec.Renew(spec.RenewCommand(self._owner(attempt, forge), seq,
                                                            intent)))

    def settle(self, m: int, report: str, quiescence: str, operation: str, forge: str) -> None:
        attempt = self.attempt(m)
        if attempt is not None:
            self.settle_as(attempt, report, quiescence, operation, forge)

    def settle_as(self, attempt: str, report: str, quiescence: str, operation: str,
                  forge: str) -> None:
        reports = {"success": lambda: success(self.h, attempt),
                   "app": lambda: app_failure(self.h, attempt)}
        made = reports.get(report, lambda: failure(self.h, attempt, report))()
        cmd = spec.SettleCommand(self._owner(attempt, forge), operation, made, quiescence)
        self.settlements.append(cmd)
        self.h.apply("worker", spec.Settle(cmd))

    def resend_settlement(self, k: int) -> None:
        if not self.settlements:
            return
        self.h.apply("worker", spec.Settle(self.settlements[k % len(self.settlements)]))

    def confirm_quiescence(self, m: int, forge: str) -> None:
        attempt = self.attempt(m)
        if attempt is not None:
            self.h.apply("worker", spec.ConfirmQuiescence(self._owner(attempt, forge)))

    # -- discovery and targeted dispatch -------------------------------------------------------

    def _page(self, scope: spec.Scope, filters: spec.TaskFilters, limit: int,
              cursor: Any) -> None:
        out = self.h.apply("reader", spec.ListTasks(scope, spec.TaskListQuery(filters, limit,
                                                                              cursor)),
                           bind="cursor")
        more = getattr(getattr(out, "value", None), "next_cursor", None) is not None
        self.walk = (scope, filters) if more else None

    def list_first_page(self, scope: spec.Scope, filters: spec.TaskFilters, limit: int) -> None:
        self._page(scope, filters, limit, None)

    def list_next_page(self, limit: int, misuse: str) -> None:
        """The next page of the walk under way (with none: a first page, no filters)."""
        if self.walk is None:
            self.list_first_page(SCOPE, FILTERS[0], limit)
            return
        scope, filters = self.walk
        if misuse == "scope":
            scope = OTHER if scope == SCOPE else SCOPE
        elif misuse == "filters":
            filters = attrs.evolve(filters, queue="reports")
        self._page(scope, filters, limit, Ref("cursor"))

    def claim_dispatch(self, n: int, consumer: int, offset: int, generation: int) -> None:
        task = self.task(n)
        rec = self.h.state.tasks.get(task.name) if isinstance(task, Ref) else None
        count = rec.snapshot.attempt_count if rec is not None else 0
        queue = rec.snapshot.input.queue if rec is not None else ROUTED
        own = [ws for ws in self._names("ws#") if (s := self.h.state.sessions.get(ws))
               is not None and s.queue == queue]  # a session of the task's queue, if any
        acquisition = self._command(0, consumer, offset, own[n % len(own)] if own else None)
        target = spec.DispatchRef(acquisition.scope, queue, task,  # type: ignore[arg-type]
                                  max(1, count + generation))
        self.h.apply(f"consumer{consumer}", spec.ClaimDispatch(spec.ClaimCommand(acquisition,
                                                                                 target)))

    # -- recovery and time ---------------------------------------------------------------------

    def expire_batch(self, limit: int) -> None:
        self.h.apply("scanner", spec.ExpireBatch(limit))

    def advance(self, ms: int) -> None:
        self.h.advance(ms)

    def to_boundary(self, m: int, which: str, delta: int) -> None:
        """Jump to an exact boundary of an attempt, a retry or a session (or 1 ms around it)."""
        state = self.h.state
        attempt = self.attempt(m)
        at: int | None = None
        if which in ("lease", "authority", "deadline") and attempt is not None:
            snap = state.attempts[attempt].snapshot
            at = {"lease": snap.lease.expires_at, "authority": snap.authority_deadline,
                  "deadline": snap.deadline}[which]
        elif which == "available":
            later = [r.snapshot.available_at for r in state.tasks.values()
                     if r.snapshot.state == "queued" and r.snapshot.available_at > self.h.now]
            at = min(later) if later else None
        elif which == "session" and state.sessions:
            at = min(s.expires_at for s in state.sessions.values())
        if at is not None and at + delta > self.h.now:
            self.h.advance(at + delta - self.h.now)

    def reopen(self) -> None:
        # Skipped when it would tell nothing (the step stays drawn, so shrinking keeps the
        # codes after a deleted step as they were).
        if self.h.reopen_would_tell():
            self.h.reopen()


machine_for = LedgenceMachine.bound_to
