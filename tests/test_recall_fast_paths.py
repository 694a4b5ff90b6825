"""What a long-lived process keeps to recall faster, and that it never answers from a changed store.

- `memgit.recall.coverage` keeps each candidate's tokens (`Resident.tokens`), under the stamp of
  FTS5's row lengths: the answers must be the SQL's (`Index.resident = None`, what a hook or a
  CLI call runs) after an edit in place, a delete, another process's write and a reindex.
- A long-lived process (`Index(keep=True)`) asks the embedder for 2 intra-op threads
  (`use_threads`); a hook or CLI call (`warm=True`: keeps nothing) does not; MiniLM's vectors
  are the same bit for bit either way.
- `Workspace.held()` looks at the settings' files once per recall; a change between two
  recalls is still seen.

Keywords only except where the embedder is the point (`HashEmbedder`, a stand-in: no model).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

import memgit
from memgit.index import vectors as vectors_mod
from memgit.memory.format import Memory
from memgit.recall import coverage

from . import test_recall_resident as resident_tests
from .hash_embedder import HashEmbedder

ROOT = Path(__file__).resolve().parent.parent

#: Queries that name code (`memgit.recall.adaptive`: "identifier" or "mixed"), so coverage runs.
QUERIES = ["why does `parse_config` return a tuple for retry_limit?",
           "load_cache misses after warm_start in src/cache.py",
           "parse_config retry_limit"]


def note(i: int, body: str | None = None) -> Memory:
    """Notes 0-39 short (their tokens come from the keyword channel's postings), 40-43 longer
    than the text coverage reads (`coverage.BODY_CHARS`: their tokens are read and kept), with a
    name past it that coverage does not see."""
    names = ["parse_config", "retry_limit", "load_cache", "warm_start", "tuple"]
    held = " and ".join(names[j % 5] for j in range(i % 5 + 1 if i < 40 else 5))
    text = f"In src/cache.py the code uses {held}; see note {i}."
    if i >= 40:
        text += "\n" + "filler words about nothing in particular " * 300 + "\nwarm_start past what coverage reads"
    return Memory(id=f"m-{i:03d}", title=f"Note {i} on {names[i % 5]}", body=body or text, path=f"n{i:03d}.md")


@pytest.fixture
def store(repo: Path, mem: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "none")
    for i in range(44):
        mem.store.write(note(i))
    opened = memgit.open(repo, warn=lambda message: None)
    opened.index.sync()
    yield opened
    opened.close()


def answers(mem: Any, query: str) -> list[tuple[Any, ...]]:
    return [(h.id, h.score, h.relevance, sorted(h.channels.items())) for h in mem.recall(query, k=50, record=False)]


def same_both_ways(mem: Any) -> list[list[tuple[Any, ...]]]:
    """Each query's answers with what the process keeps, then with it off; they must agree,
    and coverage must have run on the kept tokens."""
    out = resident_tests.same_both_ways(mem, QUERIES, answers)
    for query, fast in zip(QUERIES, out):
        assert any(dict(channels).get("coverage") for *_, channels in fast), query
    assert mem.index.resident.row_tokens, "coverage read no candidate into what the process keeps"
    kept_tokens_are_the_rows(mem)
    return out


def kept_tokens_are_the_rows(mem: Any) -> None:
    """Every row's tokens kept for coverage are those of its text in the index now."""
    kept = mem.index.resident.row_tokens
    with mem.index.db.snapshot() as conn:
        id_of = dict(conn.execute("SELECT doc, id FROM memories"))
        docs = [doc for doc in kept if doc in id_of]
        coverage._fill(conn, [id_of[doc] for doc in docs])
        now: dict[int, set[str]] = {}
        for doc, token in conn.execute("SELECT DISTINCT doc, term FROM temp.coverage_vocab"):
            now.setdefault(doc, set()).add(token)
    assert docs
    assert {doc: kept[doc] for doc in docs} == {doc: frozenset(now.get(doc, ())) for doc in docs}


def ids(found: list[tuple[Any, ...]]) -> list[str]:
    return [row[0] for row in found]


def covered(found: list[tuple[Any, ...]], mid: str) -> float:
    return next((dict(row[3]).get("coverage", 0.0) for row in found if row[0] == mid), -1.0)


def test_kept_tokens_answer_as_the_sql(store: Any) -> None:
    first = same_both_ways(store)
    assert same_both_ways(store) == first  # the second time from what is kept, the same


EDITED = ("m-004", "m-040")  # a short note and a long one, each holding every name of the first query


def lower_coverage(before: list[list[tuple[Any, ...]]], after: list[list[tuple[Any, ...]]]) -> None:
    assert 0 < covered(after[0], "m-004") < covered(before[0], "m-004")
    assert covered(after[0], "m-040") < covered(before[0], "m-040") == 1.0  # may leave the lifted top


def test_an_edit_in_place_is_seen(store: Any) -> None:
    before = same_both_ways(store)
    for mid in EDITED:  # same folder mtime: in place
        path = store.workspace.memory_dir / f"n{mid[2:]}.md"
        path.write_text(path.read_text().replace("parse_config", "something_else"))
    lower_coverage(before, same_both_ways(store))


def test_a_delete_is_seen_and_its_row_number_given_again(store: Any) -> None:
    """The last row deleted, then a new memory: SQLite gives it the deleted row's number, and
    the tokens kept for that number are the deleted memory's."""
    before = same_both_ways(store)
    assert "m-043" in ids(before[0])  # a long note, holding every name
    (store.workspace.memory_dir / "n043.md").unlink()
    after = same_both_ways(store)
    assert all("m-043" not in ids(found) for found in after)
    doc = store.index.conn.execute("SELECT max(doc) FROM memories").fetchone()[0]
    store.store.write(note(99, "In src/cache.py a parse_config note with few of the names."))
    store.index.sync()
    assert store.index.conn.execute("SELECT doc FROM memories WHERE id = 'm-099'").fetchone()[0] == doc + 1
    again = same_both_ways(store)  # what was kept for that row number would lift it first
    assert covered(again[0], "m-099") < 1


def test_another_process_write_is_seen(store: Any, repo: Path) -> None:
    """Another process edits memories and indexes them: this process's files check finds
    nothing new (the index already holds the change), only the stamp says the rows moved."""
    before = same_both_ways(store)
    script = ("import memgit, sys\n"
              "m = memgit.open(sys.argv[1], warn=lambda s: None)\n"
              "for name in sys.argv[2:]:\n"
              "    p = m.workspace.memory_dir / name\n"
              "    p.write_text(p.read_text().replace('parse_config', 'other_name'))\n"
              "m.index.sync()\n")
    subprocess.run([sys.executable, "-c", script, str(repo), *(f"n{mid[2:]}.md" for mid in EDITED)],
                   check=True, cwd=repo, env={**os.environ, "PYTHONPATH": str(ROOT)})
    lower_coverage(before, same_both_ways(store))


def test_a_reindex_between_two_recalls_is_seen(store: Any) -> None:
    """A reindex reads every file again and writes every changed row, in this process."""
    before = same_both_ways(store)
    folder = store.workspace.memory_dir
    (folder / "n001.md").unlink()
    for mid in EDITED:
        path = folder / f"n{mid[2:]}.md"
        path.write_text(path.read_text().replace("parse_config", "other_name"))
    store.reindex()
    after = same_both_ways(store)
    assert all("m-001" not in ids(found) for found in after)
    lower_coverage(before, after)


# -- the embedder's threads ------------------------------------------------------------------


class CountingEmbedder(HashEmbedder):
    """The tests' stand-in embedder, noting the threads it is asked for (no model)."""

    asked: ClassVar[list[int]] = []

    def use_threads(self, threads: int) -> None:
        CountingEmbedder.asked.append(threads)


def recall_with(repo: Path, *, warm: bool) -> list[int]:
    CountingEmbedder.asked = []
    opened = memgit.open(repo, warn=lambda message: None, warm=warm)
    try:
        opened.recall("parse_config retry_limit", record=False)
        assert opened.index.vectors.on
        return list(CountingEmbedder.asked)
    finally:
        opened.close()


def test_a_long_lived_process_asks_for_two_threads_a_short_call_for_none(
        store: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", f"{__name__}:CountingEmbedder")
    monkeypatch.setenv("MEMGIT_INDEX_WARM", "0")  # a short call embeds in its own process here
    store.index.close()
    memgit.open(repo, warn=lambda message: None).index.sync(embed="all")
    assert recall_with(repo, warm=False) == [vectors_mod.QUERY_THREADS] == [2]
    assert recall_with(repo, warm=True) == []  # a hook or CLI call: one thread, as before


class RefusingEmbedder(HashEmbedder):
    """A plug-in whose `use_threads` fails (no model)."""

    def use_threads(self, threads: int) -> None:
        raise RuntimeError("no threads here")


def test_an_embedder_that_refuses_threads_still_recalls_with_vectors(
        store: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", f"{__name__}:RefusingEmbedder")
    store.index.close()
    said: list[str] = []
    opened = memgit.open(repo, warn=said.append)
    try:
        opened.index.sync(embed="all")
        hits = opened.recall("parse_config retry_limit", record=False)
        assert hits and hits.how.vectors.used
        assert any("keeps its own threads (no threads here)" in line for line in said), said
    finally:
        opened.close()


def test_minilm_embeds_the_same_on_two_threads() -> None:
    embedders = pytest.importorskip("memgit.index.embedders")
    if not embedders.embedder_available("minilm")[0]:
        pytest.skip("the MiniLM model is not installed")
    one, two = embedders.load_embedder("minilm"), embedders.load_embedder("minilm")
    two.use_threads(2)
    texts = ["why does parse_config return a tuple?", "src/memgit/index/vectors.py::Vectors.prefetch",
             "a longer question " * 20, ""]
    for text in texts:
        assert one.embed_query(text).tobytes() == two.embed_query(text).tobytes(), text
    assert one.embed(texts).tobytes() == two.embed(texts).tobytes()
    assert two._session.get_session_options().intra_op_num_threads == 2


# -- the settings, looked at once per recall -------------------------------------------------


def test_settings_are_looked_at_once_inside_held_and_again_after(store: Any) -> None:
    ws = store.workspace
    config_file = ws.memory_dir / "config.toml"
    assert ws.config.recall_k == 5
    with ws.held():
        assert ws.config.recall_k == 5
        config_file.write_text("[recall]\nk = 2\n")
        assert ws.config.recall_k == 5  # one recall sees one set of settings
    assert ws.config.recall_k == 2
    assert len(store.recall("parse_config retry_limit", record=False)) == 2
    config_file.write_text("[recall]\nk = 3\n")
    assert len(store.recall("parse_config retry_limit", record=False)) == 3  # the next recall sees it
