"""``fencepost clean URL``: find and drop the tables a killed run left in a database.

A run drops its own tables at its end, also when it is interrupted. A run killed outright
(``kill -9``, a lost machine) cannot: its namespaces' ``fp_<namespace>_*`` tables stay.
``clean`` lists them, by namespace, with when each was first opened and by which process
(the registry table ``fp__namespaces`` the SQL stores write), and drops them with ``--drop``.

It never touches a namespace a live run holds: on PostgreSQL a run holds an advisory lock on
each namespace it has open (released by the server when the run's process ends, however it
ends), and ``clean`` takes that lock itself before it drops anything; elsewhere, a namespace
whose process still runs on this host is live. ``--older-than AGE`` leaves the namespaces
opened more recently alone (a namespace with no registry row predates the registry: it counts
as old).

Example::

    fencepost clean postgresql://postgres@127.0.0.1:5432/test --older-than 1h --drop
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import sqlalchemy as sa
from tabulate import tabulate

from fencepost.adapters.sql import LOCK_CLASS, REGISTRY, normalize_url, registry_table

from .errors import ConfigurationError

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_age(text: str) -> float:
    """``90s``, ``30m``, ``2h``, ``7d`` in seconds; ConfigurationError otherwise."""
    found = re.fullmatch(r"([1-9][0-9]{0,8})([smhd])", text)
    if found is None:
        raise ConfigurationError(
            f"--older-than {text!r}: give a whole number and a unit, like 90s, 30m, 2h or 7d")
    return int(found[1]) * UNITS[found[2]]


@attrs.frozen
class Namespace:
    """One namespace found in the database: its tables, when and by whom it was opened
    (None: no registry row), and whether a live run holds it."""

    name: str
    tables: tuple[str, ...]
    created_ms: int | None
    owner: str | None
    live: bool


def namespace_of(table: str) -> str | None:
    """``fp_<namespace>_<name>`` -> the namespace (namespaces hold no ``_``); None for other
    tables and the registry."""
    if not table.startswith("fp_") or table == REGISTRY:
        return None
    name, sep, _ = table[3:].partition("_")
    return name if sep and name else None


def find(engine: sa.Engine) -> list[Namespace]:
    """The namespaces of ``engine``'s database, oldest first (unknown age first)."""
    with engine.connect() as conn:
        tables: dict[str, list[str]] = {}
        for table in sa.inspect(conn).get_table_names():
            ns = namespace_of(table)
            if ns is not None:
                tables.setdefault(ns, []).append(table)
        rows: dict[str, tuple[int, str]] = {}
        if sa.inspect(conn).has_table(REGISTRY):
            registry = registry_table(sa.MetaData())
            for row in conn.execute(sa.select(registry)):
                rows[row.namespace] = (int(row.created_ms), str(row.owner))
        found = []
        for name in sorted(set(tables) | set(rows)):
            created, owner = rows.get(name, (None, None))
            found.append(Namespace(name, tuple(sorted(tables.get(name, ()))), created, owner,
                                   _live(conn, name, owner)))
    return sorted(found, key=lambda n: (n.created_ms or 0, n.name))


def _live(conn: sa.Connection, namespace: str, owner: str | None) -> bool:
    if conn.dialect.name == "postgresql":
        taken = conn.execute(sa.text("SELECT pg_try_advisory_lock(:c, hashtext(:n))"),
                             {"c": LOCK_CLASS, "n": namespace}).scalar()
        if taken:
            conn.execute(sa.text("SELECT pg_advisory_unlock(:c, hashtext(:n))"),
                         {"c": LOCK_CLASS, "n": namespace})
        conn.commit()
        return not taken
    return owner is not None and _running_here(owner)


def _running_here(owner: str) -> bool:
    """Is ``host:pid`` a process of this host that still runs (another host: cannot tell,
    so it counts as running)?"""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def _locked(conn: sa.Connection, namespace: str) -> Iterator[bool]:
    """On PostgreSQL, hold the namespace's lock exclusively while it is dropped (False: a
    run holds it); elsewhere True."""
    if conn.dialect.name != "postgresql":
        yield True
        return
    taken = bool(conn.execute(sa.text("SELECT pg_try_advisory_lock(:c, hashtext(:n))"),
                              {"c": LOCK_CLASS, "n": namespace}).scalar())
    conn.commit()
    try:
        yield taken
    finally:
        if taken:
            conn.execute(sa.text("SELECT pg_advisory_unlock(:c, hashtext(:n))"),
                         {"c": LOCK_CLASS, "n": namespace})
            conn.commit()


def drop(engine: sa.Engine, namespace: Namespace) -> bool:
    """Drop ``namespace``'s tables and its registry row, unless a run took it meanwhile."""
    with engine.connect() as conn, _locked(conn, namespace.name) as ours:
        if not ours:
            return False
        preparer = conn.dialect.identifier_preparer
        for table in namespace.tables:
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {preparer.quote(table)}"))
        if sa.inspect(conn).has_table(REGISTRY):
            registry = registry_table(sa.MetaData())
            conn.execute(registry.delete().where(registry.c.namespace == namespace.name))
        conn.commit()
    return True


def _age(created_ms: int | None, now_s: float) -> str:
    if created_ms is None:
        return "unknown"
    seconds = max(0, int(now_s - created_ms / 1000))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def cmd_clean(args: argparse.Namespace) -> int:
    """List the namespaces a run left in ``args.url``; drop them with ``--drop``."""
    older = parse_age(args.older_than) if args.older_than else None
    try:
        engine = sa.create_engine(normalize_url(args.url), poolclass=sa.NullPool)
    except (sa.exc.ArgumentError, ImportError, ValueError) as e:
        raise ConfigurationError(f"not a database URL: {args.url!r} ({e})") from None
    now = time.time()
    try:
        found = find(engine)
        rows: list[list[Any]] = []
        chosen: list[Namespace] = []
        for ns in found:
            old = older is None or ns.created_ms is None or now - ns.created_ms / 1000 >= older
            status = "live: a run holds it" if ns.live else (
                "left behind" if old else f"newer than {args.older_than}")
            if not ns.live and old:
                chosen.append(ns)
            rows.append([ns.name, len(ns.tables), _age(ns.created_ms, now), ns.owner or "-",
                         status])
        if rows:
            print(tabulate(rows, headers=["namespace", "tables", "age", "opened by", "status"]))
        tables = sum(len(ns.tables) for ns in chosen)
        if not args.drop:
            print(f"{len(chosen)} namespace(s) left behind ({tables} table(s)); "
                  "run again with --drop to drop them")
            return 0
        dropped = [ns for ns in chosen if drop(engine, ns)]
        print(f"dropped {len(dropped)} namespace(s) ({sum(len(n.tables) for n in dropped)} "
              f"table(s)); {len(chosen) - len(dropped)} taken by a run meanwhile, kept")
        return 0
    except sa.exc.OperationalError as e:
        raise ConfigurationError(f"cannot reach {args.url}: "
                                 f"{str(e.orig).strip().splitlines()[0]}") from None
    finally:
        engine.dispose()

