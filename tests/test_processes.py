"""The sweep at the end of a run ends this process's own resource tracker at once instead of
waiting its grace for it (the tracker can only end once the descriptor this process holds is
closed, which otherwise happens at exit, after the sweep)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, sys
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context, resource_tracker

    from fencepost.adapters.processes import TRACKER, _command, descendants, end_orphans

    if __name__ == "__main__":
        with ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn")) as pool:
            assert list(pool.map(abs, [-1, -2])) == [1, 2]
        trackers = [p for p in descendants(os.getpid()) if TRACKER in _command(p)]
        assert len(trackers) == 1, trackers
        left = end_orphans(600.0)  # without the fix: 600 s for the tracker, then SIGKILL
        assert left == [], left
        assert resource_tracker._resource_tracker._fd is None
        assert not os.path.exists(f"/proc/{trackers[0]}"), "the tracker still runs"
        print("swept")
""")


def test_the_sweep_ends_this_processs_tracker_without_waiting_for_it(tmp_path) -> None:
    script = tmp_path / "sweep.py"
    script.write_text(SCRIPT)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (0, "swept\n", "")
