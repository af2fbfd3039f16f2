"""fencepost campaign on this machine's cores: seeds and shards, one report over the seeds,
resuming from the output directory, the shared example database (Redis), stopping cleanly.
The Dask cluster is tests/test_campaign_dask.py."""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import missing

from fencepost.campaign import parse_seeds, parse_shard, shard_of
from fencepost.campaign_report import seed_ranges, summarize
from fencepost.cli import main
from fencepost.errors import ConfigurationError
from fencepost.reports.json_report import load_report
from fencepost.reports.verdict import FAIL, PASS, UNKNOWN, ClauseVerdict, RunReport
from fencepost.scenarios.evidence import Failure
from fencepost.scenarios.trace import TraceStep
from fencepost.spec.clauses import Clause

MUTANT = "mutant:claim_completed"  # breaks ADK-CLAIM-002, and only it
FAST = ["--profile", "quick", "--concurrency", "0"]
DONE = re.compile(r"^\.\.\. seed (\d+) done: (.+) \(\d+\.\d s\) \[(\d+)/(\d+), [\d.]+ seeds/min\]$")


def fencepost(*words: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The command, as a user runs it (supervised)."""
    return subprocess.run([sys.executable, "-m", "fencepost.cli", *words], capture_output=True,
                          text=True, timeout=timeout)


Local = tuple[Path, "subprocess.CompletedProcess[str]"]
"""The module's campaign: its directory and the command's result."""
LOCAL_GROUP = pytest.mark.xdist_group("campaign-local")
"""The tests of the module's campaign run on one worker, so that it runs once (pyproject's
--dist loadgroup); the others spread."""


def required(module: str) -> Any:
    """``module``, from the campaign extra; missing: skip, or fail under CI=true."""
    try:
        return importlib.import_module(module)
    except ImportError:
        missing(f"{module} is not installed (pip install 'fencepost[campaign]')", "toolchain")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --- seeds and shards --------------------------------------------------------------------------


def test_seeds_are_a_range_or_a_count() -> None:
    assert parse_seeds("1..5") == (1, 2, 3, 4, 5)
    assert parse_seeds("7") == (1, 2, 3, 4, 5, 6, 7)
    assert parse_seeds("3..3") == (3,)
    assert parse_seeds("0..2") == (0, 1, 2)
    assert parse_seeds(" 10..12 ") == (10, 11, 12)


@pytest.mark.parametrize(("text", "says"), [
    ("0", "names no seed"), ("5..2", "names no seed"), ("a", "write A..B"),
    ("1..", "write A..B"), ("1...5", "write A..B"), ("-3", "write A..B"), ("1,2", "write A..B"),
    ("1..200000", "at most 100,000 seeds"), ("", "write A..B")])
def test_a_bad_seeds_form_is_refused(text: str, says: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(says)):
        parse_seeds(text)


def test_the_shards_of_n_partition_the_seeds_in_order() -> None:
    seeds = parse_seeds("3..19")
    for count in range(1, 6):
        shards = [shard_of(seeds, index, count) for index in range(1, count + 1)]
        assert sorted(s for shard in shards for s in shard) == list(seeds)
        assert sum(len(shard) for shard in shards) == len(seeds)  # no seed twice
        assert all(list(shard) == sorted(shard) for shard in shards)
    assert shard_of(parse_seeds("7"), 1, 3) == (1, 4, 7)
    assert shard_of(parse_seeds("7"), 3, 3) == (3, 6)
    assert shard_of(parse_seeds("2"), 3, 3) == ()
    assert parse_shard("2/3") == (2, 3)


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "1/-2", "/2"])
def test_a_bad_shard_is_refused(text: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(f"--shard {text!r}")):
        parse_shard(text)


def test_bad_seeds_through_the_command_are_one_line_and_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = fencepost("campaign", "adk-ledger", "--seeds", "5..2", "--out", str(out))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("fencepost: error: --seeds '5..2' names no seed; write A..B with "
                             "A <= B, or N >= 1\n")
    assert not out.exists()


@pytest.mark.parametrize(("words", "says"), [
    (["--shard", "3/2"], "--shard '3/2': I must be from 1 to N"),
    (["--jobs", "0"], "--jobs must be 1 or more, not 0"),
    (["--adapter", "nosuch"], "cannot understand adapter 'nosuch'"),
    (["--option", "finish_phases=maybe"], "finish_phases"),
    (["--ops", "-1"], "--ops must be 1 or more, not -1"),
    (["--ops", "0"], "--ops must be 1 or more, not 0 (--concurrency 0 skips the concurrent run)"),
    (["--shrink-budget", "soon"], "--shrink-budget: "),
    (["--example-db", "ftp://x"], "use a directory or a redis://HOST:PORT/DB URL"),
    (["--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"], "give --jobs or --scheduler"),
])
def test_bad_input_is_one_line_and_exit_2_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], words: list[str], says: str) -> None:
    out = tmp_path / "out"
    assert main(["campaign", "adk-ledger", "--out", str(out), *words]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fencepost: error: "), captured.err
    assert says in lines[0] and captured.out == ""
    assert not out.exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_scheduler_nobody_listens_at_is_one_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    required("distributed")
    address = f"tcp://127.0.0.1:{_free_port()}"
    code = main(["campaign", "adk-ledger", "--scheduler", address, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith(
        f"fencepost: error: cannot reach the Dask scheduler at {address} (")
    assert not (tmp_path / "o").exists()


def test_the_command_line_does_not_load_dask_or_redis() -> None:
    code = ("import sys; from fencepost.cli import build_parser; build_parser(); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'dask', 'distributed', 'redis'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_a_seed_on_the_memory_store_does_not_import_sqlalchemy() -> None:
    """A worker's start-up: SQLAlchemy (about 0.15 s to import) only for a SQL store."""
    code = ("import sys; from fencepost.campaign import CampaignSettings, SeedTask, run_seed; "
            "r = run_seed(SeedTask(CampaignSettings('adk-ledger', 'memory', 'quick'), 1, None)); "
            "print(r.error or r.configuration or 'ran', 'sqlalchemy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.split() == ["ran", "False"]


# --- how local workers start -------------------------------------------------------------------

_STARTS = """
import sys, threading
from fencepost.pool import start_context
from fencepost.progress import progress_printer
alone = start_context().get_start_method()
printer = progress_printer(True, every_s=60.0)  # stderr is a pipe here: a heartbeat thread
with_heartbeat = start_context().get_start_method()
gate = threading.Event()
other = threading.Thread(target=gate.wait, daemon=True)
other.start()
beside_another = start_context().get_start_method()
gate.set(); other.join(); printer.done()
print(alone, with_heartbeat, beside_another, sys.platform)
"""


def test_workers_are_forked_unless_a_thread_of_the_callers_runs() -> None:
    """A fresh interpreter: what runs in pytest's process is not up to the test."""
    out = subprocess.run([sys.executable, "-c", _STARTS], capture_output=True, text=True,
                         check=True, timeout=60)
    alone, with_heartbeat, beside_another, platform = out.stdout.split()
    forks = "fork" if platform.startswith("linux") else "spawn"
    assert (alone, with_heartbeat, beside_another) == (forks, forks, "spawn")


def test_fencepost_fork_0_spawns_every_pools_processes() -> None:
    out = subprocess.run([sys.executable, "-c", _STARTS], capture_output=True, text=True,
                         check=True, timeout=60, env={**os.environ, "FENCEPOST_FORK": "0"})
    assert out.stdout.split()[:3] == ["spawn", "spawn", "spawn"]


_FORKED = """
import json, multiprocessing, os, sys
from fencepost.adapters.sql import make_engine
from fencepost.supervisor import STATUS
import fencepost.progress as progress

engine = make_engine("sqlite:///" + sys.argv[1])
with engine.connect() as conn:
    conn.exec_driver_sql("select 1")
read, write = os.pipe()
STATUS._out = os.fdopen(write, "w", buffering=1, encoding="utf-8")
printer = progress.progress_printer(True, every_s=60.0)

def child(answer):
    answer.send(json.dumps({"pooled": engine.pool.checkedin(),
                            "status": STATUS._out is not None,
                            "heartbeats": len(progress._beating) + len(progress._printing)}))

if __name__ == "__main__":
    parent_side, child_side = multiprocessing.Pipe()
    process = multiprocessing.get_context("fork").Process(target=child, args=(child_side,))
    process.start()
    said = json.loads(parent_side.recv())
    process.join()
    printer.done()
    print(json.dumps({**said, "parent_pooled": engine.pool.checkedin(),
                      "parent_status": STATUS._out is not None}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork on Linux only")
def test_a_forked_worker_shares_no_connection_status_pipe_or_heartbeat(tmp_path: Path) -> None:
    """What a fork would share is the worker's own: the engines made before it hold none of
    the parent's connections (the parent keeps its own), the supervisor's status pipe is not
    written from it, and no heartbeat of the parent's is counted as its."""
    script = tmp_path / "forked.py"
    script.write_text(_FORKED, encoding="utf-8")
    out = subprocess.run([sys.executable, str(script), str(tmp_path / "db.sqlite")],
                         capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(out.stdout) == {"pooled": 0, "status": False, "heartbeats": 0,
                                      "parent_pooled": 1, "parent_status": True}


def test_the_fork_hooks_hold_every_heartbeats_lock_and_the_child_drops_them() -> None:
    import threading

    from fencepost import progress

    lock = threading.Lock()
    beat = threading.Thread(target=lambda: None)  # stands for a heartbeat thread
    printing, beating = dict(progress._printing), set(progress._beating)  # this process's
    progress._printing.clear()
    progress._printing[beat] = lock
    try:
        progress._before_fork()
        assert lock.locked()  # a heartbeat prints only holding it: none prints across a fork
        progress._after_fork()
        assert not lock.locked() and progress._printing == {beat: lock}
        progress._before_fork()
        progress._after_fork_in_child()
        assert not lock.locked() and progress._printing == {} and progress._beating == set()
    finally:
        progress._printing.clear()
        progress._printing.update(printing)
        progress._beating.update(beating)


def test_a_heartbeat_thread_leaves_the_registry_as_it_ends() -> None:
    """Once it has ended (its command done) it is no thread a fork must wait for, and none
    that keeps workers from forking."""
    import io

    from fencepost import progress

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stderr", io.StringIO())
        before = set(progress._printing)
        printer = progress.progress_printer(True, every_s=60.0)
        [beat] = set(progress._printing) - before
        printer.done()
        beat.join(timeout=60)
    assert not beat.is_alive() and beat not in progress._printing


# --- a campaign on two local processes ---------------------------------------------------------


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Local:
    """Seeds 1..4 of a store that breaks ADK-CLAIM-002, two at a time: run once for the whole
    test run, under a lock in the run's shared temporary directory (its tests only read it;
    those that resume copy it first). The xdist_group mark alone would do it, but pytest-xdist
    3.8's loadgroup does not group under pytest 9 (the group suffix it writes into each node
    id is lost), so each worker would run the campaign again. Without xdist the base
    directory's parent would be every run's (a result of an earlier run read back)."""
    base = tmp_path_factory.getbasetemp()  # under xdist, each worker's is in the run's own
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / (
        "fencepost-campaign-local")
    shared.mkdir(exist_ok=True)
    out, saved = shared / "c1", shared / "result.json"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not saved.exists():
            result = fencepost("campaign", "adk-ledger", "--adapter", MUTANT, "--seeds",
                               "1..4", "--jobs", "2", "--out", str(out), *FAST)
            saved.write_text(json.dumps([result.returncode, result.stdout, result.stderr]))
    code, stdout, stderr = read_json(saved)
    return out, subprocess.CompletedProcess([], code, stdout, stderr)


def _seed_reports(out: Path) -> dict[int, RunReport]:
    return {int(p.parent.name): load_report(p) for p in (out / "seeds").glob("*/report.json")}


@pytest.mark.long
@LOCAL_GROUP
def test_every_seed_is_accounted_for_and_the_fault_found(
        local: Local) -> None:
    out, result = local
    assert result.returncode == 1, result.stderr
    data = read_json(out / "campaign.json")
    assert data["complete"] is True and data["exit_code"] == 1
    workers = data["seeds"].pop("workers")
    assert data["seeds"] == {"planned": [1, 2, 3, 4], "done": [1, 2, 3, 4],
                             "failed": [1, 2, 3, 4], "lost": {}, "errors": {}, "not_run": []}
    assert sorted(workers) == ["1", "2", "3", "4"]
    assert len(set(workers.values())) <= 2  # --jobs 2: two worker processes at most
    assert all(re.fullmatch(r"pid \d+", w) for w in workers.values())
    counts = data["counts"]
    assert {k: counts[k] for k in ("planned", "done", "ran", "failed_seeds", "lost", "errors",
                                   "not_run", "failing_clauses", "unknown_clauses")} == {
        "planned": 4, "done": 4, "ran": 4, "failed_seeds": 4, "lost": 0, "errors": 0,
        "not_run": 0, "failing_clauses": 1, "unknown_clauses": 0}
    assert data["settings"] == {
        "contract": "adk-ledger", "adapter": MUTANT, "profile": "quick", "options": {},
        "concurrency": 0, "ops": None, "strict": False, "call_timeout_s": 60.0,
        "shrink_budget": None}
    assert data["example_db"] == str((out / "example-db").resolve())
    assert sorted(p.name for p in out.iterdir()) == [
        "campaign.json", "campaign.md", "example-db", "seeds", "settings.json"]


@pytest.mark.long
@LOCAL_GROUP
def test_the_smallest_counterexample_is_the_one_with_fewest_steps(
        local: Local) -> None:
    out, _ = local
    reports = _seed_reports(out)
    assert sorted(reports) == [1, 2, 3, 4]
    lengths = {seed: len(r.failed()[0].failure.trace)  # type: ignore[union-attr]
               for seed, r in reports.items()}
    assert all([v.clause.id for v in r.failed()] == ["ADK-CLAIM-002"] for r in reports.values())
    steps, seed = min((n, s) for s, n in lengths.items())
    [found] = read_json(out / "campaign.json")["failing"]
    assert found["clause"] == "ADK-CLAIM-002" and found["seeds"] == [1, 2, 3, 4]
    smallest = found["smallest"]
    assert (smallest["seed"], smallest["steps"]) == (seed, steps)
    saved = read_json(out / "seeds" / str(seed) / "report.json")
    [clause] = [c for c in saved["clauses"] if c["id"] == "ADK-CLAIM-002"]
    assert smallest["counterexample"] == clause["counterexample"]
    assert len(smallest["counterexample"]["steps"]) == steps
    assert smallest["replay"] == (f"{saved['reproduce']} --example-db "
                                  f"{(out / 'example-db').resolve()}")
    assert smallest["replay"].startswith(
        f"fencepost check adk-ledger --adapter {MUTANT} --profile quick --seed {seed} "
        "--concurrency 0")
    md = (out / "campaign.md").read_text()
    assert "### ADK-CLAIM-002: completed is final for claim" in md
    assert f"Smallest counterexample: seed {seed}, {steps} steps" in md


@pytest.mark.long
@LOCAL_GROUP
def test_situation_coverage_is_summed_over_the_seeds(
        local: Local) -> None:
    out, _ = local
    expected: dict[tuple[str, str], list[int]] = {}
    for report in _seed_reports(out).values():
        for v in report.verdicts:
            if v.status == "unsupported":
                continue
            for situation, count in v.situations.items():
                row = expected.setdefault((v.clause.id, situation), [0, 0, 0])
                row[0] += count > 0
                row[1] += 1
                row[2] += count
    got = {(s["clause"], s["situation"]): [s["seeds_reached"], s["seeds"], s["reached"]]
           for s in read_json(out / "campaign.json")["situations"]}
    assert got == expected
    assert all(seeds == 4 for _, seeds, _ in got.values())
    counts = read_json(out / "campaign.json")["counts"]
    assert counts["situations"] == len(got)
    assert counts["situations_reached"] == sum(1 for r, _, _ in got.values() if r)


@pytest.mark.long
@LOCAL_GROUP
def test_progress_says_each_seed_as_it_finishes(
        local: Local) -> None:
    out, result = local
    lines = [DONE.match(line) for line in result.stderr.splitlines()]
    assert all(lines), result.stderr
    assert sorted(int(m[1]) for m in lines if m) == [1, 2, 3, 4]
    assert [(m[2], int(m[3]), int(m[4])) for m in lines if m] == [
        ("1 fail", k, 4) for k in (1, 2, 3, 4)]
    assert result.stdout.splitlines()[-2:] == [f"wrote {out}/campaign.json",
                                               f"wrote {out}/campaign.md"]
    assert "ADK-CLAIM-002  seeds 1-4; smallest: seed" in result.stdout


# --- resuming -----------------------------------------------------------------------------------


def _copy(local: Local, tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(local[0], out)  # copy2: modification times kept
    return out


def _mtimes(out: Path) -> dict[str, int]:
    return {str(p.relative_to(out)): p.stat().st_mtime_ns
            for p in (out / "seeds").rglob("report.json")}


@pytest.mark.long
@LOCAL_GROUP
def test_a_second_run_on_the_same_directory_runs_no_seed_again(
        local: Local, tmp_path: Path) -> None:
    out = _copy(local, tmp_path)
    before = _mtimes(out)
    result = fencepost("campaign", "adk-ledger", "--adapter", MUTANT, "--seeds", "1..4",
                       "--jobs", "2", "--out", str(out), *FAST)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        f"... skipped 4 seeds already saved in {out}/seeds: 1, 2, 3, 4"]
    assert _mtimes(out) == before
    data = read_json(out / "campaign.json")
    assert data["counts"]["ran"] == 0 and data["seeds"]["done"] == [1, 2, 3, 4]
    [now], [then] = data["failing"], read_json(local[0] / "campaign.json")["failing"]
    assert now["smallest"].pop("replay").endswith(f"--example-db {out / 'example-db'}")
    assert then["smallest"].pop("replay").endswith(
        f"--example-db {local[0] / 'example-db'}")
    assert now == then


@pytest.mark.long
@LOCAL_GROUP
def test_a_shard_of_a_saved_campaign_is_its_slice(
        local: Local, tmp_path: Path) -> None:
    out = _copy(local, tmp_path)
    result = fencepost("campaign", "adk-ledger", "--adapter", MUTANT, "--seeds", "1..4",
                       "--shard", "2/2", "--out", str(out), *FAST)
    assert result.returncode == 1, result.stderr
    data = read_json(out / "campaign.json")
    assert data["seeds"]["planned"] == [2, 4] and data["seeds"]["done"] == [2, 4]
    assert data["failing"][0]["seeds"] == [2, 4]


@pytest.mark.long
@LOCAL_GROUP
def test_more_seeds_on_the_same_directory_run_only_the_new_ones(
        local: Local, tmp_path: Path) -> None:
    out = _copy(local, tmp_path)
    before = _mtimes(out)
    result = fencepost("campaign", "adk-ledger", "--adapter", MUTANT, "--seeds", "1..5",
                       "--jobs", "1", "--out", str(out), *FAST)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == f"... skipped 4 seeds already saved in {out}/seeds: 1, 2, 3, 4"
    assert [m[1] for m in map(DONE.match, lines[1:]) if m] == ["5"] and len(lines) == 2
    after = _mtimes(out)
    assert {k: after[k] for k in before} == before and set(after) - set(before) == {
        "seeds/5/report.json"}
    assert read_json(out / "campaign.json")["failing"][0]["seeds"] == [1, 2, 3, 4, 5]


@pytest.mark.long
@LOCAL_GROUP
@pytest.mark.parametrize(("words", "differs"), [
    (["adk-ledger", "--adapter", "memory"], f"adapter {MUTANT} there, memory here"),
    (["snodo-tasks", "--adapter", "memory"], "contract adk-ledger there, snodo-tasks here"),
    (["adk-ledger", "--adapter", MUTANT, "--profile", "standard"],
     "profile quick there, standard here"),
    (["adk-ledger", "--adapter", MUTANT, "--option", "finish_phases=any"],
     "options {} there, {finish_phases=any} here"),
])
def test_a_directory_of_another_campaign_is_refused(
        local: Local, words: list[str],
        differs: str) -> None:
    out = local[0]
    before = _mtimes(out)
    code = main(["campaign", *words, "--seeds", "1..4", "--out", str(out), "--concurrency",
                 "0", "--quiet"])
    assert code == 2
    assert _mtimes(out) == before


def test_a_directory_of_another_campaign_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c"
    out.mkdir()
    (out / "settings.json").write_text(json.dumps({
        "contract": "snodo-tasks", "adapter": "memory", "profile": "quick", "options": {},
        "concurrency": 0, "ops": None, "strict": False, "call_timeout_s": 60.0,
        "shrink_budget": None}))
    assert main(["campaign", "adk-ledger", "--adapter", "memory", "--out", str(out),
                 "--concurrency", "0"]) == 2
    assert capsys.readouterr().err == (
        f"fencepost: error: --out {out} holds another campaign (contract snodo-tasks there, "
        "adk-ledger here): name another --out, or remove it to start over\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    assert main(["campaign", "adk-ledger", "--out", str(tmp_path / "other")]) == 2
    assert capsys.readouterr().err == (
        f"fencepost: error: --out {tmp_path / 'other'} holds other files and no settings.json: "
        "name a new or empty directory, or a campaign's\n")


# --- the gathering, on reports made for it --------------------------------------------------


def _report(seed: int, verdicts: list[ClauseVerdict]) -> RunReport:
    return RunReport("adk-ledger", "memory", "0", "quick", seed, {}, frozenset(), {}, 0, 0,
                     tuple(verdicts), f"fencepost check adk-ledger --seed {seed}")


def _failed(clause: Clause, steps: int, seed: int) -> ClauseVerdict:
    trace = tuple(TraceStep(actor="clock", at=k, note=f"step {k} of seed {seed}")
                  for k in range(steps))
    return ClauseVerdict(clause, FAIL, "broken", 1, Failure("machine", "broken", trace),
                         {"edge": 1})


def test_the_smallest_is_fewest_steps_then_lowest_seed_and_unknowns_keep_their_seeds() -> None:
    x = Clause("X-1", "x", "x holds", ("machine",), situations=("edge",))
    y = Clause("Y-1", "y", "y holds", ("machine",), situations=("edge",))
    reports = {
        2: _report(2, [_failed(x, 5, 2), ClauseVerdict(y, UNKNOWN, "timed out", 0, None,
                                                        {"edge": 0})]),
        4: _report(4, [_failed(x, 3, 4), ClauseVerdict(y, PASS, "", 2, None, {"edge": 2})]),
        3: _report(3, [_failed(x, 3, 3), ClauseVerdict(y, UNKNOWN, "lost", 0, None,
                                                        {"edge": 0})]),
        7: _report(7, [ClauseVerdict(x, PASS, "", 1, None, {"edge": 0}),
                       ClauseVerdict(y, PASS, "", 1, None, {"edge": 5})]),
    }
    summary = summarize({"contract": "adk-ledger"}, (2, 3, 4, 5, 7), reports, {5: "died"}, {},
                        seconds=60.0, ran=5, example_db=None, complete=True)
    [found] = summary.failing
    assert (found.clause, found.seeds, found.seed, found.steps) == ("X-1", (2, 3, 4), 3, 3)
    assert found.replay == "fencepost check adk-ledger --seed 3"
    assert "step 2 of seed 3" in found.rendered
    [unknown] = summary.unknown
    assert unknown.clause == "Y-1" and dict(unknown.reasons) == {2: "timed out", 3: "lost"}
    totals = {(s.clause, s.situation): (s.seeds_reached, s.seeds, s.reached)
              for s in summary.situations}
    assert totals == {("X-1", "edge"): (3, 4, 3), ("Y-1", "edge"): (2, 4, 7)}
    assert summary.done == (2, 3, 4, 7) and summary.not_run == ()
    assert summary.exit_code == 1 and summary.seeds_per_minute == 5.0
    assert seed_ranges([1, 2, 3, 5, 7, 8]) == "1-3, 5, 7-8"


def test_exit_codes_follow_check() -> None:
    clause = Clause("X-1", "x", "x holds", ("machine",))
    passed = _report(1, [ClauseVerdict(clause, PASS, "", 1)])
    unknown = _report(2, [ClauseVerdict(clause, UNKNOWN, "lost", 0)])

    def code(reports: dict[int, RunReport], planned: tuple[int, ...],
             lost: dict[int, str] | None = None, errors: dict[int, str] | None = None) -> int:
        return summarize({}, planned, reports, lost or {}, errors or {}, seconds=1.0, ran=1,
                         example_db=None, complete=True).exit_code

    assert code({1: passed}, (1,)) == 0
    assert code({1: passed, 2: unknown}, (1, 2)) == 3
    assert code({1: passed}, (1, 2), lost={2: "died"}) == 3
    assert code({1: passed}, (1, 2)) == 3  # seed 2 not run
    assert code({1: passed}, (1, 2), errors={2: "bug"}) == 4


# --- the shared example database ------------------------------------------------------------


@pytest.fixture
def redis_url() -> Any:
    """A Redis URL with a prefix of this test's own; its keys are removed afterwards."""
    redis = required("redis")
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    try:
        client.ping()
    except redis.RedisError as e:
        missing(f"Redis unreachable at 127.0.0.1:6379: {e}", "server")
    prefix = f"fencepost-test-{uuid.uuid4().hex}"
    try:
        yield f"redis://127.0.0.1:6379/0?prefix={prefix}", client, prefix
    finally:
        for key in client.scan_iter(match=f"{prefix}:*"):
            client.delete(key)
        client.close()


@pytest.mark.long
def test_a_failure_found_in_one_campaign_is_replayed_first_in_the_next(
        redis_url: Any, tmp_path: Path) -> None:
    url, client, prefix = redis_url
    # Its state machine breaks ADK-DURABLE-001 (no scenario does): the counterexample shown
    # is the machine's own.
    mutant = "mutant:get_touches_record"

    def campaign(seed: int, out: str, *extra: str) -> int:
        return main(["campaign", "adk-ledger", "--adapter", mutant, "--seeds", f"{seed}..{seed}",
                     "--jobs", "1", "--out", str(tmp_path / out), "--quiet", *extra, *FAST])

    def steps(out: str, seed: int) -> list[tuple[str, str]]:
        report = load_report(tmp_path / out / "seeds" / str(seed) / "report.json")
        [verdict] = [v for v in report.verdicts if v.clause.id == "ADK-DURABLE-001"]
        # Ids carry the example's number (x877-i0): the same steps in another run differ there.
        return [(t.actor, re.sub(r"x\d+-", "x-", t.op.describe()))
                for t in verdict.failure.trace if t.op is not None]

    assert campaign(1, "a", "--example-db", url) == 1  # found and shrunk, then stored
    keys = sorted(client.scan_iter(match=f"{prefix}:*"))
    assert keys, "the first campaign's state machine saved no failure"
    # Seed 6 without shrinking (its state machine breaks it at quick; not every seed's does):
    # what it finds itself comes raw (the control, with no database);
    # with the database it reports the stored, shrunk counterexample, replayed first.
    assert campaign(6, "b", "--example-db", url, "--no-shrink") == 1
    assert campaign(6, "c", "--example-db", "none", "--no-shrink") == 1
    assert steps("b", 6) == steps("a", 1)
    assert len(steps("c", 6)) > len(steps("a", 1))
    # And then it still made all its 60 examples: a campaign's later seeds put the store to
    # the test, they do not only replay.
    assert load_report(tmp_path / "b" / "seeds" / "6" / "report.json").examples >= 60
    assert sorted(client.scan_iter(match=f"{prefix}:*")) == keys
    assert read_json(tmp_path / "b" / "campaign.json")["example_db"] == url


def test_a_redis_example_database_that_cannot_be_reached_is_one_line() -> None:
    from fencepost.example_db import example_database, redis_prefix

    with pytest.raises(ConfigurationError, match=r"^--example-db redis://127\.0\.0\.1:1/0\?"
                       r"prefix=x: cannot reach Redis \("):
        example_database("redis://127.0.0.1:1/0?prefix=x")
    assert redis_prefix("redis://h:1/0?prefix=ci-7&socket_timeout=2") == (
        "redis://h:1/0?socket_timeout=2", b"ci-7:")
    assert redis_prefix("redis://h:1/0") == ("redis://h:1/0", b"hypothesis-example:")
    with pytest.raises(ConfigurationError, match="give one non-empty prefix=NAME"):
        redis_prefix("redis://h:1/0?prefix=")


def test_a_seed_whose_store_ends_its_process_is_lost_and_every_seed_accounted_for(
        tmp_path: Path) -> None:
    from fencepost.campaign_local import LOST

    out = tmp_path / "c"
    external = str(Path(__file__).parent / "external")
    result = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "campaign", "adk-ledger", "--adapter",
         "hostile:adk_ledger__os_exit", "--seeds", "1..2", "--jobs", "2", "--out", str(out),
         *FAST], capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": external})
    assert result.returncode == 3, result.stderr
    data = read_json(out / "campaign.json")
    # both broke the pool together, then each broke it alone
    assert data["seeds"] == {"planned": [1, 2], "done": [], "failed": [],
                             "lost": {"1": LOST, "2": LOST}, "errors": {}, "not_run": [],
                             "workers": {}}
    assert data["complete"] is True and data["exit_code"] == 3
    assert not list((out / "seeds").iterdir())
    assert sorted(line.split(" lost: ")[0] for line in result.stderr.splitlines()) == [
        "... seed 1", "... seed 2"]


# --- stopping -------------------------------------------------------------------------------


@pytest.mark.long
def test_ctrl_c_stops_the_workers_and_keeps_the_seeds_that_finished(tmp_path: Path) -> None:
    psutil = required("psutil")  # installed with Dask distributed
    out = tmp_path / "c"
    process = subprocess.Popen(
        [sys.executable, "-m", "fencepost.cli", "campaign", "adk-ledger", "--adapter", MUTANT,
         "--seeds", "1..12", "--jobs", "2", "--out", str(out), "--example-db", "none", *FAST],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert DONE.match(first.rstrip("\n")), first
        family = psutil.Process(process.pid).children(recursive=True)
        assert len(family) >= 3  # the supervised child and its two workers (and their helpers)
        process.send_signal(signal.SIGINT)
        rest = process.stderr.read()
        assert process.wait(120) == 130, rest
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    psutil.wait_procs(family, timeout=30)
    assert [p.pid for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE] == []
    assert rest.splitlines()[-1] == (
        f"fencepost: interrupted by SIGINT; the seeds that finished are saved in {out}: run the "
        "same command again to resume")
    data = read_json(out / "campaign.json")
    assert data["complete"] is False
    saved = sorted(int(p.parent.name) for p in (out / "seeds").glob("*/report.json"))
    assert data["seeds"]["done"] == saved and 1 <= len(saved) < 12
    assert data["seeds"]["not_run"] == [s for s in range(1, 13) if s not in saved]
