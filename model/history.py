"""Concurrent histories: what each process called, when, and what it got back.

A history is what a linearizability check reads (see :mod:`fencepost.model.linearizability`):
one :class:`Event` per call, with the call's interval on a monotonic clock, the store's answer
(or none: the call timed out or lost its connection) and the store's own time at the call.
It is a value of the model layer, beside the checker that reads it (the checker needs only the
model, and the model imports nothing from the simulation); the concurrent runs of
:mod:`fencepost.scenarios.concurrent` record it, ``fencepost analyze`` loads it.

Ops are stored **as the store received them**: identifiers the store minted earlier appear as
their real values (not as :class:`~fencepost.spec.opaque.Ref`); the checker maps them back to the
model's names. A :class:`Ref`/:class:`Forged` left in an op is kept and resolved by the checker.

Histories are saved as JSON lines (:meth:`History.save`, :meth:`History.load`): a header line,
then one event per line::

    {"fencepost": "history", "version": 1, "contract": "adk-ledger"}
    {"process": "p1", "op": {"op": "claim", "args": {...}}, "invoked": 10, "completed": 52,
     "outcome": {"ok": {...}}, "at": 1000000, "info": false}

Values are written by the kit's one exact codec, :mod:`fencepost.spec.values` (the same as in
reports, in the SQL stores' columns and on the wire): everything comes back with its type, a
value of an unregistered class as its ``repr``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import attrs

from fencepost.model.base import options_with_defaults
from fencepost.spec.ops import Op, operations
from fencepost.spec.outcome import Crash, Err, Ok, Outcome, outcome_from_json, outcome_to_json
from fencepost.spec.values import decode, encode

SpecOf = Callable[[str], ModuleType | None]
"""A contract's name -> its spec module (None: unknown)."""

FORMAT = "history"
VERSION = 1

# What a call answers when the store (or the connection to it) was lost: the call may or may
# not have taken effect, exactly like a timeout (the harness's StoreLost).
LOST_CRASHES = frozenset({"ConnectionError", "BrokenPipeError", "TimeoutError"})
LOST_ERRORS = frozenset({"backend_unavailable"})


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@attrs.frozen
class Event:
    """One call of one process.

    ``invoked`` and ``completed`` are monotonic nanoseconds (``time.monotonic_ns()``) on one
    clock for the whole history; ``completed`` is None when the call never returned. ``outcome``
    is the store's answer, None when there is none. ``at`` is the store's time in ms when the
    call was made (the simulated clock ``env.clock()``, frozen during a burst): the model steps
    the op at that time.

    The event is *indeterminate* (it may or may not have taken effect, at any moment after
    ``invoked``) when it has no outcome, never returned, is marked ``info`` (timed out, or the
    answer is not to be trusted), or its answer says the store was lost
    (``backend_unavailable``, a ConnectionError/BrokenPipeError/TimeoutError crash).
    """

    process: str
    op: Op
    invoked: int
    completed: int | None
    outcome: Outcome | None
    at: int
    info: bool = False

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.process, str):
            raise ValueError(f"process must be a str, not {self.process!r}")
        if not isinstance(self.op, Op):
            raise ValueError(f"op must be an Op, not {self.op!r}")
        for name in ("invoked", "at"):
            if not _is_int(getattr(self, name)):
                raise ValueError(f"{name} must be an int, not {getattr(self, name)!r}")
        if self.completed is not None:
            if not _is_int(self.completed):
                raise ValueError(f"completed must be an int or None, not {self.completed!r}")
            if self.completed < self.invoked:
                raise ValueError(f"completed ({self.completed}) is before invoked "
                                 f"({self.invoked})")
        elif self.outcome is not None:
            raise ValueError("an event with an outcome must have a completion time")
        if self.outcome is not None and not isinstance(self.outcome, Ok | Err | Crash):
            raise ValueError(f"outcome must be Ok, Err, Crash or None, not {self.outcome!r}")
        if not isinstance(self.info, bool):
            raise ValueError(f"info must be a bool, not {self.info!r}")

    @property
    def indeterminate(self) -> bool:
        """May this call have taken effect or not, with any answer?"""
        outcome = self.outcome
        return (
            self.info
            or self.completed is None
            or outcome is None
            or (isinstance(outcome, Crash) and outcome.kind in LOST_CRASHES)
            or (isinstance(outcome, Err) and outcome.code in LOST_ERRORS)
        )

    def describe(self) -> str:
        """``process: op -> outcome`` on one line."""
        answer = "(indeterminate)" if self.outcome is None else str(self.outcome)
        if self.outcome is not None and self.indeterminate:
            answer += " (indeterminate)"
        return f"{self.process}: {self.op.describe()} -> {answer}"


def _events(events: Iterable[Event]) -> tuple[Event, ...]:
    return tuple(events)


def _options(options: Mapping[str, str]) -> dict[str, str]:
    return dict(options)


def _capabilities(names: Iterable[str]) -> frozenset[str]:
    return frozenset(names)


@attrs.frozen
class History:
    """The events of one run against one store of ``contract``, in any order, with the
    contract options the run used and the capabilities the store declared (the model needs
    both to check the history again; they are saved in the header)."""

    contract: str
    events: tuple[Event, ...] = attrs.field(converter=_events)
    options: Mapping[str, str] = attrs.field(factory=dict, converter=_options)
    capabilities: frozenset[str] = attrs.field(default=frozenset(), converter=_capabilities)
    run: Mapping[str, str | int] = attrs.field(factory=dict, converter=_options, eq=False)
    """The run that made it, for people (adapter, seed, profile, kit version, replay
    command): in the header, never used to check it."""

    def __attrs_post_init__(self) -> None:
        for k, event in enumerate(self.events):
            if not isinstance(event, Event):
                raise ValueError(f"event {k} is not an Event: {event!r}")
            if event.op.contract != self.contract:
                raise ValueError(f"event {k} is a {event.op.contract} op in a {self.contract} "
                                 "history")

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    # -- JSON lines ---------------------------------------------------------------------------

    def to_lines(self) -> Iterator[str]:
        """The JSON lines (without newlines): the header, then one line per event."""
        header: dict[str, Any] = {"fencepost": FORMAT, "version": VERSION,
                                  "contract": self.contract}
        if self.options:
            header["options"] = dict(sorted(self.options.items()))
        if self.capabilities:
            header["capabilities"] = sorted(self.capabilities)
        if self.run:
            header["run"] = dict(self.run)
        yield json.dumps(header)
        for event in self.events:
            yield json.dumps(event_to_json(event), separators=(",", ":"))

    def dumps(self) -> str:
        return "".join(line + "\n" for line in self.to_lines())

    def save(self, target: str | Path | IO[str]) -> None:
        """Write the history as JSON lines to a path or a text stream."""
        if isinstance(target, str | Path):
            with open(target, "w", encoding="utf-8") as f:
                f.writelines(line + "\n" for line in self.to_lines())
        else:
            target.writelines(line + "\n" for line in self.to_lines())

    @classmethod
    def from_lines(cls, lines: Iterable[str], spec_of: SpecOf | None = None) -> History:
        """Parse JSON lines (blank lines are skipped); a malformed line raises ValueError
        naming its number (1 = the header). ``spec_of``: see :meth:`load`."""
        contract: str | None = None
        spec: ModuleType | None = None
        head: dict[str, Any] = {}
        head_number = 1
        events: list[Event] = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"line {number}: not JSON: {e}") from None
            except RecursionError:
                raise ValueError(f"line {number}: nested too deeply to read") from None
            if contract is None:
                contract, spec = _header(data, number, spec_of or builtin_spec)
                head, head_number = data, number
                continue
            try:
                events.append(event_from_json(contract, data))
            except (ValueError, TypeError, KeyError) as e:
                raise ValueError(f"line {number}: {_message(e)}") from None
            except RecursionError:
                raise ValueError(f"line {number}: nested too deeply to read") from None
        if contract is None:
            raise ValueError("line 1: empty history: the header line is missing")
        options, capabilities = head.get("options", {}), head.get("capabilities", [])
        if not (isinstance(options, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in options.items())):
            raise ValueError(f"line {head_number}: options must map names to strings")
        assert spec is not None
        _check_options(spec, options, head_number)
        if not (isinstance(capabilities, list) and all(isinstance(c, str)
                                                       for c in capabilities)):
            raise ValueError(f"line {head_number}: capabilities must be a list of names")
        run = head.get("run", {})
        if not (isinstance(run, dict) and all(
                isinstance(k, str) and type(v) in (str, int) for k, v in run.items())):
            raise ValueError(f"line {head_number}: run must map names to strings or numbers")
        return cls(contract, tuple(events), options, frozenset(capabilities), run)

    @classmethod
    def loads(cls, text: str, spec_of: SpecOf | None = None) -> History:
        return cls.from_lines(text.splitlines(), spec_of)

    @classmethod
    def load(cls, source: str | Path | IO[str], spec_of: SpecOf | None = None) -> History:
        """Read a history saved with :meth:`save` from a path or a text stream.
        ``spec_of(contract)`` gives the contract's spec module (its ops and options), or None
        for a contract it does not know; by default the built-in contracts' are imported
        (``fencepost analyze`` passes the registry's, so any installed contract is read)."""
        if isinstance(source, str | Path):
            with open(source, encoding="utf-8") as f:
                return cls.from_lines(_bounded_lines(f), spec_of)
        return cls.from_lines(_bounded_lines(source), spec_of)


LINE_CHARS = 64 << 20
"""The longest line :meth:`History.load` reads: an event is far shorter; a file without line
ends (a binary named by mistake) is refused at this length, not read into memory whole."""


def _bounded_lines(stream: IO[str]) -> Iterator[str]:
    """The lines of ``stream``, each at most :data:`LINE_CHARS` long (ValueError past it)."""
    number = 0
    while line := stream.readline(LINE_CHARS + 1):
        number += 1
        if len(line) > LINE_CHARS:
            raise ValueError(f"line {number}: longer than {LINE_CHARS >> 20} Mi characters")
        yield line


def _message(e: BaseException) -> str:
    return str(e) if not isinstance(e, KeyError) else f"missing or unknown {e}"


def _header(data: Any, number: int, spec_of: SpecOf) -> tuple[str, ModuleType]:
    if not isinstance(data, dict) or data.get("fencepost") != FORMAT:
        raise ValueError(f"line {number}: not a fencepost history header "
                         '(expected {"fencepost": "history", "version": 1, "contract": ...})')
    if data.get("version") != VERSION:
        raise ValueError(f"line {number}: history format version {data.get('version')!r} is "
                         f"not supported (this kit reads version {VERSION})")
    contract = data.get("contract")
    if not isinstance(contract, str):
        raise ValueError(f"line {number}: unknown contract {contract!r}")
    spec = spec_of(contract)
    if spec is None or not operations(contract):
        raise ValueError(f"line {number}: unknown contract {contract!r}")
    return contract, spec


def builtin_spec(contract: str) -> ModuleType | None:
    """The spec module of a contract of this package (importing it registers its ops)."""
    try:
        return importlib.import_module(f"fencepost.spec.{contract.replace('-', '_')}")
    except ImportError:
        return None


def _check_options(spec: ModuleType, options: Mapping[str, str], number: int) -> None:
    """The header's options must be choices and settings of the contract with allowed values,
    as the run that made the history checked them (a checker given others would answer for
    a contract nobody ran)."""
    try:
        options_with_defaults(getattr(spec, "CHOICES", ()), options,
                              getattr(spec, "SETTINGS", ()))
    except ValueError as e:
        raise ValueError(f"line {number}: in the header's options: {e}") from None


# --- events, ops and outcomes ------------------------------------------------------------------

_EVENT_KEYS = frozenset({"process", "op", "invoked", "completed", "outcome", "at", "info"})


def event_to_json(event: Event) -> dict[str, Any]:
    return {
        "process": event.process,
        "op": op_to_json(event.op),
        "invoked": event.invoked,
        "completed": event.completed,
        "outcome": None if event.outcome is None else outcome_to_json(event.outcome),
        "at": event.at,
        "info": event.info,
    }


def event_from_json(contract: str, data: Any) -> Event:
    if not isinstance(data, dict):
        raise ValueError(f"an event is a JSON object, not {type(data).__name__}")
    missing = {"process", "op", "invoked", "at"} - set(data)
    if missing:
        raise ValueError(f"event lacks {', '.join(sorted(missing))}")
    extra = set(data) - _EVENT_KEYS
    if extra:
        raise ValueError(f"unknown event field(s) {', '.join(sorted(extra))}")
    outcome = data.get("outcome")
    return Event(
        process=data["process"],
        op=op_from_json(contract, data["op"]),
        invoked=data["invoked"],
        completed=data.get("completed"),
        outcome=None if outcome is None else outcome_from_json(outcome),
        at=data["at"],
        info=data.get("info", False),
    )


def op_to_json(op: Op) -> dict[str, Any]:
    return {"op": op.name, "args": {k: encode(v) for k, v in op.arguments().items()}}


def op_from_json(contract: str, data: Any) -> Op:
    if not isinstance(data, dict) or not isinstance(data.get("op"), str):
        raise ValueError(f"an op is {{\"op\": name, \"args\": {{...}}}}, not {data!r}")
    cls = operations(contract).get(data["op"])
    if cls is None:
        raise ValueError(f"{contract} has no operation {data['op']!r}")
    args = data.get("args", {})
    if not isinstance(args, dict):
        raise ValueError(f"the arguments of {data['op']} are not a JSON object")
    try:
        op: Op = cls(**{k: decode(v) for k, v in args.items()})
    except TypeError as e:
        raise ValueError(f"bad arguments for {data['op']}: {e}") from None
    return op
