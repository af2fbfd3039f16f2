"""One adapter child process speaking ``fencepost-wire/1`` (see ``docs/protocol.md``).

:class:`Child` starts the command in a process group of its own, writes requests as JSON lines
on its stdin and matches the replies read by a reader thread to the waiting callers by ``id``,
so several threads may have requests in flight at once (the ``concurrency`` capability). It
keeps the last lines of the child's stderr for the reasons it gives.

No thread sits between a caller and its reply: a waiting caller reads the child's stdout itself
(the first to wait leads: it reads lines, hands each to its caller, and passes the lead on when
its own reply comes), so an answer costs one write and one read, not a wake-up of a reader
thread (a thread hand-off costs more than the whole protocol may, see ``fencepost bench``).
The reader waits for a fast store's reply awake for a moment (:data:`SPIN_S`) before it
sleeps: being woken across cores was most of a round trip on a small virtual machine.

Failure is a value here, never a hang: a reply that does not come within ``timeout_s``, a child
that exits, a line that is not a reply to a request in flight, each kills the child (its whole
process group) and fails every request in flight with :class:`WireLost`, which the kit reads as
"the store was lost" (the check at stake is ``unknown``). Every child still running when the
interpreter exits is killed.
"""

from __future__ import annotations

import atexit
import collections
import json
import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import IO, Any

import attrs

from fencepost.adapters.processes import descendants, signal_all
from fencepost.spec.errors import BackendUnavailable
from fencepost.spec.values import COMPACT_JSON

PROTOCOL = "fencepost-wire/1"
LINE_BYTES = 256 << 20
"""The longest reply line the kit reads (256 MiB)."""
STDERR_LINES = 50
"""How many of the child's last stderr lines a reason quotes."""
STDERR_LINE_BYTES = 4096
"""A line of a child's stderr is kept up to this many bytes."""
START_TIMEOUT_S = 20.0
"""How long a child may take to answer ``hello`` at the least (a runtime starting up, a script
compiled on first run: longer than one call may take)."""
SPIN_S = 100e-6
"""How long a reader waits for a reply awake before it sleeps (see :class:`Pace`): most
replies of a fast store come within it. A store whose replies take longer is soon waited for
asleep at once."""
SHUTDOWN_GRACE_S = 2.0
"""How long a child may take to exit after ``shutdown`` before it is killed."""

_CHILDREN: weakref.WeakSet[Child] = weakref.WeakSet()


def read_json(text: str | bytes) -> Any:
    """One protocol line as JSON; ``ValueError`` for a line that is not JSON (the tokens
    ``NaN`` and ``Infinity`` Python would read are not) or that nests too deeply for Python's
    parser (a ``RecursionError`` it raises)."""
    try:
        return _DECODER.decode(text if isinstance(text, str) else text.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def _not_json(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_not_json)
"""One decoder for every line (``json.loads`` with an argument makes a new one per call)."""


class WireLost(BackendUnavailable):
    """The adapter child cannot answer any more (it timed out, exited or broke the protocol):
    the store is lost. Its ``detail`` says why and quotes the child's last stderr lines."""


class WireFault(Exception):
    """The adapter answered a request with ``fault`` (it could not process it)."""


class WireError(Exception):
    """The adapter answered a ``call`` with the contract's ``error`` (``{"code", "detail",
    "payload"}``, as JSON data)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("code"))
        self.error = error


@attrs.define
class _Waiting:
    reply: dict[str, Any] | None = None
    gone: bool = False
    """The child was lost before the reply came."""

    @property
    def done(self) -> bool:
        return self.reply is not None or self.gone


class Child:
    """A started adapter process and its one connection."""

    def __init__(self, argv: Sequence[str], timeout_s: float,
                 environment: Mapping[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.timeout_s = timeout_s
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.lost: str | None = None
        """Why the child can answer no more, or None while it can."""
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        """Notified when a reply is handed over, the lead is free, or the child is lost."""
        self._leading = False
        self._buffer = bytearray()
        self._write = threading.Lock()
        self._next = 1
        self._waiting: dict[int, _Waiting] = {}
        try:
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
                env=None if environment is None else {**os.environ, **environment})
        except OSError as e:
            raise FileNotFoundError(f"cannot start {self.argv[0]}: {e.strerror or e}") from None
        _CHILDREN.add(self)
        assert self.process.stdout is not None and self.process.stderr is not None
        self._stdout = self.process.stdout.fileno()
        os.set_blocking(self._stdout, False)
        self._pace = Pace(SPIN_S if cores() > 1 else 0.0)
        self._log = threading.Thread(target=self._read_log, args=(self.process.stderr,),
                                     daemon=True, name="fencepost-wire-stderr")
        self._log.start()

    # -- requests -------------------------------------------------------------------------------

    def request(self, kind: str, timeout_s: float | None = None, **fields: Any) -> Any:
        """Send ``{"id", "type": kind, **fields}`` and wait for its reply: the ``ok`` value (JSON
        data). Raises :class:`WireError` for an ``error`` reply, :class:`WireFault` for a
        ``fault`` and :class:`WireLost` when the child is lost."""
        waiting = _Waiting()
        with self._lock:
            if self.lost is not None:
                raise WireLost(self.lost)
            ident, self._next = self._next, self._next + 1
            self._waiting[ident] = waiting
        line = COMPACT_JSON.encode({"id": ident, "type": kind, **fields}) + "\n"
        try:
            with self._write:
                stdin = self.process.stdin
                assert stdin is not None
                stdin.write(line.encode())
                stdin.flush()
        except (OSError, ValueError):
            self.lose(f"the adapter stopped reading its stdin ({self._exit_status()})")
        limit = self.timeout_s if timeout_s is None else timeout_s
        if not self._await(waiting, time.monotonic() + limit):
            self.lose(f"the adapter did not answer {_what(kind, fields)} within {limit:g} s")
        reply = waiting.reply
        if reply is None:
            raise WireLost(self.lost or "the adapter was lost")
        if "fault" in reply:
            raise WireFault(f"the adapter could not process {_what(kind, fields)}: "
                            f"{reply['fault']}")
        if "error" in reply:
            raise WireError(reply["error"])
        return reply["ok"]

    # -- reading: the caller that waits first reads for every caller ----------------------------

    def _await(self, waiting: _Waiting, deadline: float) -> bool:
        """Wait for ``waiting``'s reply until ``deadline``; False if it did not come."""
        with self._changed:
            while not waiting.done:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                if self._leading:
                    self._changed.wait(remaining)
                    continue
                self._leading = True
                self._lock.release()
                try:
                    problem = self._lead(waiting, deadline)
                finally:
                    self._lock.acquire()
                    self._leading = False
                    self._changed.notify_all()
                if problem is not None:
                    self._lock.release()
                    try:
                        self.lose(problem)
                    finally:
                        self._lock.acquire()
            return True

    def _lead(self, waiting: _Waiting, deadline: float) -> str | None:
        """Read and hand over lines until ``waiting``'s reply came or ``deadline`` passed; what
        is wrong with the child, if anything."""
        while not waiting.done:
            line = self._line(deadline)
            if line is None:
                return None  # the deadline: the caller says so
            if line == b"":
                return f"the adapter closed its stdout ({self._exit_status()})"
            problem = self._deliver(line)
            if problem is not None:
                return problem
        return None

    def _line(self, deadline: float) -> bytes | None:
        """The next stdout line; b"" at end of file, None at the deadline. A line longer than
        :data:`LINE_BYTES` is ended there (it is then no JSON, and the child is lost).

        A reply not there yet is first waited for awake, reading again for as long as
        :class:`Pace` says (up to :data:`SPIN_S`), then asleep in ``select``. A reader woken
        by the reply costs a wake-up across cores, which on a small virtual machine is most of
        a round trip."""
        scanned = 0
        awake = self._pace.spin()
        while (end := self._buffer.find(b"\n", scanned)) < 0:
            scanned = len(self._buffer)
            if scanned > LINE_BYTES:
                end = LINE_BYTES
                break
            chunk, waited = read_paced(self._stdout, awake, deadline)
            if chunk is None:
                return None
            if not chunk:
                return b""
            if awake:  # the first part of the line came: how long that took, once
                self._pace.waited(waited)
                awake = 0.0
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        return line + b"\n"

    def _deliver(self, raw: bytes) -> str | None:
        """Hand one stdout line to its waiting request; what is wrong with it, if anything."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return (f"the adapter wrote a line that is not UTF-8 (byte {e.start}): "
                    f"{_shown(raw)!r}")
        try:
            reply = read_json(text)
        except ValueError:
            return f"the adapter wrote a line that is not JSON: {_shown(raw)!r}"
        if not isinstance(reply, dict):
            return f"the adapter wrote {_shown(raw)!r}, not a reply object"
        kinds = ("ok" in reply) + ("error" in reply) + ("fault" in reply)
        if kinds != 1:
            return (f"the adapter wrote {_shown(raw)!r}: a reply holds exactly one of ok, "
                    "error, fault")
        if "error" in reply and not _is_error(reply["error"]):
            return (f"the adapter wrote {_shown(raw)!r}: error is {{\"code\": STRING, "
                    "\"detail\": STRING, \"payload\": VALUE}")
        ident = reply.get("id")
        with self._lock:
            waiting = self._waiting.pop(ident, None) if type(ident) is int else None
            if waiting is None:
                return f"the adapter answered id {ident!r}, which no request in flight has"
            waiting.reply = reply
            self._changed.notify_all()
        return None

    def _read_log(self, stderr: IO[bytes]) -> None:
        """Keep the child's last :data:`STDERR_LINES` lines of stderr, each cut to
        :data:`STDERR_LINE_BYTES` (a flood without newlines costs no more than that)."""
        line = b""
        cut = False
        while True:
            chunk = stderr.read1(1 << 16) if hasattr(stderr, "read1") else stderr.read(1 << 16)
            if not chunk:
                break
            *whole, rest = chunk.split(b"\n")
            for part in whole:
                self._log_line(line + part, cut or len(line) + len(part) > STDERR_LINE_BYTES)
                line, cut = b"", False
            line += rest
            if len(line) > STDERR_LINE_BYTES:
                line, cut = line[:STDERR_LINE_BYTES], True
        if line or cut:
            self._log_line(line, cut)

    def _log_line(self, raw: bytes, cut: bool) -> None:
        text = raw[:STDERR_LINE_BYTES].decode("utf-8", "replace")
        self.stderr.append(f"{text} [line cut at {STDERR_LINE_BYTES} bytes]" if cut else text)

    # -- losing and ending ----------------------------------------------------------------------

    def lose(self, reason: str) -> None:
        """Kill the child and fail every request in flight with ``reason`` (the first reason
        is the one kept)."""
        with self._lock:
            first = self.lost is None
            if first:
                self.lost = reason
            waiting, self._waiting = list(self._waiting.values()), {}
        self.kill()
        if first:
            self._log.join(0.5)  # the last stderr lines, which the reason quotes
        with self._lock:
            if first:
                self.lost = reason + self.stderr_tail()
            for w in waiting:
                w.gone = True
            self._changed.notify_all()

    def stderr_tail(self, lines: int = 10) -> str:
        tail = list(self.stderr)[-lines:]
        return "; its stderr ends: " + " | ".join(tail) if tail else "; its stderr is empty"

    def _exit_status(self) -> str:
        try:
            code = self.process.wait(0.5)
        except subprocess.TimeoutExpired:
            return "still running"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"

    def kill(self) -> None:
        """Kill the child's whole process group (idempotent)."""
        kill_group(self.process)
        for stream in (self.process.stdin,):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def shutdown(self) -> None:
        """``shutdown``, then end of input; kill what is still running after the grace."""
        if self.lost is None:
            try:
                self.request("shutdown", timeout_s=SHUTDOWN_GRACE_S)
            except (WireLost, WireFault):
                pass
        with self._lock:
            if self.lost is None:
                self.lost = "the adapter was shut down"
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(SHUTDOWN_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


class Pace:
    """How long a reader waits for the next reply awake before it sleeps (see
    ``Child._line``): ``spin_s`` (:data:`SPIN_S`; 0 on one core, where waiting awake would
    hold the core the child needs) while most replies waited for awake came within it (the
    share :attr:`hits`, a moving average, at least :data:`HITS`), else not at all, but for
    every :data:`PROBE_EVERY` th line: a store may be fast again after a slow spell, and a
    line waited for asleep cannot tell (it is not counted).

    Waiting awake never makes a reply later: one that has not come within ``spin_s`` is then
    waited for asleep, as it would have been. It costs the reader's core that long.

    Example::

        pace = Pace(100e-6)
        awake = pace.spin()          # 100e-6: read again for up to 100 us before sleeping
        pace.waited(40e-6)           # the reply came after 40 us: a hit
    """

    PROBE_EVERY = 8
    HITS = 0.5
    WEIGHT = 1 / 8
    """The weight of the latest line in the moving average."""

    def __init__(self, spin_s: float) -> None:
        self.spin_s = spin_s
        self.hits = 1.0
        self.lines = 0

    def spin(self) -> float:
        """How long to wait awake for the next line (0.0: asleep at once)."""
        self.lines += 1
        if self.spin_s > 0 and (self.hits >= self.HITS or self.lines % self.PROBE_EVERY == 0):
            return self.spin_s
        return 0.0

    def waited(self, seconds: float) -> None:
        """A line waited for awake (as :meth:`spin` said) came after ``seconds``."""
        self.hits += ((seconds < self.spin_s) - self.hits) * self.WEIGHT


def read_paced(fd: int, awake: float, deadline: float | None = None
               ) -> tuple[bytes | None, float]:
    """What the non-blocking ``fd`` has next: b"" at its end (or when it was closed
    meanwhile), None once the ``time.monotonic()`` ``deadline`` has passed (None: no deadline).
    While nothing is there it reads again, for up to ``awake`` seconds, then waits asleep in
    ``select``. Also how long the bytes took to come (0.0: they were there), for a
    :class:`Pace`."""
    since: float | None = None
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            now = time.perf_counter()
            if since is None:
                since = now
            if now - since < awake:
                continue
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None, now - since
            try:
                ready, _, _ = select.select([fd], [], [], remaining)
            except (OSError, ValueError):  # closed by a kill meanwhile
                return b"", now - since
            if not ready:
                return None, now - since
            continue
        except OSError:
            chunk = b""
        return chunk, 0.0 if since is None else time.perf_counter() - since


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process of the child's group and of its tree, those that left the group
    (``setsid``) too, also when the child itself has exited (what it started may live on);
    reap the child."""
    tree = descendants(process.pid)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone
    signal_all(tree, signal.SIGKILL)
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
        pass


def cores() -> int:
    """How many cores this thread may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _shown(raw: bytes) -> str:
    return raw[:200].decode("utf-8", "replace").rstrip("\n")


def _is_error(error: Any) -> bool:
    return (isinstance(error, dict) and isinstance(error.get("code"), str)
            and isinstance(error.get("detail", ""), str))


def _what(kind: str, fields: Mapping[str, Any]) -> str:
    return str(fields["op"]) if kind == "call" else kind


@atexit.register
def _kill_children() -> None:
    for child in list(_CHILDREN):
        child.kill()
