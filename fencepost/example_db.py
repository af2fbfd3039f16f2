"""Where the state machine keeps the failures it finds: Hypothesis' example database.

``--example-db DIR`` keeps them in a directory (Hypothesis' ``DirectoryBasedExampleDatabase``),
``--example-db redis://HOST:PORT/DB`` in Redis (Hypothesis' own ``RedisExampleDatabase``), so
that every later run, on this machine or another, replays them first. Without one nothing is
written to disk.

Example::

    db = example_database("redis://127.0.0.1:6379/0")
    fencepost.check("adk-ledger", "memory", example_db=db)
"""

from __future__ import annotations

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from .errors import ConfigurationError


def example_database(where: str | ExampleDatabase) -> ExampleDatabase:
    """The example database ``where`` names: a ``redis://`` URL or a directory (made when
    missing); an ``ExampleDatabase`` is taken as it is. Raises ConfigurationError."""
    if isinstance(where, ExampleDatabase):
        return where
    if not where:
        raise ConfigurationError("--example-db needs a directory or a redis:// URL")
    if where.startswith(("redis://", "rediss://", "unix://")):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise ConfigurationError(
                f"--example-db {where}: the redis package is not installed "
                "(pip install 'fencepost[campaign]')") from None
        client = redis.Redis.from_url(where)
        try:
            client.ping()
        except redis.RedisError as e:
            raise ConfigurationError(f"--example-db {where}: cannot reach Redis ({e})") from None
        return RedisExampleDatabase(client)
    if "://" in where:
        raise ConfigurationError(
            f"--example-db {where!r}: use a directory or a redis://HOST:PORT/DB URL")
    try:
        return DirectoryBasedExampleDatabase(where)
    except OSError as e:
        raise ConfigurationError(f"--example-db {where}: {e.strerror or e}") from None
