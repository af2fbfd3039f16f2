"""Clauses: the normative rules of a contract, each with a stable id and the checks covering it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import attrs


@attrs.frozen
class Clause:
    """One rule of a contract.

    ``id`` is stable across kit versions (reports and baselines key on it); ``text`` is the
    normative sentence; ``checks`` names the checks that can fail it; ``requires`` lists the
    adapter capabilities without which the clause is reported ``unsupported``; ``choice`` names
    the documented doc-versus-implementation choice the clause depends on, if any.
    """

    id: str
    title: str
    text: str
    checks: tuple[str, ...]
    requires: frozenset[str] = frozenset()
    choice: str | None = None


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
        if value == "infinity" or (value.isdigit() and int(value) > 0):
            return value
        raise ValueError(
            f"option {self.name}={value!r} must be a positive integer or 'infinity'"
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
