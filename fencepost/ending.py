"""How a ``fencepost`` command ends: every way out said in one line with a stable exit code
(a usage error, a signal, a closed stdout, a bug of the kit), the partial report of an
interrupted check, and the all-unknown report of a run whose process ended abruptly."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import threading
import traceback
from typing import Any

from .errors import ConfigurationError
from .registry import parse_options

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_UNKNOWN, EXIT_INTERNAL = 0, 1, 2, 3, 4
"""The command's exit codes (docs/reports.md, "Exit codes"); a signal ends it with 128 + its
number."""


class EndedAbruptly(Exception):
    """A process running part of the check ended without a verdict (a ``--jobs`` process
    whose store ended it): ``how`` it ended, in which ``phase``. The command then ends as when
    its supervised child does (see :func:`abrupt`)."""

    def __init__(self, how: str, phase: str) -> None:
        super().__init__(f"{how} during {phase}")
        self.how, self.phase = how, phase


def guarded(args: argparse.Namespace, run: Any) -> int:
    """``run()``, with every way it can end said in one line and a stable exit code."""
    from fencepost.scenarios.interrupt import Interrupted

    try:
        return int(run())
    except ConfigurationError as e:
        say(f"fencepost: error: {masked(str(e))}")
        return EXIT_USAGE
    except EndedAbruptly as e:
        return abrupt(args, e.how, e.phase)
    except Interrupted as e:
        report = getattr(e, "report", None)
        written = _partial_report(args, report) if report is not None else ""
        say(f"fencepost: interrupted by {e.signal_name}; the run's data was dropped{written}")
        return 128 + int(e.signum)
    except KeyboardInterrupt:
        say("fencepost: interrupted by SIGINT")
        return 128 + signal.SIGINT
    except BrokenPipeError:
        _stdout_closed()
        return 128 + signal.SIGPIPE
    except Exception:  # noqa: BLE001 - a bug in the kit itself: show it, distinct exit code
        traceback.print_exc()
        say("fencepost: internal error (a bug in fencepost; please report it)")
        return EXIT_INTERNAL


def say(line: str) -> None:
    """``line`` on stderr, flushed; nothing when stderr is closed."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _stdout_closed() -> None:
    """stdout was closed by its reader (``| head``): stop writing to it, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def masked(text: str) -> str:
    try:
        from fencepost.reports.text import mask_secrets
    except ImportError:
        return text
    return str(mask_secrets(text))


def signals_raise() -> Any:
    """SIGTERM and SIGHUP stop a run as Ctrl-C does (its data dropped, a partial report),
    raised as :class:`~fencepost.scenarios.runner.Interrupted` in the main thread."""
    from fencepost.scenarios.interrupt import Interrupted

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum: int, _frame: Any) -> None:
        raise Interrupted(signum)

    previous = {s: signal.signal(s, interrupt)
                for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}

    def restore() -> None:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return restore


def _partial_report(args: argparse.Namespace, report: Any) -> str:
    """Write the partial report of an interrupted check where ``--report`` asked."""
    directory = getattr(args, "report", None)
    if not directory or getattr(args, "command", "") != "check":
        return ""
    from fencepost.reports.render import write_reports

    try:
        paths = write_reports(report, directory)
    except OSError as e:
        return f"; the partial report could not be written: {e}"
    return f"; partial report: {', '.join(paths)}"


def abrupt(args: argparse.Namespace, how: str, phase: str) -> int:
    """The supervised child ended without a verdict: say so, write an all-unknown report."""
    reason = (f"the run ended abruptly: its process {how} during {phase!r} (a store that ends "
              "the process: os._exit, a crash in native code, the out-of-memory killer)")
    say(f"fencepost: {reason}; no verdict is final")
    if getattr(args, "command", "") == "check":
        report = _unfinished_report(args, reason)
        if report is not None:
            say(f"fencepost: {report}")
    return EXIT_UNKNOWN


def _unfinished_report(args: argparse.Namespace, reason: str) -> str | None:
    """Every clause unknown with ``reason``, written where ``--report`` asked."""
    if not args.report:
        return None
    from fencepost import __version__
    from fencepost.registry import contract_named
    from fencepost.reports.render import write_reports
    from fencepost.reports.verdict import RunReport, judge
    from fencepost.scenarios.evidence import Evidence

    contract = contract_named(args.contract)
    every = frozenset(contract.capabilities)
    verdicts = judge(contract.clauses, Evidence(stopped=reason), every, {})
    report = RunReport(
        contract=args.contract, adapter=args.adapter, kit_version=__version__,
        profile=args.profile, seed=args.seed if args.seed is not None else 0,
        options=parse_options(args.option), capabilities=frozenset(), timings={}, steps=0,
        examples=0, verdicts=tuple(verdicts), replay=shlex.join(["fencepost", *sys.argv[1:]]),
        stopped=reason)
    try:
        return "wrote " + ", ".join(write_reports(report, args.report))
    except OSError as e:
        return f"the report could not be written: {e}"
