"""``--jobs``: a run's parts in parallel processes give what one process gives.

The comparison leaves out what real threads decide, as two runs in one process differ there
too: the concurrent run is off (whether a history is linearizable depends on how the threads
interleaved), and how often a race exercised a clause is not compared. Shrinking runs without
a time budget (a budget cuts where the machine's speed puts it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fencepost.api import check
from fencepost.errors import ConfigurationError
from fencepost.model.answers import Answers
from fencepost.registry import contract_named
from fencepost.reports.verdict import RunReport
from fencepost.scenarios.evidence import Ending, Evidence, Failure, merged
from fencepost.scenarios.guard import Guard
from fencepost.scenarios.kinds import parts_of
from fencepost.scenarios.profiles import PROFILES
from fencepost.scenarios.runner import close_factory_into, parts_in_order, run_suite
from fencepost.scenarios.tour_coverage import TourCoverage
from fencepost.scenarios.trace import TraceStep

EXTERNAL = str(Path(__file__).parent / "external")


def _seen(report: RunReport) -> list[tuple[Any, ...]]:
    return [
        (v.clause.id, str(v.status), v.failure.check if v.failure else None,
         tuple(s.render(i) for i, s in enumerate(v.failure.trace))
         if v.failure and not v.failure.check.startswith(("race:", "concurrent")) else None)
        for v in report.verdicts
    ]


@pytest.mark.long
def test_the_same_seed_gives_the_same_verdicts_and_counterexamples_at_jobs_1_and_2() -> None:
    kwargs: dict[str, Any] = {"seed": 11, "shrink_budget": "none", "concurrency": 0}
    one = check("adk-ledger", "mutant:claim_completed", jobs=1, **kwargs)
    two = check("adk-ledger", "mutant:claim_completed", jobs=2, **kwargs)
    assert _seen(one) == _seen(two)
    assert (one.steps, one.examples) == (two.steps, two.examples)
    failed = {v.clause.id for v in two.failed()}
    assert "ADK-CLAIM-002" in failed
    assert one.timings.keys() == two.timings.keys()


def steps(n: int) -> tuple[TraceStep, ...]:
    return tuple(TraceStep("kit", k, note="the clock moved") for k in range(n))


def test_a_clause_keeps_the_shortest_counterexample_any_check_found() -> None:
    """Shortest first: a script's over a race's, a shrunk one over one cut short, then the
    fewest steps; of two alike, the first found."""
    e = Evidence()
    e.fail("X-1", Failure("scenario:long", "long script", steps(12)))
    e.fail("X-1", Failure("machine", "cut short", steps(3), minimal=False))
    e.fail("X-1", Failure("race:r", "a race", steps(1)))
    e.fail("X-1", Failure("concurrent", "a history", steps(1)))
    assert e.failures["X-1"].message == "long script"
    e.fail("X-1", Failure("machine", "shrunk", steps(4)))
    assert e.failures["X-1"].message == "shrunk"
    e.fail("X-1", Failure("scenario:short", "as short", steps(4)))
    assert e.failures["X-1"].message == "shrunk"
    e.fail("X-2", Failure("race:r", "a race", steps(5)))
    e.fail("X-2", Failure("concurrent", "a shorter history", steps(2)))
    assert e.failures["X-2"].message == "a shorter history"
    e.fail("X-2", Failure("fault:f", "a fault case", steps(9)))
    assert e.failures["X-2"].message == "a fault case"


def test_evidence_is_merged_in_the_runs_order_first_failure_kept() -> None:
    a, b = Evidence(), Evidence()
    a.fail("X-1", Failure("scenario:a", "first", ()))
    b.fail("X-1", Failure("machine", "second", ()))
    b.fail("X-2", Failure("machine", "only", ()))
    a.exercised["X-1"], b.exercised["X-1"] = 2, 3
    a.reach("X-1", "s"), b.reach("X-1", "s"), b.reach("X-1", "t")
    a.steps, b.steps = 5, 7
    b.mark_unknown("X-3", "why")
    a.ended["scenario:a"] = Ending.failing(["X-1"])
    b.ended["machine"] = Ending.failing(["X-2", "X-1"])
    whole = merged([a, b])
    assert {c: f.message for c, f in whole.failures.items()} == {"X-1": "first", "X-2": "only"}
    assert whole.exercised == {"X-1": 5}
    assert whole.situations == {"X-1": {"s": 2, "t": 1}}
    assert whole.steps == 12
    assert whole.unknown == {"X-3": "why"}
    assert {check: str(how) for check, how in whole.ended.items()} == {
        "scenario:a": "failed X-1", "machine": "failed X-1, X-2"}
    assert whole.ended["machine"] == Ending(failed=("X-1", "X-2"))


def test_what_one_part_alone_holds_is_kept_in_the_merge() -> None:
    """The concurrent run and the tour are each in one part: the merge keeps theirs, as it
    keeps the checks each part ran, the first reason a part stopped and every fault."""
    a, b, c = Evidence(), Evidence(), Evidence()
    answers = Answers(calls=303, answered=300, faulted=3)
    tour = TourCoverage("ci", "bound", states=4, edges=9, planned=9, run=9, sequences=2,
                        steps=11, seconds=0.1)
    a.checks_run, b.checks_run, c.checks_run = {"scenario:a"}, {"concurrent"}, {"tour"}
    b.concurrent, c.tour = answers, tour
    b.stopped, c.stopped = "a call never returned", "interrupted"
    a.faults.append("close failed")
    c.faults.append("discard failed")
    whole = merged([a, b, c])
    assert whole.concurrent is answers and whole.tour is tour
    assert whole.checks_run == {"scenario:a", "concurrent", "tour"}
    assert whole.stopped == "a call never returned"
    assert whole.faults == ["close failed", "discard failed"]


def test_a_part_whose_store_would_not_open_merges_as_unknown_unless_every_part_is_such(
) -> None:
    """The run's capabilities and options are an opened part's; a run whose every part
    failed to open is the configuration error a run on one process raises."""
    from concurrent.futures import Future

    from fencepost.parallel import _merge
    from fencepost.scenarios.runner import RunResult

    def ended(*parts: tuple[int, RunResult]) -> Future[list[Any]]:
        future: Future[list[Any]] = Future()
        future.set_result([(k, "ok", result) for k, result in parts])
        return future

    said = "the adapter factory failed: OSError: full"
    shut, opened = Evidence(), Evidence()
    shut.mark_unknown("X-1", "machine: the adapter factory raised OSError: full")
    opened.exercised["X-2"] = 4
    unopened = RunResult(shut, frozenset(), {}, {}, {}, 0, 0, unopened=said)
    worked = RunResult(opened, frozenset({"durable"}), {"o": "v"}, {}, {}, 3, 1)
    whole = _merge([ended((0, unopened)), ended((1, worked))], 0.0, interrupted=False)
    assert whole.capabilities == frozenset({"durable"}) and whole.options == {"o": "v"}
    assert whole.evidence.unknown == {"X-1": "machine: the adapter factory raised OSError: full"}
    assert whole.evidence.exercised == {"X-2": 4} and whole.unopened is None
    with pytest.raises(ConfigurationError, match=f"^{said}$"):
        _merge([ended((0, unopened), (1, unopened))], 0.0, interrupted=False)


def test_every_check_is_in_exactly_one_part_each_race_a_part_of_its_own() -> None:
    suite = contract_named("ledgence-tasks").suite
    kinds = [kind for part in parts_of(suite) for kind in part]
    assert kinds == ["scenario", "fault", "machine", "tour",
                     *(f"race:{name}" for name in suite.races), "concurrent"]


def test_the_parts_holding_the_checks_named_first_go_first() -> None:
    parts = (("scenario", "fault"), ("machine",), ("race:a",), ("race:b",), ("concurrent",))
    assert parts_in_order(parts, {"race:b"}) == [3, 0, 1, 2, 4]
    assert parts_in_order(parts, {"scenario:x", "concurrent"}) == [0, 4, 1, 2, 3]
    assert parts_in_order(parts, {"race"}) == [2, 3, 0, 1, 4]
    assert parts_in_order(parts, set()) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("jobs", ["0", "-2", "two"])
def test_a_bad_jobs_count_is_one_line_and_exit_2(jobs: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter", "memory",
         "--jobs", jobs], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "--jobs" in done.stderr


class _Ending:
    """A process whose end was seen but which is reaped only by ``join`` (a ``waitpid`` that
    does not wait reads nothing yet), as a pool's worker right after its sentinel fired."""

    def __init__(self, code: int | None, reaped_after: int = 1) -> None:
        self.code, self.joins, self.reaped_after = code, 0, reaped_after

    @property
    def exitcode(self) -> int | None:
        return self.code if self.joins >= self.reaped_after else None

    def join(self, timeout: float | None = None) -> None:
        self.joins += 1


def test_the_exit_code_of_a_process_just_ended_is_waited_for() -> None:
    """The run that ends abruptly names the status of the process that ended it: not 'ended'
    while it cannot be read yet, nor the 143 of a worker the pool stopped after (the --jobs 2
    os_exit test said one or the other in 3 of 21 runs beside other tests)."""
    from fencepost.parallel import _how, exit_codes

    assert exit_codes([_Ending(7), _Ending(-15, reaped_after=3)]) == [7, -15]
    assert _how([_Ending(-15), _Ending(7)]) == "(a --jobs process) exited with status 7"
    # a worker the pool then stopped exits 143 through the kit's SIGTERM handler
    assert _how([_Ending(143), _Ending(7)]) == "(a --jobs process) exited with status 7"
    assert _how([_Ending(-11)]) == "(a --jobs process) was killed by SIGSEGV"
    never = _Ending(7, reaped_after=10**9)
    assert exit_codes([never], timeout_s=0.01) == [None] and never.joins >= 1
    assert _how([]) == "(a --jobs process) ended"


# -- one factory per pool process -----------------------------------------------------------------

LOGGED_SERVE = """import os, sys
with open(sys.argv[1], "a", encoding="utf-8") as f:
    f.write(f"{os.getppid()}\\n")
os.execv(sys.executable, [sys.executable, "-m", "fencepost.cli", "serve", "adk-ledger",
                          "--adapter", "memory"])
"""


@pytest.mark.long
def test_an_exec_store_starts_once_per_pool_process_not_once_per_part(tmp_path: Path) -> None:
    """Each of the 6 parts used to start the store's program; now each process that took parts
    starts it once (the program logs the process that started it)."""
    (tmp_path / "serve.py").write_text(LOGGED_SERVE)
    log = tmp_path / "started"
    done = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter",
         f"exec:{sys.executable} {tmp_path / 'serve.py'} {log}", "--seed", "1", "--jobs", "2",
         "--concurrency", "0", "--quiet"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 fail, 0 unknown, " in done.stdout
    starters = log.read_text().split()
    assert len(parts_of(contract_named("adk-ledger").suite, PROFILES["quick"])) == 6
    assert len(starters) == len(set(starters)) in (1, 2), starters


class _Closes:
    """The memory store's factory, counting its closes."""

    def __init__(self) -> None:
        from fencepost.adapter_spec import resolve_adapter

        self.base, _ = resolve_adapter("adk-ledger", "memory")
        self.closed = 0

    def __call__(self, env: Any) -> Any:
        return self.base(env)

    def discard(self, env: Any) -> None:
        self.base.discard(env)

    def close(self) -> None:
        self.closed += 1


def test_a_run_keeps_its_factory_open_for_the_next_only_when_it_ended_as_it_should() -> None:
    suite = contract_named("adk-ledger").suite
    factory = _Closes()
    quick = PROFILES["quick"]
    first = run_suite(suite, factory, profile=quick, seed=1, parts=(0,), keep_open=True)
    run_suite(suite, factory, profile=quick, seed=1, parts=(1,), keep_open=True)
    assert factory.closed == 0
    assert close_factory_into(factory, first.evidence, Guard(5.0)) is None
    assert factory.closed == 1 and first.evidence.faults == []
    with pytest.raises(ConfigurationError, match="--require fault_injection"):
        run_suite(suite, factory, profile=quick, seed=1, parts=(0,), keep_open=True,
                  require={"fault_injection"})
    assert factory.closed == 2  # a run that failed closes it, as without keep_open
    run_suite(suite, factory, profile=quick, seed=1, parts=(0,))
    assert factory.closed == 3


@pytest.mark.long
def test_a_factory_close_that_never_returns_is_left_behind_once_per_pool_process(
        tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter",
         "hostile:adk_ledger__factory_close_hangs", "--seed", "3", "--call-timeout", "1",
         "--jobs", "2", "--report", "R", "--quiet"], cwd=tmp_path, capture_output=True,
        text=True, timeout=300, env=dict(os.environ, PYTHONPATH=EXTERNAL))
    assert done.returncode == 2, done.stdout + done.stderr
    report = json.loads((tmp_path / "R" / "report.json").read_text())
    left = ("the adapter factory's close did not return in 1 s (--call-timeout); it was left "
            "behind")
    assert report["faults"] and set(report["faults"]) == {left}
    assert len(report["faults"]) in (1, 2)  # one per process that took parts, not one per part
    assert report["summary"]["fail"] == report["summary"]["unknown"] == 0


# -- the pool started early -----------------------------------------------------------------------


def _counted_pools(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """Each PartsPool made from now on: its jobs and how its processes start."""
    from fencepost import pool as pools

    made: list[tuple[int, str]] = []
    init = pools.PartsPool.__init__

    def counted(self: Any, jobs: int, context: Any = None) -> None:
        init(self, jobs, context)
        made.append((jobs, self.executor._mp_context.get_start_method()))

    monkeypatch.setattr(pools.PartsPool, "__init__", counted)
    return made


def test_where_processes_are_spawned_a_run_takes_the_pool_started_early(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from fencepost import pool as pools

    monkeypatch.setattr(pools, "forks", lambda: False)  # as on macOS
    made = _counted_pools(monkeypatch)
    pools.start_early(2)
    assert made == [(2, "spawn")] and pools._early is not None
    report = check("adk-ledger", "memory", jobs=2, seed=1, concurrency=0)
    assert made == [(2, "spawn")] and pools._early is None
    assert {v.status for v in report.verdicts} <= {"pass", "unsupported"}
    check("adk-ledger", "memory", jobs=2, seed=1, concurrency=0)  # nothing started early
    assert made == [(2, "spawn"), (2, "spawn")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="processes fork on Linux only")
def test_on_linux_nothing_starts_early_and_the_run_forks_its_processes_when_it_is_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from fencepost import pool as pools
    from fencepost import progress

    made = _counted_pools(monkeypatch)
    pools.start_early(2)
    assert made == [] and pools._early is None
    monkeypatch.setattr(progress, "quiet_at_fork", lambda: True)  # pytest may run threads
    report = check("adk-ledger", "memory", jobs=2, seed=1, concurrency=0)
    assert made == [(2, "fork")]
    assert {v.status for v in report.verdicts} <= {"pass", "unsupported"}
    monkeypatch.setattr(progress, "quiet_at_fork", lambda: False)  # a thread of the caller's
    check("adk-ledger", "memory", jobs=2, seed=1, concurrency=0)
    assert made == [(2, "fork"), (2, "spawn")]


def _commands_hangup(_signum: int, _frame: Any) -> None:
    """Stands for the command's SIGHUP handler (it stops the run in the command's process)."""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="processes fork on Linux only")
def test_a_forked_run_process_takes_sighup_as_a_spawned_one_does() -> None:
    """A forked process starts with the command's signal handlers; its initializer puts
    SIGHUP back to the default a fresh interpreter has (SIGINT is ignored: the command's)."""
    import multiprocessing
    import signal

    from fencepost.pool import POOL_EXIT_S, PartsPool

    previous = signal.signal(signal.SIGHUP, _commands_hangup)
    try:
        pool = PartsPool(1, multiprocessing.get_context("fork"))
        try:
            handlers = [pool.executor.submit(signal.getsignal, s).result(timeout=120)
                        for s in (signal.SIGHUP, signal.SIGINT)]
        finally:
            pool.shut_down(POOL_EXIT_S)
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert handlers == [signal.SIG_DFL, signal.SIG_IGN]


def _core_taken(cores: Any, results: Any) -> None:
    cores.take()
    results.put(sorted(os.sched_getaffinity(0)))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_each_process_of_a_pool_takes_a_core_of_its_own_when_they_take_every_cpu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    from fencepost.pool import Cores

    mine = sorted(os.sched_getaffinity(0))
    ctx = multiprocessing.get_context("fork")
    cores, results = Cores(len(mine), ctx), ctx.Queue()
    processes = [ctx.Process(target=_core_taken, args=(cores, results)) for _ in mine]
    for process in processes:
        process.start()
    got = sorted(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(120)
    assert got == [[cpu] for cpu in mine]
    assert Cores(len(mine) + 1, ctx).cpus == ()  # not one for each: they run anywhere
    assert Cores(len(mine) - 1, ctx).cpus == ()  # not every CPU: others' pools may need them
    monkeypatch.setenv("FENCEPOST_PIN", "0")
    assert Cores(len(mine), ctx).cpus == ()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_the_processes_of_a_run_and_of_a_campaign_run_on_one_core_each() -> None:
    from fencepost.campaign_local import _pool
    from fencepost.pool import POOL_EXIT_S, PartsPool, start_context

    mine = os.sched_getaffinity(0)
    parts = PartsPool(len(mine), start_context())
    try:
        run = parts.executor.submit(os.sched_getaffinity, 0).result(timeout=120)
    finally:
        parts.shut_down(POOL_EXIT_S)
    campaign = _pool(len(mine))
    try:
        seeds = campaign.submit(os.sched_getaffinity, 0).result(timeout=120)
    finally:
        campaign.shutdown()
    assert len(run) == len(seeds) == 1 and run | seeds <= mine


@pytest.mark.parametrize("adapter", ["no_such_module:make", "exec:"])
def test_a_command_that_ends_before_its_run_stops_the_pool_it_started(adapter: str) -> None:
    """The pool started early is shut down: one line, no warning of its queues left behind."""
    done = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter", adapter,
         "--jobs", "2"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("fencepost: error: ")


def test_a_pool_shut_down_leaves_nothing_for_the_resource_tracker_to_warn_of(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its manager thread is waited for and its queues are freed (their semaphores unlinked)
    once the pool is dropped: a command that then ends at once (``os._exit``) leaves none
    behind (the tracker warned of 5 under load while the thread was not waited for)."""
    import weakref
    from concurrent.futures import process

    from fencepost.pool import POOL_EXIT_S, PartsPool

    joined: list[float | None] = []
    join = process._ExecutorManagerThread.join
    monkeypatch.setattr(process._ExecutorManagerThread, "join",
                        lambda self, timeout=None: (joined.append(timeout), join(self, timeout))[1])
    pool = PartsPool(2)
    pool.executor.submit(int).result(timeout=120)
    manager = weakref.ref(pool.executor._executor_manager_thread)  # type: ignore[attr-defined]
    queues = [weakref.ref(q) for q in (pool.executor._call_queue, pool.lines)]  # type: ignore[attr-defined]
    pool.shut_down(POOL_EXIT_S)
    assert joined == [POOL_EXIT_S]
    del pool
    assert manager() is None and [q() for q in queues] == [None, None]
