"""A wire adapter that misbehaves once: the kit's memory store served over fencepost-wire/1
(as ``fencepost serve`` does) until call number N, where it does MODE. The first child of a run
misbehaves; the ones the kit starts after it (it replaces a lost child) behave, so a test sees
both the verdict on the lost check and the run going on.

    python tests/wire/hostile.py CONTRACT MODE N MARKER_DIR

MODE: hang (never answer), exit (exit 7 mid-run), exit_clean (exit 0 mid-run), flood_exit
(64 MiB of stderr without a newline, then exit 7), garbage (a line that is not JSON), bad_utf8
(a reply line that is not UTF-8),
bad_code (an error code the contract does not have), blank (an empty line before its
reply), wrong_id (a reply to an id never sent),
fault (a fault reply), bad_hello (answer hello with another protocol's refusal),
mute_garbage (no answer at all to a line that is not JSON), deep (a reply nested 100,000 deep,
more than Python's JSON parser reads), deep_value (a reply value nested 900 deep: JSON it reads,
no value the kit reads back), bad_payload (the same as an error's payload), nan (a reply
holding the token NaN, which is no JSON), escapes (at call N, start two processes that leave
its process group, one in a new session, one orphaned at once, every time),
none (behave).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any

from fencepost.adapters.wire.serve import Server
from fencepost.registry import contract_named
from fencepost.spec.ops import operations
from fencepost.wire_spec import served_capabilities


class Hostile(Server):
    def __init__(self, *args: Any, mode: str, at: int, armed: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.mode, self.at, self.armed, self.calls = mode, at, armed, 0

    def handle(self, line: str) -> tuple[int, Mapping[str, Any]] | None:
        try:
            request = json.loads(line)
        except ValueError:
            if self.mode == "mute_garbage":  # a protocol mistake: no fault for a bad line
                return None
            return super().handle(line)
        if not isinstance(request, dict):
            return super().handle(line)
        if self.armed and self.mode == "bad_hello" and request.get("type") == "hello":
            self.reply(request["id"], fault="this adapter speaks fencepost-wire/0 only")
            return None
        if request.get("type") == "call":
            self.calls += 1
            if self.mode == "escapes" and self.calls == self.at:
                self.escape()
            elif self.armed and self.calls == self.at:
                return self.misbehave(request)
        return super().handle(line)

    def escape(self) -> None:
        """Start two processes that leave this one's process group: one in a session of its
        own, one orphaned at once (its parent, a shell, exits), each naming MARKER_DIR."""
        marker = sys.argv[4]
        sleeper = f"import time; time.sleep(3600)  # {marker}"
        subprocess.Popen([sys.executable, "-c", sleeper], start_new_session=True)
        subprocess.Popen(["sh", "-c", f"setsid {sys.executable} -c '{sleeper}' &"])

    def misbehave(self, request: dict[str, Any]) -> None:
        print(f"hostile: {self.mode} at call {self.calls} ({request['op']})", file=sys.stderr,
              flush=True)
        if self.mode == "hang":
            time.sleep(3600)
        if self.mode == "exit":
            os._exit(7)
        if self.mode == "exit_clean":
            os._exit(0)
        if self.mode == "flood_exit":  # 64 MiB of stderr without a newline, then exit 7
            block = b"x" * (1 << 20)
            for _ in range(64):
                sys.stderr.buffer.write(block)
            sys.stderr.buffer.flush()
            os._exit(7)
        if self.mode == "garbage":
            with self._write:
                self._out.write("Traceback (most recent call last): oops\n")
                self._out.flush()
            return None
        if self.mode == "bad_utf8":
            with self._write:
                self._out.flush()
                self._out.buffer.write(b'{"id": %d, "ok": "\xff\xfe"}\n' % request["id"])
                self._out.buffer.flush()
            return None
        if self.mode == "bad_code":
            self.reply(request["id"], error={"code": "bogus", "detail": "", "payload": None})
            return None
        if self.mode == "blank":  # an empty line, then the reply
            with self._write:
                self._out.write("\n")
                self._out.flush()
            return super().handle(json.dumps(request))
        if self.mode == "wrong_id":
            self.reply(request["id"] + 1000, ok=None)
            return None
        if self.mode == "fault":
            self.reply(request["id"], fault="cannot do that today")
            return None
        if self.mode == "bad_payload":  # a known code, its payload no value the kit reads
            deep: Any = None
            for _ in range(900):
                deep = [deep]
            self.reply(request["id"], error={"code": "not_found", "detail": "", "payload": deep})
            return None
        if self.mode in ("deep", "deep_value", "nan"):
            depth = 100_000 if self.mode == "deep" else 900
            value = "NaN" if self.mode == "nan" else "[" * depth + "]" * depth
            with self._write:
                self._out.write(f'{{"id": {request["id"]}, "ok": {value}}}\n')
                self._out.flush()
            return None
        raise SystemExit(f"unknown mode {self.mode}")


def main() -> int:
    name, mode, at, marker_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    marker = os.path.join(marker_dir, "misbehaved")
    armed = not os.path.exists(marker)
    if armed:
        open(marker, "w").close()
    entry = contract_named(name)
    factory = entry.memory_factory()
    server = Hostile(entry.name, factory, operations(entry.name),
                     served_capabilities(entry, factory), sys.stdout, mode=mode, at=at,
                     armed=armed)
    return server.serve(sys.stdin)


if __name__ == "__main__":
    sys.exit(main())
