"""The adk-ledger clause catalogue is complete, well-formed and wired to real checks."""

from __future__ import annotations

from fencepost.spec import adk_ledger as spec


def test_each_doc_versus_implementation_difference_is_a_choice() -> None:
    names = {c.name for c in spec.CHOICES}
    assert names == {"store_clock", "finish_phases", "renew_atomic", "delete_completed",
                     "owned_view", "metadata_keys", "finish_outcome", "empty_strings",
                     "owner_view"}
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


def test_each_guard_answers_with_the_seeds_own_atom() -> None:
    assert {name: e.code for name, e in spec.ARGUMENT_ERRORS.items()} == {
        "create": "invalid_create_arguments", "get": "invalid_invocation_id",
        "delete": "invalid_invocation_id", "claim": "invalid_claim_arguments",
        "renew": "invalid_renew_arguments", "checkpoint": "invalid_checkpoint_arguments",
        "finish": "invalid_finish_arguments"}
    assert set(spec.ARGUMENT_ERRORS) == set(spec.PROTOCOL_METHODS)


def test_an_id_that_is_no_string_names_no_record() -> None:
    assert spec.Get(None).key() is None  # type: ignore[arg-type]
    assert spec.Delete("").key() == ""
