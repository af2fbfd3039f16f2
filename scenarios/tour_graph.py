"""The transition tour's model side (see :mod:`.tour`): what a move acts on and a scope
declares, the exploration of the model's bounded abstract state graph (:func:`explore`,
with its soundness check) and the plan of move sequences that run every edge
(:func:`plan`). Pure: no store, no clock but the walk's own."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from fencepost.model.base import ContractModel, Ctx, OneOf, Step
from fencepost.spec.ops import Op

NEAR = 4
"""How many moves the walk goes to reach an edge not run yet before it starts a new
sequence instead."""
LONGEST = 60
"""The most moves in one sequence (a failure's trace stays readable before it is shrunk)."""
SHRINK_TRIES = 200
"""The most replays one failure's shrinking makes."""


class Tourist(Protocol):
    """What a move acts on: the model alone (:class:`ModelTourist`, while exploring) or the
    store and the model together (:class:`StoreTourist`, on the store)."""

    @property
    def state(self) -> Any: ...

    @property
    def now(self) -> int: ...

    @property
    def dead(self) -> frozenset[str]: ...

    @property
    def options(self) -> Mapping[str, str]: ...

    @property
    def capabilities(self) -> frozenset[str]: ...

    def apply(self, actor: str, op: Op) -> Any: ...

    def advance(self, ms: int) -> None: ...

    def set_time(self, ms: int) -> None: ...

    def kill(self, owner: str) -> None: ...

    def reopen(self) -> None: ...


@attrs.frozen
class Move:
    """One move of a walk: ``label`` names it (the same move from every state of the same
    abstract state: no ids, no absolute times), ``do(driver, tourist)`` makes it and returns
    the driver's next bookkeeping (tokens issued, ...)."""

    label: str
    do: Callable[[Any, Tourist], Any]


class Scope(Protocol):
    """A contract's bounded scope (see the module's docstring).

    ``name`` and ``bound`` (the bound in words) go into the report; ``own_store``: each
    sequence runs on a store of its own (a contract whose calls see the whole store);
    ``start(prefix)`` the driver's bookkeeping for a walk whose ids start with ``prefix``;
    ``moves(driver, tourist)`` the moves from the current state, in a fixed order;
    ``abstract(driver, tourist)`` the current state's abstract state (hashable). A scope may
    also name a smaller scope ``first`` (same abstraction, its moves among this one's): its
    tour runs first, so this scope's tour catches whatever the smaller one's does (a store
    that keeps history the contract does not is caught along the smaller tour's paths too)."""

    name: str
    bound: str
    own_store: bool

    def start(self, prefix: str) -> Any: ...

    def moves(self, driver: Any, tourist: Tourist) -> Sequence[Move]: ...

    def abstract(self, driver: Any, tourist: Tourist) -> Hashable: ...


@attrs.define
class ModelTourist:
    """The model alone: its state, a clock, the owners killed; each call's decision (the clause and
    the answer's code) is kept in ``decisions``, and every clause a call puts to the test (its
    decision's, its effect's and the others it names) in ``named``. Where the model allows
    several answers (:class:`~fencepost.model.base.OneOf`), the walk takes the first; a store
    that takes another leads its walk elsewhere, and :func:`~.tour.run_tour` leads it back."""

    model: ContractModel
    options: Mapping[str, str]
    capabilities: frozenset[str]
    state: Any
    now: int = 0
    dead: frozenset[str] = frozenset()
    decisions: list[tuple[str, str]] = attrs.Factory(list)
    named: set[str] = attrs.Factory(set)

    def apply(self, actor: str, op: Op) -> Any:
        ctx = Ctx(now=self.now, dead=self.dead, options=self.options,
                  capabilities=self.capabilities)
        step = self.model.step(self.state, op, ctx)
        if isinstance(step, OneOf):  # the first allowed answer (the store may take another)
            step = step.options[0]
        assert isinstance(step, Step)
        self.state = step.state
        self.decisions.append((step.clause, step.outcome.code))
        self.named.update((step.clause, step.effect_clause, *step.also))
        return step.outcome

    def advance(self, ms: int) -> None:
        self.now += ms

    def set_time(self, ms: int) -> None:
        self.now = ms

    def kill(self, owner: str) -> None:
        self.dead = self.dead | {owner}

    def reopen(self) -> None:
        """What the model says a reopen changes (:attr:`ContractModel.reopen`; the values a
        walk holds are its driver's to void), else nothing."""
        if self.model.reopen is not None:
            self.state = self.model.reopen(self.state, {}, self.options)[0]

    def copy(self) -> ModelTourist:
        return ModelTourist(self.model, self.options, self.capabilities, self.state, self.now,
                            self.dead)


@attrs.frozen
class Edge:
    """An edge of the bounded graph: from ``source`` by the move ``label`` to ``target``,
    deciding ``decisions`` (per call: the clause that decided it and the answer's code), its
    calls putting the clauses ``named`` to the test (those of the decisions, the effects')."""

    source: int
    label: str
    target: int
    decisions: tuple[tuple[str, str], ...]
    named: frozenset[str] = frozenset()


@attrs.frozen
class Graph:
    """The bounded abstract state graph: states numbered in breadth-first order (0 the
    initial), ``paths[k]`` the labels of the shortest walk to state ``k``, ``edges`` in the
    order found. ``complete``: the exploration ended by itself (False: it stopped at
    ``max_states``, and the graph is a part of the bounded one)."""

    scope: str
    keys: tuple[Hashable, ...]
    paths: tuple[tuple[str, ...], ...]
    edges: tuple[Edge, ...]
    complete: bool

    @functools.cached_property
    def out(self) -> tuple[tuple[Edge, ...], ...]:
        """Each state's edges, in the order of its moves."""
        by: list[list[Edge]] = [[] for _ in self.keys]
        for e in self.edges:
            by[e.source].append(e)
        return tuple(tuple(es) for es in by)

    @functools.cached_property
    def index(self) -> Mapping[Hashable, int]:
        return {key: k for k, key in enumerate(self.keys)}

    @functools.cached_property
    def edge_index(self) -> Mapping[tuple[int, str], int]:
        """(state, label) -> the edge's index in ``edges``."""
        return {(e.source, e.label): n for n, e in enumerate(self.edges)}

    def walk(self, labels: Sequence[str]) -> list[int]:
        """The states a walk of ``labels`` from the initial state passes, the initial one
        first (the graph's edges: the abstraction is sound, so any walk follows them)."""
        states = [0]
        for label in labels:
            states.append(self.edges[self.edge_index[(states[-1], label)]].target)
        return states

    def clause_edges(self) -> dict[str, int]:
        """Clause id -> how many edges take a decision it names."""
        out: dict[str, int] = {}
        for e in self.edges:
            for clause in {c for c, _ in e.decisions}:
                out[clause] = out.get(clause, 0) + 1
        return out


class Unsound(AssertionError):
    """Two merged states differ in a move's decision or in where it leads."""


def _start(scope: Scope, model: ContractModel, options: Mapping[str, str],
           capabilities: frozenset[str], prefix: str, now: int) -> tuple[Any, ModelTourist]:
    return scope.start(prefix), ModelTourist(model, options, capabilities, model.initial, now)


def _take(scope: Scope, driver: Any, tourist: ModelTourist, move: Move
          ) -> tuple[Any, ModelTourist, tuple[tuple[str, str], ...]]:
    after = tourist.copy()
    driver = move.do(driver, after)
    return driver, after, tuple(after.decisions)


def explore(scope: Scope, model: ContractModel, options: Mapping[str, str],
            capabilities: frozenset[str], *, max_states: int = 200_000,
            verify: bool = False) -> Graph:
    """The bounded graph of ``model`` under ``scope`` (see the module's docstring). With
    ``verify``, every concrete state merged into an abstract state found before is checked
    against that state's first one: the same moves, the same decisions, merged targets (else
    :class:`Unsound`); a concrete state equal to one checked there before (met by another
    walk) is not checked again."""
    driver, tourist = _start(scope, model, options, capabilities, "t", 0)
    keys: list[Hashable] = [scope.abstract(driver, tourist)]
    index: dict[Hashable, int] = {keys[0]: 0}
    reps: list[tuple[Any, ModelTourist]] = [(driver, tourist)]
    paths: list[tuple[str, ...]] = [()]
    edges: list[Edge] = []
    queue = deque([0])
    complete = True
    outcomes: dict[int, list[tuple[str, tuple[tuple[str, str], ...], Hashable]]] = {}
    verified: dict[int, set[str]] = {}  # per state: the concrete states checked
    named_once: dict[frozenset[str], frozenset[str]] = {}  # many edges, few sets of clauses
    while queue:
        k = queue.popleft()
        driver, tourist = reps[k]
        for move in scope.moves(driver, tourist):
            after_driver, after, decisions = _take(scope, driver, tourist, move)
            key = scope.abstract(after_driver, after)
            target = index.get(key)
            if target is None:
                if len(keys) >= max_states:
                    complete = False
                    continue
                target = len(keys)
                index[key] = target
                keys.append(key)
                reps.append((after_driver, after))
                paths.append((*paths[k], move.label))
                queue.append(target)
            elif verify:
                if target not in outcomes:
                    outcomes[target] = _outcomes(scope, *reps[target])
                    verified[target] = {_concrete(*reps[target])}
                concrete = _concrete(after_driver, after)
                if concrete not in verified[target]:  # an equal one leads alike: checked
                    theirs = _outcomes(scope, after_driver, after)
                    if theirs != outcomes[target]:
                        raise Unsound(_difference(keys[target], outcomes[target], theirs))
                    verified[target].add(concrete)
            named = frozenset(after.named)
            edges.append(Edge(k, move.label, target, decisions,
                              named_once.setdefault(named, named)))
    return Graph(scope.name, tuple(keys), tuple(paths), tuple(edges), complete)


def _concrete(driver: Any, tourist: ModelTourist) -> str:
    """What a concrete state's moves are made from, written out: the walk's driver, the
    model's state, the clock and the owners killed. Two states written alike make the same
    moves with the same decisions to states written alike. Written, not compared with ``==``,
    which takes 1 for 1.0 and for True, values the contracts keep apart; two equal dicts
    built in another order are written apart, and only checked twice."""
    return repr((driver, tourist.state, tourist.now, sorted(tourist.dead)))


def _outcomes(scope: Scope, driver: Any, tourist: ModelTourist
              ) -> list[tuple[str, tuple[tuple[str, str], ...], Hashable]]:
    """Every move from a concrete state: its label, its decisions, the abstract state it
    leads to."""
    out = []
    for move in scope.moves(driver, tourist):
        d, t, decisions = _take(scope, driver, tourist, move)
        out.append((move.label, decisions, scope.abstract(d, t)))
    return out


def _difference(key: Hashable, first: Sequence[tuple[str, Any, Hashable]],
                other: Sequence[tuple[str, Any, Hashable]]) -> str:
    """Where two merged states' moves differ, in words."""
    if [m[0] for m in first] != [m[0] for m in other]:
        return (f"{key}: the merged states have different moves: {[m[0] for m in first]} / "
                f"{[m[0] for m in other]}")
    for (label, da, ka), (_, db, kb) in zip(first, other, strict=True):
        if da != db:
            return f"{key}: {label} decides {da} from one merged state and {db} from the other"
        if ka != kb:
            return f"{key}: {label} leads to {ka} from one merged state and {kb} from the other"
    return f"{key}: the merged states differ"


@attrs.define
class _Walk:
    """A walk the plan makes along the graph's edges: where it stands (``at``, a state of
    ``graph``), the moves made and the state each led to."""

    graph: Graph
    at: int = 0
    moves: list[str] = attrs.Factory(list)
    states: list[int] = attrs.Factory(list)

    def step(self, label: str) -> int:
        """Take the edge ``label`` from where the walk stands; the edge's index."""
        n = self.graph.edge_index[(self.at, label)]
        self.at = self.graph.edges[n].target
        self.moves.append(label)
        self.states.append(self.at)
        return n


@attrs.frozen
class Plan:
    """The tour: ``sequences`` of move labels, each from the initial state; ``covered`` the
    graph's edges (by index) the sequences run."""

    sequences: tuple[tuple[str, ...], ...]
    covered: frozenset[int]
    states: tuple[tuple[int, ...], ...] = ()
    """Per sequence, the state each of its moves leads to."""

    @property
    def steps(self) -> int:
        return sum(len(s) for s in self.sequences)


def plan(graph: Graph, first: Sequence[Sequence[str]] = ()) -> Plan:
    """Sequences that together run every edge of ``graph`` (see the module's docstring),
    beginning with the sequences ``first`` (a smaller scope's tour: its moves must be edges of
    ``graph``, else :class:`Unsound`). The walk follows the graph's edges; the model is not
    stepped again (exploring did, and a tour's run on the store steps it beside the store,
    counting an edge only when both stand where the edge leads)."""
    edge_of = graph.edge_index
    left = [len(out) for out in graph.out]  # per state: edges not run yet
    covered: set[int] = set()
    next_new = [0] * len(graph.keys)  # per state: where its first edge not run may be
    sequences: list[tuple[str, ...]] = []
    along: list[tuple[int, ...]] = []

    def cover_edge(n: int) -> None:
        if n not in covered:
            covered.add(n)
            left[graph.edges[n].source] -= 1

    for given in first:
        w = _Walk(graph)
        for label in given:
            if (w.at, label) not in edge_of:
                raise Unsound(f"{graph.scope} runs a smaller scope's tour first, but makes no "
                              f"move {label!r} from {graph.keys[w.at]}")
            cover_edge(w.step(label))
        sequences.append(tuple(w.moves))
        along.append(tuple(w.states))

    def first_new(k: int) -> Edge | None:
        out = graph.out[k]
        while next_new[k] < len(out):
            e = out[next_new[k]]
            if edge_of[(e.source, e.label)] not in covered:
                return e
            next_new[k] += 1
        return None

    def route(k: int) -> list[Edge] | None:
        """The shortest walk (at most NEAR moves) from ``k`` to a state with an edge not run
        yet, ending with that edge."""
        seen = {k}
        frontier: list[tuple[int, list[Edge]]] = [(k, [])]
        for _ in range(NEAR):
            nxt: list[tuple[int, list[Edge]]] = []
            for s, walk in frontier:
                for e in graph.out[s]:
                    if e.target in seen:
                        continue
                    seen.add(e.target)
                    if left[e.target]:
                        found = first_new(e.target)
                        if found is not None:
                            return [*walk, e, found]
                    nxt.append((e.target, [*walk, e]))
            frontier = nxt
        return None

    order = sorted(range(len(graph.keys)), key=lambda k: (len(graph.paths[k]), k))
    cursor = 0
    while True:
        while cursor < len(order) and not left[order[cursor]]:
            cursor += 1
        if cursor == len(order):
            break
        start = order[cursor]
        w = _Walk(graph)
        for label in graph.paths[start]:
            cover_edge(w.step(label))
        while len(w.moves) < LONGEST:
            e = first_new(w.at) if left[w.at] else None
            if e is not None:
                cover_edge(w.step(e.label))
                continue
            way = route(w.at)
            if way is None:
                break
            for e in way:
                cover_edge(w.step(e.label))
        if not w.moves:  # the initial state's edges are all run: nothing left to start from
            break
        sequences.append(tuple(w.moves))
        along.append(tuple(w.states))
    return Plan(tuple(sequences), frozenset(covered), tuple(along))
