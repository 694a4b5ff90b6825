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

Their sign bits live in `passage_bits` beside them, so that past `EXACT_MAX` passages `best`
takes a shortlist by hamming distance and scores only that exactly, as the memories' own
vectors do (`memgit.index.channels.vector`): at 10k generated memories (11k passages) the
exact scan of every passage was the largest part of a recall. An index whose passages were
stored before the bits existed gets them on its next sync (`fill_bits`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from memgit.index.resident import Resident

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

#: Up to this many passages (judged by the largest rowid, an upper bound), `best` scans
#: them all exactly (~1.4 us each); above, a hamming shortlist first.
EXACT_MAX = 2000
#: The shortlist: at least this many times the passages `best` wants, and 1/10 of them all.
SHORTLIST_FACTOR = 2
SHORTLIST_SHARE = 10
SHORTLIST_MAX = 8192
#: `meta` key: "1" once every stored passage has its bits (set after `fill_bits`).
BITS_DONE = "passage_bits_done"

TABLE = (
    "CREATE TABLE IF NOT EXISTS passage_vectors (doc INTEGER NOT NULL, n INTEGER NOT NULL, "
    "sha TEXT NOT NULL, embedding BLOB NOT NULL, PRIMARY KEY (doc, n))"
)
#: Sign bits of each passage vector (NULL when the dimension is not a multiple of 8).
BITS_TABLE = (
    "CREATE TABLE IF NOT EXISTS passage_bits (doc INTEGER NOT NULL, n INTEGER NOT NULL, bits BLOB, "
    "PRIMARY KEY (doc, n))"
)
_BITS_OF = "CASE WHEN length(embedding) % 32 = 0 THEN vec_quantize_binary(embedding) END"
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
    """Create the passage tables (inside the caller's write transaction)."""
    conn.execute(TABLE)
    conn.execute(BITS_TABLE)


def fill_bits(conn: Any) -> None:
    """Give every stored passage that has none its sign bits (inside the caller's write
    transaction; sqlite-vec loaded): passages stored before `passage_bits` existed."""
    if not exists(conn):
        return
    conn.execute(BITS_TABLE)
    conn.execute(f"INSERT OR IGNORE INTO passage_bits (doc, n, bits) SELECT doc, n, {_BITS_OF} "
                 "FROM passage_vectors")


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
    conn.execute("DELETE FROM passage_bits WHERE doc = ?", (doc,))
    conn.executemany(
        "INSERT INTO passage_vectors (doc, n, sha, embedding) VALUES (?, ?, ?, ?)",
        ((doc, n, sha, blob) for n, blob in enumerate(blobs, start=1)),
    )
    conn.execute(f"INSERT INTO passage_bits (doc, n, bits) SELECT doc, n, {_BITS_OF} FROM passage_vectors "
                 "WHERE doc = ?", (doc,))


def delete(conn: Any, doc: int) -> None:
    if exists(conn):
        conn.execute("DELETE FROM passage_vectors WHERE doc = ?", (doc,))
        conn.execute(BITS_TABLE)
        conn.execute("DELETE FROM passage_bits WHERE doc = ?", (doc,))


def clear(conn: Any) -> None:
    """Every passage vector goes (the embedder changed)."""
    if exists(conn):
        conn.execute("DELETE FROM passage_vectors")
        conn.execute(BITS_TABLE)
        conn.execute("DELETE FROM passage_bits")


def best(conn: Any, query_vector: bytes, k: int, bits: Resident | None = None) -> dict[int, tuple[float, int]]:
    """doc -> (cosine distance, passage number) of the `k` memories whose best passage is
    nearest the query: an exact scan of every passage (~1.4 us each, sqlite-vec's C
    function) up to `EXACT_MAX` passages; above, the exact distance of a shortlist taken by
    hamming distance over the sign bits (~0.12 us each). The distances are exact either
    way; only which passages reach the top can differ. With `bits` (what the process keeps of
    the stored vectors, `memgit.index.resident`) both stages run there: the same answer."""
    if not exists(conn):
        return {}
    want = k * 4
    size = conn.execute("SELECT max(rowid) FROM passage_vectors").fetchone()[0] or 0
    if size <= EXACT_MAX or len(query_vector) % 32 or not _has_bits(conn):
        rows = conn.execute(
            "SELECT doc, n, coalesce(vec_distance_cosine(embedding, ?1), 1.0) AS d FROM passage_vectors "
            "ORDER BY d LIMIT ?2",
            (query_vector, want),
        ).fetchall()
    elif bits is not None and (near := bits.nearest(conn, "passage_bits", query_vector,
                                                    shortlist(size, want), want)) is not None:
        rows = [(doc, n, distance) for (doc, n), distance in near]
    elif bits is not None and (shortlisted := bits.shortlist(conn, "passage_bits", query_vector,
                                                             shortlist(size, want))) is not None:
        rows = conn.execute(
            "SELECT p.doc, p.n, coalesce(vec_distance_cosine(p.embedding, ?1), 1.0) AS d "
            "FROM passage_vectors p WHERE (p.doc, p.n) IN ("
            "SELECT value ->> 0, value ->> 1 FROM json_each(?3)) ORDER BY d LIMIT ?2",
            (query_vector, want, json.dumps(shortlisted)),
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT p.doc, p.n, coalesce(vec_distance_cosine(p.embedding, ?1), 1.0) AS d "
            "FROM passage_vectors p WHERE (p.doc, p.n) IN ("
            "SELECT b.doc, b.n FROM passage_bits b WHERE b.bits IS NOT NULL "
            "ORDER BY vec_distance_hamming(vec_bit(b.bits), vec_quantize_binary(?1)) LIMIT ?3) "
            "ORDER BY d LIMIT ?2",
            (query_vector, want, shortlist(size, want)),
        ).fetchall()
    out: dict[int, tuple[float, int]] = {}
    for doc, n, distance in rows:
        if doc not in out:
            out[int(doc)] = (float(distance), int(n))
        if len(out) >= k:
            break
    return out


def shortlist(size: int, want: int) -> int:
    """How many passages the hamming stage keeps for the exact cosine, out of `size`."""
    return min(SHORTLIST_MAX, max(SHORTLIST_FACTOR * want, 200, size // SHORTLIST_SHARE))


def _has_bits(conn: Any) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (BITS_DONE,)).fetchone()
    return row is not None and row[0] == "1"
