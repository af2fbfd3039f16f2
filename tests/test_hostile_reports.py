"""Reports stay valid and secret-free whatever an adapter says, and report.json loads back."""

from __future__ import annotations

import json
import operator
import re
import tempfile
import unicodedata
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import xmlschema
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from junitparser import JUnitXml, TestSuite

from fencepost.reports.render import (
    headline,
    load_report,
    render_failures,
    summary_table,
    to_json,
    to_junit,
    to_markdown,
    write_reports,
)
from fencepost.reports.text import (
    LIMIT,
    clean,
    clean_block,
    clean_line,
    clean_value,
    cut_marker,
    mask_secrets,
)
from fencepost.reports.verdict import ClauseVerdict, RunReport
from fencepost.scenarios.evidence import Failure
from fencepost.scenarios.trace import TraceStep
from fencepost.spec.adk_ledger import Checkpoint, Claim
from fencepost.spec.clauses import Clause
from fencepost.spec.outcome import Crash, Err, Ok

URL = "postgresql://alice:s3cret@127.0.0.1:5432/test"
MASKED = "postgresql://alice:***@127.0.0.1:5432/test"
HIDDEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}
JUNIT_SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit.xsd")

FENCE = Clause("ADK-FENCE-001", "a replaced owner is fenced",
               "checkpoint with a replaced token answers stale_owner.", ("machine",),
               situations=("after a takeover",))
LIN = Clause("ADK-LIN-001", "concurrent histories are linearizable", "linearizable.",
             ("concurrent",))
FAULT = Clause("ADK-FAULT-001", "a lost commit is an error", "fault.", ("faults",),
               requires=frozenset({"fault_injection"}))
GET = Clause("ADK-GET-001", "get of a missing id is not_found", "get.", ("machine",),
             situations=("a missing id", "a deleted id"))


def hostile_report(message: str = "boom", crash: str = "boom", adapter: str = "memory",
                   option: str = "strict", reason: str = "no check exercised it",
                   replay: str | None = None) -> RunReport:
    """A report whose adapter-supplied strings are the arguments: a failure whose store
    crashed with ``crash``, an unknown clause, an unsupported one and a weak pass."""
    trace = (
        TraceStep("c1", 1000, Claim("s1-a", "c1", "t1", 1000, 50), expected=Ok(None),
                  actual=Ok(None), bind="token"),
        TraceStep("clock", 1010, note="advance 10 ms", event="clock"),
        TraceStep("c1", 1010, Checkpoint("s1-a", "t1", {"note": crash}, 1010, 50),
                  expected=Err("stale_owner"), actual=Crash("ValueError", crash)),
    )
    verdicts = (
        ClauseVerdict(FENCE, "fail", message, 3, Failure("machine", message, trace),
                      {"after a takeover": 2}),
        ClauseVerdict(LIN, "unknown", reason, 1),
        ClauseVerdict(FAULT, "unsupported", "adapter lacks capability fault_injection"),
        ClauseVerdict(GET, "pass", "", 4, None, {"a missing id": 3, "a deleted id": 0}),
    )
    if replay is None:
        replay = f"fencepost check adk-ledger --adapter {adapter} --option finish_phases={option}"
    return RunReport("adk-ledger", adapter, "0.1.0", "quick", 7, {"finish_phases": option},
                     frozenset({"durable", option}), {"total": 2.5}, 120, 61, verdicts, replay)


def _written(report: RunReport) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as directory:
        return {Path(p).name: Path(p).read_bytes() for p in write_reports(report, directory)}


TEMPLATE_TAGS = frozenset({
    "html", "head", "meta", "title", "style", "body", "header", "footer", "h1", "h2", "h3",
    "h4", "p", "span", "b", "br", "dl", "dt", "dd", "div", "code", "pre", "button", "table",
    "thead", "tbody", "tr", "th", "td", "a", "section", "details", "summary", "ol", "li",
    "svg", "g", "line", "rect", "circle", "text", "script"})


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _assert_safe_html(page: str) -> None:
    """``report.html`` holds only the template's own markup, whatever the store said: no tag
    it does not write, no event-handler attribute, one script (its own, with the page's nonce),
    no invisible character."""
    _no_hidden(page)
    parser = _Tags()
    parser.feed(page)
    tags = [tag for tag, _ in parser.tags]
    assert set(tags) <= TEMPLATE_TAGS, set(tags) - TEMPLATE_TAGS
    assert tags.count("script") == 1
    assert not [(tag, name) for tag, attrs in parser.tags for name, _ in attrs
                if name.startswith("on")]


def _untimed(xml: str) -> str:
    """``junit.xml`` without its timestamp (two writes may fall in different seconds)."""
    return re.sub(r' timestamp="[^"]*"', "", xml, count=1)


def _md_cells(line: str) -> int:
    """Cells of a Markdown table row: pipes not escaped by a backslash, less one."""
    count, escaped = 0, False
    for char in line:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "|":
            count += 1
    return count - 1


def _md_outside_fences(text: str) -> list[str]:
    """The lines of a Markdown document outside its fenced code blocks; every fence closes."""
    outside, fence = [], ""
    for line in text.splitlines():
        ticks = re.fullmatch(r"(`{3,})\s*", line)
        if not fence:
            if ticks:
                fence = ticks[1]
            else:
                outside.append(line)
        elif ticks and len(ticks[1]) >= len(fence):
            fence = ""
    assert fence == "", "a fenced block was never closed"
    return outside


def _md_tables(lines: list[str]) -> list[list[str]]:
    tables: list[list[str]] = []
    previous = False
    for line in lines:
        row = line.startswith("|")
        if row and not previous:
            tables.append([])
        if row:
            tables[-1].append(line)
        previous = row
    return tables


def _assert_valid_markdown(text: str, report: RunReport) -> None:
    outside = _md_outside_fences(text)
    tables = _md_tables(outside)
    assert len(tables) == 2
    for table in tables:
        assert re.fullmatch(r"\|(\s*-+\s*\|)+", table[1]), table[1]  # a header, then the rule
        assert {_md_cells(row) for row in table} == {_md_cells(table[0])}
    assert len(tables[1]) == 2 + len(report.verdicts)
    headings = [line for line in outside if line.startswith("#")]
    assert headings[0].startswith("# Compliance report: adk-ledger on ")
    assert [h.split(":")[0] for h in headings[1:]] == (
        ["## Clauses", "## ADK-FENCE-001"]
        + (["## ADK-LIN-001"] if clean_line(report.verdicts[1].reason, 160)
           != clean(report.verdicts[1].reason) else []))
    for line in outside:  # markup from the store is escaped outside code
        prose = re.sub(r"(`+).*?\1", "", line.removeprefix("> "))
        assert re.search(r"(?<!\\)[<>]", prose) is None, line


def _no_hidden(text: str, allowed: str = "\n\t") -> None:
    bad = {c for c in text if c not in allowed and unicodedata.category(c) in HIDDEN}
    assert bad == set()
    text.encode("utf-8")  # strict: no lone surrogate survives


CHARS = st.characters(codec=None, exclude_categories=())  # every code point, surrogates too
NASTY = st.sampled_from("\x00\x01\x1b\x7f\x85\r\n\t|`<>&\\*_#[]\u2028\u202e\ufeff\udc80\ud800"
                        "\ufffe\uffff")
HOSTILE = st.one_of(
    st.text(CHARS),
    st.text(NASTY),
    st.builds(operator.mul, st.text(st.one_of(CHARS, NASTY), min_size=1, max_size=6),
              st.integers(700, 1500)),  # up to 9,000 characters, past the limit
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=HOSTILE, crash=HOSTILE, adapter=HOSTILE, option=HOSTILE, reason=HOSTILE)
@example(message="\x01\x1b[31m" * 3, crash="\udc80", adapter="<script>alert(1)</script>",
         option="a|b`c`\nd", reason="line one\nline two")
@example(message="x" * 1_000_000, crash="\x00" * 20_000, adapter="|" * 5000,
         option="`" * 4000, reason="\n" * 3000)
def test_every_writer_gives_valid_output_for_any_adapter_text(
        message: str, crash: str, adapter: str, option: str, reason: str) -> None:
    report = hostile_report(message, crash, adapter, option, reason)
    files = _written(report)
    assert sorted(files) == ["junit.xml", "report.html", "report.json", "report.md"]
    _assert_safe_html(files["report.html"].decode("utf-8"))

    data = json.loads(files["report.json"].decode("utf-8"))
    assert data["adapter"] == clean_value(adapter)
    assert data["options"] == {"finish_phases": clean_value(option)}
    fence = data["clauses"][0]
    assert fence["counterexample"]["message"] == clean_value(message)
    assert fence["counterexample"]["steps"][2]["actual"] == {
        "crash": "ValueError", "message": clean_value(crash)}
    assert data["clauses"][1]["reason"] == clean_value(reason)
    assert all(len(s) <= LIMIT for s in (data["adapter"], fence["reason"]))
    assert [c["status"] for c in data["clauses"]] == ["fail", "unknown", "unsupported", "pass"]

    markdown = files["report.md"].decode("utf-8")
    _no_hidden(markdown)
    _assert_valid_markdown(markdown, report)

    xml = files["junit.xml"].decode("utf-8")
    _no_hidden(xml)
    JUNIT_SCHEMA.validate(xml)
    root = ET.fromstring(files["junit.xml"])
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors"),
            root.get("skipped")) == ("testsuite", "4", "2", "0", "1")
    [suite] = list(JUnitXml.fromstring(files["junit.xml"]))
    assert isinstance(suite, TestSuite)
    assert [(r.type, r.message) for case in suite for r in case.result] == [
        ("fail", clean(message)), ("unknown", clean(reason)),
        (None, "adapter lacks capability fault_injection")]
    assert {case.classname for case in suite} == {"fencepost.adk-ledger"}
    assert {p.name: p.value for p in suite.properties()}["adapter"] == clean_line(adapter)
    assert _untimed(to_junit(report)) == _untimed(xml)

    table = summary_table(report)
    assert len(table.splitlines()) == 2 + len(report.verdicts)
    _no_hidden(table, allowed="\n")
    line = headline(report)
    assert "\n" not in line
    _no_hidden(line, allowed="")
    _no_hidden(render_failures(report))


def test_control_characters_and_surrogates_are_escaped_visibly() -> None:
    report = hostile_report(message="a\x01b\x1bc", crash="d\udc80e\u202ef", adapter="m\x07em")
    shown = "a\\x01b\\x1bc"
    assert to_json(report)["clauses"][0]["counterexample"]["message"] == "a\x01b\x1bc"
    assert to_json(report)["clauses"][0]["counterexample"]["actual"] == (
        "raised ValueError: d\\udc80e\u202ef")
    assert to_json(report)["adapter"] == "m\x07em"
    assert f"  {shown}\n" in render_failures(report)
    assert "store: raised ValueError: d\\udc80e\\u202ef   <-- differs" in render_failures(report)
    assert headline(report).startswith("adk-ledger on m\\x07em: ")
    assert f"\n{shown}\n" in to_markdown(report)
    assert f'message="{shown}"' in to_junit(report)


def test_a_huge_message_is_cut_at_the_limit_with_a_marker_saying_how_much() -> None:
    report = hostile_report(message="x" * 10_000)
    message = to_json(report)["clauses"][0]["counterexample"]["message"]
    kept = message.index(" ")
    assert message == "x" * kept + cut_marker(10_000 - kept)
    assert message.endswith(f" ... [{10_000 - kept:,} characters cut]")
    assert LIMIT - 50 < len(message) <= LIMIT == 4000
    assert clean(message) == message  # cleaning a cleaned string changes nothing


def test_a_huge_trace_is_cut_line_by_line_and_in_all() -> None:
    block = clean_block("y" * 9000 + "\n" + ("z" * 3000 + "\n") * 40)
    lines = block.splitlines()
    assert lines[0] == "y" * lines[0].index(" ") + cut_marker(9000 - lines[0].index(" "))
    assert lines[1:-1] == ["z" * 3000] * (len(lines) - 2)
    cut = 9000 + 1 + 3001 * 40 - (9000 + 1) - 3001 * (len(lines) - 2)
    assert lines[-1] == f"... [{cut:,} characters cut]"
    assert len(block) <= 100_000


def test_markup_in_a_reason_cannot_break_the_markdown_tables() -> None:
    report = hostile_report(message="a | b `c` <script>alert(1)</script>\n| x | y |",
                            reason="history not linearizable\n| fake | row |")
    markdown = to_markdown(report)
    row = next(line for line in markdown.splitlines() if line.startswith("| ADK-FENCE-001"))
    assert "a \\| b \\`c\\` \\<script\\>alert(1)\\</script\\> ..." in row
    assert "| fake |" not in markdown.split("## Clauses")[1].split("## ")[0]
    _assert_valid_markdown(markdown, report)


def test_every_markdown_table_has_a_header_row() -> None:
    markdown = to_markdown(hostile_report())
    lines = markdown.splitlines()
    assert re.fullmatch(r"\| field +\| value +\|", lines[2])
    assert re.fullmatch(r"\|-+\|-+\|", lines[3])
    assert re.fullmatch(r"\| clause +\| verdict +\| title +\| evidence +\| situations reached +"
                        r"\| reason +\|", lines[lines.index("## Clauses") + 2])


def test_a_multi_line_reason_keeps_its_summary_row_on_one_line() -> None:
    reason = ("a concurrent run of 304 calls by 4 workers is not linearizable\n"
              "  partition s1-a: no order explains\n" + "    claim ...\n" * 40)
    report = hostile_report(reason=reason)
    rows = summary_table(report).splitlines()
    assert len(rows) == 2 + len(report.verdicts)
    [lin] = [r for r in rows if r.startswith("ADK-LIN-001")]
    assert lin.endswith("  a concurrent run of 304 calls by 4 workers is not linearizable ...")
    assert f"ADK-LIN-001 unknown: {reason}" in render_failures(report)
    assert f"Verdict unknown:\n\n```\n{reason}\n```" in to_markdown(report)
    assert to_json(report)["clauses"][1]["reason"] == reason


def test_the_headline_counts_state_machine_runs_with_their_shrink_replays() -> None:
    line = headline(hostile_report())
    assert "(120 steps, 61 state-machine runs (examples and shrink replays), 2.5 s, " in line
    assert "state-machine examples" not in line
    assert re.search(r"\| state-machine runs +\| 61 \(examples and shrink replays\) +\|",
                     to_markdown(hostile_report()))


# --- secrets -------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "masked"), [
    (URL, MASKED),
    ("postgresql+psycopg://alice:p%40ss:w/rd@db/x?sslmode=require",
     "postgresql+psycopg://alice:***@db/x?sslmode=require"),
    ("could not connect to mysql://root:hunter2@localhost/db, retrying",
     "could not connect to mysql://root:***@localhost/db, retrying"),
    ("host=db user=alice password=s3cret dbname=test",
     "host=db user=alice password=*** dbname=test"),
    ("host=db password='s 3 cret' port=5432", "host=db password='***' port=5432"),
    ("PGPASSWORD=s3cret psql", "PGPASSWORD=*** psql"),
    ("sqlite:///db?user=a&password=s3cret&mode=ro", "sqlite:///db?user=a&password=***&mode=ro"),
    ('{"password": "s3cret"}', '{"password": "***"}'),
    ("postgresql://postgres@127.0.0.1:1/test", "postgresql://postgres@127.0.0.1:1/test"),
    ("sqlite:////tmp/x.db", "sqlite:////tmp/x.db"),
    ("at 12:30 see http://example.com:8080/path", "at 12:30 see http://example.com:8080/path"),
])
def test_mask_secrets_hides_passwords_and_nothing_else(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked
    assert mask_secrets(masked) == masked


def test_no_output_shows_a_password_from_the_adapter_replay_or_a_failure() -> None:
    report = hostile_report(
        message=f"checkpoint raised OperationalError: cannot reach {URL}",
        crash=f"connection to {URL} failed; dsn host=db password=s3cret",
        adapter=URL, option=f"x{URL}", reason=f"store lost: {URL}",
        replay=f"fencepost check adk-ledger --adapter {URL} --seed 7")
    outputs = {name: body.decode("utf-8") for name, body in _written(report).items()}
    outputs |= {"summary": summary_table(report), "headline": headline(report),
                "failures": render_failures(report)}
    assert {name: "s3cret" in text for name, text in outputs.items()} == dict.fromkeys(
        outputs, False)
    data = json.loads(outputs["report.json"])
    assert (data["adapter"], data["reproduce"]) == (
        MASKED, f"fencepost check adk-ledger --adapter {MASKED} --seed 7")
    assert f"r = Replay('adk-ledger', '{MASKED}', start_ms=1000)" in (
        data["clauses"][0]["counterexample"]["code"])
    assert headline(report).startswith(f"adk-ledger on {MASKED}: ")
    root = ET.fromstring(outputs["junit.xml"])
    assert {c.get("classname") for c in root.iter("testcase")} == {"fencepost.adk-ledger"}
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["adapter"] == MASKED
    assert root.get("name") == "fencepost.adk-ledger"


# --- load_report -----------------------------------------------------------------------------


def test_load_report_gives_back_what_write_reports_wrote(tmp_path: Path) -> None:
    report = hostile_report(message="checkpoint answered ok; the contract requires stale_owner",
                            crash="bad \x01 thing", reason="machine: store unavailable")
    write_reports(report, str(tmp_path))
    loaded = load_report(tmp_path / "report.json")
    assert [(v.clause.id, v.status, v.reason, v.evidence, dict(v.situations), v.weak)
            for v in loaded.verdicts] == [
        ("ADK-FENCE-001", "fail", "checkpoint answered ok; the contract requires stale_owner",
         3, {"after a takeover": 2}, False),
        ("ADK-LIN-001", "unknown", "machine: store unavailable", 1, {}, False),
        ("ADK-FAULT-001", "unsupported", "adapter lacks capability fault_injection", 0, {},
         False),
        ("ADK-GET-001", "pass", "", 4, {"a missing id": 3, "a deleted id": 0}, True),
    ]
    assert (loaded.summary(), loaded.exit_code) == (report.summary(), report.exit_code) == (
        {"pass": 1, "fail": 1, "unknown": 1, "unsupported": 1}, 1)
    assert (loaded.contract, loaded.adapter, loaded.kit_version, loaded.profile, loaded.seed,
            dict(loaded.options), loaded.capabilities, dict(loaded.timings), loaded.steps,
            loaded.examples, loaded.replay) == (
        "adk-ledger", "memory", "0.1.0", "quick", 7, {"finish_phases": "strict"},
        frozenset({"durable", "strict"}), {"total": 2.5}, 120, 61, report.replay)
    failure = loaded.verdicts[0].failure
    assert failure is not None and report.verdicts[0].failure is not None
    assert failure.trace == report.verdicts[0].failure.trace  # ops, outcomes and binds
    assert failure.trace[2].actual == Crash("ValueError", "bad \x01 thing")
    assert to_json(loaded) == to_json(report)
    assert to_markdown(loaded) == to_markdown(report)


def test_a_loaded_step_the_kit_cannot_rebuild_is_a_note_holding_its_json(tmp_path: Path) -> None:
    write_reports(hostile_report(), str(tmp_path))
    data = json.loads((tmp_path / "report.json").read_text())
    data["clauses"][0]["counterexample"]["steps"][0]["op"]["op"] = "teleport"
    (tmp_path / "report.json").write_text(json.dumps(data))
    step = load_report(tmp_path / "report.json").verdicts[0].failure.trace[0]  # type: ignore[union-attr]
    assert (step.actor, step.at, step.op) == ("c1", 1000, None)
    assert step.note.startswith('(not rebuilt: KeyError) {"actor": "c1", "at": 1000, "op": ')


def test_load_report_of_a_file_that_is_not_a_report_says_so(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text('{"contract": "adk-ledger"}')
    with pytest.raises(ValueError, match=r"report.json: not a fencepost report.json \(KeyError"):
        load_report(path)
    path.write_bytes(b"\xff{")
    with pytest.raises(ValueError, match="report.json: not a report.json"):
        load_report(path)


def test_a_real_run_of_a_store_crashing_with_hostile_text_writes_valid_reports(
        tmp_path: Path) -> None:
    from fencepost.adapters.adk_ledger.memory import MemoryLedger, MemoryLedgerFactory
    from fencepost.api import check

    evil = f"bad\x01\x1b[2J\udc80 <script>x</script> | `t` ```\n# no heading {URL} " + "y" * 6000

    class Hostile(MemoryLedger):
        def checkpoint(self, *args: object) -> object:
            raise ValueError(evil)

    report = check("adk-ledger", MemoryLedgerFactory(Hostile), seed=3, concurrency=0)
    paths = write_reports(report, str(tmp_path))
    assert [Path(p).name for p in paths] == ["report.json", "report.md", "report.html",
                                             "junit.xml"]
    assert report.exit_code == 1
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    _assert_safe_html(page)
    assert "&lt;script&gt;x&lt;/script&gt;" in page
    outputs = [Path(p).read_text(encoding="utf-8") for p in paths]
    outputs += [summary_table(report), render_failures(report), headline(report)]
    assert not any("s3cret" in text or "\x1b" in text for text in outputs)
    loaded = load_report(tmp_path / "report.json")
    assert [(v.clause.id, v.status, v.reason) for v in loaded.verdicts] == [
        (v.clause.id, v.status, clean_value(v.reason) if v.status != "pass" else "")
        for v in report.verdicts]
    assert (loaded.summary(), loaded.exit_code) == (report.summary(), 1)
    JUNIT_SCHEMA.validate(tmp_path / "junit.xml")
    _md_outside_fences(outputs[1])
    assert len(summary_table(report).splitlines()) == 2 + len(report.verdicts)
