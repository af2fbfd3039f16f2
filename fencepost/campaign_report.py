"""A campaign's seeds gathered into one report: ``campaign.json``, ``campaign.md`` and the
terminal's summary.

For each clause that failed in some seed: the seeds that found it, and the smallest
counterexample among them (fewest steps; of equal ones, the lowest seed's) with the command
that replays it. For each clause some seed left unknown: the seeds and why. Situation coverage
summed over the seeds: per situation of each clause, how many seeds reached it and how often
in all. And the counts: seeds planned, done, lost (their worker died), errors, not run (the
campaign was interrupted).

Every string from a store or a user passes through :mod:`fencepost.reports.text` (secrets
masked, invisible characters escaped, long strings cut), as in the seeds' own reports.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from fencepost.reports.json_report import to_json as report_json
from fencepost.reports.markdown import md_cell, md_code, md_fenced
from fencepost.reports.text import clean, clean_block, clean_line, clean_value
from fencepost.reports.verdict import UNKNOWN, UNSUPPORTED, RunReport
from fencepost.reports.views import failure_steps

from . import __version__


@attrs.frozen
class FoundClause:
    """A clause that failed in some seed, with the smallest counterexample found."""

    clause: str
    title: str
    seeds: tuple[int, ...]
    seed: int
    """The seed of the smallest counterexample."""
    steps: int
    minimal: bool
    check: str
    message: str
    rendered: str
    replay: str
    counterexample: Mapping[str, Any]
    """The smallest counterexample as its seed's ``report.json`` holds it."""


@attrs.frozen
class UnknownClause:
    """A clause some seed could not judge, with each seed's reason."""

    clause: str
    title: str
    reasons: Mapping[int, str]


@attrs.frozen
class SituationTotal:
    """One situation of one clause over the campaign's seeds."""

    clause: str
    situation: str
    seeds_reached: int
    seeds: int
    reached: int


@attrs.frozen
class CampaignSummary:
    """What a campaign found, over every seed saved in its directory."""

    settings: Mapping[str, Any]
    planned: tuple[int, ...]
    done: tuple[int, ...]
    codes: Mapping[int, int]
    """Each done seed's exit code (as ``fencepost check`` would give it)."""
    lost: Mapping[int, str]
    errors: Mapping[int, str]
    failing: tuple[FoundClause, ...]
    unknown: tuple[UnknownClause, ...]
    situations: tuple[SituationTotal, ...]
    seconds: float
    ran: int
    """Seeds run by this invocation (the others were saved by an earlier one)."""
    example_db: str | None
    complete: bool
    workers: Mapping[int, str] = attrs.field(factory=dict)
    """Where each seed run by this invocation ran: a local worker's pid, a Dask worker's
    address."""

    @property
    def not_run(self) -> tuple[int, ...]:
        """Planned seeds with no outcome (the campaign was stopped before them)."""
        accounted = set(self.done) | set(self.lost) | set(self.errors)
        return tuple(s for s in self.planned if s not in accounted)

    @property
    def seeds_per_minute(self) -> float | None:
        """Seeds this invocation ran, per minute of its wall time."""
        return self.ran * 60 / self.seconds if self.ran and self.seconds > 0 else None

    @property
    def exit_code(self) -> int:
        """1 a clause failed in some seed; else 4 a seed ended in an internal error; else 2
        an adapter's close or discard failed; else 3 a verdict is unknown or a seed was lost
        or not run; else 0."""
        codes = set(self.codes.values())
        if 1 in codes:
            return 1
        if self.errors:
            return 4
        if 2 in codes:
            return 2
        if 3 in codes or self.lost or self.not_run:
            return 3
        return 0


def summarize(settings: Mapping[str, Any], planned: Sequence[int],
              reports: Mapping[int, RunReport], lost: Mapping[int, str],
              errors: Mapping[int, str], *, seconds: float, ran: int,
              example_db: str | None, complete: bool,
              workers: Mapping[int, str] | None = None) -> CampaignSummary:
    """Gather the saved ``reports`` (seed -> report) of a campaign planned over ``planned``."""
    done = tuple(sorted(reports))
    return CampaignSummary(
        settings=dict(settings), planned=tuple(planned), done=done,
        codes={seed: reports[seed].exit_code for seed in done},
        lost=dict(sorted(lost.items())), errors=dict(sorted(errors.items())),
        failing=_failing(reports, example_db), unknown=_unknown(reports),
        situations=_situations(reports), seconds=seconds, ran=ran, example_db=example_db,
        complete=complete, workers=dict(sorted((workers or {}).items())))


def _failing(reports: Mapping[int, RunReport], example_db: str | None
             ) -> tuple[FoundClause, ...]:
    found: dict[str, list[tuple[int, int]]] = {}  # clause -> [(steps, seed)]
    for seed in sorted(reports):
        for v in reports[seed].failed():
            steps = len(v.failure.trace) if v.failure is not None else 0
            found.setdefault(v.clause.id, []).append((steps, seed))
    out = []
    for clause, seen in found.items():
        steps, seed = min(seen)
        report = reports[seed]
        [verdict] = [v for v in report.verdicts if v.clause.id == clause]
        assert verdict.failure is not None
        [data] = [c for c in report_json(report)["clauses"] if c["id"] == clause]
        out.append(FoundClause(
            clause, verdict.clause.title, tuple(sorted(s for _, s in seen)), seed, steps,
            verdict.failure.minimal, verdict.failure.check, verdict.failure.message,
            failure_steps(verdict.failure), replay_command(report, example_db),
            data["counterexample"]))
    return tuple(sorted(out, key=lambda f: f.clause))


def replay_command(report: RunReport, example_db: str | None) -> str:
    """The command that replays ``report``'s seed: its own, with the campaign's example
    database, so that a failure the seed replayed from it (found by another seed or an
    earlier campaign) is replayed again."""
    if example_db is None:
        return report.replay
    return f"{report.replay} {shlex.join(['--example-db', example_db])}"


def _unknown(reports: Mapping[int, RunReport]) -> tuple[UnknownClause, ...]:
    found: dict[str, tuple[str, dict[int, str]]] = {}
    for seed in sorted(reports):
        for v in reports[seed].verdicts:
            if v.status == UNKNOWN:
                found.setdefault(v.clause.id, (v.clause.title, {}))[1][seed] = v.reason
    return tuple(UnknownClause(clause, title, reasons)
                 for clause, (title, reasons) in sorted(found.items()))


def _situations(reports: Mapping[int, RunReport]) -> tuple[SituationTotal, ...]:
    totals: dict[tuple[str, str], list[int]] = {}  # -> [seeds it applied to, reached, times]
    for report in reports.values():
        for v in report.verdicts:
            if v.status == UNSUPPORTED:  # not put to the test by design: nothing to reach
                continue
            for situation, count in v.situations.items():
                row = totals.setdefault((v.clause.id, situation), [0, 0, 0])
                row[0] += 1
                row[1] += count > 0
                row[2] += count
    return tuple(SituationTotal(clause, situation, reached, seeds, times)
                 for (clause, situation), (seeds, reached, times) in totals.items())


# --- campaign.json ----------------------------------------------------------------------------


def to_json(summary: CampaignSummary) -> dict[str, Any]:
    """``campaign.json``: the summary as JSON-ready data, every string cleaned."""
    return {
        "kit_version": __version__,
        "settings": _clean(summary.settings),
        "example_db": None if summary.example_db is None else clean_value(summary.example_db),
        "complete": summary.complete,
        "exit_code": summary.exit_code,
        "counts": _counts(summary),
        "seconds": round(summary.seconds, 3),
        "seeds_per_minute": _rounded(summary.seeds_per_minute),
        "seeds": {
            "planned": list(summary.planned),
            "done": list(summary.done),
            "failed": [s for s in summary.done if summary.codes[s] == 1],
            "lost": {str(s): clean_value(why) for s, why in summary.lost.items()},
            "errors": {str(s): clean_value(why) for s, why in summary.errors.items()},
            "not_run": list(summary.not_run),
            "workers": {str(s): clean_value(w) for s, w in summary.workers.items()},
        },
        "failing": [
            {"clause": clean_value(f.clause), "title": clean_value(f.title),
             "seeds": list(f.seeds), "smallest": {
                 "seed": f.seed, "steps": f.steps, "minimal": f.minimal,
                 "check": clean_value(f.check), "message": clean_value(f.message),
                 "replay": clean_value(f.replay), "counterexample": f.counterexample}}
            for f in summary.failing
        ],
        "unknown": [
            {"clause": clean_value(u.clause), "title": clean_value(u.title),
             "seeds": list(u.reasons),
             "reasons": {str(s): clean_value(why) for s, why in u.reasons.items()}}
            for u in summary.unknown
        ],
        "situations": [attrs.asdict(s) for s in summary.situations],
    }


def _counts(summary: CampaignSummary) -> dict[str, int]:
    reached = [s for s in summary.situations if s.seeds_reached]
    return {"planned": len(summary.planned), "done": len(summary.done), "ran": summary.ran,
            "failed_seeds": sum(1 for c in summary.codes.values() if c == 1),
            "lost": len(summary.lost), "errors": len(summary.errors),
            "not_run": len(summary.not_run), "failing_clauses": len(summary.failing),
            "unknown_clauses": len(summary.unknown), "situations": len(summary.situations),
            "situations_reached": len(reached)}


def _clean(data: Any) -> Any:
    if isinstance(data, str):
        return clean_value(data)
    if isinstance(data, Mapping):
        return {clean_value(str(k)): _clean(v) for k, v in data.items()}
    return data


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


# --- the terminal and campaign.md -------------------------------------------------------------


def seed_ranges(seeds: Iterable[int]) -> str:
    """Seeds in short: ``1-4, 7, 9-10``."""
    ordered = sorted(set(seeds))
    runs: list[list[int]] = []
    for seed in ordered:
        if runs and seed == runs[-1][1] + 1:
            runs[-1][1] = seed
        else:
            runs.append([seed, seed])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or "none"


def headline(summary: CampaignSummary) -> str:
    """The campaign in one line."""
    s = summary.settings
    rate = summary.seeds_per_minute
    before = len(summary.done) - (summary.ran - len(summary.lost) - len(summary.errors))
    extra = [f"{len(summary.lost)} lost" if summary.lost else "",
             f"{len(summary.errors)} errors" if summary.errors else "",
             f"{len(summary.not_run)} not run" if summary.not_run else ""]
    said = "".join(f", {e}" for e in extra if e)
    return (f"campaign of {clean_line(str(s.get('contract')), 200)} on "
            f"{clean_line(str(s.get('adapter')), 200)}, profile {s.get('profile')}: "
            f"{len(summary.done)} of {len(summary.planned)} seeds done ({summary.ran} run now, "
            f"{before} saved before){said}; "
            f"{_count(sum(1 for c in summary.codes.values() if c == 1), 'seed')} failed a clause, "
            f"{_count(len(summary.failing), 'clause')} failed, {len(summary.unknown)} unknown "
            f"({summary.seconds:.1f} s" + (f", {rate:.1f} seeds/min)" if rate else ")"))


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def render(summary: CampaignSummary) -> str:
    """The terminal's summary: the headline, the failing and unknown clauses, and each
    smallest counterexample with its replay command."""
    parts = [headline(summary)]
    if summary.failing:
        rows = [f"  {clean_line(f.clause, 40)}  seeds {seed_ranges(f.seeds)}; smallest: seed "
                f"{f.seed}, {f.steps} steps{'' if f.minimal else ' (not minimal)'}"
                for f in summary.failing]
        parts.append("failing clauses:\n" + "\n".join(rows))
    for u in summary.unknown:
        first = next(iter(u.reasons))
        parts.append(f"{clean_line(u.clause, 40)} unknown in seeds {seed_ranges(u.reasons)}: "
                     f"{clean_line(u.reasons[first], 200)}")
    for seed, why in {**summary.lost, **summary.errors}.items():
        parts.append(f"seed {seed}: {clean_line(why, 300)}")
    for f in summary.failing:
        parts.append(f"{clean_line(f.clause)} FAILED ({clean_line(f.title)}) in "
                     f"{clean_line(f.check)}, seed {f.seed} (smallest of {len(f.seeds)})\n"
                     f"  {clean(f.message)}\n{f.rendered}\nreplay: {clean_line(f.replay)}")
    parts.append(_coverage_line(summary))
    return "\n\n".join(parts)


def _coverage_line(summary: CampaignSummary) -> str:
    never = [s for s in summary.situations if not s.seeds_reached]
    line = (f"situations: {len(summary.situations) - len(never)} of "
            f"{len(summary.situations)} reached by some seed")
    if never:
        shown = "; ".join(f"{s.clause} {s.situation}" for s in never[:5])
        line += f"; never: {clean_line(shown, 400)}" + (" ..." if len(never) > 5 else "")
    return line


def to_markdown(summary: CampaignSummary) -> str:
    """``campaign.md``: the summary for people (GitHub-flavoured Markdown)."""
    from tabulate import tabulate

    def table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
        return str(tabulate(rows, headers=list(headers), tablefmt="github",
                            disable_numparse=True))

    s = summary.settings
    options = ", ".join(f"{k}={v}" for k, v in sorted(dict(s.get("options") or {}).items()))
    lines = [
        f"# Campaign: {md_cell(str(s.get('contract')), 200)} on "
        f"{md_cell(str(s.get('adapter')), 200)}", "",
        md_cell(headline(summary), 2000), "",
        table([("profile", md_cell(str(s.get("profile")))), ("options", md_cell(options or
                                                                                "none")),
               ("seeds planned", md_cell(seed_ranges(summary.planned))),
               ("seeds done", md_cell(seed_ranges(summary.done))),
               ("seeds lost", md_cell(seed_ranges(summary.lost))),
               ("seeds with errors", md_cell(seed_ranges(summary.errors))),
               ("seeds not run", md_cell(seed_ranges(summary.not_run))),
               ("example database", md_cell(summary.example_db or "none", 500)),
               ("kit version", md_cell(__version__))], ("field", "value")),
        "", "## Failing clauses", "",
    ]
    if summary.failing:
        lines.append(table([(md_cell(f.clause), md_cell(f.title), md_cell(seed_ranges(f.seeds)),
                             f.seed, f.steps, "yes" if f.minimal else "no")
                            for f in summary.failing],
                           ("clause", "title", "seeds", "smallest at seed", "steps",
                            "minimal")))
    else:
        lines.append("None.")
    for f in summary.failing:
        lines += ["", f"### {md_cell(f.clause)}: {md_cell(f.title, 200)}", "",
                  f"Smallest counterexample: seed {f.seed}, {f.steps} steps, in "
                  f"{md_code(clean_line(f.check))}.", "",
                  md_fenced(clean_block(f"{f.message}\n{f.rendered}")), "",
                  f"Replay: {md_code(clean_line(f.replay))}"]
    lines += ["", "## Unknown clauses", ""]
    lines.append(table([(md_cell(u.clause), md_cell(seed_ranges(u.reasons)),
                         md_cell(next(iter(u.reasons.values()))))
                        for u in summary.unknown], ("clause", "seeds", "reason (first seed)"))
                 if summary.unknown else "None.")
    lines += ["", "## Situation coverage", "", md_cell(_coverage_line(summary), 2000), ""]
    partly = [x for x in summary.situations if x.seeds_reached < x.seeds]
    if partly:
        lines.append(table([(md_cell(x.clause), md_cell(x.situation),
                             f"{x.seeds_reached}/{x.seeds}", x.reached) for x in partly],
                           ("clause", "situation missed by some seed", "seeds", "times")))
    return "\n".join(lines) + "\n"
