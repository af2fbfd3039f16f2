"""One draw per step (scenarios/one_draw.py): the table's layout, and the contracts' state
machines drawing their rules with the weights they state."""

from __future__ import annotations

import collections
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from fencepost.adapter_spec import resolve_adapter
from fencepost.bench import _world
from fencepost.registry import contract_named
from fencepost.scenarios import hypothesis_compat, one_draw
from fencepost.scenarios.adk_ledger.machine import PICKS as ADK_PICKS
from fencepost.scenarios.hypothesis_compat import one_rule_steps
from fencepost.scenarios.ledgence_tasks.machine import PICKS as LEDGENCE_PICKS
from fencepost.scenarios.machine import run_machine
from fencepost.scenarios.one_draw import CODE_TOP, Pick, Table
from fencepost.scenarios.snodo_tasks.machine import PICKS as SNODO_PICKS

SMALL = (Pick("get", 2, (("i", (0, 1, 2)),)),
         Pick("put", 1, (("i", (0, 1)), ("v", ("a", "b", "c")))),
         Pick("reopen", 1, needs="durable"))


def test_code_0_is_the_first_picks_first_arguments_and_the_top_the_last_picks_last() -> None:
    table = Table(SMALL, {"durable"})
    assert table.decode(0) == ("get", {"i": 0})
    assert table.decode(CODE_TOP) == ("reopen", {})
    assert Table(SMALL, set()).decode(CODE_TOP) == ("put", {"i": 1, "v": "c"})


def test_a_pick_needing_a_capability_the_store_lacks_is_left_out_and_the_rest_share_1() -> None:
    with_it, without = Table(SMALL, {"durable"}), Table(SMALL, set())
    assert [with_it.share(r) for r in ("get", "put", "reopen")] == pytest.approx(
        [0.5, 0.25, 0.25])
    assert [without.share(r) for r in ("get", "put", "reopen")] == pytest.approx(
        [2 / 3, 1 / 3, 0.0])


def test_a_smaller_code_never_decodes_to_a_later_pick_or_combination() -> None:
    """Shrinking moves a code toward 0: toward the first pick and its first arguments."""
    table = Table(SMALL, {"durable"})
    order = {p.rule: k for k, p in enumerate(table.picks)}
    codes = sorted({0, 1, 2, 255, 256, 10**3, 2**16, 2**32, 2**48, 2**60, CODE_TOP,
                    *(7**k for k in range(22))})
    seen: list[tuple[int, int]] = []
    for code in codes:
        rule, args = table.decode(code)
        combination = args.get("i", 0) * (3 if rule == "put" else 1) + (
            ("a", "b", "c").index(args["v"]) if "v" in args else 0)
        seen.append((order[rule], combination))
    assert seen == sorted(seen)
    assert hypothesis_compat.quantile(0, CODE_TOP) < hypothesis_compat.quantile(1, CODE_TOP)


def _drawn(contract_name: str, seeds: tuple[int, ...], examples: int, steps: int
           ) -> list[list[tuple[int, str, dict[str, Any]]]]:
    """Every example's steps (code, rule, arguments) as the contract's state machine on the
    memory store drew them."""
    drawn: dict[int, list[tuple[int, str, dict[str, Any]]]] = {}
    decode = Table.decode

    def recorded(self: Table, code: int) -> tuple[str, dict[str, Any]]:
        rule, args = decode(self, code)
        drawn.setdefault(id(self), []).append((code, rule, args))
        return rule, args

    contract = contract_named(contract_name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(one_draw.Table, "decode", recorded)
        for seed in seeds:
            factory, _ = resolve_adapter(contract_name, "memory")
            world = _world(contract, factory)
            try:
                run = run_machine(contract.suite.machine_for(world), examples=examples,
                                  steps=steps, seed=seed)
            finally:
                world.discard()
            assert not run.violations and run.lost is None
    return list(drawn.values())


@pytest.mark.parametrize(("contract_name", "picks", "highest"), [
    ("adk-ledger", ADK_PICKS, 1.7), ("snodo-tasks", SNODO_PICKS, 2.4),
    ("ledgence-tasks", LEDGENCE_PICKS, 2.4)])
def test_each_rule_comes_up_within_2x_of_its_stated_weight(
        contract_name: str, picks: tuple[Pick, ...], highest: float) -> None:
    """Over more than 1,000 generated steps (3 seeds of 25 examples of up to 30 steps), each
    rule's share within 2x of the weight the table states, outside the examples Hypothesis makes
    of zeros alone (its simplest examples, a few per run: each step the first pick, a read).
    With them the first pick's share rises (adk 1.66x, snodo 2.35x, ledgence 2.36x of its
    weight), and no higher than that. The first pick and the clock move take every argument."""
    examples = _drawn(contract_name, (1, 2, 3), 25, 30)
    table = Table(picks, {"durable", "owner_liveness"})
    first, last = table.picks[0], table.picks[-1]
    assert last.rule == "advance"
    zeros = [e for e in examples if all(code == 0 for code, _, _ in e)]
    assert zeros and all(rule == first.rule for e in zeros for _, rule, _ in e)
    drawn = [step for e in examples if e not in zeros for step in e]
    everything = [step for e in examples for step in e]
    assert len(drawn) > 1_000

    def ratios(steps: list[tuple[int, str, dict[str, Any]]]) -> dict[str, float]:
        counts = collections.Counter(rule for _, rule, _ in steps)
        return {p.rule: counts[p.rule] / len(steps) / table.share(p.rule) for p in table.picks}

    outside = ratios(drawn)
    assert all(0.5 <= r <= 2.0 for r in outside.values()), outside
    assert ratios(everything)[first.rule] <= highest
    for pick in (first, last):
        for name, values in pick.args:
            taken = {args[name] for _, rule, args in drawn if rule == pick.rule}
            assert taken == set(values), (pick.rule, name, taken)


def test_a_one_draw_machines_step_draws_its_code_alone() -> None:
    """Hypothesis' runner draws a step of a contract's machine as its one rule and its code,
    with no choice of which rules are enabled and which of them runs: every step it runs was
    drawn through the one-rule strategy."""
    strategies: list[str] = []
    drawn, decoded = [0], [0]
    contract = contract_named("adk-ledger")
    factory, _ = resolve_adapter("adk-ledger", "memory")
    world = _world(contract, factory)
    machine_class = contract.suite.machine_for(world)
    made, draw, decode = machine_class.__init__, hypothesis_compat._OneRule.do_draw, Table.decode

    def noted(self: Any) -> None:
        made(self)
        strategies.append(repr(self._rules_strategy))

    def counted_draw(self: Any, data: Any) -> Any:
        drawn[0] += 1
        return draw(self, data)

    def counted_decode(self: Table, code: int) -> tuple[str, dict[str, Any]]:
        decoded[0] += 1
        return decode(self, code)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(machine_class, "__init__", noted)
            patch.setattr(hypothesis_compat._OneRule, "do_draw", counted_draw)
            patch.setattr(Table, "decode", counted_decode)
            run = run_machine(machine_class, examples=3, steps=5, seed=1)
    finally:
        world.discard()
    assert not run.violations and len(strategies) == run.examples >= 3
    assert set(strategies) == {f"one rule: step(code={one_draw.CODES!r})"}
    assert drawn[0] == decoded[0] > 0


def test_a_machine_of_several_rules_keeps_hypothesis_own_choice_of_rule() -> None:
    class Two(RuleBasedStateMachine):
        @rule(n=st.integers())
        def one(self, n: int) -> None:
            """A rule."""

        @rule()
        def two(self) -> None:
            """Another."""

    machine = Two()
    assert not one_rule_steps(machine)
    assert type(machine._rules_strategy).__name__ == "RuleStrategy"


@pytest.mark.parametrize("name", ["adk-ledger", "snodo-tasks", "ledgence-tasks"])
def test_a_bound_machine_is_digested_by_name_without_reading_a_module(name: str) -> None:
    """Hypothesis digests a machine's class by its source on every run (its example database
    key): a bound class has no module file, so inspect gives up at once (it parsed the whole
    module the class was made in before, to find no definition) and the digest is its name
    and signature, as it was, the same for every world."""
    import inspect

    contract = contract_named(name)
    factory, _ = resolve_adapter(name, "memory")
    worlds = [_world(contract, factory) for _ in range(2)]
    try:
        bound = [contract.suite.machine_for(w) for w in worlds]
        for machine in bound:
            with pytest.raises(TypeError, match="built-in class"):
                inspect.getsource(machine)
        assert bound[0].__qualname__ == bound[1].__qualname__ == bound[0].__mro__[1].__name__
        assert inspect.signature(bound[0]) == inspect.signature(bound[1])
    finally:
        for w in worlds:
            w.discard()
