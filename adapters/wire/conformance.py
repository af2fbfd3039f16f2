"""``fencepost wire-check``: is an adapter speaking fencepost-wire/1 right, before its contract is?

It talks to the adapter on a raw connection (not :class:`~.client.Child`, which gives up on the
first protocol mistake) and sends malformed, unexpected and boundary requests, one probe at a
time, each with what ``docs/protocol.md`` says the adapter must answer. A probe *passes* when
the answer is the one required and the adapter still answers a valid request after it; the
report lists every probe, so an author porting a store sees the protocol mistakes first.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

import attrs

from .client import LINE_BYTES, PROTOCOL, SHUTDOWN_GRACE_S, START_TIMEOUT_S, kill_group, read_json

NAMESPACE = "wire_check"


@attrs.frozen
class Probe:
    """One probe's result: what was sent, what the protocol requires, what came back."""

    name: str
    sent: str
    required: str
    got: str
    passed: bool


LINES_AHEAD = 4
"""Lines read from the adapter ahead of the probes (then it waits for them: an adapter that
writes without end, ``yes``, is held back by its pipe instead of filling memory)."""


class _Raw:
    """The adapter's stdin and stdout as lines, with a timeout on every read."""

    def __init__(self, argv: Sequence[str], timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.process = subprocess.Popen(list(argv), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        self.lines: queue.Queue[bytes | None] = queue.Queue(LINES_AHEAD)
        self.closed = threading.Event()
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stdout: IO[bytes]) -> None:
        """Each line, up to :data:`LINE_BYTES` (a longer one is cut there and ends the
        reading: it is no JSON, as the run's own reader says), then None."""
        while not self.closed.is_set():
            raw = stdout.readline(LINE_BYTES + 1)
            if not raw:
                break
            self._put(raw)
            if len(raw) > LINE_BYTES:
                break
        self._put(None)

    def _put(self, item: bytes | None) -> None:
        while not self.closed.is_set():
            try:
                self.lines.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def send(self, text: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(text.encode() + b"\n")
            stdin.flush()
        except OSError:
            pass

    def answer(self, timeout_s: float | None = None) -> Any:
        """The next line as JSON, or a string saying why there is none."""
        try:
            raw = self.lines.get(timeout=self.timeout_s if timeout_s is None else timeout_s)
        except queue.Empty:
            return "no answer within the timeout"
        if raw is None:
            self._put(None)
            return f"the adapter exited (status {self.process.poll()})"
        if len(raw) > LINE_BYTES:
            self._put(None)
            return f"a line longer than {LINE_BYTES >> 20} MiB: {raw[:80]!r}"
        try:
            return read_json(raw)
        except ValueError:
            return f"a line that is not JSON: {raw[:80]!r}"

    def close(self) -> None:
        self.closed.set()
        kill_group(self.process)


def _is_fault(answer: Any, ident: Any) -> bool:
    return isinstance(answer, dict) and "fault" in answer and answer.get("id") == ident


def _is_ok(answer: Any, ident: int | None) -> bool:
    return isinstance(answer, dict) and "ok" in answer and answer.get("id") == ident


def _shown(answer: Any) -> str:
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return text if len(text) <= 100 else text[:97] + "..."


def wire_check(contract: str, argv: Sequence[str], probe_call: Mapping[str, Any],
               options: Mapping[str, str], *, timeout_s: float = 5.0,
               concurrency: bool = True) -> list[Probe]:
    """Run every probe against a fresh start of ``argv``; ``probe_call`` is one valid call
    (``{"op": ..., "args": ...}``) of the contract, used where a probe needs a real one."""
    raw = _Raw(argv, timeout_s)
    results: list[Probe] = []
    ids = iter(range(1, 10_000))

    def request(kind: str, **fields: Any) -> tuple[int, str]:
        ident = next(ids)
        return ident, json.dumps({"id": ident, "type": kind, **fields})

    def probe(name: str, sent: str, required: str, check: Callable[[Any, int | None], bool],
              ident: int | None, timeout: float | None = None) -> Any:
        raw.send(sent)
        answer = raw.answer(timeout)
        results.append(Probe(name, sent if len(sent) <= 100 else sent[:97] + "...", required,
                             _shown(answer), check(answer, ident)))
        return answer

    def call(**overrides: Any) -> tuple[int, str]:
        return request("call", **{"namespace": NAMESPACE, "now": 1_000, "dead": [],
                                  **probe_call, **overrides})

    try:
        hello = {"protocol": PROTOCOL, "contract": contract, "options": dict(options)}
        ident, sent = request("hello", **{**hello, "protocol": "fencepost-wire/0"})
        probe("hello, another protocol version", sent, "a fault", _is_fault, ident,
              max(START_TIMEOUT_S, timeout_s))
        ident, sent = request("hello", **{**hello, "contract": "no-such-contract"})
        probe("hello, another contract", sent, "a fault", _is_fault, ident)
        ident, sent = request("hello", **hello)
        probe("hello", sent, "ok: name, version, capabilities (strings)",
              lambda a, i: _is_ok(a, i) and isinstance(a["ok"], dict)
              and isinstance(a["ok"].get("name"), str)
              and isinstance(a["ok"].get("version"), str)
              and isinstance(a["ok"].get("capabilities"), list), ident)
        probe("a line that is not JSON", "this is not json", "a fault with id null",
              _is_fault, None)
        probe("JSON that is not an object", "[1, 2]", "a fault with id null", _is_fault, None)
        probe("a request without an id", json.dumps({"type": "open"}), "a fault with id null",
              _is_fault, None)
        ident, sent = request("teleport")
        probe("an unknown request type", sent, "a fault with its id", _is_fault, ident)
        ident, sent = call(namespace="never_opened")
        probe("a call on a namespace never opened", sent, "a fault", _is_fault, ident)
        ident, sent = request("open", namespace=NAMESPACE, options=dict(options))
        probe("open", sent, "ok null", lambda a, i: _is_ok(a, i) and a["ok"] is None, ident)
        ident, sent = call(op="no_such_op")
        probe("a call of an unknown op", sent, "a fault", _is_fault, ident)
        ident, sent = call(args={})
        probe("a call without its arguments", sent, "a fault", _is_fault, ident)
        ident, sent = call(args={k: {"__type__": "NoSuchClass"} for k in probe_call["args"]})
        probe("a call with a value class the contract lacks", sent, "a fault", _is_fault, ident)
        ident, sent = call()
        probe("a valid call", sent, "ok or the contract's error, with its id",
              lambda a, i: isinstance(a, dict) and a.get("id") == i
              and ("ok" in a or "error" in a), ident)
        if concurrency:
            first, sent_first = call()
            second, sent_second = call()
            raw.send(sent_first)
            raw.send(sent_second)
            answers = [raw.answer(), raw.answer()]
            got = sorted(a["id"] for a in answers
                         if isinstance(a, dict) and isinstance(a.get("id"), int))
            results.append(Probe("two calls in flight", f"ids {first} and {second} at once",
                                 "one answer each, by id", ", ".join(_shown(a) for a in answers),
                                 got == [first, second]))
        ident, sent = request("close", namespace=NAMESPACE)
        probe("close", sent, "ok null", lambda a, i: _is_ok(a, i) and a["ok"] is None, ident)
        ident, sent = request("discard", namespace=NAMESPACE)
        probe("discard", sent, "ok null", lambda a, i: _is_ok(a, i) and a["ok"] is None, ident)
        ident, sent = request("shutdown")
        probe("shutdown", sent, "ok null, then exit 0",
              lambda a, i: _is_ok(a, i) and _exits(raw.process) == 0, ident)
    finally:
        raw.close()
    return results


def _exits(process: subprocess.Popen[bytes]) -> int | None:
    try:
        return process.wait(SHUTDOWN_GRACE_S)
    except subprocess.TimeoutExpired:
        return None
