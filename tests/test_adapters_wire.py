"""fencepost.adapters.wire: the kit's side of fencepost-wire/1 (docs/protocol.md), against the
reference adapter (``fencepost serve``) and a hostile one (tests/wire/hostile.py).

Every misbehaviour is a verdict within the timeout and leaves no process behind: the tests give
each child a marker (its own temporary directory on its command line) and look for it in ``ps``.
"""

from __future__ import annotations

import collections
import io
import json
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fencepost.adapters.wire.client import PROTOCOL, STDERR_LINE_BYTES, STDERR_LINES, WireLost
from fencepost.errors import ConfigurationError
from fencepost.registry import contract_named
from fencepost.spec import adk_ledger as adk
from fencepost.spec.env import AdapterEnv
from fencepost.wire_spec import exec_factory

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "wire" / "hostile.py"
ADK = contract_named("adk-ledger")


def running(marker: Path) -> list[str]:
    """The processes whose command line holds ``marker``."""
    ps = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True,
                        check=True)  # -ww: whole command lines, else cut to 80 columns
    return [line for line in ps.stdout.splitlines() if str(marker) in line]


def hostile(mode: str, marker: Path, at: int = 1, timeout_s: float = 1.0) -> Any:
    factory = exec_factory(ADK, f"{sys.executable} {HOSTILE} adk-ledger {mode} {at} {marker}")
    factory.timeout_s = timeout_s
    return factory


def env(namespace: str = "w1", now: int = 1_000) -> AdapterEnv:
    return AdapterEnv(clock=lambda: now, namespace=namespace)


@pytest.mark.parametrize(("mode", "reason"), [
    ("hang", "the adapter did not answer get within 1 s"),
    ("exit", "the adapter closed its stdout (exit status 7)"),
    ("exit_clean", "the adapter closed its stdout (exit status 0)"),
    ("blank", "the adapter wrote a line that is not JSON: ''"),  # a stray line
    ("garbage", "the adapter wrote a line that is not JSON: 'Traceback (most recent call last)"),
    ("bad_utf8", "the adapter wrote a line that is not UTF-8 (byte 17): "
                 "'{\"id\": 3, \"ok\": \"\ufffd\ufffd\"}'"),
    ("bad_code", "the adapter answered get with error code 'bogus', which adk-ledger does not "
                 "have (known: already_exists, backend_unavailable, completed,"),
    ("wrong_id", "the adapter answered id 1003, which no request in flight has"),  # call 3
    ("deep", "the adapter wrote a line that is not JSON: '{\"id\": 3, \"ok\": [[[[[[[[[["),
    ("nan", "the adapter wrote a line that is not JSON: '{\"id\": 3, \"ok\": NaN}'"),
    ("deep_value", "the adapter answered get with a value that cannot be read back: a value "
                   "nested too deeply to read"),
    ("bad_payload", "the adapter answered get with a payload it cannot be read back from: a "
                    "value nested too deeply to read"),
])
def test_a_misbehaving_child_is_lost_with_its_reason_and_replaced(
        tmp_path: Path, mode: str, reason: str) -> None:
    factory = hostile(mode, tmp_path)
    try:
        store = factory(env())
        started = time.monotonic()
        with pytest.raises(WireLost) as lost:
            store.get("missing")
        assert time.monotonic() - started < 10
        assert reason in lost.value.detail
        assert f"its stderr ends: hostile: {mode} at call 1 (get)" in lost.value.detail
        assert running(tmp_path) == []  # killed, process group and all
        with pytest.raises(WireLost):  # the lost store stays lost
            store.get("missing")
        again = factory(env())  # a new child, which behaves (the hostile one misbehaves once)
        assert factory.children == 2
        with pytest.raises(adk.NotFound):
            again.get("missing")
    finally:
        factory.close()
    assert running(tmp_path) == []


def test_a_stderr_flood_is_kept_as_bounded_lines(tmp_path: Path) -> None:
    factory = hostile("flood_exit", tmp_path)
    try:
        store = factory(env())
        with pytest.raises(WireLost) as lost:
            store.get("missing")
        assert lost.value.detail.startswith("the adapter closed its stdout (exit status 7)")
        assert lost.value.detail.endswith(
            f"(get) | {'x' * STDERR_LINE_BYTES} [line cut at {STDERR_LINE_BYTES} bytes]")
    finally:
        factory.close()


def _logged(data: bytes) -> list[str]:
    """The stderr lines a child keeps of ``data`` (read in one chunk)."""
    from fencepost.adapters.wire.client import Child

    child = Child.__new__(Child)
    child.stderr = collections.deque(maxlen=STDERR_LINES)
    child._read_log(io.BytesIO(data))
    return list(child.stderr)


def test_stderr_lines_are_cut_past_the_limit_only_and_a_last_unended_line_is_kept() -> None:
    limit, cut = STDERR_LINE_BYTES, f" [line cut at {STDERR_LINE_BYTES} bytes]"
    assert _logged(b"x" * limit + b"\n" + b"y" * (limit + 1) + b"\nlast") == [
        "x" * limit, "y" * limit + cut, "last"]
    assert _logged(b"a\n" + b"z" * limit) == ["a", "z" * limit]
    assert _logged(b"a\n" + b"z" * (limit + 1)) == ["a", "z" * limit + cut]
    assert _logged(b"") == []


def _delivered(line: bytes) -> str | None:
    """What is wrong with ``line`` as a reply, to a child with request 1 in flight."""
    from fencepost.adapters.wire.client import Child, _Waiting

    child = Child.__new__(Child)
    child._lock = threading.Lock()
    child._changed = threading.Condition(child._lock)
    child._waiting = {1: _Waiting()}
    return child._deliver(line)


@pytest.mark.parametrize(("line", "problem"), [
    (b'{"id": 1, "ok": null}', None),
    (b'{"id": 1, "error": {"code": "not_found"}}', None),  # detail and payload may be left out
    (b'{"id": 1, "error": "not_found"}', "error is {"),
    (b'{"id": 1, "error": {"code": 5, "detail": ""}}', "error is {"),
    (b'{"id": 1, "error": {"code": "not_found", "detail": 5}}', "error is {"),
    (b'{"id": 1, "ok": null, "fault": "x"}', "a reply holds exactly one of ok, error, fault"),
    (b'{"id": 1}', "a reply holds exactly one of ok, error, fault"),
    (b'[1]', "not a reply object"),
    (b'{"id": true, "ok": null}', "the adapter answered id True, which no request in flight"),
    (b'{"id": "1", "ok": null}', "the adapter answered id '1', which no request in flight"),
])
def test_a_reply_line_is_one_reply_object_to_a_request_in_flight(
        line: bytes, problem: str | None) -> None:
    said = _delivered(line + b"\n")
    assert said is None if problem is None else problem in str(said), said


SHUTDOWN_LOGGED = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print("got", request["type"], file=sys.stderr, flush=True)
    print(json.dumps({"id": request["id"], "ok": None}), flush=True)
    if request["type"] == "shutdown":
        break
"""
"""A child that says on stderr what it was asked, and exits after ``shutdown``."""


def test_a_shut_down_child_was_told_so_and_is_lost_for_that_reason_after(
        tmp_path: Path) -> None:
    from fencepost.adapters.wire.client import Child

    child = Child([sys.executable, "-c", SHUTDOWN_LOGGED, str(tmp_path)], timeout_s=30)
    assert child.request("ping") is None
    child.shutdown()
    child._log.join(30)
    assert list(child.stderr) == ["got ping", "got shutdown"]
    assert child.process.returncode == 0 and child.process.stdin.closed
    with pytest.raises(WireLost, match=r"^the adapter was shut down$"):
        child.request("ping")
    assert running(tmp_path) == []


def test_a_killed_child_is_gone_and_its_stdin_closed(tmp_path: Path) -> None:
    from fencepost.adapters.wire.client import Child

    child = Child([sys.executable, "-c", SHUTDOWN_LOGGED, str(tmp_path)], timeout_s=30)
    child.kill()
    assert child.process.stdin.closed and child.process.returncode == -signal.SIGKILL
    assert running(tmp_path) == []


def test_a_fault_makes_the_call_unknown_and_the_child_lives_on(tmp_path: Path) -> None:
    factory = hostile("fault", tmp_path)
    try:
        store = factory(env())
        with pytest.raises(WireLost, match="the adapter could not process get: cannot do that"):
            store.get("missing")
        with pytest.raises(adk.NotFound):
            store.get("missing")
        assert factory.children == 1
    finally:
        factory.close()
    assert running(tmp_path) == []


def test_a_lost_childs_store_closes_and_its_data_is_dropped_without_a_word(
        tmp_path: Path) -> None:
    """Nothing is left to close or drop on a lost child (its memory went with it): neither
    says so by raising; nor does dropping a namespace before any child started."""
    factory = hostile("exit", tmp_path)
    try:
        factory.discard(env("w0"))
        store = factory(env())
        with pytest.raises(WireLost):
            store.get("missing")
        store.close()
        factory.discard(env())
        assert factory.children == 1
    finally:
        factory.close()
    assert running(tmp_path) == []


@pytest.mark.parametrize(("said", "problem"), [
    ({"name": "a", "version": "1", "capabilities": ["durable"]}, None),
    ({"name": "a", "version": "1", "capabilities": []}, None),
    ({"name": "a", "version": "1", "capabilities": "durable"},
     "capabilities that are not a list of strings"),
    ({"name": "a", "version": "1", "capabilities": ["durable", 1]},
     "capabilities that are not a list of strings"),
    ({"name": "a", "version": 1, "capabilities": []}, "no string 'version'"),
    ({"version": "1", "capabilities": []}, "no string 'name'"),
    (["a"], "['a'], not an object"),
])
def test_a_hello_names_the_adapter_and_lists_its_capabilities(said: Any,
                                                                problem: str | None) -> None:
    from fencepost.adapters.wire.store import _hello_problem

    assert _hello_problem(said) == problem


def test_a_refused_handshake_is_a_configuration_error(tmp_path: Path) -> None:
    factory = hostile("bad_hello", tmp_path)
    with pytest.raises(ConfigurationError, match="refused the handshake: this adapter speaks "
                       "fencepost-wire/0 only"):
        factory(env())
    factory.close()
    assert running(tmp_path) == []


@pytest.mark.parametrize(("command", "message"), [
    ("", "exec: needs a command"),
    ("./no/such/adapter", "exec adapter ./no/such/adapter: no such file"),
    ("/tmp", "exec adapter /tmp is a directory, not a program"),
    ("no-such-program-anywhere", "exec adapter no-such-program-anywhere: not found on PATH"),
    ("'unclosed", "cannot split the exec command"),
    ("tests/wire/hostile.py", "exec adapter tests/wire/hostile.py is not executable"),
])
def test_a_bad_exec_command_is_a_configuration_error(command: str, message: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(ConfigurationError, match=message):
        exec_factory(ADK, command)


@pytest.fixture()
def served() -> Any:
    factory = exec_factory(ADK, f"{sys.executable} -m fencepost.cli serve adk-ledger")
    yield factory
    factory.close()


def test_values_cross_the_wire_exactly(served: Any) -> None:
    checkpoint = {"t": (1, 2.0), "z": -0.0, "b": b"\x00\xff", "n": [None, True], 3: "int key",
                  "nan": math.inf, "__tuple__": "a reserved key"}
    store = served(env())
    store.create("i1", {"workflow_id": "wf", "workflow_version": 1, "kind": "k"}, checkpoint)
    got = store.get("i1")
    assert isinstance(got, adk.Invocation)
    assert repr(got.checkpoint) == repr(checkpoint)
    assert got.created_at == 1_000 and type(got.workflow_version) is int


def test_namespaces_are_apart_and_durable_across_close(served: Any) -> None:
    a, b = served(env("na")), served(env("nb"))
    a.create("i1", {}, {})
    with pytest.raises(adk.NotFound):
        b.get("i1")
    a.close()
    assert served(env("na")).get("i1").invocation_id == "i1"
    served.discard(env("na"))
    with pytest.raises(adk.NotFound):
        served(env("na")).get("i1")
    assert served.hello.capabilities == {"durable", "owner_liveness", "concurrency"}


def test_requests_in_flight_from_many_threads_get_their_own_answers(served: Any) -> None:
    store = served(env())
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for j in range(20):
                store.create(f"i{k}-{j}", {}, {"k": k, "j": j})
                assert store.get(f"i{k}-{j}").checkpoint == {"k": k, "j": j}
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_the_store_reads_the_calls_time_and_the_dead_owners(served: Any) -> None:
    now = [5_000]
    dead: set[str] = set()
    store = served(AdapterEnv(clock=lambda: now[0], namespace="clock",
                              dead_owners=lambda: frozenset(dead)))
    store.create("i1", {}, {})
    store.claim("i1", "c1", "t1", 5_000, 10_000)
    with pytest.raises(adk.InvocationOwned):
        store.claim("i1", "c2", "t2", 5_001, 10_000)
    dead.add("c1")  # the oracle now says c1 is dead: its live lease no longer blocks
    assert store.claim("i1", "c2", "t2", 5_002, 10_000).owner == "c2"
    assert store.get("i1").created_at == 5_000


def test_check_through_the_wire_stops_with_unknown_and_no_child_left(tmp_path: Path) -> None:
    command = f"exec:{sys.executable} {HOSTILE} adk-ledger hang 5 {tmp_path}"
    done = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter", command,
         "--seed", "1", "--quiet", "--concurrency", "0"],
        capture_output=True, text=True, env={**os.environ, "FENCEPOST_WIRE_TIMEOUT": "1"},
        timeout=300, cwd=ROOT)
    assert done.returncode == 3, done.stdout + done.stderr
    assert ("store unavailable (error backend_unavailable: the adapter did not answer get "
            "within 1 s; its stderr ends: hostile: hang at call 5 (get))") in done.stdout
    assert " 0 fail, 2 unknown," in done.stdout  # one check lost; the next ran on a new child
    assert running(tmp_path) == []


@pytest.mark.parametrize(("mode", "reason"), [
    ("exit", r"the adapter closed its stdout \(exit status 7\)"),
    ("bad_utf8", r"the adapter wrote a line that is not UTF-8 \(byte \d+\)"),  # the id's digits
])
def test_a_child_lost_in_the_state_machine_makes_its_clauses_unknown(
        tmp_path: Path, mode: str, reason: str) -> None:
    """Call 900 falls in the state machine (seed 3, one job): it cannot conclude, and
    Hypothesis, replaying on the lost store, meets other answers (once the kit's error). Which
    op meets the lost child follows the calls before it (a finish since reopens that would
    read back nothing new are skipped; a get before)."""
    command = f"exec:{sys.executable} {HOSTILE} adk-ledger {mode} 900 {tmp_path}"
    done = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter", command,
         "--seed", "3", "--jobs", "1", "--quiet", "--report", str(tmp_path / "R")],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    report = json.loads((tmp_path / "R" / "report.json").read_text())
    machine = [c for c in report["clauses"] if c["reason"].startswith("machine: ")]
    assert machine and {c["status"] for c in machine} == {"unknown"}
    assert all(re.match(r"machine: \w+: store unavailable \(error backend_unavailable: "
                        + reason, c["reason"]) for c in machine), machine
    assert report["summary"]["fail"] == 0
    assert running(tmp_path) == []


def test_processes_a_child_starts_outside_its_group_end_with_the_run(tmp_path: Path) -> None:
    """Each wire child starts a process in a session of its own and one orphaned at once:
    neither is in its process group, and the run ends both (its tree, and what the command,
    a subreaper, adopted)."""
    command = f"exec:{sys.executable} {HOSTILE} adk-ledger escapes 1 {tmp_path}"
    done = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter", command,
         "--seed", "1", "--quiet", "--concurrency", "0", "--jobs", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert running(tmp_path) == []


def test_ctrl_c_leaves_no_child(tmp_path: Path) -> None:
    def children() -> list[str]:  # the adapter's processes, not the kit's own
        return [line for line in running(tmp_path) if "fencepost.cli" not in line]

    proc = subprocess.Popen(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter",
         f"exec:{sys.executable} {HOSTILE} adk-ledger none 0 {tmp_path}", "--seed", "1",
         "--profile", "standard", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not children() and time.monotonic() < deadline:
            time.sleep(0.05)  # waiting for the child to appear, an event we poll for
        assert children(), "the adapter child never started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, out + err
    assert children() == []


def test_wire_check_passes_the_reference_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    from fencepost.cli import main

    command = f"{sys.executable} -m fencepost.cli serve adk-ledger"
    assert main(["wire-check", "adk-ledger", command]) == 0
    out = capsys.readouterr().out
    assert f"17 of 17 probes answered as fencepost-wire/1 requires ({command})" in out


@pytest.mark.parametrize(("answer", "fault", "ok"), [
    ({"id": 3, "fault": "no"}, True, False),
    ({"id": 3, "ok": None}, False, True),
    ({"id": 3, "error": {"code": "not_found"}}, False, False),
    ({"id": 4, "fault": "no"}, False, False),  # another request's
    ({"id": 4, "ok": None}, False, False),
    ({"fault": "no"}, False, False),
    ("fault", False, False),
    (["ok"], False, False),
    (None, False, False),  # no answer in time
])
def test_wire_check_takes_a_fault_or_an_ok_only_as_the_reply_to_its_request(
        answer: Any, fault: bool, ok: bool) -> None:
    from fencepost.adapters.wire.conformance import _is_fault, _is_ok

    assert (_is_fault(answer, 3), _is_ok(answer, 3)) == (fault, ok)


def test_wire_check_shows_an_answer_of_up_to_100_characters_whole() -> None:
    from fencepost.adapters.wire.conformance import _shown

    assert _shown("x" * 100) == "x" * 100
    assert _shown("x" * 101) == "x" * 97 + "..."
    assert _shown({"id": 1}) == '{"id": 1}'


def test_wire_check_names_the_probe_an_adapter_gets_wrong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from fencepost.cli import main

    monkeypatch.setenv("FENCEPOST_WIRE_TIMEOUT", "1")
    command = f"{sys.executable} {HOSTILE} adk-ledger mute_garbage 0 {tmp_path}"
    assert main(["wire-check", "adk-ledger", command]) == 1
    out = capsys.readouterr().out
    wrong = [line.split("  ")[0] for line in out.splitlines() if line.rstrip().endswith("WRONG")]
    assert wrong == ["a line that is not JSON"]
    assert "16 of 17 probes answered" in out
    assert running(tmp_path) == []


def _memory_capped() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


@pytest.mark.parametrize("flood", ["yes", "cat /dev/zero"])
def test_wire_check_of_an_adapter_that_writes_without_end_ends_with_its_verdict(
        flood: str) -> None:
    """Endless lines (``yes``) and one endless line (``cat /dev/zero``): the check reads a few
    lines ahead and none past the protocol's limit, so it ends with every probe wrong, in
    a 3 GiB address space (reading all of it was a MemoryError, or the kernel's kill)."""
    done = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "wire-check", "adk-ledger", flood],
        capture_output=True, text=True, timeout=600, preexec_fn=_memory_capped)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"0 of 17 probes answered as fencepost-wire/1 requires ({flood})" in done.stdout
    assert done.stderr == ""


def test_what_a_lost_child_started_is_killed_too(tmp_path: Path) -> None:
    """The child exits, but a process it started lives on in its group (holding the child's
    stdout open, so the call times out): killed with it, though the child itself is gone."""
    import shlex

    seconds = 3_000 + os.getpid() % 997  # a command line no other test runs
    inner = shlex.join([sys.executable, str(HOSTILE), "adk-ledger", "exit", "1", str(tmp_path)])
    factory = exec_factory(ADK, shlex.join(["sh", "-c", f"sleep {seconds} & exec {inner}"]))
    factory.timeout_s = 1.0
    try:
        with pytest.raises(WireLost, match="did not answer get within 1 s"):
            factory(env()).get("missing")
        ps = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True,
                            check=True).stdout.splitlines()
        assert [line for line in ps if line.strip() == f"sleep {seconds}"] == []
    finally:
        factory.close()


class _Gate:
    """A store whose ``get`` of ``wait`` blocks until a ``delete`` of ``open`` comes; every
    call says the thread that ran it."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.threads: list[str] = []

    def get(self, invocation_id: str) -> Any:
        self.threads.append(threading.current_thread().name)
        if invocation_id == "wait" and not self.opened.wait(10):
            return "timed out"
        return invocation_id

    def delete(self, invocation_id: str) -> Any:
        self.threads.append(threading.current_thread().name)
        self.opened.set()
        return None


def _serve(store: Any, requests: list[dict[str, Any]],
           factory: Any = None) -> list[dict[str, Any]]:
    """``requests`` (after hello and open) through a :class:`Server` of ``store`` (or of the
    stores ``factory`` makes), fed one
    at a time as each earlier reply arrives (lock-step) unless it says ``"pipelined"``;
    their replies in the order written (the server's calls in flight end before it does)."""
    from fencepost.adapters.wire.client import PROTOCOL
    from fencepost.adapters.wire.serve import Server
    from fencepost.spec.ops import operations

    read_fd, write_fd = os.pipe()
    replies = threading.Condition()
    written: list[dict[str, Any]] = []

    class Out:
        def write(self, text: str) -> None:
            with replies:
                written.append(json.loads(text))
                replies.notify_all()

        def flush(self) -> None:
            pass

    server = Server("adk-ledger", factory or (lambda env: store), operations("adk-ledger"),
                    frozenset(), Out())  # type: ignore[arg-type]
    with os.fdopen(read_fd) as lines, os.fdopen(write_fd, "w") as feed:
        thread = threading.Thread(target=server.serve, args=(lines,), daemon=True)
        thread.start()
        opening = [{"type": "hello", "protocol": PROTOCOL, "contract": "adk-ledger"},
                   {"type": "open", "namespace": "n"}]
        for k, request in enumerate([*opening, *requests]):
            pipelined = request.pop("pipelined", False)
            feed.write(json.dumps({"id": k, **request}) + "\n")
            feed.flush()
            if not pipelined:
                with replies:
                    assert replies.wait_for(lambda k=k: any(r["id"] == k for r in written), 10)
        feed.write(json.dumps({"id": 999, "type": "shutdown"}) + "\n")
        feed.flush()
        thread.join(10)
        assert not thread.is_alive()
    return [r for r in written if r["id"] not in (0, 1, 999)]


def _get(invocation_id: str, **more: Any) -> dict[str, Any]:
    return {"type": "call", "namespace": "n", "op": "get", "now": 0,
            "args": {"invocation_id": invocation_id}, **more}


def test_an_open_beside_an_open_store_is_a_connection_of_its_own_until_its_close() -> None:
    """Each open makes a store; the calls go to the last one opened still open; a close
    closes that one, and the namespace is closed with the first."""
    made: list[Any] = []

    class Numbered:
        def __init__(self) -> None:
            self.number, self.closed = len(made) + 1, False
            made.append(self)

        def get(self, invocation_id: str) -> int:
            return self.number

        def close(self) -> None:
            self.closed = True

    opened, closed = ({"type": kind, "namespace": "n"} for kind in ("open", "close"))
    replies = _serve(None, [_get("a"), opened, _get("a"), opened, _get("a"), closed, _get("a"),
                            closed, _get("a"), closed, _get("a")],
                     factory=lambda env: Numbered())
    assert [r.get("ok", r.get("fault")) for r in replies] == [
        1, None, 2, None, 3, None, 2, None, 1, None, "namespace 'n' is not open"]
    assert [s.closed for s in made] == [True, True, True]


def test_a_call_that_waits_for_a_later_one_is_not_stuck_behind_it() -> None:
    # the get of "wait" ends only when the delete after it has run: read and run meanwhile
    store = _Gate()
    replies = _serve(store, [_get("wait", pipelined=True),
                             {"type": "call", "namespace": "n", "op": "delete", "now": 0,
                              "args": {"invocation_id": "open"}}])
    assert [(r["id"], r.get("ok")) for r in replies] == [(3, None), (2, "wait")]
    assert len(set(store.threads)) == 2


def test_calls_in_lock_step_run_on_the_thread_that_read_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # no hand-off between threads for a call alone in flight: one thread reads and runs all
    # (a minute before the one standing by takes over: a loaded machine's pause in a call
    # is no take-over)
    from fencepost.adapters.wire import serve

    monkeypatch.setattr(serve, "HANDOFF_S", 60.0)
    store = _Gate()
    replies = _serve(store, [_get(f"x{k}") for k in range(50)])
    assert [r.get("ok") for r in replies] == [f"x{k}" for k in range(50)]
    assert len(set(store.threads)) == 1


class _Waiting(_Gate):
    """A :class:`_Gate` that says, before each call, that it is about to wait outside the
    process (``env.waiting()``)."""

    def __init__(self, env: Any) -> None:
        super().__init__()
        self.env = env

    def get(self, invocation_id: str) -> Any:
        self.env.waiting()
        return super().get(invocation_id)

    def delete(self, invocation_id: str) -> Any:
        self.env.waiting()
        return super().delete(invocation_id)


def test_a_call_that_says_it_waits_gives_the_reading_over_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a minute before the timed take-over: the delete is read and run only because the get
    # said it waits (else the get's gate gives up after its guard and answers "timed out")
    from fencepost.adapters.wire import serve

    monkeypatch.setattr(serve, "HANDOFF_S", 60.0)
    made: list[_Waiting] = []
    replies = _serve(None, [_get("wait", pipelined=True),
                            {"type": "call", "namespace": "n", "op": "delete", "now": 0,
                             "args": {"invocation_id": "open"}},
                            *[_get(f"x{k}") for k in range(20)]],
                     factory=lambda env: made.append(_Waiting(env)) or made[-1])
    # the get's reply may come before or after the first lock-step get's: only what each
    # answered is asserted
    answered = {r["id"]: r.get("ok") for r in replies}
    assert (answered[2], answered[3]) == ("wait", None)
    assert [answered[k] for k in range(4, 24)] == [f"x{k}" for k in range(20)]
    assert len(replies) == 22 and len(set(made[0].threads[:2])) == 2


LATE = """
import json, sys, time
for line in sys.stdin:
    request = json.loads(line)
    time.sleep(float(sys.argv[1]))
    sys.stdout.write(json.dumps({"id": request["id"], "ok": request["id"]}) + "\\n")
    sys.stdout.flush()
"""
"""A child that answers every request after ``argv[1]`` seconds (at the least: a sleep)."""


class _Counted:
    """``select.select`` and ``os.read`` of the wire client (and of ``fencepost serve``'s
    reading, which shares its wait), counted per request."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from fencepost.adapters.wire import client

        self.selects = 0
        self.missed = 0  # reads that found nothing yet
        real_select, real_read = client.select.select, client.os.read

        def select(*args: Any) -> Any:
            self.selects += 1
            return real_select(*args)

        def read(fd: int, n: int) -> bytes:
            try:
                return real_read(fd, n)
            except BlockingIOError:
                self.missed += 1
                raise

        monkeypatch.setattr(client.select, "select", select)
        monkeypatch.setattr(client.os, "read", read)

    def request(self, child: Any, ident: int) -> tuple[int, int]:
        """One request; (reads that found nothing, selects) it took."""
        self.selects = self.missed = 0
        assert child.request("x") == ident
        return self.missed, self.selects


def test_a_slow_childs_replies_are_waited_for_asleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replies that take longer than the reader would wait awake (SPIN_S): once they have
    been seen to, each request reads once, finds nothing, and sleeps in select until its reply;
    the requests the pace still waits awake for (the first ones, the probes) sleep after.

    A reader the machine stopped for longer than the child's delay, between sending and its
    first read, finds the reply there: (0, 0), no wait at all. That is allowed; a read again
    without sleeping (a spin) never is, and most requests must have slept."""
    from fencepost.adapters.wire.client import SPIN_S, Child, Pace

    monkeypatch.setattr("fencepost.adapters.wire.client.cores", lambda: 2)
    child = Child([sys.executable, "-c", LATE, str(200 * SPIN_S)], timeout_s=30)
    counted = _Counted(monkeypatch)
    try:
        costs = [counted.request(child, k) for k in range(1, 25)]
    finally:
        child.shutdown()
    pace, awake = Pace(SPIN_S), []
    for _ in costs:  # what the reader's pace decides when every reply is late
        awake.append(pace.spin() > 0)
        if awake[-1]:
            pace.waited(200 * SPIN_S)
    asleep = [c for c, a in zip(costs, awake, strict=True) if not a]
    assert len(asleep) >= 14
    assert set(asleep) <= {(1, 1), (0, 0)}
    assert asleep.count((1, 1)) > len(asleep) // 2
    assert {c[1] for c, a in zip(costs, awake, strict=True) if a} <= {0, 1}


def _late_replies(monkeypatch: pytest.MonkeyPatch, cores: int, calls: int) -> list[tuple[int, int]]:
    """The cost of ``calls`` requests to a child answering each after 20 ms, with SPIN_S made
    60 s (every reply comes within it) and the process seeing ``cores`` cores."""
    from fencepost.adapters.wire import client

    monkeypatch.setattr(client, "SPIN_S", 60.0)
    monkeypatch.setattr(client, "cores", lambda: cores)
    child = client.Child([sys.executable, "-c", LATE, "0.02"], timeout_s=30)
    counted = _Counted(monkeypatch)
    try:
        return [counted.request(child, k) for k in range(1, calls + 1)]
    finally:
        child.shutdown()


def test_a_fast_childs_replies_are_read_awake(monkeypatch: pytest.MonkeyPatch) -> None:
    """While replies come within SPIN_S, the reader reads again until the reply is there and
    never sleeps in select; each request gets its own reply."""
    costs = _late_replies(monkeypatch, cores=2, calls=5)
    assert [selects for _missed, selects in costs] == [0] * 5
    assert all(missed >= 1 for missed, _selects in costs)  # each reply was waited for


def test_on_one_core_the_reader_never_waits_awake(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that could only spin on the core the child needs sleeps at once."""
    assert _late_replies(monkeypatch, cores=1, calls=3) == [(1, 1)] * 3


def test_the_pace_waits_awake_while_replies_come_fast_and_probes_after_a_slow_spell() -> None:
    """Most replies coming within spin_s keeps the reader waiting awake, a few late ones do
    not stop it; a slow spell does, lines waited for asleep do not count, and the probes every
    PROBE_EVERY th line bring it back once the replies are fast again. On one core (spin_s 0)
    it never waits awake."""
    from fencepost.adapters.wire.client import Pace

    pace = Pace(100e-6)
    for k in range(40):
        assert pace.spin() == 100e-6
        pace.waited(500e-6 if k % 4 == 0 else 40e-6)  # one reply in four is late
    while pace.spin():  # a slow spell
        pace.waited(5e-3)
    stopped = pace.lines
    decisions = [pace.spin() for _ in range(2 * Pace.PROBE_EVERY)]
    assert decisions == [0.0 if (stopped + 1 + k) % Pace.PROBE_EVERY else 100e-6
                         for k in range(2 * Pace.PROBE_EVERY)]
    while pace.hits < Pace.HITS:  # fast again: each probe's hit pulls the share up
        if pace.spin():
            pace.waited(40e-6)
    assert pace.spin() == 100e-6 and pace.spin() == 100e-6
    one_core = Pace(0.0)
    assert {one_core.spin() for _ in range(3 * Pace.PROBE_EVERY)} == {0.0}


# --- the served side: requests read as they come ------------------------------------------------


def _pipe_stream(chunks: list[bytes], gap_s: float = 0.0) -> Any:
    """A text stream (UTF-8, surrogateescape, as ``fencepost serve``'s stdin) on a pipe a
    thread writes ``chunks`` into, ``gap_s`` apart, then closes."""
    read_end, write_end = os.pipe()

    def write() -> None:
        for chunk in chunks:
            time.sleep(gap_s)
            os.write(write_end, chunk)
        os.close(write_end)

    threading.Thread(target=write, daemon=True).start()
    return open(read_end, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115


SERVED_CHUNKS = [b'{"id":1}\n{"id"', b':2}\n', b'\xff\n\n', b'caf\xc3', b'\xa9\n', b'{"id":3}']


@pytest.mark.parametrize("cores", [1, 2])
def test_served_requests_are_the_lines_the_stream_gives(monkeypatch: pytest.MonkeyPatch,
                                                        cores: int) -> None:
    """Read as they come, a pipe's requests are the lines iterating the stream gives: split
    across writes or several in one, undecodable bytes as the stream's errors make them, the
    last one without its newline; the pipe is blocking again afterwards."""
    from fencepost.adapters.wire import serve

    monkeypatch.setattr(serve, "cores", lambda: cores)
    expected = list(_pipe_stream(SERVED_CHUNKS))
    assert expected == ['{"id":1}\n', '{"id":2}\n', "\udcff\n", "\n", "caf\u00e9\n", '{"id":3}']
    stream = _pipe_stream(SERVED_CHUNKS)
    assert list(serve.paced_lines(stream)) == expected
    assert os.get_blocking(stream.fileno())
    stream.close()


def test_a_file_of_requests_is_iterated_as_it_is(tmp_path: Path) -> None:
    """Not a pipe (a file, a terminal): the stream's own lines, its mode untouched."""
    from fencepost.adapters.wire import serve

    path = tmp_path / "requests"
    path.write_bytes(b"".join(SERVED_CHUNKS))
    with open(path, encoding="utf-8", errors="surrogateescape") as plain:
        expected = list(plain)
    with open(path, encoding="utf-8", errors="surrogateescape") as stream:
        assert list(serve.paced_lines(stream)) == expected


@pytest.mark.parametrize("cores", [1, 2])
def test_a_served_request_is_waited_for_awake_where_there_are_cores_to_spare(
        monkeypatch: pytest.MonkeyPatch, cores: int) -> None:
    """With a core to spare and requests coming within the spin (made 60 s here), the server
    reads again until each request is there and never sleeps in select; on one core, where
    waiting awake would hold the core the kit needs, it reads the stream as it is (asleep in
    its blocking read)."""
    from fencepost.adapters.wire import serve

    monkeypatch.setattr(serve, "cores", lambda: cores)
    stream = _pipe_stream([b'{"id":%d}\n' % k for k in range(1, 6)], gap_s=0.02)
    counted = _Counted(monkeypatch)  # the wait is the client's (read_paced)
    lines = list(serve.paced_lines(stream, spin_s=60.0))
    stream.close()
    assert lines == [f'{{"id":{k}}}\n' for k in range(1, 6)]
    if cores == 2:
        assert counted.selects == 0
    else:
        assert (counted.missed, counted.selects) == (0, 0)


LONG_CHUNKS = [b'{"id":1}\n', b"0123456789", b'abcdef\n{"id":2}\n', b"01234567\n", b"xxxxxxxxxxxx"]
"""With lines limited to 8 bytes: a line cut across writes, one of exactly 8, one at the end
without its newline."""


@pytest.mark.parametrize("cores", [1, 2, "file"])
def test_a_served_request_line_too_long_is_skipped_unkept(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cores: int | str) -> None:
    """A request line longer than the protocol's limit (made 8 bytes here) is given as
    TOO_LONG, its text skipped to its newline: the lines after it are read as ever, on a pipe
    read as it comes or iterated as it is, and on a file."""
    from fencepost.adapters.wire import serve

    monkeypatch.setattr(serve, "LINE_BYTES", 8)
    monkeypatch.setattr(serve, "cores", lambda: 1 if cores == "file" else cores)
    if cores == "file":
        path = tmp_path / "requests"
        path.write_bytes(b"".join(LONG_CHUNKS))
        stream = open(path, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
    else:
        stream = _pipe_stream(LONG_CHUNKS)
    lines = list(serve.paced_lines(stream))
    stream.close()
    assert lines == ['{"id":1}\n', "", '{"id":2}\n', "01234567\n", ""]
    assert [k for k, line in enumerate(lines) if line is serve.TOO_LONG] == [1, 4]


def test_fencepost_serve_answers_a_request_line_too_long_and_reads_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The server answers a line past the limit with a fault (no id: none was read) and
    answers the requests after it."""
    from fencepost.adapters.wire import serve

    monkeypatch.setattr(serve, "LINE_BYTES", 1 << 20)
    hello = json.dumps({"id": 1, "type": "hello", "protocol": PROTOCOL,
                        "contract": "adk-ledger"})
    flood = '{"id":2,"type":"hello","pad":"' + "x" * (2 << 20) + '"}'
    out = io.StringIO()
    server = serve.Server("adk-ledger", lambda env: None, {}, frozenset(), out)
    server.serve(serve.paced_lines(io.StringIO(f"{flood}\n{hello}\n")))
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert replies == [
        {"id": None, "fault": "a request line longer than 1 MiB (the protocol's limit): "
         "skipped unread"},
        {"id": 1, "ok": {"name": "fencepost-serve", "version": "", "capabilities": []}}]


def _memory_capped_small() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))


@pytest.mark.long
def test_fencepost_serve_fed_a_line_without_end_keeps_a_bounded_buffer() -> None:
    """1 GiB without a newline, then a hello, to ``fencepost serve`` in a 1.5 GiB address
    space: the line is skipped as it comes (keeping it all was a MemoryError) and the hello
    after it answered."""
    hello = json.dumps({"id": 1, "type": "hello", "protocol": PROTOCOL,
                        "contract": "adk-ledger"})
    feed = ("import sys\nout = sys.stdout.buffer\nfor _ in range(1 << 10):\n"
            "    out.write(b'x' * (1 << 20))\n"
            f"out.write(b'\\n' + {hello.encode()!r} + b'\\n')\n")
    writer = subprocess.Popen([sys.executable, "-c", feed], stdout=subprocess.PIPE)
    served = subprocess.Popen(
        [sys.executable, "-m", "fencepost.cli", "serve", "adk-ledger"], stdin=writer.stdout,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_memory_capped_small)
    assert writer.stdout is not None
    writer.stdout.close()
    out, err = served.communicate(timeout=120)  # the old server hung, its reader gone
    writer.wait(timeout=60)
    assert served.returncode == 0, err[-2000:]
    replies = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in replies] == [None, 1]
    assert replies[0]["fault"].startswith("a request line longer than 256 MiB")


@pytest.mark.parametrize(("adapter", "served"), [("memory", "claim_completed@memory"),
                                                  ("sqlite", "claim_completed@sqlite")])
def test_serve_builds_a_mutant_on_the_adapter_asked_for(tmp_path: Path, adapter: str,
                                                         served: str) -> None:
    """``serve --mutant NAME --adapter sqlite`` serves the mutant on a temporary SQLite
    database, removed at shutdown (it was served on memory whatever --adapter said)."""
    hello = {"id": 1, "type": "hello", "protocol": "fencepost-wire/1",
             "contract": "adk-ledger", "options": {}}
    opened = {"id": 2, "type": "open", "namespace": "n1", "options": {}}
    requests = "".join(json.dumps(r) + "\n" for r in (hello, opened, {"id": 3, "type": "shutdown"}))
    result = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "serve", "adk-ledger", "--mutant",
         "claim_completed", "--adapter", adapter], input=requests, capture_output=True,
        text=True, timeout=120, env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert replies[0]["ok"]["name"] == f"fencepost-serve:{served}"
    assert [r["id"] for r in replies] == [1, 2, 3] and "ok" in replies[1], replies
    assert list(tmp_path.iterdir()) == []  # the SQLite database's directory is gone


@pytest.mark.parametrize(("arguments", "said"), [
    (["--mutant", "claim_completed", "--adapter", "postgresql://127.0.0.1/x"],
     "--mutant is served on --adapter memory or sqlite, not 'postgresql://127.0.0.1/x'"),
    (["--mutant", "commit_failure_ignored"],
     "mutant commit_failure_ignored runs on sqlite, not on memory"),
])
def test_serve_refuses_a_mutant_it_cannot_build_in_one_line(arguments: list[str],
                                                            said: str) -> None:
    result = subprocess.run([sys.executable, "-m", "fencepost.cli", "serve", "adk-ledger",
                             *arguments], input="", capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"fencepost: error: {said}"]
    assert result.stdout == ""


class _WildStore:
    """A store whose get raises SystemExit for the id 'exit' and answers every other id with
    an integer of 5,000 digits (more than Python writes as text)."""

    def get(self, invocation_id: str) -> Any:
        if invocation_id == "exit":
            raise SystemExit(3)
        return 10**5000


def _wild_factory(env: AdapterEnv) -> Any:
    if env.namespace == "broken":
        raise KeyboardInterrupt
    return _WildStore()


def test_fencepost_serve_answers_every_request_whatever_it_holds_or_the_store_does() -> None:
    """Each request gets its reply, and the ones after it theirs: a line nested deeper than
    Python's parser reads, a namespace or op that is a list, dead owners that are no list, a
    store raising SystemExit, an answer no JSON can hold, a factory raising
    KeyboardInterrupt (each killed the thread reading, and the server then hung)."""
    from fencepost.adapters.wire import serve
    from fencepost.spec.ops import operations

    def call(ident: int, **fields: Any) -> str:
        request = {"id": ident, "type": "call", "namespace": "n", "op": "get",
                   "args": {"invocation_id": "x"}, "now": 1, **fields}
        return json.dumps(request)

    lines = [
        json.dumps({"id": 1, "type": "hello", "protocol": PROTOCOL, "contract": "adk-ledger"}),
        json.dumps({"id": 2, "type": "open", "namespace": "n"}),
        "[" * 100_000 + "]" * 100_000,
        call(3, namespace=["n"]),
        call(4, op=["get"]),
        call(5, dead=5),
        call(6, args={"invocation_id": "exit"}),
        call(7),
        json.dumps({"id": 8, "type": "open", "namespace": "broken"}),
        json.dumps({"id": 9, "type": "shutdown"}),
    ]
    out = io.StringIO()
    server = serve.Server("adk-ledger", _wild_factory, operations("adk-ledger"), frozenset(),
                          out)
    assert server.serve(serve.paced_lines(io.StringIO("\n".join(lines) + "\n"))) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    said = {r["id"]: r.get("fault", r.get("ok")) for r in replies}
    assert [r["id"] for r in replies] == [1, 2, None, 3, 4, 5, 6, 7, 8, 9]
    assert said[None].startswith("not JSON: '[[[[")
    assert said[3] == "namespace ['n'] is not open"
    assert said[4] == "unknown op ['get']"
    assert said[5] == "dead is a list of owner strings"
    assert said[6] == "the store raised SystemExit: 3"
    assert said[7].startswith("the store's answer cannot be written as JSON: ValueError: "
                              "Exceeds the limit (4300 digits)")
    assert said[8] == "open raised KeyboardInterrupt"


DEEP_ANSWERER = """import sys
for line in sys.stdin:
    sys.stdout.write("[" * 100000 + "]" * 100000 + "\\n")
    sys.stdout.flush()
"""


def test_wire_check_of_an_adapter_answering_deeper_than_json_reads_ends_with_its_verdict(
        tmp_path: Path) -> None:
    """Every line nested 100,000 deep (JSON that Python's parser does not read): each probe
    is answered with no JSON, and the check ends with its verdict (a RecursionError
    traceback before)."""
    script = tmp_path / "deep.py"
    script.write_text(DEEP_ANSWERER)
    command = f"{sys.executable} {script}"
    done = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "wire-check", "adk-ledger", command],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"0 of 17 probes answered as fencepost-wire/1 requires ({command})" in done.stdout
    assert done.stderr == ""


def test_a_reply_whose_id_is_true_answers_no_request() -> None:
    """JSON's true is no id, though Python's True equals 1: a reply with it is a protocol
    fault, and request 1 goes on waiting (it took that reply before)."""
    from types import SimpleNamespace

    from fencepost.adapters.wire.client import Child, _Waiting

    lock = threading.Lock()
    waiting = _Waiting()
    child = SimpleNamespace(_lock=lock, _changed=threading.Condition(lock),
                            _waiting={1: waiting})
    problem = Child._deliver(child, b'{"id": true, "ok": null}\n')  # type: ignore[arg-type]
    assert problem == "the adapter answered id True, which no request in flight has"
    assert child._waiting == {1: waiting} and waiting.reply is None
