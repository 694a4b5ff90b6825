"""The index's `Database`: transactions, meta, warnings once, closing, corruption. Real SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgit.errors import MemgitError
from memgit.index.db import Database


def opened(path: Path | None, warnings: list[str]) -> Database:
    db = Database(path, warnings.append)
    db.open()
    return db


def test_a_transaction_commits_or_rolls_back_as_a_whole(tmp_path: Path) -> None:
    db = opened(tmp_path / "git" / "memgit" / "index.db", [])
    with db.transaction():
        db.set_meta("a", "1")
    with pytest.raises(RuntimeError):
        with db.transaction():
            db.set_meta("a", "2")
            db.set_meta("b", "2")
            raise RuntimeError("half way")
    assert (db.meta("a"), db.meta("b")) == ("1", None)
    with db.transaction():
        db.set_meta("a", None)
    assert db.meta("a") is None
    other = opened(db.path, [])  # another connection (another process) sees what was committed
    assert other.meta("a") is None and other.in_memory is False


def test_warnings_are_said_once_per_database(tmp_path: Path) -> None:
    warnings: list[str] = []
    db = opened(tmp_path / "index.db", warnings)
    db.warn_once("k", "first")
    db.warn_once("k", "again")
    opened(tmp_path / "index.db", warnings).warn_once("k", "another database")
    assert warnings == ["first", "another database"]


def test_a_closed_database_says_so(tmp_path: Path) -> None:
    db = opened(tmp_path / "index.db", [])
    db.close()
    db.close()
    with pytest.raises(MemgitError, match="closed"):
        db.meta("a")


def test_a_corrupt_file_is_rebuilt_and_an_unusable_folder_falls_back_to_memory(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    path.write_bytes(b"this is not a database" * 100)
    warnings: list[str] = []
    db = opened(path, warnings)
    assert not db.in_memory and any("unreadable" in w for w in warnings)
    assert db.meta("anything") is None
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder should be")
    fallback = opened(blocked / "memgit" / "index.db", warnings)
    assert fallback.in_memory and "cannot create" in str(fallback.memory_reason)
    with fallback.transaction():
        fallback.set_meta("k", "v")
    assert fallback.meta("k") == "v"
