"""Recall's hot path does its work once: what a warm recall asks SQLite, and that the faster
path gives the same candidates as the one-lookup-per-memory path it replaced.

Vectors come from `HashEmbedder`, a stand-in (no model): seeded random unit vectors per text,
so that long memories' passages and their own vectors point in different directions and the
passage lift (`memgit.index.passages`) reaches memories outside the nearest by their own vector.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memgit.index import channels, passages
from memgit.index import sqlite as sq
from memgit.index.index import Index
from memgit.memory.format import Memory
from memgit.store.folder import Store

from .hash_embedder import EMBEDDER, seed_notes


QUERIES = [f"how do we handle topic {n}" for n in range(12)] + ["retry backoff", "cache key expiry"]


@pytest.fixture
def index(tmp_path: Path) -> Index:
    folder = tmp_path / "repo" / ".memory"
    folder.mkdir(parents=True)
    store = Store(folder)
    seed_notes(store, 240)
    built = Index(tmp_path / "repo" / "git" / "memgit" / "index.db", store, EMBEDDER, warn=lambda m: None)
    built.sync(embed="all")
    assert built.vectors.pending() == 0
    assert built.conn.execute("SELECT count(*) FROM passage_vectors").fetchone()[0] >= 150
    return built


def one_lookup_per_memory(conn: Any, query_vector: bytes, limit: int) -> tuple[list[tuple[str, float]],
                                                                               dict[str, int]]:
    """The vector channel (no filter) as it was computed before: each passage winner outside
    the nearest by its own vector read with its own statement."""
    k = min(4096, limit * 3 + 10)
    size = conn.execute("SELECT max(doc) FROM vectors").fetchone()[0] or 0
    found = channels._nearest(conn, query_vector, k, size, limit)
    won: dict[int, int] = {}
    for doc, (distance, n) in passages.best(conn, query_vector, k).items():
        own = found.get(doc)
        if own is None:
            row = conn.execute(f"SELECT {channels._COSINE} FROM vectors v WHERE v.doc = ?2",
                               (query_vector, doc)).fetchone()
            own = float(row[0]) if row else 1.0
        credited = own - passages.CREDIT * (own - distance)
        if credited < own:
            found[doc] = credited
            won[doc] = n
    ids = channels._filtered(conn, found, "1", [])
    ranked = sorted(((ids[d], 1.0 - dist) for d, dist in found.items() if d in ids),
                    key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [(mid, min(1.0, max(0.0, s))) for mid, s in ranked], {ids[d]: n for d, n in won.items() if d in ids}


def test_the_vector_channel_gives_the_same_candidates_as_one_lookup_per_memory(index: Index) -> None:
    outside = 0
    for query in QUERIES:
        query_vector = index.vectors.query_vector(query)
        assert query_vector is not None
        passage_of: dict[str, int] = {}
        got = channels.vector(index.conn, query_vector, 50, "1", [], None, passage_of)
        want, want_passages = one_lookup_per_memory(index.conn, query_vector, 50)
        assert got == want and len(got) == 50
        assert passage_of == want_passages
        k = 50 * 3 + 10
        nearest = channels._nearest(index.conn, query_vector, k, 240, 50)
        outside += sum(doc not in nearest for doc in passages.best(index.conn, query_vector, k))
    assert outside > 0  # the lift did reach memories outside the nearest by their own vector


def statements(index: Index, query: str) -> list[str]:
    seen: list[str] = []
    # Lines starting "--" are statements SQLite runs inside FTS5, not memgit's.
    index.conn.set_trace_callback(lambda sql: None if sql.startswith("--") else seen.append(sql))
    try:
        index.search(query)
    finally:
        index.conn.set_trace_callback(None)
    return seen


def test_a_search_reads_the_passage_winners_own_vectors_in_one_statement(index: Index) -> None:
    # Warm: the scratch tables exist, and what a process keeps from its second search on
    # (memgit.index.resident, postings) is set up once; each search after that is counted.
    index.search(QUERIES[0])
    index.search(QUERIES[1])
    for query in QUERIES:
        seen = statements(index, query)
        # Cosines of single vectors by doc (not the check of which candidates have a vector).
        own = [s for s in seen if "vec_distance_cosine" in s and "FROM vectors v WHERE v.doc IN" in s]
        assert len(own) <= 1, f"{len(own)} statements read single vectors for {query!r}"
        assert len(seen) < 40, f"{len(seen)} statements for one search of {query!r}"


def test_an_index_connection_keeps_the_vectors_in_its_page_cache(index: Index) -> None:
    # SQLite's default (2,000 KiB) is smaller than the vectors of 2k memories: every recall
    # read them all again.
    kib = -int(index.conn.execute("PRAGMA cache_size").fetchone()[0])
    assert kib == sq.CACHE_KIB and kib >= 32_768


def test_the_rolling_stat_still_sees_in_place_edits_and_files_gone_behind_the_folders_back(
        tmp_path: Path) -> None:
    """The rolling stat's loop was made cheaper; what it finds is the same. (The folder's
    mtime is put back, so only the rolling stat can notice.)"""
    from memgit.index import changes

    folder = tmp_path / "repo" / ".memory"
    folder.mkdir(parents=True)
    store = Store(folder)
    for i in range(30):
        store.write(Memory(id=f"m-{i:03d}", title=f"Note {i}", body=f"Body {i}.", path=f"n{i:03d}.md"))
    built = Index(tmp_path / "repo" / "git" / "memgit" / "index.db", store, "none", warn=lambda m: None)
    old = (1_000_000_000_000_000_000, 1_000_000_000_000_000_000)  # in 2001: no racy timestamps
    for path in [*folder.iterdir(), folder]:
        os.utime(path, ns=old)
    built.sync(full=True)
    before = os.stat(folder).st_mtime_ns
    edited = folder / "n004.md"
    edited.write_text(edited.read_text().replace("Body 4.", "Body 4, edited in place."))
    (folder / "n007.md").unlink()
    os.utime(folder, ns=(before, before))
    scan = changes.Detector(built.db, store).detect()
    assert set(scan.changed) == {"n004.md"} and scan.removed == {"n007.md"} and scan.checked == 30
    built.sync()
    assert "in place" in built.memory("m-004").body
    assert "m-007" not in built.memories(["m-007"])
    built.close()
