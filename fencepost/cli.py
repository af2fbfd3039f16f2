"""``fencepost``: check an adapter against a contract, list contracts, run the mutants,
measure situation coverage.
Over 500 lines: the parser of every subcommand (some 150 lines of options and help) and one
short ``cmd_*`` function per subcommand, whose work is done in the modules they call.

Exit codes: 0 every applicable clause passed; 1 a clause failed (or a mutant escaped);
2 bad usage or configuration (one line on stderr, found before the run starts); 3 nothing
failed but a verdict is unknown (for coverage: a situation some seed missed); 4 internal
error; 128 + the signal's number when interrupted (129 SIGHUP, 130 SIGINT, 143 SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import attrs
from tabulate import tabulate

from . import arguments, campaign, gate
from .ending import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    abrupt,
    guarded,
    say,
    signals_raise,
)
from .errors import ConfigurationError
from .progress import progress_printer, stop_all


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"fencepost: error: {message} (see fencepost --help)\n")


REPORT_FILES = ("report.json", "report.md", "report.html", "junit.xml", "history.jsonl")
"""What --report writes (fencepost.reports.render.REPORT_FILES; named here too so that the
command line does not import the reports before it is used)."""


def cmd_check(args: argparse.Namespace) -> int:
    from fencepost.pool import default_jobs, start_early, stop_early

    start_early(default_jobs() if args.jobs is None else args.jobs)  # loads while this does
    try:
        return _checked(args)
    finally:
        stop_early()  # a run that never started leaves no process


def _checked(args: argparse.Namespace) -> int:
    arguments.report_dir(args.report, "--report", REPORT_FILES)
    options = arguments.contract_options(args.contract, args.option)
    arguments.output_file(args.summary, "--summary")
    arguments.shrink_budget(args.shrink_budget, args.no_shrink)
    baseline = gate.read_baseline(args.baseline, args.contract) if args.baseline else None
    from fencepost.api import check
    from fencepost.pool import default_jobs
    from fencepost.reports.render import (
        ReportsNotWritten,
        headline,
        not_declared,
        render_failures,
        summary_table,
        write_reports,
    )
    from fencepost.reports.text import clean_line
    from fencepost.reports.views import tour_line

    progress = progress_printer(not args.quiet)
    report = check(
        args.contract,
        args.adapter,
        profile=args.profile,
        seed=args.seed,
        options=options,
        progress=progress,
        concurrency=args.concurrency,
        concurrent_ops=args.ops,
        strict=args.strict,
        call_timeout_s=args.call_timeout,
        shrink_budget="0" if args.no_shrink else args.shrink_budget,
        example_db=args.example_db,
        jobs=default_jobs() if args.jobs is None else args.jobs,
        require=args.require,
        tour=args.tour,
    )
    progress.done()
    untested = not_declared(report)
    if untested:
        say(f"fencepost: warning: {untested}")
    print(summary_table(report))
    print()
    tour = tour_line(report)
    if tour is not None:
        print(clean_line(tour, 2000))
    if report.exit_code != 0:
        print(render_failures(report))
    else:
        print(headline(report))
    if args.report:
        try:
            written = write_reports(report, args.report)
        except ReportsNotWritten as e:  # a full disk: say so, keep the verdict's exit code
            written = e.written
            say(f"fencepost: {e}")
        for path in written:
            print(f"wrote {path}")
            if path.endswith("history.jsonl"):
                print(f"  re-check it: fencepost analyze {path}")
    return gate.finish(args, report, baseline)


def cmd_list(args: argparse.Namespace) -> int:
    from fencepost.adapter_spec import ADAPTER_FORMS
    from fencepost.registry import contract_named, contract_names

    if not args.contract:
        listed = [(c.name, len(c.clauses), c.summary)
                  for c in map(contract_named, contract_names())]
        print(tabulate(listed, headers=("contract", "clauses", "what")))
        print("\nadapters: " + ", ".join(ADAPTER_FORMS))
        return EXIT_OK
    contract = contract_named(args.contract)
    rows = [
        (c.id, c.title, ", ".join(sorted(c.requires)) or "-", ", ".join(c.checks))
        for c in contract.clauses
    ]
    print(tabulate(rows, headers=("clause", "title", "requires", "checks")))
    print("\ncapabilities a store may declare (store.capabilities):")
    for name, meaning in contract.capabilities.items():
        print(f"  {name:16} {meaning}")
    if contract.choices:
        print("\noptions (--option NAME=VALUE; the default is what the seed implementation does):")
    for choice in contract.choices:
        values = ", ".join(v for v, _ in choice.values)
        print(f"  {choice.name}={choice.default}  [{values}]\n      doc: {choice.doc_says}"
              f"\n      implementation: {choice.implementation_does}")
        for value, meaning in choice.values:
            print(f"      {value}: {meaning}")
        if choice.source:
            print(f"      seed source: {choice.source}")
    if contract.settings:
        print("\nsettings (--option NAME=VALUE, passed to the adapter in env.options):")
    for setting in contract.settings:
        print(f"  {setting.name}={setting.default}  {setting.meaning}")
    print(f"\nprotocol: {contract.spec.__name__}  ({', '.join(contract.suite.protocol_methods)})")
    print("adapters: " + ", ".join(ADAPTER_FORMS))
    print(f"mutants: {len(contract.mutants)} (fencepost mutants {contract.name})")
    return EXIT_OK


def cmd_clean(args: argparse.Namespace) -> int:
    from .clean import cmd_clean as clean  # SQLAlchemy: only when clean runs

    return clean(args)


def cmd_explain(args: argparse.Namespace) -> int:
    from .explain import explain

    print(explain(args.target))
    return EXIT_OK


def cmd_coverage(args: argparse.Namespace) -> int:
    if args.seeds < 1:
        raise ConfigurationError(f"--seeds must be 1 or more, not {args.seeds}")
    arguments.output_file(args.json, "--json")
    options = arguments.contract_options(args.contract, args.option)
    from fencepost.coverage import run_coverage

    progress = progress_printer(not args.quiet)
    table = run_coverage(args.contract, args.adapter, profile=args.profile, seeds=args.seeds,
                         first_seed=args.seed, options=options,
                         progress=progress)
    progress.done()
    rows = [(r.clause, r.situation, f"{r.seeds_reached}/{r.seeds}", r.reached)
            for r in table.rows if args.all or r.seeds_reached < r.seeds]
    if rows:
        print(tabulate(rows, headers=("clause", "situation", "seeds", "times")))
        print()
    clauses = len({r.clause for r in table.rows})
    print(f"{table.contract} on {table.adapter}, profile {table.profile}, seeds "
          f"{table.seeds[0]}..{table.seeds[-1]}: {len(table.rows) - len(table.missed())} of "
          f"{len(table.rows)} situations of {clauses} clauses reached in every seed "
          f"({table.seconds:.1f} s)")
    if table.failed:
        print(f"clauses failed in some seed: {', '.join(table.failed)}")
    if args.json:
        arguments.save(args.json, "--json", json.dumps(
            {"contract": table.contract, "adapter": table.adapter, "profile": table.profile,
             "seeds": list(table.seeds), "failed": list(table.failed),
             "situations": [attrs.asdict(r) for r in table.rows]}, indent=2))
    return table.exit_code


def cmd_mutants(args: argparse.Namespace) -> int:
    arguments.report_dir(args.report, "--report", ("mutants.json", "mutants.html"))
    from fencepost.mutants import elsewhere, run_mutants

    progress = progress_printer(not args.quiet)
    rows = run_mutants(
        args.contract,
        base=args.adapter,
        profile=args.profile,
        seed=args.seed,
        only=args.only or None,
        progress=progress,
    )
    progress.done()
    table = [
        (r.name + "".join(f"\n  {k}={v}" for k, v in sorted(r.options.items())), r.bug,
         r.expected_clause + ("" if r.expected == "fail" else f" ({r.expected})"),
         "yes" if r.caught else "NO (it crashed)" if r.crashed and r.caught_by else "NO",
         ", ".join(r.caught_by) or "-", r.steps, f"{r.seconds:.2f}")
        for r in rows
    ]
    print(tabulate(table, headers=("mutant", "bug", "expected clause", "caught?", "caught by",
                                   "steps", "seconds"), maxcolwidths=[None, 48, None, None, 40]))
    caught = sum(r.caught for r in rows)
    print(f"\n{caught} of {len(rows)} mutants caught by their expected clause "
          f"(base {args.adapter}, profile {args.profile}, seed {args.seed})")
    for base, names in elsewhere(args.contract, args.adapter, args.only or None).items():
        print(f"{len(names)} more need --adapter {base}: {', '.join(names)}")
    if args.report:
        from fencepost.reports.html import mutants_html

        meta = {"base": args.adapter, "profile": args.profile, "seed": str(args.seed)}
        try:
            os.makedirs(args.report, exist_ok=True)
        except OSError as e:
            arguments.not_written(args.report, "--report", e)
        else:
            for name, text in (
                    ("mutants.json", json.dumps([attrs.asdict(r) for r in rows], indent=2) + "\n"),
                    ("mutants.html", mutants_html(args.contract, rows, meta))):
                path = os.path.join(args.report, name)
                if arguments.save(path, "--report", text):
                    print(f"wrote {path}")
    return EXIT_OK if caught == len(rows) else EXIT_FAIL


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve a Python store over fencepost-wire/1 on stdin/stdout (until shutdown or EOF)."""
    from fencepost import __version__
    from fencepost.adapter_spec import resolve_adapter
    from fencepost.adapters.wire.serve import serve
    from fencepost.registry import contract_named
    from fencepost.spec.ops import operations
    from fencepost.wire_spec import served_capabilities

    contract = contract_named(args.contract)
    if args.mutant:
        from fencepost.mutants import mutant_factory

        try:
            mutant = contract.mutant(args.mutant)
        except KeyError:
            names = ", ".join(m.name for m in contract.mutants)
            raise ConfigurationError(f"{args.contract} has no mutant "
                                     f"{args.mutant!r}; known: {names}") from None
        from fencepost.mutants import runs_on

        base = args.adapter
        if base not in ("memory", "sqlite"):
            raise ConfigurationError(f"--mutant is served on --adapter memory or sqlite, "
                                     f"not {base!r}")
        if not runs_on(mutant, base):
            raise ConfigurationError(f"mutant {args.mutant} runs on {', '.join(mutant.bases)}, "
                                     f"not on {base}")
        factory: Any = mutant_factory(contract, mutant, base)
        name = f"fencepost-serve:{args.mutant}@{base}"
    else:
        factory, name = resolve_adapter(args.contract, args.adapter)
        name = f"fencepost-serve:{name}"
    capabilities = served_capabilities(contract, factory)
    return serve(contract.name, factory, operations(contract.name), capabilities, name=name,
                 version=__version__)


def cmd_wire_check(args: argparse.Namespace) -> int:
    """Probe an exec adapter's protocol handling (docs/protocol.md), contract aside."""
    from fencepost.adapters.wire.conformance import wire_check
    from fencepost.registry import contract_named
    from fencepost.wire_spec import exec_argv, probe_call, wire_timeout

    contract = contract_named(args.contract)
    options = arguments.contract_options(args.contract, args.option)
    from fencepost.model.base import options_with_defaults

    options = options_with_defaults(contract.choices, options, contract.settings)
    import shlex

    command = args.command[0] if len(args.command) == 1 else shlex.join(args.command)
    results = wire_check(contract.name, exec_argv(command), probe_call(contract.name), options,
                         timeout_s=wire_timeout())
    print(tabulate([(r.name, r.required, r.got, "ok" if r.passed else "WRONG") for r in results],
                   headers=("probe", "the protocol requires", "the adapter answered", ""),
                   maxcolwidths=[34, 30, 60, None]))
    wrong = [r for r in results if not r.passed]
    print(f"\n{len(results) - len(wrong)} of {len(results)} probes answered as "
          f"fencepost-wire/1 requires ({command})")
    return EXIT_OK if not wrong else EXIT_FAIL


def cmd_protocol(args: argparse.Namespace) -> int:
    """What an adapter of CONTRACT must understand over fencepost-wire/1."""
    from fencepost.wire_spec import wire_schema

    print(wire_schema(args.contract))
    return EXIT_OK


def cmd_analyze(args: argparse.Namespace) -> int:
    """Re-check a saved history offline: linearizable (0), not (1), unknown (3)."""
    import time

    from fencepost.model.answers import answers_of
    from fencepost.model.history import History
    from fencepost.model.linearizability import (
        LINEARIZABLE,
        NOT_LINEARIZABLE,
        check_history,
        render_counterexample,
    )
    from fencepost.registry import contract_named, validate_capabilities, validate_options

    if not args.budget >= 0:  # also refuses nan
        raise ConfigurationError(f"--budget must be 0 or more seconds, not {args.budget}")
    def spec_of(name: str) -> Any:  # any installed contract, the third-party ones too
        try:
            return contract_named(name).spec
        except ConfigurationError:
            return None

    if os.path.exists(args.history) and not os.path.isfile(args.history):
        raise ConfigurationError(f"{args.history}: not a regular file; name a history.jsonl "
                                 "written by fencepost check --report")  # a pipe may never end
    try:
        history = History.load(args.history, spec_of)
    except OSError as e:
        raise ConfigurationError(f"cannot read history {args.history!r}: {e.strerror}") from None
    except ValueError as e:
        raise ConfigurationError(f"{args.history}: not a fencepost history: {e}") from None
    model = contract_named(history.contract).suite.model
    options = validate_options(history.contract,
                               {**history.options, **arguments.options(args.option or ())})
    capabilities = history.capabilities | validate_capabilities(history.contract,
                                                                args.capability or ())
    verdict = check_history(model, history, budget_s=args.budget, clock=time.perf_counter,
                            options=options, capabilities=capabilities)
    print(verdict.summary())
    print(answers_of(history.events).describe())
    if verdict.result == NOT_LINEARIZABLE:
        print()
        print(render_counterexample(verdict))
        return EXIT_FAIL
    return EXIT_OK if verdict.result == LINEARIZABLE else EXIT_UNKNOWN


def cmd_bench(args: argparse.Namespace) -> int:
    """Measure and print the kit's figures on this machine (``--json FILE`` saves them)."""
    arguments.output_file(args.json, "--json")
    from fencepost.bench import FULL, QUICK, run_bench
    from fencepost.bench_render import render, to_json

    sizes = QUICK if args.quick else FULL
    if args.seeds is not None:
        sizes = attrs.evolve(sizes, seeds=args.seeds)
    progress = progress_printer(not args.quiet)
    result = run_bench(args.contract or None, sizes=sizes, postgres=args.postgres,
                       progress=progress)
    progress.done()
    print(render(result))
    if args.json and arguments.save(args.json, "--json",
                                    json.dumps(to_json(result), indent=2) + "\n"):
        print(f"wrote {args.json}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    from fencepost import __version__

    parser = _Parser(
        prog="fencepost",
        description="Conformance kit for lease-fenced task stores and invocation ledgers.",
        epilog="exit codes: 0 pass, 1 a clause failed, 2 usage/configuration, 3 unknown verdict, "
               "4 internal error, 129/130/143 interrupted (SIGHUP/SIGINT/SIGTERM)",
    )
    parser.add_argument("--version", action="version", version=f"fencepost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser(
        "check", help="check an adapter against a contract",
        epilog="exit codes: 0 every applicable clause passed, 1 a clause failed, 2 usage or "
               "configuration (or, no clause failing, the adapter's close/discard failed), 3 "
               "no clause failed but one is unknown, 4 internal error. With --baseline the "
               "comparison decides instead: 1 when a clause regressed (it passed in the "
               "baseline and now fails, is unknown or unsupported; or it fails now and was "
               "unknown or unsupported there), else 2 when the adapter's close/discard "
               "failed, else 0 (known failures, clauses still unknown, improvements and "
               "clauses new since the baseline do not fail the gate); a baseline that cannot "
               "be read or compared (another contract, another catalogue MAJOR version, none "
               "at all) is exit 2 before the run; a run ended abruptly is still 3.")
    p.add_argument("contract",
                   help="a contract's name (fencepost list shows them)")
    arguments.add_run_options(p)
    p.add_argument("--tour", nargs="?", const="full", metavar="SCOPE",
                   help="also run the transition tour: every edge of the model's bounded state "
                        "graph, run on the store, the same at every seed (SCOPE full, the "
                        "default, or ci: smaller; none: no tour)")
    p.add_argument("--seed", type=int, default=None, help="replay a run (default: random)")
    p.add_argument("--require", action="append", default=[], metavar="CAP",
                   help="the store must declare capability CAP (repeatable): a store without "
                        "it is exit 2 before any check, instead of a run whose clauses that "
                        "need it are unsupported (a CI gate insisting on concurrency, durable)")
    p.add_argument("--report", metavar="DIR",
                   help="write DIR/report.json, report.md, report.html and junit.xml "
                        "(and history.jsonl after a concurrent run)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="run the run's independent parts (scenarios and fault cases, state "
                        "machine, races, concurrent run) in N processes, each on a store "
                        "namespace of its own; the verdicts and counterexamples are the same "
                        "at any N (default: FENCEPOST_JOBS, else the machine's cores)")
    p.add_argument("--example-db", metavar="DIR|redis://HOST:PORT/DB",
                   help="Hypothesis' example database: failures found are saved there and "
                        "replayed first by every later run (default: none, nothing written)")
    p.add_argument("--baseline", metavar="REPORT_JSON",
                   help="gate on a saved report.json of the same contract: after the run, "
                        "print each clause that regressed, still fails (known), or improved; "
                        "the exit code is then the gate's (below). Read and checked before "
                        "the run starts")
    p.add_argument("--summary", metavar="FILE",
                   help="append a short Markdown summary to FILE (created if missing), e.g. "
                        "$GITHUB_STEP_SUMMARY: counts, regressions, each failure's first "
                        "steps, the replay command")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=cmd_check)

    campaign.add_parser(sub)
    p = sub.add_parser(
        "clean", help="list (and with --drop, drop) the fp_ tables killed runs left in a "
        "database; never those of a live run")
    p.add_argument("url", help="the database, as given to --adapter (postgresql://..., "
                   "sqlite:///PATH)")
    p.add_argument("--older-than", metavar="AGE", help="only namespaces opened at least AGE "
                   "ago (90s, 30m, 2h, 7d); one with no registry row counts as old")
    p.add_argument("--drop", action="store_true", help="drop them (default: only list)")
    p.set_defaults(run=cmd_clean)

    p = sub.add_parser("diff", help="compare two saved report.json files clause by clause: "
                       "regressions, known failures, improvements, new and removed clauses",
                       epilog="exit codes: 1 a clause regressed, 0 otherwise, 2 a file that "
                              "is not a report or two reports that do not compare (another "
                              "contract, another catalogue MAJOR version, none at all)")
    p.add_argument("old", metavar="OLD", help="the baseline's report.json")
    p.add_argument("new", metavar="NEW", help="the report.json to gate")
    p.set_defaults(run=gate.cmd_diff)

    p = sub.add_parser("coverage", help="which situations of each clause a profile reaches, "
                       "over several seeds")
    p.add_argument("contract")
    p.add_argument("--adapter", default="memory",
                   help="as for check (default memory: the fastest)")
    p.add_argument("--profile", default="standard", choices=("quick", "standard", "thorough"))
    p.add_argument("--seeds", type=int, default=3, metavar="N", help="seeds to run (default 3)")
    p.add_argument("--seed", type=int, default=1, help="the first seed (default 1)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--all", action="store_true",
                   help="list every situation, not only those some seed missed")
    p.add_argument("--json", metavar="FILE", help="also save the table as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=cmd_coverage)

    p = sub.add_parser("list", help="contracts, clauses, capabilities, options, adapters")
    p.add_argument("contract", nargs="?")
    p.set_defaults(run=cmd_list)

    p = sub.add_parser("explain", help="a clause's or a contract's rules, situations, checks, "
                       "options and mutants",
                       description="Explain a clause (ADK-LEASE-001) or a whole contract "
                       "(snodo-tasks): the rule, what a store needs for it to apply, the "
                       "situations a pass must reach, the checks that put it to the test, the "
                       "options that change it and the mutants that prove the kit catches it.")
    p.add_argument("target", help="a clause id or a contract name")
    p.set_defaults(run=cmd_explain)

    p = sub.add_parser("mutants", help="run the kit against a contract's mutants",
                       description="Run the kit against each mutant of a contract: a mutant is "
                       "a store with one known, real-world bug, each caught by the clause it "
                       "breaks. Exits 0 when every mutant is caught by its expected clause.")
    p.add_argument("contract")
    p.add_argument("--adapter", default="memory", choices=("memory", "sqlite", "exec"),
                   help="the correct store each mutant is built on (exec: the memory "
                        "store served over fencepost-wire/1 by fencepost serve --mutant)")
    p.add_argument("--profile", default="quick", choices=("quick", "standard", "thorough"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", action="append", metavar="NAME", help="run just these mutants")
    p.add_argument("--report", metavar="DIR", help="write DIR/mutants.json and mutants.html")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=cmd_mutants)

    p = sub.add_parser("analyze", help="re-check a saved history (JSON lines) for "
                       "linearizability against the contract's model")
    p.add_argument("history", help="a history file written by a concurrent run")
    p.add_argument("--budget", type=float, default=60.0, metavar="SECONDS",
                   help="search time per partition before the verdict is unknown (default 60, "
                        "as in a concurrent run)")
    p.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="a contract option the run used (default: those saved in the history)")
    p.add_argument("--capability", action="append", metavar="NAME",
                   help="a capability the store declared (added to those saved in the history)")
    p.set_defaults(run=cmd_analyze)

    p = sub.add_parser("serve", help="serve a Python store over the fencepost-wire/1 protocol "
                       "on stdin/stdout (the reference adapter; see docs/protocol.md)")
    p.add_argument("contract")
    p.add_argument("--adapter", default="memory",
                   help="the store to serve, as for check (default memory)")
    p.add_argument("--mutant", metavar="NAME",
                   help="serve this mutant instead, built on --adapter (memory or sqlite)")
    p.set_defaults(run=cmd_serve)

    p = sub.add_parser("wire-check", help="probe an exec adapter with malformed, unexpected "
                       "and boundary requests: its protocol mistakes before its contract ones")
    p.add_argument("contract")
    p.add_argument("command", nargs="+",
                   help="the adapter's command line, as after exec: (one quoted string, or its "
                        "words; put -- before words that start with -)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    p.set_defaults(run=cmd_wire_check)

    p = sub.add_parser("protocol", help="what an adapter of a contract must understand over "
                       "fencepost-wire/1: operations, value classes, error codes, capabilities")
    p.add_argument("contract")
    p.set_defaults(run=cmd_protocol)

    p = sub.add_parser("bench", help="measure the kit on this machine: state-machine steps/s, "
                       "kit overhead, linearizability checker, detection of mutants")
    p.add_argument("--contract", action="append", metavar="NAME",
                   help="only this contract (repeatable; default: all)")
    p.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test",
                   metavar="URL", help="the PostgreSQL to measure on (shown as unreachable "
                   "when it cannot be connected to)")
    p.add_argument("--quick", action="store_true", help="smaller sizes, fewer seeds")
    p.add_argument("--seeds", type=int, metavar="N",
                   help="seeds per mutant (default 5; --quick 2)")
    p.add_argument("--json", metavar="FILE", help="also save the figures as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fencepost`` command. Run as the command (``argv`` None), ``check``,
    ``coverage``, ``mutants`` and ``campaign`` run in a supervised child (see
    :mod:`fencepost.supervisor`); called with ``argv``, in this process."""
    from fencepost.adapters.processes import become_subreaper

    from .supervisor import (
        STATUS,
        SUPERVISE_ENV,
        exit_despite_threads,
        run_child,
        sweep_at_exit,
        wants_supervision,
    )

    child = os.environ.get(SUPERVISE_ENV) == "child"
    if child:
        become_subreaper()  # orphans of the run's tree come here, to be ended at its end
    if child and os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())  # last: adapter modules here are found, never shadowing
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(words)
    if argv is None and wants_supervision(words):
        return guarded(args, lambda: run_child(words, lambda how, phase: abrupt(
            args, how, phase)))
    restore = signals_raise()
    try:
        code = guarded(args, lambda: int(args.run(args)))
    finally:
        restore()
        stop_all()
    if child:
        sweep_at_exit()
    STATUS.say("done", str(code))
    if argv is None:
        exit_despite_threads(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
