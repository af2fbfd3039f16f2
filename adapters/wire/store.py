"""A contract's store behind ``fencepost-wire/1``: the factory and the store the kit calls.

:class:`WireFactory` is an adapter like any other (``factory(env) -> store``, ``discard(env)``,
``close()``): it starts the adapter command on first use, shakes hands (protocol, contract,
options; the adapter's name, version and capabilities), and opens one namespace per ``env``.
A :class:`WireStore` turns each protocol method the kit calls into a ``call`` request carrying
the call's simulated time and the owners the liveness oracle says are dead, and the reply back
into the value or the contract's exception, so the checks cannot tell it from a Python store.

When the child is lost (see :mod:`.client`), the stores opened on it raise
:class:`~.client.WireLost` (the check at stake is ``unknown``) and the next ``factory(env)``
starts a fresh child: the next check runs on it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

import attrs

from fencepost.spec.env import AdapterEnv
from fencepost.spec.errors import BackendUnavailable, ConfigurationError, ContractError
from fencepost.spec.opaque import Minted
from fencepost.spec.ops import Op
from fencepost.spec.values import decode, encode

from .client import PROTOCOL, START_TIMEOUT_S, Child, WireError, WireFault, WireLost


def error_classes(spec: ModuleType) -> dict[str, type[ContractError]]:
    """The contract's errors by code (the classes its spec module holds, its own or imported
    from the modules it is made of), with ``backend_unavailable``."""
    found: dict[str, type[ContractError]] = {BackendUnavailable.code: BackendUnavailable}
    for value in vars(spec).values():
        if isinstance(value, type) and issubclass(value, ContractError) \
                and value is not ContractError:
            found.setdefault(value.code, value)
    return found


@attrs.frozen
class Hello:
    """What the adapter said of itself in the handshake."""

    name: str
    version: str
    capabilities: frozenset[str]


class WireFactory:
    """``exec:COMMAND`` for one contract: the child, started on first use and after a loss."""

    def __init__(self, contract: str, spec: ModuleType, ops: Mapping[str, type[Op]],
                 argv: Sequence[str], *, timeout_s: float,
                 environment: Mapping[str, str] | None = None) -> None:
        self.contract = contract
        self.spec = spec
        self.ops = dict(ops)
        self.argv = list(argv)
        self.timeout_s = timeout_s
        self.environment = environment
        self.errors = error_classes(spec)
        self.hello: Hello | None = None
        self.children = 0
        """How many children this factory started (a lost one is replaced)."""
        self._child: Child | None = None
        self._lock = threading.Lock()

    def _started(self, options: Mapping[str, Any]) -> Child:
        with self._lock:
            if self._child is not None and self._child.lost is None:
                return self._child
            try:
                child = Child(self.argv, self.timeout_s, self.environment)
            except FileNotFoundError as e:
                raise ConfigurationError(f"exec adapter: {e}") from None
            self.children += 1
            self._child = child
            self.hello = self._handshake(child, options)
            return child

    def _handshake(self, child: Child, options: Mapping[str, Any]) -> Hello:
        command = " ".join(self.argv)
        try:
            said = child.request("hello", max(START_TIMEOUT_S, self.timeout_s),
                                 protocol=PROTOCOL, contract=self.contract,
                                 options={k: str(v) for k, v in options.items()})
        except WireFault as e:
            child.shutdown()
            raise ConfigurationError(f"exec adapter {command} refused the handshake: "
                                     f"{str(e).split(': ', 1)[-1]}") from None
        except WireLost as e:
            raise ConfigurationError(f"exec adapter {command} failed the handshake: "
                                     f"{e.detail}") from None
        problem = _hello_problem(said)
        if problem is not None:
            child.shutdown()
            raise ConfigurationError(f"exec adapter {command} answered hello with {problem}; "
                                     "see docs/protocol.md")
        return Hello(said["name"], said["version"], frozenset(said["capabilities"]))

    def __call__(self, env: AdapterEnv) -> WireStore:
        child = self._started(env.options)
        assert self.hello is not None
        try:
            child.request("open", namespace=env.namespace,
                          options={k: str(v) for k, v in env.options.items()})
        except WireFault as e:
            raise ConfigurationError(str(e)) from None
        return WireStore(self, child, env, self.hello.capabilities)

    def discard(self, env: AdapterEnv) -> None:
        """Drop one namespace's data (nothing to drop on a lost child: its memory is gone)."""
        child = self._child
        if child is not None and child.lost is None:
            child.request("discard", namespace=env.namespace)

    def close(self) -> None:
        """The end of the run: shut the child down (killed if it does not exit)."""
        with self._lock:
            child, self._child = self._child, None
        if child is not None:
            child.shutdown()


class WireStore:
    """One namespace of the adapter: every protocol method of the contract, as requests."""

    def __init__(self, factory: WireFactory, child: Child, env: AdapterEnv,
                 capabilities: frozenset[str]) -> None:
        self._factory = factory
        self._child = child
        self._env = env
        self.capabilities = capabilities

    def __getattr__(self, name: str) -> Any:
        op = self._factory.ops.get(name)
        if op is None or name.startswith("_"):
            raise AttributeError(name)
        fields = [a.name for a in attrs.fields(op)]  # type: ignore[arg-type]

        def method(*args: Any) -> Any:
            if len(args) != len(fields):
                raise TypeError(f"{name} takes {len(fields)} arguments, not {len(args)}")
            return self._call(name, dict(zip(fields, args, strict=True)))

        method.__name__ = name
        setattr(self, name, method)  # made once per store and name
        return method

    def _call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        env = self._env
        try:
            reply = self._child.request(
                "call", namespace=env.namespace, op=name,
                args={k: encode(v) for k, v in arguments.items()},
                now=env.clock(), dead=sorted(env.dead_owners()))
        except WireFault as e:
            # the call's effect is unknown: the check at stake is unknown, the child lives on
            raise WireLost(f"{e}{self._child.stderr_tail()}") from None
        except WireError as e:
            raise self._error(name, e.error) from None
        try:
            return decode(reply, opaque=Minted)
        except ValueError as e:
            self._child.lose(f"the adapter answered {name} with a value that cannot be read "
                             f"back: {e}")
            raise WireLost(self._child.lost or str(e)) from None

    def _error(self, name: str, error: Mapping[str, Any]) -> Exception:
        code = error["code"]
        cls = self._factory.errors.get(code)
        if cls is None:
            known = ", ".join(sorted(self._factory.errors))
            self._child.lose(f"the adapter answered {name} with error code {code!r}, which "
                              f"{self._factory.contract} does not have (known: {known})")
            return WireLost(self._child.lost or "")
        try:
            payload = decode(error.get("payload"), opaque=Minted)
        except ValueError as e:
            self._child.lose(f"the adapter answered {name} with a payload it cannot be read "
                              f"back from: {e}")
            return WireLost(self._child.lost or "")
        return cls(str(error.get("detail", "")), payload)

    def close(self) -> None:
        """Close this namespace's store (its data stays for a ``durable`` adapter)."""
        if self._child.lost is None:
            self._child.request("close", namespace=self._env.namespace)


def _hello_problem(said: Any) -> str | None:
    if not isinstance(said, dict):
        return f"{said!r}, not an object"
    for key in ("name", "version"):
        if not isinstance(said.get(key), str):
            return f"no string {key!r}"
    caps = said.get("capabilities")
    if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps):
        return "capabilities that are not a list of strings"
    return None
