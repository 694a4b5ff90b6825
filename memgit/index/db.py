"""One index database: its connection, `meta` table, transactions and warnings-once state.

`Index`, `Vectors` and the change detector share one `Database` instead of reaching into
each other. It opens the file (creating and migrating the schema), falls back to a fresh
in-memory database when the file cannot be opened or written (a read-only or locked git
dir), and rebuilds a corrupt file from scratch: the index is a cache of the memory files.

Threads: a long-lived process (an MCP server, a hook runner) may call one `Memgit` from
several threads. The database keeps ONE connection and `lock` (re-entrant) serialises
every operation on it (`Index` takes it around each public call). Why not a connection per
thread: a connection holds one transaction at a time, so two threads sharing it without a
lock would interleave their BEGIN/COMMIT; per-thread connections would avoid that but the
in-memory fallback cannot be shared between connections, and an operation here lasts
milliseconds (a recall's queries ~10 ms), so waiting for the lock costs less than opening,
tracking and closing a connection per thread. Other processes are kept apart by SQLite
itself (WAL, `BEGIN IMMEDIATE`, a busy timeout).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from memgit.errors import MemgitError
from memgit.index import sqlite as sq

Warn = Callable[[str], None]
T = TypeVar("T")


class Database:
    """The SQLite file of one index (or an in-memory stand-in); see the module docstring.

    `on_connect(conn)` runs on every new connection before the schema is migrated (the
    vectors load sqlite-vec there: the 2 -> 3 upgrade reads the old vec0 table).
    """

    def __init__(self, path: Path | None, warn: Warn,
                 on_connect: Callable[[sq.Connection], None] | None = None) -> None:
        self.path = path
        self.warn = warn
        self.on_connect = on_connect
        self.driver = sq.driver()
        self.in_memory = path is None
        self.memory_reason: str | None = None
        self.lock = threading.RLock()
        self._warned: set[str] = set()
        self._conn: sq.Connection | None = None
        self._closed = False

    # -- the connection ------------------------------------------------------------------

    @property
    def conn(self) -> sq.Connection:
        if self._conn is None:
            if self._closed:
                raise MemgitError("the index was closed; open the store again (memgit.open)")
            self._conn = self._open()
        return self._conn

    def open(self) -> None:
        """Open (create, migrate) now rather than on first use."""
        with self.lock:
            self.conn  # noqa: B018 - opening is the point

    def close(self) -> None:
        """Close the connection; using this database afterwards raises MemgitError."""
        with self.lock:
            self._closed = True
            if self._conn is not None:
                conn, self._conn = self._conn, None
                conn.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def _open(self) -> sq.Connection:
        if self.path is not None and not self.in_memory:
            try:
                return self._open_file(self.path)
            except self.driver.Error as exc:
                self._use_memory(f"cannot open {self.path} ({exc})")
            except OSError as exc:
                self._use_memory(f"cannot create {self.path.parent} ({exc.strerror or exc})")
        self.in_memory = True
        conn = sq.connect(self.driver, ":memory:")
        _check_fts(conn)
        sq.migrate(conn)
        if self.on_connect is not None:
            self.on_connect(conn)
        return conn

    def _use_memory(self, why: str) -> None:
        self.in_memory = True
        self.memory_reason = why
        self.warn_once(f"memory:{self.path}",
                       f"{why}; recalling from a fresh in-memory index (keywords and anchors only)")

    def _open_file(self, path: Path) -> sq.Connection:
        path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in (1, 2):
            conn = None
            try:
                conn = sq.connect(self.driver, str(path))
                _check_fts(conn)
                if self.on_connect is not None:
                    self.on_connect(conn)  # before migrating: see the class docstring
                sq.migrate(conn)
                conn.execute("SELECT count(*) FROM meta").fetchone()
                return conn
            except self.driver.DatabaseError as exc:  # "file is not a database", "malformed"
                if conn is not None:
                    conn.close()
                if type(exc) is not self.driver.DatabaseError or attempt == 2:
                    raise  # locked, read-only...: the caller falls back to memory
                self.warn(f"the index {path} was unreadable ({exc}); rebuilding it")
                delete_files(path)
        raise AssertionError("unreachable")

    def reset(self) -> None:
        """Throw a corrupt database away and start again (the files are the truth)."""
        with self.lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                except Exception:  # the driver's errors on a broken file: it is going anyway
                    pass
                self._conn = None
            if self.path is not None and not self.in_memory:
                self.warn(f"the index {self.path} is corrupt; rebuilding it")
                delete_files(self.path)
            self._conn = self._open()

    def guard(self, call: Callable[[], T]) -> T:
        """Run `call` holding the lock; on a corrupt database, rebuild it and run it again."""
        with self.lock:
            try:
                return call()
            except self.driver.DatabaseError as exc:
                # SQLITE_CORRUPT and SQLITE_NOTADB raise the base class itself; its subclasses
                # (locked, busy, read-only, constraint) are not corruption.
                if type(exc) is not self.driver.DatabaseError:
                    raise
                self.reset()
                return call()

    # -- meta and transactions -------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    @contextmanager
    def transaction(self) -> Iterator[sq.Connection]:
        """A write transaction (`BEGIN IMMEDIATE`): committed at the end, rolled back on error."""
        with self.lock:
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                self._rollback(conn)
                raise
            conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[sq.Connection]:
        """A read transaction: every query inside sees the same state, even while another
        process writes (WAL)."""
        with self.lock:
            conn = self.conn
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                self._rollback(conn)

    def _rollback(self, conn: sq.Connection) -> None:
        try:
            conn.execute("ROLLBACK")
        except self.driver.Error:
            pass  # no transaction left to roll back (SQLite ended it on the error)

    # -- messages ------------------------------------------------------------------------------

    def warn_once(self, key: str, message: str) -> None:
        """`warn(message)` the first time `key` is seen by this database."""
        if key not in self._warned:
            self._warned.add(key)
            self.warn(message)

    def size_bytes(self) -> int:
        """The file's size with its WAL and shared-memory files (0 in memory)."""
        size = 0
        if self.path is not None and not self.in_memory:
            for suffix in ("", "-wal", "-shm"):
                try:
                    size += os.path.getsize(str(self.path) + suffix)
                except OSError:
                    pass
        return size


def _check_fts(conn: sq.Connection) -> None:
    if not sq.has_fts5(conn):
        raise MemgitError("this Python's SQLite has no FTS5; install pysqlite3-binary "
                          "(`pip install pysqlite3-binary`) or use a Python built with FTS5")


def delete_files(path: Path) -> None:
    """Delete a database file and its companions."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(str(path) + suffix)
        except OSError:  # gone already, or not ours to delete: the open that follows says why
            pass
