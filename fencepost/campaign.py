"""``fencepost campaign``: many seeds of one check, one report.

A campaign runs ``fencepost check`` once per seed (each seed a task: on this machine's cores,
or on a Dask distributed cluster with ``--scheduler``), saves each seed's ``report.json`` in
its output directory as the seed finishes, and gathers them into ``campaign.json`` and
``campaign.md``: every clause that failed in some seed with the smallest counterexample found
(fewest steps; ties: the lowest seed) and the seeds that found it, the clauses some seed left
unknown, and situation coverage summed over the seeds (:mod:`fencepost.campaign_report`).

The output directory makes a campaign resumable: a seed already saved there is not run again,
and a directory made by another campaign (another contract, adapter, profile or options) is
refused (:mod:`fencepost.campaign_dir`). The failures the state machines find go to one
Hypothesis example database shared by every seed (by default a directory in the output
directory; ``redis://`` for a cluster), so that every later run replays them first.

Example::

    settings = CampaignSettings("adk-ledger", "mutant:claim_completed", concurrency=0)
    summary = run_campaign(settings, parse_seeds("1..8"), "out", jobs=2)
    summary.exit_code, [f.clause for f in summary.failing]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from . import arguments
from .errors import ConfigurationError

if TYPE_CHECKING:
    from .campaign_dir import CampaignDir
    from .campaign_report import CampaignSummary

SEEDS_LIMIT = 100_000
"""The most seeds one campaign may plan (each a whole check)."""

_RANGE = re.compile(r"^(\d+)\.\.(\d+)$")


def parse_seeds(text: str) -> tuple[int, ...]:
    """The seeds ``--seeds`` names: ``A..B`` is A to B inclusive, ``N`` is 1 to N.

    >>> parse_seeds("3..5"), parse_seeds("2")
    ((3, 4, 5), (1, 2))
    """
    text = text.strip()
    found = _RANGE.match(text)
    if found:
        first, last = int(found[1]), int(found[2])
    elif text.isdigit():
        first, last = 1, int(text)
    else:
        raise ConfigurationError(f"--seeds {text!r}: write A..B (e.g. 1..20) or N (1..N)")
    if last < first or last < 1:
        raise ConfigurationError(f"--seeds {text!r} names no seed; write A..B with A <= B, or "
                                 "N >= 1")
    if last - first + 1 > SEEDS_LIMIT:
        raise ConfigurationError(f"--seeds {text!r}: at most {SEEDS_LIMIT:,} seeds a campaign; "
                                 "split it with --shard")
    return tuple(range(first, last + 1))


def parse_shard(text: str) -> tuple[int, int]:
    """``--shard I/N`` as ``(I, N)``, 1 <= I <= N.

    >>> parse_shard("2/3")
    (2, 3)
    """
    index, slash, count = text.strip().partition("/")
    if not (slash and index.isdigit() and count.isdigit()):
        raise ConfigurationError(f"--shard {text!r}: write I/N, e.g. 2/4 (the second of 4)")
    if not 1 <= int(index) <= int(count):
        raise ConfigurationError(f"--shard {text!r}: I must be from 1 to N")
    return int(index), int(count)


def shard_of(seeds: Sequence[int], index: int, count: int) -> tuple[int, ...]:
    """Shard ``index`` of ``count`` (1-based): the seeds at the positions k (from 0) with
    ``k % count == index - 1``. The shards of one ``count`` partition the seeds, and each is
    the same on every machine, so a CI matrix of ``count`` jobs runs every seed once.

    >>> shard_of((1, 2, 3, 4, 5), 2, 2)
    (2, 4)
    """
    return tuple(seed for k, seed in enumerate(seeds) if k % count == index - 1)


def _call_timeout() -> float:
    from fencepost.scenarios.guard import default_call_timeout

    return default_call_timeout()


def _plain(options: Mapping[str, str]) -> dict[str, str]:
    return dict(options)


@attrs.frozen
class CampaignSettings:
    """What every seed of a campaign runs with (``fencepost check``'s options but the seed):
    also what makes an output directory this campaign's (:meth:`identity`)."""

    contract: str
    adapter: str = "sqlite"
    profile: str = "quick"
    options: Mapping[str, str] = attrs.field(factory=dict, converter=_plain)
    concurrency: int | None = None
    ops: int | None = None
    strict: bool = False
    call_timeout_s: float = attrs.field(factory=_call_timeout)
    shrink_budget: str | None = None

    def identity(self) -> dict[str, Any]:
        """The settings as JSON (``settings.json``): seeds saved under other settings are not
        this campaign's."""
        return {"contract": self.contract, "adapter": self.adapter, "profile": self.profile,
                "options": dict(sorted(self.options.items())),
                "concurrency": self.concurrency, "ops": self.ops, "strict": self.strict,
                "call_timeout_s": self.call_timeout_s, "shrink_budget": self.shrink_budget}

    def describe(self) -> str:
        """One line: ``adk-ledger on memory, profile quick``."""
        return f"{self.contract} on {self.adapter}, profile {self.profile}"


@attrs.frozen
class SeedTask:
    """One seed to check: what a worker (a local process, a Dask worker) is sent."""

    settings: CampaignSettings
    seed: int
    example_db: str | None = None


@attrs.frozen
class SeedResult:
    """What a worker sends back for one seed: the text of its ``report.json``, or why there is
    none (``lost``: the worker died running it; ``error``: a bug of the kit; ``configuration``:
    the seed could not start there, which stops the campaign)."""

    seed: int
    report: str = ""
    seconds: float = 0.0
    worker: str = ""
    lost: str = ""
    error: str = ""
    configuration: str = ""
    interrupted: int = 0


def run_seed(task: SeedTask, worker: str = "") -> SeedResult:
    """Check ``task.seed`` (in a worker): the seed's report as ``report.json`` text. Every
    exception is in the result, none raised, so that one seed cannot end the campaign."""
    import traceback

    from fencepost.api import check
    from fencepost.reports.json_report import dumps
    from fencepost.scenarios.interrupt import Interrupted

    s = task.settings
    started = time.perf_counter()
    worker = worker or f"pid {os.getpid()}"
    try:
        report = check(s.contract, s.adapter, profile=s.profile, seed=task.seed,
                       options=s.options, concurrency=s.concurrency, concurrent_ops=s.ops,
                       strict=s.strict, call_timeout_s=s.call_timeout_s,
                       shrink_budget=s.shrink_budget, example_db=task.example_db)
    except ConfigurationError as e:
        return SeedResult(task.seed, worker=worker, configuration=str(e))
    except Interrupted as e:
        return SeedResult(task.seed, worker=worker, interrupted=e.signum)
    except Exception as e:  # noqa: BLE001 - a bug of the kit: said, the campaign goes on
        text = "".join(traceback.format_exception_only(e)).strip()
        return SeedResult(task.seed, worker=worker, error=text[:2000])
    return SeedResult(task.seed, dumps(report), time.perf_counter() - started, worker)


Runner = Callable[[Sequence[SeedTask], Callable[[SeedResult], None]], None]
"""Runs tasks somewhere and hands each result over as it arrives (in the calling thread)."""


class _Arrivals:
    """The results of this invocation's seeds, as they arrive: each report saved at once,
    each seed said on the progress line; the lost and failed ones kept for the summary."""

    def __init__(self, directory: CampaignDir, total: int, skipped: int,
                 progress: Callable[[str], None]) -> None:
        self.directory, self.progress = directory, progress
        self.total, self.finished, self.ran = total, skipped, 0
        self.lost: dict[int, str] = {}
        self.errors: dict[int, str] = {}
        self.workers: dict[int, str] = {}
        self.started = time.monotonic()

    def __call__(self, result: SeedResult) -> None:
        if result.configuration:  # the same on every seed: stop rather than fail them all
            raise ConfigurationError(f"seed {result.seed} on {result.worker}: "
                                     f"{result.configuration}")
        if result.interrupted:
            from fencepost.scenarios.interrupt import Interrupted

            raise Interrupted(result.interrupted)
        if result.lost:
            self.lost[result.seed] = result.lost
            self._said(result, f"lost: {result.lost}")
        elif result.error:
            self.errors[result.seed] = result.error
            self._said(result, f"error: {result.error.splitlines()[-1]}")
        else:
            counts = self.directory.save(result.seed, result.report)
            self.workers[result.seed] = result.worker
            self._said(result, _outcome(counts))

    def _said(self, result: SeedResult, outcome: str) -> None:
        self.finished += 1
        self.ran += 1
        minutes = (time.monotonic() - self.started) / 60
        rate = self.ran / minutes if minutes > 0 else 0.0
        self.progress(f"seed {result.seed} {outcome} ({result.seconds:.1f} s) "
                      f"[{self.finished}/{self.total}, {rate:.1f} seeds/min]")


def _outcome(summary: Mapping[str, int]) -> str:
    """``done: 1 fail, 2 unknown`` or ``done: pass`` from a report's verdict counts."""
    said = [f"{summary[k]} {k}" for k in ("fail", "unknown") if summary.get(k)]
    return "done: " + (", ".join(said) or "pass")


def run_campaign(
    settings: CampaignSettings,
    seeds: Sequence[int],
    out: str,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    example_db: str | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> CampaignSummary:
    """Check ``seeds`` under ``settings``: on ``jobs`` local processes (default:
    ``FENCEPOST_JOBS``, else every core; each seed's check runs in one of them, its parts not
    spread further),
    or on the Dask cluster at ``scheduler`` (``tcp://HOST:8786``); each seed's report is saved
    under ``out/seeds/`` as it finishes and seeds already saved there are skipped; at the end
    (and when interrupted) ``out/campaign.json`` and ``campaign.md`` are written.
    ``example_db`` (a directory or ``redis://`` URL; None: none) is the Hypothesis example
    database every seed shares. ``progress`` is told one line per seed. Raises
    ConfigurationError for bad settings, an output directory of another campaign, a scheduler
    that cannot be reached, or a seed that cannot start on a worker.

    Local workers are forked from this process where that is safe, else started with
    ``spawn`` (see :func:`~fencepost.pool.start_context`), which imports the
    caller's main module again: from a script, call this under ``if __name__ ==
    "__main__":``."""
    from .campaign_dir import CampaignDir
    from .campaign_report import summarize

    _preflight(settings, example_db)
    runner = _runner(jobs, scheduler)
    directory = CampaignDir(out)
    directory.claim(settings.identity())
    if example_db is not None and "://" not in example_db:
        # made now (Hypothesis makes it at the first failure a seed's state machine saves):
        # the summary names it, and the campaign's directory looks the same whatever was found
        os.makedirs(example_db, exist_ok=True)
    saved = directory.saved(seeds)
    if saved:
        shown = ", ".join(map(str, sorted(saved)[:20])) + (", ..." if len(saved) > 20 else "")
        progress(f"skipped {len(saved)} seeds already saved in {directory.seeds_dir}: {shown}")
    arrivals = _Arrivals(directory, len(seeds), len(saved), progress)
    tasks = [SeedTask(settings, seed, example_db) for seed in seeds if seed not in saved]
    complete = False
    try:
        if tasks:
            runner(tasks, arrivals)
        complete = True
    finally:
        summary = summarize(
            settings.identity(), seeds, directory.saved(seeds), arrivals.lost, arrivals.errors,
            seconds=time.monotonic() - arrivals.started, ran=arrivals.ran,
            example_db=example_db, complete=complete, workers=arrivals.workers)
        directory.write_summary(summary)
    return summary


def _preflight(settings: CampaignSettings, example_db: str | None) -> None:
    """Every check a seed would make before it starts, made once here: a bad contract,
    profile, option, adapter, count or example database is one line before any seed runs."""
    from fencepost.adapter_spec import resolve_adapter

    from .run_config import RunConfig

    RunConfig.of(settings.contract, seed=0, profile=settings.profile,
                 options=settings.options, concurrency=settings.concurrency,
                 concurrent_ops=settings.ops, strict=settings.strict,
                 call_timeout_s=settings.call_timeout_s, shrink_budget=settings.shrink_budget)
    resolve_adapter(settings.contract, settings.adapter)
    if example_db is not None:
        from .example_db import example_database

        example_database(example_db)


def _runner(jobs: int | None, scheduler: str | None) -> Runner:
    """Where the seeds run: the Dask cluster at ``scheduler``, else ``jobs`` local
    processes."""
    if scheduler is not None:
        if jobs is not None:
            raise ConfigurationError("give --jobs or --scheduler, not both (the cluster's "
                                     "workers decide how many seeds run at once)")
        from .campaign_dask import dask_runner

        return dask_runner(scheduler)
    from .parallel import default_jobs

    count = default_jobs() if jobs is None else jobs
    if count < 1:
        raise ConfigurationError(f"--jobs must be 1 or more, not {count}")
    from .campaign_local import local_runner

    return local_runner(count)


# --- the command ------------------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    """The ``campaign`` subcommand's arguments (``sub``: the CLI's subparsers)."""
    p = sub.add_parser(
        "campaign", help="check many seeds (locally or on a Dask cluster) and gather one "
        "report: each failing clause's smallest counterexample, the seeds that found it, "
        "situation coverage over the seeds",
        epilog="exit codes: 1 a clause failed in some seed, else 4 a seed ended in an "
               "internal error, else 2 an adapter's close/discard failed, else 3 a verdict is "
               "unknown or a seed was lost, else 0; 2 also for bad usage or configuration "
               "(one line, before any seed runs), an --out DIR of another campaign, a "
               "scheduler that cannot be reached; 129/130/143 interrupted (the seeds saved "
               "stay: run the same command again to resume)")
    p.add_argument("contract", help="a contract's name (fencepost list shows them)")
    arguments.add_run_options(p)
    p.add_argument("--seeds", default="1..10", metavar="A..B|N",
                   help="the seeds to check: A..B inclusive, or N for 1..N (default 1..10)")
    p.add_argument("--shard", metavar="I/N",
                   help="only the I-th of N slices of the seeds (the seeds at positions k with "
                        "k %% N == I-1): N CI jobs with I = 1..N run every seed once")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="seeds checked at once, each in a process of its own, its check's parts "
                        "in that process (default: FENCEPOST_JOBS, else the machine's cores)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run each seed as a task on this Dask distributed scheduler "
                        "(dask scheduler / dask worker, started by you) instead of locally")
    p.add_argument("--out", metavar="DIR",
                   help="the campaign's directory: seeds/SEED/report.json as each seed "
                        "finishes, campaign.json and campaign.md at the end; seeds already "
                        "there are skipped (default: campaign-CONTRACT)")
    p.add_argument("--example-db", metavar="DIR|redis://HOST:PORT/DB[?prefix=NAME]|none",
                   help="the Hypothesis example database every seed shares: failures found "
                        "are saved there and replayed first by every later run (default: "
                        "DIR/example-db; on a cluster use redis://)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=cmd_campaign)


def cmd_campaign(args: argparse.Namespace) -> int:
    """``fencepost campaign``: run, print the summary, say where it is written."""
    from fencepost.scenarios.interrupt import Interrupted

    from .campaign_report import render
    from .ending import say
    from .supervisor import STATUS

    arguments.shrink_budget(args.shrink_budget, args.no_shrink)
    seeds = parse_seeds(args.seeds)
    if args.shard:
        seeds = shard_of(seeds, *parse_shard(args.shard))
    out = args.out or f"campaign-{args.contract}"
    if args.example_db is None:
        example_db: str | None = os.path.abspath(os.path.join(out, "example-db"))
    elif args.example_db == "none":
        example_db = None
    elif "://" in args.example_db:
        example_db = args.example_db
    else:
        example_db = os.path.abspath(args.example_db)
    settings = CampaignSettings(
        args.contract, args.adapter, args.profile,
        arguments.contract_options(args.contract, args.option), args.concurrency, args.ops,
        args.strict, args.call_timeout, "0" if args.no_shrink else args.shrink_budget)

    def progress(line: str) -> None:
        STATUS.say("phase", line)
        if not args.quiet:
            print(f"... {line}", file=sys.stderr, flush=True)

    try:
        summary = run_campaign(settings, seeds, out, jobs=args.jobs, scheduler=args.scheduler,
                               example_db=example_db, progress=progress)
    except Interrupted as e:
        say(f"fencepost: interrupted by {e.signal_name}; the seeds that finished are saved in "
            f"{out}: run the same command again to resume")
        return 128 + int(e.signum)
    print(render(summary))
    for name in ("campaign.json", "campaign.md"):
        print(f"wrote {os.path.join(out, name)}")
    return summary.exit_code
