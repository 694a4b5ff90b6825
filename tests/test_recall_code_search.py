"""Code memories searched by meaning: generic code near every question counts less (hubness).

Real repositories and real SQLite; the embedder is a stand-in loaded through memgit's own
`module:attr` plug-in interface that plants each text's vector by a marker word in it, so a
test can build a crowd of generic functions around one direction, a hub at its centre, and a
specific function a query is a little further from than from the crowd.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memgit
from memgit.index import embedjob, hubs
from memgit.index.index import Index
from memgit.memory.format import Memory
from memgit.store.folder import Store

from .hookwatch import wait_until

DIM = 8
_CROWD = np.eye(DIM, dtype=np.float32)[0]  # where every generic helper lies
_SPECIFIC = np.eye(DIM, dtype=np.float32)[1]  # the one function that answers
#: The question: a shade nearer the crowd (cosine 0.70) than the answer (0.69).
_QUERY = np.array([0.70, 0.69, (1 - 0.70**2 - 0.69**2) ** 0.5, 0, 0, 0, 0, 0], dtype=np.float32)
QUESTION = "quarterly totals of the accounts book"


def _unit(vector: Any) -> Any:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def _planted(text: str) -> Any:
    if QUESTION in text:
        return _unit(_QUERY)
    if "parse_ledger" in text:
        return _unit(_SPECIFIC)
    if "generic_helper" in text:
        return _unit(_CROWD)
    found = re.search(r"helper_(\d+)", text)
    rng = np.random.default_rng(int(found.group(1)) if found else sum(text.encode()))
    if found:  # the crowd: the helper's direction, a little noise away from the question's plane
        noise = np.zeros(DIM, dtype=np.float32)
        noise[3:] = rng.normal(size=DIM - 3) * 0.05
        return _unit(_CROWD + noise)
    return _unit(rng.normal(size=DIM))


class Planted:
    """Each text's vector planted by a marker word in it (see the module docstring); 8-d."""

    id = "planted-hubs"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> Any:
        return np.stack([_planted(t) for t in texts])

    def embed_query(self, text: str) -> Any:
        return _planted(text)


PLANTED = Planted()
EMBEDDER = f"{__name__}:PLANTED"

ANSWER = "def parse_ledger(path):\n    rows = read_rows(path)\n    return sum_by_quarter(rows)"


def write_code(store: Store, helpers: int = 12, prose: int = 0) -> None:
    for i in range(helpers):
        store.write(Memory(id=f"helper-{i:02d}", title=f"helper_{i}",
                           body=f"def helper_{i}(x):\n    return wrap(x, {i})", path=f"helper-{i:02d}.md"))
    store.write(Memory(id="hub", title="generic_helper", body="def generic_helper(x):\n    return x",
                       path="hub.md"))
    store.write(Memory(id="answer", title="parse_ledger", body=ANSWER, path="answer.md"))
    for i in range(prose):
        store.write(Memory(id=f"note-{i}", title=f"Note {i}", body=f"We agreed on release train {i}.",
                           path=f"note-{i}.md"))


def build(tmp_path: Path, **kwargs: int) -> Index:
    folder = tmp_path / "repo" / ".memory"
    folder.mkdir(parents=True)
    write_code(Store(folder), **kwargs)
    index = Index(tmp_path / "repo" / "git" / "memgit" / "index.db", Store(folder), EMBEDDER, warn=lambda m: None)
    index.sync(embed="all")
    return index


def made_before(index: Index) -> Path:
    """`index` closed and made as a memgit without hubness values left it; its path."""
    path = index.db.path
    assert path is not None
    index.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER IF EXISTS memgit_hub_todo")
    conn.execute("DROP TABLE IF EXISTS hub_todo")
    conn.execute("DROP TABLE hub_scores")
    conn.execute("DELETE FROM meta WHERE key LIKE 'hub%'")
    conn.commit()
    conn.close()
    return path


def values(index: Index) -> dict[str, float | None]:
    return dict(index.conn.execute(
        "SELECT m.id, h.value FROM hub_scores h JOIN memories m ON m.doc = h.doc").fetchall())


def test_is_code_wants_a_definition_first() -> None:
    for body in ("def parse(x):\n    return x", "class Cache:\n    pass", "@property\ndef size(self):",
                 "```python\nasync def load(url):\n```", "export async function load(url) {",
                 "func (s *Server) Serve() error {", "pub fn main() {", "struct Point {\n  x: i32\n}", "def été(x):"):
        assert hubs.is_code(body), body
    for body in ("class names should be PascalCase", "function calls are awaited here",
                 "We use `def` for helpers:\n\ndef helper(x):", "", "Definitions: see parse()"):
        assert not hubs.is_code(body), body


def test_the_vector_channel_puts_the_specific_function_above_the_crowd(tmp_path: Path) -> None:
    index = build(tmp_path, prose=3)
    got = values(index)
    assert got["note-0"] is None and got["note-2"] is None  # memories in words get no value
    assert got["hub"] is not None and got["answer"] is not None
    assert got["hub"] > got["helper-00"] - 0.01 and got["answer"] < 0.2 < got["hub"]
    ranked = [mid for mid, _ in index.search(QUESTION, limit=5).channels.vector or ()]
    assert ranked[0] == "answer", ranked  # on cosine alone it was behind all 13 of the crowd
    index.close()


def test_recall_answers_with_it_and_too_few_code_memories_change_nothing(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", EMBEDDER)
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        write_code(Store(repo / ".memory"), helpers=5)  # 7 code memories: no neighbourhood to judge
        mem.reindex()
        hits = mem.recall(QUESTION, k=3, min_score=0, record=False)
        assert hits[0].id != "answer"
        assert mem.index.db.meta(hubs.MEAN) is None
        write_code(Store(repo / ".memory"), helpers=12)  # now 14: the crowd is measured
        hits = mem.recall(QUESTION, k=3, min_score=0, record=False)
        assert hits[0].id == "answer", [h.id for h in hits]


def test_an_index_made_before_gets_its_values_on_the_next_recall(tmp_path: Path) -> None:
    path = made_before(build(tmp_path))
    store = Store(tmp_path / "repo" / ".memory")
    again = Index(path, store, EMBEDDER, warn=lambda m: None)
    embedded = again.conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    again.sync(embed="auto")  # a recall's sync: nothing to embed, the values are computed
    assert again.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == embedded
    assert len([v for v in values(again).values() if v is not None]) == 14
    assert again.db.meta(hubs.DONE) == "1"
    ranked = [mid for mid, _ in again.search(QUESTION, limit=5).channels.vector or ()]
    assert ranked[0] == "answer"
    again.close()


def test_a_changed_memory_is_measured_again_and_a_deleted_one_forgotten(tmp_path: Path) -> None:
    index = build(tmp_path)
    folder = tmp_path / "repo" / ".memory"
    before = values(index)["helper-03"]
    Store(folder).write(Memory(id="helper-03", title="helper_3", body="We stopped using this helper.",
                               path="helper-03.md"))
    (folder / "helper-04.md").unlink()
    index.sync(embed="auto")
    got = values(index)
    assert before is not None and got["helper-03"] is None  # no longer code
    assert "helper-04" not in got
    assert index.db.meta(hubs.DONE) == "1"
    index.close()


def test_a_hooks_sync_computes_a_bounded_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hubs, "AUTO_MAX", 5)
    index = build(tmp_path)
    index.conn.execute("DELETE FROM hub_scores")
    index.db.set_meta(hubs.DONE, None)
    index.conn.commit()
    index.sync(embed="auto")
    valued = [v for v in values(index).values() if v is not None]
    assert len(valued) == 5 and index.db.meta(hubs.DONE) is None
    for _ in range(2):
        index.sync(embed="auto")
    assert len([v for v in values(index).values() if v is not None]) == 14 and index.db.meta(hubs.DONE) == "1"
    index.close()


def test_a_few_values_computed_in_sql_match_all_computed_at_once(tmp_path: Path) -> None:
    index = build(tmp_path)
    at_once = values(index)
    index.conn.execute("UPDATE hub_scores SET value = NULL WHERE doc IN (SELECT doc FROM hub_scores LIMIT 4)")
    index.conn.commit()
    hubs.refresh(index.conn, index.db.meta, index.db.set_meta, limit=hubs.AUTO_MAX)  # 4 <= FEW_MAX: in SQL
    index.conn.commit()
    again = values(index)
    assert again.keys() == at_once.keys()
    assert all(abs((again[k] or 0) - (at_once[k] or 0)) < 1e-5 for k in at_once)
    index.close()


def test_a_hooks_sync_leaves_an_older_index_s_values_to_the_background_job(tmp_path: Path) -> None:
    path = made_before(build(tmp_path, helpers=hubs.FEW_MAX + 10))  # more than a sync computes itself
    store = Store(tmp_path / "repo" / ".memory")
    again = Index(path, store, EMBEDDER, warn=lambda m: None, background=True)  # as `memgit.open` does
    with embedjob.hold(path) as mine:  # a job already running: none is started, none computes
        assert mine
        again.sync(embed="auto")
        assert not hubs.exists(again.conn) or not [v for v in values(again).values() if v is not None]
    again.sync(embed="auto")  # the job is started, and computes every value
    wait_until(lambda: again.db.meta(hubs.DONE) == "1", "the background job did not compute the values")
    assert len([v for v in values(again).values() if v is not None]) == hubs.FEW_MAX + 12
    assert again.db.meta(hubs.MEAN) is not None  # what the vector channel reads
    again.close()
