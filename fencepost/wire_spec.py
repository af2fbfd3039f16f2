"""The ``exec:COMMAND`` adapter: a child process speaking ``fencepost-wire/1``
(``docs/protocol.md``), and what ``fencepost wire-check`` and ``fencepost protocol`` say of a
contract over the wire."""

from __future__ import annotations

import os
import shutil
from typing import Any

from .contract import Contract, Factory
from .env import AdapterEnv
from .errors import ConfigurationError
from .registry import contract_named

WIRE_TIMEOUT_ENV = "FENCEPOST_WIRE_TIMEOUT"
WIRE_TIMEOUT_S = 5.0


def wire_timeout() -> float:
    """How long an ``exec:`` adapter may take over one request: ``FENCEPOST_WIRE_TIMEOUT``
    seconds (default 5), at most 0.8 of the run's call timeout, so that the child is killed and
    the check is ``unknown`` before the run's guard would stop the whole run."""
    from fencepost.scenarios.guard import default_call_timeout, seconds_from_env

    return min(seconds_from_env(WIRE_TIMEOUT_ENV, WIRE_TIMEOUT_S), 0.8 * default_call_timeout())


def exec_factory(contract: Contract, command: str) -> Factory:
    """The adapter of ``exec:COMMAND``: a child process speaking ``fencepost-wire/1``."""
    from fencepost.adapters.wire.store import WireFactory
    from fencepost.spec.ops import operations

    return WireFactory(contract.name, contract.spec, operations(contract.name), exec_argv(command),
                       timeout_s=wire_timeout())


def exec_argv(command: str) -> list[str]:
    """``command`` split as a POSIX shell would (no shell runs), its program checked."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ConfigurationError(f"cannot split the exec command {command!r}: {e}") from None
    if not argv:
        raise ConfigurationError("exec: needs a command, e.g. exec:./my_adapter --flag")
    program = argv[0]
    if os.sep in program:
        if os.path.isdir(program):
            raise ConfigurationError(f"exec adapter {program} is a directory, not a program")
        if not os.path.isfile(program):
            raise ConfigurationError(f"exec adapter {program}: no such file")
        if not os.access(program, os.X_OK):
            raise ConfigurationError(f"exec adapter {program} is not executable (chmod +x)")
    elif shutil.which(program) is None:
        raise ConfigurationError(f"exec adapter {program}: not found on PATH")
    return argv


def probe_call(contract_name: str) -> dict[str, Any]:
    """One valid call of the contract for ``wire-check``: its op with the fewest arguments
    (at least one), each a string (a store answers it, or refuses it with a contract error)."""
    import attrs

    from fencepost.spec.ops import operations

    arguments = {name: [a.name for a in attrs.fields(op)]  # type: ignore[arg-type]
                 for name, op in operations(contract_named(contract_name).name).items()}
    name = min((n for n, args in arguments.items() if args), key=lambda n: len(arguments[n]))
    return {"op": name, "args": {a: "wire-check" for a in arguments[name]}}


def served_capabilities(contract: Contract, factory: Factory) -> frozenset[str]:
    """What a store of ``factory`` declares (a store opened on a scratch namespace and
    dropped again), less what the wire cannot carry (fault injection needs the engine)."""
    import uuid

    env = AdapterEnv(clock=lambda: 0, namespace=f"probe{uuid.uuid4().hex[:8]}")
    store = factory(env)
    try:
        declared = frozenset(getattr(store, "capabilities", frozenset()))
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()
        discard = getattr(factory, "discard", None)
        if discard is not None:
            discard(env)
    return declared & frozenset(contract.capabilities)


def wire_schema(contract_name: str) -> str:
    """The operations, value classes, error codes, capabilities and options of a contract, as
    an adapter speaking fencepost-wire/1 sees them."""
    import attrs

    from fencepost.adapters.wire.store import error_classes
    from fencepost.spec.ops import operations
    from fencepost.spec.values import value_classes_in

    contract = contract_named(contract_name)
    lines = [f"{contract.name} over fencepost-wire/1 (docs/protocol.md)", "", "operations (call):"]
    for name, op in operations(contract.name).items():
        args = ", ".join(a.name for a in attrs.fields(op))  # type: ignore[arg-type]
        lines.append(f"  {name}({args})")
    lines += ["", "value classes ({\"__type__\": NAME, field: value, ...}):"]
    for name, cls in value_classes_in(contract.spec):
        fields = ", ".join(a.name for a in attrs.fields(cls) if a.init)
        lines.append(f"  {name}({fields})")
    lines += ["", "error codes (error.code):"]
    for code, cls in sorted(error_classes(contract.spec).items()):
        lines.append(f"  {code}  ({cls.__name__})")
    lines += ["", "capabilities (hello):"]
    lines += [f"  {name}: {text}" for name, text in contract.capabilities.items()
              if name != "fault_injection"]
    lines += ["", "options (hello, open), default first:"]
    for c in contract.choices:
        others = [v for v, _ in c.values if v != c.default]
        lines.append(f"  {c.name}: {', '.join([c.default, *others])}")
    for setting in contract.settings:
        lines.append(f"  {setting.name}: {setting.default} (a setting)")
    return "\n".join(lines)
