"""The adk-ledger mutants for arguments at their edges (the ADK-ARG clauses): each is
the correct core with its guard bent in one place, the way stores get argument checking wrong
(a check too weak, too strict, or in the wrong order)."""

from __future__ import annotations

from typing import Any

import attrs

from fencepost.adapters.adk_ledger.core import LedgerCore, is_integer
from fencepost.adapters.mutants.base import Mutant
from fencepost.spec import adk_ledger as spec
from fencepost.spec.adk_ledger import StoredInvocation


class CreateAcceptsEmptyId(LedgerCore):
    """Checks that the id is a string, not that it has a character."""

    def _valid_id(self, invocation_id: Any, creating: bool = False) -> bool:
        return isinstance(invocation_id, str)


class NonStringIdIsMissing(LedgerCore):
    """Looks any id up as given (``WHERE invocation_id = NULL`` finds nothing)."""

    def _check_id(self, invocation_id: Any) -> None:
        return


class EmptyIdRefused(LedgerCore):
    """get and delete validate the id as create does: the empty one is refused."""

    def _check_id(self, invocation_id: Any) -> None:
        if invocation_id == "":
            raise spec.InvalidInvocationId("the id is empty")
        super()._check_id(invocation_id)


class LeaseOfZeroTaken(LedgerCore):
    """Validates lease_ms >= 0 where it must be > 0: a lease of 0 is granted already over."""

    def _valid_lease(self, lease_ms: Any) -> bool:
        return is_integer(lease_ms) and lease_ms >= 0


class ClaimAcceptsEmptyToken(LedgerCore):
    """Checks a token's type and never its length: a claim stores the empty token (text or
    bytes, like any other, as the seed's real caller sends 32 random bytes)."""

    def _valid_token(self, token: Any, claiming: bool = False) -> bool:
        return isinstance(token, str | bytes)


class OneByteTokenRefused(LedgerCore):
    """Checks a claim's token as longer than one byte (``> 1`` for the seed's ``> 0``, a
    check written against a minimum length): a token of one byte is refused."""

    def _valid_token(self, token: Any, claiming: bool = False) -> bool:
        size = len(token.encode() if isinstance(token, str) else token) if isinstance(
            token, str | bytes) else None
        return super()._valid_token(token, claiming) and not (claiming and size == 1)


class NegativeTimeRefused(LedgerCore):
    """Takes a time below 0 for a caller's mistake: NowMs is any integer in the seed."""

    def _valid_time(self, now_ms: Any) -> bool:
        return super()._valid_time(now_ms) and now_ms >= 0


class FloatTimeTaken(LedgerCore):
    """A JSON number is a time: 2.5 ms passes where the seed's is_integer refuses it."""

    def _valid_time(self, now_ms: Any) -> bool:
        return is_integer(now_ms) or isinstance(now_ms, float)


class WritesTakeAnyLease(LedgerCore):
    """Only claim validates lease_ms; renew and checkpoint store whatever they are given."""

    def _valid_write_lease(self, lease_ms: Any) -> bool:
        return True


class CheckpointTakesAnyValue(LedgerCore):
    """checkpoint validates everything but the checkpoint, which a JSON column takes as
    given."""

    def checkpoint(self, invocation_id: str, owner_token: spec.Token, checkpoint: Any, now_ms: int,
                   lease_ms: int) -> None:
        self._check_write(spec.InvalidCheckpointArguments, invocation_id, owner_token, now_ms,
                          lease_ms)
        with self._locked(invocation_id) as slot:
            row = self._require(slot)
            self._check_writer(row, owner_token, now_ms)
            slot.update(attrs.evolve(row, checkpoint=checkpoint, lease_until=now_ms + lease_ms,
                                     revision=row.revision + 1, updated_at=now_ms))


class PhaseTypeUnchecked(LedgerCore):
    """finish checks the phase against the list only: 5 is no finish phase
    (invalid_terminal_phase) where the seed's guard answers invalid_finish_arguments."""

    def _valid_phase_type(self, phase: Any) -> bool:
        return True


class AcceptsEmptyPhase(LedgerCore):
    """Under finish_phases=any, takes every string but ready and running, the empty one too."""

    def _valid_finish_phase(self, phase: Any) -> bool:
        if self.options["finish_phases"] == "any":
            return isinstance(phase, str) and phase not in (spec.READY, spec.RUNNING)
        return super()._valid_finish_phase(phase)


class EmptyStringsRefusedWhenAccepted(LedgerCore):
    """The seed's refusal of the empty id and token kept when the run asks to take them."""

    def _empty_refused(self) -> bool:
        return True


class LeaseUntilZeroIsUnowned(LedgerCore):
    """Reads lease_until 0 as 'no lease' (it is 0 on every unowned record), so a lease taken at
    -10 for 10 ms can be claimed by anybody while it is live."""

    def _claimable(self, row: StoredInvocation, now: int) -> bool:
        return row.lease_until == 0 or super()._claimable(row, now)


ADK_LEDGER = (
    Mutant("create_accepts_empty_id", "create stores a record under the empty id",
           "ADK-ARG-001", CreateAcceptsEmptyId),
    Mutant("empty_strings_refused_when_accepted", "the empty id and token refused although "
           "the run asks to take them", "ADK-ARG-001", EmptyStringsRefusedWhenAccepted,
           options={"empty_strings": "accepted"}),
    Mutant("non_string_id_is_missing", "get and delete look an id that is no string up as "
           "given and answer not_found", "ADK-ARG-002", NonStringIdIsMissing),
    Mutant("empty_id_refused", "get and delete refuse the empty id, which is just missing",
           "ADK-ARG-002", EmptyIdRefused),
    Mutant("lease_of_zero_taken", "lease_ms validated as >= 0: a lease of 0 ms is granted",
           "ADK-ARG-003", LeaseOfZeroTaken),
    Mutant("claim_accepts_empty_token", "claim stores the empty token", "ADK-ARG-003",
           ClaimAcceptsEmptyToken),
    Mutant("one_byte_token_refused", "claim refuses a token of one byte", "ADK-ARG-003",
           OneByteTokenRefused),
    Mutant("negative_time_refused", "a now_ms below 0 refused as a caller's mistake",
           "ADK-ARG-003", NegativeTimeRefused),
    Mutant("float_time_taken", "a now_ms of 2.5 taken as a time", "ADK-ARG-003",
           FloatTimeTaken),
    Mutant("writes_take_any_lease", "renew and checkpoint do not validate lease_ms",
           "ADK-ARG-004", WritesTakeAnyLease),
    Mutant("checkpoint_takes_any_value", "a checkpoint that is no mapping is stored as given",
           "ADK-ARG-004", CheckpointTakesAnyValue),
    Mutant("phase_type_unchecked", "finish answers invalid_terminal_phase for a phase that is "
           "no string, before its guard", "ADK-ARG-005", PhaseTypeUnchecked),
    Mutant("accepts_empty_phase", "finish takes the empty phase where any phase is allowed",
           "ADK-FINISH-001", AcceptsEmptyPhase, options={"finish_phases": "any"}),
    Mutant("lease_until_zero_is_unowned", "lease_until 0 read as no lease: a live lease that "
           "ends at 0 can be claimed", "ADK-CLAIM-004", LeaseUntilZeroIsUnowned),
)
