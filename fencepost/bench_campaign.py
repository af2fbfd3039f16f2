"""``fencepost bench``, section 6: campaign throughput.

The same campaign (the first contract's memory store, profile quick, seeds 1..N, no example
database, so that every seed does the whole work) run three ways, each timed from the start of
:func:`~fencepost.campaign.run_campaign` to its end: on one local worker process (``--jobs
1``), on two (``--jobs 2``), and through a Dask scheduler with two single-threaded workers
that the bench starts on free loopback ports before the clock starts and stops afterwards.
Worker start-up (an interpreter importing the kit) is inside the time, as in a real campaign.
"""

from __future__ import annotations

import importlib.util
import tempfile
import time

import attrs

from fencepost.scenarios.said import Progress, Said

from .campaign import CampaignSettings, run_campaign

WAYS = ("local, --jobs 1", "local, --jobs 2", "Dask scheduler, 2 workers")


@attrs.frozen
class CampaignRate:
    """One way of running the campaign: its seeds and wall time, or why there is no figure."""

    how: str
    seeds: int
    seconds: float
    note: str = ""

    @property
    def per_minute(self) -> float | None:
        """Seeds per minute; None when there is no figure."""
        if self.note or self.seconds <= 0:
            return None
        return self.seeds * 60 / self.seconds


def bench_campaign(name: str, seeds: int,
                   progress: Progress) -> list[CampaignRate]:
    """Section 6 for contract ``name``: ``seeds`` seeds each way of :data:`WAYS`."""
    settings = CampaignSettings(name, "memory", "quick")
    planned = tuple(range(1, seeds + 1))
    rows = []
    with tempfile.TemporaryDirectory(prefix="fencepost-bench-campaign-") as scratch:
        for k, jobs in enumerate((1, 2)):
            progress(Said.of(f"campaign/{name}", f"{seeds} seeds, --jobs {jobs}"))
            started = time.perf_counter()
            summary = run_campaign(settings, planned, f"{scratch}/jobs{jobs}", jobs=jobs)
            rows.append(_rate(WAYS[k], summary.done, time.perf_counter() - started, seeds))
        if importlib.util.find_spec("distributed") is None:
            return [*rows, CampaignRate(WAYS[2], seeds, 0.0, "dask not installed")]
        from .campaign_dask import local_cluster

        progress(Said.of(f"campaign/{name}", "starting a Dask scheduler and 2 workers"))
        with local_cluster(2, f"{scratch}/cluster") as cluster:
            progress(Said.of(f"campaign/{name}", f"{seeds} seeds through the Dask scheduler"))
            started = time.perf_counter()
            summary = run_campaign(settings, planned, f"{scratch}/dask",
                                   scheduler=cluster.address)
            rows.append(_rate(WAYS[2], summary.done, time.perf_counter() - started, seeds))
    return rows


def _rate(how: str, done: tuple[int, ...], seconds: float, seeds: int) -> CampaignRate:
    note = "" if len(done) == seeds else f"{seeds - len(done)} seeds not done"
    return CampaignRate(how, seeds, seconds, note)
