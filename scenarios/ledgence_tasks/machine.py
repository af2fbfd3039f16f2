"""The ledgence-tasks state machine (first slice): submitters, sessions, readers, cancellers.

Submissions reuse a few keys with equal, reordered and changed inputs across two scopes; reads
and cancels hit the scope's own tasks, another scope's, and ids nobody minted; sessions are
opened, extended across their expiry, and the store reopened. Every answer and the task behind
it are compared with the model after every step.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from fencepost.spec import ledgence_tasks as spec
from fencepost.spec.opaque import Ref

from ..machine import WorldMachine
from .scripted import DESCRIPTOR, OTHER, SCOPE, task_input

SCOPES = st.sampled_from([SCOPE, OTHER])
DATA = st.sampled_from([{"n": 1}, {"n": 1.0}, {"n": 1, "z": -0.0}, {"z": -0.0, "n": 1},
                        {"n": [1, 2]}])


class LedgenceMachine(WorldMachine):
    """Each example on a store of its own (keys and ids are per store)."""

    own_store = True

    @rule(scope=SCOPES, key=st.sampled_from(["a", "b", "c"]), data=DATA,
          policy=st.sampled_from([None, spec.RetryPolicy(3, 5000), spec.RetryPolicy(2, 0)]))
    def submit(self, scope: spec.Scope, key: str, data: object,
               policy: spec.RetryPolicy | None) -> None:
        task = task_input(scope, data=data)
        if policy is not None:
            task = task_input(scope, data=data, retry_policy=policy)
        self.h.apply("client", spec.AcceptResolvedSubmission(
            spec.SubmitCommand(f"{self.prefix}-{key}", task), DESCRIPTOR))

    @rule(scope=SCOPES, key=st.sampled_from(["a", "b", "c", "never"]))
    def lookup(self, scope: spec.Scope, key: str) -> None:
        self.h.apply("client", spec.LookupSubmission(scope, f"{self.prefix}-{key}"))

    def task(self, n: int) -> Ref | str:
        names = [k for k in self.h.bindings if k.startswith("task#")]
        return Ref(names[n % len(names)]) if names else "task_never_minted"

    @rule(scope=SCOPES, n=st.integers(0, 9),
          read=st.sampled_from([spec.Status, spec.Result, spec.Inspect]))
    def read(self, scope: spec.Scope, n: int, read: type) -> None:
        self.h.apply("client", read(scope, self.task(n)))

    @rule(scope=SCOPES, n=st.integers(0, 9), after=st.sampled_from([0, 0, 1, 2, 5]))
    def history(self, scope: spec.Scope, n: int, after: int) -> None:
        self.h.apply("client", spec.History(scope, self.task(n), after))

    @rule(scope=SCOPES, n=st.integers(0, 9))
    def cancel(self, scope: spec.Scope, n: int) -> None:
        self.h.apply("client", spec.Cancel(scope, self.task(n)))

    @rule(scope=SCOPES, concurrency=st.sampled_from([0, 1, 3]))
    def open_session(self, scope: spec.Scope, concurrency: int) -> None:
        self.h.apply("worker", spec.OpenSession(scope, "emails", concurrency))

    @rule(n=st.integers(0, 9))
    def extend_session(self, n: int) -> None:
        names = [k for k in self.h.bindings if k.startswith("ws#")]
        target = Ref(names[n % len(names)]) if names else "ws_never_minted"
        self.h.apply("worker", spec.ExtendSession(target))

    @rule(ms=st.sampled_from([1, 1000, spec.SESSION_MS - 1, spec.SESSION_MS]))
    def advance(self, ms: int) -> None:
        self.h.advance(ms)

    @precondition(lambda self: "durable" in self.world.capabilities)
    @rule()
    def reopen(self) -> None:
        self.h.reopen()


machine_for = LedgenceMachine.bound_to
