"""Hubness of code memories' vectors: generic code that sits near every question counts less.

Code embedded by a sentence model crowds together: every function shares `def`, `return`,
`self` and brackets, so the memory vectors of a store of code lie close to one another, and
some of them (short, generic functions) lie close to almost anything, a question included.
Such "hubs" (Radovanović et al., JMLR 2010) come near the top of many unrelated searches.
The usual correction is CSLS (Conneau et al., "Word translation without parallel data",
ICLR 2018): a candidate's similarity to the query, less half the mean similarity to its
`K` nearest neighbours. Here a code memory's `value` is that mean over the other code
memories (`refresh`), and the vector channel ranks by the cosine less `WEIGHT` times the
memory's value above the store's mean (`shifts`): a memory of average density keeps its
cosine, one in a crowd gives up part of it, one that stands apart gains it.

Only code memories (`is_code_memory`: the body, or the title and body of code remembered as
it is, begins by defining a function or class) get a
value: memories in words that lie in a crowd are usually the store's common topic, which a
question is likely to ask after (on code memory of commit messages the same correction cost
4.5 points of recall@5 for questions in words). A store with fewer than `K` + 1 code
memories gets none. Measured on the development sets (docs/benchmarks.md): cosqa (6,267
Python functions, questions in words) fused recall@5 0.712 -> 0.724, the vector channel
alone 0.696 -> 0.704; the other sets hold no code memories and are unchanged.

Stored in a plain table created on first use, keyed by the index's `doc` and stamped with
the memory's `vec_sha`, the table as a whole with the embedder it was made under (`EMBEDDER`:
a memgit from before these values that switched the embedder left them, and the same texts
under the same `vec_sha`s): a re-embedded memory's value is stale and not used until the next
`refresh`, which computes the missing ones against the code vectors (at most `SAMPLE_MAX`
of them, evenly spaced by `doc`, beyond which `K` scales down with the sample; a hook's sync
at most `AUTO_MAX` of them, the ones it embedded itself; more than `FEW_MAX` waiting otherwise
(an index made before these values), and a sync that can start the background job leaves
them to it: `waiting`), and, when it embeds everything (`reindex`, `import`, the
background job), all of them again once the number of code memories has moved by more than
a quarter since they were last all computed. Each value costs a row of dot products against
that sample: at 6,267 code memories, all of them took 2.5 s on 2 loaded cores. Memories that are not code get a NULL row, so that nothing is
pending for them. Reads the vectors through SQL; numpy only when there is something to compute.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Iterable
from typing import Any

#: Neighbours whose mean similarity is a code memory's value (CSLS's own K).
K = 10
#: How much of a memory's value above the store's mean its cosine gives up (CSLS's 1/2:
#: 2 cos - r_query - r_memory ranks as cos - r_memory / 2).
WEIGHT = 0.5
#: Code vectors a value is computed against, at most (evenly spaced by `doc` beyond).
SAMPLE_MAX = 8192
#: The values are all computed again when the number of code memories has moved by more than
#: this share since the last time they were.
RECOMPUTE_SHARE = 0.25
#: Code memories' values a sync that embeds only a few ("auto": a hook's, a recall's) computes
#: at most; the rest wait for the next (or for `reindex`, `import`, the background job).
AUTO_MAX = 256
#: Up to this many values to compute, each is one SQL scan of the code vectors by sqlite-vec
#: (~1.4 us a vector); more, and the vectors are read once into numpy.
FEW_MAX = 32
#: `meta` keys: the mean of the stored values, the code memories counted when they were all
#: computed, "1" once every embedded memory has its row (cleared with `PASSAGES_DONE`), and
#: the embedder (`meta`'s `embedder_id`) the rows were made under.
MEAN = "hub_mean"
COUNT = "hub_count"
DONE = "hubs_done"
EMBEDDER = "hub_embedder"

TABLE = (
    "CREATE TABLE IF NOT EXISTS hub_scores (doc INTEGER PRIMARY KEY, vec_sha TEXT NOT NULL, code INTEGER NOT NULL, "
    "value REAL)"
)
#: The memories whose vector was stored since their rows were last looked at, by whoever
#: stored it: a trigger in the database, so that a memgit from before these values, or one
#: killed between storing vectors and computing values, leaves them noted for the next sync
#: (which otherwise looks only at what it embedded itself).
TODO = (
    "CREATE TABLE IF NOT EXISTS hub_todo (doc INTEGER PRIMARY KEY)",
    ("CREATE TRIGGER IF NOT EXISTS memgit_hub_todo AFTER INSERT ON vectors "
     "BEGIN INSERT OR IGNORE INTO hub_todo (doc) VALUES (NEW.doc); END"),
)

# A definition on the body's first line (after an opening code fence, decorators and blank
# lines): Python, JavaScript/TypeScript, Go, Rust, Ruby, Kotlin/Swift, C-like methods.
_FENCE = re.compile(r"\A\s*```[\w+-]*[ \t]*\n")
_DECORATOR = re.compile(r"\A(?:\s*@[^\n]*\n)+")
_DEFINITION = re.compile(
    r"\A\s*(?:(?:export|default|public|private|protected|static|async|pub(?:\([^)]*\))?|unsafe|final|abstract"
    r"|override)\s+)*(?:def|class|function\*?|func(?:\s*\([^)\n]*\))?|fn|fun|interface|struct|impl|trait|enum)"
    r"\s+(?:[^\W\d]|\$)[\w$]*(?:\s*[(<:{\[]|[^\n]*[:{][ \t]*$)",
    re.MULTILINE,
)


def is_code(body: str) -> bool:
    """Whether a memory's body is code: it begins by defining a function, class or type
    (`def parse(...)`, `class Cache:`, `export async function load(`), after an optional
    code fence and decorators. A note that quotes code further down is not code."""
    head = _FENCE.sub("", body[:2000], count=1)
    head = _DECORATOR.sub("", head, count=1)
    return _DEFINITION.match(head) is not None


def is_code_memory(title: str, body: str) -> bool:
    """`is_code` of the body, or of the title and body together: remembered text's first line
    becomes the title (`memgit.memory.format.split_title`), so code remembered as it is has its
    definition there and the rest of the function in the body."""
    return is_code(body) or is_code(f"{title}\n{body}")


def exists(conn: Any) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'hub_scores'").fetchone() \
        is not None


def noted(conn: Any) -> int:
    """How many memories' vectors were stored since a sync last looked (`TODO`)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'hub_todo'").fetchone():
        return 0
    return int(conn.execute("SELECT count(*) FROM hub_todo").fetchone()[0])


def delete(conn: Any, doc: int) -> None:
    if exists(conn):
        conn.execute("DELETE FROM hub_scores WHERE doc = ?", (doc,))


def clear(conn: Any) -> None:
    """Every value goes (the embedder changed)."""
    if exists(conn):
        conn.execute("DELETE FROM hub_scores")


def of_embedder(meta: Any) -> bool:
    """Whether the rows were made under the embedder the vectors are from now (`meta(key)`
    reads the index's `meta`). A `vec_sha` stamps the text embedded, not the model: a memgit
    from before these values that switched the embedder re-embedded every memory under the
    same `vec_sha`s, and left the rows (and `DONE`) of the one before."""
    return bool(meta(EMBEDDER) == meta("embedder_id"))  # both None: no embedder yet, no rows


def done(meta: Any) -> bool:
    """Whether every embedded memory has its current row (nothing for a sync to look at)."""
    return meta(DONE) == "1" and of_embedder(meta)


def refresh(conn: Any, meta: Any, set_meta: Any, *, limit: int | None = None,
            docs: Iterable[int] | None = None) -> int:
    """Compute the values that are missing or stale (inside the caller's write transaction);
    `meta(key)` and `set_meta(key, value)` read and write the index's `meta`. With `limit`
    (a hook's or a recall's sync), at most that many code memories' values, each against the
    code vectors as they are, and never all of them again; without (`reindex`, `import`, the
    background job), all of them again when their number has moved by more than
    `RECOMPUTE_SHARE`. `docs`, when given, are the only memories that may lack a row (those
    this process just embedded): the others are not looked at. Returns how many code memories
    still wait for a value."""
    if not of_embedder(meta):  # made under another embedder: every row is made again
        _restart(conn, meta, set_meta)
        docs = None
    _classify(conn, docs)
    current = "FROM hub_scores h JOIN memories m ON m.doc = h.doc AND m.vec_sha = h.vec_sha WHERE h.code = 1"
    code = [doc for (doc,) in conn.execute(f"SELECT h.doc {current} ORDER BY h.doc")]
    if len(code) <= K:  # too few to have neighbours: none is corrected
        set_meta(MEAN, None)
        return 0
    unvalued = [doc for (doc,) in conn.execute(f"SELECT h.doc {current} AND h.value IS NULL ORDER BY h.doc")]
    counted = int(meta(COUNT) or 0)
    whole = limit is None and (not counted or abs(len(code) - counted) > RECOMPUTE_SHARE * counted)
    todo = code if whole else unvalued[:limit] if limit is not None else unvalued
    if not todo and meta(MEAN) is not None:
        return 0
    if whole or len(code) > SAMPLE_MAX or len(todo) > FEW_MAX:
        values = _values(conn, code, todo)
    else:  # a few: sqlite-vec's own scan of the code vectors, no numpy, no blobs read into Python
        values = _few(conn, todo)
    conn.executemany("UPDATE hub_scores SET value = ? WHERE doc = ?",
                     [(v, doc) for doc, v in values.items() if v is not None])
    # A vector with no direction (zero, or not finite: what a plug-in may give for a text it
    # cannot embed) has no cosine to a question and no neighbours: not a code memory here.
    conn.executemany("UPDATE hub_scores SET code = 0 WHERE doc = ?",
                     [(doc,) for doc, v in values.items() if v is None])
    if whole:
        set_meta(COUNT, str(len(code)))
    mean = conn.execute(f"SELECT avg(h.value) {current} AND h.value IS NOT NULL").fetchone()[0]
    set_meta(MEAN, None if mean is None else repr(float(mean)))
    return len(unvalued) - len(todo) if not whole else 0


def waiting(conn: Any, meta: Any, set_meta: Any) -> int:
    """How many code memories wait for a value (none while there are too few to have one),
    every embedded memory looked at (inside the caller's write transaction): a few SQL
    statements and a look at the bodies of memories never looked at, no vector read."""
    if not of_embedder(meta):
        _restart(conn, meta, set_meta)
    _classify(conn, None)
    current = "FROM hub_scores h JOIN memories m ON m.doc = h.doc AND m.vec_sha = h.vec_sha WHERE h.code = 1"
    if conn.execute(f"SELECT count(*) {current}").fetchone()[0] <= K:
        return 0
    return int(conn.execute(f"SELECT count(*) {current} AND h.value IS NULL").fetchone()[0])


def _restart(conn: Any, meta: Any, set_meta: Any) -> None:
    """Every row and value goes, and the rows to come are of the embedder now in use."""
    clear(conn)
    for key in (MEAN, COUNT, DONE):
        set_meta(key, None)
    set_meta(EMBEDDER, meta("embedder_id"))


def _classify(conn: Any, docs: Iterable[int] | None) -> None:
    """A row for each embedded memory without a current one (of `docs`, when given): whether
    it is code, its value still to compute; `docs` with those whose vector another process
    stored (`TODO`)."""
    conn.execute(TABLE)
    for sql in TODO:
        conn.execute(sql)
    stored = [doc for (doc,) in conn.execute("SELECT doc FROM hub_todo")]
    conn.execute("DELETE FROM hub_todo")
    if docs is not None:
        docs = [*docs, *stored]
    missing_sql = ("SELECT m.doc, m.vec_sha, m.title, m.body FROM memories m "
                   "JOIN vectors v ON v.doc = m.doc "
                   "LEFT JOIN hub_scores h ON h.doc = m.doc AND h.vec_sha = m.vec_sha "
                   "WHERE m.vec_sha IS NOT NULL AND h.doc IS NULL")
    if docs is None:
        missing = conn.execute(missing_sql).fetchall()
    else:
        wanted = sorted(set(docs))
        missing = [row for start in range(0, len(wanted), 900) for row in conn.execute(
            f"{missing_sql} AND m.doc IN ({','.join('?' * len(wanted[start:start + 900]))})",
            wanted[start : start + 900])]
    conn.executemany("INSERT OR REPLACE INTO hub_scores (doc, vec_sha, code, value) VALUES (?, ?, ?, NULL)",
                     [(doc, sha, int(is_code_memory(title or "", body or "")))
                      for doc, sha, title, body in missing])


def _few(conn: Any, todo: list[int]) -> dict[int, float | None]:
    """`_values` in SQL, for a few: each one's `K` best cosines among the other code memories
    (one with no direction's, NaN in SQL, counts as 0, as in `_matrix`)."""
    out: dict[int, float | None] = {}
    for doc in todo:
        row = conn.execute("SELECT embedding FROM vectors WHERE doc = ?", (doc,)).fetchone()
        if not _measurable(row[0] if row else b""):
            out[doc] = None
            continue
        rows = conn.execute(
            "SELECT 1.0 - coalesce(vec_distance_cosine(v.embedding, (SELECT embedding FROM vectors "
            "WHERE doc = ?1)), 1.0) AS s FROM hub_scores h JOIN memories m ON m.doc = h.doc "
            "AND m.vec_sha = h.vec_sha JOIN vectors v ON v.doc = h.doc WHERE h.code = 1 "
            "AND h.doc <> ?1 ORDER BY s DESC LIMIT ?2", (doc, K)).fetchall()
        out[doc] = sum(r[0] for r in rows) / len(rows) if rows else 0.0
    return out


def _measurable(blob: bytes) -> bool:
    """Whether a stored float32 vector has a direction: finite, not all zero."""
    floats = array("f", blob)
    return all(math.isfinite(x) for x in floats) and any(floats)


def _values(conn: Any, code: list[int], todo: list[int]) -> dict[int, float | None]:
    """Each of `todo`'s mean cosine to its `K` nearest among `code` (or a sample of it); None
    for a vector with no direction (`_measurable`)."""
    import numpy as np  # only a sync that has values to compute loads it, never a recall

    step = max(1, -(-len(code) // SAMPLE_MAX))
    reference = code[::step]
    k = max(1, round(K * len(reference) / len(code)))
    ref_vectors = _matrix(conn, reference)
    ref_index = {doc: i for i, doc in enumerate(reference)}
    out: dict[int, float | None] = {}
    for start in range(0, len(todo), 512):
        chunk = todo[start : start + 512]
        mine = _matrix(conn, chunk)
        sims = mine @ ref_vectors.T
        for row, doc in enumerate(chunk):
            if doc in ref_index:
                sims[row, ref_index[doc]] = -np.inf  # not its own neighbour
        top = np.partition(sims, sims.shape[1] - k, axis=1)[:, -k:]
        directed = mine.any(axis=1)
        means = top.mean(axis=1)
        out.update((doc, float(means[row]) if directed[row] else None) for row, doc in enumerate(chunk))
    return out


def _matrix(conn: Any, docs: list[int]) -> Any:
    """The unit vectors of `docs`, one row each, in that order; zeros for a vector with no
    direction (zero, or not finite)."""
    import numpy as np  # see `_values`

    blobs: dict[int, bytes] = {}
    for start in range(0, len(docs), 900):
        part = docs[start : start + 900]
        blobs.update(conn.execute(
            f"SELECT doc, embedding FROM vectors WHERE doc IN ({','.join('?' * len(part))})", part).fetchall())
    matrix = np.stack([np.frombuffer(blobs[doc], dtype=np.float32) for doc in docs]).astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        matrix[~np.isfinite(matrix).all(axis=1)] = 0.0
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.clip(norms, 1e-12, None)


def shifts(conn: Any, docs: Iterable[int]) -> dict[int, float]:
    """For those of `docs` that are code memories with a current value: how much to add to
    their cosine distance, `WEIGHT` times their value less the store's mean."""
    docs = list(docs)
    if not docs:
        return {}
    # The meta first: a store without code memories (most) pays this one statement a search.
    found = dict(conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?, 'embedder_id')",
                              (MEAN, EMBEDDER)))
    if found.get(MEAN) is None or not of_embedder(found.get) or not exists(conn):
        return {}  # none yet, or made under another embedder
    mean = float(found[MEAN])
    marks = ",".join("?" * len(docs))
    return {doc: WEIGHT * (value - mean) for doc, value in conn.execute(
        f"SELECT h.doc, h.value FROM hub_scores h JOIN memories m ON m.doc = h.doc AND m.vec_sha = h.vec_sha "
        f"WHERE h.doc IN ({marks}) AND h.value IS NOT NULL", docs)}
