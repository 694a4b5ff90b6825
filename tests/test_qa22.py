"""Code memories' hubness values against what other processes and embedders do to an index:
an older memgit that switched the embedder, vectors that cannot be measured (zero, NaN).

Real repositories' memory folders and real SQLite; the embedders are stand-ins loaded
through memgit's own `module:attr` plug-in interface (`tests.test_recall_code_search`'s
planted one, and the ones below).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgit.index import hubs
from memgit.index.index import Index
from memgit.store.folder import Store

from . import test_recall_code_search as planted


class Spread:
    """Each text a unit vector seeded by its hash (no crowd anywhere); 8-d."""

    id = "spread-8"
    dim = 8

    def _one(self, text: str) -> Any:
        seed = int.from_bytes(hashlib.sha1(text.encode()).digest()[:4], "big")
        vector = np.random.default_rng(seed).normal(size=self.dim)
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> Any:
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._one(text)


SPREAD = f"{__name__}:Spread"


def _index(root: Path, embedder: str) -> Index:
    return Index(root / "git" / "memgit" / "index.db", Store(root / ".memory"), embedder, warn=lambda m: None)


def _values(index: Index) -> dict[str, float | None]:
    return dict(index.conn.execute(
        "SELECT m.id, h.value FROM hub_scores h JOIN memories m ON m.doc = h.doc AND m.vec_sha = h.vec_sha "
        "WHERE h.code = 1").fetchall())


def test_values_made_under_another_embedder_are_not_used(tmp_path: Path) -> None:
    index = planted.build(tmp_path)  # the planted crowd: its helpers' values near 1
    index.close()
    path = tmp_path / "repo" / "git" / "memgit" / "index.db"
    conn = sqlite3.connect(path)  # a memgit from before these values switches the embedder
    conn.execute("DELETE FROM vectors")
    conn.execute("DELETE FROM vector_bits")
    conn.execute("UPDATE memories SET vec_sha = NULL")
    for key, value in (("embedder_id", Spread.id), ("vec_dim", "8"), ("embedder_name", SPREAD)):
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
    conn.commit()
    conn.close()
    again = _index(tmp_path / "repo", SPREAD)
    again.sync(embed="auto")  # the same texts embedded again: the same vec_sha stamps
    fresh_root = tmp_path / "fresh"
    (fresh_root / ".memory").mkdir(parents=True)
    planted.write_code(Store(fresh_root / ".memory"))
    fresh = _index(fresh_root, SPREAD)
    fresh.sync(embed="all")
    got, want = _values(again), _values(fresh)
    assert got.keys() == want.keys() and len(want) == 14
    assert all(abs((got[k] or 0.0) - (want[k] or 0.0)) < 1e-5 for k in want), (got, want)
    mean = again.conn.execute("SELECT value FROM meta WHERE key = ?", (hubs.MEAN,)).fetchone()[0]
    assert abs(float(mean) - float(fresh.db.meta(hubs.MEAN) or "nan")) < 1e-5
    again.close()
    fresh.close()
