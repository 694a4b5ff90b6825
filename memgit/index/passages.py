"""Long memories embedded by passage, so that a line deep in a rules file reaches the vector channel.

The embedder reads about the first 128 tokens of what it is given (some 500 characters of
prose), so a 1–2k character note (a rules file, a memory bank page) has one vector that
says nothing about its later lines. A memory longer than `LONG_CHARS` also gets one vector
per passage of its body after the first: about `PASSAGE_CHARS` characters cut at line or
sentence ends, each prefixed with the memory's title so that the passage keeps its context.
The memory stays the unit recalled: a passage nearer the query than the memory's own vector
lifts the memory's vector strength by `CREDIT` of the difference (`best` finds the
passages), and which passage won is kept (`Found.passages`) so that it can be what is shown.

Passages live in their own plain table, created on first use (`ensure`), keyed by the
index's `doc` and stamped with the memory's file sha: a changed memory's passages are
pending again, a deleted one's go with its vector (`delete`). Nothing here loads a model:
`Vectors` hands the texts to the embedder.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

#: A memory whose title and body are longer than this gets passage vectors.
LONG_CHARS = 600
#: About how long a passage is (characters of body, the title comes on top).
PASSAGE_CHARS = 400
#: How much of a passage's lead over its memory's own vector counts: the vector strength is
#: own + CREDIT * (best passage - own). 1 would be the best passage alone, which favours long
#: memories (more passages, more chances of one near chance match).
CREDIT = 0.5
#: At most this many passages a memory (the rest of a very long note is left to keywords).
MAX_PASSAGES = 12

TABLE = (
    "CREATE TABLE IF NOT EXISTS passage_vectors (doc INTEGER NOT NULL, n INTEGER NOT NULL, "
    "sha TEXT NOT NULL, embedding BLOB NOT NULL, PRIMARY KEY (doc, n))"
)
_BREAK = re.compile(r"(?<=\n)|(?<=[.!?])\s+")


def split(title: str, body: str) -> list[str]:
    """The passages of a long memory, each `title` + newline + a piece of the body, leaving
    out the body's first piece (the whole-memory vector already reads it); [] for a short
    memory."""
    if len(title) + len(body) <= LONG_CHARS:
        return []
    pieces: list[str] = []
    current = ""
    for part in _BREAK.split(body):
        if not part:
            continue
        while len(part) > PASSAGE_CHARS * 2:  # one very long line: cut it where it must be cut
            if current.strip():
                pieces.append(current)
            current = ""
            pieces.append(part[:PASSAGE_CHARS])
            part = part[PASSAGE_CHARS:]
        if current.strip() and len(current) + len(part) > PASSAGE_CHARS:
            pieces.append(current)
            current = ""
        current += part if not current or current[-1].isspace() else " " + part
    if current.strip():
        pieces.append(current)
    pieces = [p.strip() for p in pieces if p.strip()]
    return [f"{title}\n{piece}" for piece in pieces[1 : 1 + MAX_PASSAGES]]


def exists(conn: Any) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'passage_vectors'"
        ).fetchone()
        is not None
    )


def ensure(conn: Any) -> None:
    """Create the passage table (inside the caller's write transaction)."""
    conn.execute(TABLE)


def pending(conn: Any, limit: int | None = None) -> list[tuple[int, str, str, str]]:
    """`(doc, title, body, sha)` of the embedded long memories whose passages are missing or
    stale, shortest first; at most `limit`."""
    have = exists(conn)
    stale = (
        "AND NOT EXISTS (SELECT 1 FROM passage_vectors p WHERE p.doc = m.doc AND p.sha = m.sha)"
        if have
        else ""
    )
    rows = conn.execute(
        "SELECT m.doc, m.title, m.body, m.sha FROM memories m WHERE m.vec_sha IS NOT NULL "
        f"AND length(m.title) + length(m.body) > ? {stale} ORDER BY length(m.body), m.doc"
        + (" LIMIT ?" if limit is not None else ""),
        (LONG_CHARS, *(() if limit is None else (limit,))),
    ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2] or ""), str(r[3] or "")) for r in rows]


def count_pending(conn: Any) -> int:
    return len(pending(conn))


def store(conn: Any, doc: int, sha: str, blobs: Iterable[bytes]) -> None:
    """Replace one memory's passage vectors (inside the caller's write transaction)."""
    conn.execute("DELETE FROM passage_vectors WHERE doc = ?", (doc,))
    conn.executemany(
        "INSERT INTO passage_vectors (doc, n, sha, embedding) VALUES (?, ?, ?, ?)",
        ((doc, n, sha, blob) for n, blob in enumerate(blobs, start=1)),
    )


def delete(conn: Any, doc: int) -> None:
    if exists(conn):
        conn.execute("DELETE FROM passage_vectors WHERE doc = ?", (doc,))


def clear(conn: Any) -> None:
    """Every passage vector goes (the embedder changed)."""
    if exists(conn):
        conn.execute("DELETE FROM passage_vectors")


def best(conn: Any, query_vector: bytes, k: int) -> dict[int, tuple[float, int]]:
    """doc -> (cosine distance, passage number) of the `k` memories whose best passage is
    nearest the query: an exact scan of every passage (~1.4 us each, sqlite-vec's C function)."""
    if not exists(conn):
        return {}
    rows = conn.execute(
        "SELECT doc, n, coalesce(vec_distance_cosine(embedding, ?1), 1.0) AS d FROM passage_vectors "
        "ORDER BY d LIMIT ?2",
        (query_vector, k * 4),
    ).fetchall()
    out: dict[int, tuple[float, int]] = {}
    for doc, n, distance in rows:
        if doc not in out:
            out[int(doc)] = (float(distance), int(n))
        if len(out) >= k:
            break
    return out
