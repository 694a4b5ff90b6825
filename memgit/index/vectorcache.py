"""Vectors already computed, kept by model and text: a text embedded once is never embedded again.

The index drops a memory's vector when its text changes, every vector when the embedder
changes, and everything when it is deleted or found corrupt (`memgit reindex` after a
`rm`, a schema change). Embedding is the slow part (~35 ms of CPU per memory with MiniLM),
so the vectors also go into a cache of their own, `vectors.db` beside the index in the git
dir: one row per (embedder id, sha1 of the embedded text), the float32 bytes. Before it
embeds, the index takes what the cache holds; after, it adds what it computed. A body
edited and then reverted, a file renamed, an embedder tried and switched back, an index
rebuilt from nothing: none of them embeds a text twice.

It is a cache like the index: never committed, deleted safely at any time, and every
failure (a corrupt or unwritable file, a locked one) makes it say nothing rather than fail
an embedding: a corrupt file is deleted and started again once, and then the cache is off
for this process.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType

from memgit.index import sqlite as sq

FILE = "vectors.db"
#: Rows asked for in one query (SQLite's default limit of variables is 32,766; stay well under).
CHUNK = 500


def path_for(index_path: Path) -> Path:
    """The cache beside an index: one per folder of indexes (the git dir's `memgit/`)."""
    return index_path.parent / FILE


class VectorCache:
    """The (embedder id, text sha1) -> float32 bytes cache in one SQLite file; opened on first use."""

    def __init__(self, path: Path, driver: ModuleType) -> None:
        self.path = path
        self.driver = driver
        self._conn: sq.Connection | None = None
        self.off: str | None = None  # why the cache says nothing in this process

    def _connection(self) -> sq.Connection | None:
        if self._conn is not None or self.off is not None:
            return self._conn
        for attempt in (1, 2):
            try:
                conn = sq.connect(self.driver, str(self.path))
                conn.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, sha TEXT NOT NULL, "
                             "embedding BLOB NOT NULL, PRIMARY KEY (model, sha)) WITHOUT ROWID")
                self._conn = conn
                return conn
            except self.driver.DatabaseError as exc:
                if attempt == 2 or type(exc) is not self.driver.DatabaseError:
                    self.off = str(exc)
                    return None
                _delete(self.path)  # "file is not a database": a cache, start it again
            except (self.driver.Error, OSError) as exc:
                self.off = str(exc)
                return None
        return None

    def get(self, model: str, shas: Sequence[str], size: int) -> dict[str, bytes]:
        """The cached vectors of these texts (by sha1) for `model`, each `size` bytes long."""
        conn = self._connection()
        found: dict[str, bytes] = {}
        if conn is None or not shas:
            return found
        try:
            for start in range(0, len(shas), CHUNK):
                part = list(shas[start : start + CHUNK])
                marks = ",".join("?" * len(part))
                for sha, blob in conn.execute(
                        f"SELECT sha, embedding FROM vectors WHERE model = ? AND sha IN ({marks})", [model, *part]):
                    if len(blob) == size:
                        found[sha] = bytes(blob)
        except self.driver.Error as exc:
            self._fail(exc)
            return {}
        return found

    def put(self, model: str, items: Iterable[tuple[str, bytes]]) -> None:
        """Keep these vectors (text sha1, float32 bytes) of `model`; silently nothing on failure."""
        conn = self._connection()
        rows = [(model, sha, blob) for sha, blob in items]
        if conn is None or not rows:
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT OR REPLACE INTO vectors (model, sha, embedding) VALUES (?, ?, ?)", rows)
            conn.execute("COMMIT")
        except self.driver.Error as exc:
            try:
                conn.execute("ROLLBACK")
            except self.driver.Error:
                pass
            self._fail(exc)

    def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()

    def _fail(self, exc: Exception) -> None:
        if not isinstance(exc, self.driver.OperationalError):  # locked, busy: try again next time
            self.off = str(exc)
        self.close()


def _delete(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            (path.parent / (path.name + suffix)).unlink()
        except OSError:
            pass
