"""How the snodo-tasks tour's moves call (see :mod:`.tour`): the walk's bookkeeping
(:class:`Driver`: the leases each worker was given, the events applied), the accesses and
leases a call presents, and the events it sends.

Accesses and leases are values only a store mints. On the store (a
:class:`~fencepost.scenarios.tour.StoreTourist`) a call names them by :class:`Ref`, bound by
the harness when the store minted them (an access is authorized the first time a walk needs
it); on the model alone (while exploring) it passes their meanings, as the harness would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from fencepost.model.snodo_tasks.records import BEFORE_REOPEN, MAIN, AccessM, LeaseM
from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import Forged, ForgedMeaning, Ref
from fencepost.spec.outcome import Ok, Outcome

from ..harness import Harness
from ..tour_graph import Tourist

HOME, OTHER = "acme", "globex"
"""The tasks' tenant, and another one (whose accesses must see nothing)."""
WORKERS = ("w0", "w1")
TASKS = ("k0", "k1")
POLICY = (1, 0)
"""Every task's retry delays: a first retry deferred 1 ms, a second due at once (a delay of 0
is a delay, SNODO-RED-004), a third exhausted (SNODO-RED-005)."""


@attrs.frozen
class Applied:
    """An event the store applied, which of :data:`DATA` it is (``what``) and how it was sent
    (``via``: ``lease``, ``update`` or ``cancel``), so that a replay presents the same kind of
    authority."""

    event: spec.Event
    what: str
    via: str


@attrs.frozen
class Driver:
    """A walk's bookkeeping: its id prefix, per worker the leases it was given (name and
    meaning, oldest first; renewals too), the events applied (oldest first) and how many
    names were made."""

    prefix: str
    leases: tuple[tuple[tuple[str, LeaseM], ...], ...] = ((), ())
    applied: tuple[Applied, ...] = ()
    made: int = 0

    def task(self, i: int) -> str:
        return f"{self.prefix}-{TASKS[i]}"

    def index(self, task_id: str) -> int:
        return next(i for i in range(len(TASKS)) if self.task(i) == task_id)

    def mine(self, w: int, back: int) -> tuple[str, LeaseM] | None:
        """Worker ``w``'s last lease (``back`` 0) or the one before (1)."""
        held = self.leases[w]
        return held[-1 - back] if len(held) > back else None

    def name(self, stem: str) -> tuple[Driver, str]:
        return attrs.evolve(self, made=self.made + 1), f"{stem}{self.made + 1}"

    def given(self, w: int, name: str, lease: LeaseM) -> Driver:
        held = list(self.leases)
        held[w] = (*held[w], (name, lease))
        return attrs.evolve(self, leases=tuple(held))

    def took(self, applied: Applied) -> Driver:
        return attrs.evolve(self, applied=(*self.applied, applied))

    def reopened(self) -> Driver:
        """After a reopen: every lease held is of the last boot (void, as the harness binds
        it on the store)."""
        return attrs.evolve(self, leases=tuple(
            tuple((name, attrs.evolve(m, store=BEFORE_REOPEN) if m.store == MAIN else m)
                  for name, m in held) for held in self.leases))


def harness(t: Tourist) -> Harness | None:
    """The store's harness when ``t`` walks on the store; None on the model alone."""
    h = getattr(t, "h", None)
    return h if isinstance(h, Harness) else None


def call(t: Tourist, actor: str, op: Any, bind: str | None = None) -> Outcome:
    """Make ``op``; on the store, bind the value its answer mints as ``bind``."""
    h = harness(t)
    out: Outcome = t.apply(actor, op) if h is None else h.apply(actor, op, bind=bind)
    return out


def minted(t: Tourist, out: Outcome, name: str) -> LeaseM | None:
    """The meaning of the lease an answer minted (bound as ``name`` on the store)."""
    if not isinstance(out, Ok) or out.value is None:
        return None
    h = harness(t)
    if h is not None:
        bound = h.bindings.get(name)
        return bound[0] if bound is not None and isinstance(bound[0], LeaseM) else None
    value = out.value.lease if isinstance(out.value, spec.Claimed) else out.value
    meaning = getattr(value, "meaning", None)
    return meaning if isinstance(meaning, LeaseM) else None


def access(t: Tourist, d: Driver, kind: str, i: int, tenant: str | None = HOME) -> Any:
    """An access for ``kind`` on task ``i`` in ``tenant``'s scope (authorized on the store the
    first time the walk presents it)."""
    task_id = d.task(i)
    h = harness(t)
    if h is None:
        return AccessM(MAIN, tenant, kind, task_id)
    name = f"{kind}:{tenant}:{task_id}"
    bound = h.bindings.get(name)
    if bound is None or bound[0].store != MAIN:  # none yet, or one of the last boot
        h.apply("client", spec.Authorize(spec.Context(tenant), spec.Action(kind, task_id)),
                bind=name)
    return Ref(name)


def observed(t: Tourist, d: Driver, i: int) -> None:
    """Bind the get-access the harness reads task ``i`` back through (before its create)."""
    h = harness(t)
    if h is not None and f"obs:{d.task(i)}" not in h.bindings:
        got = access(t, d, "get", i)
        h.alias(f"obs:{d.task(i)}", got.name)


def lease(t: Tourist, held: tuple[str, LeaseM] | None) -> Any:
    """What a call presents for a lease the walk holds (a forged one for None)."""
    if held is None:
        return ForgedMeaning("lease") if harness(t) is None else Forged("lease")
    return held[1] if harness(t) is None else Ref(held[0])


def forged_access(t: Tourist) -> Any:
    """An access nobody issued (what a call presents for one)."""
    return ForgedMeaning("access") if harness(t) is None else Forged("access")


def new_task(t: Tourist, task_id: str, ttl_ms: int | None) -> spec.Task:
    return spec.Task(task_id, spec.WORKING, None, t.now, t.now, ttl_ms, 250, {}, None, None)


def new_work(task_id: str) -> spec.Work:
    return spec.Work(f"idem-{task_id}", "render", {"page": 1}, POLICY)


DATA: Mapping[str, Mapping[str, Any]] = {
    "input_requested q0": {"key": "q0", "request": {"method": "elicitation/create", "n": 1}},
    "input_requested q1": {"key": "q1", "request": {"method": "elicitation/create", "n": 1}},
    "retry_requested": {"error": {"code": 1}, "statusMessage": "try again"},
    "failed": {"error": {"code": 1}, "statusMessage": "gave up"},
    "completed": {"result": {"n": 1}},
    "input_responses_accepted q0": {"responses": {"q0": {"n": 1}}},
    "input_responses_accepted q1": {"responses": {"q1": {"n": 1}}},
    "cancelled": {},
}
"""Each event the tour sends, by its kind and key: every one but cancelled holds a 1, which a
reuse of its id turns into 1.0 (another event, SNODO-TX-004)."""


def loosened(value: Any) -> Any:
    """``value`` with every integer 1 made 1.0 (equal to ``==``, another event to the seed)."""
    if isinstance(value, Mapping):
        return {k: loosened(v) for k, v in value.items()}
    if value == 1 and type(value) is int:
        return 1.0
    return value


def fresh_event(d: Driver, what: str) -> tuple[Driver, spec.Event]:
    d, name = d.name(f"{d.prefix}-e")
    return d, spec.Event(name, what.split(" ")[0], DATA[what])


def revision(t: Tourist, d: Driver, i: int, ahead: bool = False) -> int:
    agg = t.state.get(d.task(i))
    rev = agg.snapshot.revision if agg is not None else 0
    return rev + 1 if ahead else rev


def send(t: Tourist, d: Driver, actor: str, ev: spec.Event, what: str, via: str,
         authority: Any, ahead: bool = False) -> Driver:
    """Send ``ev`` to k0; an applied event is kept for replays."""
    out = call(t, actor, spec.TransitionOp(d.task(0), revision(t, d, 0, ahead), ev, authority))
    if isinstance(out, Ok) and getattr(out.value, "outcome", None) == spec.APPLIED:
        d = d.took(Applied(ev, what, via))
    return d


def authority_for(t: Tourist, d: Driver, via: str) -> Any:
    """The authority a replay presents: w0's last lease (the worker at work), or the access
    of the same kind."""
    if via == "lease":
        return spec.WorkerAuthority(lease(t, d.mine(0, 0)))
    return spec.RequestAuthority(access(t, d, via, 0))
