"""One index's rows copied into another for the files whose bytes both hold: what lets
`recall --at REV` index only the memory files a commit holds differently from the work tree.

Everything an index stores for a file (its `memories` row, its FTS5 text, its anchor keys) is
a function of the file's bytes, its path and the valid kinds, and the `files` table keeps the
sha1 of those bytes. So for a file whose path and sha1 are the same in both folders, the
source index's rows are what parsing and indexing the file again would write, byte for byte;
the copy costs a few SQL statements instead of the YAML parse and the anchor extraction
(about 1 ms per memory). Nothing is trusted that the bytes do not confirm: a file the source
index holds with a problem, as a copy of another (indexed under its path id), or under a sha1
that differs is not copied, and the target indexes it as usual.

The target's `files` rows get the stat of the file in its own folder (`Copied.stat`), so its
next `sync` sees those files unchanged and reads only the rest; its vectors are not copied.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memgit.index import sqlite as sq
from memgit.index.changes import Stat, dir_of
from memgit.index.index import Index

#: Rows asked for per statement (SQLite's default limit of bound values is 32,766).
BATCH = 500


@dataclass(frozen=True)
class Copied:
    """A file the target folder holds: the sha1 of its bytes and its stat there."""

    sha: str
    stat: Stat


def matching(source: Index, files: Mapping[str, str]) -> dict[str, str]:
    """The files of `files` (path in the memory folder -> sha1 of its bytes) that `source`
    holds as a usable memory of its own under the same sha1: path -> that memory's id."""
    found: dict[str, str] = {}

    def read() -> None:
        with source.db.snapshot() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'copies'").fetchone()
            copies = json.loads(row[0]) if row and row[0] else {}
            for chunk in _chunks(sorted(files)):
                marks = ",".join("?" * len(chunk))
                for rel, sha, memory_id in conn.execute(
                        "SELECT f.rel, f.sha, f.memory_id FROM files f JOIN memories m "
                        "ON m.id = f.memory_id AND m.rel = f.rel AND m.sha = f.sha "
                        f"WHERE f.problem IS NULL AND f.rel IN ({marks})", chunk).fetchall():
                    if sha and sha == files[rel] and rel not in copies:
                        found[rel] = memory_id

    source.db.guard(read)
    return found


def copy(source: Index, target: Index, files: Mapping[str, Copied]) -> int:
    """Copy `source`'s rows for each of `files` (path -> its sha1 and stat in the target's
    folder) that `matching` finds into `target`, whose index must not hold them yet; the
    number of files copied."""
    same = matching(source, {rel: item.sha for rel, item in files.items()})
    if not same:
        return 0
    columns = [name for (_, name, *_rest) in target.conn.execute("PRAGMA table_info(memories)").fetchall()]
    picked = ", ".join(f"m.{name}" if name != "vec_sha" else "NULL" for name in columns)
    fts_columns = ", ".join(sq.FTS_COLUMNS)
    memories: list[Sequence[Any]] = []
    texts: list[Sequence[Any]] = []
    anchors: list[Sequence[Any]] = []

    def read() -> None:
        with source.db.snapshot() as conn:
            for chunk in _chunks(sorted(same)):
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT {picked} FROM memories m JOIN files f ON f.rel = m.rel AND f.memory_id = m.id "
                    f"AND f.sha = m.sha WHERE f.problem IS NULL AND m.rel IN ({marks})", chunk).fetchall()
                rows = [r for r in rows if same.get(r[columns.index("rel")]) == r[columns.index("id")]
                        and r[columns.index("sha")] == files[r[columns.index("rel")]].sha]
                memories.extend(rows)
                docs = [r[columns.index("doc")] for r in rows]
                if not docs:
                    continue
                doc_marks = ",".join("?" * len(docs))
                texts.extend(conn.execute(
                    f"SELECT rowid, {fts_columns} FROM memories_fts WHERE rowid IN ({doc_marks})", docs).fetchall())
                anchors.extend(conn.execute(
                    f"SELECT anchor_key, doc FROM anchors WHERE doc IN ({doc_marks})", docs).fetchall())

    source.db.guard(read)
    rel_at, id_at, sha_at, doc_at = (columns.index(name) for name in ("rel", "id", "sha", "doc"))
    # In row number order: each table's B-tree then grows at its end (a third faster at 10k).
    memories.sort(key=lambda row: row[doc_at])
    texts.sort(key=lambda row: row[0])
    anchors.sort(key=lambda row: (row[1], row[0]))
    with target.db.transaction() as conn:
        conn.executemany(f"INSERT INTO memories({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                         memories)
        conn.executemany(f"INSERT INTO memories_fts(rowid, {fts_columns}) "
                         f"VALUES (?, {', '.join('?' * len(sq.FTS_COLUMNS))})", texts)
        conn.executemany("INSERT INTO anchors(anchor_key, doc) VALUES (?, ?)", anchors)
        conn.executemany(
            "INSERT INTO files(rel, dir, size, mtime_ns, ino, sha, memory_id, problem) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
            ((row[rel_at], dir_of(row[rel_at]), *files[row[rel_at]].stat, row[sha_at], row[id_at]) for row in memories))
    return len(memories)


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), BATCH):
        yield items[start:start + BATCH]
