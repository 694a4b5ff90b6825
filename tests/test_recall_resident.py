"""The stored vectors and keyword postings a recalling process keeps (`memgit.index.resident`,
`memgit.index.postings`) answer exactly as the SQL does, and never from a store that has
changed since they were read.

Each check runs the same recall twice in one process: once with what the process keeps
(`Index.resident`), once with it off (`Index.resident = None`, every stage in SQL), and
compares ids, scores, relevance, channel strengths and passages. The store is small, so the
thresholds past which the vector stages shortlist by hamming distance are lowered to 10 here
(at their real values a store this small is scanned exactly and nothing is kept).

Vectors come from `HashEmbedder`, a stand-in (no model): a unit vector seeded by the text's
hash, so a query that is a memory's embedded text finds that memory at distance 0: what was
kept of a changed store would miss it, or find the old one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import memgit
from memgit.index import channels, passages, resident
from memgit.index.vectors import embed_text
from memgit.memory.format import Memory

from .hash_embedder import EMBEDDER

ROOT = Path(__file__).resolve().parent.parent


QUERIES = [f"how do we handle topic {n}" for n in range(6)] + ["retry backoff", "mod_3.py gives up"]


def note(i: int, body: str | None = None) -> Memory:
    lines = [f"Line {j} of note {i}: the module mod_{j}.py retries {j} times before it gives up."
             for j in range(12)] if i % 3 == 0 else [f"A short note {i} about topic {i % 6}."]
    return Memory(id=f"m-{i:03d}", title=f"Note {i} on topic {i % 6}", body=body or "\n".join(lines),
                  path=f"n{i:03d}.md")


@pytest.fixture
def store(repo: Path, mem: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", EMBEDDER)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    monkeypatch.setattr(channels, "VECTOR_EXACT_MAX", 10)
    monkeypatch.setattr(passages, "EXACT_MAX", 10)
    for i in range(60):
        mem.store.write(note(i))
    opened = memgit.open(repo, warn=lambda message: None)
    opened.index.sync(embed="all")
    assert opened.index.vectors.pending() == 0
    return opened


def answers(mem: Any, query: str) -> tuple[list[tuple[Any, ...]], Any]:
    hits = mem.recall(query, k=10)
    found = mem.index.search(query, limit=50)
    return ([(h.id, h.score, h.relevance, sorted(h.channels.items()), h.passage) for h in hits],
            (found.channels.vector, found.channels.title, sorted(found.passages.items()),
             found.channels.keyword))


def same_both_ways(mem: Any, queries: Sequence[str], answer: Callable[[Any, str], Any] = answers) -> list[Any]:
    """Each query's `answer` with what the process keeps, then with it off; they must agree."""
    kept = mem.index.resident
    out = []
    for query in queries:
        fast = answer(mem, query)
        mem.index.resident = None
        try:
            slow = answer(mem, query)
        finally:
            mem.index.resident = kept
        assert fast == slow, query
        out.append(fast)
    return out


def its_text(mem: Any, memory_id: str) -> str:
    """What the index embedded for a memory: a query of it finds it at distance 0."""
    indexed = mem.index.memory(memory_id)
    return embed_text(indexed.title, indexed.body)


def vector_ids(answer: Any) -> list[str]:
    return [mid for mid, _ in answer[1][0] or ()]


def used(mem: Any) -> None:
    """Both vector tables were kept (bits and floats) and the keyword channel's postings, so
    the comparison covered the kept paths."""
    tables = mem.index.resident.tables
    assert set(tables) == {"vector_bits", "passage_bits"}
    assert all(t.kept and t.floats is not None for t in tables.values())
    assert mem.index.resident.postings.terms


def test_the_kept_vectors_answer_as_the_sql_does(store: Any) -> None:
    first = same_both_ways(store, QUERIES)
    used(store)
    assert any(answer[1][2] for answer in first)  # passages lifted some memories
    assert same_both_ways(store, QUERIES) == first  # and again, from what was kept


def test_a_process_that_recalls_once_keeps_nothing(store: Any) -> None:
    store.recall(QUERIES[0])
    assert not store.index.resident.tables and not store.index.resident.postings.terms
    store.recall(QUERIES[1])
    used(store)


def test_the_shortlist_alone_answers_as_the_sql_does(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resident, "MAX_FLOAT_BYTES", 0)  # the bits kept, the cosines read in SQL
    same_both_ways(store, QUERIES)
    assert all(t.kept and t.floats is None for t in store.index.resident.tables.values())


def test_an_in_place_edit_and_a_delete_are_seen(store: Any) -> None:
    same_both_ways(store, QUERIES)
    used(store)
    edited = note(3, body="The retry budget is now read from settings.\n" + "More detail here. " * 60)
    store.store.write(edited)
    store.index.refresh([edited.id])
    store.index.sync(embed="all")
    assert store.index.memory(edited.id).body.startswith("The retry budget")
    (answer,) = same_both_ways(store, [its_text(store, edited.id)])
    assert vector_ids(answer)[0] == edited.id
    gone = note(6)
    text = its_text(store, gone.id)
    (store.store.root / gone.path).unlink()
    store.index.refresh([gone.id])
    (answer,) = same_both_ways(store, [text, *QUERIES])[:1]
    assert gone.id not in vector_ids(answer)


def test_a_write_by_another_process_is_seen(repo: Path, store: Any) -> None:
    same_both_ways(store, QUERIES)
    used(store)
    added = note(100, body="Deploys go out on Tuesdays only.\n" + "Why we chose it. " * 60)
    store.store.write(added)
    # Another process indexes and embeds it: this one's own sync then has nothing to write.
    script = "import sys, memgit; m = memgit.open(sys.argv[1], warn=lambda m: None); m.index.sync(embed='all')"
    subprocess.run([sys.executable, "-c", script, str(repo)], check=True, env=os.environ.copy())
    (answer,) = same_both_ways(store, [its_text(store, added.id)])
    assert vector_ids(answer)[0] == added.id
    # And another `memgit.open` in this process (its own connection).
    other = memgit.open(repo, warn=lambda message: None)
    later = note(101, body="Releases are tagged by the CI job.\n" + "The job's name. " * 60)
    store.store.write(later)
    other.index.sync(embed="all")
    (answer,) = same_both_ways(store, [its_text(store, later.id)])
    assert vector_ids(answer)[0] == later.id


def test_a_reindex_is_seen(store: Any) -> None:
    same_both_ways(store, QUERIES)
    used(store)
    before = {t: v.docs.tolist() for t, v in store.index.resident.tables.items()}
    texts = [its_text(store, f"m-{i:03d}") for i in (1, 9, 12)]
    for i in range(0, 60, 2):  # half the memories go, so the reindex numbers the rest anew
        (store.store.root / note(i).path).unlink()
    store.reindex()
    answers_after = same_both_ways(store, texts)
    assert vector_ids(answers_after[0])[0] == "m-001"
    assert vector_ids(answers_after[1])[0] == "m-009"
    assert "m-012" not in vector_ids(answers_after[2])
    assert {t: v.docs.tolist() for t, v in store.index.resident.tables.items()} != before
