"""The title lane: one short vector per memory of its title and the names it is anchored to.

A memory's own vector reads its title and the start of its body, where the body's detail
dilutes what the memory is about; a question usually asks after that "about" ("the helper
that expects a raise", "check if a file is read-only"). So each embedded memory also gets
a vector of `text()`: its title, then its entity, files and symbols as words (identifiers
split: `get_user_id` and `getUserId` both read "get user id", a path its parts without
the extension), a few dozen tokens, cheap to embed. It is searched as a channel of its own
("title", `memgit.index.ranking`), with its own weight, from the same query vector as the
vector channel: a recall embeds nothing more.

Stored like the passages (`memgit.index.passages`): a plain table created on first use
(`ensure`), keyed by the index's `doc`, stamped with the memory's file sha, so that a
changed memory's title vector is pending again and a deleted one's goes with its vector
(`delete`); the vectors go through the vector cache (`memgit.index.vectorcache`), so a
restamp or a `reindex` embeds nothing already embedded. Nothing here loads a model.

Only a title that says something new gets a lane vector (`worth`); the others get an empty
row, so that they are not pending, and the fusion leaves the lane out for them. Measured on
the development sets (docs/benchmarks.md, "The title lane"): on code memory whose titles are
commit subjects the lane lifted recall@5 from 0.798 to 0.839 (questions in words 0.704 to
0.763) with weight 0.45 (`[recall] weight_title`; 0.3 and 0.6 gave 0.833 and 0.832); titles
that are bare function names (cosqa) cost 2.6 points as a lane, titles cut from the body's
first line (devmembench) 0.5 to 1.5: hence `worth`. Folding the same text in as one more
passage instead gave 0.821.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

TABLE = (
    "CREATE TABLE IF NOT EXISTS title_vectors (doc INTEGER PRIMARY KEY, sha TEXT NOT NULL, "
    "embedding BLOB NOT NULL)"
)
#: Characters of the lane's text: a title and a few names, well inside the embedder's 128
#: tokens (a cap, not a tuned figure: no text on the development sets reaches it).
MAX_CHARS = 400

_TOKEN = re.compile(r"[^\W_]+")
_CASE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def words(name: str) -> str:
    """An identifier, a path or a `path::symbol` as lower-case words: `get_user_id`,
    `getUserId` -> "get user id"; `src/_pytest/hookspec.py` -> "src pytest hookspec";
    `HTTPServer` -> "http server"; letters of any script are kept (`été_data` -> "été data")."""
    name = _EXTENSION.sub("", name.split("::")[0]) + (" " + name.split("::", 1)[1] if "::" in name else "")
    return " ".join(part.lower() for token in _TOKEN.findall(name) for part in _CASE.sub(" ", token).split())


def text(title: str, names: Iterable[str]) -> str:
    """What the lane embeds for a memory: its title, then the words of its names (each word
    once, in order, leaving out those the title already has)."""
    seen = set(words(title).split()) | {w.lower() for w in re.findall(r"\w+", title)}
    out: list[str] = []
    for name in names:
        for word in words(name).split():
            if word not in seen:
                seen.add(word)
                out.append(word)
    return (f"{title}\n{' '.join(out)}" if out else title)[:MAX_CHARS]


def worth(title: str, body: str) -> bool:
    """Whether a title tells the lane something the memory's own vector and the anchors do
    not: not a bare name (one word or identifier, `writeBoolean`: the keywords and anchors
    match it exactly, and as a lane it only adds a second vector of the same few words), and
    not the body's own beginning (a title cut from the first line, "project: Let's get
    started on…": the memory's own vector reads it already), nor the whole memory (an empty
    body: its own vector is the title's)."""
    words_in = title.split()
    if len(words_in) < 2 or not body.strip():
        return False
    head = title.rstrip("….").strip()
    head = head.split(": ", 1)[1] if ": " in head[:60] else head
    return _squash(head)[:60] not in _squash(body[: len(head) + 200])


def _squash(value: str) -> str:
    return " ".join(value.casefold().split())


def row_text(title: str, entity: str | None, files: str | None, symbols: str | None, body: str = "") -> str:
    """`text()` from a `memories` row (files and symbols are JSON lists there); "" when the
    title is not `worth` a lane vector."""
    if not worth(title, body):
        return ""
    return text(title, [entity or "", *_names(files), *_names(symbols)])


def _names(value: str | None) -> list[str]:
    try:
        names = json.loads(value or "[]")
    except ValueError:
        return []
    return [str(n) for n in names] if isinstance(names, list) else []


def exists(conn: Any) -> bool:
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'title_vectors'").fetchone()
        is not None
    )


def ensure(conn: Any) -> None:
    """Create the table (inside the caller's write transaction)."""
    conn.execute(TABLE)


def pending(conn: Any, limit: int | None = None) -> list[tuple[int, str, str]]:
    """`(doc, text, sha)` of the embedded memories whose title vector is missing or stale, at
    most `limit`."""
    stale = (
        "AND NOT EXISTS (SELECT 1 FROM title_vectors t WHERE t.doc = m.doc AND t.sha = m.sha)"
        if exists(conn) else ""
    )
    rows = conn.execute(
        f"SELECT m.doc, m.title, m.entity, m.files, m.symbols, m.sha, m.body FROM memories m "
        f"WHERE m.vec_sha IS NOT NULL {stale} ORDER BY m.doc" + (" LIMIT ?" if limit is not None else ""),
        () if limit is None else (limit,),
    ).fetchall()
    return [(int(r[0]), row_text(str(r[1]), r[2], r[3], r[4], str(r[6] or "")), str(r[5] or ""))
            for r in rows]


def count_pending(conn: Any) -> int:
    stale = (
        "AND NOT EXISTS (SELECT 1 FROM title_vectors t WHERE t.doc = m.doc AND t.sha = m.sha)"
        if exists(conn) else ""
    )
    sql = f"SELECT count(*) FROM memories m WHERE m.vec_sha IS NOT NULL {stale}"
    return int(conn.execute(sql).fetchone()[0])


def store(conn: Any, doc: int, sha: str, blob: bytes) -> None:
    """Replace one memory's title vector (inside the caller's write transaction)."""
    conn.execute("INSERT OR REPLACE INTO title_vectors (doc, sha, embedding) VALUES (?, ?, ?)",
                 (doc, sha, blob))


def delete(conn: Any, doc: int) -> None:
    if exists(conn):
        conn.execute("DELETE FROM title_vectors WHERE doc = ?", (doc,))


def clear(conn: Any) -> None:
    """Every title vector goes (the embedder changed)."""
    if exists(conn):
        conn.execute("DELETE FROM title_vectors")


def without(conn: Any, ids: Iterable[str]) -> frozenset[str]:
    """Those of `ids` (memories with a vector) that have no current title vector (not yet,
    or none: a title not `worth` one is stored as an empty row): the lane cannot judge
    them, so the fusion leaves it out for them."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return frozenset()
    have = exists(conn)
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        missing = ("NOT EXISTS (SELECT 1 FROM title_vectors t WHERE t.doc = m.doc AND t.sha = m.sha "
                   "AND length(t.embedding) > 0)" if have else "1")
        found.update(r[0] for r in conn.execute(
            f"SELECT m.id FROM memories m WHERE m.id IN ({marks}) AND {missing}", chunk))
    return frozenset(found)


#: `meta` key holding `share()` as it was when the last embedding pass ended: counting both
#: tables reads every row's page (milliseconds at 10k), too slow for every recall.
SHARE = "title_share"


def stored_share(value: str | None) -> float:
    """The `SHARE` meta value as a number (0 when unset or unreadable)."""
    try:
        return min(1.0, max(0.0, float(value or 0.0)))
    except ValueError:
        return 0.0


def share(conn: Any) -> float:
    """The share of the embedded memories that have a title vector (0 when none has one)."""
    if not exists(conn):
        return 0.0
    lane = conn.execute("SELECT count(*) FROM title_vectors WHERE length(embedding) > 0").fetchone()[0]
    if not lane:
        return 0.0
    return min(1.0, lane / max(1, conn.execute("SELECT count(*) FROM vectors").fetchone()[0]))
