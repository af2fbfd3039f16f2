"""Any Python store, served over ``fencepost-wire/1`` on stdin/stdout (``fencepost serve``).

The other side of :mod:`.store`: it reads requests, calls the store a factory opens per
namespace, and writes replies. It is the reference adapter of the protocol (the kit's own
stores pass every clause through it exactly as they do in process) and what the bench times
the protocol with. Requests are read by one thread at a time of :data:`CALL_THREADS`, and
the thread that reads a ``call`` runs it at once and then reads on: a call alone in flight has
no hand-off between threads. Another thread stands by; when the reader's call has run for
:data:`HANDOFF_S`, it takes the reading over, so requests in flight overlap as they do on a
store that declares ``concurrency`` (a call that waits for a later one is not stuck behind it).
A store that says it is about to wait outside the process (``env.waiting()``, a round trip to
its database) gives the reading over at once. The store reads the call's ``now`` and ``dead``
through its env, exactly where an in-process store reads the kit's clock and oracle.
Requests on a pipe are read as they come (:func:`paced_lines`): one not there yet is waited
for awake while requests have been coming that fast, as the kit waits for replies.

Values the store mints (an access, a lease: anything the codec does not know) are sent as
``{"__opaque__": "h<N>"}`` and looked up again when they come back; an opaque text this server
never sent is, to the store, a value nobody minted.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any

from fencepost.spec.env import AdapterEnv
from fencepost.spec.errors import ContractError, exception_said, told
from fencepost.spec.opaque import ForgedValue
from fencepost.spec.ops import Op
from fencepost.spec.values import COMPACT_JSON, decode, encode

from .client import LINE_BYTES, PROTOCOL, SPIN_S, Pace, cores, read_json, read_paced

CALL_THREADS = 32
"""Calls in flight at once (more wait until one ends): more than the kit's workers ever send.
The thread that reads a call runs it (handing the call to another thread cost about 0.1 ms a
call, and giving the reading to another at every call 15-160 µs, measured back to back
against the kit's old serve on 2 vCPUs: see ``fencepost bench``)."""

HANDOFF_S = 0.001
"""A call that runs this long gives the reading to the thread standing by (which looks that
often), so the requests after it are read and run meanwhile."""
IDLE_LOOK_S = 0.016
"""The longest the thread standing by waits before it looks again (the reader between calls):
a served store waiting for the kit costs next to nothing."""

Factory = Callable[[AdapterEnv], Any]


class _Overlong(str):
    """The type of :data:`TOO_LONG`."""


TOO_LONG = _Overlong("")
"""What :func:`paced_lines` gives for a request line longer than the protocol's
:data:`~.client.LINE_BYTES`, whose text it skipped (it is no request: a server answers it
with a fault and reads on)."""


class _Handles:
    """The store's opaque values and the texts they were sent as."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._texts: dict[Any, str] = {}
        self._values: dict[str, Any] = {}

    def text(self, value: Any) -> str:
        try:
            key: Any = ("v", value)
            hash(key)
        except TypeError:
            key = ("id", id(value))
        with self._lock:
            found = self._texts.get(key)
            if found is None:
                found = f"h{len(self._values) + 1}"
                self._texts[key] = found
                self._values[found] = value
            return found

    def value(self, text: str) -> Any:
        with self._lock:
            found = self._values.get(text)
        return ForgedValue(f"unknown handle {text}") if found is None else found


class _Call:
    """What the env of a store reads during one call (each call has a thread of its own)."""

    local = threading.local()


def _clock() -> int:
    now: int = _Call.local.now
    return now


def _dead() -> frozenset[str]:
    dead: frozenset[str] = _Call.local.dead
    return dead


class Server:
    """One connection: the namespaces opened on it and the store open in each."""

    def __init__(self, contract: str, factory: Factory, ops: Mapping[str, type[Op]],
                 capabilities: frozenset[str], out: IO[str], *, name: str = "fencepost-serve",
                 version: str = "") -> None:
        self.contract = contract
        self.factory = factory
        self.ops = ops
        self.capabilities = capabilities
        self.name = name
        self.version = version
        self._out = out
        self._write = threading.Lock()
        self._stores: dict[str, Any] = {}
        self._envs: dict[str, AdapterEnv] = {}
        self._below: dict[str, list[Any]] = {}  # the stores open under each namespace's last
        self._handles = _Handles()
        self._standby = threading.Lock()  # held by the one thread standing by for the reading
        self._state = threading.Lock()  # guards _reader and _since
        self._reader: threading.Thread | None = None  # the one thread reading requests
        self._since: float | None = None  # when the reader began the call it is running
        self._ended = threading.Event()  # the input ended: the threads standing by go
        self._nudge = threading.Event()  # look again now: the reader waits, or the input ended
        self._stopped = False
        self.said_hello = False

    def reply(self, ident: Any, **answer: Any) -> None:
        """Write one reply; one that cannot be written as JSON (a store's integer of more
        digits than Python writes, say) is a fault instead."""
        try:
            line = COMPACT_JSON.encode({"id": ident, **answer})
        except (ValueError, TypeError, RecursionError) as e:
            line = json.dumps({"id": ident, "fault": "the store's answer cannot be written as "
                               f"JSON: {type(e).__name__}: {told(e)[:200]}"})
        with self._write:
            self._out.write(line + "\n")
            self._out.flush()

    def serve(self, lines: Iterable[str]) -> int:
        """Answer every request read from ``lines`` until ``shutdown`` or end of input; the
        calls in flight then end, and every store is closed."""
        requests = iter(lines)
        threads = [threading.Thread(target=self._take_turns, args=(requests,),
                                    name=f"call{k}", daemon=True)
                   for k in range(CALL_THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for namespace in list(self._stores):
            self._close(namespace)
        return 0

    def _take_turns(self, lines: Iterator[str]) -> None:
        """One thread's loop: stand by for the reading, then read and run calls while it
        keeps the reading; until the input ends or says ``shutdown``."""
        me = threading.current_thread()
        while self._stand_by(me):
            while True:
                call = self._next_call(lines)
                if call is None:
                    return
                with self._state:
                    self._since = time.monotonic()
                self._call(*call)
                with self._state:
                    if self._reader is not me:
                        break  # another thread took the reading over meanwhile
                    self._since = None

    def _stand_by(self, me: threading.Thread) -> bool:
        """Wait to be the thread that stands by, then until the reading is free or its reader
        has run one call for :data:`HANDOFF_S`; take it (False: the input has ended). It looks
        again when that call would have run so long; while the reader is between calls, it
        looks ever less often, up to every :data:`IDLE_LOOK_S`."""
        with self._standby:
            idle = HANDOFF_S
            while not self._stopped:
                with self._state:
                    since, now = self._since, time.monotonic()
                    if self._reader is None or (since is not None and now - since >= HANDOFF_S):
                        self._reader, self._since = me, None
                        return True
                if since is None:
                    pause, idle = idle, min(idle * 2, IDLE_LOOK_S)
                else:
                    pause, idle = since + HANDOFF_S - now, HANDOFF_S
                self._nudge.wait(pause)
                self._nudge.clear()  # the state above is what is read: no nudge is lost
            return False

    def _waiting(self) -> None:
        """The store is about to wait outside the process (``env.waiting()``): if the thread
        running it is the reader, the thread standing by takes the reading over now, not
        :data:`HANDOFF_S` later, so the calls in flight run meanwhile."""
        with self._state:
            if self._reader is not threading.current_thread() or self._since is None:
                return
            self._since = float("-inf")
        self._nudge.set()

    def _next_call(self, lines: Iterator[str]) -> tuple[int, Mapping[str, Any]] | None:
        """Read (answering what is not a call) until a call; None when the input ended or
        said ``shutdown``."""
        while not self._stopped:
            line = next(lines, None)
            if line is None:
                self._stopped = True
            elif line is TOO_LONG:
                self.reply(None, fault=f"a request line longer than {LINE_BYTES >> 20} MiB "
                           "(the protocol's limit): skipped unread")
            elif line.strip():
                call = self.handle(line)
                if call is not None:
                    return call
        self._ended.set()
        self._nudge.set()
        return None

    def handle(self, line: str) -> tuple[int, Mapping[str, Any]] | None:
        """One request: a call to run (its id and request), or None when it was answered
        here (after ``shutdown`` no request is read)."""
        try:
            request = read_json(line)
        except ValueError:
            self.reply(None, fault=f"not JSON: {line[:80]!r}")
            return None
        ident = request.get("id") if isinstance(request, dict) else None
        if not isinstance(ident, int) or isinstance(ident, bool):
            self.reply(None, fault="a request is an object with an integer id")
            return None
        kind = request.get("type")
        if kind == "call" and self.said_hello:
            return ident, request
        try:
            value = self._control(kind, request)
        except _Fault as e:
            self.reply(ident, fault=str(e))
            return None
        except BaseException as e:  # noqa: BLE001 - the store's factory, close or discard
            self.reply(ident, fault=f"{kind} raised {exception_said(e)}")
            return None
        self.reply(ident, ok=value)
        if kind == "shutdown":
            self._stopped = True
        return None

    def _control(self, kind: Any, request: Mapping[str, Any]) -> Any:
        if kind == "hello":
            if request.get("protocol") != PROTOCOL:
                raise _Fault(f"this adapter speaks {PROTOCOL}, not {request.get('protocol')!r}")
            if request.get("contract") != self.contract:
                raise _Fault(f"this adapter serves {self.contract}, not "
                             f"{request.get('contract')!r}")
            self.said_hello = True
            return {"name": self.name, "version": self.version,
                    "capabilities": sorted(self.capabilities)}
        if not self.said_hello:
            raise _Fault("the first request is hello")
        if kind == "shutdown":
            return None
        if kind not in ("open", "close", "discard"):
            raise _Fault(f"unknown request type {kind!r}")
        namespace = request.get("namespace")
        if not isinstance(namespace, str):
            raise _Fault(f"{kind} needs a namespace string")
        if kind == "open":
            options = request.get("options", {})
            if not isinstance(options, dict):
                raise _Fault("open: options is an object")
            if namespace in self._stores and self._envs[namespace].options == options:
                # another connection to the same store: a store of its own from the factory,
                # which the calls go to until it is closed
                store = self.factory(self._envs[namespace])
                self._below.setdefault(namespace, []).append(self._stores[namespace])
                self._stores[namespace] = store
                return None
            env = AdapterEnv(clock=_clock, namespace=namespace,
                             is_alive=lambda owner: owner not in _dead(), dead_owners=_dead,
                             options=options, waiting=self._waiting)
            self._close(namespace)
            self._envs[namespace] = env
            self._stores[namespace] = self.factory(env)
            return None
        if kind == "close":  # the last store opened; the namespace closes with its first
            below = self._below.get(namespace)
            if below:
                self._close_one(self._stores[namespace])
                self._stores[namespace] = below.pop()
            else:
                self._close(namespace)
            return None
        if kind == "discard":
            self._close(namespace)
            dropped = self._envs.pop(namespace, None)
            discard = getattr(self.factory, "discard", None)
            if dropped is not None and discard is not None:
                discard(dropped)
            return None
        raise _Fault(f"unknown request type {kind!r}")

    def _close(self, namespace: str) -> None:
        """Close every store open on ``namespace``, the last opened first."""
        for store in [self._stores.pop(namespace, None), *reversed(
                self._below.pop(namespace, []))]:
            self._close_one(store)

    @staticmethod
    def _close_one(store: Any) -> None:
        close = getattr(store, "close", None)
        if close is not None:
            close()

    def _call(self, ident: int, request: Mapping[str, Any]) -> None:
        """Run one call and reply; whatever the store raises or answers is a reply (a thread
        that died here would leave the reading to nobody)."""
        try:
            store, op = self._decoded(request)
        except _Fault as e:
            self.reply(ident, fault=str(e))
            return
        _Call.local.now = request["now"]
        _Call.local.dead = frozenset(request.get("dead", ()))
        try:
            value = op.invoke(store)
            self.reply(ident, ok=encode(value, self._handles.text))
        except ContractError as e:
            try:
                self.reply(ident, error={"code": str.__str__(e.code),
                                         "detail": str.__str__(e.detail),
                                         "payload": encode(e.payload, self._handles.text)})
            except BaseException as why:  # noqa: BLE001 - the store's refusal will not be read
                self.reply(ident, fault=f"the store's refusal cannot be sent: {told(why)}")
        except BaseException as e:  # noqa: BLE001 - the store's crash (SystemExit too): a fault
            self.reply(ident, fault=f"the store raised {exception_said(e)}")

    def _decoded(self, request: Mapping[str, Any]) -> tuple[Any, Op]:
        namespace, name = request.get("namespace"), request.get("op")
        store = self._stores.get(namespace) if isinstance(namespace, str) else None
        if store is None:
            raise _Fault(f"namespace {namespace!r} is not open")
        cls = self.ops.get(name) if isinstance(name, str) else None
        if cls is None:
            raise _Fault(f"unknown op {name!r}")
        args = request.get("args")
        if not isinstance(args, dict):
            raise _Fault("args is an object")
        if type(request.get("now")) is not int:
            raise _Fault("a call carries now, an integer")
        dead = request.get("dead", [])
        if not isinstance(dead, list) or not all(isinstance(d, str) for d in dead):
            raise _Fault("dead is a list of owner strings")
        try:
            op = cls(**{k: decode(v, opaque=self._handles.value) for k, v in args.items()})
        except (TypeError, ValueError) as e:
            raise _Fault(f"bad arguments for {request.get('op')}: {e}") from None
        return store, op


class _Fault(Exception):
    """A request the server cannot process (answered with ``fault``)."""


def paced_lines(stream: IO[str], spin_s: float = SPIN_S) -> Iterator[str]:
    """The lines of ``stream`` (a text stream on a pipe or socket, its encoding UTF-8), as
    iterating it gives them, each read as soon as it comes: a request not there yet is
    waited for awake, reading again for as long as a :class:`~.client.Pace` says (up to
    ``spin_s``), then asleep in ``select``. A reader woken by the request costs a wake-up
    across cores, which on a small virtual machine is most of a round trip; the kit waits for
    the reply the same way. Any other stream (a terminal, a file, another encoding), or one
    core, is iterated as it is. The stream must not have been read from (its own buffer would
    hold what the pipe no longer has).

    A line longer than :data:`~.client.LINE_BYTES` (the protocol's limit; on a stream iterated
    as it is, that many characters) is not kept: it is given as :data:`TOO_LONG`, its text
    skipped to its end, so a client writing without end costs a bounded buffer."""
    fd = _paceable(stream)
    if fd is None or spin_s <= 0 or cores() < 2:
        yield from _bounded_lines(stream)
        return
    errors = getattr(stream, "errors", None) or "strict"
    pace = Pace(spin_s)
    buffer = bytearray()
    awake: float | None = None  # for the line being read: how long to wait awake
    scanned = 0  # the buffer holds no newline before this
    skipping = False  # in a line too long: drop what comes until its newline
    os.set_blocking(fd, False)
    try:
        while True:
            end = buffer.find(b"\n", scanned)
            if end >= 0:
                kept = not skipping and end <= LINE_BYTES
                line = bytes(buffer[:end + 1]) if kept else b""
                del buffer[:end + 1]
                awake, scanned = None, 0
                if skipping:
                    skipping = False
                    continue
                yield line.decode("utf-8", errors) if kept else TOO_LONG
                continue
            scanned = len(buffer)
            if skipping or scanned > LINE_BYTES:
                if not skipping:
                    yield TOO_LONG
                skipping, scanned = True, 0
                del buffer[:]
            if awake is None:
                awake = pace.spin()
            chunk, waited = read_paced(fd, awake)
            if not chunk:
                if buffer and not skipping:
                    yield bytes(buffer).decode("utf-8", errors)
                return
            if awake:  # the first part of the line came: how long that took, once
                pace.waited(waited)
                awake = 0.0
            buffer += chunk
    finally:
        os.set_blocking(fd, True)


SKIP_CHARS = 1 << 20
"""How much of a line too long :func:`_bounded_lines` reads at a time to skip it."""


def _bounded_lines(stream: IO[str]) -> Iterator[str]:
    """The lines of ``stream`` as iterating it gives them, a line longer than
    :data:`~.client.LINE_BYTES` characters given as :data:`TOO_LONG` and skipped unkept."""
    while line := stream.readline(LINE_BYTES + 1):
        if len(line) <= LINE_BYTES or line.endswith("\n"):
            yield line
            continue
        yield TOO_LONG
        while (rest := stream.readline(SKIP_CHARS)) and not rest.endswith("\n"):
            pass


def _paceable(stream: IO[str]) -> int | None:
    """``stream``'s file descriptor if it is a pipe or socket in UTF-8 (None: iterate it as
    it is)."""
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):
        return None
    encoding = getattr(stream, "encoding", None)
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) or encoding is None:
        return None
    if codecs.lookup(encoding).name != "utf-8":
        return None
    return fd


def serve(contract: str, factory: Factory, ops: Mapping[str, type[Op]],
          capabilities: frozenset[str], *, name: str = "fencepost-serve",
          version: str = "") -> int:
    """Serve ``factory``'s stores on this process's stdin/stdout; the exit status."""
    server = Server(contract, factory, ops, capabilities, sys.stdout, name=name, version=version)
    try:
        return server.serve(paced_lines(sys.stdin))
    finally:
        close = getattr(factory, "close", None)
        if close is not None:
            close()
