"""Render a :class:`RunReport`: terminal text here; JSON, Markdown, HTML and JUnit XML in their
own modules, re-exported; :func:`write_reports` writes them all.

Every string a renderer emits passes through :mod:`fencepost.reports.text` (secrets masked,
invisible characters escaped, long strings cut), so what a store says cannot break a report,
move the terminal's cursor, or leak the password of a database URL.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable

import attrs
from tabulate import tabulate

from fencepost.scenarios.injection import FAULT_INJECTION

from .html import mutants_html, to_html
from .json_report import dumps, load_report, report_from_json, to_json
from .junit import junit_suite, to_junit, write_junit
from .markdown import to_markdown
from .text import clean, clean_block, clean_line, mask_secrets
from .verdict import FAIL, PASS, UNKNOWN, UNSUPPORTED, RunReport
from .views import (
    MARK,
    evidence_of,
    examples_words,
    failure_steps,
    mark,
    reason_of,
    render_trace,
    replay_code,
)

REASON_WIDTH = 90
"""Characters of a reason in the terminal's summary table (its first line only)."""


def summary_table(report: RunReport, *, all_rows: bool = True) -> str:
    """One line per clause: id, verdict, evidence, and the title or the reason's first line."""
    rows = [
        (clean_line(v.clause.id, 40), mark(v), evidence_of(v),
         clean_line(reason_of(v) or v.clause.title, REASON_WIDTH))
        for v in report.verdicts
        if all_rows or v.status != PASS or v.weak
    ]
    return str(tabulate(rows, headers=("clause", "verdict", "evidence", "title / reason"),
                        disable_numparse=True))


def undeclared(report: RunReport) -> dict[str, list[str]]:
    """Capability -> the clauses left unsupported because the store does not declare it (by
    name, each with its clauses in the catalogue's order). Fault injection is found, not
    declared (a store exposing its SQLAlchemy engine): a store without it misses no
    declaration, so it is left out."""
    out: dict[str, list[str]] = {}
    for v in report.verdicts:
        if v.status == UNSUPPORTED:
            for cap in sorted(v.clause.requires - report.capabilities - {FAULT_INJECTION}):
                out.setdefault(cap, []).append(v.clause.id)
    return dict(sorted(out.items()))


def not_declared(report: RunReport) -> str:
    """The warning of a run whose store left clauses unsupported by not declaring a capability
    they need (a store that forgot ``concurrency`` is otherwise certified in silence), or ""."""
    missing = undeclared(report)
    if not missing:
        return ""
    clauses = {c for ids in missing.values() for c in ids}
    each = "; ".join(f"{clean_line(cap, 80)} ({', '.join(ids)})" for cap, ids in missing.items())
    return (f"{len(clauses)} clause{'s' if len(clauses) != 1 else ''} not put to the test: the "
            f"store does not declare {each}; declare what it has in store.capabilities, or "
            f"give --require CAP to make a missing capability an error")


def headline(report: RunReport) -> str:
    """The run in one line: the counts of each verdict and what was run (and which
    capabilities the store did not declare, when clauses were unsupported for want of them)."""
    s = report.summary()
    weak = len(report.weak())
    passed = f"{s[PASS]} pass ({weak} weak)" if weak else f"{s[PASS]} pass"
    missing = undeclared(report)
    lacking = (f" (the store does not declare {', '.join(clean_line(c, 80) for c in missing)})"
               if missing else "")
    return (
        f"{clean_line(report.contract, 200)} on {clean_line(report.adapter, 200)}: {passed}, "
        f"{s[FAIL]} fail, {s[UNKNOWN]} unknown, {s[UNSUPPORTED]} unsupported{lacking} of "
        f"{len(report.verdicts)} clauses ({report.steps:,} steps, {examples_words(report)}, "
        f"{report.timings.get('total', 0.0):.1f} s, profile {clean_line(report.profile, 200)}, "
        f"seed {report.seed})"
    )


def render_failures(report: RunReport) -> str:
    """Every failed or unknown clause, with its numbered counterexample and the replay line."""
    parts = [headline(report)]
    causes: dict[str, int] = {}  # what the store said when it was unavailable -> clauses
    for v in report.verdicts:
        if v.status == FAIL and v.failure is not None:
            parts.append(
                f"\n{clean_line(v.clause.id)} FAILED ({clean_line(v.clause.title)}) in "
                f"{clean_line(v.failure.check)}\n  rule: {clean(v.clause.text)}\n"
                f"  {clean(v.failure.message)}\n{failure_steps(v.failure)}"
            )
            code = replay_code(v, report)
            if code:
                parts.append("  replay as code:\n" + _indent(code, "    "))
        elif v.status == UNKNOWN:
            reason, cause = _once(v.reason, causes)
            parts.append(f"\n{clean_line(v.clause.id)} unknown: {clean_block(reason)}")
            if cause is not None:
                causes[cause] = causes.get(cause, 0) + 1
    for cause, n in causes.items():
        parts.append(f"\nthe store was unavailable for {n} clause{'s' if n != 1 else ''}: "
                     f"{clean_block(cause)}")
    if report.stopped:
        parts.append(f"\nthe run stopped early: {clean_block(report.stopped)}")
    for said, where in _grouped(report.faults).items():
        parts.append(f"\nthe adapter's fault{_where(where)}: {clean_block(said)}")
    parts.append(f"\nreplay: {clean_line(report.replay)}")
    return "\n".join(parts)


UNAVAILABLE = "store unavailable ("
"""How a check that ended on an unavailable store says so (``create: store unavailable (...)``)."""


def _once(reason: str, seen: dict[str, int]) -> tuple[str, str | None]:
    """``reason`` with what the unavailable store said cut to "as above" when an earlier clause
    said it already, and that text (None when the reason is no unavailable store)."""
    start = reason.find(UNAVAILABLE)
    if start < 0:
        return reason, None
    begin = start + len(UNAVAILABLE)
    depth, end = 1, begin
    while end < len(reason) and depth:
        depth += {"(": 1, ")": -1}.get(reason[end], 0)
        end += 1
    cause = reason[begin:end - 1] if depth == 0 else reason[begin:]
    if cause not in seen:
        return reason, cause
    return f"{reason[:begin]}as above{reason[end - 1:] if depth == 0 else ')'}", cause


def _grouped(faults: Iterable[str]) -> dict[str, list[str]]:
    """The adapter's faults by what they say, each with the namespaces it was said in (a fault
    of one namespace reads ``NAMESPACE: what``; a namespace has no space): the same failing
    ``discard`` of every namespace of a run is one line."""
    out: dict[str, list[str]] = {}
    for fault in faults:
        where, sep, said = fault.partition(": ")
        if not sep or " " in where:
            where, said = "", fault
        out.setdefault(said, []).append(where)
    return out


def _where(namespaces: list[str]) -> str:
    """Where a fault was said: `` in NS``, `` in N namespaces (a, b, c and 4 more)``, ``(N
    times)``, or nothing."""
    named = [n for n in namespaces if n]
    if not named:
        return f" ({len(namespaces)} times)" if len(namespaces) > 1 else ""
    if len(named) == 1:
        return f" in {clean_line(named[0])}"
    shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
    return f" in {len(named)} namespaces ({clean_line(shown)})"


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


REPORT_FILES = ("report.json", "report.md", "report.html", "junit.xml", "history.jsonl")
"""The files :func:`write_reports` writes (history.jsonl after a concurrent run only)."""


class ReportsNotWritten(OSError):
    """Some report files could not be written (a full disk, a directory that vanished): each
    file is whole or absent; ``written`` are the paths that were written."""

    def __init__(self, message: str, written: list[str]) -> None:
        super().__init__(message)
        self.written = written


def write_whole(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: to a hidden scratch name beside it, then
    renamed over it (a reader, a later run or a run stopped halfway never sees a part)."""
    directory, name = os.path.split(path)
    scratch = os.path.join(directory, f".{name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(scratch, "xb") as f:  # the umask's mode, unlike mkstemp
            f.write(data)
        os.replace(scratch, path)
    except BaseException:
        try:
            os.unlink(scratch)
        except OSError:
            pass
        raise


def write_reports(report: RunReport, directory: str) -> list[str]:
    """Write report.json, report.md, report.html and junit.xml into ``directory`` (created if
    missing), and history.jsonl when the run was concurrent (``fencepost analyze`` re-checks
    it).

    Each file is whole or absent: written under a temporary name and renamed. The kit's own
    file names left in ``directory`` by an earlier run are removed first, so the directory
    never mixes two runs (another run's history.jsonl beside this run's report). A file that
    cannot be written (a full disk) does not stop the others: :class:`ReportsNotWritten` then
    says which were not written, and why; so it does, with none written, when ``directory``
    cannot be made or cleared."""
    try:
        os.makedirs(directory, exist_ok=True)
        for name in REPORT_FILES:
            try:
                os.unlink(os.path.join(directory, name))
            except FileNotFoundError:
                pass
    except OSError as e:  # a directory that cannot be made (under /proc, say) or emptied
        raise ReportsNotWritten(f"no report written in {directory}: {e.strerror or e}",
                                []) from None
    # Cleaned text encodes; backslashreplace is the last guard that a report is written.
    files: list[tuple[str, Callable[[], bytes]]] = [
        ("report.json", lambda: dumps(report).encode("utf-8", "backslashreplace")),
        ("report.md", lambda: to_markdown(report).encode("utf-8", "backslashreplace")),
        ("report.html", lambda: to_html(report).encode("utf-8", "backslashreplace")),
        ("junit.xml", lambda: to_junit(report).encode("utf-8")),
    ]
    history = report.history
    if history is not None:  # its header names the run, as the report does
        history = attrs.evolve(history, run={
            "adapter": mask_secrets(report.adapter), "seed": report.seed,
            "profile": report.profile, "kit_version": report.kit_version,
            "replay": mask_secrets(report.replay)})
        files.append(("history.jsonl", lambda: history.dumps().encode("utf-8")))
    written: list[str] = []
    failed: list[tuple[str, OSError]] = []
    for name, data in files:
        path = os.path.join(directory, name)
        try:
            write_whole(path, data())
        except OSError as e:
            failed.append((name, e))
        else:
            written.append(path)
    if failed:
        names = ", ".join(name for name, _ in failed)
        why = failed[0][1].strerror or str(failed[0][1])
        raise ReportsNotWritten(f"{names} not written in {directory}: {why}", written)
    return written


__all__ = [
    "MARK", "clean", "headline", "junit_suite", "load_report", "mark", "mask_secrets",
    "REPORT_FILES", "ReportsNotWritten", "mutants_html", "to_html", "write_whole",
    "reason_of", "render_failures", "render_trace", "replay_code", "report_from_json",
    "summary_table", "to_json", "to_junit", "to_markdown", "write_junit", "write_reports",
]
