"""The snodo-tasks rules written once over a small storage interface.
Over 500 lines: it is one class, ``TasksCore``, whose ten operations share its hooks and
checks; its records and argument validation are already apart (:mod:`.records`,
:mod:`.validation`).

``TasksCore`` implements the ten operations on top of ``_transaction()``, a context manager that
yields a :class:`~.records.Txn`: one atomic unit of work (a mutex, ``BEGIN IMMEDIATE``, row
locks) that loads task aggregates for update and writes them back. The memory and SQLAlchemy
stores only provide storage; the mutants override one small hook each. This is an
implementation of the contract independent of the reference model: the model is the oracle it
is checked against.

Accesses and leases are values only this store mints (:class:`Access`, :class:`Lease`); a store
recognises its own by exact type and by ``store_id``: its storage and ``env.namespace`` (another
namespace is another store) and its boot. A boot begins when the store is opened while no other
instance of it is open in this process (a reopen, or a new process), as the seed's durable stores
restart: the accesses and leases of an earlier boot are void, and its claims stay live until
their deadline or (``reopen_claims=released``) no longer live, while instances open at the same
time (a worker's connection of its own) share one boot.
"""

from __future__ import annotations

import math
import secrets
import threading
from contextlib import AbstractContextManager
from typing import Any, TypeGuard

import attrs

from fencepost.spec import snodo_tasks as spec
from fencepost.spec.env import AdapterEnv
from fencepost.spec.errors import ContractError
from fencepost.spec.opaque import agree

from . import validation
from .records import Access, Aggregate, Claim, Lease, Txn, parse_limit
from .reducer import Reduced, reduce_event

READ_KINDS = ("get", "update", "cancel")
EVENT_KINDS = ("update", "cancel")


_BOOTS: dict[str, list[Any]] = {}
"""Per store (storage and namespace) with an instance open: [its boot's token, how many of its
instances are open]; forgotten when the last one closes."""
_BOOTS_LOCK = threading.Lock()


def _booted(storage: str) -> str:
    """The boot an instance of ``storage`` opened now joins: a new one when none is open."""
    with _BOOTS_LOCK:
        entry = _BOOTS.get(storage)
        if entry is None:
            entry = _BOOTS[storage] = [secrets.token_hex(4), 0]
        entry[1] += 1
        return str(entry[0])


def _shut(storage: str, store_id: str, last: bool = False) -> None:
    """An instance of ``storage`` of the boot ``store_id`` names closed (``last``: taken
    for the last one open)."""
    with _BOOTS_LOCK:
        entry = _BOOTS.get(storage)
        if entry is not None and store_id.endswith(f"#{entry[0]}"):
            entry[1] -= 1
            if entry[1] <= 0 or last:
                del _BOOTS[storage]


class TasksCore:
    """The snodo-tasks rules, in the order of checks ``env.options`` names (``spec.CHOICES``;
    by default the seed Memory store's)."""

    capabilities: frozenset[str] = frozenset({"durable", "concurrency"})

    def __init__(self, env: AdapterEnv) -> None:
        self.env = env
        self._storage = self._identity()
        self.store_id = self._booted_id(self._storage)
        self._open = True
        self.max_tasks = parse_limit(env.options, "max_tasks")
        self.max_active_per_scope = parse_limit(env.options, "max_active_tasks_per_scope")
        self.options = {c.name: spec.option(env.options, c.name) for c in spec.CHOICES}

    # -- storage, provided by subclasses --------------------------------------------------------

    def _transaction(self) -> AbstractContextManager[Txn]:
        raise NotImplementedError

    def _reading(self) -> AbstractContextManager[Txn]:
        """A unit of work that only loads one task: by default a :meth:`_transaction`; a
        storage may load without locks (one consistent read)."""
        return self._transaction()

    def _identity(self) -> str:
        return self.env.namespace

    def _booted_id(self, storage: str) -> str:
        """The ``store_id`` of this instance: ``storage`` and the boot it joins."""
        return f"{storage}#{_booted(storage)}"

    def close(self) -> None:
        """Release connections; the data stays (see the ``durable`` capability). Once every
        instance is closed, the next one opened is a new boot."""
        if self._open:
            self._open = False
            _shut(self._storage, self.store_id, self._closes_the_boot())

    # -- predicates and helpers the mutants bend ----------------------------------------

    def _closes_the_boot(self) -> bool:
        """Does closing this instance end its boot whatever else is open (never: the boot
        ends with the last instance open, see the ``durable`` capability)?"""
        return False

    def _genuine_access(self, access: object) -> TypeGuard[Access]:
        return type(access) is Access and access.store_id == self.store_id

    def _genuine_lease(self, lease: object) -> TypeGuard[Lease]:
        return type(lease) is Lease and lease.store_id == self.store_id

    def _same_scope(self, access: Access, aggregate: Aggregate) -> bool:
        return access.scope == aggregate.scope

    def _expired(self, aggregate: Aggregate, now: int) -> bool:
        task = aggregate.snapshot.task
        return task.ttl_ms is not None and now >= task.created_at + task.ttl_ms

    def _action_allows(self, access_kind: str, event_kind: str) -> bool:
        return spec.REQUEST_KINDS.get(event_kind) == access_kind

    def _claim_live(self, claim: Claim | None, now: int) -> bool:
        return (claim is not None and now < claim.expires_at
                and (claim.store_id == self.store_id or not self._reopen_releases))

    @property
    def _reopen_releases(self) -> bool:
        """Does a reopen release the claims made before it (``reopen_claims=released``)?"""
        return self.options["reopen_claims"] == "released"

    def _retry_due(self, snapshot: spec.Snapshot, now: int) -> bool:
        return snapshot.retry_at is None or now >= snapshot.retry_at

    def _deferred_ms(self, retry_at: float, now: int) -> int:
        return math.ceil(retry_at - now)

    def _recoverable(self, aggregate: Aggregate, now: int) -> bool:
        snap = aggregate.snapshot
        return (
            snap.task.status not in spec.TERMINAL
            and snap.work is not None
            and self._retry_due(snap, now)
            and not self._claim_live(aggregate.claim, now)
        )

    def _check_claimable(self, aggregate: Aggregate, now: int) -> None:
        snap = aggregate.snapshot
        if snap.task.status in spec.TERMINAL:
            raise spec.Unavailable(f"task {snap.task.id!r} is {snap.task.status}")
        if snap.work is None:
            raise spec.Unavailable(f"task {snap.task.id!r} has no work")
        if snap.retry_at is not None and not self._retry_due(snap, now):
            ms = self._deferred_ms(snap.retry_at, now)
            raise spec.Deferred(f"retry due in {ms} ms", payload=ms)
        if self._claim_live(aggregate.claim, now):
            raise spec.Unavailable(f"task {snap.task.id!r} is claimed")

    def _next_generation(self, aggregate: Aggregate) -> int:
        return aggregate.generation + 1

    def _new_token(self) -> str:
        return secrets.token_hex(16)

    def _lease_matches(self, aggregate: Aggregate, lease: Any) -> bool:
        """Identity only: genuine, this task, and exactly the stored claim."""
        claim = aggregate.claim
        return (
            self._genuine_lease(lease)
            and lease.task_id == aggregate.task_id
            and claim is not None
            and (claim.owner_id, claim.token, claim.generation, claim.expires_at)
            == (lease.owner_id, lease.token, lease.generation, lease.expires_at)
        )

    def _lease_valid(self, aggregate: Aggregate, lease: Any, now: int) -> bool:
        return self._lease_matches(aggregate, lease) and self._claim_live(aggregate.claim, now)

    def _revision_ok(self, snapshot: spec.Snapshot, expected_revision: int) -> bool:
        return expected_revision == snapshot.revision

    def _seen(self, aggregate: Aggregate, event: spec.Event) -> spec.Transition | None:
        """The original transition of a replayed event; ``event_id_reused`` for another."""
        found = aggregate.seen.get(event.id)
        if found is None:
            return None
        original_event, original = found
        if not agree(original_event, event):  # exactly, as the seed's pin: 1 is not 1.0
            raise spec.EventIdReused(f"event id {event.id!r} was used for another event")
        return original

    def _committed_at(self, task: spec.Task, now: int) -> float:
        if task.last_updated_at < now:
            return now
        micro = self.options["committed_at_step"] == "microsecond"
        return spec.microsecond_after(task.last_updated_at) if micro else task.last_updated_at + 1

    def _renewed_expiry(self, current: float, candidate: float) -> float:
        """A renewal's expiry: ``candidate`` (now + lease_ms), or its successor when that is
        the current expiry and same_expiry_renewal=successor."""
        if candidate == current and self.options["same_expiry_renewal"] == "successor":
            return spec.microsecond_after(current)
        return candidate

    def _forged_request(self, task_id: str) -> ContractError:
        """The answer to request authority that is no access of this store's kind."""
        if self.options["forged_request_authority"] == "not_found":
            return spec.NotFound(task_id)
        return spec.UnauthorizedAction("the request authority is not an access")

    def _authority_first(self) -> bool:
        return self.options["transition_check_order"] == "authority_first"

    def _capacity_first(self) -> bool:
        return self.options["create_check_order"] == "capacity_first"

    def _reduce(self, snapshot: spec.Snapshot, event: spec.Event, committed_at: float) -> Reduced:
        return reduce_event(snapshot, event, committed_at)

    def _check_capacity(self, txn: Txn, scope: str | None) -> None:
        if self._store_full(txn, scope):
            raise spec.CapacityExceeded(f"{self.max_tasks} tasks stored", payload="max_tasks")
        limit = self.max_active_per_scope
        if limit is not None and txn.count_active(scope) >= limit:
            raise spec.CapacityExceeded(
                f"{limit} active tasks in scope {scope!r}", payload="max_active_tasks_per_scope"
            )

    def _store_full(self, txn: Txn, scope: str | None) -> bool:
        """max_tasks: every task stored counts, whatever its scope and status."""
        return self.max_tasks is not None and txn.count_tasks() >= self.max_tasks

    # -- the seed's guards and validations (SNODO-ARG): refused before anything is read --------

    def _lease_ms_ok(self, lease_ms: Any) -> bool:
        """claim's and claim_next's lease_ms: a positive integer."""
        return validation.positive(lease_ms)

    def _owner_ok(self, owner_id: Any) -> bool:
        return validation.name(owner_id)

    def _renewal_ms_ok(self, lease_ms: Any) -> bool:
        return validation.positive(lease_ms)

    def _revision_arg_ok(self, expected_revision: Any) -> bool:
        return validation.whole(expected_revision) and expected_revision >= 0

    def _authority_kind_ok(self, authority: Any) -> bool:
        return isinstance(authority, spec.RequestAuthority | spec.WorkerAuthority)

    def _action_ok(self, action: spec.Action) -> bool:
        return action.kind in spec.ACTIONS and validation.name(action.task_id)

    def _check_claim_call(self, task_id: Any, owner_id: Any, lease_ms: Any) -> None:
        """claim's arguments: a non-empty task id first, then as claim_next's."""
        if not validation.name(task_id):
            raise spec.FunctionClause(f"task id {task_id!r} is not a non-empty string")
        self._check_claim_args(owner_id, lease_ms)

    def _check_claim_args(self, owner_id: Any, lease_ms: Any) -> None:
        """claim_next's arguments, and claim's after its task id."""
        if not self._owner_ok(owner_id):
            raise spec.FunctionClause(f"owner id {owner_id!r} is not a non-empty string")
        if not self._lease_ms_ok(lease_ms):
            raise spec.FunctionClause(f"lease_ms {lease_ms!r} is not a positive integer")

    def _check_transition_args(self, task_id: Any, expected_revision: Any,
                               authority: Any) -> None:
        if not isinstance(task_id, str) or not self._revision_arg_ok(expected_revision):
            raise spec.FunctionClause("a string task id and a non-negative integer revision")
        if not self._authority_kind_ok(authority):
            raise spec.FunctionClause("the authority is neither request nor worker authority")

    @staticmethod
    def _check_task_id(task_id: Any) -> None:
        if not isinstance(task_id, str):
            raise spec.FunctionClause(f"task id {task_id!r} is not a string")

    def _validate_early(self) -> bool:
        """create_validation_order=after_access: validate right after the access check."""
        return self.options["create_validation_order"] == "after_access"

    def _task_problem(self, task: spec.Task, work: spec.Work) -> str | None:
        return validation.task_error(task) or validation.work_error(work)

    def _check_valid(self, task: spec.Task, work: spec.Work) -> None:
        problem = self._task_problem(task, work)
        if problem is not None:
            raise spec.InvalidTask(problem)

    def _event_problem(self, event: spec.Event) -> ContractError | None:
        return validation.event_error(event)

    def _reap_ids(self, txn: Txn, now: int) -> list[str]:
        in_expiry_order = txn.expired_ids(now, self._expired)
        if self.options["reap_order"] == "expiry":
            return in_expiry_order
        return sorted(in_expiry_order)

    # -- the protocol ---------------------------------------------------------------------------

    def authorize(self, context: spec.Context, action: spec.Action) -> Access:
        if not self._action_ok(action):
            raise spec.FunctionClause(f"no action {action.kind!r} on {action.task_id!r}")
        return Access(self.store_id, context.tenant, action.kind, action.task_id)

    def create(self, task: spec.Task, work: spec.Work, access: Any) -> spec.Snapshot:
        scope = self._create_scope(task, work, access)
        with self._transaction() as txn:
            txn.lock_for_create()
            self._check_create(txn, task, work, scope)
            return self._insert_task(txn, task, work, scope)

    def get(self, task_id: str, access: Any) -> spec.Snapshot:
        self._check_task_id(task_id)
        with self._reading() as txn:
            aggregate = txn.load(task_id)
            now = self.env.clock()
            if (
                aggregate is None
                or not self._genuine_access(access)
                or not self._same_scope(access, aggregate)
                or access.kind not in READ_KINDS
                or access.task_id != task_id
                or self._hidden_by_ttl(aggregate, now)
            ):
                raise spec.NotFound(task_id)
            return aggregate.snapshot

    def claim(self, task_id: str, owner_id: str, lease_ms: int) -> spec.Claimed:
        self._check_claim_call(task_id, owner_id, lease_ms)
        with self._transaction() as txn:
            aggregate = self._require(txn, task_id)
            now = self.env.clock()
            self._check_claimable(aggregate, now)
            return self._grant(txn, aggregate, owner_id, lease_ms, now)

    def claim_next(self, owner_id: str, lease_ms: int) -> spec.Claimed | None:
        self._check_claim_args(owner_id, lease_ms)
        with self._transaction() as txn:
            now = self.env.clock()
            task_id = txn.find_recoverable(now, self._recoverable)
            if task_id is None:
                return None
            aggregate = txn.load(task_id)
            if aggregate is None or not self._recoverable(aggregate, now):
                return None
            return self._grant(txn, aggregate, owner_id, lease_ms, now)

    def renew(self, lease: Any, lease_ms: int) -> Lease:
        if not self._renewal_ms_ok(lease_ms):
            raise spec.FunctionClause(f"lease_ms {lease_ms!r} is not a positive integer")
        with self._transaction() as txn:
            aggregate = self._leased(txn, lease)
            now = self.env.clock()
            if aggregate is None or not self._lease_valid(aggregate, lease, now):
                raise spec.StaleLease("the lease is not the task's live claim")
            assert aggregate.claim is not None
            expires_at = self._renewed_expiry(aggregate.claim.expires_at, now + lease_ms)
            self._store_renewal(txn, aggregate, aggregate.claim, expires_at)
            renewed: Lease = attrs.evolve(lease, expires_at=expires_at)
            return renewed

    def _store_renewal(self, txn: Txn, aggregate: Aggregate, claim: Claim,
                       expires_at: float) -> None:
        """Store the renewed claim: the lease handed back is the one that stays valid."""
        aggregate.claim = attrs.evolve(claim, expires_at=expires_at)
        txn.save(aggregate)

    def release(self, lease: Any) -> None:
        with self._transaction() as txn:
            aggregate = self._leased(txn, lease)
            if aggregate is None or not self._lease_matches(aggregate, lease):
                raise spec.StaleLease("the lease is not the task's current claim")
            aggregate.claim = None
            txn.save(aggregate)

    def transition(
        self,
        task_id: str,
        expected_revision: int,
        event: spec.Event,
        authority: spec.RequestAuthority | spec.WorkerAuthority,
    ) -> spec.Transition:
        self._check_transition_args(task_id, expected_revision, authority)
        if self._authority_first():
            self._check_authority_shape(task_id, event, authority)
        with self._transaction() as txn:
            aggregate = self._require(txn, task_id)
            now = self.env.clock()
            self._check_authority(aggregate, event, authority, now)
            invalid = self._event_problem(event)
            if invalid is not None:
                raise invalid
            original = self._seen(aggregate, event)
            if original is not None:
                return spec.Transition(spec.DUPLICATE, aggregate.snapshot, original.effects,
                                       original.event_revision, original.committed_at)
            current = aggregate.snapshot
            if not self._revision_ok(current, expected_revision):
                raise spec.Conflict(f"revision is {current.revision}", payload=current)
            committed_at = self._committed_at(current.task, now)
            reduced, effects = self._reduce(current, event, committed_at)
            if reduced is None:
                return spec.Transition(spec.UNCHANGED, current, effects, current.revision,
                                       committed_at)
            revision = current.revision + 1
            task = attrs.evolve(reduced.task, last_updated_at=committed_at)
            snapshot = attrs.evolve(reduced, task=task, revision=revision)
            applied = spec.Transition(spec.APPLIED, snapshot, effects, revision, committed_at)
            aggregate.snapshot = snapshot
            aggregate.seen[event.id] = (event, applied)
            txn.save(aggregate)
            return applied

    def worker_snapshot(self, task_id: str, lease: Any) -> spec.Snapshot:
        self._check_task_id(task_id)
        with self._reading() as txn:
            aggregate = txn.load(task_id)
            if aggregate is None:
                raise self._worker_task_missing(task_id)
            if not self._lease_valid(aggregate, lease, self.env.clock()):
                raise spec.StaleLease("the lease is not the task's live claim")
            return aggregate.snapshot

    def reap(self) -> list[str]:
        with self._transaction() as txn:
            ids = self._reap_ids(txn, self.env.clock())
            for task_id in ids:
                self._reap_one(txn, task_id)
            return ids

    # -- steps shared by the operations ---------------------------------------------------------

    def _create_scope(self, task: spec.Task, work: spec.Work, access: Any) -> str | None:
        """What create refuses before the transaction (the work's type, the access, an early
        validation); the scope the task is created in."""
        if not isinstance(work, spec.Work):
            raise spec.FunctionClause("create takes a Work")
        if not (
            self._genuine_access(access) and access.kind == "create" and access.task_id == task.id
        ):
            raise spec.UnauthorizedAction(f"no create access for task {task.id!r}")
        if self._validate_early():
            self._check_valid(task, work)
        return access.scope

    def _check_create(self, txn: Txn, task: spec.Task, work: spec.Work,
                      scope: str | None) -> None:
        """What create refuses inside the transaction, in the order the options name."""
        if self._capacity_first():
            self._check_capacity(txn, scope)
        if txn.load(task.id) is not None:
            raise spec.AlreadyExists(task.id)
        if not self._capacity_first():
            self._check_capacity(txn, scope)
        if not self._validate_early():
            self._check_valid(task, work)

    def _insert_task(self, txn: Txn, task: spec.Task, work: spec.Work,
                     scope: str | None) -> spec.Snapshot:
        snapshot = spec.Snapshot(task, work, 0, 0, None, None, {}, {})
        txn.insert(Aggregate(scope=scope, snapshot=snapshot))
        return snapshot

    def _hidden_by_ttl(self, aggregate: Aggregate, now: int) -> bool:
        """get's reading of the TTL: an expired task is not_found."""
        return self._expired(aggregate, now)

    def _worker_task_missing(self, task_id: str) -> ContractError:
        """worker_snapshot of a missing task: not_found, before the lease is looked at."""
        return spec.NotFound(task_id)

    def _reap_one(self, txn: Txn, task_id: str) -> None:
        """Remove an expired task with all it stored (its seen events included)."""
        txn.delete(task_id)

    @staticmethod
    def _require(txn: Txn, task_id: str) -> Aggregate:
        aggregate = txn.load(task_id)
        if aggregate is None:
            raise spec.NotFound(task_id)
        return aggregate

    def _leased(self, txn: Txn, lease: Any) -> Aggregate | None:
        """The aggregate a genuine lease names; ``None`` for anything else."""
        if not self._genuine_lease(lease):
            return None
        return txn.load(lease.task_id)

    def _grant(
        self, txn: Txn, aggregate: Aggregate, owner_id: str, lease_ms: int, now: int
    ) -> spec.Claimed:
        generation = self._next_generation(aggregate)
        claim = Claim(owner_id, self._new_token(), generation, now + lease_ms, self.store_id)
        aggregate.generation = generation
        aggregate.claim = claim
        txn.save(aggregate)
        lease = Lease(self.store_id, aggregate.task_id, owner_id, claim.token, generation,
                      claim.expires_at)
        return spec.Claimed(aggregate.snapshot, lease)

    def _check_authority(
        self, aggregate: Aggregate, event: spec.Event, authority: Any, now: int
    ) -> None:
        if isinstance(authority, spec.RequestAuthority):
            access = authority.access
            if type(access) is not Access:
                raise self._forged_request(aggregate.task_id)
            if not self._genuine_access(access) or not self._same_scope(access, aggregate):
                raise spec.NotFound(aggregate.task_id)
            if self._expired(aggregate, now):
                raise spec.NotFound(aggregate.task_id)
            if access.kind not in EVENT_KINDS or access.task_id != aggregate.task_id:
                raise spec.UnauthorizedAction(f"a {access.kind} access cannot send events")
            if not self._action_allows(access.kind, event.kind):
                raise spec.UnauthorizedAction(f"a {access.kind} access cannot send {event.kind}")
            return
        # Anything else is a worker's claim to act; a bare value is checked as the lease.
        lease = authority.lease if isinstance(authority, spec.WorkerAuthority) else authority
        if not self._lease_valid(aggregate, lease, now):
            raise spec.StaleLease("the lease is not the task's live claim")
        if event.kind not in spec.WORKER_KINDS:
            raise spec.UnauthorizedAction(f"a worker cannot send {event.kind}")

    def _check_authority_shape(self, task_id: str, event: spec.Event, authority: Any) -> None:
        """transition_check_order=authority_first: what is refused before the task is read
        (the authority's type, store, action, task id and event kind)."""
        if isinstance(authority, spec.RequestAuthority):
            access = authority.access
            if type(access) is not Access:
                raise self._forged_request(task_id)
            if not self._genuine_access(access):
                raise spec.NotFound(task_id)
            if access.kind not in EVENT_KINDS or access.task_id != task_id:
                raise spec.UnauthorizedAction(f"a {access.kind} access cannot send events")
            if not self._action_allows(access.kind, event.kind):
                raise spec.UnauthorizedAction(f"a {access.kind} access cannot send {event.kind}")
            return
        lease = authority.lease if isinstance(authority, spec.WorkerAuthority) else authority
        if type(lease) is not Lease:
            raise spec.UnauthorizedAction("the worker authority is not a lease")
        if not self._genuine_lease(lease) or lease.task_id != task_id:
            raise spec.StaleLease("the lease is another store's or another task's")
        if event.kind not in spec.WORKER_KINDS:
            raise spec.UnauthorizedAction(f"a worker cannot send {event.kind}")
