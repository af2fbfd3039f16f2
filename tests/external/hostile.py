"""Hostile and broken stores: the kit must end every run against them with a true verdict.

Each factory wraps a contract's correct memory store and misbehaves in one way, on every call
of its protocol methods (or only on some: ``when``). Named ``<contract>__<behaviour>``, with the
contract's module name (``adk_ledger``, ``snodo_tasks``, ``ledgence_tasks``), for use as
``--adapter hostile:adk_ledger__hang``; a name ending ``__postgres`` wraps the contract's
PostgreSQL store instead (``FENCEPOST_PG_URL``).

Behaviours:
- ``unavailable``: every call raises ``BackendUnavailable``; ``mostly_unavailable``: three calls
  in four do; ``concurrent_unavailable``: only the concurrent run's calls do (its workers);
- ``timeout_error``: every concurrent worker's call raises ``TimeoutError``;
- ``hang``: the first call after the store's first few never returns; ``hang_in_threads``: a call
  from a racer or a concurrent worker never returns; ``hang_in_concurrent``: a concurrent
  worker's call never returns (each says ``hostile: a call hangs`` on stderr as it hangs
  when ``HOSTILE_SAY_HANG=1``);
- ``sys_exit`` / ``keyboard_interrupt``: a call raises ``SystemExit(0)`` / ``KeyboardInterrupt``;
- ``os_exit``: a call ends the process with ``os._exit(7)``; ``os_exit0``: with ``os._exit(0)``;
- ``junk_errors``: every call raises an error whose text holds control characters, a lone
  surrogate, markup and 100,000 characters;
- ``segfault``: a call dereferences a null pointer;
- ``unspeakable_error``: a call raises an exception whose ``str()`` and ``repr()`` raise;
- ``fancy_error``: a call raises an exception whose ``str()`` is a ``str`` subclass that
  cannot be formatted or stripped;
- ``unreadable_refusal``: a call raises ``NotFound`` whose ``code`` cannot be read;
- ``stops_the_clock``: a call replaces ``time.monotonic`` by a clock that stands still, and
  once the store is under way a call never returns;
- ``capabilities_raise``: reading the store's ``capabilities`` raises;
- ``close_raises`` / ``discard_raises``: the store's close / the factory's discard raise;
- ``reopen_raises``: the factory raises (an exception class of its own) when it is asked for a
  namespace's store again (the store reopened);
- ``new_namespaces_raise``: past its first :data:`OPENS_ALLOWED` namespaces, the factory raises
  (an exception class of its own) for each namespace it has not opened before (a database
  that filled up); it still reopens the ones it has;
- ``discard_exits``: the factory's discard raises ``SystemExit(3)``;
- ``factory_close_hangs``: the factory's close never returns;
- ``leaves_thread``: the factory starts a thread that is not a daemon and never ends;
- ``capabilities_string`` / ``capabilities_misspelt``: capabilities declared wrong;
- the answer-changing behaviours of :data:`ALTERATIONS`.
"""

from __future__ import annotations

import copy
import itertools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from fencepost.registry import contract_named
from fencepost.spec.adk_ledger import NotFound
from fencepost.spec.errors import BackendUnavailable

CONTRACTS = {"adk_ledger": "adk-ledger", "snodo_tasks": "snodo-tasks",
             "ledgence_tasks": "ledgence-tasks"}

WARM_UP = 3
"""Calls a hanging store answers before it hangs (so the run is under way)."""

JUNK = ("bad \x01\x1b[31m <script>alert(1)</script> | `x` \udc80 ]]> &amp; "
        + "y" * 100_000)


def _concurrent_worker() -> bool:
    return threading.current_thread().name.startswith("fencepost-w")


def _racer() -> bool:
    return threading.current_thread().name.startswith(("fencepost-w", "fencepost-racer"))


def _forever() -> None:
    if os.environ.get("HOSTILE_SAY_HANG") == "1":  # a test waits for the run to be stuck
        print("hostile: a call hangs", file=sys.stderr, flush=True)
    threading.Event().wait()


class _Unavailable:
    def __init__(self, every: int, of: int) -> None:
        self.counter = itertools.count()
        self.every, self.of = every, of

    def __call__(self) -> None:
        if next(self.counter) % self.of < self.every:
            raise BackendUnavailable("the database is away (hostile store)")


def _after_warm_up(act: Callable[[], None]) -> Callable[[], None]:
    counter = itertools.count()

    def maybe() -> None:
        if next(counter) >= WARM_UP:
            act()
    return maybe


def _only(test: Callable[[], bool], act: Callable[[], None]) -> Callable[[], None]:
    def maybe() -> None:
        if test():
            act()
    return maybe


def _raise(e: BaseException) -> Callable[[], None]:
    def act() -> None:
        raise e
    return act


def _exit(code: int) -> Callable[[], None]:
    def act() -> None:
        os._exit(code)
    return act


def _segfault() -> None:
    import ctypes

    ctypes.string_at(0)


def _junk() -> None:
    raise RuntimeError(JUNK)


class Unspeakable(Exception):
    """An exception that cannot be shown: its str() and repr() raise."""

    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class Fancy(str):
    """A text that cannot be formatted or stripped."""

    def __format__(self, spec: str) -> str:
        raise RuntimeError("no format")

    def strip(self, chars: str | None = None) -> str:
        raise RuntimeError("no strip")


class FancyError(Exception):
    def __str__(self) -> str:
        return Fancy("boom")


class UnreadableRefusal(NotFound):
    """A refusal whose code cannot be read."""

    @property  # type: ignore[override]
    def code(self) -> str:
        raise RuntimeError("no code")


def _lowers_recursion_limit(_method: str, _args: tuple[Any, ...], answer: Any) -> Any:
    """As it answers, the store sets the process's recursion limit to 60 (its own code then
    ran under the limit the kit left; what the kit does next, reading the answer and copying
    the next call's arguments, would run under 60)."""
    if next(_limited) >= WARM_UP:
        sys.setrecursionlimit(60)
    return answer


_limited = itertools.count()


def _stop_the_clock() -> None:
    time.monotonic = lambda: 0.0


def _then(first: Callable[[], None], second: Callable[[], None]) -> Callable[[], None]:
    def act() -> None:
        first()
        second()
    return act


BEHAVIOURS: dict[str, Callable[[], Callable[[], None]]] = {
    "unavailable": lambda: _Unavailable(1, 1),
    "mostly_unavailable": lambda: _Unavailable(3, 4),
    "concurrent_unavailable": lambda: _only(_concurrent_worker, _Unavailable(1, 1)),
    "timeout_error": lambda: _only(_concurrent_worker, _raise(TimeoutError("timed out"))),
    "hang": lambda: _after_warm_up(_forever),
    "hang_in_threads": lambda: _only(_racer, _forever),
    "hang_in_concurrent": lambda: _only(_concurrent_worker, _forever),
    "sys_exit": lambda: _after_warm_up(_raise(SystemExit(0))),
    "keyboard_interrupt": lambda: _after_warm_up(_raise(KeyboardInterrupt())),
    "os_exit": lambda: _after_warm_up(_exit(7)),
    "os_exit0": lambda: _after_warm_up(_exit(0)),
    "segfault": lambda: _after_warm_up(_segfault),
    "junk_errors": lambda: _junk,
    "unspeakable_error": lambda: _after_warm_up(_raise(Unspeakable())),
    "fancy_error": lambda: _after_warm_up(_raise(FancyError())),
    "unreadable_refusal": lambda: _after_warm_up(_raise(UnreadableRefusal("x"))),
    "stops_the_clock": lambda: _then(_stop_the_clock, _after_warm_up(_forever)),
}

class ReopenFailed(Exception):
    """A factory's own exception class (defined here, not in the kit)."""


class OpenFailed(Exception):
    """Another of the factory's own (``new_namespaces_raise``)."""


class Liar(str):
    """A ``str`` that says it equals anything."""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = str.__hash__


class EqualToAll:
    """An object that says it equals anything."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class EqRaises:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no __eq__")

    __hash__ = object.__hash__


class ReprRaises:
    def __repr__(self) -> str:
        raise RuntimeError("no __repr__")


class HashRaises:
    def __hash__(self) -> int:
        raise RuntimeError("no __hash__")


HUGE = "x" * (50 << 20)
"""A 50 MiB text."""


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def _records(change: Callable[[Any], Any], only: Callable[[], bool] = lambda: True
             ) -> Callable[[str, tuple[Any, ...], Any], Any]:
    """An alteration of every record a read answers (an adk ``Invocation``)."""
    def alter(_method: str, _args: tuple[Any, ...], answer: Any) -> Any:
        if type(answer).__name__ == "Invocation" and only():
            return change(answer)
        return answer
    return alter


def _evolve(**changes: Callable[[], Any]) -> Callable[[Any], Any]:
    return lambda answer: attrs.evolve(answer, **{k: v() for k, v in changes.items()})


def _repaired_later(answer: Any) -> Any:
    """A wrong revision, put right in the same object 2 ms after the call returned."""
    wrong = attrs.evolve(answer, revision=answer.revision + 1000)
    threading.Timer(0.002, object.__setattr__, (wrong, "revision", answer.revision)).start()
    return wrong


def _scribble(_method: str, args: tuple[Any, ...], answer: Any) -> Any:
    """After answering, the store writes into every dict it was given."""
    for arg in args:
        if isinstance(arg, dict):
            arg["scribbled"] = 2
    return answer


def _flaky_gets(method: str, _args: tuple[Any, ...], answer: Any) -> Any:
    """Every 20th ``get`` of the process answers not_found: the same steps replayed meet
    other ones."""
    if method == "get" and next(_gets) % 20 == 19:
        raise NotFound("gone for a moment (hostile store)")
    return answer


_gets = itertools.count()


class Sub(str):
    """A ``str`` subclass, plain otherwise."""


class StuckNode:
    """A node of the store's own whose ``__eq__`` never returns when asked about another."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StuckNode):
            _forever()
        return False

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"StuckNode({self.name!r})"


def _stuck_owner(answer: Any) -> Any:
    owner = answer.owner
    return answer if owner is None else attrs.evolve(answer, owner=StuckNode(str(owner)))


class Endless(Mapping[int, int]):
    """A mapping whose items never end (its ``len`` says 1)."""

    def __getitem__(self, key: int) -> int:
        return key

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[int]:
        return itertools.count()


def _on_threads(change: Callable[[Any], Any], only: Callable[[], bool]
               ) -> Callable[[str, tuple[Any, ...], Any], Any]:
    """An alteration of every answer but None, made on the threads ``only`` says."""
    def alter(_method: str, _args: tuple[Any, ...], answer: Any) -> Any:
        return change(answer) if answer is not None and only() else answer
    return alter


def _fields_of_another_type(answer: Any) -> Any:
    """A copy of an attrs answer whose int and None fields hold a generator and whose str
    fields an int (set past its class); the fields of its attrs fields too. Anything else as
    it is."""
    if not attrs.has(type(answer)):
        return answer
    changed = copy.copy(answer)
    for field in attrs.fields(type(answer)):
        value = getattr(answer, field.name)
        if isinstance(value, bool):
            continue
        new = (_generator(value) if value is None or isinstance(value, int)
               else 7 if isinstance(value, str) else _fields_of_another_type(value))
        object.__setattr__(changed, field.name, new)
    return changed


def _generator(_answer: Any) -> Any:
    return (x for x in ())


def _refuse_unpickling() -> None:
    raise RuntimeError("a hostile object cannot be read back")


class UnreadablePickle:
    """An object that pickles, and raises when it is read back."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_refuse_unpickling, ())

    def __repr__(self) -> str:
        return "UnreadablePickle()"


ALTERATIONS: dict[str, Callable[[str, tuple[Any, ...], Any], Any]] = {
    "generator_answer": _records(_generator),
    "unreadable_pickle_answer": _records(lambda _a: UnreadablePickle()),
    "workers_get_none": _on_threads(lambda _a: None, _concurrent_worker),
    "workers_get_fields_of_another_type": _on_threads(_fields_of_another_type,
                                                      _concurrent_worker),
    "racers_get_fields_of_another_type": _on_threads(_fields_of_another_type, _racer),
    "flaky_gets": _flaky_gets,
    "lying_phase": _records(_evolve(phase=lambda: Liar("bogus"))),
    "lying_id": _records(_evolve(invocation_id=lambda: Liar("not-the-id"))),
    "outcome_equal_to_all": _records(_evolve(outcome=EqualToAll)),
    "answer_equal_to_all": _records(lambda _a: EqualToAll()),
    "outcome_eq_raises": _records(_evolve(outcome=EqRaises)),
    "answer_repr_raises": _records(lambda _a: ReprRaises()),
    "outcome_hash_raises": _records(_evolve(outcome=HashRaises)),
    "deep_checkpoint": _records(_evolve(checkpoint=lambda: {"deep": _nested(10_000)})),
    "huge_outcome": _records(_evolve(outcome=lambda: HUGE)),
    "huge_subclass_outcome": _records(_evolve(outcome=lambda: Sub(HUGE))),
    "huge_revision": _records(_evolve(revision=lambda: 10**5000)),
    "endless_outcome": _records(_evolve(outcome=Endless)),
    "stuck_owner_eq": _records(_stuck_owner),
    "repaired_later": _records(_repaired_later, _concurrent_worker),
    "scribbles_arguments": _scribble,
    "lowers_recursion_limit": _lowers_recursion_limit,
}
"""Behaviours that change what a correct store answered (adk-ledger records), by name:

- ``generator_answer``: a record is a generator (which no process can send another);
  ``unreadable_pickle_answer``: a record is an object that pickles and cannot be read back;
- ``workers_get_none``: every answer a concurrent worker gets is None (any contract);
- ``workers_get_fields_of_another_type`` / ``racers_get_fields_of_another_type``: every answer
  a concurrent worker / a racer or worker gets holds a generator where the contract has an
  int or None, and an int where it has a str (any contract);

- ``lying_phase`` / ``lying_id``: a record's phase / id is a ``str`` subclass equal to anything,
  holding the wrong text;
- ``outcome_equal_to_all`` / ``answer_equal_to_all``: the outcome / the whole record is an
  object equal to anything;
- ``outcome_eq_raises``, ``answer_repr_raises``, ``outcome_hash_raises``: objects whose
  ``__eq__`` / ``__repr__`` / ``__hash__`` raise;
- ``deep_checkpoint``: a checkpoint holding a list nested 10,000 deep;
- ``huge_outcome``: a record's outcome is a text of 50 MiB; ``huge_subclass_outcome``: the
  same text as a ``str`` subclass;
- ``huge_revision``: a record's revision is an integer of 5,001 digits;
- ``endless_outcome``: a record's outcome is a mapping whose items never end;
- ``stuck_owner_eq``: a record's owner is an object of the store's own whose ``__eq__`` never
  returns when asked about another;
- ``repaired_later``: in the concurrent run only, a record with the wrong revision, put right in
  the same object 2 ms after the call returned;
- ``scribbles_arguments``: after answering, the store writes into the dicts it was given;
- ``flaky_gets``: every 20th ``get`` of the process answers not_found;
- ``lowers_recursion_limit``: as it answers, the store sets the process's recursion limit to 60.
"""


PG_URL = os.environ.get("FENCEPOST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


class HostileStore:
    """``store`` with ``act()`` run before each of its protocol methods."""

    def __init__(self, store: Any, act: Callable[[], None], methods: tuple[str, ...],
                 close_raises: bool = False, capabilities: Any = None,
                 alter: Callable[[str, tuple[Any, ...], Any], Any] | None = None) -> None:
        self._store, self._act, self._methods = store, act, frozenset(methods)
        self._alter = alter
        self._close_raises = close_raises
        self.capabilities = store.capabilities if capabilities is None else capabilities

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if name not in self._methods or not callable(attr):
            return attr

        def hostile(*args: Any, **kwargs: Any) -> Any:
            self._act()
            answer = attr(*args, **kwargs)
            return answer if self._alter is None else self._alter(name, args, answer)
        return hostile

    def close(self) -> None:
        close = getattr(self._store, "close", None)
        if close is not None:
            close()
        if self._close_raises:
            raise OSError("close failed (hostile store)")


class HostileFactory:
    """A factory of hostile stores over the contract's memory store."""

    def __init__(self, contract_name: str, behaviour: str, base: str = "memory") -> None:
        entry = contract_named(contract_name)
        self.base = entry.memory_factory() if base == "memory" else entry.sql_factory(PG_URL)
        self.methods = tuple(entry.suite.protocol_methods)
        self.behaviour = behaviour
        self.opened: set[str] = set()
        self.threads: list[threading.Thread] = []
        make = BEHAVIOURS.get(behaviour)
        self.act = make() if make is not None else (lambda: None)

    def __call__(self, env: Any) -> HostileStore:
        if self.behaviour == "reopen_raises":
            if env.namespace in self.opened:
                raise ReopenFailed(f"cannot reopen {env.namespace} (hostile store)")
            self.opened.add(env.namespace)
        if self.behaviour == "new_namespaces_raise" and env.namespace not in self.opened:
            if len(self.opened) >= OPENS_ALLOWED:
                raise OpenFailed(f"no room for {env.namespace} (hostile store)")
            self.opened.add(env.namespace)
        log = os.environ.get("HOSTILE_NAMESPACE_LOG")
        if log:  # the tests learn which namespaces a run made, to look for what it left
            with open(log, "a", encoding="utf-8") as f:
                f.write(env.namespace + "\n")
        store = self.base(env)
        if self.behaviour == "leaves_thread" and not self.threads:
            thread = threading.Thread(target=_forever, name="hostile-poller", daemon=False)
            thread.start()
            self.threads.append(thread)
        caps: Any = None
        if self.behaviour == "capabilities_string":
            caps = "durable"
        elif self.behaviour == "capabilities_misspelt":
            caps = frozenset({"concurency"})
        elif self.behaviour == "capabilities_raise":
            return RaisingCapabilities(store, self.act, self.methods)  # type: ignore[return-value]
        return HostileStore(store, self.act, self.methods,
                            close_raises=self.behaviour == "close_raises", capabilities=caps,
                            alter=ALTERATIONS.get(self.behaviour))

    def discard(self, env: Any) -> None:
        discard = getattr(self.base, "discard", None)
        if discard is not None:
            discard(env)
        if self.behaviour == "discard_raises":
            raise OSError("discard failed (hostile store)")
        if self.behaviour == "discard_exits":
            raise SystemExit(3)

    def close(self) -> None:
        close = getattr(self.base, "close", None)
        if close is not None:
            close()
        if self.behaviour == "factory_close_hangs":
            _forever()


class RaisingCapabilities:
    """A store whose ``capabilities`` attribute raises when read."""

    def __init__(self, store: Any, act: Callable[[], None], methods: tuple[str, ...]) -> None:
        self._inner = HostileStore(store, act, methods)

    @property
    def capabilities(self) -> Any:
        raise RuntimeError("no capabilities today")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


OPENS_ALLOWED = 2
"""The namespaces ``new_namespaces_raise`` opens before it refuses new ones."""

FACTORY_BEHAVIOURS = ("close_raises", "reopen_raises", "new_namespaces_raise", "discard_raises",
                      "discard_exits", "factory_close_hangs", "leaves_thread",
                      "capabilities_string", "capabilities_misspelt", "capabilities_raise")
"""Behaviours of the factory and the store's close (the module doc says each)."""


def __getattr__(name: str) -> HostileFactory:
    module, sep, behaviour = name.partition("__")
    behaviour, on_pg, _ = behaviour.partition("__postgres")
    if not sep or module not in CONTRACTS or behaviour not in (
            *BEHAVIOURS, *ALTERATIONS, *FACTORY_BEHAVIOURS):
        raise AttributeError(name)
    return HostileFactory(CONTRACTS[module], behaviour, "postgres" if on_pg else "memory")
