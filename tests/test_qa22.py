"""Code memories' hubness values against what other processes and embedders do to an index:
an older memgit that switched the embedder, vectors that cannot be measured (zero, NaN).

Real repositories' memory folders and real SQLite; the embedders are stand-ins loaded
through memgit's own `module:attr` plug-in interface (`tests.test_recall_code_search`'s
planted one, and the ones below).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memgit.index import embedjob, hubs
from memgit.index.index import Index
from memgit.memory.format import Memory, split_title
from memgit.store.folder import Store

from . import test_recall_code_search as planted
from .hash_embedder import HashEmbedder


class Spread(HashEmbedder):
    """Each text a unit vector seeded by its hash (no crowd anywhere); 8-d."""

    id = "spread-8"
    dim = 8


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


class Unmeasurable(planted.Planted):
    """The planted vectors, but a zero vector for a text that says "blank" and NaN for one that
    says "overflow" (what a plug-in may give for what it cannot embed); 8-d."""

    id = "planted-unmeasurable"

    def embed(self, texts: Sequence[str]) -> Any:
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._one(text)

    def _one(self, text: str) -> Any:
        if "blank_" in text:
            return np.zeros(planted.DIM, dtype=np.float32)
        if "overflow_" in text:
            return np.full(planted.DIM, np.nan, dtype=np.float32)
        return planted._planted(text)


UNMEASURABLE = f"{__name__}:Unmeasurable"


def _with(tmp_path: Path, body: str) -> Index:
    root = tmp_path / "repo"
    (root / ".memory").mkdir(parents=True)
    store = Store(root / ".memory")
    planted.write_code(store)
    store.write(Memory(id="odd", title="odd", body=body, path="odd.md"))
    index = _index(root, UNMEASURABLE)
    index.sync(embed="all")
    return index


def test_a_zero_vector_gets_no_value_and_is_not_raised_into_every_search(tmp_path: Path) -> None:
    index = _with(tmp_path, "def blank_fn(x):\n    return x")
    assert "odd" not in _values(index)  # nothing to measure: no value, no shift
    ranked = dict(index.search(planted.QUESTION, limit=20).channels.vector or ())
    assert ranked.get("odd", 0.0) == 0.0  # its cosine is no cosine: nothing adds to it
    assert max(ranked, key=lambda k: ranked[k]) == "answer"
    index.close()


def test_a_nan_vector_leaves_the_other_values_measured(tmp_path: Path) -> None:
    for sync in ("all", "few"):
        index = _with(tmp_path / sync, "def overflow_fn(x):\n    return x")
        if sync == "few":  # the same, computed a few at a time in SQL (a recall's sync)
            index.conn.execute("UPDATE hub_scores SET value = NULL")
            index.db.set_meta(hubs.DONE, None)
            index.conn.commit()
            index.sync(embed="auto")
        got = _values(index)
        assert "odd" not in got and len(got) == 14
        assert all(v is not None and np.isfinite(v) for v in got.values())
        assert index.db.meta(hubs.MEAN) is not None and index.db.meta(hubs.DONE) == "1"
        ranked = [mid for mid, _ in index.search(planted.QUESTION, limit=5).channels.vector or ()]
        assert ranked[0] == "answer"
        index.close()


class Dying(planted.Planted):
    """The planted vectors; with MEMGIT_TEST_DIE set, the process ends (as a killed hook does)
    when asked to embed a text that says "dies_here"; 8-d."""

    def embed(self, texts: Sequence[str]) -> Any:
        if os.environ.get("MEMGIT_TEST_DIE") and any("dies_here" in t for t in texts):
            os._exit(3)
        return super().embed(texts)


DYING = f"{__name__}:Dying"


@pytest.mark.parametrize("then", ["the rest embedded", "passages marked done"])
def test_vectors_another_process_stored_without_their_values_get_them(tmp_path: Path, then: str) -> None:
    index = planted.build(tmp_path)  # every value computed (`DONE`)
    root = tmp_path / "repo"
    index.close()
    store = Store(root / ".memory")
    for i in range(32):  # the first batch: stored, then the process ends before the values
        store.write(Memory(id=f"more-{i:02d}", title=f"m{i}", body=f"def more_{i}(x):\n    return x",
                           path=f"more-{i:02d}.md"))
    late = "def dies_here(x):\n    " + "y = x\n    " * 40 + "return y"
    store.write(Memory(id="late", title="late", body=late, path="late.md"))  # the longest: the second batch
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
            "from memgit.index.index import Index; from memgit.store.folder import Store; "
            "root = Path(sys.argv[2]); Index(root / 'git' / 'memgit' / 'index.db', Store(root / '.memory'), "
            "sys.argv[3], warn=lambda m: None).sync(embed='auto')")
    died = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent.parent), str(root), DYING],
                          env={**os.environ, "MEMGIT_TEST_DIE": "1"}, capture_output=True, text=True,
                          check=False)
    assert died.returncode == 3, died.stderr
    if then == "passages marked done":  # as the next sync of a memgit from before the values leaves it
        (root / ".memory" / "late.md").unlink()
        conn = sqlite3.connect(root / "git" / "memgit" / "index.db")
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('passages_titles_done', '1')")
        conn.commit()
        conn.close()
    again = _index(root, DYING)
    assert again.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 14 + 32
    again.sync(embed="auto")  # a recall's: looks at what the other stored (and embeds "late")
    got = _values(again)
    assert len(got) == 14 + 32 + (then == "the rest embedded") and all(v is not None for v in got.values())
    assert again.db.meta(hubs.DONE) == "1"
    again.close()


def test_code_remembered_as_it_is_is_a_code_memory(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".memory").mkdir(parents=True)
    store = Store(root / ".memory")
    texts = {f"helper-{i:02d}": f"def helper_{i}(x):\n    return wrap(x, {i})" for i in range(12)}
    texts.update({"hub": "def generic_helper(x):\n    return x", "answer": planted.ANSWER})
    for mid, text in texts.items():  # as `memgit remember` (CLI, MCP) keeps pasted code: first line, title
        title, body = split_title(text, None)
        store.write(Memory(id=mid, title=title, body=body, path=f"{mid}.md"))
    assert split_title(planted.ANSWER, None)[0] == "def parse_ledger(path):"
    assert not hubs.is_code(split_title(planted.ANSWER, None)[1])
    index = _index(root, planted.EMBEDDER)
    index.sync(embed="all")
    got = _values(index)
    assert len(got) == 14 and all(v is not None for v in got.values())
    ranked = [mid for mid, _ in index.search(planted.QUESTION, limit=5).channels.vector or ()]
    assert ranked[0] == "answer"
    index.close()
    assert hubs.is_code_memory("class names should be PascalCase", "They are.") is False


def test_a_sync_computes_the_values_of_what_it_embedded_itself(tmp_path: Path) -> None:
    index = planted.build(tmp_path)
    index.close()
    root = tmp_path / "repo"
    store = Store(root / ".memory")
    for i in range(hubs.FEW_MAX + 8):  # noted by the trigger, but this process's own: not another's
        store.write(Memory(id=f"more-{i:02d}", title=f"m{i}", body=f"def more_{i}(x):\n    return x",
                           path=f"more-{i:02d}.md"))
    path = root / "git" / "memgit" / "index.db"
    again = Index(path, store, planted.EMBEDDER, warn=lambda m: None, background=True)
    with embedjob.hold(path) as mine:  # no background job could compute them meanwhile
        assert mine
        again.sync(embed="auto")
        got = _values(again)
        assert len(got) == 14 + hubs.FEW_MAX + 8 and all(v is not None for v in got.values())
    again.close()
