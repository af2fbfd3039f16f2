"""Clauses: the normative rules of a contract, each with a stable id and the checks covering it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import attrs


@attrs.frozen
class Situation:
    """A case that puts a clause's rule to the test: a boundary at exactly ``lease_until``,
    a claim of a record in one particular phase, an ordering with two candidates...

    A run counts how often each was reached (and held); a clause that passed without reaching
    one of its situations passed weakly. ``when`` limits it to runs under those option values
    and ``requires`` to stores with those capabilities (elsewhere it cannot be reached).
    """

    name: str
    when: tuple[tuple[str, str], ...] = ()
    requires: frozenset[str] = frozenset()

    def applies(self, options: Mapping[str, str], capabilities: frozenset[str]) -> bool:
        return self.requires <= capabilities and all(
            options.get(name) == value for name, value in self.when)


def situation(name: str, *requires: str, **when: str) -> Situation:
    """``situation("at lease_until", "durable", finish_outcome="normalized")``."""
    return Situation(name, tuple(sorted(when.items())), frozenset(requires))


def _situations(given: Iterable[str | Situation]) -> tuple[Situation, ...]:
    out = tuple(s if isinstance(s, Situation) else Situation(s) for s in given)
    if len({s.name for s in out}) != len(out):
        raise ValueError(f"duplicate situation in {[s.name for s in out]}")
    return out


@attrs.frozen
class Clause:
    """One rule of a contract.

    ``id`` is stable across kit versions (reports and baselines key on it); ``text`` is the
    normative sentence; ``checks`` names the checks that can fail it; ``requires`` lists the
    adapter capabilities without which the clause is reported ``unsupported``; ``choice`` names
    the documented doc-versus-implementation choice the clause depends on, if any;
    ``situations`` are the cases a run must reach for its pass to be more than weak.
    """

    id: str
    title: str
    text: str
    checks: tuple[str, ...]
    requires: frozenset[str] = frozenset()
    choice: str | None = None
    situations: tuple[Situation, ...] = attrs.field(default=(), converter=_situations)

    def situations_for(self, options: Mapping[str, str],
                       capabilities: frozenset[str]) -> tuple[Situation, ...]:
        """The situations that can be reached in a run with these options and capabilities."""
        return tuple(s for s in self.situations if s.applies(options, capabilities))


@attrs.frozen
class Choice:
    """A place where a seed's documentation and its implementation disagree.

    The kit never decides such a point by accident: each is a named option whose ``default`` is
    what the implementation does; ``values`` maps every supported value to what it means.
    Where a seed's own stores disagree, ``doc_says`` and ``implementation_does`` hold the two
    stores' readings. ``source`` cites the seed's file and line each reading comes from.
    """

    name: str
    doc_says: str
    implementation_does: str
    default: str
    values: tuple[tuple[str, str], ...]
    source: str = ""

    def validate(self, value: str) -> str:
        allowed = [v for v, _ in self.values]
        if value not in allowed:
            raise ValueError(
                f"option {self.name}={value!r} is not supported; use one of {', '.join(allowed)}"
            )
        return value


@attrs.frozen
class Setting:
    """A numeric option of a contract (a capacity limit...): a positive integer or
    ``infinity``, passed to the adapter in ``env.options``."""

    name: str
    default: str
    meaning: str

    def validate(self, value: str) -> str:
        # ASCII digits without a sign or leading zero: what an adapter in any language parses
        # (str.isdigit takes "²" and "٣", which int() then refuses).
        if value == "infinity" or (value.isascii() and value.isdigit() and value[0] != "0"):
            return value
        raise ValueError(
            f"option {self.name}={value!r} must be a positive integer (ASCII digits, no sign or "
            "leading zero) or 'infinity'"
        )


def limit(value: str) -> float:
    """A setting's value as a number (``infinity`` -> inf)."""
    return float("inf") if value == "infinity" else int(value)


class Catalogue:
    """An ordered, id-indexed set of clauses."""

    def __init__(self, clauses: Iterable[Clause]) -> None:
        self._clauses = tuple(clauses)
        self._by_id = {c.id: c for c in self._clauses}
        if len(self._by_id) != len(self._clauses):
            raise ValueError("duplicate clause id in catalogue")

    def __iter__(self) -> Iterator[Clause]:
        return iter(self._clauses)

    def __len__(self) -> int:
        return len(self._clauses)

    def __contains__(self, clause_id: object) -> bool:
        return clause_id in self._by_id

    def __getitem__(self, clause_id: str) -> Clause:
        return self._by_id[clause_id]
