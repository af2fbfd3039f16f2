"""The mutants that keep a time in a 32-bit integer: right while times are small, wrong at the
kit's clock (a real date, :data:`~fencepost.scenarios.runner.CLOCK_START`), which is why the
kit's clock starts there."""

from __future__ import annotations

import uuid
from typing import Any

from fencepost.adapter_spec import resolve_adapter
from fencepost.adapters.mutants.base import int32
from fencepost.env import AdapterEnv
from fencepost.scenarios.runner import CLOCK_START
from fencepost.spec import ledgence_tasks as ldg
from fencepost.spec import snodo_tasks as snodo


class _Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def _store(contract: str, adapter: str, now: int) -> tuple[Any, Any, AdapterEnv]:
    factory, _ = resolve_adapter(contract, adapter)
    env = AdapterEnv(clock=_Clock(now), namespace=f"rd{uuid.uuid4().hex[:10]}")
    return factory, factory(env), env


def _adk_lease_until(adapter: str, now: int) -> int:
    factory, store, env = _store("adk-ledger", adapter, now)
    try:
        store.create("i1", {"workflow_id": "wf", "workflow_version": 1, "kind": "k"}, {})
        store.claim("i1", "c1", b"t1", now, 30_000)
        lease_until: int = store.get("i1").lease_until
        return lease_until
    finally:
        store.close()
        getattr(factory, "discard", lambda _env: None)(env)


def _snodo_claim_live(adapter: str, now: int) -> str:
    """A second claim right after the first: unavailable while the first claim is live."""
    factory, store, env = _store("snodo-tasks", adapter, now)
    try:
        create = store.authorize(snodo.Context("acme"), snodo.Action("create", "a"))
        store.create(snodo.Task("a", snodo.WORKING, None, now, now, None, 250, {}, None, None),
                     snodo.Work("idem", "render", {}, ()), create)
        store.claim("a", "w1", 30_000)
        try:
            store.claim("a", "w2", 30_000)
        except snodo.ContractError as e:
            return e.code
        return "ok"
    finally:
        store.close()
        getattr(factory, "discard", lambda _env: None)(env)


def _ledgence_lease_expiry(adapter: str, now: int) -> int:
    factory, store, env = _store("ledgence-tasks", adapter, now)
    scope = ldg.Scope("tenant-a", "prod")
    program = ldg.Program("mailer", "1.2.0")
    try:
        session = store.open_session(scope, "emails", 1)
        task = ldg.TaskInput(scope, "emails", program, "order-7", {}, ldg.RetryPolicy(3, 5000),
                             300_000)
        store.accept_resolved_submission(ldg.SubmitCommand("k", task), ldg.ProgramDescriptor(
            program, "sha256:" + "ab" * 32, 2048))
        reply = store.acquire(ldg.AcquireCommand(scope, "emails", session.id, 0, 1))
        expires_at: int = reply.assignment.lease.expires_at
        return expires_at
    finally:
        store.close()
        getattr(factory, "discard", lambda _env: None)(env)


def test_int32_wraps_as_a_32_bit_signed_integer_does() -> None:
    assert [int32(v) for v in (0, 2**31 - 1, 2**31, 2**32 - 1, -(2**31) - 1, CLOCK_START)] == [
        0, 2**31 - 1, -(2**31), -1, 2**31 - 1, 1_994_041_344]
    assert int32(2**31 + 0.5) == -(2**31) + 0.5 and int32(True) is True and int32("7") == "7"


def test_the_clock_starts_at_a_real_date_past_every_32_bit_integer() -> None:
    assert CLOCK_START == 1_767_225_600_000  # 2026-01-01T00:00:00Z
    assert int32(CLOCK_START) != CLOCK_START


def test_adk_lease_until_in_an_int32_is_right_only_while_times_are_small() -> None:
    assert _adk_lease_until("mutant:lease_until_as_i32", 1_000_000) == 1_030_000
    assert _adk_lease_until("memory", CLOCK_START) == CLOCK_START + 30_000
    assert _adk_lease_until("mutant:lease_until_as_i32", CLOCK_START) == int32(
        CLOCK_START + 30_000)


def test_a_snodo_claim_expiry_in_an_int32_has_ended_at_a_real_date() -> None:
    assert _snodo_claim_live("mutant:claim_expiry_as_i32", 1_000_000) == "unavailable"
    assert _snodo_claim_live("memory", CLOCK_START) == "unavailable"
    assert _snodo_claim_live("mutant:claim_expiry_as_i32", CLOCK_START) == "ok"


def test_a_ledgence_lease_expiry_in_an_int32_is_right_only_while_times_are_small() -> None:
    assert _ledgence_lease_expiry("mutant:lease_expiry_as_i32", 1_000_000) == 1_060_000
    assert _ledgence_lease_expiry("memory", CLOCK_START) == CLOCK_START + ldg.LEASE_MS
    assert _ledgence_lease_expiry("mutant:lease_expiry_as_i32", CLOCK_START) == int32(
        CLOCK_START + ldg.LEASE_MS)
