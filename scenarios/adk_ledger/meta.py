"""What the kit sends as a create's metadata (by the ``metadata_keys`` option) and as a token.

The seed's ``create`` reads all three keys (``maps:get``) and its only caller always passes
them, so by default (``required``) every create carries workflow_id, workflow_version and kind;
under ``optional`` a create may leave keys out (they read back as none).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

FULL: Mapping[str, Any] = {"workflow_id": "wf", "workflow_version": 1, "kind": "agent"}


def create_metadata(options: Mapping[str, str], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` as a create under ``options`` sends it: each absent key filled in from
    :data:`FULL` unless ``metadata_keys=optional``."""
    if options.get("metadata_keys") == "optional":
        return dict(metadata)
    return {**FULL, **metadata}


TOKEN_BYTES = 32


def token(label: str) -> bytes:
    """An owner token as the seed's caller makes them (``crypto:strong_rand_bytes(32)``,
    adk_workflow_run.erl:332): 32 bytes, not valid UTF-8, the same for the same ``label`` (so
    that a seed replays) and readable in a trace: the label, ``0xff``, then digest bytes."""
    head = label.encode()[: TOKEN_BYTES - 9] + b"\xff"
    tail = hashlib.blake2b(label.encode(), digest_size=32).digest()
    return head + tail[: TOKEN_BYTES - len(head)]
