"""The command line's inputs checked before a run starts: ``--option`` pairs against the
contract, and every output path (a report directory, a file) that must be writable at the end;
and the options that say how one run goes, which ``check`` and ``campaign`` share
(:func:`add_run_options`).

Each failure is a :class:`~fencepost.errors.ConfigurationError`: one line, exit 2.
"""

from __future__ import annotations

import argparse
import os
import uuid
from collections.abc import Sequence

from .errors import ConfigurationError


def options(pairs: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` pairs as a dict; a pair without ``=`` is a configuration error."""
    from fencepost.registry import parse_options

    return parse_options(pairs)


def contract_options(contract_name: str, pairs: Sequence[str]) -> dict[str, str]:
    """The ``--option`` pairs, validated against the contract before anything runs."""
    from fencepost.registry import validate_options

    return validate_options(contract_name, options(pairs))


def writable_parent(path: str, flag: str) -> None:
    """The nearest existing ancestor of ``path`` must be a directory this process may write."""
    ancestor = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise ConfigurationError(f"{flag} {path}: {ancestor} is a file, not a directory; "
                                 "name a path under a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ConfigurationError(f"{flag} {path}: directory {ancestor} is not writable; "
                                 "name a writable place")
    refused(ancestor, path, flag)


def refused(directory: str, path: str, flag: str) -> None:
    """Fail unless an entry can really be made in ``directory`` (an empty directory, made and
    removed at once): ``access()`` answers from the permission bits alone, and some places
    pass it and refuse every new entry (``/proc``, a read-only mount for root)."""
    probe = os.path.join(directory, f".fencepost-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        os.mkdir(probe)
    except OSError as e:
        raise ConfigurationError(f"{flag} {path}: nothing can be created in {directory} "
                                 f"({e.strerror or e}); name a writable place") from None
    try:
        os.rmdir(probe)
    except OSError:
        pass


def report_dir(path: str | None, flag: str, files: Sequence[str]) -> None:
    """Fail before the run when ``flag DIR`` could not receive ``files`` at its end."""
    if path is None:
        return
    if os.path.exists(path) and not os.path.isdir(path):
        raise ConfigurationError(f"{flag} {path} is a file; name a directory (it is created "
                                 "if missing)")
    if os.path.isdir(path):
        if not os.access(path, os.W_OK | os.X_OK):
            raise ConfigurationError(f"{flag} {path}: the directory is not writable")
        refused(path, path, flag)
        for name in files:
            target = os.path.join(path, name)
            if os.path.isdir(target) or (os.path.exists(target)
                                         and not os.access(target, os.W_OK)):
                raise ConfigurationError(f"{flag} {path}: {target} cannot be overwritten; "
                                         "remove it or name another directory")
        return
    writable_parent(path, flag)


def output_file(path: str | None, flag: str) -> None:
    """Fail before the run when ``flag FILE`` could not be written at its end."""
    if path is None:
        return
    if os.path.isdir(path):
        raise ConfigurationError(f"{flag} {path} is a directory; name a file")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise ConfigurationError(f"{flag} {path}: the file is not writable")
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ConfigurationError(f"{flag} {path}: directory {directory} does not exist; "
                                 "create it first")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ConfigurationError(f"{flag} {path}: directory {directory} is not writable")
    refused(directory, path, flag)


def save(path: str, flag: str, text: str) -> bool:
    """Write ``text`` to ``path`` (``flag FILE``, checked by :func:`output_file` before the
    run). When it cannot be written after all (a full disk, a path whose parent lets the check
    pass and refuses the file, as under ``/proc``), say so in one line and return False: what
    the run found was printed already, and the command's exit code stands."""
    try:
        with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
    except OSError as e:
        not_written(path, flag, e)
        return False
    return True


def not_written(path: str, flag: str, error: OSError) -> None:
    """Say, in one line, that ``flag path`` could not be written, and why."""
    from .ending import say

    say(f"fencepost: {flag} {path} not written: {error.strerror or error}")


def shrink_budget(text: str | None, no_shrink: bool) -> None:
    """``--shrink-budget`` must read as a budget, and not be given with ``--no-shrink``."""
    if text is None:
        return
    if no_shrink:
        raise ConfigurationError("give --shrink-budget or --no-shrink, not both")
    from fencepost.scenarios.shrinking import Shrinking

    try:
        Shrinking.parse(text)
    except ValueError as e:
        raise ConfigurationError(f"--shrink-budget: {e}") from None


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options of one run, the same words and defaults for ``check`` and ``campaign`` (a
    campaign is many checks): adapter, profile, options, concurrent run, strictness, call
    timeout, shrinking."""
    from fencepost.scenarios.guard import default_call_timeout

    p.add_argument("--adapter", default="sqlite",
                   help="memory, sqlite (default; a temporary file), sqlite:///PATH, "
                        "postgresql://..., MODULE:FACTORY, exec:COMMAND (a store in any "
                        "language speaking fencepost-wire/1, docs/protocol.md), or "
                        "mutant:NAME[@sqlite] (a mutant: every clause its bug "
                        "breaks)")
    p.add_argument("--profile", default="quick", choices=("quick", "standard", "thorough"))
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a documented doc-versus-implementation choice (fencepost list CONTRACT)")
    p.add_argument("--concurrency", type=int, metavar="N",
                   help="workers in the concurrent run (each with its own connection); 0: no "
                        "concurrent run (default: the profile's, quick 4, standard 8)")
    p.add_argument("--ops", type=int, metavar="M",
                   help="calls in the concurrent run (default: the profile's, quick 300, "
                        "standard 2000, thorough 6000; twice those for ledgence-tasks and "
                        "snodo-tasks)")
    p.add_argument("--strict", action="store_true",
                   help="a clause that passed without reaching each of its situations is "
                        "unknown (exit 3) instead of a weak pass")
    p.add_argument("--call-timeout", type=float, default=default_call_timeout(),
                   metavar="SECONDS",
                   help="how long one store call may take; a call that does not return stops "
                        "the run, the clauses at stake unknown (default %(default)g; "
                        "FENCEPOST_CALL_TIMEOUT sets it)")
    p.add_argument("--shrink-budget", metavar="SECONDS[/TOTAL]",
                   help="how long the state machine may shrink each broken clause's "
                        "counterexample, and all of them (default: the profile's, quick 3/10, "
                        "standard 20/120, thorough none); 'none' for no limit. One cut short "
                        "is still a failure, marked not minimal")
    p.add_argument("--no-shrink", action="store_true",
                   help="report each broken clause's first counterexample at once, unshrunk "
                        "(as --shrink-budget 0)")
