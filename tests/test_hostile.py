"""The kit against hostile and broken stores: never a false pass, never a hung kit.

Each store is one of :mod:`hostile` (tests/external/hostile.py): a correct memory store that
misbehaves in one way. Every run goes through the ``fencepost`` command (supervised child,
signals, reports), and every test asserts the exit code, the verdicts and the report.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fencepost.adapters.processes import _wait_gone, descendants
from fencepost.registry import contract_named

EXTERNAL = str(Path(__file__).parent / "external")
MODULES = {"adk-ledger": "adk_ledger", "snodo-tasks": "snodo_tasks",
           "ledgence-tasks": "ledgence_tasks"}
LIN = {"adk-ledger": "ADK-LIN-001", "snodo-tasks": "SNODO-LIN-001",
       "ledgence-tasks": "LDG-LIN-001"}
NOTHING_ANSWERED = (r"concurrent: ([\d,]+) of \1 calls faulted \(\1 %s\), more than the "
                    r"[\d,]+ \(1%% of the calls\) the quick profile allows: a faulted call "
                    r"is not an answer, so the history was not checked for linearizability")
"""The reason of a linearizability clause when every call of the concurrent run faulted."""
HANG_GUARD_S = 600
"""Only a guard against a hung kit (the test then fails); nothing is timed."""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=EXTERNAL, TMPDIR=str(tmp_path),
               HOSTILE_NAMESPACE_LOG=str(tmp_path / "namespaces"))
    env.update(extra)
    return env


def fencepost(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fencepost.cli", *args], cwd=tmp_path,
                          env=_env(tmp_path), capture_output=True, text=True,
                          timeout=HANG_GUARD_S)


def check(tmp_path: Path, contract_name: str, behaviour: str, *extra: str
          ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``fencepost check`` of a hostile store with a report; the run and its parsed report."""
    adapter = f"hostile:{MODULES[contract_name]}__{behaviour}"
    result = fencepost(tmp_path, "check", contract_name, "--adapter", adapter, "--seed", "3",
                       "--report", "R", "--quiet", *extra)
    assert "Traceback" not in result.stderr, result.stderr
    assert "internal error" not in result.stderr, result.stderr
    return result, complete_report(tmp_path / "R", contract_name)


def complete_report(directory: Path, contract_name: str) -> dict[str, Any]:
    """The report in ``directory`` parses (JSON and JUnit) and has a verdict for every
    clause of the contract."""
    report: dict[str, Any] = json.loads((directory / "report.json").read_text())
    ids = [c.id for c in contract_named(contract_name).clauses]
    assert [c["id"] for c in report["clauses"]] == ids
    cases = ET.parse(directory / "junit.xml").getroot().iter("testcase")
    assert sorted(c.get("name") or "" for c in cases) == sorted(ids)
    assert (directory / "report.md").read_text().strip()
    return report


def verdicts(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["id"]: (c["status"], c["reason"]) for c in report["clauses"]}


# -- a clause passes only on answered evidence --------------------------------------------------


@pytest.mark.parametrize("contract_name", sorted(MODULES))
def test_an_always_unavailable_store_gets_no_pass_at_all(tmp_path: Path,
                                                         contract_name: str) -> None:
    result, report = check(tmp_path, contract_name, "unavailable")
    assert result.returncode == 3, result.stdout + result.stderr
    assert report["summary"]["pass"] == 0 and report["summary"]["fail"] == 0
    status, reason = verdicts(report)[LIN[contract_name]]
    assert status == "unknown"
    assert re.fullmatch(NOTHING_ANSWERED % "backend_unavailable", reason), reason


@pytest.mark.long
@pytest.mark.parametrize("contract_name", sorted(MODULES))
def test_a_concurrent_run_nothing_answered_proves_nothing(tmp_path: Path,
                                                          contract_name: str) -> None:
    result, report = check(tmp_path, contract_name, "concurrent_unavailable")
    assert result.returncode == 3, result.stdout + result.stderr
    status, reason = verdicts(report)[LIN[contract_name]]
    assert status == "unknown"
    assert re.fullmatch(NOTHING_ANSWERED % "backend_unavailable", reason), reason
    assert report["summary"]["fail"] == 0


def test_a_mostly_unavailable_store_is_unknown_never_a_pass(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "mostly_unavailable")
    assert result.returncode == 3, result.stdout + result.stderr
    status, reason = verdicts(report)["ADK-LIN-001"]
    assert status == "unknown"
    faulted, calls = map(int, re.findall(r"\d+", reason.replace(",", ""))[:2])
    assert faulted > 0.7 * calls and reason == (
        f"concurrent: {faulted:,} of {calls:,} calls faulted ({faulted:,} backend_unavailable), "
        f"more than the {calls // 100:,} (1% of the calls) the quick profile allows: a "
        "faulted call is not an answer, so the history was not checked for linearizability")


def test_timeouts_in_every_concurrent_call_are_no_evidence(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "timeout_error")
    assert result.returncode == 3, result.stdout + result.stderr
    status, reason = verdicts(report)["ADK-LIN-001"]
    assert status == "unknown"
    assert re.fullmatch(NOTHING_ANSWERED % "TimeoutError", reason), reason


# -- a store cannot end the run -----------------------------------------------------------------


@pytest.mark.parametrize(("behaviour", "kind"), [("sys_exit", "SystemExit"),
                                                 ("keyboard_interrupt", "KeyboardInterrupt")])
def test_a_store_raising_an_exit_fails_its_clause_not_the_kit(tmp_path: Path, behaviour: str,
                                                             kind: str) -> None:
    result, report = check(tmp_path, "adk-ledger", behaviour)
    assert result.returncode == 1, result.stdout + result.stderr
    failed = [r for s, r in verdicts(report).values() if s == "fail"]
    assert verdicts(report)["ADK-CREATE-001"] == (
        "fail", f"create raised {kind}{': 0' if kind == 'SystemExit' else ''}; the contract "
        "requires ok")
    # only what its first calls (hostile.WARM_UP) answered before it began to raise passes
    assert failed and sorted(c for c, (s, _) in verdicts(report).items() if s == "pass") == [
        "ADK-CREATE-002", "ADK-GET-002", "ADK-GET-003", "ADK-OWNER-001", "ADK-REV-001"]
    assert "answered raised" not in result.stdout


def test_an_exception_that_cannot_be_shown_fails_its_clause_not_the_kit(
        tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "unspeakable_error")
    assert result.returncode == 1, result.stdout + result.stderr
    assert verdicts(report)["ADK-CREATE-001"] == (
        "fail", "create raised Unspeakable: <a Unspeakable whose str() raised>; the contract "
        "requires ok")


@pytest.mark.parametrize(("behaviour", "reason"), [
    ("fancy_error", "create raised FancyError: boom; the contract requires ok"),
    ("unreadable_refusal", "create answered a refusal whose code, detail or payload could not "
                           "be read (RuntimeError); the contract requires ok"),
])
def test_an_exception_the_store_made_strange_fails_its_clause_not_the_kit(
        tmp_path: Path, behaviour: str, reason: str) -> None:
    """An exception whose str() is a str subclass that cannot be formatted or stripped, a
    refusal whose code cannot be read: the call's failure, said in plain text (a traceback and
    exit 4 before)."""
    result, report = check(tmp_path, "adk-ledger", behaviour)
    assert result.returncode == 1, result.stdout + result.stderr
    assert verdicts(report)["ADK-CREATE-001"] == ("fail", reason)


def test_a_store_that_lowers_the_recursion_limit_lowers_it_for_itself(tmp_path: Path) -> None:
    """Each call sets the process's recursion limit to 60 as it answers: the kit puts it back
    as the call returns, and the store, correct otherwise, passes (the kit's own walks ran out
    of stack before: exit 4). The limit is set after the store's own work: the memory store
    under it copies a deep checkpoint by recursion, which 60 frames do not allow."""
    result, report = check(tmp_path, "adk-ledger", "lowers_recursion_limit")
    assert result.returncode == 0, result.stdout + result.stderr
    assert report["summary"] == {"pass": 43, "fail": 0, "unknown": 0, "unsupported": 2}


@pytest.mark.parametrize(("behaviour", "what"), [
    ("stops_the_clock", "create"),  # its fourth call (hostile.WARM_UP)
    ("stuck_owner_eq", "a store value's __eq__"),
])
def test_what_a_store_does_to_the_clock_or_its_eq_cannot_hang_the_run(
        tmp_path: Path, behaviour: str, what: str) -> None:
    """A store that replaces time.monotonic, then hangs; a store whose own value's __eq__
    never returns (asked when the kit compares two of them, after the calls returned): the
    call timeout stops the run with unknown (both hung the kit before)."""
    result, report = check(tmp_path, "adk-ledger", behaviour, "--call-timeout", "1")
    assert result.returncode == 3, result.stdout + result.stderr
    reasons = [r for s, r in verdicts(report).values() if s == "unknown"]
    said = f"{what} did not return in 1 s (--call-timeout); the run stopped there"
    assert reasons and all(said in r for r in reasons), reasons
    assert report["summary"]["fail"] == 0


@pytest.mark.parametrize(("behaviour", "how", "jobs"), [
    ("os_exit", "exited with status 7", "1"),
    ("os_exit0", "exited with status 0", "1"),
    ("segfault", "was killed by SIGSEGV", "1"),
    ("os_exit", "(a --jobs process) exited with status 7", "2"),
])
def test_a_store_that_ends_the_process_never_looks_like_success(tmp_path: Path, behaviour: str,
                                                                how: str, jobs: str) -> None:
    result, report = check(tmp_path, "adk-ledger", behaviour, "--jobs", jobs)
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"the run ended abruptly: its process {how} during " in result.stderr
    assert {s for s, _ in verdicts(report).values()} == {"unknown"}
    assert all(how in r for _, r in verdicts(report).values())


# -- answers are values: no object of the store's decides a comparison -------------------------

NOT_A_VALUE = "after create, get answered something that is not a contract value: "


@pytest.mark.parametrize(("behaviour", "why"), [
    ("outcome_equal_to_all", "a EqualToAll that says it equals an object it has never seen"),
    ("answer_equal_to_all", "a EqualToAll that says it equals an object it has never seen"),
    ("outcome_eq_raises", "a EqRaises whose __eq__ raised RuntimeError"),
    ("answer_repr_raises", "a ReprRaises whose __repr__ raised RuntimeError"),
    ("outcome_hash_raises", "a HashRaises whose __hash__ raised RuntimeError"),
    ("deep_checkpoint", "a value nested more than 100 deep"),
    ("endless_outcome", "a Endless of more than 100,000 items"),
])
def test_an_answer_that_is_no_value_fails_its_clause(tmp_path: Path, behaviour: str,
                                                     why: str) -> None:
    result, report = check(tmp_path, "adk-ledger", behaviour)
    assert result.returncode == 1, result.stdout + result.stderr
    status, reason = verdicts(report)["ADK-CREATE-001"]
    assert status == "fail" and reason.startswith(f"{NOT_A_VALUE}{why}; the contract requires ")
    assert verdicts(report)["ADK-VALUE-001"][0] == "fail"


@pytest.mark.parametrize(("behaviour", "shown"), [("lying_phase", "phase='bogus'"),
                                                  ("lying_id", "invocation_id='not-the-id'")])
def test_a_str_that_says_it_equals_anything_is_read_as_its_text(tmp_path: Path, behaviour: str,
                                                               shown: str) -> None:
    result, report = check(tmp_path, "adk-ledger", behaviour)
    assert result.returncode == 1, result.stdout + result.stderr
    status, reason = verdicts(report)["ADK-CREATE-001"]
    answered, _, required = reason.partition("; the contract requires ")
    assert status == "fail" and shown in answered and shown not in required


@pytest.mark.parametrize(("behaviour", "shown"), [("generator_answer", "<generator object"),
                                                  ("unreadable_pickle_answer",
                                                   "UnreadablePickle()")])
def test_an_answer_no_process_can_send_fails_its_clause_with_jobs(
        tmp_path: Path, behaviour: str, shown: str) -> None:
    """A record that is a generator, or that pickles and cannot be read back: with --jobs 2
    the part's result still comes back (its text in its place), and the clause fails as with
    one process."""
    result, report = check(tmp_path, "adk-ledger", behaviour, "--jobs", "2")
    assert result.returncode == 1, result.stdout + result.stderr
    status, reason = verdicts(report)["ADK-CREATE-001"]
    assert status == "fail" and shown in reason, reason


@pytest.mark.parametrize("contract_name", sorted(MODULES))
@pytest.mark.parametrize("behaviour", ["workers_get_none", "workers_get_fields_of_another_type",
                                       "racers_get_fields_of_another_type"])
def test_answers_of_another_shape_in_threads_fail_clauses_not_the_kit(
        tmp_path: Path, contract_name: str, behaviour: str) -> None:
    """The concurrent workload and the races read only answers of the declared shape (the
    rest is the model's to judge): no crash of the kit (exit 4), and the concurrent run's
    linearizability fails (a racer's thread is a worker's too: both get the answers)."""
    result, report = check(tmp_path, contract_name, behaviour, "--jobs", "1")
    assert result.returncode == 1, result.stdout + result.stderr
    failed = {c for c, (s, _) in verdicts(report).items() if s == "fail"}
    assert LIN[contract_name] in failed, failed


def test_an_answer_put_right_after_it_returned_is_judged_as_it_was(tmp_path: Path) -> None:
    """Only the concurrent run's answers are wrong (a revision 1000 too high), and the store
    puts each right in the same object 2 ms later: the history holds what was answered."""
    result, report = check(tmp_path, "adk-ledger", "repaired_later")
    assert result.returncode == 1, result.stdout + result.stderr
    failed = {c for c, (s, _) in verdicts(report).items() if s == "fail"}
    assert failed == {"ADK-LIN-001"}
    assert "is not linearizable" in verdicts(report)["ADK-LIN-001"][1]
    assert report["summary"]["unknown"] == 0


def test_arguments_a_store_changes_later_are_never_the_kits(tmp_path: Path) -> None:
    """After each call the store writes ``scribbled`` into the dicts it was given. The kit
    hands a store copies of its arguments, so what the store writes into is not the kit's ops
    or the model's view of them; the memory store under it copies what it keeps, so the store
    is correct, and passes every clause."""
    result, report = check(tmp_path, "adk-ledger", "scribbles_arguments")
    assert result.returncode == 0, result.stdout + result.stderr
    assert report["summary"] == {"pass": 43, "fail": 0, "unknown": 0, "unsupported": 2}


def test_a_huge_answer_is_kept_cut_in_bounded_memory(tmp_path: Path) -> None:
    """Every record read answers a 50 MiB outcome: the kit keeps its size, digest and ends
    (what a report shows), and neither its memory nor the history grows with it. (40
    concurrent calls: kept whole, their answers alone would be 2 GiB; the profile's 300 took
    10 s of the test's 19.)"""
    out, err = tmp_path / "out", tmp_path / "err"
    with open(out, "w") as o, open(err, "w") as e:
        command = subprocess.Popen(
            [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter",
             "hostile:adk_ledger__huge_outcome", "--seed", "3", "--report", "R", "--quiet",
             "--jobs", "1", "--ops", "40"], cwd=tmp_path, env=_env(tmp_path), stdout=o,
            stderr=e)
        _, status, usage = os.wait4(command.pid, 0)  # the peak of the command and its child
    assert os.waitstatus_to_exitcode(status) == 1, out.read_text() + err.read_text()
    report = complete_report(tmp_path / "R", "adk-ledger")
    state, reason = verdicts(report)["ADK-CREATE-001"]
    assert state == "fail" and "outcome=<str of 52428800 characters, cut: sha256 " in reason
    assert (tmp_path / "R" / "history.jsonl").stat().st_size < 1 << 20
    assert usage.ru_maxrss < 1 << 20, f"{usage.ru_maxrss >> 10} MiB"  # KiB; 3 GiB uncut


def test_a_huge_text_of_a_str_subclass_is_kept_cut_too(tmp_path: Path) -> None:
    """The 50 MiB outcome as a str subclass: cut like plain text (kept whole before, the
    command used 3.8 GB and ended with a MemoryError). 40 concurrent calls, as above."""
    result, report = check(tmp_path, "adk-ledger", "huge_subclass_outcome", "--jobs", "1",
                           "--ops", "40")
    assert result.returncode == 1, result.stdout + result.stderr
    state, reason = verdicts(report)["ADK-CREATE-001"]
    assert state == "fail" and "outcome=<str of 52428800 characters, cut: sha256 " in reason


def test_a_huge_integer_is_kept_cut(tmp_path: Path) -> None:
    """A revision of 5,001 digits (more than Python writes in decimal): kept as its size in
    bits, digest and hexadecimal ends, and the revision clause fails on it (showing the answer
    raised ValueError before: exit 4)."""
    result, report = check(tmp_path, "adk-ledger", "huge_revision")
    assert result.returncode == 1, result.stdout + result.stderr
    state, reason = verdicts(report)["ADK-REV-001"]
    assert state == "fail" and "revision=<int of 16610 bits, cut: sha256 " in reason


# -- a store that answers differently to the same steps ----------------------------------------


def test_a_store_that_answers_differently_to_the_same_steps_fails_unshrunk(
        tmp_path: Path) -> None:
    """Every 20th get of a process answers not_found: Hypothesis, replaying a failure to
    shrink it, meets other answers (its flakiness errors, once the kit's own error). Which
    clauses the state machine's flaky gets land on follows the gets before them (one job keeps
    their order; seed 1, one draw per step: the read-back after a create, ADK-CREATE-001);
    each of them says where the replay went another way (its times from the example's start:
    the replay runs later) and that its counterexample is not shrunk."""
    result, report = check(tmp_path, "adk-ledger", "flaky_gets", "--seed", "1", "--jobs", "1")
    assert result.returncode == 1, result.stdout + result.stderr
    unshrunk = {clause: reason for clause, (status, reason) in verdicts(report).items()
                if status == "fail" and "not shrunk" in reason}
    assert sorted(unshrunk) == ["ADK-CREATE-001"], unshrunk
    for reason in unshrunk.values():
        assert re.fullmatch(
            r"after \w+, get answered error not_found; the contract requires ok\(.*\)\n"
            r"\(the store answered differently to the same steps when they were replayed: step "
            r"\d+, \[t\+\d+ ms\] check: get\(invocation_id='x-i\d'\), ok\(Invocation\(.*\)\) the "
            r"first time \(as the contract requires\) and error not_found in the replay; this "
            r"counterexample is the first run's, not shrunk\)", reason), reason


def test_a_factory_that_cannot_reopen_fails_durability(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "reopen_raises")
    assert result.returncode == 1, result.stdout + result.stderr
    status, reason = verdicts(report)["ADK-DURABLE-001"]
    assert status == "fail" and re.fullmatch(
        r"reopening the store raised ReopenFailed: cannot reopen \w+ \(hostile store\)", reason)
    assert {s for s, _ in verdicts(report).values()} == {"pass", "fail", "unknown",
                                                         "unsupported"}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_factory_that_cannot_open_new_namespaces_leaves_their_checks_unknown(
        tmp_path: Path, jobs: str) -> None:
    """Past its first namespaces the factory raises (in each process of the run): each check
    whose store would not open is unknown for the factory's error, on one process or on two,
    with a report (on two processes, a part whose first open failed ended the whole run with
    exit 2 and no report before: the verdicts the other parts reached were lost)."""
    result, report = check(tmp_path, "adk-ledger", "new_namespaces_raise", "--jobs", jobs)
    assert result.returncode == 3, result.stdout + result.stderr
    found = verdicts(report)
    unknown = {clause: reason for clause, (status, reason) in found.items()
               if status == "unknown"}
    assert unknown and {s for s, _ in found.values()} <= {"pass", "unknown", "unsupported"}
    for reason in unknown.values():
        assert re.fullmatch(r"[\w:]+: the adapter factory raised OpenFailed: no room for \w+ "
                            r"\(hostile store\)( \(and then .*\))?", reason), reason
    assert found["ADK-LIN-001"][0] == "unknown"  # the concurrent run opens namespaces last


# -- hangs: a verdict, never a hung kit ---------------------------------------------------------


def test_a_call_that_never_returns_stops_the_run_with_unknown(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "hang", "--call-timeout", "1")
    assert result.returncode == 3, result.stdout + result.stderr
    reasons = [r for s, r in verdicts(report).values() if s == "unknown"]
    assert reasons and all("did not return in 1 s" in r for r in reasons)
    assert report["summary"]["fail"] == 0


def test_a_racer_that_never_returns_is_unknown_not_a_failure(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "hang_in_threads", "--call-timeout", "1")
    assert result.returncode == 3, result.stdout + result.stderr
    assert report["summary"]["fail"] == 0
    raced = [r for s, r in verdicts(report).values() if r.startswith("race:")]
    assert raced and all("did not return in 1 s" in r for r in raced)


def test_a_stuck_concurrent_worker_makes_linearizability_unknown(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "hang_in_concurrent", "--call-timeout", "1")
    assert result.returncode == 3, result.stdout + result.stderr
    status, reason = verdicts(report)["ADK-LIN-001"]
    assert status == "unknown" and "did not return in 1 s" in reason
    assert report["summary"]["fail"] == 0


def test_a_factory_close_that_never_returns_is_left_behind(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "factory_close_hangs", "--call-timeout", "1")
    assert result.returncode == 2, result.stdout + result.stderr
    assert ("the adapter's fault: the adapter factory's close did not return in 1 s "
            "(--call-timeout); it was left behind") in result.stdout
    assert report["summary"]["fail"] == report["summary"]["unknown"] == 0


def test_system_exit_in_discard_is_the_adapters_fault(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "discard_exits")
    assert result.returncode == 2, result.stdout + result.stderr
    assert re.search(r"the adapter's fault in (\w+|\d+ namespaces \([^)]*\)): the factory's "
                     r"discard raised SystemExit: 3",
                     result.stdout)
    assert report["summary"]["pass"] == 43 and report["summary"]["unknown"] == 0


def test_threads_a_store_leaves_running_do_not_keep_the_kit_alive(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "leaves_thread", "--jobs", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [line for line in result.stderr.splitlines() if "warning" in line] == [
        "fencepost: warning: the store left 1 thread(s) running ('hostile-poller'); exiting "
        "without waiting for them"]
    assert report["summary"]["pass"] == 43


def test_threads_a_store_leaves_running_do_not_keep_the_pool_alive(tmp_path: Path) -> None:
    """Each pool process that ran a part started the thread (both, unless one process took
    every part): each says so, and is killed at the end of the run."""
    result, report = check(tmp_path, "adk-ledger", "leaves_thread", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    warned = [line for line in result.stderr.splitlines() if "warning" in line]
    processes = len(warned) - 1
    assert processes in (1, 2) and warned == [
        "fencepost: warning: the store left 1 thread(s) running in a --jobs process "
        "('hostile-poller')"] * processes + [
        f"fencepost: warning: {processes} --jobs process(es) had not exited 10 s after their "
        "part (the store left a thread running?); killed"]
    assert report["summary"]["pass"] == 43


# -- signals: data dropped, partial report, no child left ---------------------------------------


def _fp_tables(url: str, namespaces: list[str]) -> list[str]:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as c:
            names = [r[0] for r in c.execute(sa.text(
                "select tablename from pg_tables where tablename like 'fp\\_%'"))]
    finally:
        engine.dispose()
    return [n for n in names if any(ns in n for ns in namespaces)]


def _stuck(tmp_path: Path, pg_url: str, behaviour: str, jobs: str, stuck: Callable[[str], bool],
           *extra: str, **env: str) -> tuple[subprocess.Popen[str], list[int], list[str]]:
    """A check of the hostile ``behaviour`` on PostgreSQL with ``jobs`` (and ``extra``
    arguments), once a line of its stderr says it is ``stuck``; the processes of its tree and
    the namespaces it made."""
    top = subprocess.Popen(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter",
         f"hostile:adk_ledger__{behaviour}__postgres", "--seed", "3", "--call-timeout", "600",
         "--jobs", jobs, *extra],
        cwd=tmp_path, env=_env(tmp_path, FENCEPOST_PG_URL=pg_url, **env),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert top.stderr is not None
    for line in top.stderr:
        if stuck(line):
            break
    else:
        pytest.fail(f"the run ended before it was stuck: {top.wait()}")
    tree = descendants(top.pid)
    # the child and the pool (forked: a spawned pool also has multiprocessing's tracker)
    assert len(tree) >= (3 if jobs == "2" else 1), tree
    return top, tree, sorted(set((tmp_path / "namespaces").read_text().split()))


def _stuck_in_the_concurrent_burst(tmp_path: Path, pg_url: str, jobs: str = "2", *extra: str
                                   ) -> tuple[subprocess.Popen[str], list[int], list[str]]:
    """A check whose concurrent run is stuck, once it got there (its progress says so, one
    line per phase: stderr is not a terminal)."""
    return _stuck(tmp_path, pg_url, "hang_in_concurrent", jobs,
                  lambda line: line.startswith("... concurrent"), *extra)


def _stuck_at_a_call(tmp_path: Path, pg_url: str) -> tuple[subprocess.Popen[str], list[int],
                                                               list[str]]:
    """A check (one process) whose store hangs at its fourth call, once the call hangs (the
    store says so)."""
    return _stuck(tmp_path, pg_url, "hang", "1",
                  lambda line: line == "hostile: a call hangs\n", "--quiet",
                  HOSTILE_SAY_HANG="1")


@pytest.mark.long
@pytest.mark.parametrize(("signum", "code", "jobs"), [
    (signal.SIGTERM, 143, "1"), (signal.SIGINT, 130, "1"), (signal.SIGINT, 130, "2")])
def test_a_signal_during_a_stuck_concurrent_burst_cleans_up(tmp_path: Path, pg_url: str,
                                                            signum: int, code: int,
                                                            jobs: str) -> None:
    """With --jobs 2 the signal reaches every process of the run: each drops its part's
    data, the verdicts they reached are merged into the partial report."""
    child, _, namespaces = _stuck_in_the_concurrent_burst(tmp_path, pg_url, jobs, "--report",
                                                          "R")
    assert _fp_tables(pg_url, namespaces), "the run's tables should exist while it runs"
    child.send_signal(signum)
    out, err = child.communicate(timeout=HANG_GUARD_S)
    assert child.returncode == code, out + err
    assert f"interrupted by {signal.Signals(signum).name}" in err
    assert _fp_tables(pg_url, namespaces) == []
    report = complete_report(tmp_path / "R", "adk-ledger")
    assert verdicts(report)["ADK-LIN-001"][0] == "unknown"
    assert report["summary"]["pass"] > 0  # the verdicts reached before the signal stay


def _ended(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (a zombie is not) once each has ended, or the hang guard
    has passed: a run's processes end by themselves, this only waits for them."""
    return sorted(_wait_gone(pids, time.monotonic() + HANG_GUARD_S))


@pytest.mark.long
def test_killing_the_supervised_child_leaves_no_process_of_the_run(tmp_path: Path,
                                                                  pg_url: str) -> None:
    """kill -9 of the supervised child: its pool processes drop their parts' data and end,
    and the command (a subreaper) ends whatever else the run left; nothing holds a
    connection, no table of the run is left."""
    top, tree, namespaces = _stuck_in_the_concurrent_burst(tmp_path, pg_url)
    os.kill(tree[0], signal.SIGKILL)
    _, err = top.communicate(timeout=HANG_GUARD_S)
    assert top.returncode == 3, err
    assert "the run ended abruptly: its process was killed by SIGKILL" in err
    assert _ended(tree) == []
    assert _fp_tables(pg_url, namespaces) == []


@pytest.mark.long
def test_sigterm_then_sigkill_of_the_command_leaves_no_process_of_the_run(
        tmp_path: Path, pg_url: str) -> None:
    """What ``timeout -k`` does, at its worst: SIGTERM, then SIGKILL before the run could
    stop. The supervised child is told by the kernel (its parent died), stops the run, drops
    its data and ends, and so does everything under it."""
    top, tree, namespaces = _stuck_in_the_concurrent_burst(tmp_path, pg_url)
    top.send_signal(signal.SIGTERM)
    top.kill()
    top.communicate(timeout=HANG_GUARD_S)
    assert _ended(tree) == []
    assert _fp_tables(pg_url, namespaces) == []


@pytest.mark.long
def test_clean_drops_what_a_killed_run_left_and_nothing_else(tmp_path: Path,
                                                            pg_url: str) -> None:
    """A run killed outright (kill -9 of its whole tree) leaves its tables; ``fencepost
    clean`` lists them, and with --drop drops them, while a live run's stay untouched. (Each
    run is stuck at its store's fourth call: where a run stands does not matter to clean.)"""
    (tmp_path / "killed").mkdir()
    (tmp_path / "live").mkdir()
    killed, tree, left = _stuck_at_a_call(tmp_path / "killed", pg_url)
    for pid in (killed.pid, *tree):
        os.kill(pid, signal.SIGKILL)
    killed.communicate(timeout=HANG_GUARD_S)
    assert _ended(tree) == []
    assert _fp_tables(pg_url, left), "a run killed outright cannot drop its tables"
    live, live_tree, running = _stuck_at_a_call(tmp_path / "live", pg_url)
    try:
        listed = fencepost(tmp_path, "clean", pg_url)
        assert listed.returncode == 0, listed.stdout + listed.stderr
        rows = {line.split()[0]: line for line in listed.stdout.splitlines()[2:-1]}
        killed_rows = [rows[ns] for ns in left if ns in rows]
        live_rows = [rows[ns] for ns in running if ns in rows]
        assert killed_rows and all("left behind" in row for row in killed_rows), rows
        assert live_rows and all(row.endswith("live: a run holds it") for row in live_rows)
        assert _fp_tables(pg_url, left), "without --drop nothing is dropped"
        dropped = fencepost(tmp_path, "clean", pg_url, "--drop")
        assert dropped.returncode == 0, dropped.stdout + dropped.stderr
        assert _fp_tables(pg_url, left) == []
        assert _fp_tables(pg_url, running), "a live run's tables stay"
    finally:
        live.send_signal(signal.SIGTERM)
        live.communicate(timeout=HANG_GUARD_S)
    assert _ended(live_tree) == [] and _fp_tables(pg_url, running) == []


def test_clean_says_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    for args, said in [
        (("clean", "sqlite:///" + str(tmp_path / "x.db"), "--older-than", "soon"),
         "fencepost: error: --older-than 'soon': give a whole number and a unit, like 90s, "
         "30m, 2h or 7d"),
        (("clean", "nosuch://x"), "fencepost: error: not a database URL: 'nosuch://x' "),
        (("clean", "postgresql://nobody:secret@127.0.0.1:1/x"),
         "fencepost: error: cannot reach postgresql://nobody:***@127.0.0.1:1/x: "),
    ]:
        result = fencepost(tmp_path, *args)
        assert result.returncode == 2 and result.stdout == "", result
        assert result.stderr.startswith(said) and result.stderr.count("\n") == 1, result.stderr


def test_clean_on_sqlite_drops_only_what_no_running_process_holds(tmp_path: Path) -> None:
    """Elsewhere than PostgreSQL a namespace is live while its process runs on this host; one
    with no registry row predates the registry and counts as old."""
    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for name in ("fp_gone_adk_invocations", "fp_mine_adk_invocations",
                     "fp_old_adk_invocations", "other_table"):
            conn.execute(sa.text(f"CREATE TABLE {name} (x INTEGER)"))
        conn.execute(sa.text("CREATE TABLE fp__namespaces (namespace VARCHAR(200) PRIMARY "
                             "KEY, created_ms BIGINT NOT NULL, owner VARCHAR(300) NOT NULL)"))
        now = int(time.time() * 1000)
        conn.execute(sa.text("INSERT INTO fp__namespaces VALUES ('gone', :t, :dead), "
                             "('mine', :t, :me)"),
                     {"t": now, "dead": f"{socket.gethostname()}:999999999",
                      "me": f"{socket.gethostname()}:{os.getpid()}"})
    engine.dispose()
    newer = fencepost(tmp_path, "clean", url, "--older-than", "1h", "--drop")
    assert newer.returncode == 0 and newer.stdout.endswith(
        "dropped 1 namespace(s) (1 table(s)); 0 taken by a run meanwhile, kept\n"), newer
    result = fencepost(tmp_path, "clean", url, "--drop")
    assert result.returncode == 0, result
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        assert sorted(sa.inspect(conn).get_table_names()) == [
            "fp__namespaces", "fp_mine_adk_invocations", "other_table"]
    engine.dispose()


def test_sighup_stops_a_stuck_run_like_sigterm(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter",
         "hostile:adk_ledger__hang_in_concurrent", "--seed", "3", "--report", "R",
         "--call-timeout", "600"],
        cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    assert child.stderr is not None
    for line in child.stderr:
        if line.startswith("... concurrent"):
            break
    else:
        pytest.fail(f"the run ended before its concurrent phase: {child.wait()}")
    child.send_signal(signal.SIGHUP)
    out, err = child.communicate(timeout=HANG_GUARD_S)
    assert child.returncode == 129, out + err
    assert "interrupted by SIGHUP" in err
    assert verdicts(complete_report(tmp_path / "R", "adk-ledger"))["ADK-LIN-001"][0] == "unknown"


# -- the adapter's faults are the adapter's -----------------------------------------------------


def test_a_failing_discard_is_the_adapters_fault(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "discard_raises")
    assert result.returncode == 2, result.stdout + result.stderr
    assert report["summary"]["fail"] == 0 and report["summary"]["unknown"] == 0
    said = "the factory's discard raised OSError: discard failed (hostile store)"
    assert report["faults"] and all(said in f for f in report["faults"]), report["faults"]
    namespaces = [f.partition(": ")[0] for f in report["faults"]]
    [line] = [line for line in result.stdout.splitlines()
              if line.startswith("the adapter's fault")]  # one line for every namespace's
    assert line.startswith(f"the adapter's fault in {len(namespaces)} namespaces "
                           f"({', '.join(namespaces[:3])}")
    assert line.endswith(f": {said}; the namespace's data may be left in the store")


def test_a_failing_close_breaks_reopening_and_is_the_adapters_fault(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "close_raises")
    assert result.returncode == 1, result.stdout + result.stderr
    assert verdicts(report)["ADK-DURABLE-001"] == (
        "fail", "reopening the store raised OSError: close failed (hostile store)")
    assert report["summary"]["fail"] == 1
    said = "store.close raised OSError: close failed (hostile store)"
    assert report["faults"] and all(said in f for f in report["faults"]), report["faults"]


@pytest.mark.parametrize(("behaviour", "said"), [
    ("capabilities_string", "HostileStore.capabilities must be a set of names"),
    ("capabilities_misspelt", "HostileStore.capabilities names 'concurency', unknown to"),
])
def test_capabilities_declared_wrong_are_a_configuration_error(tmp_path: Path, behaviour: str,
                                                               said: str) -> None:
    adapter = f"hostile:adk_ledger__{behaviour}"
    result = fencepost(tmp_path, "check", "adk-ledger", "--adapter", adapter, "--quiet")
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], result.stderr
    assert "known: concurrency, durable" in lines[0]


def test_junk_in_every_error_still_gives_a_valid_report(tmp_path: Path) -> None:
    result, report = check(tmp_path, "adk-ledger", "junk_errors")
    assert result.returncode == 1, result.stdout + result.stderr
    failed = [r for s, r in verdicts(report).values() if s == "fail"]
    assert failed and any("<script>" in r for r in failed)


def test_a_closed_stdout_is_not_an_error(tmp_path: Path) -> None:
    cmd = f"{sys.executable} -m fencepost.cli list adk-ledger | head -1"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp_path,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.stdout.startswith("clause")
    assert result.stderr == ""
    assert result.returncode in (0, 141)


def test_the_timeout_must_be_positive(tmp_path: Path) -> None:
    result = fencepost(tmp_path, "check", "adk-ledger", "--adapter", "memory",
                       "--call-timeout", "0", "--quiet")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "fencepost: error: --call-timeout must be more than 0 seconds, not 0"]


@pytest.mark.long
def test_a_password_in_the_database_url_appears_in_no_output(tmp_path: Path,
                                                             pg_url: str) -> None:
    import sqlalchemy as sa

    url = sa.engine.make_url(pg_url).set(password="s3cret-Pa55")
    adapter = url.render_as_string(hide_password=False)
    assert "s3cret-Pa55" in adapter
    result = fencepost(tmp_path, "check", "adk-ledger", "--adapter", adapter, "--seed", "1",
                       "--report", "R", "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    outputs = {"stdout": result.stdout, "stderr": result.stderr}
    outputs |= {p.name: p.read_text() for p in (tmp_path / "R").iterdir()}
    assert {"report.json", "report.md", "junit.xml", "history.jsonl"} <= set(outputs)
    assert [name for name, text in outputs.items() if "s3cret-Pa55" in text] == []
    assert ":***@" in outputs["report.json"]
    unreachable = url.set(port=1).render_as_string(hide_password=False)
    refused = fencepost(tmp_path, "check", "adk-ledger", "--adapter", unreachable, "--quiet")
    assert refused.returncode == 2
    assert "s3cret-Pa55" not in refused.stderr and ":***@" in refused.stderr


def test_the_plugin_ends_a_hung_run_with_unknown_clauses(tmp_path: Path) -> None:
    private = tmp_path / "tmp"
    private.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf",
         "--fencepost-contract", "adk-ledger", "--fencepost-adapter",
         "hostile:adk_ledger__hang", "--fencepost-seed", "3", "--fencepost-call-timeout", "1"],
        cwd=tmp_path, env=_env(private), capture_output=True, text=True,
        timeout=HANG_GUARD_S)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "verdict unknown: " in result.stdout and "did not return in 1 s" in result.stdout
    assert " passed" in result.stdout  # the clauses settled before the hang
