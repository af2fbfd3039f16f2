"""A campaign's output directory, which is also what makes a campaign resumable::

    DIR/settings.json          what every seed runs with (CampaignSettings.identity)
    DIR/seeds/SEED/report.json each seed's report, written when the seed finishes
    DIR/example-db/            the shared example database, unless --example-db says otherwise
    DIR/campaign.json, .md     the gathered report, written at the end (and when interrupted)

Every file is written whole or not at all (a temporary file in the same directory, then
renamed), so a campaign killed at any instant leaves only complete reports, and a re-run skips
exactly the seeds that finished. A directory holding another campaign's ``settings.json`` is
refused, and so is one holding other files: seeds checked under other settings are never
mixed into one report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import arguments
from .errors import ConfigurationError

if TYPE_CHECKING:
    from fencepost.reports.verdict import RunReport

    from .campaign_report import CampaignSummary

SETTINGS = "settings.json"


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (UTF-8; see
    :func:`~fencepost.reports.render.write_whole`)."""
    from fencepost.reports.render import write_whole

    write_whole(path, text.encode("utf-8"))


class CampaignDir:
    """The output directory ``path`` of one campaign (see the module's docstring)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.seeds_dir = os.path.join(path, "seeds")

    def report_path(self, seed: int) -> str:
        """Where seed ``seed``'s ``report.json`` is kept."""
        return os.path.join(self.seeds_dir, str(seed), "report.json")

    def claim(self, identity: Mapping[str, Any]) -> None:
        """Make the directory this campaign's, or check that it is: refuse (one line) a path
        that is a file, a directory of another campaign or of anything else."""
        wanted = json.loads(json.dumps(dict(identity)))
        settings = os.path.join(self.path, SETTINGS)
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise ConfigurationError(f"--out {self.path} is a file; name a directory (it is "
                                     "created if missing)")
        if os.path.isfile(settings):
            _same_campaign(self.path, _read_settings(settings), wanted)
        elif os.path.isdir(self.path) and os.listdir(self.path):
            raise ConfigurationError(f"--out {self.path} holds other files and no {SETTINGS}: "
                                     "name a new or empty directory, or a campaign's")
        else:
            arguments.writable_parent(os.path.join(self.path, SETTINGS), "--out")
        try:
            os.makedirs(self.seeds_dir, exist_ok=True)
            if not os.path.isfile(settings):
                write_atomically(settings, json.dumps(wanted, indent=2) + "\n")
        except OSError as e:
            raise ConfigurationError(f"--out {self.path}: {e.strerror or e}") from None

    def saved(self, seeds: Sequence[int]) -> dict[int, RunReport]:
        """The reports of ``seeds`` already saved (a file that does not load as that seed's
        report is not: the seed runs again)."""
        from fencepost.reports.json_report import load_report

        found = {}
        for seed in seeds:
            path = self.report_path(seed)
            if not os.path.isfile(path):
                continue
            try:
                report = load_report(path)
            except (OSError, ValueError):
                continue
            if report.seed == seed:
                found[seed] = report
        return found

    def save(self, seed: int, report_json: str) -> dict[str, int]:
        """Keep seed ``seed``'s ``report.json`` text; its verdict counts (``summary``)."""
        path = self.report_path(seed)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomically(path, report_json)
        return {str(k): int(v) for k, v in json.loads(report_json)["summary"].items()}

    def write_summary(self, summary: CampaignSummary) -> list[str]:
        """Write ``campaign.json`` and ``campaign.md``; their paths."""
        from .campaign_report import to_json, to_markdown

        paths = [os.path.join(self.path, name) for name in ("campaign.json", "campaign.md")]
        write_atomically(paths[0], json.dumps(to_json(summary), indent=2, allow_nan=False)
                         + "\n")
        write_atomically(paths[1], to_markdown(summary))
        return paths


def _read_settings(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ConfigurationError(f"--out: {path} cannot be read ({e}); remove the directory "
                                 "to start over") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"--out: {path} is not a campaign's settings; remove the "
                                 "directory to start over")
    return data


def _same_campaign(path: str, there: Mapping[str, Any], here: Mapping[str, Any]) -> None:
    """Refuse, naming each difference, a directory whose seeds ran under other settings."""
    differ = [f"{key} {_shown(there.get(key))} there, {_shown(here.get(key))} here"
              for key in sorted(set(there) | set(here)) if there.get(key) != here.get(key)]
    if differ:
        raise ConfigurationError(
            f"--out {path} holds another campaign ({'; '.join(differ)}): name another --out, "
            "or remove it to start over")


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={v}" for k, v in value.items()) + "}"
    return "none" if value is None else str(value)
