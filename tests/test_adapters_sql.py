"""The SQL stores' shared plumbing: a write transaction on SQLite first waits, in this
process, for the database's other writers of this process."""

from __future__ import annotations

import threading
from pathlib import Path

import sqlalchemy as sa

from fencepost.adapters.sql import make_engine, writing


def _try_write_elsewhere(engine: sa.Engine) -> bool:
    """Could another thread start a write transaction now (without waiting)?"""
    from fencepost.adapters.sql import _sqlite_writer_gate

    got: list[bool] = []

    def attempt() -> None:
        gate = _sqlite_writer_gate(engine)
        acquired = gate.acquire(blocking=False)
        got.append(acquired)
        if acquired:
            gate.release()

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return got[0]


def test_a_sqlite_writer_holds_off_the_processes_other_writers_until_it_ends(
        tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    other = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")  # same file, another engine
    try:
        with writing(engine) as conn:
            conn.execute(sa.text("create table t (x integer)"))
            assert not _try_write_elsewhere(engine)
            assert not _try_write_elsewhere(other)
        assert _try_write_elsewhere(engine)
        with writing(other) as conn:
            conn.execute(sa.text("insert into t values (1)"))
        with engine.connect() as conn:
            assert conn.execute(sa.text("select x from t")).scalar_one() == 1
    finally:
        engine.dispose()
        other.dispose()


def test_writers_of_another_database_do_not_wait(tmp_path: Path) -> None:
    one = make_engine(f"sqlite:///{tmp_path / 'one.sqlite'}")
    two = make_engine(f"sqlite:///{tmp_path / 'two.sqlite'}")
    try:
        with writing(one):
            assert _try_write_elsewhere(two)
    finally:
        one.dispose()
        two.dispose()
