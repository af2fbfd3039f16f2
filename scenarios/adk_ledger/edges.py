"""Calls with one argument at its edge, for the ADK-ARG clauses: what the seed's function heads
refuse (adk_invocation_ledger_mnesia.erl: create 52-54, get 82, claim 96-99, renew 138-140,
checkpoint 152-154, finish 170-172, delete 197) and what they take (an empty id or token, a
time of 0 or below). The model says what each answers; these only say what is sent.

The wrong types are the ones no mapping of Python values onto Erlang terms makes right:
``None`` for a string (Erlang's ``undefined`` is an atom, no binary), ``2.5`` and ``True`` for
an integer (``true`` is an atom), a list for a map, ``5`` for a phase (no atom).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fencepost.spec import adk_ledger as spec
from fencepost.spec.ops import Op

from .meta import create_metadata

NO_STRING: Any = None
NO_INTEGER: Any = 2.5
NO_INTEGER_EITHER: Any = True  # a bool is no integer to is_integer (true is an atom)
NO_MAPPING: Any = ["step", 1]
NO_PHASE: Any = 5
LEASE = 10


def malformed(options: Mapping[str, str], inv: str, owner: str, token: spec.Token,
              now: int) -> tuple[Op, ...]:
    """One call per argument the guards refuse, on the invocation ``inv`` (whichever state it
    is in: the guard comes first) with ``token``: each must be refused and change nothing.
    The create of an empty id is not among them: its id cannot be prefixed, so a store that
    took it would show the record to every later check (``arguments_at_their_edges`` sends it
    on a store of its own)."""
    meta = create_metadata(options, {})
    refuse_empty = options.get("empty_strings", "refused") == "refused"
    return (
        spec.Create(NO_STRING, meta, {}),
        spec.Create(inv, NO_MAPPING, {}),
        spec.Create(inv, meta, NO_STRING),
        spec.Get(NO_STRING),
        spec.Delete(NO_STRING),
        spec.Claim(NO_STRING, owner, token, now, LEASE),
        spec.Claim(inv, NO_STRING, token, now, LEASE),
        spec.Claim(inv, owner, NO_STRING, now, LEASE),
        *((spec.Claim(inv, owner, "", now, LEASE),) if refuse_empty else ()),
        spec.Claim(inv, owner, token, NO_INTEGER, LEASE),
        spec.Claim(inv, owner, token, now, 0),
        spec.Claim(inv, owner, token, now, -LEASE),
        spec.Claim(inv, owner, token, now, NO_INTEGER),
        spec.Claim(inv, owner, token, NO_INTEGER_EITHER, LEASE),
        spec.Renew(NO_STRING, token, now, LEASE),
        spec.Renew(inv, NO_STRING, now, LEASE),
        spec.Renew(inv, token, NO_INTEGER, LEASE),
        spec.Renew(inv, token, now, 0),
        spec.Renew(inv, token, now, -LEASE),
        spec.Renew(inv, token, now, NO_INTEGER),
        spec.Renew(inv, token, now, NO_INTEGER_EITHER),
        spec.Checkpoint(inv, token, NO_MAPPING, now, LEASE),
        spec.Checkpoint(inv, token, {"step": 9}, now, 0),
        spec.Checkpoint(inv, token, {"step": 9}, now, -LEASE),
        spec.Checkpoint(inv, NO_STRING, {"step": 9}, NO_INTEGER, LEASE),
        spec.Finish(inv, token, NO_PHASE, None, {}, now),
        spec.Finish(inv, token, "completed", None, NO_STRING, now),
        spec.Finish(inv, token, "running", None, NO_MAPPING, now),  # the guard before the phase
        spec.Finish(inv, token, "completed", None, {}, NO_INTEGER),
        spec.Finish(inv, NO_STRING, "completed", None, {}, now),
        spec.Finish(NO_STRING, token, "completed", None, {}, now),
    )


def empty_strings(inv: str, owner: str, now: int) -> tuple[Op, ...]:
    """The empty id and the empty token where every reading takes them: the empty id is no
    record, the empty token no holder (``inv`` is a running record)."""
    return (
        spec.Get(""),
        spec.Delete(""),
        spec.Claim("", owner, f"{owner}-t", now, LEASE),
        spec.Renew("", "t", now, LEASE),
        spec.Checkpoint("", "t", {}, now, LEASE),
        spec.Finish("", "t", "completed", None, {}, now),
        spec.Renew(inv, "", now, LEASE),
        spec.Checkpoint(inv, "", {"step": 9}, now, LEASE),
        spec.Finish(inv, "", "completed", None, {}, now),
    )
