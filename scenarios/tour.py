"""The transition tour: every edge of the model's bounded state graph, run on the store.

A contract that has a tour declares a :class:`Scope` (``Suite.tour``): the moves a walk may
make from a state (a call, a clock move, a reopen), each named by a label that does not depend
on ids or absolute times, and an *abstraction* of states under which equivalent states are
merged (ids by their role, times relative to now and to the nearest lease boundary, counters
capped where the rules stop telling them apart). The bound is what the scope's moves and
abstraction allow; :attr:`Scope.bound` says it in words, for the report.

1. :func:`explore`: breadth-first over the model alone (pure, no store), from the initial
   state, every move of every abstract state: the bounded graph, its states and edges, each
   edge with the decisions the model takes on it (the clause and the answer's code of each
   call the move makes) and the shortest path that reaches each state.
2. :func:`plan`: a set of move sequences from the initial state that together run every edge:
   a walk that takes an edge not run yet while the state it is in has one, goes to a state
   that has one within a few moves when it has none, and otherwise starts a new sequence at
   the shortest path to the nearest such state. The walk follows the graph's edges (exploring
   stepped the model on each); the same scope gives the same sequences in the same order on
   every run.
3. :func:`run_tour`: each sequence on the store through the :class:`~.harness.Harness` (every
   answer and read-back compared as in every other check), ids prefixed per sequence; a
   failure is shrunk (the shortest path to the failing edge, then one move removed at a time
   while the same clause still fails) and recorded like the others; the coverage
   (:class:`TourCoverage`) says how much of the graph ran on the store.

The abstraction must be sound: two states are merged only when every move in scope takes the
same decisions from both and leads to merged states again. :func:`explore` with ``verify``
checks that on every merge it makes (the contracts' tests run it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from fencepost.model.base import ContractModel
from fencepost.spec.ops import Op

from .harness import ClauseViolation, Harness, World
from .shrinking import UNLIMITED, Shrinking
from .tour_coverage import TourCoverage
from .tour_graph import Graph, Move, Plan, Scope, Tourist, explore, plan
from .world import StoreLost

__all__ = ["TOUR", "Graph", "Move", "Plan", "Scope", "TourRun", "Tourist", "TourCoverage",
           "explore", "plan", "puts_to_the_test", "run_tour", "tour_clauses",
           "tour_coverage", "tour_of"]

TOUR = "tour"
"""The check's id (and its kind's name)."""
SHRINK_TRIES = 200
"""The most replays one failure's shrinking makes."""


class StoreTourist:
    """The store and the model together: every call through ``h``."""

    def __init__(self, h: Harness) -> None:
        self.h = h

    @property
    def state(self) -> Any:
        return self.h.state

    @property
    def now(self) -> int:
        return self.h.now

    @property
    def dead(self) -> frozenset[str]:
        return frozenset(self.h.world.dead)

    @property
    def options(self) -> Mapping[str, str]:
        return self.h.world.options

    @property
    def capabilities(self) -> frozenset[str]:
        return self.h.world.capabilities

    def apply(self, actor: str, op: Op) -> Any:
        return self.h.apply(actor, op)

    def advance(self, ms: int) -> None:
        self.h.advance(ms)

    def set_time(self, ms: int) -> None:
        self.h.set_time(ms)

    def kill(self, owner: str) -> None:
        self.h.kill(owner)

    def reopen(self) -> None:
        self.h.reopen()


_MADE: dict[tuple[int, int, tuple[tuple[str, str], ...], frozenset[str]],
            tuple[Scope, ContractModel, Graph, Plan]] = {}


def tour_of(scope: Scope, model: ContractModel, options: tuple[tuple[str, str], ...],
            capabilities: frozenset[str]) -> tuple[Graph, Plan]:
    """The graph and plan for one scope, model, options and capabilities (made once per
    process: a run's tour and its clauses ask for them again)."""
    key = (id(scope), id(model), options, capabilities)
    made = _MADE.get(key)
    if made is None or made[0] is not scope or made[1] is not model:
        opts = dict(options)
        graph = explore(scope, model, opts, capabilities)
        smaller = getattr(scope, "first", None)
        first = () if smaller is None else tour_of(smaller, model, options,
                                                   capabilities)[1].sequences
        made = _MADE[key] = (scope, model, graph, plan(graph, first))
    return made[2], made[3]


Stop = Callable[[], bool]


def tour_clauses(scope: Scope, world: World) -> list[str]:
    """The clauses the tour of ``scope`` puts to the test on ``world``: those its graph's
    decisions name."""
    graph, _ = tour_of(scope, world.model, tuple(sorted(world.options.items())),
                       world.capabilities)
    return sorted(graph.clause_edges())


PROGRESS_EVERY = 25
"""Progress is told every this many sequences."""


@attrs.define
class TourRun:
    """How far a tour got, filled as it goes (so that a caller whose run was abandoned in a
    store call can still say it): the edges ``ran`` on the store with every answer agreeing,
    the ``sequences`` begun, the store ``lost`` (the tour ended there), when it started."""

    ran: set[int] = attrs.Factory(set)
    sequences: int = 0
    lost: StoreLost | None = None
    started: float = attrs.Factory(time.perf_counter)


def run_tour(scope: Scope, world: World, *, stop: Stop = lambda: False,
             record: Callable[[ClauseViolation, bool], None] | None = None,
             progress: Callable[[int, int], None] | None = None,
             shrinking: Shrinking = UNLIMITED, so_far: TourRun | None = None,
             clauses: frozenset[str] | None = None) -> TourCoverage:
    """Run the tour of ``scope`` on ``world``'s store (see the module's docstring); with
    ``clauses``, only the sequences the plan walks through an edge that puts one of them to
    the test (:func:`puts_to_the_test`): a run focused on those clauses, whose coverage says
    the others did not run.

    A sequence that fails goes on after the failing move: the rest of it runs from a fresh
    start, led there by the shortest walk to the state the model says it stands in, so that
    one broken rule does not hide the edges behind it. So does a sequence whose store took
    another of the answers the model allows (a claim of another of the tasks tied first):
    the walk stands in another state than the plan's, and the rest is led there again; an
    edge counts as run only when the store's walk ends where the plan's does, and a lead the
    store takes elsewhere again leaves the rest of that sequence not run (the coverage says
    how many edges did not run: never a pass for them).
    ``record(violation, minimal)`` is told each clause's first failure, shrunk within
    ``shrinking`` (per clause and in all); ``stop()`` is asked before each sequence (the run
    is ending); ``progress(done, of)`` is told every :data:`PROGRESS_EVERY` sequences. A store
    lost (``unavailable``, its connection gone) ends the tour: the failures found so far are
    kept (one lost while shrinking is recorded as found), ``so_far.lost`` holds the loss and
    the coverage says where it stopped."""
    so_far = TourRun() if so_far is None else so_far
    model, options, capabilities = world.model, world.options, world.capabilities
    graph, the_plan = tour_of(scope, model, tuple(sorted(options.items())), capabilities)
    failed: set[str] = set()
    ran = so_far.ran
    stopped = ""
    shrink_left = shrinking.total_s
    total = len(the_plan.sequences)
    try:
        for number, sequence in enumerate(the_plan.sequences, 1):
            if progress is not None and number % PROGRESS_EVERY == 1:
                progress(number - 1, total)
            if clauses is not None and not puts_to_the_test(graph, the_plan, number, clauses):
                continue
            if stop():
                stopped = f"the run ended after {number - 1:,} of {total:,} sequences"
                break
            so_far.sequences = number
            along = the_plan.states[number - 1]
            start, part = 0, 0
            lead: tuple[str, ...] = ()
            while start < len(sequence):
                candidate = (*lead, *sequence[start:])
                sources = (*graph.walk(lead)[:-1], *(along[j - 1] if j else 0
                                                     for j in range(start, len(sequence))))
                went, violation, made = _on_store(
                    scope, world, candidate, f"t{number}" + (f"r{part}" if part else ""),
                    graph, sources)
                ran |= went
                if violation is None and made == len(candidate):
                    break
                if violation is not None and violation.clause not in failed:
                    failed.add(violation.clause)
                    budget = _budget(shrinking.per_clause_s, shrink_left)
                    t1 = time.perf_counter()
                    try:
                        with world.evidence.uncounted():  # how far it gets is the clock's
                            shrunk, minimal = _shrink(scope, world, candidate[:made],
                                                      violation, graph, f"t{number}s{part}",
                                                      budget)
                    except StoreLost:
                        if record is not None:  # found before the store was lost
                            record(violation, False)
                        raise
                    if shrink_left is not None:
                        shrink_left = max(0.0, shrink_left - (time.perf_counter() - t1))
                    if record is not None:
                        record(shrunk, minimal)
                passed = made - len(lead)  # the moves of the sequence made, the failing one too
                if passed <= 0:
                    break  # the lead itself failed or went elsewhere: the rest is not run
                start += passed
                lead = graph.paths[along[start - 1]] if start < len(sequence) else ()
                part += 1
    except StoreLost as lost:
        so_far.lost = lost
        stopped = (f"the store was lost in sequence {so_far.sequences:,} of {total:,}: "
                   f"{lost}")
    if clauses is not None and not stopped:
        stopped = (f"only the sequences that put {', '.join(sorted(clauses))} to the test "
                   "ran")
    return tour_coverage(scope, world, so_far, stopped)


def puts_to_the_test(graph: Graph, the_plan: Plan, number: int,
                     clauses: frozenset[str]) -> bool:
    """Does the plan's sequence ``number`` (from 1) walk through an edge whose calls put one
    of ``clauses`` to the test (:attr:`~.tour_graph.Edge.named`)?"""
    along, state = the_plan.states[number - 1], 0
    for j, label in enumerate(the_plan.sequences[number - 1]):
        edge = graph.edge_index.get((state, label))
        if edge is not None and not clauses.isdisjoint(graph.edges[edge].named):
            return True
        state = along[j]
    return False


def tour_coverage(scope: Scope, world: World, so_far: TourRun, stopped: str) -> TourCoverage:
    """The coverage of the tour of ``scope`` on ``world`` that got ``so_far`` (``stopped``:
    why it did not run to its end; "": it did)."""
    graph, the_plan = tour_of(scope, world.model, tuple(sorted(world.options.items())),
                              world.capabilities)
    clause_edges = graph.clause_edges()
    run_by: dict[str, int] = {}
    for n in so_far.ran:
        for clause in {c for c, _ in graph.edges[n].decisions}:
            run_by[clause] = run_by.get(clause, 0) + 1
    return TourCoverage(
        scope=scope.name, bound=scope.bound, states=len(graph.keys), edges=len(graph.edges),
        planned=len(the_plan.covered), run=len(so_far.ran), sequences=len(the_plan.sequences),
        steps=the_plan.steps, seconds=time.perf_counter() - so_far.started,
        complete=graph.complete,
        clauses={c: (n, run_by.get(c, 0)) for c, n in sorted(clause_edges.items())},
        stopped=stopped)


def _budget(per_clause: float | None, left: float | None) -> float | None:
    """Seconds one clause's shrinking may take (None: no limit)."""
    if per_clause is None:
        return left
    return per_clause if left is None else min(per_clause, left)


def _on_store(scope: Scope, world: World, sequence: Sequence[str], prefix: str, graph: Graph,
              sources: Sequence[int] | None = None
              ) -> tuple[set[int], ClauseViolation | None, int]:
    """Run ``sequence`` on the store (a store of its own when the scope says so); the edges
    it ran with the store agreeing (``sources``: the state each move starts from, as the
    plan walked it; None: a shrunk sequence, whose edges are not counted), the violation that
    stopped it, if one did, and how many moves were made (the failing one included). A label
    that is no move from where the walk stands (in a shrunk sequence) ends it there with no
    violation; so does a move after which the walk stands in another abstract state than the
    plan's (the store took another answer the model allows), that move made but its edge not
    counted."""
    own = world.fork(prefix) if scope.own_store else world
    h = Harness(own)
    tourist = StoreTourist(h)
    driver = scope.start(prefix)
    ran: set[int] = set()
    try:
        for n, label in enumerate(sequence, 1):
            move = next((m for m in scope.moves(driver, tourist) if m.label == label), None)
            if move is None:
                return ran, None, n - 1
            try:
                driver = move.do(driver, tourist)
            except ClauseViolation as v:
                return ran, v, n
            if sources is not None:
                edge = graph.edge_index.get((sources[n - 1], label))
                if edge is not None:
                    if graph.keys[graph.edges[edge].target] != scope.abstract(driver, tourist):
                        return ran, None, n  # another allowed answer: the edge is not run
                    ran.add(edge)
        return ran, None, len(sequence)
    finally:
        if scope.own_store:
            own.discard()


def _shrink(scope: Scope, world: World, sequence: tuple[str, ...], violation: ClauseViolation,
            graph: Graph, prefix: str, budget_s: float | None) -> tuple[ClauseViolation, bool]:
    """A shorter sequence failing the same clause: the shortest walk to the failing move's
    state and that move, then parts of it left out (halves, quarters, ..., single moves) while
    the clause still fails. Whether it is minimal (no single move can be left out), not cut
    short by ``budget_s`` or :data:`SHRINK_TRIES`."""
    best, found = sequence, violation
    tries = 0
    until = None if budget_s is None else time.perf_counter() + budget_s

    def spent() -> bool:
        return tries >= SHRINK_TRIES or (until is not None and time.perf_counter() >= until)

    def fails(candidate: tuple[str, ...]) -> tuple[ClauseViolation, int] | None:
        nonlocal tries
        tries += 1
        _, v, made = _on_store(scope, world, candidate, f"{prefix}x{tries}", graph)
        return (v, made) if v is not None and v.clause == violation.clause else None

    if spent():
        return found, False
    k = graph.walk(sequence[:-1])[-1]
    if len(graph.paths[k]) + 1 < len(best):
        got = fails((*graph.paths[k], sequence[-1]))
        if got is not None:
            best, found = (*graph.paths[k], sequence[-1])[: got[1]], got[0]
    parts = 2
    while len(best) > 1:
        size = -(-len(best) // parts)
        for i in range(0, len(best), size):
            if spent():
                return found, False
            candidate = best[:i] + best[i + size:]
            got = fails(candidate) if candidate else None
            if got is not None:
                best, found = candidate[: got[1]], got[0]
                parts = max(parts - 1, 2)
                break
        else:
            if size == 1:
                break
            parts = min(parts * 2, len(best))
    return found, True
