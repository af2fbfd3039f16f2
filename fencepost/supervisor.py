"""The ``fencepost`` command runs its checks in a supervised child process.

An in-process store can end the process itself: ``os._exit(0)``, a segfault in native code, the
out-of-memory killer. Run in the same process, that would look like success (exit 0, no report)
or like nothing at all. So the command re-runs itself as a child (same arguments, stdout and
stderr shared) and watches it:

- the child tells the parent, on a pipe, each phase it enters and, last, the exit code it is
  about to return; a child that ends without saying so ended abruptly, and the parent says how
  (exit status, signal), in which phase, writes a report whose every clause is unknown when
  ``--report`` was given, and exits 3 (never 0);
- SIGTERM and SIGHUP sent to the parent are passed on to the child, which stops the run, drops
  its data, writes its partial report and exits 143 or 129; the child is in a process group of
  its own, so a Ctrl-C at the terminal reaches it once, through the parent, as SIGINT (130);
- the parent waits for the child at most :data:`CHILD_GRACE_S` after passing on a signal, then
  kills it: no child is ever left behind.

``FENCEPOST_SUPERVISED=0`` turns this off (the check runs in the command's own process).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from fencepost.adapters.processes import become_subreaper, end_orphans

from .ending import say

STATUS_FD_ENV = "FENCEPOST_STATUS_FD"
SUPERVISE_ENV = "FENCEPOST_SUPERVISED"
STOP_GRACE_ENV = "FENCEPOST_STOP_GRACE"


def child_grace() -> float:
    """After passing a signal on: how long the child may take to clean up before it is killed.
    ``FENCEPOST_STOP_GRACE`` seconds if set to a positive number (a machine under heavy load
    may need more), else 10."""
    from fencepost.scenarios.guard import seconds_from_env

    return seconds_from_env(STOP_GRACE_ENV, 10.0)


CHILD_GRACE_S = child_grace()
"""The grace :func:`child_grace` found at import."""

WAIT_SLICE_S = 0.5
"""The supervisor waits for its child in slices this long (see :func:`_wait`)."""

SUPERVISED_COMMANDS = frozenset({"check", "coverage", "mutants", "campaign"})


class _Status:
    """The child's side of the status pipe (a no-op when not supervised)."""

    def __init__(self) -> None:
        fd = os.environ.pop(STATUS_FD_ENV, "")
        self._out: Any = None
        if fd.isdigit():
            try:
                self._out = os.fdopen(int(fd), "w", buffering=1, encoding="utf-8")
            except OSError:
                self._out = None
        self._lock = threading.Lock()

    def say(self, kind: str, text: str) -> None:
        if self._out is None:
            return
        line = f"{kind} {text}".replace("\n", " ")[:500]
        with self._lock:
            try:
                self._out.write(line + "\n")
            except (OSError, ValueError):
                self._out = None


    def forget(self) -> None:
        """In a process forked from the supervised one: say nothing (its supervisor hears
        from the process it started); the pipe's copy is closed with the dropped file."""
        self._out = None
        self._lock = threading.Lock()


STATUS = _Status()
"""How the child reports to its supervisor: ``STATUS.say("phase", ...)``."""
os.register_at_fork(after_in_child=STATUS.forget)


def wants_supervision(argv: Sequence[str]) -> bool:
    """Should the command ``argv`` run in a supervised child (not already one, not off)?"""
    if os.environ.get(SUPERVISE_ENV, "1") == "0" or STATUS._out is not None:
        return False
    return any(a in SUPERVISED_COMMANDS for a in argv[:3]) and not any(
        a in ("-h", "--help", "--version") for a in argv)


def run_child(argv: Sequence[str], on_abrupt: Callable[[str, str], int]) -> int:
    """Run ``fencepost argv`` as a supervised child; its exit code, or ``on_abrupt(how, phase)``
    when it ended without saying it was done."""
    read_fd, write_fd = os.pipe()
    env = {**os.environ, STATUS_FD_ENV: str(write_fd), SUPERVISE_ENV: "child"}
    become_subreaper()  # what the child's tree leaves when the child is killed comes here
    # -P: the working directory is not put first on the child's path, where a folder named
    # fencepost (this repository's root) would hide the installed package; the child appends
    # it last instead (see cli.main), so an adapter module there is still found.
    child = subprocess.Popen(
        [sys.executable, "-P", "-m", "fencepost.cli", *argv], env=env, pass_fds=(write_fd,),
        process_group=0, preexec_fn=die_with_parent)
    os.close(write_fd)
    said: dict[str, str] = {"phase": "starting"}
    reader = threading.Thread(target=_read_status, args=(read_fd, said), daemon=True)
    reader.start()
    forwarded: list[int] = []
    since: list[float] = []  # when the first signal was passed on

    def forward(signum: int, _frame: Any) -> None:
        forwarded.append(signum)
        since.append(time.monotonic())
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass

    previous = {s: signal.signal(s, forward)
                for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        code = _wait(child, forwarded, since)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    reader.join(2.0)
    left = end_orphans(CHILD_GRACE_S)
    if left:
        say(f"fencepost: ended {len(left)} process(es) the run left behind: "
            f"{', '.join(left[:5])}{' ...' if len(left) > 5 else ''}")
    if "done" in said:
        return int(said["done"])
    if forwarded and code == -signal.SIGKILL:
        how = (f"did not stop within {CHILD_GRACE_S:g} s of "
               f"{signal.Signals(forwarded[0]).name} and was killed")
    elif code < 0:
        how = f"was killed by {signal.Signals(-code).name}"
    else:
        how = f"exited with status {code}"
    return on_abrupt(how, said["phase"])


def sweep_at_exit() -> None:
    """In the supervised child, as the command ends: end every process its run left (a wire
    adapter's grandchild that left its session and was adopted here)."""
    left = end_orphans(1.0)
    if left:
        say(f"fencepost: ended {len(left)} process(es) the store left behind: "
            f"{', '.join(left[:5])}{' ...' if len(left) > 5 else ''}")


def left_running() -> list[threading.Thread]:
    """The threads of this process that are not daemons and still run (besides the main
    thread): Python would wait for them before the process exits."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()]


def _kit_own(thread: threading.Thread) -> bool:
    """A thread of the kit's ``--jobs`` pool (its manager, still joining killed processes)."""
    return type(thread).__module__ == "concurrent.futures.process"


def exit_despite_threads(code: int) -> None:
    """End the process with ``code`` now if threads that are not daemons would keep it alive,
    saying which a store left; else return. Everything the command had to write is written
    and flushed by then."""
    left = left_running()
    if not left:
        return
    names = [t.name for t in left if not _kit_own(t)]
    try:
        if names:
            shown = ", ".join(repr(n[:80]) for n in names[:5]) + (
                " ..." if len(names) > 5 else "")
            print(f"fencepost: warning: the store left {len(names)} thread(s) running "
                  f"({shown}); exiting without waiting for them", file=sys.stderr, flush=True)
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """In the child, before it runs: ``signum`` when the parent dies (Linux), so that even a
    supervisor killed outright leaves no run behind (the child cleans up on SIGTERM). A
    campaign's worker processes call it too."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signum)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _wait(child: subprocess.Popen[bytes], forwarded: list[int], since: list[float]) -> int:
    """The child's exit code; once a signal was passed on, the child is killed if it has not
    ended within :data:`CHILD_GRACE_S`. The wait is in slices of :data:`WAIT_SLICE_S`: a
    signal handled during a wait does not end it, so the deadline is looked at between them."""
    while True:
        try:
            return child.wait(WAIT_SLICE_S)
        except subprocess.TimeoutExpired:
            if since and time.monotonic() - since[0] > CHILD_GRACE_S:
                child.kill()
                return child.wait()
        except KeyboardInterrupt:  # a SIGINT that arrived before the handler was set
            forwarded.append(signal.SIGINT)
            since.append(time.monotonic())
            child.send_signal(signal.SIGINT)


def _read_status(fd: int, said: dict[str, str]) -> None:
    with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as status:
        for line in status:
            kind, _, text = line.rstrip("\n").partition(" ")
            said[kind] = text
