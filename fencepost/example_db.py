"""Where the state machine keeps the failures it finds: Hypothesis' example database.

``--example-db DIR`` keeps them in a directory (Hypothesis' ``DirectoryBasedExampleDatabase``),
``--example-db redis://HOST:PORT/DB`` in Redis (Hypothesis' own ``RedisExampleDatabase``), so
that every later run, on this machine or another, replays them first. Without one nothing is
written to disk.

A Redis URL may end in ``?prefix=NAME``: the database's keys then start with ``NAME:``
instead of Hypothesis' ``hypothesis-example:``, so that runs which must not see each other's
failures (two teams, two tests running at once) can share one server.

Example::

    db = example_database("redis://127.0.0.1:6379/0?prefix=nightly")
    fencepost.check("adk-ledger", "memory", example_db=db)
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from .errors import ConfigurationError

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
CAMPAIGN_EXTRA = "pip install 'fencepost[campaign]'"
"""What to run when an optional dependency of campaigns (dask, redis) is missing."""


def example_database(where: str | ExampleDatabase) -> ExampleDatabase:
    """The example database ``where`` names: a ``redis://`` URL (optionally with
    ``?prefix=NAME``) or a directory (made when missing); an ``ExampleDatabase`` is taken as it
    is. Raises ConfigurationError."""
    if isinstance(where, ExampleDatabase):
        return where
    if not where:
        raise ConfigurationError("--example-db needs a directory or a redis:// URL")
    if where.startswith(REDIS_SCHEMES):
        return _redis_database(where)
    if "://" in where:
        raise ConfigurationError(
            f"--example-db {where!r}: use a directory or a redis://HOST:PORT/DB URL")
    try:
        return RegularFilesDatabase(where)
    except OSError as e:
        raise ConfigurationError(f"--example-db {where}: {e.strerror or e}") from None


ENTRY_BYTES = 1 << 20
"""The largest entry of a directory database that is read (Hypothesis writes a few KiB)."""


class RegularFilesDatabase(DirectoryBasedExampleDatabase):
    """Hypothesis' directory database, reading only regular files of at most
    :data:`ENTRY_BYTES`: anything else put there (a FIFO, whose open would never return; a
    device; a huge file) is skipped, with one warning line on stderr per path."""

    def fetch(self, key: bytes) -> Iterable[bytes]:
        folder = self._key_path(key)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        for name in names:
            value = _read_entry(folder / name)
            if value is not None:
                yield value


_warned: set[str] = set()


def _read_entry(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file of at most :data:`ENTRY_BYTES`, else
    None (said once per path). Opened without blocking, then looked at: a FIFO is never
    waited for."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as e:
        if e.errno != errno.ENOENT:  # gone meanwhile: Hypothesis deletes entries too
            _skipped(path, f"cannot be opened: {e.strerror}")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > ENTRY_BYTES:
            _skipped(path, "not a regular file" if not stat.S_ISREG(info.st_mode) else
                     f"{info.st_size} bytes, more than {ENTRY_BYTES}")
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(ENTRY_BYTES + 1)[:ENTRY_BYTES]
    except OSError:
        return None
    finally:
        os.close(fd)


def _skipped(path: Path, why: str) -> None:
    if str(path) not in _warned:
        _warned.add(str(path))
        print(f"fencepost: warning: --example-db: skipped {path} ({why})", file=sys.stderr,
              flush=True)


def redis_prefix(url: str) -> tuple[str, bytes]:
    """``url`` without its ``prefix`` query parameter, and the key prefix it names
    (``b"NAME:"``; Hypothesis' ``b"hypothesis-example:"`` when there is none).

    >>> redis_prefix("redis://127.0.0.1:6379/0?prefix=ci-42")
    ('redis://127.0.0.1:6379/0', b'ci-42:')
    """
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    names = [value for key, value in query if key == "prefix"]
    if len(names) > 1 or (names and not names[0]):
        raise ConfigurationError(f"--example-db {url}: give one non-empty prefix=NAME")
    rest = urlencode([(key, value) for key, value in query if key != "prefix"])
    bare = urlunsplit(parts._replace(query=rest))
    return bare, (names[0] + ":").encode() if names else b"hypothesis-example:"


def _redis_database(where: str) -> ExampleDatabase:
    try:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError:
        raise ConfigurationError(f"--example-db {where}: the redis package is not installed "
                                 f"({CAMPAIGN_EXTRA})") from None
    url, prefix = redis_prefix(where)
    try:
        client = redis.Redis.from_url(url)
        client.ping()
    except (redis.RedisError, ValueError) as e:
        raise ConfigurationError(f"--example-db {where}: cannot reach Redis ({e})") from None
    return RedisExampleDatabase(client, key_prefix=prefix)
