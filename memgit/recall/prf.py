"""Pseudo-relevance feedback from the anchors of the best hits.

A question asked in words often names no code, yet the memories that answer it are about
the same code as the memories that match it best. `lift` reads the code anchors (entity,
files, symbols) of the best `SEEDS` fused hits; an anchor at least `SHARED` of them hold is
evidence of what the question is about, weighed by its idf and by the scores of the seeds
that hold it. Every other current memory with such anchors gets a small lift: `LIFT` times
the share of that evidence it holds, and never above the lowest-scored seed it shares an
anchor with (feedback never outranks the hits it came from). A memory only the feedback
found gets as relevance `SECOND_HAND` times that share of that seed's relevance (evidence at
second hand counts half), so the relevance floor still applies to it. The hit's channels
record it as "prf".

Deep recall's entity link (`memgit.recall.deep`) follows one seed's file to every memory
anchored there, at 0.4 of the seed's score whatever the file, and cost codemem-pytest half
a point of recall@5: a popular file has hundreds of memories, and one seed is often wrong.
Here two seeds must agree on an anchor, a rare anchor counts more (idf) and one most of the
store holds (`COMMON`) not at all, and the lift is added to a memory's own score, bounded.

It runs for every kind of query (`KINDS`): a query that names code also gains, since the
anchors its best hits share include ones it did not name. Only questions were tried first
(they are what it is for); the figures below said it helps the others too.

The constants were measured on the development sets (recall@5 through `recall()` after
reindex, codemem-pytest; the DevMemBench sets hold no code anchors, so it changes nothing
there): without feedback 0.805 (natural questions 0.720, mixed 0.951, anchor 0.953); with
it, for every kind, 0.822 (0.746, 0.951, 0.956). Around that, each alone (measured with the
anchor extractor's wider keys, which also held file names and bare symbols: 0.821 for every
kind, 0.816 for questions and plain words only): 3 or 8 seeds 0.808 / 0.805 against 5 (two
seeds agreeing among the best three is rare; among eight, the lower ones are noise); a lift
of 0.08 or 0.3 0.815 / 0.812 against 0.15; anchors held by up to 5 % of the store 0.812
against 20 %; an anchor one seed holds 0.815 against two. `SECOND_HAND` is not measured by
those figures (they rank with the floor off): it keeps a memory found only by feedback from
passing the relevance floor on the strength of a match that is not its own. The lift costs
about 1-3 ms a recall (5 seeds, two to four SQL statements; measured on 2 loaded cores).

Reads the index only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memgit.index.index import Index
from memgit.index.ranking import Ranked
from memgit.memory.anchors import normalize_anchor

#: The best fused hits whose anchors are read.
SEEDS = 5
#: Seeds that must hold an anchor for it to count.
SHARED = 2
#: The largest lift, as a share of a fused score.
LIFT = 0.15
#: An anchor held by more memories than this share of the store says nothing.
COMMON = 0.2
#: What a relevance found only through the seeds' anchors is worth, against the seed's own.
SECOND_HAND = 0.5
#: The kinds of query it runs for (`memgit.recall.adaptive`).
KINDS = ("question", "words", "identifier", "mixed")


def applies(kind: str) -> bool:
    """Whether recall lifts by the best hits' anchors for a query of `kind`."""
    return kind in KINDS


def lift(index: Index, ranked: Sequence[Ranked], *, where: str, args: Sequence[Any],
         floor: float = 0.0) -> list[Ranked]:
    """`ranked` with the memories that share the best hits' anchors lifted and re-sorted
    (see the module docstring); unchanged when the best hits share no anchor."""
    seeds = list(ranked[:SEEDS])
    if len(seeds) < SHARED:
        return list(ranked)
    found: dict[str, tuple[float, float, float]] = {}  # id -> (share, cap score, cap relevance)

    def read(conn: Any) -> None:
        by_id = {s.id: s for s in seeds}
        marks = ",".join("?" * len(seeds))
        held: dict[str, list[Ranked]] = {}
        for mid, entity, files, symbols in conn.execute(
                f"SELECT id, entity, files, symbols FROM memories WHERE id IN ({marks})", list(by_id)):
            keys = _keys(entity or "", json.loads(files or "[]"), json.loads(symbols or "[]"))
            for key in keys:
                held.setdefault(key, []).append(by_id[mid])
        shared = {key: holders for key, holders in held.items() if len(holders) >= SHARED}
        if not shared:
            return
        n = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        total_score = sum(s.score for s in seeds) or 1.0
        marks = ",".join("?" * len(shared))
        weights: dict[str, float] = {}
        for key, df in conn.execute(f"SELECT anchor_key, count(*) FROM anchors WHERE anchor_key IN ({marks}) "
                                    "GROUP BY anchor_key", list(shared)):
            if df <= max(SHARED, COMMON * n):
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                weights[key] = idf * sum(s.score for s in shared[key]) / total_score
        total = sum(weights.values())
        if total <= 0:
            return
        marks = ",".join("?" * len(weights))
        lowest = {key: min(shared[key], key=lambda s: s.score) for key in weights}
        sums: dict[str, float] = {}
        caps: dict[str, Ranked] = {}
        for mid, key in conn.execute(
                f"SELECT m.id, a.anchor_key FROM anchors a JOIN memories m ON m.doc = a.doc "
                f"WHERE a.anchor_key IN ({marks}) AND {where}", (*weights, *args)):
            sums[mid] = sums.get(mid, 0.0) + weights[key]
            if mid not in caps or lowest[key].score < caps[mid].score:
                caps[mid] = lowest[key]
        for mid, value in sums.items():
            if mid not in by_id:
                found[mid] = (min(1.0, value / total), caps[mid].score, caps[mid].relevance)

    index.db.guard(lambda: _in_snapshot(index, read))
    if not found:
        return list(ranked)
    out: dict[str, Ranked] = {r.id: r for r in ranked}
    for mid, (share, cap, cap_relevance) in found.items():
        mine = out.get(mid)
        own = mine.score if mine is not None else 0.0
        score = max(own, min(own + LIFT * share, cap * (1 - 1e-6)))
        if mine is None:
            relevance = SECOND_HAND * share * cap_relevance
            if relevance < floor or relevance <= 0:
                continue
            out[mid] = Ranked(mid, score, relevance, {"prf": round(share, 4)})
        elif score > own:
            out[mid] = replace(mine, score=score, channels={**mine.channels, "prf": round(share, 4)})
    return sorted(out.values(), key=lambda r: (-r.score, -r.relevance, r.id))


def _keys(entity: str, files: list[str], symbols: list[str]) -> set[str]:
    """A memory's code anchors as the anchors table keys them: its entity (and the path of a
    `path::symbol` entity), its files and its symbols."""
    named = [entity, entity.partition("::")[0] if "::" in entity else "", *files, *symbols]
    return {normalize_anchor(a) for a in named if isinstance(a, str) and a} - {""}


def _in_snapshot(index: Index, read: Any) -> None:
    with index.db.snapshot() as conn:
        read(conn)
