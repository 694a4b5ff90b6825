"""Recall: from a query to the few memories worth showing an agent.

`recall()` asks the index for candidates from each channel, fuses them with
`ranking.fuse`, puts a memory the query names exactly (by id or title) first, keeps to the
task, drops what is under the relevance floor and fits the rest into a token budget.
Archived, expired and superseded memories are left out unless `include_archived`.
`record_recall()` notes which memories each recall returned (local state, never committed);
`memgit.recall.inject` turns hits into what an agent is given.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable, Collection, Mapping, Sequence

from memgit.config import Config
from memgit.errors import MemgitError
from memgit.git import localstate
from memgit.index.index import Index
from memgit.index.ranking import Channels, Ranked, Weights, apply_floor, fuse
from memgit.memory.format import Memory
from memgit.recall import adaptive, coverage, deep as deep_mod, prf, sentences, timing
from memgit.recall.hit import Hit, Hits, How
from memgit.recall.inject import fit

Warn = Callable[[str], None]

#: Candidates asked of each channel: enough that task and kind filters and the fusion
#: have room, few enough that a channel query stays in the low milliseconds.
POOL = 50
#: Characters of a query that are searched; the embedder reads 128 tokens, FTS5 the first
#: 64 distinct words, so a pasted log beyond this only costs time.
MAX_QUERY_CHARS = 20_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_query(query: str) -> str:
    """The query as searched: control characters blanked, at most MAX_QUERY_CHARS, cut at a
    space when longer (half a word would be a term and an anchor of its own, which no memory
    holds: a pasted log of one repeated line lost every hit to it).

    Raises MemgitError for an empty or whitespace-only query.
    """
    if not isinstance(query, str):
        raise MemgitError(f"the query must be text, not {type(query).__name__}")
    if not query.strip():
        raise MemgitError('empty query: say what to recall, e.g. memgit recall "why does parse_config return a tuple?"')
    text = _CONTROL.sub(" ", query[:MAX_QUERY_CHARS])
    if len(query) > MAX_QUERY_CHARS and not (_CONTROL.sub(" ", query[MAX_QUERY_CHARS]).isspace()
                                             or text[-1].isspace()):
        whole = text.rsplit(None, 1)  # a word cut in two: its first half goes (none: all of it stays)
        text = whole[0] if len(whole) > 1 else text
    text = "".join(ch for ch in text if not 0xD800 <= ord(ch) <= 0xDFFF)  # lone surrogates
    if not text.strip():
        raise MemgitError("empty query: it holds only control characters; say what to recall")
    return text.strip()


def recall(index: Index, query: str, *, k: int = 5, task_id: str | None = None,
           kinds: Sequence[str] | None = None, min_score: float | None = None,
           budget_tokens: int | None = None, include_archived: bool = False,
           config: Config, path_prefix: str = "", sync: bool = True, deep: bool = False,
           links: Collection[str] = deep_mod.LINKS,
           cochange: Callable[[], Mapping[str, Mapping[str, int]]] | None = None,
           learned: Mapping[str, Sequence[float]] | None = None, by_sentence: bool = True) -> Hits:
    """The memories that answer `query`, best first; see the module docstring.

    - `task_id`: that task's memories and memories with no task; only if none of them
      scores above the floor, all memories, other tasks' scores times
      `config.recall_task_widen`.
    - `min_score`: the relevance floor (default `config.recall_min_score`; 0 turns it off).
    - `include_archived`: also archived memories, expired ones and superseded ones (see
      `channels.CURRENT`).
    - `budget_tokens`: keep hits, best first, while their rendered text (`render_hit`)
      fits in this many tokens; None means no budget.
    - `path_prefix` is put before each memory's path in the folder (e.g. ".memory/").
    - `sync`: bring the index in step with the files first (cheap; see `Index.sync`).
    - `deep`: also the memories linked to the best hits by any of `links` (`memgit.recall.deep`;
      `cochange` gives the files that change together). Every recall follows the session
      link (`deep.ALWAYS`).
    - `by_sentence`: a question of two or more sentences is also searched by meaning sentence
      by sentence (`memgit.recall.sentences`; one more query embedding each). The prompt hook,
      which runs on every prompt an agent is given, turns it off.

    The channel weights are the configured ones scaled for the query's kind
    (`memgit.recall.adaptive`), and by `learned` (per kind, from this clone's feedback:
    `memgit.recall.learned`); a time question reorders by date (`memgit.recall.timing`).
    The hits' `how` says both, and whether vectors were used.
    """
    text = clean_query(query)
    if k <= 0:
        return Hits()
    floor = config.recall_min_score if min_score is None else float(min_score)
    shape = adaptive.shape(text)
    base = Weights(keyword=config.recall_weight_keyword, vector=config.recall_weight_vector,
                   anchor=config.recall_weight_anchor, title=config.recall_weight_title,
                   method=config.recall_method)
    when = timing.question(text)
    parts = sentences.split(text) if by_sentence else []
    index.prefetch(text, parts)  # the query's vectors are computed while the change check runs
    if sync:
        index.sync(embed="auto")
    if isinstance(kinds, str):
        kinds = (kinds,)
    kinds = tuple(kinds) if kinds else None
    unknown = sorted(set(kinds or ()) - set(config.kinds))
    if unknown:
        raise MemgitError(f"unknown kind {unknown[0]!r}; use one of {', '.join(config.kinds)}")
    pool = max(POOL, 3 * k)

    found = index.search(text, limit=pool, include_archived=include_archived, task_id=task_id, kinds=kinds)
    found = sentences.widen(index, parts, found, limit=pool, include_archived=include_archived,
                            task_id=task_id, kinds=kinds)
    weights = adaptive.weights_for(shape.kind, base, found.title_share, learned)
    exact = list(found.exact)
    ranked = _fused(found.channels, weights, base, floor)
    memories: dict[str, Memory] = {}
    if task_id is not None and not ranked and not exact:
        found = index.search(text, limit=pool, include_archived=include_archived, kinds=kinds)
        exact = list(found.exact)
        memories = index.memories(_candidate_ids(found.channels))
        boosts = {mid: config.recall_task_widen for mid, m in memories.items()
                  if m.task_id is not None and m.task_id != task_id}
        ranked = _fused(found.channels, weights, base, floor, boosts)

    if coverage.applies(shape.kind):
        ranked = coverage.lift(index, text, ranked)
    if prf.applies(shape.kind):
        where, args = deep_mod.where_of(include_archived, task_id, kinds)
        ranked = prf.lift(index, ranked, where=where, args=args, floor=floor)
    if when is not None:
        ranked = _by_time(index, ranked, when, include_archived, task_id, kinds)
    followed = links if deep else deep_mod.ALWAYS
    if followed:
        where, args = deep_mod.where_of(include_archived, task_id, kinds)
        partners = cochange() if deep and cochange is not None and "cochange" in links else None
        ranked = deep_mod.expand(index, ranked, where=where, args=args, links=followed, cochange=partners,
                                 k=k)
    how = How(shape.kind, {"keyword": weights.keyword, "vector": weights.vector, "anchor": weights.anchor,
                           "title": weights.title}, found.vectors, deep, when.kind if when else None)

    ordered: list[Ranked] = [Ranked(mid, 1.0, 1.0, {"exact": 1.0}) for mid in exact]
    by_id = {r.id: r for r in ranked}
    for position, mid in enumerate(exact):
        if mid in by_id:  # keep the channel strengths for --explain
            ordered[position] = Ranked(mid, 1.0, 1.0, {**by_id[mid].channels, "exact": 1.0})
    ordered += [r for r in ranked if r.id not in set(exact)]
    ordered = ordered[:k]
    if sync and index.refresh([r.id for r in ordered]):
        # A hit's file was edited in place (or deleted) since the index read it, and the rolling
        # stat had not reached it yet: answer from the files as they are now.
        return recall(index, query, k=k, task_id=task_id, kinds=kinds, min_score=min_score,
                      budget_tokens=budget_tokens, include_archived=include_archived, config=config,
                      path_prefix=path_prefix, sync=False, deep=deep, links=links, cochange=cochange,
                      learned=learned, by_sentence=by_sentence)

    missing = [r.id for r in ordered if r.id not in memories]
    memories.update(index.memories(missing))
    hits = [
        Hit(id=r.id, title=memories[r.id].title, score=min(1.0, r.score), relevance=r.relevance,
            channels=dict(r.channels),
            path=path_prefix + memories[r.id].path, memory=memories[r.id], how=how,
            passage=found.passages.get(r.id))
        for r in ordered if r.id in memories
    ]
    if budget_tokens is not None:
        hits = list(fit(hits, budget_tokens).hits)
    return Hits(hits, how)


def _by_time(index: Index, ranked: list[Ranked], when: timing.TimeQuestion, include_archived: bool,
             task_id: str | None, kinds: tuple[str, ...] | None) -> list[Ranked]:
    """`ranked` reordered by the time question `when` (`memgit.recall.timing`)."""
    dated = index.memories(r.id for r in ranked[: timing.TOP])
    stamps = {mid: t for mid, m in dated.items() if (t := timing.stamp(m.updated or m.created)) is not None}
    reference = None
    if when.kind in ("after", "before") and when.reference:
        event = index.search(when.reference, limit=1, include_archived=include_archived, task_id=task_id,
                             kinds=kinds).channels.keyword
        if event:
            found = index.memories([event[0][0]]).get(event[0][0])
            reference = timing.stamp(found.updated or found.created) if found else None
    return timing.reorder(ranked, stamps, when, reference)


def _candidate_ids(channels: Channels) -> list[str]:
    ids: list[str] = []
    for candidates in (channels.keyword, channels.vector, channels.anchor, channels.title):
        ids.extend(mid for mid, _ in candidates or ())
    return list(dict.fromkeys(ids))


# -- usage log ----------------------------------------------------------------------------


def record_recall(path: Path, query: str, ids: Sequence[str], *, warn: Warn | None = None,
                  kind: str | None = None, found: Mapping[str, Sequence[str]] | None = None) -> None:
    """Append one line to `path` (`<git-dir>/memgit/recalls.jsonl`): when, what, what came back,
    and (when given) the query's `kind` and which channels `found` each memory, from which
    `memgit.recall.learned` learns what feedback says of each channel.

    The query is kept as its sha1 and its first 200 characters. Never raises: a recall must
    not fail because its log cannot be written (a warning goes to `warn` instead).
    """
    record: dict[str, object] = {
        "ts": localstate.stamp(),
        "query_sha1": hashlib.sha1(query.encode("utf-8", "replace")).hexdigest(),
        "query": query[:200],
        "ids": list(ids),
    }
    if kind is not None:
        record["kind"] = kind
        record["channels"] = {mid: list(names) for mid, names in (found or {}).items()}
    try:
        localstate.append_json(path, record)  # rotated: an agent's hooks recall on every prompt
    except OSError as exc:
        (warn if warn is not None else _stderr)(f"could not record this recall in {path} ({exc.strerror or exc})")


def _stderr(message: str) -> None:
    print(f"memgit: {message}", file=sys.stderr)


def _fused(channels: Channels, weights: Weights, base: Weights, floor: float,
           boosts: Mapping[str, float] | None = None) -> list[Ranked]:
    """The candidates ranked by the query's `weights`, keeping those whose relevance under the
    configured `base` weights reaches `floor`, with that relevance: the kind of query decides
    the order, never what counts as relevant at all (a vector weighed 1.5 times would carry a
    memory that matches in meaning only, and loosely, over the floor)."""
    ranked = fuse(channels, weights, boosts)
    if weights == base:
        return apply_floor(ranked, floor) if floor > 0 else ranked
    absolute = {r.id: r.relevance for r in fuse(channels, base, boosts)}
    return [replace(r, relevance=absolute[r.id]) for r in ranked if absolute[r.id] >= floor or floor <= 0]
