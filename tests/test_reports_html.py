"""``report.html`` and ``mutants.html``: self-contained, the counterexample drawn as a timeline
(lanes, leases, the differing step), a non-linearizable run as intervals per process, the
store's text shown and never run; checked in a real browser (headless Chromium) from the DOM.

The screenshot of the browser test is kept under ``$FENCEPOST_ARTIFACTS`` when that is set
(``.ci/run`` sets it), with the report it shows.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import attrs
import pytest
from conftest import require_program

from fencepost.api import check
from fencepost.cli import main
from fencepost.model.history import Event
from fencepost.registry import contract_named
from fencepost.reports.html import to_html
from fencepost.reports.render import write_reports
from fencepost.scenarios import phases
from fencepost.scenarios.concurrent import ConcurrentRun, concluded
from fencepost.scenarios.harness import World
from fencepost.scenarios.runner import CLOCK_START
from fencepost.spec import adk_ledger as spec

# One worker runs this module (its module-scoped fixture is costly): see pyproject's --dist.
pytestmark = pytest.mark.xdist_group("reports_html")

PAYLOAD = ("<script>document.body.dataset.pwned='script'</script>"
           "<img src=x onerror=\"document.body.dataset.pwned='img'\">")


def _stop_at(clause: str) -> Callable[[Any], bool]:
    return lambda evidence: clause in evidence.failures


@pytest.fixture(scope="module")
def fenced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a store that skips checkpoint's token check (its first fence failure,
    a scripted scenario: c1's lease taken over by c2, then c1's checkpoint accepted)."""
    report = check("adk-ledger", "mutant:zombie_checkpoint", seed=1, concurrency=0,
                   first=contract_named("adk-ledger").clauses["ADK-FENCE-001"].checks,
                   stop_when=_stop_at("ADK-FENCE-001"))
    assert [v.clause.id for v in report.failed()] == ["ADK-FENCE-001"]
    directory = tmp_path_factory.mktemp("fenced")
    write_reports(report, str(directory))
    return directory / "report.html"


class Dom(HTMLParser):
    """The elements of a page, each as (tag, attributes, text directly inside it)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str], list[str]]] = []
        self._open: list[tuple[str, dict[str, str], list[str]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attributes: list[tuple[str, str | None]]) -> None:
        element = (tag, {k: v or "" for k, v in attributes}, [])
        self.elements.append(element)
        if tag not in {"meta", "br", "img", "input", "link", "circle", "rect", "line"}:
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        # Close up to the innermost open element of this tag; an end tag of an element not
        # open (an SVG shape, written with its end tag, or a void element) closes nothing.
        if any(e[0] == tag for e in self._open):
            while self._open.pop()[0] != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1][2].append(data)

    def find(self, tag: str, **attrs_: str) -> list[tuple[str, dict[str, str], list[str]]]:
        return [e for e in self.elements if e[0] == tag
                and all(_has(e[1], k, v) for k, v in attrs_.items())]

    def text(self) -> str:
        return "".join("".join(e[2]) for e in self.elements)


def _has(attributes: dict[str, str], key: str, value: str) -> bool:
    key = key.rstrip("_").replace("_", "-")
    if key == "class":
        return value in attributes.get("class", "").split()
    return attributes.get(key) == value


def _browser() -> str:
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return name
    return require_program("chromium", "Chromium (Debian's chromium package)")


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", "--user-data-dir=" + str(Path(args[-1][len("file://"):]).parent
                                                      / ".chromium"), *args],
        capture_output=True, text=True, timeout=120, check=True)


def test_the_browser_draws_the_lanes_and_highlights_the_differing_step(fenced: Path) -> None:
    """Headless Chromium loads the report from disk and runs its script (the page marks itself
    ready); the timeline of ADK-FENCE-001 has one lane per actor, the leases of c1 and c2,
    the clock move, and step 5 (c1's checkpoint the store accepted) highlighted with both
    answers. A screenshot is taken, and kept as a CI artifact."""
    dumped = _chromium("--dump-dom", f"file://{fenced}").stdout
    dom = Dom(dumped)
    assert dom.find("body", data_ready="1"), "the page's script did not run"
    (svg,) = dom.find("svg", class_="timeline-timeline")
    section_start = dumped.index('id="failure-ADK-FENCE-001"')
    section = Dom(dumped[section_start:dumped.index("</section>", section_start)])
    assert [e[1]["data-lane"] for e in section.find("g", class_="lane")] == ["client", "c1",
                                                                             "c2"]
    (highlighted,) = section.find("g", class_="differs")
    assert highlighted[1]["data-step"] == "5"
    callout = "".join("".join(e[2]) for e in section.find("text", class_="callout"))
    assert callout == "#5 model: error stale_owner#5 store: ok"
    leases = [e for e in section.find("g", class_="bar") if e[1]["data-kind"] == "lease"]
    assert len(leases) == 3  # c1's claim, c2's claim, and c1's checkpoint the store accepted
    assert [e[1]["data-kind"] for e in section.find("g", class_="tick")] == ["clock"]
    steps = section.find("li")
    assert [e[1].get("data-differs") for e in steps] == [None, None, None, None, "1"]
    assert svg[1]["width"].isdigit()

    shot = fenced.with_name("report.png")
    _chromium(f"--screenshot={shot}", "--window-size=1280,1600", f"file://{fenced}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a page with text and a picture, not a blank one
    keep = os.environ.get("FENCEPOST_ARTIFACTS")
    if keep:
        target = Path(keep) / "report-html"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(fenced, target / "report.html")
        shutil.copy(shot, target / "report.png")


class MarkupInMessages:
    """The correct memory store whose checkpoint raises with markup in its message."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.capabilities = getattr(store, "capabilities", frozenset())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def checkpoint(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(PAYLOAD)


def test_markup_from_the_store_is_shown_as_text_and_never_run(tmp_path: Path) -> None:
    """A store whose error message is a script and an image with an onerror handler: the
    report shows the text; in the browser neither ran (the page's own script did), and the
    adapter's name with markup is text too."""
    memory = contract_named("adk-ledger").memory_factory()
    report = check("adk-ledger", lambda env: MarkupInMessages(memory(env)), seed=1,
                   concurrency=0, stop_when=lambda evidence: bool(evidence.failures))
    assert report.failed()
    report = attrs.evolve(report, adapter="<b id=adapter-markup>mine</b>")
    page = to_html(report)
    assert PAYLOAD not in page and "<b id=adapter-markup>" not in page
    assert "&lt;script&gt;document.body.dataset.pwned" in page
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    dom = Dom(_chromium("--dump-dom", f"file://{path}").stdout)
    (body,) = dom.find("body")
    assert body[1].get("data-ready") == "1" and "data-pwned" not in body[1]
    assert len(dom.find("script")) == 1  # the page's own, nothing the store said
    assert not dom.find("img") and not dom.find("b", id="adapter-markup")
    assert "<script>document.body.dataset.pwned='script'</script>" in dom.text()
    assert "<b id=adapter-markup>mine</b>" in dom.text()


T0 = CLOCK_START
"""Store time of the scripted concurrent run's first burst, ms."""

SCRIPT = (  # (process, op, invoked, completed): the store runs them in this order
    (T0, (("w1", spec.Create("i1", {"kind": "agent"}, {"n": 0}), 0, 10),
          ("w2", spec.Create("i2", {"kind": "agent"}, {"n": 0}), 5, 15),
          ("w1", spec.Claim("i1", "c1", "t1", T0, 50), 20, 60),
          ("w2", spec.Get("i1"), 25, 70),
          ("w3", spec.Claim("i2", "c3", "t3", T0, 50), 30, 40))),
    (T0 + 100, (("w3", spec.Get("i1"), 100, 130),
                ("w1", spec.Renew("i1", "t1", T0 + 100, 50), 110, 140),
                ("w2", spec.Get("i1"), 150, 160))),
)
"""A concurrent run of three processes in two bursts, as (store time, calls). c1's lease on
i1 ends at T0 + 50; its renew at T0 + 100 must be refused (lease_expired). The intervals
overlap, but each call's interval holds the moment the store ran it, in this order: only a
wrong answer makes the history non-linearizable."""


def _scripted_run(world: World, workload: Any, *, partition: Any, max_faulted: float,
                  **_: Any) -> ConcurrentRun:
    """``run_concurrent`` replaced by :data:`SCRIPT`, run one call at a time on the store:
    the history is the same whatever the machine's threads do, and its check has no budget
    to run out (the budget is wall-clock time)."""
    store = world.open()
    events = []
    for at, calls in SCRIPT:
        world.clock.set(at)
        for process, op, invoked, completed in calls:
            events.append(Event(process, op, invoked, completed, world.guard.call(store, op), at))
    return concluded(world, events, bursts=len(SCRIPT), run_s=0.0, partition=partition,
                     budget_s=math.inf, max_faulted=max_faulted)


def test_a_non_linearizable_run_is_drawn_as_intervals_per_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """renew accepted after expiry, in a concurrent run that is not linearizable: the intervals
    picture has a lane per process drawn, the linearized calls numbered 1..n in order, and the
    call that could not be placed next numbered n + 1 with what the model allowed and what the
    store said. The run is scripted (:data:`SCRIPT`): a real race may meet otherwise, and the
    state machine would catch the store's ADK-LEASE-001 first."""
    monkeypatch.setattr(phases, "run_concurrent", _scripted_run)
    report = check("adk-ledger", "mutant:renew_revives_expired_lease", seed=1,
                   first=("concurrent",), stop_when=_stop_at("ADK-LIN-001"))
    (failed,) = report.failed()
    assert failed.clause.id == "ADK-LIN-001" and failed.failure is not None
    assert report.history is not None and len(report.history.events) == 8
    cx = failed.failure.intervals
    assert cx is not None
    dom = Dom(to_html(report))
    (svg,) = dom.find("svg", class_="timeline-intervals")
    lanes = [e[1]["data-lane"] for e in dom.find("g", class_="lane")]
    drawn = {e.process for e in (*cx.before[-10:], *cx.events)}
    assert sorted(lanes) == sorted(drawn) == ["w1", "w2", "w3"]
    placed = sorted(int(e[1]["data-order"]) for e in dom.find("g", class_="bar")
                    if e[1]["data-kind"] in {"placed", "earlier"})
    n = min(len(cx.before), 10) + len(cx.prefix)
    assert placed == list(range(1, n + 1))
    (blocked,) = [e for e in dom.find("g", class_="bar") if e[1]["data-kind"] == "blocked"]
    assert blocked[1]["data-order"] == str(n + 1)
    (highlighted,) = dom.find("g", class_="differs")
    assert highlighted[1]["data-step"] == str(n + 1)
    callout = "".join("".join(e[2]) for e in dom.find("text", class_="callout"))
    assert callout == f"#{n + 1} model allows: error lease_expired#{n + 1} store: ok"
    assert svg[1]["aria-label"].startswith("real time")


def test_check_writes_report_html_and_mutants_writes_mutants_html(tmp_path: Path,
                                                                  capsys: Any) -> None:
    """``--report DIR`` writes report.html beside the others; ``mutants --report`` writes
    mutants.html with a row per mutant, caught or escaped, and how to see it."""
    assert main(["check", "adk-ledger", "--adapter", "memory", "--profile", "quick", "--seed",
                 "1", "--concurrency", "0", "--quiet", "--report", str(tmp_path / "r")]) == 0
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    dom = Dom(page)
    rows = dom.find("tr")[1:]
    assert len(rows) == len(contract_named("adk-ledger").clauses)
    assert {r[1]["data-status"] for r in rows} == {"pass", "unsupported"}
    assert not dom.find("section")  # nothing failed: no failure sections
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # nothing external
    assert main(["mutants", "adk-ledger", "--only", "zombie_checkpoint", "--only",
                 "expiry_before_token", "--quiet", "--report", str(tmp_path / "m")]) == 0
    dom = Dom((tmp_path / "m" / "mutants.html").read_text(encoding="utf-8"))
    rows = dom.find("tr")[1:]
    assert [r[1]["data-status"] for r in rows] == ["caught", "caught"]
    text = dom.text()
    assert "fencepost check adk-ledger --adapter mutant:zombie_checkpoint" in text
    assert "2 of 2 mutants caught" in text
    capsys.readouterr()


def test_the_page_has_the_replay_command_to_copy_and_a_filter_per_verdict(fenced: Path) -> None:
    """The page is UTF-8 HTML, opens from disk, and carries the copy button for the replay
    command and one filter button per verdict present."""
    dom = Dom(fenced.read_text(encoding="utf-8"))
    (replay,) = dom.find("code", id="replay")
    assert "".join(replay[2]).startswith("fencepost check adk-ledger --adapter "
                                         "mutant:zombie_checkpoint")
    assert dom.find("button", class_="copy", data_target="replay")
    filters = [e[1]["data-status"] for e in dom.find("button", class_="filter")]
    assert filters[0] == "all" and set(filters[1:]) == {"fail", "unknown", "unsupported", "pass"}


def test_a_long_counterexample_fits_the_window_and_its_leases_start_at_their_calls(
        tmp_path: Path) -> None:
    """A 141-step counterexample: in a 1280-pixel window neither the page nor its timeline is
    wider than the window (the timeline is folded to the steps before the difference; it was a
    5,000-pixel strip in a scrolling box), and each lease bar starts at
    the mark of the call that was granted it (or at the left edge, for a folded step's)."""
    from test_reports_timeline import long_trace

    from fencepost.reports.timeline import LEFT
    from fencepost.reports.verdict import RunReport, judge
    from fencepost.scenarios.evidence import Evidence, Failure

    contract = contract_named("adk-ledger")
    trace = long_trace()
    evidence = Evidence(exercised={c.id: 1 for c in contract.clauses})
    evidence.fail("ADK-LEASE-001", Failure("scenario:long", "renew accepted after expiry",
                                           trace))
    verdicts = judge(contract.clauses, evidence, frozenset(contract.capabilities), {})
    report = RunReport("adk-ledger", "memory", "0", "quick", 1, {}, frozenset(), {}, len(trace),
                       0, tuple(verdicts), "fencepost check adk-ledger")
    page = to_html(report)
    nonce = page.split('<script nonce="', 1)[1].split('"', 1)[0]  # the page's CSP lets it run
    measure = (f'<script nonce="{nonce}">document.body.dataset.fits = String('
               "document.documentElement.scrollWidth <= window.innerWidth && "
               "[...document.querySelectorAll('svg.timeline')].every("
               "s => s.getBoundingClientRect().width <= window.innerWidth));</script>")
    path = tmp_path / "report.html"
    path.write_text(page.replace("</body>", measure + "</body>"), encoding="utf-8")
    dom = Dom(_chromium("--window-size=1280,900", "--dump-dom", f"file://{path}").stdout)
    (body,) = dom.find("body")
    assert body[1].get("data-fits") == "true", body[1]
    marks = {(float(c[1]["cx"]), float(c[1]["cy"])) for c in dom.find("circle")
             if c[1].get("class", "").startswith("mark-")}
    rects = [r[1] for r in dom.find("rect", class_="bar-lease")]
    assert rects
    for r in rects:
        x, y = float(r["x"]), float(r["y"]) + 9
        assert (x, y) in marks or x == LEFT, r
