"""Query-term coverage: for a query that names code, prefer the memories that hold all it names.

A query that names code and says something about it ("why does `Config.getini` return
Any for the ini types?") asks after the memory that holds every name and word of it, not
the one that repeats one of them often. The fused order cannot see that: bm25 sums a
memory's matches per term, so two mentions of `getini` weigh about as much as `getini`
and `Any` once each, and the vector and title channels read meaning, not names. So for
such queries (`KINDS`, `memgit.recall.adaptive`: "identifier" and "mixed") `lift` reads,
for each of the best `DEPTH` fused hits, the share of the query's content terms it holds
(in any column, as the keyword channel tokenizes them; each term weighed by its smoothed
idf, stop words left out), and adds `WEIGHT` times that share to its score, all scores
then divided by 1 + `WEIGHT` so that they stay in [0, 1]. It changes the order only: a
hit's relevance, which the floor applies to, stays what its channels say. The hit's
channels record the share as "coverage".

Questions in plain words are left alone: their terms are mostly the asker's words, not the
memory's, and the share of them a memory holds says little (measured below).

Measured on the development sets (recall@5 through `recall()` after reindex, with the
anchors' feedback of `memgit.recall.prf` after it): codemem-pytest 0.837 -> 0.847 (its
queries of type "mixed" 0.951 -> 0.990, natural 0.763 -> 0.768); cosqa (0.712) and
devmembench (0.939) unchanged; devmembench round-unit 0.776 -> 0.774 (a gold memory of
one question moved from 4th to 7th, one of another up into the top 5). Around `WEIGHT` 0.2 (a coarse grid): 0.1 gave codemem-pytest 0.840,
0.3 and 0.4 0.845; `DEPTH` 10 or 50 0.845 / 0.847 against 30. For every kind of query at
0.2: codemem-pytest 0.846 but cosqa 0.708; for questions alone, no gain at any weight
(0.762 to 0.767 natural, cosqa 0.702 to 0.708). Counting only the title, tags and entity
columns gave 0.840 / 0.843 at 0.2 / 0.3.

Reads the index only (one FTS5 lookup per content term, among the `DEPTH` candidates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memgit.index import channels, fts
from memgit.index.index import Index
from memgit.index.ranking import Ranked

#: The kinds of query it runs for (`memgit.recall.adaptive`): those that name code.
KINDS = ("identifier", "mixed")
#: How much the share of the query's terms counts, against a fused score of at most 1.
WEIGHT = 0.2
#: The best fused hits it reads; the rest keep their order, below them.
DEPTH = 30


def applies(kind: str) -> bool:
    """Whether recall weighs query-term coverage for a query of `kind`."""
    return kind in KINDS


def lift(index: Index, query: str, ranked: Sequence[Ranked]) -> list[Ranked]:
    """`ranked` with the best `DEPTH` reordered by their score plus `WEIGHT` times the share of
    the query's content terms each holds (see the module docstring), every score divided by
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
        return replace(hit, score=(hit.score + WEIGHT * share) / scale, channels=channels_)

    head = sorted((lifted(r) for r in top), key=lambda r: (-r.score, -r.relevance, r.id))
    return head + [replace(r, score=r.score / scale) for r in ranked[DEPTH:]]


def _shares(index: Index, query: str, ids: list[str]) -> dict[str, float]:
    """memory id -> the idf-weighted share of `query`'s content terms it holds, for `ids`."""
    terms = fts.query_terms(query)
    if not terms or not ids:
        return {}
    with index.db.snapshot() as conn:
        return _read(conn, terms, ids)


def _read(conn: Any, terms: list[str], ids: list[str]) -> dict[str, float]:
    channels.prepare(conn)
    hits = channels.term_hits(conn, terms)
    n = channels.n_docs(conn)
    content = [i for i, term in enumerate(terms) if term not in fts.STOPWORDS and hits[i] > 0]
    if not content:
        return {}
    marks = ",".join("?" * len(ids))
    doc_of = dict(conn.execute(f"SELECT doc, id FROM memories WHERE id IN ({marks})", ids).fetchall())
    if not doc_of:
        return {}
    docs = ",".join("?" * len(doc_of))
    held: dict[str, float] = {}
    total = 0.0
    for i in content:
        weight = fts.idf_smooth(n, hits[i])
        total += weight
        term = terms[i]
        phrase = f'"{term}"*' if len(term) == 1 and fts.segment(term) != term else f'"{term}"'
        for (doc,) in conn.execute(
                f"SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid IN ({docs})",
                (phrase, *doc_of)):
            if doc in doc_of:
                held[doc_of[doc]] = held.get(doc_of[doc], 0.0) + weight
    if total <= 0:
        return {}
    return {mid: min(1.0, value / total) for mid, value in held.items()}
