"""Query-term coverage: for a query that names code, prefer the memories that hold all it names.

A query that names code and says something about it ("why does `Config.getini` return
Any for the ini types?") asks after the memory that holds every name and word of it, not
the one that repeats one of them often. The fused order cannot see that: bm25 sums a
memory's matches per term, so two mentions of `getini` weigh about as much as `getini`
and `Any` once each, and the vector and title channels read meaning, not names. So for
such queries (`KINDS`, `memgit.recall.adaptive`: "identifier" and "mixed") `lift` reads,
for each of the best `DEPTH` fused hits, the share of the query's content terms it holds
(in any column, as the keyword channel tokenizes them; each term weighed by its smoothed
idf, stop words left out), and adds `WEIGHT` times that share to the power `POWER` to its
score, all scores then divided by 1 + `WEIGHT` so that they stay in [0, 1]. The power makes
the lift a reward for holding (nearly) all the query says, not for holding some of it: a
question that names one identifier is mostly the asker's own words, and a memory that
happens to hold two of them (a fifth of the share) is no better an answer than one that
holds one; squared, a fifth lifts by a twenty-fifth, all of it by the whole weight. It changes the order only: a
hit's relevance, which the floor applies to, stays what its channels say. The hit's
channels record the share as "coverage".

Questions in plain words are left alone: their terms are mostly the asker's words, not the
memory's, and the share of them a memory holds says little (measured below).

Measured on the development sets (recall@5 through `recall()` after reindex, with the
anchors' feedback of `memgit.recall.prf` after it): codemem-pytest 0.837 -> 0.847 (its
queries of type "mixed" 0.951 -> 0.990, natural 0.763 -> 0.768); cosqa (0.712) and
devmembench (0.939) unchanged; devmembench round-unit 0.776 -> 0.777. The share taken as it
is (power 1, weight 0.2) gave codemem-pytest the same 0.847 but round-unit 0.774: in "How
does the request_id get generated ... how does it end up in every log entry?" the named
code is an eighth of the terms' weight, and three memories holding two of the asker's words
each passed the second answer (4th to 7th). Power and weight on a coarse grid (codemem-pytest
/ round-unit): 1 and 0.2, 0.847 / 0.774; 1.5 and 0.3, 0.847 / 0.777; 1.5 and 0.4, 0.847 /
0.774; 2 and 0.2, 0.840 / 0.777; 2 and 0.4, 0.843 / 0.777; 2 and 0.6, 0.847 / 0.777; 2 and
0.8, 0.845 / 0.774; 3 and 0.4, 0.843 / 0.776. Lifting only the hits the anchor channel found
gave 0.840 / 0.776. At power 1: `WEIGHT` 0.1 gave codemem-pytest 0.840, 0.3 and 0.4 0.845;
`DEPTH` 10 or 50 0.845 / 0.847 against 30. For every kind of query at
0.2: codemem-pytest 0.846 but cosqa 0.708; for questions alone, no gain at any weight
(0.762 to 0.767 natural, cosqa 0.702 to 0.708). Counting only the title, tags and entity
columns gave 0.840 / 0.843 at 0.2 / 0.3.

Reads the index only: the query terms' row counts (as the keyword channel reads them) and
the candidates' indexed text, tokenized once in a scratch table; ~3-5 ms a query on 2 loaded
cores (codemem-pytest p50 4.5 ms, p95 8.8 ms; one FTS5 lookup per term instead cost 9 ms).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memgit.index import channels, fts
from memgit.index import sqlite as sq
from memgit.index.index import Index
from memgit.index.postings import Postings
from memgit.index.ranking import Ranked

#: The kinds of query it runs for (`memgit.recall.adaptive`): those that name code.
KINDS = ("identifier", "mixed")
#: How much the share of the query's terms counts, against a fused score of at most 1.
WEIGHT = 0.6
#: The share is raised to this power: holding all the query's terms lifts by `WEIGHT`, a part
#: of them by much less (see the module docstring).
POWER = 2.0
#: The best fused hits it reads; the rest keep their order, below them.
DEPTH = 30
#: The characters of a candidate's body it reads, at most: the text is tokenized on every query,
#: and a body of ~770 KB cost ~65 ms (30 of them, 2 s a recall); a term past this is not seen.
#: The development sets' longest indexed body is 6.5k characters: their figures are these.
BODY_CHARS = 10_000
#: The connection's scratch tables: the candidates' text, tokenized as the index tokenizes it,
#: and its vocabulary (which token is in which candidate).
SCRATCH = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.coverage_text USING fts5(t, tokenize='{sq.FTS_TOKENIZER}')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.coverage_vocab USING fts5vocab(temp, coverage_text, 'instance')",
)


def applies(kind: str) -> bool:
    """Whether recall weighs query-term coverage for a query of `kind`."""
    return kind in KINDS


def lift(index: Index, query: str, ranked: Sequence[Ranked]) -> list[Ranked]:
    """`ranked` with the best `DEPTH` reordered by their score plus `WEIGHT` times the share of
    the query's content terms each holds, to the power `POWER` (see the module docstring), every
    score divided by
    1 + `WEIGHT`; unchanged when the query has no content term the store holds."""
    top = list(ranked[:DEPTH])
    if not top:
        return list(ranked)
    found: dict[str, float] = index.db.guard(lambda: _shares(index, query, [r.id for r in top]))
    if not found:
        return list(ranked)
    scale = 1.0 + WEIGHT

    def lifted(hit: Ranked) -> Ranked:
        share = found.get(hit.id, 0.0)
        channels_ = {**hit.channels, "coverage": round(share, 4)} if share > 0 else hit.channels
        return Ranked(hit.id, (hit.score + WEIGHT * share ** POWER) / scale, hit.relevance, channels_)

    head = sorted((lifted(r) for r in top), key=lambda r: (-r.score, -r.relevance, r.id))
    return head + [Ranked(r.id, r.score / scale, r.relevance, r.channels) for r in ranked[DEPTH:]]


def _shares(index: Index, query: str, ids: list[str]) -> dict[str, float]:
    """memory id -> the idf-weighted share of `query`'s content terms it holds, for `ids`."""
    terms = fts.query_terms(query)
    if not terms or not ids:
        return {}
    conn = index.db.conn
    channels.prepare(conn)  # outside the read transaction, whose end would undo them
    for sql in SCRATCH:
        conn.execute(sql)
    with index.db.snapshot() as conn:
        resident = index.resident
        if resident is None:
            return _read(conn, terms, ids)
        return _read(conn, terms, ids, resident.tokens(conn), resident.book(conn, sq.FTS_WEIGHTS))


def _read(conn: Any, terms: list[str], ids: list[str], kept: dict[int, frozenset[str]] | None = None,
          book: Postings | None = None) -> dict[str, float]:
    """The shares, read in one pass: the candidates' indexed text goes through a scratch FTS5
    table with the index's tokenizer (`SCRATCH`), and its vocabulary says which query tokens
    each holds (one FTS5 lookup per term over the whole store cost ~0.4 ms a term). With
    `kept` (a long-lived process: `Resident.tokens`), every token of a candidate read once is
    kept, and a candidate already there is not read again (~5 ms of a query at 10k); with
    `book`, the terms' row counts the keyword channel read are not read again either."""
    hits = channels.term_hits(conn, terms, book)
    of_term = channels.term_tokens(conn, terms)  # kept by term_hits: no second tokenizing
    n = channels.n_docs(conn)
    # A lone CJK character is searched as a prefix of the index's bigrams: no token to hold.
    content = [i for i, term in enumerate(terms) if term not in fts.STOPWORDS and hits[i] > 0
               and not (len(term) == 1 and fts.segment(term) != term)]
    if not content:
        return {}
    tokens = {i: set(of_term[term]) for i, term in enumerate(terms)}
    wanted = sorted({token for i in content for token in tokens.get(i, ())})
    if not wanted:
        return {}
    id_of = dict(conn.execute(f"SELECT doc, id FROM memories WHERE id IN ({','.join('?' * len(ids))})", ids))
    held_tokens: dict[int, set[str]] = {}
    if kept is None:
        _fill(conn, ids)
        marks = ",".join("?" * len(wanted))
        for doc, token in conn.execute(
                f"SELECT DISTINCT doc, term FROM temp.coverage_vocab WHERE term IN ({marks})", wanted):
            held_tokens.setdefault(int(doc), set()).add(token)
    else:
        new = [doc for doc in id_of if doc not in kept]
        answered = _from_postings(conn, book, wanted, new) if new and book is not None else {}
        new = [doc for doc in new if doc not in answered]
        if new:
            _fill(conn, [id_of[doc] for doc in new])
            read: dict[int, set[str]] = {doc: set() for doc in new}
            for doc, token in conn.execute("SELECT DISTINCT doc, term FROM temp.coverage_vocab"):
                read.setdefault(int(doc), set()).add(token)
            kept.update((doc, frozenset(held)) for doc, held in read.items())
        want = set(wanted)
        held_tokens = {doc: held for doc in id_of
                       if (held := answered[doc] if doc in answered else set(kept.get(doc, ())) & want)}
    weights = {i: fts.idf_smooth(n, hits[i]) for i in content}
    total = sum(weights.values())
    if total <= 0:
        return {}
    out: dict[str, float] = {}
    for doc, held in held_tokens.items():
        value = sum(w for i, w in weights.items() if tokens.get(i) and tokens[i] <= held)
        if doc in id_of and value > 0:
            out[id_of[doc]] = min(1.0, value / total)
    return out


def _from_postings(conn: Any, book: Postings, wanted: list[str], docs: list[int]) -> dict[int, set[str]]:
    """doc -> the `wanted` tokens it holds, from the keyword channel's postings (`book`), for
    those of `docs` whose whole text the scratch table would read (a body of at most
    `BODY_CHARS`: the postings cover every column, and the text is the columns joined by
    spaces, which the tokenizer splits at anyway); empty when the postings cannot say."""
    marks = ",".join("?" * len(docs))
    short = [int(doc) for doc, size in conn.execute(
        f"SELECT rowid, length(body) FROM memories_fts WHERE rowid IN ({marks})", docs) if (size or 0) <= BODY_CHARS]
    found = book.holding(conn, wanted, short) if short else None
    return found or {}


def _fill(conn: Any, ids: list[str]) -> None:
    """The scratch table (`SCRATCH`) holds the indexed text of the memories `ids`, by doc."""
    conn.execute("DELETE FROM temp.coverage_text")
    marks = ",".join("?" * len(ids))
    conn.execute(
        "INSERT INTO temp.coverage_text(rowid, t) SELECT m.doc, "
        "coalesce(f.title, '') || ' ' || substr(coalesce(f.body, ''), 1, ?) || ' ' || "
        "coalesce(f.tags, '') || ' ' || "
        f"coalesce(f.entity, '') FROM memories m JOIN memories_fts f ON f.rowid = m.doc WHERE m.id IN ({marks})",
        (BODY_CHARS, *ids))
