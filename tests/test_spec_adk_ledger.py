"""The adk-ledger clause catalogue is complete, well-formed and wired to real checks."""

from __future__ import annotations

from fencepost.spec import adk_ledger as spec


def test_each_doc_versus_implementation_difference_is_a_choice() -> None:
    names = {c.name for c in spec.CHOICES}
    assert names == {"store_clock", "finish_phases", "renew_atomic", "delete_completed",
                     "owned_view", "metadata_keys", "finish_outcome"}
    for choice in spec.CHOICES:
        assert choice.default in dict(choice.values)
    assert {c.choice for c in spec.CLAUSES if c.choice} == names


def test_errors_carry_the_seed_atoms() -> None:
    assert {e.code for e in (spec.AlreadyExists, spec.NotFound, spec.Completed,
                             spec.InvocationOwned, spec.StaleOwner, spec.LeaseExpired,
                             spec.InvalidTerminalPhase)} == {
        "already_exists", "not_found", "completed", "invocation_owned", "stale_owner",
        "lease_expired", "invalid_terminal_phase"}
    assert all(issubclass(e, spec.ContractError) for e in (spec.StaleOwner, spec.NotFound))
