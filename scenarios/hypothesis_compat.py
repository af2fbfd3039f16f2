"""Every use the kit makes of Hypothesis' internals, in one place, checked at import.

Hypothesis has no public hook for what the kit's state machine runs need, so this module
reaches into its engine, and nothing else in the kit does:

- **the shrinker's clock**: ``Shrinker.check_calls`` (called after every test run a shrink
  makes) is where a shrink budget stops it, raising ``StopShrinking``
  (:mod:`~fencepost.scenarios.shrinking`);
- **generation after a failure**: ``ConjectureRunner.should_generate_more``,
  ``generate_new_test_cases`` and ``reuse_existing_test_cases`` are made to generate every
  example of a run even after failures were found or replayed from an example database,
  keeping per failure the smaller counterexample (``sort_key`` of its choices);
- **the shrinker's failure**: ``shrink_target.interesting_origin.exc_type`` names the clause
  being shrunk;
- **the shrink phase's start**: ``ConjectureRunner.shrink_interesting_test_cases`` tells the
  run that its generation is over (the runs from then on, shrinking and the replays of the
  shrunk counterexamples, are no evidence that a clause held: see
  :mod:`~fencepost.scenarios.shrinking`);
- **Hypothesis' home directory** (``configuration.set_hypothesis_home_dir`` and the module
  global it sets), pointed at a scratch directory while a run is on;
- **no local constants** (``providers._get_local_constants``, ``CONSTANTS_CACHE``): Hypothesis
  draws now and then a constant found in the source of every module it takes for
  the user's own (every module outside site-packages, so the kit's in an editable install and
  an adapter's module): it parses each one the first time in a process (about 0.25 s per
  process for the kit's modules, what a campaign's worker paid before its first seed), and
  what a seed generates then depends on which modules were loaded and on their text (an
  adapter's fix could change the steps of a seed). A kit run draws none: only Hypothesis'
  own constants, which are fixed by its release, and its per-choice cache of them is emptied
  as a run starts and ends (:func:`no_local_constants`).
- **the integer distribution** (``providers.INTEGERS_DISTRIBUTION``): a state machine that
  draws each step as one integer (:mod:`~fencepost.scenarios.one_draw`) reads it through
  Hypothesis' own cumulative distribution (:func:`quantile`), so that its rules come up with
  the weights it states.
- **the stateful runner's rule strategy** (``RuleBasedStateMachine._rules_strategy``, a
  ``RuleStrategy`` holding the machine's ``rules``, each with its ``arguments_strategies``):
  Hypothesis draws each step's rule and arguments from it, for a machine of one rule too
  (the rules enabled in this example, then one of them, then its arguments). A one-draw
  machine has one rule with no precondition: :func:`one_rule_steps` has each step draw that
  rule's one argument alone (on the memory store, 12-17 % of a step's time off for adk-ledger
  and snodo-tasks, about 5 % for ledgence-tasks).

:data:`NEEDED` lists them; :func:`missing` says which a Hypothesis release does not have. A
release that moved one is refused at import with the list, never half-used; the versions
this module was tested with are :data:`TESTED` (also the bound in ``pyproject.toml``).
The hooks act only for a thread that has something active (:func:`install`'s ``active``):
another program's Hypothesis runs in the same process are untouched.
"""

from __future__ import annotations

import functools
import importlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import hypothesis

TESTED = ("6.165.5", "6.170")
"""The oldest Hypothesis release and the newest release line this module was tested with.
6.165.5 is the first with the engine's names of :data:`NEEDED` (``generate_new_test_cases``,
``interesting_test_cases``; 6.165.4 and older have ``generate_new_examples``, which this module
does not use): the whole test suite passes on it, but for mypy (6.165.5 has no annotation on
``run_state_machine_as_test``)."""

NEEDED = (
    "hypothesis.internal.conjecture.shrinker:Shrinker.check_calls",
    "hypothesis.internal.conjecture.shrinker:StopShrinking",
    "hypothesis.internal.conjecture.shrinker:sort_key",
    "hypothesis.internal.conjecture.engine:ConjectureRunner.should_generate_more",
    "hypothesis.internal.conjecture.engine:ConjectureRunner.generate_new_test_cases",
    "hypothesis.internal.conjecture.engine:ConjectureRunner.reuse_existing_test_cases",
    "hypothesis.internal.conjecture.engine:ConjectureRunner.shrink_interesting_test_cases",
    "hypothesis.configuration:set_hypothesis_home_dir",
    "hypothesis.configuration:__hypothesis_home_directory",
    "hypothesis.internal.conjecture.providers:_get_local_constants",
    "hypothesis.internal.conjecture.providers:CONSTANTS_CACHE",
    "hypothesis.internal.constants_ast:Constants",
    "hypothesis.internal.conjecture.providers:INTEGERS_DISTRIBUTION",
    "hypothesis.stateful:RuleBasedStateMachine",
    "hypothesis.stateful:RuleStrategy",
    "hypothesis.strategies:SearchStrategy",
)
"""The internals the kit uses, as ``module:attribute.path``."""


def _find(name: str) -> Any:
    module_name, _, path = name.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in path.split("."):
        found = getattr(found, part)
    return found


def missing(names: tuple[str, ...] = NEEDED) -> list[str]:
    """Those of ``names`` (default :data:`NEEDED`) this Hypothesis does not have."""
    gone = []
    for name in names:
        try:
            _find(name)
        except (ImportError, AttributeError):
            gone.append(name)
    return gone


class HypothesisMoved(ImportError):
    """This Hypothesis release moved an internal the kit relies on."""


def _probe_rules() -> list[str]:
    """The parts of the stateful runner's rule strategy this release does not have (a
    machine of one rule made to look)."""
    from hypothesis import stateful, strategies

    class Probe(stateful.RuleBasedStateMachine):
        @stateful.rule(n=strategies.integers())
        def step(self, n: int) -> None:
            """The one rule."""

    chooser = getattr(Probe(), "_rules_strategy", None)
    if not isinstance(chooser, stateful.RuleStrategy):
        return ["hypothesis.stateful:RuleBasedStateMachine()._rules_strategy"]
    rules = getattr(chooser, "rules", None)
    if not isinstance(rules, list) or len(rules) != 1:
        return ["hypothesis.stateful:RuleStrategy().rules"]
    if not isinstance(getattr(rules[0], "arguments_strategies", None), dict):
        return ["hypothesis.stateful:Rule().arguments_strategies"]
    return []


_gone = missing()
if not _gone:
    _gone = _probe_rules()
if _gone:
    raise HypothesisMoved(
        f"fencepost cannot use Hypothesis {hypothesis.__version__}: it does not have "
        f"{', '.join(_gone)} (fencepost was tested with Hypothesis {TESTED[0]} to "
        f"{TESTED[1]}.x; install one of those)")

from hypothesis import configuration as _configuration  # noqa: E402 - checked above
from hypothesis.internal.conjecture import engine as _engine  # noqa: E402
from hypothesis.internal.conjecture import providers as _providers  # noqa: E402
from hypothesis.internal.conjecture import shrinker as _shrinker  # noqa: E402
from hypothesis.internal.constants_ast import Constants as _Constants  # noqa: E402
from hypothesis.stateful import Rule as _Rule  # noqa: E402
from hypothesis.strategies import SearchStrategy as _SearchStrategy  # noqa: E402

StopShrinking = _shrinker.StopShrinking
sort_key = _shrinker.sort_key
_CONSTANTS_CACHE: Any = _providers.CONSTANTS_CACHE
_DISTRIBUTION: Any = _providers.INTEGERS_DISTRIBUTION


@functools.lru_cache(maxsize=16)
def _bounds(top: int) -> tuple[float, float]:
    return _DISTRIBUTION.cdf(-0.5), _DISTRIBUTION.cdf(top + 0.5)


def quantile(code: int, top: int) -> float:
    """Where ``code`` falls, in [0, 1), in the distribution of ``integers(0, top)`` as this
    Hypothesis draws it (the probability of a smaller draw, plus half the code's own): a
    range of quantiles of width w then holds about a share w of the draws, and a smaller code
    (what shrinking moves to) has a smaller quantile."""
    cdf = _DISTRIBUTION.cdf
    low, high = _bounds(top)
    at = (cdf(code - 0.5) + cdf(code + 0.5)) / 2
    return min(max(float((at - low) / (high - low)), 0.0), 1.0 - 1e-12)


class _OneRule(_SearchStrategy[tuple[_Rule, dict[str, Any]]]):
    """A step of a machine of one rule: that rule, and its one argument drawn."""

    def __init__(self, rule: _Rule, name: str, argument: _SearchStrategy[Any]) -> None:
        super().__init__()
        self.rule, self.name, self.argument = rule, name, argument

    def do_draw(self, data: Any) -> tuple[_Rule, dict[str, Any]]:
        return self.rule, {self.name: data.draw(self.argument)}

    def __repr__(self) -> str:
        return f"one rule: {self.rule.function.__name__}({self.name}={self.argument!r})"


def one_rule_steps(machine: Any) -> bool:
    """Have each step of ``machine`` (made just now) draw its one rule's one argument alone
    (Hypothesis would draw the rules enabled in the example, then the rule among them, then
    the argument); one draw per step is then one choice. False, and Hypothesis' own way
    kept, when the machine has several rules, initial rules aside, or its rule has a
    precondition, a bundle, a target or another number of arguments."""
    rules: list[_Rule] = machine._rules_strategy.rules  # there at import: _probe_rules
    if len(rules) != 1:
        return False
    rule = rules[0]
    if rule.preconditions or rule.bundles or rule.targets or len(
            rule.arguments_strategies) != 1:
        return False
    [(name, argument)] = rule.arguments_strategies.items()
    machine._rules_strategy = _OneRule(rule, name, argument)
    return True


def clause_of(shrinker: Any) -> str:
    """The clause whose failure ``shrinker`` is shrinking (its exception class's ``clause``)."""
    origin = getattr(shrinker.shrink_target, "interesting_origin", None)
    exc_type = getattr(origin, "exc_type", None)
    return str(getattr(exc_type, "clause", "") or getattr(exc_type, "__name__", "?"))


_installed: list[Callable[[], Any]] = []


def install(active: Callable[[], Any]) -> None:
    """Install the hooks (once). ``active()`` is the calling thread's shrink clock (a value
    with ``tick(shrinker) -> bool``, True when its time is up, and ``shrinking()``, called as
    the shrink phase begins), or None when no run of the kit is on in this thread: then
    Hypothesis behaves as released."""
    if _installed:
        return
    _installed.append(active)
    check_calls = _shrinker.Shrinker.check_calls
    should_generate_more = _engine.ConjectureRunner.should_generate_more
    generate_new = _engine.ConjectureRunner.generate_new_test_cases
    reuse = _engine.ConjectureRunner.reuse_existing_test_cases
    shrink_all = _engine.ConjectureRunner.shrink_interesting_test_cases

    def _check_calls(self: Any) -> None:
        check_calls(self)
        clock = active()
        if clock is not None and clock.tick(self):
            raise StopShrinking

    def _should_generate_more(self: Any) -> bool:
        found = self.interesting_test_cases
        if active() is None or not found:
            return bool(should_generate_more(self))
        # Hypothesis' own limits, as if nothing had been found yet, and no more calls than
        # examples (a store failing every example makes no valid one).
        self.interesting_test_cases = {}
        try:
            return bool(should_generate_more(self)
                        and self.call_count < self.settings.max_examples)
        finally:
            self.interesting_test_cases = found

    def _generate_new_test_cases(self: Any) -> None:
        replayed = self.interesting_test_cases
        if active() is None or not replayed:
            generate_new(self)
            return
        # Failures the example database replayed: Hypothesis would skip generating and report
        # them. Generate as if none had been found, then keep, per clause, the smaller of the
        # replayed and the generated counterexample (as Hypothesis keeps the smaller of two).
        self.interesting_test_cases = {}
        try:
            generate_new(self)
        finally:
            found = self.interesting_test_cases
            for origin, result in replayed.items():
                new = found.get(origin)
                if new is None or sort_key(result.nodes) <= sort_key(new.nodes):
                    found[origin] = result
            self.interesting_test_cases = found

    def _reuse_existing_test_cases(self: Any) -> None:
        reuse(self)
        if active() is not None:
            # Hypothesis ends the run at once when a replayed failure had been shrunk before;
            # this run goes on to generate (see _generate_new_test_cases).
            self.reused_previously_shrunk_test_case = False

    def _shrink_interesting_test_cases(self: Any) -> None:
        clock = active()
        if clock is not None:
            clock.shrinking()
        shrink_all(self)

    local_constants = _providers._get_local_constants
    none = _Constants()

    def _get_local_constants() -> Any:
        return none if active() is not None else local_constants()

    _providers._get_local_constants = _get_local_constants

    _shrinker.Shrinker.check_calls = _check_calls  # type: ignore[method-assign]
    _engine.ConjectureRunner.should_generate_more = (  # type: ignore[method-assign]
        _should_generate_more)
    _engine.ConjectureRunner.generate_new_test_cases = (  # type: ignore[method-assign]
        _generate_new_test_cases)
    _engine.ConjectureRunner.reuse_existing_test_cases = (  # type: ignore[method-assign]
        _reuse_existing_test_cases)
    _engine.ConjectureRunner.shrink_interesting_test_cases = (  # type: ignore[method-assign]
        _shrink_interesting_test_cases)


@contextmanager
def no_local_constants() -> Iterator[None]:
    """A kit run's body: Hypothesis' per-choice cache of constants emptied before and after
    (it may hold another program's local constants, or the run's none). Hypothesis runs of
    other threads of the process at that moment share that cache."""
    _CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        _CONSTANTS_CACHE.cache.clear()


@contextmanager
def private_home() -> Iterator[None]:
    """Hypothesis caches files under ``./.hypothesis``; a run must not write into the user's
    working directory: point it at a scratch directory for the run, then restore it."""
    key = "__hypothesis_home_directory"
    previous = _configuration.__dict__.get(key)
    scratch = tempfile.mkdtemp(prefix="fencepost-hypothesis-")
    _configuration.set_hypothesis_home_dir(scratch)
    try:
        yield
    finally:
        _configuration.set_hypothesis_home_dir(previous)
        shutil.rmtree(scratch, ignore_errors=True)
