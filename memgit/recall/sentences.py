"""Questions of several sentences: each sentence also searched by meaning.

A question an agent asks often says two things ("The nightly job times out on the staging
box. Which setting did we raise last time?"), and one embedding of the whole is pulled
between them: the memory that answers one of them sits below memories that half fit both.
So for a query of at least two substantive sentences (`split`: `MIN_WORDS` plain words or
more each, at most `MAX_SENTENCES` of them, the first ones), recall embeds the sentences
right after the whole query on the thread that embeds it while the change check runs
(`memgit.index.vectors.Vectors.prefetch`; in one call where the embedder offers it, which
the bundled model does not: a padded batch costs it more than a call per text), searches the
vector channel with each, and gives every memory the best strength any of them (or the whole
query) gave it (`widen`). A one-sentence query, and a query whose sentences are too short to carry
meaning of their own ("Why? It fails."), is searched as before.

Measured on the development sets (recall@5 through `recall()` after reindex, in process on
the kept stores): see docs/benchmarks.md, "Questions of several sentences".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from memgit.index import channels, titles
from memgit.index.index import Found, Index

#: Plain words (two letters or more) a sentence needs to be searched on its own.
MIN_WORDS = 3
#: At most this many sentences of a query are searched on their own (the first ones).
MAX_SENTENCES = 4
#: A sentence (or a clause of its own) ends at ".", "!", "?" or ";" after two word characters
#: (or a closing quote, backtick or bracket), not after "e.g" nor a lone "a ?", and white
#: space; or at a line break.
_SPLIT = re.compile(r"(?<=[\w`'\")\]][\w`'\")\]][.!?;])\s+|\n+")
_WORD = re.compile(r"[^\W\d_]{2,}")


def split(query: str) -> list[str]:
    """The substantive sentences of `query` to search on their own, or [] when it has fewer
    than two (see the module docstring)."""
    parts = [p.strip() for p in _SPLIT.split(query)]
    parts = list(dict.fromkeys(p for p in parts if len(_WORD.findall(p)) >= MIN_WORDS))
    return parts[:MAX_SENTENCES] if len(parts) >= 2 else []


def widen(index: Index, parts: Sequence[str], found: Found, *, limit: int, include_archived: bool,
          task_id: str | None, kinds: Sequence[str] | None) -> Found:
    """`found` with its vector channel also searched with each of `parts` (the query's
    sentences, `split`), every memory keeping its best strength; unchanged when the vector
    channel did not run or the sentences cannot be embedded."""
    if not parts or found.channels.vector is None:
        return found
    vectors = index.db.guard(lambda: index.vectors.query_vectors(list(parts)))
    if vectors is None:
        return found
    where, args = channels.filter_sql(include_archived, task_id, kinds)
    best = dict(found.channels.vector)

    def search() -> frozenset[str]:
        with index.db.snapshot() as conn:
            for vector in vectors:
                for mid, strength in channels.vector(conn, vector, limit, where, args, task_id, None,
                                                     index.resident):
                    best[mid] = max(best.get(mid, 0.0), strength)
            new = [mid for mid in best if mid not in dict(found.channels.vector or ())]
            return titles.without(conn, new) if found.channels.title is not None else frozenset()

    titleless = index.db.guard(search)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    chans = replace(found.channels, vector=ranked, titleless=found.channels.titleless | titleless)
    return replace(found, channels=chans)
