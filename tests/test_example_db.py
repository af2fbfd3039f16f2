"""The example database reads only what Hypothesis could have written there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fencepost.example_db import ENTRY_BYTES, RegularFilesDatabase, example_database


def test_a_directory_database_skips_what_is_not_a_small_regular_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = example_database(str(tmp_path / "db"))
    assert isinstance(db, RegularFilesDatabase)
    db.save(b"key", b"a failure")
    folder = next(p for p in (tmp_path / "db").iterdir() if p.is_dir() and
                  any(f.read_bytes() == b"a failure" for f in p.iterdir()))
    os.mkfifo(folder / "fifo")  # opening it to read would wait for a writer forever
    (folder / "huge").write_bytes(b"x" * (ENTRY_BYTES + 1))
    (folder / "link").symlink_to("/dev/zero")
    assert list(db.fetch(b"key")) == [b"a failure"]
    assert list(db.fetch(b"key")) == [b"a failure"]  # said once per path
    warned = sorted(capsys.readouterr().err.splitlines())
    assert warned == [
        f"fencepost: warning: --example-db: skipped {folder / 'fifo'} (not a regular file)",
        f"fencepost: warning: --example-db: skipped {folder / 'huge'} ({ENTRY_BYTES + 1} "
        f"bytes, more than {ENTRY_BYTES})",
        f"fencepost: warning: --example-db: skipped {folder / 'link'} (cannot be opened: Too "
        "many levels of symbolic links)",
    ]
