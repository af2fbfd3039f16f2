"""Kinds of check, declared once: the seam a new kind of check plugs into.

A run is made of checks of a few kinds: the scripted scenarios, the cases under injected
database faults, the state machine, the real-thread races and the concurrent run. Each is one
:class:`CheckKind`: its name (the prefix of its checks' ids: ``scenario:create_twice``,
``machine``), the capabilities a store needs for it to run, how it cuts a run into parts (one
part for the kind, one per named check, or a place in another kind's part), and how it runs
its checks of one part on that part's world, recording what it found in the world's evidence
(failures, losses, :class:`~fencepost.scenarios.evidence.Ending` per check) and in the run
(:class:`PartRun`: examples, clauses gated off, the concurrent history).

The built-in kinds are declared in :mod:`fencepost.scenarios.phases`. A kind from outside the kit
is one module declaring a :class:`CheckKind`, found through the ``fencepost.check_kinds``
entry-point group (``NAME = "module:KIND"``), and one module per contract that has checks of that
kind, found through ``fencepost.checks`` (``CONTRACT.KIND = "module:OBJECT"``): the kind's
``run`` reads it with :func:`material`. A clause names the checks that cover it by their ids in
its ``checks``; :func:`covers` says which.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from fencepost.spec.errors import ConfigurationError

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

    from fencepost.model.history import History
    from fencepost.spec.clauses import Clause

    from .evidence import Evidence
    from .harness import World
    from .profiles import Profile
    from .said import Said
    from .suite import Suite

KIND_ENTRY_POINTS = "fencepost.check_kinds"
"""The entry-point group kinds of check from outside the kit are declared in."""
CHECK_ENTRY_POINTS = "fencepost.checks"
"""The entry-point group a contract's checks of a kind from outside are declared in
(``CONTRACT.KIND = "module:OBJECT"``)."""


class PartRun(Protocol):
    """What a kind's ``run`` is given: the part's world and the run's settings, and where it
    records what it found besides the world's evidence."""

    suite: Suite
    profile: Profile
    seed: int
    example_db: ExampleDatabase | None
    examples: int
    """State-machine runs made (examples and shrink replays)."""
    gated_off: dict[str, str]
    """Clause id -> why an option of the run turns its check off."""
    history: History | None
    """The concurrent run's history, if there was one."""

    @property
    def part(self) -> World: ...

    def progress(self, said: Said) -> None: ...

    def done(self, evidence: Evidence) -> bool: ...

    def first_for(self, kind: str) -> AbstractSet[str]:
        """The names of ``kind``'s checks the run wants first (``fencepost mutants``)."""
        ...


@attrs.frozen
class CheckKind:
    """One kind of check (see the module's docstring).

    - ``name``: the prefix of its checks' ids (``race`` for ``race:racing_claimers``);
    - ``run(run, name)``: run the kind's checks of one part on ``run.part`` (``name`` the check
      the part is for, when the kind is ``split``; else None);
    - ``requires``: the capabilities a store needs for the kind to run at all (the clauses it
      covers require them too: without them they are unsupported);
    - ``split(suite)``: the names of its checks, one part each; None: one part for the kind;
    - ``joins``: the kind whose part this one runs in, after it (the fast fault cases ride with
      the scenarios);
    - ``applies(suite)``: does ``suite``'s contract have checks of this kind (no part if not);
    - ``timing``: its key in a run's timings; ``replayable``: can a counterexample it finds be
      replayed as a script (a race's or a concurrent run's cannot: it depends on threads);
    - ``summary``: what a check of this kind does, in one line (``fencepost explain``);
    - ``wanted(profile)``: does a run at ``profile`` include the kind (the tour: only when
      asked for, ``--tour``).
    """

    name: str
    run: Callable[[PartRun, str | None], None]
    requires: frozenset[str] = frozenset()
    split: Callable[[Suite], Sequence[str]] | None = None
    joins: str | None = None
    applies: Callable[[Suite], bool] = lambda _suite: True
    timing: str = ""
    replayable: bool = True
    summary: str = ""
    wanted: Callable[[Profile], bool] = lambda _profile: True

    @property
    def timing_key(self) -> str:
        return self.timing or self.name


_BUILT_IN: dict[str, CheckKind] = {}


def declare(kind: CheckKind) -> CheckKind:
    """Add a built-in kind (in the order of the run: the engine's own, at import)."""
    _BUILT_IN[kind.name] = kind
    return kind


def kinds() -> tuple[CheckKind, ...]:
    """Every kind, in the run's order: the built-in ones, then those from outside by name."""
    from . import phases  # noqa: F401 - declares the built-in kinds

    return (*_BUILT_IN.values(), *_outside().values())


def kind(name: str) -> CheckKind | None:
    """The kind ``name`` (of a check id's prefix), or None if none is declared."""
    return next((k for k in kinds() if k.name == name), None)


def kind_of(check: str) -> str:
    """The kind's name in a check id: ``race`` for ``race:racing_claimers``."""
    return check.partition(":")[0]


def covers(clause: Clause, check: str) -> bool:
    """Does ``check`` (an id: ``scenario:create_twice``, ``machine``) put ``clause`` to the
    test? It does when the clause names it or its whole kind."""
    return check in clause.checks or kind_of(check) in clause.checks


def clauses_of(suite: Suite, check: str) -> list[str]:
    """The ids of the clauses ``check`` covers."""
    return [clause.id for clause in suite.clauses if covers(clause, check)]


def wanted(check: str, first: Collection[str]) -> bool:
    """Is ``check`` (``scenario``, ``race:NAME``) named in ``first`` (``scenario:NAME``,
    ``race:NAME``, ``race``, ``machine``)?"""
    return any(check == f or check == kind_of(f) or f == kind_of(check) for f in first)


def parts_of(suite: Suite, profile: Profile | None = None) -> tuple[tuple[str, ...], ...]:
    """The independent parts of a run of ``suite`` (at ``profile``: the kinds it wants), in
    order, each as the ids of its checks (``("scenario", "fault")``, ``("machine",)``,
    ``("race:NAME",)``, ...)."""
    out: list[list[str]] = []
    home: dict[str, int] = {}
    for k in kinds():
        if not k.applies(suite) or (profile is not None and not k.wanted(profile)):
            continue
        if k.joins is not None and k.joins in home:
            out[home[k.joins]].append(k.name)
        elif k.split is not None:
            out.extend([f"{k.name}:{name}"] for name in k.split(suite))
        else:
            home[k.name] = len(out)
            out.append([k.name])
    return tuple(tuple(p) for p in out)


def run_check(run: PartRun, check: str) -> str:
    """Run the checks of ``check`` (a part's entry: ``scenario``, ``race:NAME``) on the part's
    world, unless the store lacks a capability the kind requires; the kind's timing key."""
    k = kind(kind_of(check))
    if k is None:
        raise ConfigurationError(f"no kind of check is declared for {check!r}")
    if k.requires <= run.part.capabilities:
        name = check.partition(":")[2]
        k.run(run, name or None)
    return k.timing_key


def material(suite: Suite, kind_name: str) -> Any:
    """What ``suite``'s contract declares for the outside kind ``kind_name`` (its
    ``fencepost.checks`` entry point ``CONTRACT.KIND``), or None."""
    point = _checks().get(f"{suite.model.name}.{kind_name}")
    if point is None:
        return None
    try:
        return point.load()
    except Exception as e:  # noqa: BLE001 - a broken plugin, said as such
        raise ConfigurationError(f"the checks {point.name} = {point.value} cannot be loaded: "
                                 f"{type(e).__name__}: {e}") from e


@functools.cache
def _checks() -> Mapping[str, Any]:
    found: dict[str, Any] = {}
    for point in entry_points(group=CHECK_ENTRY_POINTS):
        found.setdefault(point.name, point)
    return found


@functools.cache
def _outside() -> Mapping[str, CheckKind]:
    """The kinds declared through ``fencepost.check_kinds``, by name (read once)."""
    from . import phases  # noqa: F401 - declares the built-in kinds

    found: dict[str, CheckKind] = {}
    for point in sorted(entry_points(group=KIND_ENTRY_POINTS), key=lambda p: p.name):
        if point.name in _BUILT_IN:
            raise ConfigurationError(
                f"the check kind {point.name!r} ({point.value}) is one of the kit's own "
                f"({', '.join(_BUILT_IN)}); give it another name")
        if point.name in found:
            continue  # a distribution found twice on the path
        try:
            declared = point.load()
        except Exception as e:  # noqa: BLE001 - a broken plugin, said as such
            raise ConfigurationError(
                f"the check kind {point.name!r} ({point.value}) cannot be loaded: "
                f"{type(e).__name__}: {e}") from e
        if not isinstance(declared, CheckKind) or declared.name != point.name:
            raise ConfigurationError(
                f"the entry point {point.name} = {point.value} must name a "
                f"fencepost.authoring.CheckKind(name={point.name!r}, ...), not "
                f"{declared!r:.80}")
        found[point.name] = declared
    return found
