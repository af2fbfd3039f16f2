"""Named scripted scenarios: every case the snodo stores' own tests cover, and more.
Over 500 lines: a catalogue of small independent scenarios; their order is the order they
register in, which numbers their ids, so they stay in one module.

Each scenario is a plain function of a :class:`Harness`; the model supplies every expected
answer, so a scenario only says what happens, never what should come back. Checks that see the
whole store (claim_next, reap, capacity) run on a forked world of their own.
"""

from __future__ import annotations

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.opaque import Forged, Ref

from ..checks import Scenarios
from ..harness import Harness, blamed_on
from .edges import arguments_at_their_edges
from .steps import (
    ASK,
    DONE,
    FAILURE,
    STOP,
    TENANT,
    asking,
    authorized,
    created,
    event,
    fenced,
    forked,
    new_task,
    observed,
    refused_everywhere,
    request,
    smuggled,
    work,
    worker,
)
from .values import values_read_back_exactly

SCENARIOS = Scenarios()
scenario = SCENARIOS.register



@scenario()
def access_bound_to_action(h: Harness, p: str) -> None:
    t, u = f"{p}-a", f"{p}-b"
    created(h, t)
    make = Ref(f"create:{TENANT}:{t}")
    get, update, cancel = (authorized(h, kind, t) for kind in ("get", "update", "cancel"))
    h.apply("client", spec.Get(t, make))  # a create-access cannot read
    h.apply("client", spec.Get(t, update))
    h.apply("client", spec.Get(t, cancel))
    for wrong in (get, update, make):
        request(h, t, 0, STOP, wrong)
    answer = event("answer", "input_responses_accepted", responses={"k": {"name": "Ada"}})
    for wrong in (get, cancel, make):
        request(h, t, 0, answer, wrong)
    observed(h, u)
    for kind in ("get", "update", "cancel"):  # stores nothing: the read-back says not_found
        h.apply("client", spec.Create(new_task(h, u), work(u), authorized(h, kind, u)))
    created(h, u)
    h.apply("w1", spec.Claim(t, "w1", 30_000), bind="lease")
    worker(h, "w1", t, 0, STOP, Ref("lease"))  # a lease is not request access
    worker(h, "w1", t, 0, answer, Ref("lease"))
    h.apply("w1", spec.Get(t, Ref("lease")))
    worker(h, "w1", t, 0, ASK, Ref("lease"))
    request(h, t, 1, answer, update)
    request(h, t, 2, STOP, cancel)


@scenario()
def cross_task_access(h: Harness, p: str) -> None:
    t, u, v = f"{p}-a", f"{p}-b", f"{p}-c"
    created(h, t)
    created(h, u)
    h.apply("w1", spec.Claim(u, "w1", 30_000), bind="lease")
    worker(h, "w1", u, 0, ASK, Ref("lease"))
    for kind in ("get", "update", "cancel"):
        h.apply("client", spec.Get(u, authorized(h, kind, t)))
    answer = event("answer", "input_responses_accepted", responses={"k": {"name": "Ada"}})
    request(h, u, 1, answer, Ref(f"update:{TENANT}:{t}"))
    request(h, u, 1, STOP, Ref(f"cancel:{TENANT}:{t}"))
    observed(h, v)
    h.apply("client", spec.Create(new_task(h, v), work(v), Ref(f"create:{TENANT}:{t}")))
    request(h, u, 1, answer, authorized(h, "update", u))
    request(h, u, 2, STOP, authorized(h, "cancel", u))


@scenario()
def foreign_scope_sees_not_found(h: Harness, p: str) -> None:
    t, u = f"{p}-a", f"{p}-b"
    created(h, t)
    h.apply("w1", spec.Claim(t, "w1", 30_000), bind="lease")
    worker(h, "w1", t, 0, ASK, Ref("lease"))
    answer = event("answer", "input_responses_accepted", responses={"k": {"name": "Mallory"}})
    for intruder in ("umbrella", None):  # no tenant is a scope of its own
        h.apply("client", spec.Get(t, authorized(h, "get", t, intruder)))
        request(h, t, 1, STOP, authorized(h, "cancel", t, intruder))
        request(h, t, 1, answer, authorized(h, "update", t, intruder))
    created(h, u, tenant=None)
    h.apply("client", spec.Get(u, authorized(h, "get", u)))
    request(h, u, 0, STOP, authorized(h, "cancel", u))
    request(h, t, 1, STOP, authorized(h, "cancel", t))


@scenario()
def forged_and_cross_store_values(h: Harness, p: str) -> None:
    t, u, v = f"{p}-a", f"{p}-b", f"{p}-c"
    created(h, t)
    created(h, u)
    observed(h, v)
    h.apply("w1", spec.Claim(t, "w1", 30_000), bind="lt")
    h.apply("w1", spec.Claim(u, "w1", 30_000), bind="lu")
    refused_everywhere(h, t, v, Forged("get"), Forged("cancel"), Forged("create"),
                        Forged("lease"))
    h.apply("w1", spec.WorkerSnapshot(u, Ref("lt")))  # a lease of another task
    worker(h, "w1", u, 0, DONE, Ref("lt"))
    h.apply("w1", spec.WorkerSnapshot(t, authorized(h, "get", t)))  # an access is no lease
    # The same ids, scope, owner, generation and expiry: only the issuing store differs.
    with forked(h, f"-{p}-other") as h2:
        created(h2, t)
        h2.apply("w1", spec.Claim(t, "w1", 30_000), bind="lt")
        for kind in ("get", "cancel"):
            authorized(h2, kind, t)
        authorized(h2, "create", v)
        names = (f"get:{TENANT}:{t}", f"cancel:{TENANT}:{t}", f"create:{TENANT}:{v}", "lt")
        refused_everywhere(h, t, v, *(smuggled(h, h2, n) for n in names))
    h.apply("w1", spec.WorkerSnapshot(t, Ref("lt")))
    worker(h, "w1", t, 0, DONE, Ref("lt"))


@scenario()
def create_get_claim_complete(h: Harness, p: str) -> None:
    t, u, v = f"{p}-a", f"{p}-b", f"{p}-c"
    h.apply("w1", spec.Claim(f"{p}-never", "w1", 30_000))
    created(h, t)
    h.apply("client", spec.Get(t, Ref(f"obs:{t}")))
    h.advance(3)
    h.apply("client", spec.Create(new_task(h, t, 5_000), work(t, (100,)),
                                  authorized(h, "create", t)))
    h.apply("w1", spec.Claim(t, "w1", 30_000), bind="l1")
    h.apply("w2", spec.Claim(t, "w2", 30_000))
    h.apply("w1", spec.Claim(t, "w1", 30_000))  # its own live claim blocks the owner too
    h.advance(5)
    worker(h, "w1", t, 0, DONE, Ref("l1"))
    h.advance(5)
    worker(h, "w1", t, 0, DONE, Ref("l1"))  # a replay: the original answer, at any revision
    worker(h, "w1", t, 1, DONE, Ref("l1"))
    worker(h, "w1", t, 1, event("done", "completed", result={"pages": 4}), Ref("l1"))
    failed = event("fail", "failed", **FAILURE)
    worker(h, "w1", t, 0, failed, Ref("l1"))
    worker(h, "w1", t, 1, failed, Ref("l1"))  # terminal: unchanged
    request(h, t, 1, STOP, authorized(h, "cancel", t))
    h.apply("w2", spec.Claim(t, "w2", 30_000))
    h.apply("client", spec.Create(new_task(h, t), work(t),  # over a terminal task
                                  Ref(f"create:{TENANT}:{t}")))
    created(h, u)
    created(h, v)
    h.apply("w1", spec.Claim(u, "w1", 30_000), bind="lu")
    worker(h, "w1", u, 0, ASK, Ref("lu"))
    worker(h, "w1", u, 1, failed, Ref("lu"))  # clears the open input request
    worker(h, "w1", u, 2, DONE, Ref("lu"))  # failed: unchanged
    h.apply("w2", spec.Claim(u, "w2", 30_000))
    cancel = authorized(h, "cancel", v)
    request(h, v, 0, STOP, cancel)
    request(h, v, 3, STOP, cancel)  # a replayed request: duplicate
    request(h, v, 1, event("stop2", "cancelled"), cancel)  # cancelled: unchanged
    h.apply("w2", spec.Claim(v, "w2", 30_000))


@scenario()
def event_ids_compared_exactly(h: Harness, p: str) -> None:
    """SNODO-TX-004: a replayed id is the same event only when exactly equal (the seed pins
    ^event): the data's 1.0 or true where the first had 1 is another event."""
    t = f"{p}-a"
    created(h, t)
    h.apply("w1", spec.Claim(t, "w1", 30_000), bind="l1")
    first = event("ask", "input_requested", key="k", request={**asking("Name?"), "n": 1})
    worker(h, "w1", t, 0, first, Ref("l1"))
    for loose in (1.0, True):
        again = event("ask", "input_requested", key="k", request={**asking("Name?"), "n": loose})
        worker(h, "w1", t, 1, again, Ref("l1"))
    worker(h, "w1", t, 1, first, Ref("l1"))  # exactly the first: a duplicate


@scenario()
def capacity_limits(h: Harness, p: str) -> None:
    with forked(h, f"-{p}-cap", max_tasks="4", max_active_tasks_per_scope="2") as c:
        a1, a2, a3, b1, b2, b3 = (f"{p}-{x}" for x in ("a1", "a2", "a3", "b1", "b2", "b3"))
        created(c, a1)
        created(c, a2)
        created(c, a3)  # acme's third active task
        with blamed_on(c, "SNODO-CAP-002"):  # another scope is unaffected
            created(c, b1, "umbrella", ttl_ms=1_000)
        created(c, b2, "umbrella")
        created(c, b3, "umbrella")  # four stored
        request(c, a1, 0, STOP, authorized(c, "cancel", a1))
        created(c, a3)  # a terminal task still counts
        c.advance(1_000)
        created(c, a3)  # so does an expired one, until reaped
        c.apply("reaper", spec.Reap())
        with blamed_on(c, "SNODO-CAP-001"):  # a reaped task no longer counts
            created(c, a3)
        created(c, b3, "umbrella")


@scenario()
def ttl_hides_then_reaps(h: Harness, p: str) -> None:
    with forked(h, f"-{p}-ttl") as r:
        a, b, c, d, e, never = (f"{p}-{x}" for x in ("a", "b", "c", "d", "e", "never"))
        start = r.now
        for task_id in (b, a, e):  # out of order: reap still answers sorted ids
            created(r, task_id, ttl_ms=1_000)
        created(r, c, ttl_ms=2_000)
        created(r, d)
        r.apply("w1", spec.Claim(a, "w1", 60_000), bind="la")  # a live claim does not save it
        worker(r, "w1", a, 0, ASK, Ref("la"))
        r.apply("w1", spec.Claim(b, "w1", 60_000), bind="lb")  # nor does a terminal status
        worker(r, "w1", b, 0, DONE, Ref("lb"))
        r.apply("client", spec.Get(never, authorized(r, "get", never)))
        cancel = authorized(r, "cancel", a)
        r.set_time(start + 999)
        with blamed_on(r, "SNODO-TTL-001"):
            r.apply("client", spec.Get(a, Ref(f"obs:{a}")))
        r.apply("reaper", spec.Reap())
        r.set_time(start + 1_000)
        r.apply("client", spec.Get(a, Ref(f"obs:{a}")))
        request(r, a, 1, STOP, cancel)
        r.apply("client", spec.Create(new_task(r, a), work(a),  # expired, not reaped: exists
                                      Ref(f"create:{TENANT}:{a}")))
        r.apply("w3", spec.Claim(e, "w3", 60_000))  # claim has no TTL check; reap wins
        r.apply("reaper", spec.Reap())
        r.apply("reaper", spec.Reap())
        r.apply("client", spec.Get(a, Ref(f"obs:{a}")))
        r.apply("client", spec.Get(c, Ref(f"obs:{c}")))
        with blamed_on(r, "SNODO-TTL-003"):  # no claim, generation, event or input survives
            created(r, a)
            r.apply("w2", spec.Claim(a, "w2", 60_000), bind="la2")
            worker(r, "w2", a, 0, ASK, Ref("la2"))
        r.apply("w1", spec.WorkerSnapshot(a, Ref("la")))
        r.set_time(start + 2_001)
        r.apply("client", spec.Get(c, Ref(f"obs:{c}")))  # 1 ms after its TTL
        r.apply("reaper", spec.Reap())
        r.apply("client", spec.Get(d, Ref(f"obs:{d}")))


@scenario()
def renew_boundary_exact(h: Harness, p: str) -> None:
    t = f"{p}-a"
    created(h, t)
    start = h.now
    h.apply("w1", spec.Claim(t, "w1", 100), bind="l1")
    h.set_time(start + 99)
    h.apply("w2", spec.Claim(t, "w2", 100))
    h.apply("w1", spec.Renew(Ref("l1"), 100), bind="l2")  # now expires at start + 199
    h.apply("w1", spec.Renew(Ref("l1"), 100))  # replaced by l2
    h.apply("w1", spec.WorkerSnapshot(t, Ref("l1")))
    h.set_time(start + 198)
    h.apply("w1", spec.WorkerSnapshot(t, Ref("l2")))
    h.apply("w2", spec.Claim(t, "w2", 100))
    worker(h, "w1", t, 0, ASK, Ref("l2"))
    h.set_time(start + 199)
    h.apply("w1", spec.Renew(Ref("l2"), 100))
    h.apply("w1", spec.WorkerSnapshot(t, Ref("l2")))
    worker(h, "w1", t, 1, DONE, Ref("l2"))
    h.apply("w2", spec.Claim(t, "w2", 1_000), bind="l3")
    h.apply("w1", spec.Release(Ref("l2")))
    h.apply("w2", spec.Renew(Ref("l3"), 10), bind="l4")  # shortened to start + 209
    h.set_time(start + 250)
    with blamed_on(h, "SNODO-LEASE-002"):
        h.apply("w2", spec.WorkerSnapshot(t, Ref("l4")))
        h.apply("w3", spec.Claim(t, "w3", 1_000), bind="l5")
    worker(h, "w3", t, 1, DONE, Ref("l5"))


@scenario()
def retry_defers_claims(h: Harness, p: str) -> None:
    with forked(h, f"-{p}-retry") as r:
        t, u = f"{p}-a", f"{p}-b"
        created(r, t, retry_policy=(2_000,))
        r.apply("w1", spec.Claim(t, "w1", 60_000), bind="l1")
        r.advance(10)
        worker(r, "w1", t, 0, event("retry1", "retry_requested", **FAILURE), Ref("l1"))
        due = r.now + 2_000
        r.apply("w2", spec.Claim(t, "w2", 1_000))  # deferred(2000), before the live claim
        r.apply("w1", spec.Release(Ref("l1")))
        r.apply("w2", spec.ClaimNext("w2", 1_000))
        r.set_time(due - 1)
        r.apply("w2", spec.Claim(t, "w2", 1_000))  # deferred(1)
        r.apply("w2", spec.ClaimNext("w2", 1_000))
        r.set_time(due)
        with blamed_on(r, "SNODO-CLAIM-006"):  # due at retry_at exactly
            r.apply("w2", spec.Claim(t, "w2", 1_000), bind="l2")
        worker(r, "w2", t, 1, event("retry2", "retry_requested", **FAILURE), Ref("l2"))
        r.apply("w3", spec.Claim(t, "w3", 1_000))  # exhausted: failed
        created(r, u, retry_policy=(500, 100))
        r.apply("w1", spec.Claim(u, "w1", 60_000), bind="lu1")
        r.advance(10)
        worker(r, "w1", u, 0, event("retry1", "retry_requested", **FAILURE), Ref("lu1"))
        r.apply("w1", spec.Release(Ref("lu1")))
        r.set_time(r.now + 500)
        r.apply("w2", spec.ClaimNext("w2", 60_000), bind="lu2")
        r.advance(10)
        worker(r, "w2", u, 1, event("retry2", "retry_requested", **FAILURE), Ref("lu2"))
        r.apply("w3", spec.Claim(u, "w3", 1_000))  # deferred(100): the second delay
        v = f"{p}-c"
        created(r, v)  # no retry policy: the first retry_requested fails the task
        r.apply("w1", spec.Claim(v, "w1", 60_000), bind="lv")
        worker(r, "w1", v, 0, event("retry1", "retry_requested", **FAILURE), Ref("lv"))


@scenario()
def retry_at_the_longest_delay(h: Harness, p: str) -> None:
    """A retry delay of 4 294 967 295 ms, the longest the seed accepts and the cap its
    exponential policies reach by default (``@max_delay_ms`` and ``exponential/3`` in
    extensions/tasks/lib/snodo/extensions/tasks/retry_policy.ex at c924739): the claim is
    deferred by all of it, to the ms. A store keeping delays in 32-bit signed integers wraps
    it to -1, and the task is due at once."""
    with forked(h, f"-{p}-longest") as r:
        t = f"{p}-a"
        created(r, t, retry_policy=(spec.MAX_RETRY_DELAY_MS,))
        r.apply("w1", spec.Claim(t, "w1", 60_000), bind="l1")
        r.advance(10)  # the retry commits at now
        worker(r, "w1", t, 0, event("retry1", "retry_requested", **FAILURE), Ref("l1"))
        due = r.now + spec.MAX_RETRY_DELAY_MS
        r.apply("w1", spec.Release(Ref("l1")))
        r.apply("w2", spec.Claim(t, "w2", 1_000))  # deferred(4 294 967 295)
        r.apply("w2", spec.ClaimNext("w2", 1_000))  # nothing due
        r.set_time(due - 1)
        r.apply("w2", spec.Claim(t, "w2", 1_000))  # deferred(1)
        r.set_time(due)
        r.apply("w2", spec.Claim(t, "w2", 1_000), bind="l2")
        worker(r, "w2", t, 1, DONE, Ref("l2"))


@scenario()
def release_then_claim_next(h: Harness, p: str) -> None:
    with forked(h, f"-{p}-next") as r:
        t, u, v = f"{p}-a", f"{p}-b", f"{p}-c"
        created(r, t)
        r.apply("w1", spec.ClaimNext("w1", 100), bind="l1")
        r.apply("w2", spec.ClaimNext("w2", 100))
        r.apply("w1", spec.Release(Ref("l1")))
        r.apply("w1", spec.Release(Ref("l1")))  # a second release
        r.apply("w1", spec.Renew(Ref("l1"), 100))
        r.apply("w2", spec.ClaimNext("w2", 100), bind="l2")  # generation 2
        r.apply("w1", spec.WorkerSnapshot(t, Ref("l1")))
        r.advance(150)
        r.apply("w2", spec.Release(Ref("l2")))  # expired, still the current claim
        r.apply("w3", spec.Claim(t, "w3", 30_000), bind="l3")
        created(r, u)
        created(r, v)
        r.apply("w3", spec.Claim(u, "w3", 30_000), bind="lu")
        worker(r, "w3", u, 0, DONE, Ref("lu"))
        r.apply("w3", spec.Release(Ref("lu")))
        r.apply("w4", spec.ClaimNext("w4", 100), bind="lv")  # only v is recoverable
        r.apply("w5", spec.ClaimNext("w5", 100))
        r.advance(100)
        r.apply("w3", spec.Release(Ref("l3")))
        for owner in ("w6", "w7", "w8"):  # t and v, in the store's order, then nothing
            r.apply(owner, spec.ClaimNext(owner, 100))


@scenario()
def claim_next_among_several(h: Harness, p: str) -> None:
    """claim_next with two tasks due whose id order is not their creation order, passing over
    a task whose retry is pending (created first) and one under a live claim."""
    with forked(h, f"-{p}-several") as r:
        a, b, c, d = (f"{p}-{x}" for x in "abcd")
        created(r, d, retry_policy=(60_000,))
        r.apply("w1", spec.Claim(d, "w1", 30_000), bind="ld")
        r.advance(1)
        worker(r, "w1", d, 0, event("retry", "retry_requested", **FAILURE), Ref("ld"))
        r.apply("w1", spec.Release(Ref("ld")))
        r.advance(1)
        created(r, c)
        r.apply("w1", spec.Claim(c, "w1", 30_000))
        r.advance(1)
        created(r, b)
        created(r, a)
        for owner in ("w2", "w3", "w4"):  # a and b, in the store's order, then nothing
            r.apply(owner, spec.ClaimNext(owner, 30_000))


@scenario()
def old_lease_is_stale(h: Harness, p: str) -> None:
    t = f"{p}-a"
    created(h, t)
    h.apply("w1", spec.Claim(t, "w1", 100), bind="l1")
    h.apply("w1", spec.WorkerSnapshot(t, Ref("l1")))
    h.apply("w1", spec.WorkerSnapshot(f"{p}-never", Ref("l1")))
    h.advance(100)
    h.apply("w2", spec.Claim(t, "w2", 30_000), bind="l2")  # takes over the expired claim
    fenced(h, t, Ref("l1"), 0)
    worker(h, "w2", t, 0, ASK, Ref("l2"))
    h.apply("w2", spec.Release(Ref("l2")))
    h.apply("w1", spec.Claim(t, "w1", 100), bind="l3")  # l1's owner again, a new generation
    fenced(h, t, Ref("l1"), 1)
    fenced(h, t, Ref("l2"), 1)
    h.apply("w1", spec.WorkerSnapshot(t, Ref("l3")))
    worker(h, "w1", t, 1, DONE, Ref("l3"))


@scenario()
def two_writers_one_revision(h: Harness, p: str) -> None:
    t = f"{p}-a"
    created(h, t)
    update = authorized(h, "update", t)
    h.apply("w1", spec.Claim(t, "w1", 30_000), bind="lease")
    worker(h, "w1", t, 0, ASK, Ref("lease"))
    answer = event("answer", "input_responses_accepted", responses={"k": {"name": "Ada"}})
    request(h, t, 0, answer, update)  # read at revision 0, written after the worker's event
    request(h, t, 1, answer, update)
    ask2 = event("ask2", "input_requested", key="k2", request=asking("Age?"))
    worker(h, "w1", t, 1, ask2, Ref("lease"))
    worker(h, "w1", t, 0, ASK, Ref("lease"))  # a replay with a stale revision: duplicate
    worker(h, "w1", t, 2, event("ask", "input_requested", key="k9", request=asking("?")),
           Ref("lease"))
    request(h, t, 2, event("ask", "cancelled"), authorized(h, "cancel", t))
    worker(h, "w1", t, 2, ask2, Ref("lease"))  # the conflict did not record ask2
    ask3 = event("ask3", "input_requested", key="k3", request=asking("?"))
    worker(h, "w1", t, 9, ask3, Ref("lease"))  # a revision ahead conflicts too


@scenario()
def input_round_trip(h: Harness, p: str) -> None:
    t = f"{p}-a"
    created(h, t)
    update = authorized(h, "update", t)
    h.apply("w1", spec.Claim(t, "w1", 30_000), bind="lease")
    lease = Ref("lease")
    worker(h, "w1", t, 0, event("e1", "input_requested", key="name", request=asking("Name?")),
           lease)
    worker(h, "w1", t, 1, event("e2", "input_requested", key="age", request=asking("Age?")),
           lease)
    worker(h, "w1", t, 2, event("e3", "input_requested", key="name", request=asking("?")), lease)
    stray = event("r1", "input_responses_accepted", responses={"nope": {"n": 1}})
    request(h, t, 2, stray, update)  # nothing outstanding matches: unchanged
    request(h, t, 2, stray, update)  # and not recorded: unchanged again
    partial = event("r2", "input_responses_accepted",
                    responses={"name": {"name": "Ada"}, "nope": {"n": 1}})
    request(h, t, 2, partial, update)
    rest = event("r3", "input_responses_accepted",
                 responses={"name": {"name": "Bob"}, "age": {"age": 36}})
    request(h, t, 3, rest, update)
    worker(h, "w1", t, 4, event("e4", "input_requested", key="age", request=asking("?")), lease)
    worker(h, "w1", t, 4, event("e5", "completed", result={"name": "Ada", "age": 36}), lease)
    h.apply("client", spec.Get(t, update))


@scenario("durable")
def reopen_fences_the_last_boot(h: Harness, p: str) -> None:
    """The seed's own durable-store test (tasks_durable_store_test.exs: old accesses and
    leases fenced after a reopen, the task claimed again at a higher generation, a replayed
    event a duplicate), on two tasks: one claimed and renewed, one released and claimed again.
    Whether a claim made before the reopen still blocks its task is ``reopen_claims``."""
    t, u = f"{p}-a", f"{p}-b"
    created(h, t)
    created(h, u, ttl_ms=600_000)
    update = authorized(h, "update", t)
    h.apply("w1", spec.Claim(t, "w1", 1_000), bind="l1")
    h.apply("w1", spec.Renew(Ref("l1"), 2_000), bind="l2")
    worker(h, "w1", t, 0, ASK, Ref("l2"))
    h.apply("w1", spec.Claim(u, "w1", 1_000), bind="lu1")
    h.apply("w1", spec.Release(Ref("lu1")))
    h.apply("w2", spec.Claim(u, "w2", 1_000), bind="lu2")
    h.reopen()
    with blamed_on(h, "SNODO-DURABLE-001"):
        h.apply("client", spec.Get(t, update))
        h.reached("SNODO-DURABLE-001", "an access of the last boot refused")
        h.apply("w1", spec.WorkerSnapshot(t, Ref("l2")))
        h.apply("w1", spec.Renew(Ref("l2"), 2_000))
        worker(h, "w1", t, 1, DONE, Ref("l2"))
        h.apply("w2", spec.Release(Ref("lu2")))
        h.reached("SNODO-DURABLE-001", "a lease of the last boot fenced")
        h.apply("w3", spec.Claim(t, "w3", 1_000))
        h.reached("SNODO-DURABLE-001", "a claim of the last boot met")
        h.advance(2_000)  # past every lease of the last boot
        h.apply("w3", spec.Claim(t, "w3", 1_000), bind="l3")
        h.apply("w3", spec.Claim(u, "w3", 1_000), bind="lu3")
        worker(h, "w3", t, 0, ASK, Ref("l3"))  # seen before the reopen: duplicate
        again = authorized(h, "update", t)
        answer = event("answer", "input_responses_accepted", responses={"k": {"n": 1}})
        request(h, t, 1, answer, again)
        worker(h, "w3", u, 0, DONE, Ref("lu3"))
        h.reopen()
        h.apply("w3", spec.WorkerSnapshot(t, Ref("l3")))
        h.apply("w4", spec.Claim(t, "w4", 1_000))
        h.advance(1_000)
        h.apply("w4", spec.Claim(t, "w4", 1_000), bind="l4")
        worker(h, "w4", t, 2, DONE, Ref("l4"))


@scenario("durable")
def stores_open_together_share_values(h: Harness, p: str) -> None:
    """A store opened while another is open is another connection to the same store (the
    ``durable`` capability; a pool opens and closes them): each honours the accesses and
    leases the other issued, also once a third has closed. Only a reopen, every store closed
    first, is a restart."""
    t = f"{p}-a"
    created(h, t)
    update = authorized(h, "update", t)
    h.apply("w1", spec.Claim(t, "w1", 1_000), bind="l1")
    h.open_beside()
    with blamed_on(h, "SNODO-DURABLE-001"):
        h.apply("w1", spec.Renew(Ref("l1"), 2_000), bind="l1")
        asked = authorized(h, "update", t, name="asked")
        h.close_beside()
        h.open_beside()  # after one closed, beside the first: no restart
        h.apply("client", spec.Get(t, update))
        worker(h, "w1", t, 0, ASK, Ref("l1"))
        h.reached("SNODO-DURABLE-001", "a value honoured after another store closed")
        h.close_beside()
        request(h, t, 1, event("answer", "input_responses_accepted",
                               responses={"k": {"n": 1}}), asked)
        h.apply("w1", spec.Renew(Ref("l1"), 2_000))


# --- the points where the seed's stores disagree (spec.CHOICES): one scenario each ----------


@scenario()
def renew_to_the_same_expiry(h: Harness, p: str) -> None:
    """same_expiry_renewal: renew so that now + lease_ms is exactly the old expiry, then use
    the value renewed (identical: still valid; successor: stale, and the claim is live one ms
    longer)."""
    t = f"{p}-a"
    created(h, t)
    start = h.now
    h.apply("w1", spec.Claim(t, "w1", 100), bind="l1")  # expires at start + 100
    h.advance(40)
    with blamed_on(h, "SNODO-LEASE-002"):
        h.apply("w1", spec.Renew(Ref("l1"), 60), bind="l2")  # start + 100 again
        h.apply("w1", spec.WorkerSnapshot(t, Ref("l1")))
        worker(h, "w1", t, 0, ASK, Ref("l1"))
        h.apply("w1", spec.WorkerSnapshot(t, Ref("l2")))
        worker(h, "w1", t, 0, ASK, Ref("l2"))  # a replay, or the first write
        h.set_time(start + 99)
        h.apply("w2", spec.Claim(t, "w2", 100))
        h.set_time(start + 100)  # identical: expired; successor: live for this ms still
        h.apply("w1", spec.WorkerSnapshot(t, Ref("l2")))
        h.set_time(start + 101)
        h.apply("w1", spec.WorkerSnapshot(t, Ref("l2")))
        h.apply("w3", spec.Claim(t, "w3", 100), bind="l3")
    worker(h, "w3", t, 1, DONE, Ref("l3"))


@scenario()
def forged_access_in_transition(h: Harness, p: str) -> None:
    """forged_request_authority: request and worker transitions with values the store never
    minted, on a task that exists and on one that does not."""
    t, never = f"{p}-a", f"{p}-never"
    created(h, t)
    h.apply("w1", spec.Claim(t, "w1", 30_000), bind="lease")
    worker(h, "w1", t, 0, ASK, Ref("lease"))
    answer = event("answer", "input_responses_accepted", responses={"k": {"name": "Ada"}})
    with blamed_on(h, "SNODO-AUTH-004"):
        request(h, t, 1, STOP, Forged("cancel"))
        request(h, t, 1, answer, Forged("update"))
        request(h, never, 0, STOP, Forged("cancel"))
        worker(h, "intruder", t, 1, DONE, Forged("lease"))
        worker(h, "intruder", never, 0, DONE, Forged("lease"))
    request(h, t, 1, answer, authorized(h, "update", t))


@scenario()
def authority_checked_against_row(h: Harness, p: str) -> None:
    """transition_check_order: authorities that are wrong whatever the task holds, sent to a
    foreign tenant's task, to a missing task, and by a fenced lease."""
    t, never = f"{p}-a", f"{p}-never"
    created(h, t)
    h.apply("w1", spec.Claim(t, "w1", 100), bind="l1")
    answer = event("answer", "input_responses_accepted", responses={"k": {"name": "Ada"}})
    with blamed_on(h, "SNODO-AUTH-003"):
        for intruder in ("umbrella", None):
            request(h, t, 0, STOP, authorized(h, "get", t, intruder))  # the wrong action
            request(h, t, 0, answer, authorized(h, "cancel", t, intruder))  # the wrong kind
            request(h, t, 0, STOP, authorized(h, "cancel", t, intruder))  # right: not_found
        request(h, never, 0, STOP, authorized(h, "get", never))
        request(h, never, 0, STOP, authorized(h, "cancel", t))  # an access of another id
    h.advance(100)
    h.apply("w2", spec.Claim(t, "w2", 30_000), bind="l2")
    with blamed_on(h, "SNODO-LEASE-001"):  # a fenced lease sending request kinds
        worker(h, "zombie", t, 0, answer, Ref("l1"))
        worker(h, "zombie", t, 0, STOP, Ref("l1"))
    with blamed_on(h, "SNODO-LEASE-005"):  # a live lease of another task, on a missing one
        worker(h, "w2", never, 0, DONE, Ref("l2"))
    worker(h, "w2", t, 0, DONE, Ref("l2"))


@scenario()
def create_in_a_full_store(h: Harness, p: str) -> None:
    """create_check_order: create of an id that exists while the store is at max_tasks."""
    with forked(h, f"-{p}-full", max_tasks="2") as c:
        a, b, x = f"{p}-a", f"{p}-b", f"{p}-x"
        created(c, a)
        created(c, a)  # exists, room left: already_exists either way
        created(c, b, "umbrella")  # the store is full now
        created(c, a)
        created(c, b, "umbrella")
        created(c, x)  # a new id: capacity_exceeded either way
        c.apply("client", spec.Get(a, Ref(f"obs:{a}")))


@scenario()
def commits_past_a_still_clock(h: Harness, p: str) -> None:
    """committed_at_step: events while the clock stands still, then a retry scheduled from
    the last of them (its retry_at carries the step; deferred rounds the rest up)."""
    t = f"{p}-a"
    created(h, t, retry_policy=(100,))
    h.apply("w1", spec.Claim(t, "w1", 30_000), bind="l1")
    worker(h, "w1", t, 0, ASK, Ref("l1"))
    ask2 = event("ask2", "input_requested", key="k2", request=asking("?"))
    worker(h, "w1", t, 1, ask2, Ref("l1"))
    worker(h, "w1", t, 2, event("retry", "retry_requested", **FAILURE), Ref("l1"))
    h.apply("w1", spec.Release(Ref("l1")))
    h.advance(99)
    h.apply("w2", spec.Claim(t, "w2", 1_000))  # deferred(4), or deferred(2) by 1.003 ms
    h.advance(1)
    h.apply("w2", spec.Claim(t, "w2", 1_000))  # deferred(3), or deferred(1) by 0.003 ms
    h.advance(3)
    h.apply("w2", spec.Claim(t, "w2", 1_000), bind="l2")
    worker(h, "w2", t, 3, DONE, Ref("l2"))
    worker(h, "w2", t, 4, event("late", "failed", **FAILURE), Ref("l2"))  # unchanged


MONTH_MS = 30 * 86_400_000
"""A TTL of 30 days: 2 592 000 000 ms, past the last 32-bit signed integer."""


@scenario()
def ttl_of_a_month(h: Harness, p: str) -> None:
    """A TTL of 30 days, a positive integer as the seed takes it, with no upper bound
    (``validate_timing_options!`` in extensions/tasks/lib/snodo/extensions/tasks/task.ex at
    c924739): it reads back whole, the task lives to the ms before it and is hidden and reaped
    at it. A store keeping ttl_ms in a 32-bit signed integer wraps it negative."""
    with forked(h, f"-{p}-month") as r:
        t = f"{p}-a"
        start = r.now
        created(r, t, ttl_ms=MONTH_MS)
        r.set_time(start + MONTH_MS - 1)
        r.apply("client", spec.Get(t, Ref(f"obs:{t}")))
        r.apply("reaper", spec.Reap())  # nothing yet
        r.set_time(start + MONTH_MS)
        r.apply("client", spec.Get(t, Ref(f"obs:{t}")))  # not_found
        r.apply("reaper", spec.Reap())


@scenario()
def reap_answers_in_order(h: Harness, p: str) -> None:
    """reap_order: one reap takes tasks whose id order and expiry order differ."""
    with forked(h, f"-{p}-order") as r:
        a, b, c = f"{p}-a", f"{p}-b", f"{p}-c"
        start = r.now
        created(r, c, ttl_ms=500)
        created(r, b, ttl_ms=1_000)
        r.advance(1)
        created(r, a, ttl_ms=499)  # expires with c: ties go by id
        r.set_time(start + 1_000)
        r.apply("reaper", spec.Reap())  # [a, b, c] or [a, c, b]
        r.apply("reaper", spec.Reap())


# --- every argument at its edges (the SNODO-ARG clauses) --------------------------------------

scenario()(arguments_at_their_edges)

# --- stored values come back exactly (SNODO-VALUE-001) ---------------------------------------

scenario()(values_read_back_exactly)
