"""Deep recall: follow the links memories already have, then rank the union.

An answer spread over several memories, or sitting next to the memory that matches, is
missed by a ranking that judges each memory alone. `expand` takes the best `SEEDS` fused
hits and adds the memories linked to them, by kind (`LINKS`). (The fusion itself keeps its
pool of candidates: a wider pool lowers the min-max floor of every channel and, measured on
the development sets, cost 1 point of recall@5 by itself.)

- "entity": the same `entity`, or a shared anchored file or symbol (the weakest link: one
  file can have hundreds of memories);
- "supersedes": what a seed supersedes, and what supersedes it (current ones only, unless
  archived memories were asked for);
- "session": the same task, or the same entity, within `SESSION_HOURS` of the seed
  (a session's memories, by when they were written: an edit months later moves none out of
  its session; a seed with no date, its task's), the nearest in time first and
  ahead of farther ones, at most `TURNS` of them. Dates pick out a session only where they
  tell memories apart: when that window around the seed holds more than `CROWDED` of the
  store (a sample of `SAMPLE`), its memories were written or imported together, and the
  entity link there is left to "entity". A session is a few memories: a window holding
  more than `SESSION_MAX` others is a long task's day, a batch, or files written to ride
  along with every answer of a popular entity, and links nothing;
- "cochange": memories anchored to files that change together with the seed's in git
  history (`memgit.git.cochange`);
- "names": memories whose id the seed's text names, and those that name the seed's id.

A linked memory's link score is its seed's score times the link's factor (`FACTORS`,
below 1: a link never outranks the memory it came from); a memory's deep score is the
larger of its own fused score and its best link score, and the union is sorted by it. The
link is recorded in the hit's channels as `link:<kind>`. Reads the index only.

Every recall, deep or not, follows the session link (`ALWAYS`): a conversation's answer is
often split over two turns of one session, and on the development sets that link alone moved
recall@5 of memories a turn each from 0.777 to 0.890 and cost no set anything (code memory
0.850 -> 0.851). The other links stay deep recall's: the entity link costs code memory 0.6
points, and the rest change nothing there.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import replace
from typing import Any, Collection, Mapping, Sequence

from memgit.index import channels as channel_sql
from memgit.index import sqlite as sq
from memgit.index.index import Index
from memgit.index.ranking import Ranked
from memgit.memory.anchors import normalize_anchor
from memgit.recall.timing import stamp

#: The best fused hits whose links are followed.
SEEDS = 8
#: Link kinds and how much of its seed's score a linked memory gets.
FACTORS: dict[str, float] = {
    "supersedes": 0.9,
    "session": 0.85,
    "names": 0.8,
    "entity": 0.4,
    "cochange": 0.4,
}
LINKS = tuple(FACTORS)
#: The links every recall follows, deep or not (see the module docstring).
ALWAYS = ("session",)
#: Memories of one entity this close in time are one session's.
SESSION_HOURS = 12.0
#: The share of the store one session window may hold (see the module docstring), judged on
#: `SAMPLE` memories spread over it. A store imported at one instant (6,267 functions, each
#: memory's entity its function's name) linked every same-named function as a session and
#: lost 1 point of recall@5.
CROWDED = 0.5
SAMPLE = 64
#: At most this many memories linked to one seed by one kind (a popular entity has hundreds).
PER_SEED = 6
#: At most this many of a seed's session: a conversation's turns next to the one that matched
#: (the development sets' sessions have two or three); more would crowd out the next answers.
TURNS = 2
#: A window of one task or entity holding more other memories than this is not one session
#: (see the module docstring): 20 notes of a branch's day followed every answer two by two.
SESSION_MAX = 12
#: The julian day of the Unix epoch (SQLite's `julianday('1970-01-01')`).
JULIAN_EPOCH = 2440587.5

_ID_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{2,80}")


def expand(
    index: Index,
    ranked: Sequence[Ranked],
    *,
    where: str,
    args: Sequence[Any],
    links: Collection[str] = LINKS,
    cochange: Mapping[str, Mapping[str, int]] | None = None,
    k: int | None = None,
) -> list[Ranked]:
    """`ranked` with the memories linked to its best `SEEDS` added and the union re-ranked
    (see the module docstring). `where`/`args` filter the linked memories as the search did
    (`memgit.index.channels.filter_sql`); `links` chooses the link kinds followed. With `k`,
    only the first `k` of the result are wanted: a link whose score could not reach them
    (its seed's score times its factor below the `k`-th score) is not looked up."""
    bar = ranked[k - 1].score if k is not None and 0 < k <= len(ranked) else float("-inf")
    follow = {
        seed.id: [kind for kind in LINKS if kind in links and seed.score * FACTORS[kind] >= bar]
        for seed in ranked[:SEEDS]
    }
    seeds = [seed for seed in ranked[:SEEDS] if follow[seed.id]]
    if not seeds:
        return list(ranked)
    found: dict[str, tuple[float, str]] = {}  # id -> (link score, kind)
    order: dict[str, int] = {}  # id -> when it was linked: a seed's nearest memories first
    tick = itertools.count()

    def link(seed: Ranked, kind: str, ids: Sequence[str]) -> None:
        score = seed.score * FACTORS[kind]
        for mid in ids[: TURNS if kind == "session" else PER_SEED]:
            if mid != seed.id and score > found.get(mid, (-1.0, ""))[0]:
                found[mid] = (score, kind)
                order[mid] = next(tick)

    def read(conn: Any) -> None:
        sampled: list[float | None] | None = None  # the store's sampled dates, read once if a session asks
        marks = ",".join("?" * len(seeds))
        rows = {
            row[0]: row[1:]
            for row in conn.execute(
                "SELECT id, doc, entity, files, symbols, supersedes, task_id, created, updated, "
                f"body FROM memories WHERE id IN ({marks})",
                [seed.id for seed in seeds],
            )
        }
        for seed in seeds:
            if seed.id not in rows:
                continue
            doc, entity, files, symbols, supersedes, task_id, created, updated, body = rows[seed.id]
            files_l = json.loads(files or "[]")
            kinds = follow[seed.id]
            if "entity" in kinds:
                link(
                    seed,
                    "entity",
                    _entity(conn, doc, entity or "", files_l + json.loads(symbols or "[]"), where, args),
                )
            if "supersedes" in kinds:
                link(
                    seed,
                    "supersedes",
                    _supersedes(conn, seed.id, json.loads(supersedes or "[]"), where, args),
                )
            if "session" in kinds:
                if sampled is None and entity and not task_id:
                    sampled = _dates(conn)
                link(
                    seed,
                    "session",
                    _session(conn, doc, entity or "", task_id, created or updated, sampled or [], where,
                             args),
                )
            if "cochange" in kinds and cochange:
                link(seed, "cochange", _cochange(conn, doc, files_l, cochange, where, args))
            if "names" in kinds:
                link(seed, "names", _names(conn, seed.id, body or "", where, args))

    index.db.guard(lambda: _in_snapshot(index, read))
    out: dict[str, Ranked] = {r.id: r for r in ranked}
    for mid, (score, kind) in found.items():
        mine = out.get(mid)
        if mine is None:
            out[mid] = Ranked(mid, score, 0.0, {f"link:{kind}": round(score, 4)})
        elif score > mine.score:
            out[mid] = replace(mine, score=score, channels={**mine.channels, f"link:{kind}": round(score, 4)})
    # Links of one seed share a score: the order they were found in (nearest first) breaks the tie.
    return sorted(out.values(), key=lambda r: (-r.score, -r.relevance, order.get(r.id, -1), r.id))


def _in_snapshot(index: Index, read: Any) -> None:
    with index.db.snapshot() as conn:
        read(conn)


def _ids(
    conn: Any, sql: str, params: Sequence[Any], where: str, args: Sequence[Any], tail: str = ""
) -> list[str]:
    return [
        r[0]
        for r in conn.execute(f"SELECT m.id FROM memories m WHERE {sql} AND {where} {tail}", (*params, *args))
    ]


def _entity(
    conn: Any, doc: int, entity: str, anchored: list[str], where: str, args: Sequence[Any]
) -> list[str]:
    keys = sorted({normalize_anchor(a) for a in anchored if a} - {""})
    out = (
        _ids(
            conn,
            "m.entity = ? AND m.entity <> '' AND m.doc <> ?",
            (entity, doc),
            where,
            args,
            "ORDER BY m.doc LIMIT 50",
        )
        if entity
        else []
    )
    if keys:
        marks = ",".join("?" * len(keys))
        out += _ids(
            conn,
            f"m.doc IN (SELECT a.doc FROM anchors a WHERE a.anchor_key IN ({marks}) AND a.doc <> ? LIMIT 50)",
            (*keys, doc),
            where,
            args,
        )
    return list(dict.fromkeys(out))


def _supersedes(
    conn: Any, memory_id: str, supersedes: list[str], where: str, args: Sequence[Any]
) -> list[str]:
    out = []
    if supersedes:
        marks = ",".join("?" * len(supersedes))
        out += _ids(conn, f"m.id IN ({marks})", supersedes, where, args)
    out += _ids(
        conn,
        "m.supersedes <> '[]' AND EXISTS (SELECT 1 FROM json_each(m.supersedes) j WHERE j.value = ?)",
        (memory_id,),
        where,
        args,
    )
    return out


def _dates(conn: Any) -> list[float | None]:
    """The dates (created, else updated) of up to `SAMPLE` memories spread evenly over the
    store, as stamps: enough to tell whether one window holds most of it."""
    top = conn.execute("SELECT max(doc) FROM memories").fetchone()[0] or 0
    docs = sorted({1 + (top - 1) * n // (SAMPLE - 1) for n in range(SAMPLE)}) if top > 0 else []
    if not docs:
        return []
    marks = ",".join("?" * len(docs))
    return [stamp(r[0]) for r in conn.execute(
        f"SELECT coalesce(created, updated) FROM memories WHERE doc IN ({marks})", docs)]


def _session(
    conn: Any, doc: int, entity: str, task_id: str | None, when: str | None, dates: Sequence[float | None],
    where: str, args: Sequence[Any],
) -> list[str]:
    """The same task's memories, or the same entity's, within SESSION_HOURS (all of the task's
    for a seed with no date), unless that window is crowded (more than `CROWDED` of the store's
    sampled `dates`) or holds more than `SESSION_MAX` others; nearest in time first."""
    t0 = stamp(when)
    if not task_id and entity and t0 is not None and dates:
        inside = sum(1 for t in dates if t is not None and abs(t - t0) <= SESSION_HOURS * 3600)
        if inside > CROWDED * len(dates):
            return []
    if task_id:
        same, key = "m.task_id = ?", task_id
    elif entity and t0 is not None:
        same, key = "m.entity = ? AND m.entity <> ''", entity  # `<> ''`: the partial index `memories_entity`
    else:
        return []
    if t0 is None:  # a seed with no date: its task's memories, by id
        return _window([r[0] for r in conn.execute(
            f"SELECT m.id FROM memories m WHERE {same} AND m.doc <> ? AND {where} ORDER BY m.id LIMIT ?",
            (key, doc, *args, SESSION_MAX + 1))])
    # The window is read by SQLite (the index keeps dates in ISO 8601, which julianday reads as
    # `stamp` does): an entity's memories past the first few hundred are searched too.
    day = t0 / 86400 + JULIAN_EPOCH
    distance = "abs(julianday(coalesce(m.created, m.updated)) - ?)"
    return _window([r[0] for r in conn.execute(
        f"SELECT m.id FROM memories m WHERE {same} AND m.doc <> ? AND {distance} <= ? AND {where} "
        f"ORDER BY {distance}, m.id LIMIT ?",
        (key, doc, day, SESSION_HOURS / 24, *args, day, SESSION_MAX + 1))])


def _window(ids: list[str]) -> list[str]:
    """A session window's memories, or none when it holds more than `SESSION_MAX`."""
    return [] if len(ids) > SESSION_MAX else ids


def _cochange(
    conn: Any,
    doc: int,
    files: list[str],
    partners: Mapping[str, Mapping[str, int]],
    where: str,
    args: Sequence[Any],
) -> list[str]:
    together: dict[str, int] = {}
    for path in files:
        for other, n in partners.get(path, {}).items():
            together[other] = max(together.get(other, 0), n)
    keys = [normalize_anchor(p) for p, _ in sorted(together.items(), key=lambda kv: -kv[1])[:20]]
    keys = [k for k in keys if k]
    if not keys:
        return []
    marks = ",".join("?" * len(keys))
    return _ids(
        conn,
        f"m.doc IN (SELECT a.doc FROM anchors a WHERE a.anchor_key IN ({marks}) AND a.doc <> ? LIMIT 50)",
        (*keys, doc),
        where,
        args,
    )


def _names(conn: Any, memory_id: str, body: str, where: str, args: Sequence[Any]) -> list[str]:
    """Memories whose id the seed's body names, and memories whose body names the seed's id."""
    tokens = sorted({t.strip(".-") for t in _ID_TOKEN.findall(body)} - {memory_id})[:500]
    out: list[str] = []
    if tokens:
        marks = ",".join("?" * len(tokens))
        out += _ids(conn, f"m.id IN ({marks})", tokens, where, args)
    phrase = '"' + memory_id.replace('"', '""') + '"'
    try:
        out += [
            r[0]
            for r in conn.execute(
                "SELECT m.id FROM memories_fts f JOIN memories m ON m.doc = f.rowid "
                f"WHERE memories_fts MATCH ? "
                f"AND m.id <> ? AND {where} LIMIT 20",
                (f"body : {phrase}", memory_id, *args),
            )
        ]
    except sq.driver().Error:  # an id FTS5 cannot parse names nothing
        pass
    return list(dict.fromkeys(out))


def where_of(
    include_archived: bool, task_id: str | None, kinds: Sequence[str] | None
) -> tuple[str, list[Any]]:
    """The filter linked memories must pass: the one the search used."""
    return channel_sql.filter_sql(include_archived, task_id, kinds)
