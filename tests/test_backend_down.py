"""A backend that is down is one clear message: a lazy factory whose backend refuses every
connection (and whose discard fails the same way) ends unknown (exit 3, not 2), what the store
said is shown once with the number of clauses it left unknown, and the failing discards are one
line saying the data may be left."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REFUSED = "Error 111 connecting to 127.0.0.1:6390. Connection refused."

DOWN = f'''
from fencepost.spec.errors import BackendUnavailable

OPS = ("create", "get", "claim", "renew", "checkpoint", "finish", "delete")


class Down:
    capabilities = frozenset({{"durable", "owner_liveness", "concurrency"}})

    def __init__(self, env):
        self.env = env

    def __getattr__(self, name):
        if name in OPS:
            def call(*args, **kwargs):
                raise BackendUnavailable({REFUSED!r})
            return call
        raise AttributeError(name)


class Factory:
    def __call__(self, env):
        return Down(env)

    def discard(self, env):
        raise ConnectionRefusedError(111, "Connection refused")


make = Factory()
'''


def test_a_run_against_a_backend_that_is_down(tmp_path: Path) -> None:
    (tmp_path / "down_store.py").write_text(DOWN)
    result = subprocess.run(
        [sys.executable, "-m", "fencepost.cli", "check", "adk-ledger", "--adapter",
         "down_store:make", "--seed", "1", "--quiet", "--report", "R"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 3, result.stdout + result.stderr
    report = json.loads((tmp_path / "R" / "report.json").read_text())
    assert report["exit_code"] == 3
    unavailable = [c["id"] for c in report["clauses"]
                   if c["status"] == "unknown" and REFUSED in c["reason"]]
    assert len(unavailable) > 20
    lines = result.stdout.splitlines()
    unknown = [line for line in lines if " unknown: " in line and "store unavailable (" in line]
    assert [line.split(" ")[0] for line in unknown] == unavailable
    assert REFUSED in unknown[0]
    assert all(line.count("store unavailable (as above)") == 1 for line in unknown[1:])
    assert [line for line in lines if line.startswith("the store was unavailable")] == [
        f"the store was unavailable for {len(unavailable)} clauses: error "
        f"backend_unavailable: {REFUSED}"]
    discards = [f for f in report["faults"] if "the factory's discard raised" in f]
    assert len(discards) > 1
    [fault] = [line for line in lines if line.startswith("the adapter's fault")]
    assert fault.startswith(f"the adapter's fault in {len(discards)} namespaces (")
    assert fault.endswith("the factory's discard raised ConnectionRefusedError: [Errno 111] "
                          "Connection refused; the namespace's data may be left in the store")
