"""The vector channel's two search paths, the vector tables, and the 2 -> 3 upgrade.

Above `channels.VECTOR_EXACT_MAX` vectors the channel preselects by hamming distance over
sign bits and rescores the candidates exactly; these tests force that path on small
stores (the threshold monkeypatched to 0) and compare it with the exact path. Vectors
come from `ClusterEmbedder`: memories in clusters around seeded random centres, so a
query has true neighbours that stand out, as real embeddings do.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest

import memgit.index.channels as channels
from memgit.index import sqlite as sq
from memgit.index.index import Index
from memgit.memory.format import Memory
from memgit.store.folder import Store


class ClusterEmbedder:
    """Text "c<i> ..." -> centre i plus noise seeded by the whole text; 64-d, unit length."""

    id = "cluster-64"
    dim = 64
    calls: list[str] = []
    noise = 0.35

    def _one(self, text: str) -> Any:
        match = re.match(r"c(\d+)", text)
        centre = np.random.default_rng(int(match.group(1)) if match else 10_000).normal(size=self.dim)
        centre /= np.linalg.norm(centre)
        seed = sum(ord(ch) * 31 ** i for i, ch in enumerate(text)) % 2**32
        vector = centre + np.random.default_rng(seed).normal(size=self.dim) * self.noise / self.dim ** 0.5
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> Any:
        type(self).calls.extend(texts)
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._one(text)


class OddDimEmbedder(ClusterEmbedder):
    """12 dimensions: not a multiple of 8, so no sign bits; the exact path only."""

    id = "cluster-12"
    dim = 12


class ZeroEmbedder(ClusterEmbedder):
    """The zero vector for texts starting with "zero" (it has no cosine)."""

    id = "cluster-64-zero"

    def _one(self, text: str) -> Any:
        return np.zeros(self.dim, np.float32) if text.startswith("zero") else super()._one(text)


CLUSTER = f"{__name__}:ClusterEmbedder"


@pytest.fixture(autouse=True)
def fresh() -> None:
    ClusterEmbedder.calls = []


def make(folder: Path, embedder: str = CLUSTER) -> Index:
    return Index(folder.parent / "git" / "memgit" / "index.db", Store(folder), embedder, warn=lambda m: None)


def fill(folder: Path, clusters: int = 12, per: int = 25) -> None:
    store = Store(folder)
    for c in range(clusters):
        for j in range(per):
            rel = f"c{c}/m{j}.md"
            store.write(Memory(id=f"m-{c}-{j}", title=f"c{c} memory {j}", body=f"note {j} of cluster {c}",
                               path=rel, status="archived" if j % 10 == 9 else "active",
                               task_id="T-1" if (c, j) in ((0, 1), (5, 2)) else None))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / ".memory"
    path.mkdir(parents=True)
    return path


def vector_hits(index: Index, query: str, **kw: Any) -> list[tuple[str, float]]:
    return list(index.search(query, **kw).channels.vector or ())


def both_paths(index: Index, monkeypatch: pytest.MonkeyPatch, query: str,
               **kw: Any) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    monkeypatch.setattr(channels, "VECTOR_EXACT_MAX", 10**9)
    exact = vector_hits(index, query, **kw)
    monkeypatch.setattr(channels, "VECTOR_EXACT_MAX", 0)
    return exact, vector_hits(index, query, **kw)


def test_two_stage_equals_exact_when_the_candidates_cover_the_store(folder: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fill(folder)
    index = make(folder)
    index.sync(embed="all")
    for query in ("c3 what about it", "c7", "c11 memory 4", "nothing like a cluster"):
        exact, two_stage = both_paths(index, monkeypatch, query, limit=20)
        assert two_stage == exact and len(exact) == 20
        exact, two_stage = both_paths(index, monkeypatch, query, limit=20, include_archived=True,
                                      task_id="T-1")
        assert two_stage == exact


def test_two_stage_with_few_candidates_finds_the_same_top(folder: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """30 candidates of 300 memories (10 %), as at 100k memories with 1/50 of them rescored
    (plus margin): the clusters' members still come out on top, with exact strengths."""
    fill(folder)
    index = make(folder)
    index.sync(embed="all")
    monkeypatch.setattr(channels, "vector_candidates", lambda size, limit, k: 30)
    for c in range(12):
        exact, two_stage = both_paths(index, monkeypatch, f"c{c} a question", limit=10)
        assert two_stage[:10] == exact[:10]
        assert all(mid.startswith(f"m-{c}-") for mid, _ in exact[:10])


def test_strengths_are_exact_cosines(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(folder, clusters=3, per=5)
    index = make(folder)
    index.sync(embed="all")
    monkeypatch.setattr(channels, "VECTOR_EXACT_MAX", 0)
    embedder = ClusterEmbedder()
    query = embedder.embed_query("c1 question")
    for mid, strength in vector_hits(index, "c1 question", include_archived=True):
        memory = index.memory(mid)
        vector = embedder.embed_query(f"{memory.title}\n{memory.body}")
        assert strength == pytest.approx(max(0.0, float(query @ vector)), abs=1e-5)


def test_candidate_count_grows_with_the_store() -> None:
    assert channels.vector_candidates(10_000, 50, 160) == 500
    assert channels.vector_candidates(100_000, 50, 160) == 2000
    assert channels.vector_candidates(10**7, 50, 160) == channels.VECTOR_CANDIDATES_MAX
    assert channels.vector_candidates(10_000, 5, 25) == 200


def tables_agree(index: Index) -> None:
    conn = index.conn
    with_vec = {r[0] for r in conn.execute("SELECT doc FROM memories WHERE vec_sha IS NOT NULL")}
    assert {r[0] for r in conn.execute("SELECT doc FROM vectors")} == with_vec
    assert {r[0] for r in conn.execute("SELECT doc FROM vector_bits")} == with_vec


def test_edit_delete_and_embedder_change_keep_both_tables_in_step(folder: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    fill(folder, clusters=2, per=4)
    index = make(folder)
    index.sync(embed="all")
    tables_agree(index)
    store = Store(folder)
    store.write(Memory(id="m-0-1", title="c1 moved to cluster one", body="changed", path="c0/m1.md"))
    (folder / "c1" / "m2.md").unlink()
    index.sync(embed="none")
    tables_agree(index)
    assert index.status()["pending_vectors"] == 1
    index.sync(embed="all")
    tables_agree(index)
    monkeypatch.setattr(channels, "VECTOR_EXACT_MAX", 0)
    assert vector_hits(index, "c1 moved to cluster one\nchanged")[0][0] == "m-0-1"
    other = make(folder, f"{__name__}:OddDimEmbedder")
    other.sync(embed="all")
    tables_agree(other)
    assert other.conn.execute("SELECT count(*) FROM vector_bits WHERE bits IS NOT NULL").fetchone()[0] == 0
    hits = vector_hits(other, "c1 moved to cluster one\nchanged")  # the exact path, whatever the threshold
    assert hits[0][0] == "m-0-1" and hits[0][1] == pytest.approx(1.0, abs=1e-5)


def test_a_zero_vector_is_refused(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A zero vector has no cosine: it is not stored (`memgit.index.unit`; more in
    tests/test_embedder_output.py), and a zero query vector runs no vector search."""
    fill(folder, clusters=2, per=3)
    Store(folder).write(Memory(id="m-zero", title="zero vector here", body="", path="z.md"))
    index = make(folder, f"{__name__}:ZeroEmbedder")
    index.sync(embed="all")
    assert index.status()["pending_vectors"] == 0  # refused, not pending
    for threshold in (10**9, 0):
        monkeypatch.setattr(channels, "VECTOR_EXACT_MAX", threshold)
        hits = dict(vector_hits(index, "c1 query"))
        assert "m-zero" not in hits and max(hits.values()) > 0.5
        found = index.search("zero query")
        assert found.channels.vector is None and found.vectors.state == "failed"


def test_version_2_index_is_upgraded_in_place_without_re_embedding(folder: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fill(folder, clusters=3, per=6)
    index = make(folder)
    index.sync(embed="all")
    expected = vector_hits(index, "c2 question", include_archived=True)
    as_version_2(index, vec0=True)
    ClusterEmbedder.calls = []
    again = make(folder)
    assert sq.user_version(again.conn) == sq.SCHEMA_VERSION
    assert again.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").fetchone() is None
    report = again.sync(embed="all")
    assert report.embedded == 0 and ClusterEmbedder.calls == []
    tables_agree(again)
    assert again.status()["vectors"] == 18
    assert vector_hits(again, "c2 question", include_archived=True) == expected
    monkeypatch.setattr(channels, "VECTOR_EXACT_MAX", 0)
    assert vector_hits(again, "c2 question", include_archived=True) == expected


def as_version_2(index: Index, *, vec0: bool) -> None:
    """Make an index what version 2 wrote: the vectors in a vec0 table (if any), no plain tables."""
    conn = index.conn
    conn.execute("BEGIN")
    if vec0:
        conn.execute("CREATE VIRTUAL TABLE memories_vec USING vec0(embedding float[64] distance_metric=cosine)")
        conn.execute("INSERT INTO memories_vec(rowid, embedding) SELECT doc, embedding FROM vectors")
    conn.execute("DROP TABLE vectors")
    conn.execute("DROP TABLE vector_bits")
    conn.execute("PRAGMA user_version = 2")
    conn.execute("COMMIT")
    index.close()


def test_version_2_index_without_vectors_is_upgraded_in_place(folder: Path) -> None:
    fill(folder, clusters=1, per=3)
    index = make(folder, "none")
    index.sync()
    as_version_2(index, vec0=False)
    again = make(folder, "none")
    assert sq.user_version(again.conn) == sq.SCHEMA_VERSION and again.status()["memories"] == 3
    assert again.sync().touched == 0  # nothing was dropped, so nothing is indexed again


WITHOUT_SQLITE_VEC = """
import json, sys
from pathlib import Path
from memgit.index import sqlite as sq
from memgit.index.index import Index
from memgit.store.folder import Store

folder = Path(sys.argv[1])
again = Index(folder.parent / "git" / "memgit" / "index.db", Store(folder), sys.argv[2], warn=lambda m: None)
seen = {"version": sq.user_version(again.conn),
        "vec0_left": again.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").fetchone()
        is not None}
again.sync()
seen.update(memories=again.status()["memories"], reason=again.vectors_reason(),
            sqlite_vec_loaded=bool(getattr(sys.modules.get("sqlite_vec"), "load", None)))
print(json.dumps(seen))
"""


def test_version_2_vec0_index_without_sqlite_vec_is_rebuilt(folder: Path) -> None:
    fill(folder, clusters=1, per=3)
    index = make(folder)
    index.sync(embed="all")
    as_version_2(index, vec0=True)
    index.close()
    # A Python without sqlite-vec opens it: a child process where the package cannot be imported.
    hidden = folder.parent / "hidden"
    (hidden / "sqlite_vec").mkdir(parents=True)
    (hidden / "sqlite_vec" / "__init__.py").write_text("raise ImportError('No module named sqlite_vec')\n")
    import json
    import os
    import subprocess
    import sys

    from .conftest import ROOT

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hidden), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", WITHOUT_SQLITE_VEC, str(folder), CLUSTER], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {"version": sq.SCHEMA_VERSION, "vec0_left": False, "memories": 3,
                    "reason": "sqlite-vec is not installed", "sqlite_vec_loaded": False}
