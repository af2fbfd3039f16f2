"""What the metadata of a create the kit sends carries, by the ``metadata_keys`` option.

The seed's ``create`` reads all three keys (``maps:get``) and its only caller always passes
them, so by default (``required``) every create carries workflow_id, workflow_version and kind;
under ``optional`` a create may leave keys out (they read back as none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FULL: Mapping[str, Any] = {"workflow_id": "wf", "workflow_version": 1, "kind": "agent"}


def create_metadata(options: Mapping[str, str], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` as a create under ``options`` sends it: each absent key filled in from
    :data:`FULL` unless ``metadata_keys=optional``."""
    if options.get("metadata_keys") == "optional":
        return dict(metadata)
    return {**FULL, **metadata}
