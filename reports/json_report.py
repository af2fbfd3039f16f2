"""``report.json``: the report as data (:func:`to_json`) and back (:func:`load_report`).

Every string that came from the adapter or the user is cleaned on the way out
(:func:`~fencepost.reports.text.clean_value`: secrets masked, lone surrogates escaped, long
strings cut; control characters stay, as JSON escapes), so the file is valid UTF-8 JSON
whatever the store said. The display texts ``rendered`` and ``code`` are cleaned as text
(invisible characters escaped), like the Markdown report. A loaded report holds the cleaned
strings: masked passwords stay masked, cut strings stay cut.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fencepost.model.answers import Answers
from fencepost.scenarios.evidence import Failure
from fencepost.scenarios.tour_coverage import TourCoverage
from fencepost.scenarios.trace import TraceStep
from fencepost.spec.clauses import Clause
from fencepost.spec.ops import op_from_json
from fencepost.spec.outcome import Outcome, agrees, outcome_from_json

from .text import LIMIT, clean_data, clean_value
from .verdict import PASS, ClauseVerdict, RunReport, Status
from .views import failure_steps, reason_of, replay_code

STATUSES = tuple(Status)

REPORT_CHARS = 64 << 20
"""The most characters :func:`load_report` reads: a report is far smaller (each text in it is
cut at a limit); a file that goes on (a device, a log named by mistake) is refused, not read
until memory runs out."""


def to_json(report: RunReport) -> dict[str, Any]:
    """The report as JSON-ready data (the schema of ``report.json``), every string cleaned."""
    return {
        "contract": clean_value(report.contract),
        "catalogue_version": clean_value(report.catalogue_version),
        "adapter": clean_value(report.adapter),
        "kit_version": clean_value(report.kit_version),
        "profile": clean_value(report.profile),
        "seed": report.seed,
        "options": clean_data(dict(report.options)),
        "capabilities": sorted(clean_value(str(c)) for c in report.capabilities),
        "timings": {clean_value(k): round(v, 3) if math.isfinite(v) else repr(v)
                    for k, v in report.timings.items()},
        "steps": report.steps,
        "examples": report.examples,
        "summary": report.summary(),
        "exit_code": report.exit_code,
        "reproduce": clean_value(report.replay),
        "stopped": clean_value(report.stopped),
        "faults": [clean_value(f) for f in report.faults],
        "concurrent": None if report.concurrent is None else clean_data(
            report.concurrent.to_json()),
        "tour": None if report.tour is None else clean_data(report.tour.to_json()),
        "clauses": [_clause(v, report) for v in report.verdicts],
    }


def dumps(report: RunReport) -> str:
    """The text of ``report.json``: ASCII (JSON escapes for the rest, C1 controls included, so
    printing the file cannot drive a terminal), no ``NaN``."""
    return json.dumps(to_json(report), indent=2, allow_nan=False) + "\n"


def _clause(v: ClauseVerdict, report: RunReport) -> dict[str, Any]:
    return {
        "id": clean_value(v.clause.id),
        "title": clean_value(v.clause.title),
        "text": clean_value(v.clause.text),
        "checks": [clean_value(c) for c in v.clause.checks],
        "status": v.status,
        "weak": v.weak,
        "reason": clean_value(reason_of(v)),
        "evidence": v.evidence,
        "faulted": None if v.concurrent is None else v.concurrent.faulted,
        "situations": clean_data(dict(v.situations)),
        "counterexample": _counterexample(v, report),
    }


def _counterexample(v: ClauseVerdict, report: RunReport) -> dict[str, Any] | None:
    if v.failure is None:
        return None
    trace = v.failure.trace
    differing = [
        s for s in trace
        if s.expected is not None and s.actual is not None and not agrees(s.expected, s.actual)
    ]
    last = differing[-1] if differing else (trace[-1] if trace else None)
    return {
        "check": clean_value(v.failure.check),
        "message": clean_value(v.failure.message),
        "steps": [clean_data(_step_json(s)) for s in trace],
        "expected": _shown(last.expected if last else None),
        "actual": _shown(last.actual if last else None),
        "rendered": failure_steps(v.failure),
        "minimal": v.failure.minimal,
        "repeats": v.failure.repeats,
        "code": replay_code(v, report),
        "reproduce": clean_value(report.replay),
    }


def _shown(outcome: Outcome | None) -> str | None:
    return None if outcome is None else clean_value(str(outcome))


def _step_json(step: TraceStep) -> dict[str, Any]:
    data = step.to_json()
    if step.bind:
        data["bind"] = step.bind  # the replay script needs it; TraceStep.to_json leaves it out
    return data


# --- back from JSON ----------------------------------------------------------------------------


def load_report(path: str | Path) -> RunReport:
    """Read a ``report.json`` written by :func:`~fencepost.reports.render.write_reports` back
    into a :class:`RunReport` (without its concurrent history, which ``history.jsonl`` holds).

    Statuses, reasons, evidence counts, situations, the header fields and each failure's
    check and message come back as written. A failure's trace is rebuilt step by step from
    ``counterexample.steps`` (ops, outcomes, binds), so rendering it or its replay script
    again gives the text the report held, except where the run's text held a lone surrogate,
    a masked secret or a string cut at the limit (the loaded step holds the cleaned text). A
    step the installed kit cannot rebuild (an operation or value class it does not know, a
    value the limit cut short) comes back as a note step holding its JSON. Clauses are
    rebuilt from the report's own words (id, title, text, checks, situations), not from the
    installed catalogue, so a report of another kit version loads as it was written; their
    ``requires`` is empty. A file that is not such a report raises ``ValueError`` naming
    the path.

    Example::

        report = load_report("out/report.json")
        report.exit_code, [v.clause.id for v in report.failed()]
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(REPORT_CHARS + 1)
        if len(text) > REPORT_CHARS:
            raise ValueError(f"{path}: not a report.json: longer than "
                             f"{REPORT_CHARS >> 20} Mi characters")
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a report.json: {e}") from None
    except RecursionError:
        raise ValueError(f"{path}: not a report.json: nested too deeply to read") from None
    try:
        return report_from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ValueError(f"{path}: not a fencepost report.json ({type(e).__name__}: {e})") \
            from None
    except RecursionError:
        raise ValueError(f"{path}: not a fencepost report.json: nested too deeply to read") \
            from None


def report_from_json(data: Mapping[str, Any]) -> RunReport:
    """The :class:`RunReport` that :func:`to_json` wrote as ``data`` (see :func:`load_report`)."""
    contract = str(data["contract"])
    concurrent = None if data.get("concurrent") is None else Answers.from_json(
        data["concurrent"])
    return RunReport(
        contract=contract,
        adapter=str(data["adapter"]),
        kit_version=str(data["kit_version"]),
        profile=str(data["profile"]),
        seed=int(data["seed"]),
        options={str(k): str(v) for k, v in dict(data["options"]).items()},
        capabilities=frozenset(str(c) for c in data["capabilities"]),
        timings={str(k): float(v) for k, v in dict(data["timings"]).items()},
        steps=int(data["steps"]),
        examples=int(data["examples"]),
        verdicts=tuple(_verdict_from_json(contract, c, concurrent) for c in data["clauses"]),
        replay=str(data["reproduce"]),
        stopped=str(data.get("stopped", "")),
        faults=tuple(str(f) for f in data.get("faults", ())),
        catalogue_version=str(data.get("catalogue_version", "")),
        concurrent=concurrent,
        tour=None if data.get("tour") is None else TourCoverage.from_json(data["tour"]),
    )


def _verdict_from_json(contract: str, data: Mapping[str, Any], concurrent: Answers | None
                       ) -> ClauseVerdict:
    status = data["status"]
    if status not in STATUSES:
        raise ValueError(f"clause {data['id']!r} has status {status!r}, not one of "
                         f"{', '.join(STATUSES)}")
    situations = {str(k): int(v) for k, v in dict(data.get("situations") or {}).items()}
    clause = Clause(str(data["id"]), str(data["title"]), str(data["text"]),
                    tuple(str(c) for c in data["checks"]), situations=tuple(situations))
    cx = data.get("counterexample")
    failure = None if cx is None else Failure(
        str(cx["check"]), str(cx["message"]),
        tuple(_step_from_json(contract, s) for s in cx["steps"]),
        minimal=bool(cx.get("minimal", True)), repeats=int(cx.get("repeats", 0)))
    # A pass's reason is always empty; what report.json shows for a weak one is derived.
    reason = "" if status == PASS else str(data["reason"])
    concurrent = concurrent if data.get("faulted") is not None else None
    return ClauseVerdict(clause, status, reason, int(data["evidence"]), failure, situations,
                         concurrent)


def _step_from_json(contract: str, data: Mapping[str, Any]) -> TraceStep:
    try:
        importlib.import_module(f"fencepost.spec.{contract.replace('-', '_')}")
        return TraceStep(
            actor=str(data["actor"]),
            at=int(data["at"]),
            op=op_from_json(contract, data["op"]) if "op" in data else None,
            note=str(data.get("note", "")),
            expected=outcome_from_json(data["expected"]) if "expected" in data else None,
            actual=outcome_from_json(data["actual"]) if "actual" in data else None,
            event=str(data.get("event", "")),
            subject=str(data.get("subject", "")),
            bind=str(data.get("bind", "")),
            blamed_on=str(data.get("blamed_on", "")),
            blamed_fields=(tuple(str(f) for f in data["blamed_fields"])
                           if isinstance(data.get("blamed_fields"), list) else None),
        )
    except (ImportError, KeyError, TypeError, ValueError, AttributeError) as e:
        text = json.dumps(dict(data), ensure_ascii=False)
        return TraceStep(actor=str(data.get("actor", "?")), at=_int(data.get("at")),
                         note=clean_value(f"(not rebuilt: {type(e).__name__}) {text}", LIMIT))


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


__all__ = ["dumps", "load_report", "report_from_json", "to_json"]
