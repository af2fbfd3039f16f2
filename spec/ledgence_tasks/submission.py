"""ledgence-tasks: constants, submission types, validation and canonical matching.

Import these through :mod:`fencepost.spec.ledgence_tasks`, the contract's public package.

Matching is on canonical form: object key order is ignored and defaults are explicit, but
``1`` and ``1.0`` differ, and so do ``0.0`` and ``-0.0``::

    >>> a = TaskInput(Scope("t", "ns"), "q", Program("p", "1"), data={"x": 1, "y": [0.0]})
    >>> b = TaskInput(Scope("t", "ns"), "q", Program("p", "1"), data={"y": [0.0], "x": 1},
    ...               retry_policy=RetryPolicy(3, 5000))
    >>> canonical(a) == canonical(b)
    True
    >>> canonical(a) == canonical(attrs.evolve(a, data={"x": 1.0, "y": [0.0]}))
    False
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ..values import value_class
from .errors import Conflict, InvalidInput

# --- constants (the seed's) ---------------------------------------------------------------------

LEASE_MS = 60_000
CLEANUP_GRACE_MS = 30_000
SESSION_MS = 86_400_000
CONTROL_REQUEST_TIMEOUT_MS = 30_000
SETTLEMENT_MAX_BYTES = 8 * 1024 * 1024
MAX_RECOVERY_BATCH = 100
MAX_TIMESTAMP_MS = 253_402_300_799_999
MAX_ID_BYTES = 128
MAX_IDEMPOTENCY_KEY_BYTES = 255
MAX_CORRELATION_KEY_BYTES = 512
MAX_DATA_DEPTH = 64
MAX_DATA_BYTES = 1024 * 1024
U32_MAX = 2 ** 32 - 1
"""The largest value of the seed's u32 fields (consumer_id, generation, concurrency)."""
U64_MAX = 2 ** 64 - 1
"""The largest value of the seed's u64 fields (sequences, after_sequence, elapsed_ms)."""
JSON_INTEGERS = (-(2 ** 63), 2 ** 64 - 1)
"""The integers the seed's JSON holds: i64 or u64 (a larger token is refused, never rounded:
crates/ledgence-orchestration-api/src/submission.rs:28-31, 114-119 at 99136b5;
crates/ledgence-worker-api/src/wire.rs:24-25 at 9f0c292)."""
MAX_ATTEMPTS = (1, 1000)
RETRY_DELAY_MS = (0, 86_400_000)
ATTEMPT_TIMEOUT_MS = (60_000, 86_400_000)

TASK_STATES = ("queued", "active", "succeeded", "failed", "cancelled")
TERMINAL_TASK_STATES = ("succeeded", "failed", "cancelled")
ATTEMPT_STATES = ("active", "succeeded", "failed", "cancelled", "lost")


# --- submission types ------------------------------------------------------------------------


@value_class
@attrs.frozen
class Scope:
    tenant_id: str
    namespace: str


@value_class
@attrs.frozen
class Program:
    id: str
    version: str


@value_class
@attrs.frozen
class RetryPolicy:
    max_attempts: int = 3
    retry_delay_ms: int = 5000


@value_class
@attrs.frozen
class TaskInput:
    """What a task runs. ``data`` is any JSON value; defaults are part of the canonical form."""

    scope: Scope
    queue: str
    program: Program
    correlation_key: str | None = None
    data: Any = None
    retry_policy: RetryPolicy = RetryPolicy()
    attempt_timeout_ms: int = 300_000


@value_class
@attrs.frozen
class SubmitCommand:
    idempotency_key: str
    input: TaskInput


@value_class
@attrs.frozen
class ProgramDescriptor:
    """The program a submission resolved to: ``digest`` is ``sha256:<64 hex>``."""

    program: Program
    digest: str
    size: int


# --- validation ------------------------------------------------------------------------------

_PROGRAM_PART = re.compile(r"[a-z0-9._-]+")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


_REFUSED_CHARACTERS = re.compile(
    "[\x00-\x1f\x7f-\x9f\ufdd0-\ufdef"
    + "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(17))
    + "]")
"""The control characters (C0, DEL, C1) and the Unicode noncharacters (U+FDD0..U+FDEF and the
last two code points of every plane)."""


def validate_text(value: Any, what: str, max_bytes: int = MAX_ID_BYTES,
                  allow_empty: bool = False, refused: re.Pattern[str] | None = None,
                  refused_what: str = "a control or noncharacter code point") -> str:
    """Non-empty (unless allowed), at most ``max_bytes`` UTF-8 bytes, and no character of
    ``refused`` (by default the control characters and the Unicode noncharacters); else
    :class:`InvalidInput` saying ``what`` contains ``refused_what``."""
    if type(value) is str and refused is None and max_bytes >= MAX_ID_BYTES and (
            value in _VALID_IDS):
        return value
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string")
    if not value and not allow_empty:
        raise InvalidInput(f"{what} must not be empty")
    if len(value.encode("utf-8")) > max_bytes:
        raise InvalidInput(f"{what} is longer than {max_bytes} bytes")
    if _holds_refused(value, refused or _REFUSED_CHARACTERS):
        raise InvalidInput(f"{what} contains {refused_what}")
    if type(value) is str and refused is None and max_bytes == MAX_ID_BYTES and value:
        if len(_VALID_IDS) >= _VALID_KEPT:
            _VALID_IDS.clear()
        _VALID_IDS.add(value)
    return value


_VALID_IDS: set[str] = set()
"""Texts :func:`validate_text` found valid as identifiers (non-empty, at most
:data:`MAX_ID_BYTES` bytes, no character of the default set): valid again wherever at least as
many bytes are allowed and the default set is refused. The same identifiers come back step after
step, in model and store, and the checks cost more than a set's look-up. Only a ``str`` itself:
a subclass's ``__eq__`` and ``__hash__`` are its own."""
_VALID_KEPT = 4_096


def _holds_refused(value: str, refused: re.Pattern[str]) -> bool:
    """Does ``value`` hold a character of ``refused``? For ASCII text and the two sets here,
    whose ASCII part is C0 and DEL, exactly the characters ``str.isprintable`` is false for,
    that test answers (a search of the whole set costs about 80 ns a character; every op's
    identifiers pass here, in model and store)."""
    if (refused is _REFUSED_CHARACTERS or refused is _CONTROL_CHARACTERS) and str.isascii(value):
        return not str.isprintable(value)
    return refused.search(value) is not None


_CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f]")


def validate_correlation_key(value: Any, what: str) -> str:
    """At most 512 UTF-8 bytes ("" included) and no control characters; unlike an identifier,
    Unicode noncharacters are allowed (crates/ledgence-orchestration-api/src/submission.rs:94-100
    at 99136b5, and the list filter at discovery.rs:29-33 at 9f0c292)."""
    return validate_text(value, what, MAX_CORRELATION_KEY_BYTES, allow_empty=True,
                         refused=_CONTROL_CHARACTERS, refused_what="a control character")


def _in_range(value: Any, what: str, bounds: tuple[int, int]) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not (
            bounds[0] <= value <= bounds[1]):
        raise InvalidInput(f"{what} must be an integer in {bounds[0]}..={bounds[1]}")


_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_depth(value: Any) -> int:
    """How many containers nest in the JSON ``value`` (a scalar: 0)."""
    if type(value) in _SCALARS:  # most of what a walk meets, at the cost of one look-up
        return 0
    if isinstance(value, Mapping):
        return 1 + max((json_depth(v) for v in value.values()), default=0)
    if isinstance(value, list | tuple):
        return 1 + max((json_depth(v) for v in value), default=0)
    return 0


def validate_scope(scope: Any) -> Scope:
    if not isinstance(scope, Scope):
        raise InvalidInput("scope must be a Scope")
    validate_text(scope.tenant_id, "tenant_id")
    validate_text(scope.namespace, "namespace")
    return scope


def validate_input(task: Any) -> TaskInput:
    """Every rule of the seed's SubmitTask validation; :class:`InvalidInput` on the first
    broken one."""
    if not isinstance(task, TaskInput):
        raise InvalidInput("input must be a TaskInput")
    validate_scope(task.scope)
    validate_text(task.queue, "queue")
    for part, what in ((task.program.id, "program id"), (task.program.version,
                                                          "program version")):
        validate_text(part, what)
        if not _PROGRAM_PART.fullmatch(part) or part in (".", ".."):
            raise InvalidInput(f"{what} must be [a-z0-9._-]+ and not . or ..")
    if task.correlation_key is not None:
        validate_correlation_key(task.correlation_key, "correlation_key")
    if json_depth(task.data) > MAX_DATA_DEPTH:
        raise InvalidInput(f"data nests deeper than {MAX_DATA_DEPTH}")
    if len(canonical_json(task.data).encode("utf-8")) > MAX_DATA_BYTES:
        raise InvalidInput("data is larger than 1 MiB")
    _in_range(task.retry_policy.max_attempts, "max_attempts", MAX_ATTEMPTS)
    _in_range(task.retry_policy.retry_delay_ms, "retry_delay_ms", RETRY_DELAY_MS)
    _in_range(task.attempt_timeout_ms, "attempt_timeout_ms", ATTEMPT_TIMEOUT_MS)
    return task


def validate_submission(command: Any, descriptor: Any) -> None:
    """The checks of accept_resolved_submission before any storage is touched."""
    if not isinstance(command, SubmitCommand):
        raise InvalidInput("command must be a SubmitCommand")
    validate_text(command.idempotency_key, "idempotency_key", MAX_IDEMPOTENCY_KEY_BYTES)
    validate_input(command.input)
    if not isinstance(descriptor, ProgramDescriptor) or not _DIGEST.fullmatch(
            str(descriptor.digest)) or not isinstance(descriptor.size, int) or descriptor.size <= 0:
        raise InvalidInput("descriptor must carry a sha256 digest and a positive size")
    if descriptor.program != command.input.program:
        raise Conflict("the descriptor resolves another program than the input names")


# --- canonical form --------------------------------------------------------------------------


_quoted: Callable[[str], str] = json.encoder.encode_basestring
"""A string as JSON writes it with ``ensure_ascii=False`` (what ``json.dumps`` calls for one,
without building an encoder each time)."""


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys that keeps number classes apart: ``1`` is not ``1.0``
    and ``-0.0`` is not ``0.0`` (floats are written with ``repr``)."""
    kind = type(value)  # the classes JSON data is mostly made of, each as the tests below take it
    if kind is str:
        return _quoted(value)
    if kind is dict or kind is list:
        return _container_json(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not JSON_INTEGERS[0] <= value <= JSON_INTEGERS[1]:
            raise InvalidInput("a JSON integer must fit i64 or u64")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput("data must not hold NaN or infinity")
        return repr(value)
    if isinstance(value, str):
        return _quoted(value)
    if isinstance(value, Mapping | list | tuple):
        return _container_json(value)
    raise InvalidInput(f"data must be JSON, not {type(value).__name__}")


def _container_json(value: Any) -> str:
    """:func:`canonical_json` of a mapping, a list or a tuple."""
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise InvalidInput("JSON object keys must be strings")
        items = sorted(value.items())
        return "{" + ",".join(f"{_quoted(str(k))}:{canonical_json(v)}" for k, v in items) + "}"
    return "[" + ",".join(canonical_json(v) for v in value) + "]"


def canonical(task: TaskInput) -> str:
    """The canonical form a submission is matched on: every field with its default made
    explicit, a missing correlation key left out."""
    body = {
        "scope": {"tenant_id": task.scope.tenant_id, "namespace": task.scope.namespace},
        "queue": task.queue,
        "program": {"id": task.program.id, "version": task.program.version},
        "data": task.data,
        "retry_policy": {"max_attempts": task.retry_policy.max_attempts,
                         "retry_delay_ms": task.retry_policy.retry_delay_ms},
        "attempt_timeout_ms": task.attempt_timeout_ms,
    }
    if task.correlation_key is not None:
        body["correlation_key"] = task.correlation_key
    return canonical_json(body)


def same_submission(a: TaskInput, b: TaskInput) -> bool:
    """Does ``b`` replay ``a`` (same canonical form)?"""
    return canonical(a) == canonical(b)
