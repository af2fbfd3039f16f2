"""What every reference model returns, and the context a step runs in."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from fencepost.spec.clauses import Choice, Setting
from fencepost.spec.opaque import MISSING, ByIdentity, agree, all_fields
from fencepost.spec.ops import Op
from fencepost.spec.outcome import Outcome


@attrs.frozen
class Ctx:
    """The world around one step: the store's clock, the owners known dead, the options.

    ``now`` is the store-authoritative time (``env.clock()``) at the step; operations that take
    explicit time carry it in their own arguments.
    """

    now: int
    dead: frozenset[str] = frozenset()
    options: Mapping[str, str] = attrs.field(factory=dict)
    capabilities: frozenset[str] = frozenset()
    # name -> the value the store minted for it, for rules that order by real identifiers
    # (a page sorted by task id compares the store's ids, which the model cannot predict)
    minted: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Step:
    """The model's answer to one operation.

    ``clause`` decided the outcome (a mismatching outcome fails it); ``effect_clause`` governs
    the state afterwards (a mismatching observation after the step fails it).
    """

    outcome: Outcome
    state: Any
    clause: str
    effect_clause: str
    # Clauses the step also puts to the test when store and model agree on it (the order rule
    # when a claim passed other tasks over), without being the ones a difference fails.
    also: tuple[str, ...] = ()


@attrs.frozen
class OneOf:
    """Several answers are allowed (``claim_next`` may pick any recoverable task): the store's
    answer picks the option it matches (``Harness.pick``), and the model follows that choice.
    No match fails ``clause``."""

    options: tuple[Step, ...]
    clause: str
    description: str



def accepted(step: Step) -> bool:
    return step.outcome.code == "ok"


def field_diff(expected: Any, actual: Any) -> tuple[str, ...]:
    """Names of the innermost attrs fields that differ between two values of the same class
    (a nested value contributes its own differing fields, not its name), compared as the
    kit compares answers (:func:`~fencepost.spec.opaque.agree`)."""
    if type(expected) is not type(actual) or not attrs.has(type(expected)):
        return ("<value>",)
    out: list[str] = []
    for a in attrs.fields(type(expected)):
        left, right = getattr(expected, a.name), getattr(actual, a.name)
        if agree(left, right):  # a placeholder for a store-minted value matches it
            continue
        if attrs.has(type(left)) and type(left) is type(right):
            out += field_diff(left, right)
        else:
            out.append(a.name)
    return tuple(out)


_LEAF_FIELDS = ByIdentity(256)
""":func:`leaf_fields` of the values it was asked of (the harness asks it of the same model
records step after step); few: the values asked again are the last steps' (see ledgence's
``_VIEWED``)."""
_NO_FIELDS: frozenset[str] = frozenset()


def leaf_fields(value: Any) -> frozenset[str]:
    """Every innermost attrs field name of ``value`` (what :func:`field_diff` can report)."""
    names = all_fields(type(value))
    if names is None:
        return _NO_FIELDS
    cached: frozenset[str] = _LEAF_FIELDS.get(value)
    if cached is not MISSING:
        return cached
    out: set[str] = set()
    for name in names:
        inner = getattr(value, name)
        if all_fields(type(inner)) is None:
            out.add(name)
        else:
            out |= leaf_fields(inner)
    return _LEAF_FIELDS.put(value, frozenset(out))


def options_with_defaults(
    choices: Any, given: Mapping[str, str], settings: Any = ()
) -> dict[str, str]:
    """Fill in every choice's and setting's default and validate the given values."""
    known = {c.name: c for c in (*choices, *settings)}
    for name in given:
        if name not in known:
            raise ValueError(
                f"unknown option {name!r}; this contract has {', '.join(sorted(known)) or 'none'}"
            )
    return {name: c.validate(str(given.get(name, c.default))) for name, c in known.items()}


def as_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return dict(value or {})


StepFunction = Callable[[Any, Op, Ctx], "Step | OneOf"]
"""``step(state, op, ctx)``: the model's answer to ``op`` in ``state`` (pure)."""
Observe = Callable[[str, Any, Any], "Op | tuple[Op, ...] | None"]
"""``observe(key, bindings, state)``: the read-only op(s) whose answer shows a record's state,
or None when it cannot be read."""
Changed = Callable[[Any, Any], Iterable[str]]
"""``changed(state_before, state_after)``: the keys whose records a step changed besides its
own ``op.key()``."""
AnswerClause = Callable[[Op, str, Outcome, Outcome], "str | None"]
"""``answer_clause(op, step_clause, expected, actual)``: the clause a differing answer breaks
when the difference itself names it, else None."""
Pure = Callable[[Op, Any], bool]
"""``pure(op, answer)``: does ``op`` answered ``answer`` change nothing wherever it is placed?"""
Situations = Callable[[Any, Op, Ctx, Any], Iterable[tuple[str, str]]]
"""``situations(state_before, op, ctx, step)``: the (clause, situation) pairs an agreed step
put to the test."""
Reopened = tuple[Any, Mapping[str, Any], Sequence[tuple[Op, str]]]
"""What a reopen does (see :attr:`ContractModel.reopen`): the state after it, the new meaning
of each bound name whose meaning it changes, and the ops (with the name each answer is bound
to) the harness makes before it reads the records back."""
Reopen = Callable[[Any, Mapping[str, tuple[Any, Any]], Mapping[str, str]], Reopened]
"""``reopen(state, bindings, options)``: see :data:`Reopened`."""


@attrs.frozen
class ContractModel:
    """A contract's reference model as the harness sees it.

    ``step`` is the pure step function; ``observe`` builds the read that shows a record;
    ``field_clauses`` narrows a lone mismatching field after an accepted step to its own clause;
    ``choices`` are the documented options; ``settings`` the numeric ones. Blame is decided
    from these alone (:func:`attribute_outcome`, :func:`attribute_effect`): the clause the
    step names, narrowed by ``field_clauses``, ``refusal_clauses`` and ``answer_clause``.
    """

    name: str
    initial: Any
    step: StepFunction
    observe: Observe
    field_clauses: Mapping[str, str]
    choices: tuple[Choice, ...]
    durable_clause: str
    settings: tuple[Setting, ...] = ()
    mint_clause: str | None = None
    """Identifiers the store mints (``Opaque("task#1")`` in answers) must be unique: a store
    that hands out one id for two things breaks this clause. None: the contract mints none."""
    names_minted: bool = True
    """Whether the model's answers name what the store mints (an ``Opaque`` whose meaning is a
    name, filled in with the store's value once bound). False (snodo: its opaque values are
    accesses and leases the model describes): the harness neither fills in nor binds names,
    two walks over every answer saved."""
    refusal_clauses: Mapping[tuple[Any, ...], str] = attrs.field(factory=dict)
    """(op name, error code[, payload]) -> the clause a wrongful refusal of an allowed op
    breaks."""
    changed: Changed | None = None
    """The records a step changed besides its own (an acquisition claims some task): the
    harness reads them back too."""
    answer_clause: AnswerClause | None = None
    """The clause a differing answer (or read-back, with step_clause "") breaks when the
    difference itself names it."""
    pure: Pure | None = None
    """Reads and refusals: the linearizability search places such a call as soon as it fits
    without trying it anywhere later. None: no call is known to be pure."""
    situations: Situations | None = None
    """The cases of the catalogue's clauses (``Clause.situations``) an agreed step put to the
    test. None: none."""
    reopen: Reopen | None = None
    """What closing and opening the store again changes (snodo: every access and lease issued
    before is void, and the claims stay live or are released as ``reopen_claims`` says). None: a
    reopen keeps everything, the values issued before included."""


def reads_and_refusals(*reads: str) -> Pure:
    """A ``pure`` for models whose refusals (an ``Err`` answer) never change the state and
    whose ops named ``reads`` never do."""
    names = frozenset(reads)

    def pure(op: Any, answer: Any) -> bool:
        return op.name in names or getattr(answer, "code", "ok") != "ok"

    return pure


def attribute_effect(model: ContractModel, last: Step, expected: Any, actual: Any) -> str:
    """The clause a mismatching observation after ``last`` violates."""
    if not accepted(last):
        return last.effect_clause
    ok_values = getattr(expected, "value", None), getattr(actual, "value", None)
    if expected.code == actual.code == "ok":
        fields = field_diff(*ok_values)
        narrowed = {model.field_clauses.get(f) for f in fields}
        if len(narrowed) == 1:
            only = narrowed.pop()
            if only is not None:
                return only
    return last.effect_clause


def attribute_outcome(model: ContractModel, step: Step, actual: Any, op_name: str = "",
                      op: Any = None) -> str:
    """The clause a mismatching answer to ``step`` violates.

    When the model allowed the operation and the store refused it, the refusal itself can name
    the rule at stake better than the success path does (a claim refused ``deferred`` at
    exactly retry_at breaks the retry rule): ``refusal_clauses`` maps ``(op, code, payload)``
    or ``(op, code)`` to that clause. ``model.answer_clause`` may name it from the difference
    itself."""
    if model.answer_clause is not None and op is not None:
        named = model.answer_clause(op, step.clause, step.outcome, actual)
        if named is not None:
            return str(named)
    if step.outcome.code == actual.code == "ok":
        return attribute_effect(model, step, step.outcome, actual)
    if step.outcome.code == "ok" and actual.code != "ok":
        payload = getattr(actual, "payload", None)
        for key in ((op_name, actual.code, payload), (op_name, actual.code)):
            try:
                clause = model.refusal_clauses.get(key)
            except TypeError:  # an unhashable payload
                clause = None
            if clause is not None:
                return clause
    return step.clause
