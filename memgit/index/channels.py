"""The index's three channel queries (keyword, anchor, vector KNN) and precise matches.

Each function reads one SQLite connection of the index and returns `(memory_id, strength)`
pairs best first, with `strength` absolute in [0, 1] (the channel contract in
docs/architecture.md): FTS5 bm25 scaled by `fts.keyword_scale`, the idf-weighted share of
the query's anchors a memory carries, and cosine similarity. `where`/`args` is the SQL
filter (status, task, kinds) on the alias `m` of the `memories` table (`filter_sql`).
Callers run them inside one read transaction so that all see the same snapshot.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Sequence

from memgit.index import fts, hubs, passages, titles
from memgit.index import sqlite as sq
from memgit.index.postings import Postings
from memgit.index.resident import Resident
from memgit.memory import trust
from memgit.memory.anchors import query_anchors

Candidates = list[tuple[str, float]]

#: Anchors of a query that are looked up; a pasted stack trace has hundreds.
MAX_QUERY_ANCHORS = 32

#: Up to this many vectors (judged by the largest `doc`, an upper bound of the count that
#: costs one B-tree lookup), the vector channel computes every cosine: ~1.35 us a vector.
#: Above, it preselects by hamming distance over the sign bits (~0.12 us a vector) and
#: rescores `vector_candidates()` of them exactly (~2.5 us each). Measured on 2 shared
#: cores, exact vs two-stage for 160 results: 1k 1.3 vs 1.1 ms, 2k 2.5 vs 1.6 ms, 5k 7.0
#: vs 2.4 ms, 10k 14 vs 3.2 ms, 100k 150 vs 21 ms. Below 2k the exact scan costs under
#: ~2.5 ms, so nothing worth an approximation is saved.
VECTOR_EXACT_MAX = 2000
#: The hamming stage keeps at least 10x the limit, at least 200, and 1/50 of the store (at
#: most 4096): a true neighbour's hamming rank grows with the store. On cosqa (6,267 real
#: MiniLM vectors, 300 queries), rescoring 0.8 / 1.6 / 3.2 / 8 % of the store gave a mean
#: overlap with the exact top 10 of 0.954 / 0.982 / 0.993 / 0.999; centring the vectors
#: before taking their signs changed nothing.
VECTOR_CANDIDATES_PER_LIMIT = 10
VECTOR_CANDIDATES_MIN = 200
VECTOR_CANDIDATES_SHARE = 50
VECTOR_CANDIDATES_MAX = 4096


def _not_superseded() -> tuple[str, ...]:
    """One condition per source rank: a memory is hidden by an active memory that lists it in
    `supersedes` only if that memory's source ranks at least as high (`memgit.memory.trust`). Each
    subquery is uncorrelated (SQLite runs it once) and reads, through the partial index
    `memories_superseding`, only the memories that supersede something."""
    def quoted(sources: list[str]) -> str:
        return ", ".join(f"'{source}'" for source in sources)

    out = []
    for level in sorted(set(trust.RANK.values()), reverse=True):
        above = [source for source, rank in trust.RANK.items() if rank > level]
        at = [source for source, rank in trust.RANK.items() if rank == level]
        hidden = ("m.id NOT IN (SELECT j.value FROM memories s, json_each(s.supersedes) j "
                  f"WHERE s.supersedes <> '[]' AND s.status = 'active' AND j.value <> s.id "
                  f"AND s.source IN ({quoted(at)}))")
        out.append(f"(m.source IN ({quoted(above)}) OR {hidden})" if above else hidden)
    return tuple(out)


#: Not recalled by default (besides archived): a memory past its `expires` (compared by
#: SQLite's julianday, so an offset or `Z` counts and a bare date means its midnight UTC; a
#: value it cannot read never expires), and one whose id an active memory at least as
#: trusted `supersedes` (`_not_superseded`).
CURRENT = (
    "m.status = 'active'",
    "coalesce(julianday(m.expires) > julianday('now'), 1)",
    *_not_superseded(),
)


def filter_sql(include_archived: bool, task_id: str | None,
               kinds: Sequence[str] | None) -> tuple[str, list[Any]]:
    """The WHERE clause (on `memories m`) and its arguments for a search's filters:
    without `include_archived`, only current memories (`CURRENT`)."""
    where: list[str] = []
    args: list[Any] = []
    if not include_archived:
        where.extend(CURRENT)
    if task_id is not None:
        where.append("(m.task_id = ? OR m.task_id IS NULL)")
        args.append(task_id)
    if kinds:
        where.append(f"m.kind IN ({','.join('?' * len(kinds))})")
        args.extend(kinds)
    return (" AND ".join(where) or "1"), args


def prepare(conn: Any) -> None:
    """Create the connection's scratch FTS5 table that tokenizes query terms (once)."""
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.qtok USING fts5(t, tokenize='{sq.FTS_TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.qtok_i USING fts5vocab(temp, qtok, 'instance')")


def n_docs(conn: Any) -> int:
    return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def exact(conn: Any, query: str, where: str, args: list[Any]) -> tuple[str, ...]:
    """Memories whose id is the query, or whose title is the query ignoring case."""
    query = query.strip()
    if not query or len(query) > 1000:
        return ()
    rows = conn.execute(
        f"SELECT m.id FROM memories m WHERE (m.id = ? OR m.title_key = ?) AND {where} "
        "ORDER BY m.id = ? DESC, m.id", (query, query.casefold(), *args, query)).fetchall()
    return tuple(r[0] for r in rows)


def keyword(conn: Any, query: str, limit: int, where: str, args: list[Any],
            resident: Resident | None = None) -> Candidates:
    """FTS5 bm25 over the escaped query terms; see `fts.keyword_scale` for the strength.
    With `resident` (`memgit.index.resident`), the unfiltered bm25 query is answered from the
    postings the process keeps (`memgit.index.postings`): the same rows and scores."""
    terms = fts.query_terms(query)
    if not terms:
        return []
    book = None if resident is None else resident.book(conn, sq.FTS_WEIGHTS)
    hits = term_hits(conn, terms, book)
    n_rows = n_docs(conn)
    kept = fts.match_terms(n_rows, terms, hits)
    ceiling, coverage = fts.keyword_scale(n_rows, terms, hits, kept)
    if not kept or ceiling <= 0 or coverage <= 0:
        return []
    expression = " OR ".join(f'"{terms[i]}"*' if _cjk_char(terms[i]) else f'"{terms[i]}"' for i in kept)
    weights = ", ".join(str(w) for w in sq.FTS_WEIGHTS)
    # FTS5 alone first: joining every matching row to `memories` doubled the time at 100k.
    fetch = limit * 4 + 20
    phrases = [() if _cjk_char(terms[i]) else _TOKENS.get(terms[i], ()) for i in kept]
    rows = None if book is None else book.ranked(conn, phrases, fetch)
    if rows is None:
        rows = conn.execute(
            f"SELECT rowid, bm25(memories_fts, {weights}) AS score FROM memories_fts "
            "WHERE memories_fts MATCH ? ORDER BY score LIMIT ?", (expression, fetch)).fetchall()
    if where != "1" and rows:
        marks = ",".join("?" * len(rows))
        ids = dict(conn.execute(
            f"SELECT m.doc, m.id FROM memories m WHERE m.doc IN ({marks}) AND {where}",
            (*(r[0] for r in rows), *args)).fetchall())
        if len(ids) < limit and len(rows) == fetch:  # a narrow filter: ask again with it
            rows = conn.execute(
                f"SELECT m.doc, bm25(memories_fts, {weights}) AS score FROM memories_fts "
                f"JOIN memories m ON m.doc = memories_fts.rowid "
                f"WHERE memories_fts MATCH ? AND {where} ORDER BY score LIMIT ?",
                (expression, *args, limit)).fetchall()
            ids = doc_ids(conn, (r[0] for r in rows))
    else:
        ids = doc_ids(conn, (r[0] for r in rows))
    found = [(ids[doc], min(1.0, max(0.0, -score / ceiling)) * coverage) for doc, score in rows if doc in ids]
    return found[:limit]


def term_hits(conn: Any, terms: list[str], book: Postings | None = None) -> list[int]:
    """How many rows hold each term, as FTS5 tokenizes it (porter stems: ask FTS5 itself).

    The terms go through a scratch FTS5 table with the same tokenizer (`prepare`), and
    each resulting token's row count comes from the fts5vocab table: a B-tree lookup each.
    A term's tokens depend only on the tokenizer, a constant, so the process keeps them
    (`_TOKENS`): a term seen before costs its lookups alone; with `book`, the postings the
    process keeps (`memgit.index.postings`), not even those for a token kept or counted there.
    """
    tokens = term_tokens(conn, terms)
    hits: list[int] = []
    for term in terms:
        if _cjk_char(term):  # one CJK character: a prefix query over the bigrams
            hits.append(conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                                     (f'"{term}"*',)).fetchone()[0])
            continue
        counts = []
        for token in tokens[term]:
            known = None if book is None else book.count(token)
            if known is not None:
                counts.append(known)
                continue
            found = conn.execute("SELECT doc FROM memories_fts_vocab WHERE term = ?", (token,)).fetchone()
            counts.append(found[0] if found else 0)
            if book is not None:
                book.counted(token, counts[-1])
        hits.append(min(counts) if counts else 0)  # a phrase is in no more rows than its rarest token
    return hits


def term_tokens(conn: Any, terms: list[str]) -> dict[str, tuple[str, ...]]:
    """Each term's FTS5 tokens (porter stems, a phrase's several), from the scratch table
    `prepare` makes; kept by the process (`_TOKENS`): they depend only on the tokenizer."""
    missing = list(dict.fromkeys(term for term in terms if term not in _TOKENS))
    if len(_TOKENS) + len(missing) > MAX_KEPT_TERMS:
        _TOKENS.clear()  # and start again, with every term of this query
        missing = list(dict.fromkeys(terms))
    if missing:
        conn.execute("DELETE FROM temp.qtok")
        conn.executemany("INSERT INTO temp.qtok(rowid, t) VALUES (?, ?)", enumerate(missing, 1))
        tokens: dict[int, list[str]] = {}
        for row, token in conn.execute("SELECT doc, term FROM temp.qtok_i"):
            tokens.setdefault(row, []).append(token)
        _TOKENS.update((term, tuple(tokens.get(index, ()))) for index, term in enumerate(missing, 1))
    return {term: _TOKENS[term] for term in terms}


#: Query terms whose FTS5 tokens the process keeps (`term_tokens`), at most; then it starts again.
MAX_KEPT_TERMS = 20_000
_TOKENS: dict[str, tuple[str, ...]] = {}


def anchor(conn: Any, query: str, limit: int, where: str, args: list[Any]) -> Candidates | None:
    """Exact anchor keys: Σ idf of the query's anchors a memory has / Σ idf of all of them.

    None when the query names no path, symbol or identifier: the channel has no say then.
    The idf is ln(1 + (N - df + 0.5) / (df + 0.5)), positive however common the anchor.
    """
    keys = query_anchors(query[:20_000])[:MAX_QUERY_ANCHORS]
    if not keys:
        return None
    n = n_docs(conn)
    weights: dict[str, float] = {}
    for key in keys:
        df = conn.execute("SELECT count(*) FROM anchors WHERE anchor_key = ?", (key,)).fetchone()[0]
        weights[key] = math.log(1 + (n - df + 0.5) / (df + 0.5))
    total = sum(weights.values())
    marks = ",".join("?" * len(keys))
    scores: dict[str, float] = {}
    for mid, key in conn.execute(
            f"SELECT m.id, a.anchor_key FROM anchors a JOIN memories m ON m.doc = a.doc "
            f"WHERE a.anchor_key IN ({marks}) AND {where}", (*keys, *args)):
        scores[mid] = scores.get(mid, 0.0) + weights[key]
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [(mid, min(1.0, s / total)) for mid, s in ranked]


def vector(conn: Any, query_vector: bytes, limit: int, where: str, args: list[Any],
           task_id: str | None, passage_of: dict[str, int] | None = None,
           bits: Resident | None = None) -> Candidates:
    """Cosine KNN over the `vectors` table; strength = 1 - cosine distance, clipped to [0, 1].

    Up to `VECTOR_EXACT_MAX` vectors, the cosine of every one; above, two stages: the
    `vector_candidates` nearest by hamming distance of the sign bits, then their exact
    cosine (see `VECTOR_EXACT_MAX` for the costs). Both stages are sqlite-vec's C functions
    inside one SQL statement: no numpy on the recall path. The strengths are exact cosines
    either way; only which memories reach the top can differ.

    The filter (status, task, kinds) costs a join per vector, so the search first runs
    without it, takes 3 * limit + 10 and filters after; when that leaves fewer than `limit`
    of a full take (a narrow filter: `--kind preference` among thousands of facts), it
    runs again with the filter inside both stages. A task's own memories are few and may
    miss the global top k, so they are also scored one by one.

    A long memory's passage nearer the query than its own vector lifts its strength by
    `passages.CREDIT` of the difference (`memgit.index.passages`); `passage_of` gets, for
    those a passage lifted, its number.

    With `bits` (what the process keeps of the stored vectors, `memgit.index.resident`),
    both stages run on those instead of in SQL: the same shortlist, the same cosines.
    """
    k = min(4096, limit * 3 + 10)
    size = conn.execute("SELECT max(doc) FROM vectors").fetchone()[0] or 0
    found = _nearest(conn, query_vector, k, size, limit, bits=bits)
    ids = _filtered(conn, found, where, args)
    if where != "1" and len(ids) < limit and len(found) == k:
        found = _nearest(conn, query_vector, k, size, limit, where, args)
        ids = _filtered(conn, found, where, args)
    if task_id is not None:
        for doc, distance in conn.execute(
                f"SELECT v.doc, {_COSINE} FROM vectors v "
                "WHERE v.doc IN (SELECT doc FROM memories WHERE task_id = ?2)",
                (query_vector, task_id)):
            found[doc] = distance
        ids = _filtered(conn, found, where, args)
    checked = set(found)  # `ids` holds those of them the filter keeps
    won = _with_passages(conn, query_vector, k, found, bits)
    if won:
        ids.update(_filtered(conn, {d: found[d] for d in won if d not in checked}, where, args))
        if passage_of is not None:
            passage_of.update((ids[d], n) for d, n in won.items() if d in ids)
    shift = hubs.shifts(conn, found)  # generic code near every question counts less
    if shift:
        found = {d: distance + shift.get(d, 0.0) for d, distance in found.items()}
    ranked = sorted(((ids[d], 1.0 - dist) for d, dist in found.items() if d in ids),
                    key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [(mid, min(1.0, max(0.0, s))) for mid, s in ranked]


def title(conn: Any, query_vector: bytes, limit: int, where: str, args: list[Any],
          among: Sequence[str] = ()) -> Candidates:
    """The title lane (`memgit.index.titles`): cosine KNN over the title vectors, strength =
    1 - cosine distance clipped to [0, 1]. Up to `VECTOR_EXACT_MAX` of them (judged by the
    largest `doc`, as the vector channel does), an exact scan, filtered after, or inside when
    that leaves too few; above, it judges only `among`, the candidates the other channels
    found (a scan of 10k vectors costs ~14 ms, theirs ~0.2 ms)."""
    if not titles.exists(conn):
        return []
    k = min(4096, limit * 3 + 10)
    size = conn.execute("SELECT max(doc) FROM title_vectors").fetchone()[0] or 0
    if size > VECTOR_EXACT_MAX:
        where = f"({where}) AND m.id IN ({','.join('?' * len(among))})" if among else "0"
        args = [*args, *among]

    def nearest(inner: str = "1", inner_args: Sequence[Any] = ()) -> dict[int, float]:
        join = "" if inner == "1" else "JOIN memories m ON m.doc = v.doc"
        return dict(conn.execute(
            f"SELECT v.doc, {_COSINE} AS d FROM title_vectors v {join} WHERE length(v.embedding) > 0"
            f"{'' if inner == '1' else ' AND ' + _numbered(inner, 3)} ORDER BY d, v.doc LIMIT ?2",
            (query_vector, k, *inner_args)))

    found = nearest() if size <= VECTOR_EXACT_MAX else nearest(where, args)
    ids = _filtered(conn, found, where, args)
    if size <= VECTOR_EXACT_MAX and where != "1" and len(ids) < limit and len(found) == k:
        found = nearest(where, args)
        ids = _filtered(conn, found, where, args)
    ranked = sorted(((ids[d], 1.0 - dist) for d, dist in found.items() if d in ids),
                    key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [(mid, min(1.0, max(0.0, s))) for mid, s in ranked]


def _with_passages(conn: Any, query_vector: bytes, k: int, found: dict[int, float],
                   bits: Resident | None = None) -> dict[int, int]:
    """Lift in `found` (doc -> cosine distance) each memory whose best passage is nearer the
    query than its own vector, by `passages.CREDIT` of the difference; returns doc -> passage
    number for those."""
    won: dict[int, int] = {}
    best = passages.best(conn, query_vector, k, bits)
    # Those not among the nearest by their own vector: their own distance, in one statement.
    others = _distances(conn, query_vector, [doc for doc in best if doc not in found])
    for doc, (distance, n) in best.items():
        own = found.get(doc)
        if own is None:
            own = others.get(doc, 1.0)
        credited = own - passages.CREDIT * (own - distance)
        if credited < own:
            found[doc] = credited
            won[doc] = n
    return won


def _distances(conn: Any, query_vector: bytes, docs: list[int]) -> dict[int, float]:
    """doc -> cosine distance to the query of those `docs` that have a vector."""
    out: dict[int, float] = {}
    for start in range(0, len(docs), 500):
        chunk = docs[start : start + 500]
        marks = ",".join("?" * len(chunk))
        out.update((int(doc), float(d)) for doc, d in conn.execute(
            f"SELECT v.doc, {_COSINE} FROM vectors v WHERE v.doc IN ({marks})",  # the marks are ?2...
            (query_vector, *chunk)))
    return out


#: A zero vector has no cosine (NULL): call it orthogonal to everything.
_COSINE = "coalesce(vec_distance_cosine(v.embedding, ?1), 1.0)"


def _nearest(conn: Any, query_vector: bytes, k: int, size: int, limit: int,
             where: str = "1", args: Sequence[Any] = (), bits: Resident | None = None) -> dict[int, float]:
    """The `k` docs nearest to the query (doc -> cosine distance), among those `where`
    keeps (on `memories m`); unfiltered, from `bits` (`memgit.index.resident`) when given."""
    def keep(first: int) -> str:  # ?1 is the query vector, ?2 k, ?3 the hamming stage's size
        return "" if where == "1" else " AND " + _numbered(where, first)

    join = "" if where == "1" else "JOIN memories m ON m.doc = {}.doc"
    if size <= VECTOR_EXACT_MAX or len(query_vector) % 32:  # no bits unless the dimension is a multiple of 8
        rows = conn.execute(
            f"SELECT v.doc, {_COSINE} AS d FROM vectors v {join.format('v')} WHERE 1{keep(3)} "
            "ORDER BY d, v.doc LIMIT ?2", (query_vector, k, *args))
    elif where == "1" and bits is not None and (
            near := _resident(conn, bits, query_vector, vector_candidates(size, limit, k), k)) is not None:
        return near
    else:
        rows = conn.execute(
            f"SELECT v.doc, {_COSINE} AS d FROM vectors v WHERE v.doc IN ("
            f"SELECT b.doc FROM vector_bits b {join.format('b')} WHERE b.bits IS NOT NULL{keep(4)} "
            "ORDER BY vec_distance_hamming(vec_bit(b.bits), vec_quantize_binary(?1)) LIMIT ?3) "
            "ORDER BY d, v.doc LIMIT ?2", (query_vector, k, vector_candidates(size, limit, k), *args))
    return dict(rows)


def _resident(conn: Any, bits: Resident, query_vector: bytes, n: int, k: int) -> dict[int, float] | None:
    """`_nearest`'s two stages on what the process keeps (`memgit.index.resident`): both
    there, or the shortlist there and its cosines in SQL; None when neither is kept."""
    near = bits.nearest(conn, "vector_bits", query_vector, n, k)
    if near is not None:
        return dict(near)
    shortlist = bits.shortlist(conn, "vector_bits", query_vector, n)
    if shortlist is None:
        return None
    return dict(conn.execute(
        f"SELECT v.doc, {_COSINE} AS d FROM vectors v WHERE v.doc IN (SELECT value FROM json_each(?3)) "
        "ORDER BY d, v.doc LIMIT ?2", (query_vector, k, json.dumps(shortlist))))


def _numbered(where: str, first: int) -> str:
    """`where` with its anonymous `?` parameters numbered from `first`."""
    parts = where.split("?")
    return "".join(part + (f"?{first + n}" if n < len(parts) - 1 else "") for n, part in enumerate(parts))


def _filtered(conn: Any, found: dict[int, float], where: str, args: list[Any]) -> dict[int, str]:
    """doc -> id of the docs in `found` that `where` keeps."""
    if not found:
        return {}
    marks = ",".join("?" * len(found))
    return dict(conn.execute(
        f"SELECT m.doc, m.id FROM memories m WHERE m.doc IN ({marks}) AND {where}", (*found, *args)))


def vectorless(conn: Any, ids: Iterable[str]) -> frozenset[str]:
    """Those of `ids` that have no vector: not yet (pending embedding), or none (the embedder
    gave none usable, `memgit.index.unit`). The vector channel cannot judge them, so the fusion
    leaves it out for them (`ranking.Channels`): they are judged on keywords and anchors."""
    ids = list(dict.fromkeys(ids))
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(r[0] for r in conn.execute(
            f"SELECT m.id FROM memories m WHERE m.id IN ({marks}) AND (m.vec_sha IS NULL "
            "OR NOT EXISTS (SELECT 1 FROM vectors v WHERE v.doc = m.doc))", chunk))
    return frozenset(found)


def vector_candidates(size: int, limit: int, k: int) -> int:
    """How many memories the hamming stage keeps for the exact cosine, for a store of `size`."""
    wanted = max(k, VECTOR_CANDIDATES_PER_LIMIT * limit, VECTOR_CANDIDATES_MIN,
                 size // VECTOR_CANDIDATES_SHARE)
    return min(VECTOR_CANDIDATES_MAX, wanted)


def doc_ids(conn: Any, docs: Iterable[int]) -> dict[int, str]:
    docs = list(docs)
    if not docs:
        return {}
    marks = ",".join("?" * len(docs))
    return dict(conn.execute(f"SELECT doc, id FROM memories WHERE doc IN ({marks})", docs).fetchall())


def _cjk_char(term: str) -> bool:
    return len(term) == 1 and fts.segment(term) != term
