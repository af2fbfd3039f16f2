"""The CLI's baseline gate: ``check --baseline`` and ``--summary``, and ``fencepost diff``
(the comparison itself is :mod:`fencepost.reports.baseline`)."""

from __future__ import annotations

import argparse
from typing import Any

from . import arguments


def read_baseline(path: str, contract_name: str) -> Any:
    """The ``--baseline`` report, read and found comparable before the run starts."""
    from fencepost.registry import contract_named
    from fencepost.reports.baseline import comparable, load_baseline

    report = load_baseline(path, "--baseline")
    comparable(report, contract_name, contract_named(contract_name).catalogue_version,
               what=f"--baseline {path}")
    return report


def finish(args: argparse.Namespace, report: Any, baseline: Any) -> int:
    """After the run: the comparison with the baseline and the summary file, if asked for;
    the exit code (with a baseline, the gate's: see ``fencepost check --help``)."""
    from fencepost.reports.baseline import compare, gate_exit_code, render
    from fencepost.reports.summary import to_summary, write_summary

    comparison = compare(baseline, report) if baseline is not None else None
    if args.summary:
        try:
            write_summary(args.summary, to_summary(report, comparison))
        except OSError as e:  # a full disk: said, the verdict's exit code stands
            arguments.not_written(args.summary, "--summary", e)
        else:
            print(f"wrote {args.summary}")
    if comparison is None:
        return int(report.exit_code)
    print()
    print(render(comparison))
    return gate_exit_code(report, comparison)


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare two saved reports: exit 1 on a regression, 0 otherwise, 2 when refused."""
    from fencepost.reports.baseline import comparable, compare, load_baseline, render

    old = load_baseline(args.old, "baseline")
    new = load_baseline(args.new, "report")
    comparable(old, new.contract, new.catalogue_version, what=f"baseline {args.old}",
               now=f"report {args.new}")
    comparison = compare(old, new)
    print(render(comparison))
    return comparison.exit_code
