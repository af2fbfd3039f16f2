"""Process trees: every process a run started, however it detached, found and ended.

A store's process may start others, and those may leave its process group (``setsid``) or
outlive it (a daemon that double-forks). Killing the group is then not enough. On Linux the kit
walks ``/proc`` for the whole tree under a process, and a process that makes itself a *child
subreaper* (:func:`become_subreaper`) adopts every orphan of its tree instead of ``init``, so
that nothing it started can escape the sweep at its end (:func:`end_orphans`). Elsewhere these
functions find nothing and do nothing.

Example::

    pids = descendants(os.getpid())   # children, grandchildren, ... of this process
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Collection

PR_SET_CHILD_SUBREAPER = 36
TRACKER = "multiprocessing.resource_tracker"
"""Part of the command line of Python's resource tracker, which ends by itself (it removes
what the processes it served left in ``/dev/shm``) once every process it served has ended."""


def parents() -> dict[int, int]:
    """Every running process's parent, by pid (a zombie, which has ended, is not in it; empty
    where ``/proc`` cannot be read)."""
    found: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after
        # its last ")".
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[1].isdigit() and fields[0] not in (b"Z", b"X"):
            found[int(name)] = int(fields[1])
    return found


def descendants(root: int) -> list[int]:
    """Every process under ``root`` (children first, then theirs), ``root`` not included."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents().items():
        children.setdefault(parent, []).append(pid)
    out: list[int] = []
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop(0)
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def signal_all(pids: Collection[int], signum: int) -> None:
    """Send ``signum`` to each of ``pids`` that still exists."""
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def become_subreaper() -> bool:
    """Make this process adopt the orphans of its tree (Linux); True if it now does."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _reap() -> None:
    """Collect the exit status of every child of this process that has ended (adopted
    orphans are this process's children: left unreaped, they stay as zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _wait_gone(pids: Collection[int], deadline: float) -> set[int]:
    """Wait until each of ``pids`` has ended (a zombie has), at most until ``deadline``; those
    still running then. Waits on pidfds (Linux 5.3+), else looks again every 50 ms."""
    fds: dict[int, int] = {}
    pidfds = True
    for pid in pids:
        try:
            fds[os.pidfd_open(pid)] = pid
        except ProcessLookupError:
            continue  # ended already
        except (OSError, AttributeError):  # no pidfds here: close those opened, look instead
            for fd in fds:
                os.close(fd)
            fds, pidfds = {}, False
            break
    try:
        if pidfds:
            while fds and (left := deadline - time.monotonic()) > 0:
                ready, _, _ = select.select(list(fds), [], [], left)
                for fd in ready:
                    os.close(fd)
                    fds.pop(fd)
            return set(fds.values())
        alive = set(pids)
        while alive and time.monotonic() < deadline:
            time.sleep(0.05)  # no pidfd: look at the process table again
            alive &= set(parents())
        return alive
    finally:
        for fd in fds:
            os.close(fd)


def end_orphans(grace_s: float, keep: Collection[int] = ()) -> list[str]:
    """End every process still under this one but those of ``keep`` (and the resource
    tracker, which ends by itself once the others are gone): SIGTERM, up to ``grace_s`` for
    them to end, then SIGKILL. What it had to end, in the order found: each as its command
    line (cut to 60 characters) and pid."""
    me = os.getpid()
    _reap()  # orphans adopted here that have ended already
    commands = {pid: _command(pid) for pid in descendants(me) if pid not in keep}
    found = [pid for pid, command in commands.items() if TRACKER not in command]
    if found:
        signal_all(found, signal.SIGTERM)
        _killed(_wait_gone(found, time.monotonic() + grace_s))
    trackers = [pid for pid in descendants(me) if TRACKER in _command(pid)]
    if trackers:
        _stop_own_tracker()
    _killed(_wait_gone(trackers, time.monotonic() + grace_s))
    _reap()
    return [f"{commands[pid].strip()[:60]!r} (pid {pid})" for pid in found]


def _stop_own_tracker() -> None:
    """Let this process's own resource tracker end now: it ends once its descriptor here is
    closed, which would otherwise happen only as this process exits, after the sweep had waited
    its whole grace for it (a second at the end of every run that used worker processes).
    ``multiprocessing`` has no public way to do this; its private ``_stop`` closes the
    descriptor and waits for the tracker, which first removes what the ended processes left.
    A later use of worker processes starts a new tracker."""
    from multiprocessing import resource_tracker

    stop = getattr(getattr(resource_tracker, "_resource_tracker", None), "_stop", None)
    if stop is not None:
        try:
            stop()
        except (OSError, ChildProcessError):  # already gone: the wait below says so
            pass


KILL_WAIT_S = 2.0
"""How long a SIGKILLed process is waited for (the kernel ends it at once)."""


def _killed(pids: Collection[int]) -> None:
    signal_all(pids, signal.SIGKILL)
    _wait_gone(pids, time.monotonic() + KILL_WAIT_S)
