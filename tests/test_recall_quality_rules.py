"""Query-term coverage (memgit.recall.coverage): a query that names code ranks first the memory
that holds everything it names, over one that repeats one of its names.

Real repositories and real SQLite; the embedder is the hashed-words stand-in of
tests/gated_embedder.py, loaded through memgit's own `module:attr` plug-in interface, so all
four channels run as they do with the real model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import memgit
from memgit.recall import coverage

from .gated_embedder import _vector


class Hashed:
    """Bag of hashed words (64-d)."""

    id = "hashed-quality-rules"
    dim = 64

    def embed(self, texts: Sequence[str]) -> list[Any]:
        return [_vector(text) for text in texts]

    def embed_query(self, text: str) -> Any:
        return _vector(text)


HASHED = Hashed()

#: Names `Config.getini` and asks why its value is untyped for a linelist option: "answer" holds
#: every word of it once, in a long note; "repeats" holds the names again and again, and not
#: what is asked.
QUERY = "why does `Config.getini` return an untyped value for a linelist option?"


@pytest.fixture(autouse=True)
def hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", f"{__name__}:HASHED")


def _store(repo: Path) -> memgit.Memgit:
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    fillers = [{"id": f"filler-{i}", "title": f"Module {i} notes",
                "body": f"Module {i} formats dates as ISO strings and option values as text."}
               for i in range(12)]
    mem.import_jsonl([json.dumps(m) for m in [
        {"id": "answer", "title": "Ini settings come back without a type",
         "body": "Plugins register their own kinds of setting, bools, paths, lists of strings and "
                 "more, and a union of all of them would make each caller in the code base narrow "
                 "the result before use. So Config.getini does return an untyped value on purpose, "
                 "for a linelist option as for any other, and callers cast where they know what "
                 "they asked for. Revisit once plugins can declare their setting types."},
        {"id": "repeats", "title": "Config.getini splits linelist lines",
         "body": "Config.getini reads a linelist option value; Config.getini splits each linelist option value into linelist lines."},
        {"id": "mentions", "title": "Where ini settings are documented",
         "body": "The reference lists each setting that Config.getini reads."},
        *fillers,
    ]])
    mem.reindex()
    return mem


def test_a_query_naming_code_ranks_first_the_memory_holding_all_it_names(repo: Path) -> None:
    mem = _store(repo)
    hits = mem.recall(QUERY, k=3, min_score=0, record=False)
    assert hits.how is not None and hits.how.query_kind == "mixed"
    assert hits.how.vectors.state == "used"
    assert [h.id for h in hits][:2] == ["answer", "repeats"]
    assert hits[0].channels["coverage"] > hits[1].channels["coverage"] > 0
    # The order changes, never what counts as relevant: the relevance is the channels' own.
    assert all(0.0 <= h.score <= 1.0 for h in hits)


def test_coverage_leaves_relevance_and_plain_questions_alone(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = _store(repo)
    with_coverage = {h.id: h.relevance for h in mem.recall(QUERY, k=5, min_score=0, record=False)}
    question = mem.recall("which option values come back untyped from the ini file", k=5, min_score=0,
                          record=False)
    assert question.how is not None and question.how.query_kind == "question"
    assert all("coverage" not in h.channels for h in question)
    monkeypatch.setattr(coverage, "KINDS", ())
    without = {h.id: h.relevance for h in mem.recall(QUERY, k=5, min_score=0, record=False)}
    assert with_coverage == without
    # Without it, the memory that repeats the names (in its body and its title) comes first.
    assert [h.id for h in mem.recall(QUERY, k=2, min_score=0, record=False)] == ["repeats", "answer"]


@pytest.mark.parametrize("query", [
    'why does `Config.getini` say "NOT" AND (x OR y)* near: NEAR(a b)?',
    "`Config.getini` 的 返回值 为什么 没有 类型",
    "`Config.getini` the of and",
    "`src/unknown/never.py` zzqx wwpv",
])
def test_odd_queries_naming_code_still_recall(repo: Path, query: str) -> None:
    mem = _store(repo)
    hits = mem.recall(query, k=5, min_score=0, record=False)
    assert hits.how is not None and hits.how.query_kind in coverage.KINDS
    assert all(0.0 <= h.score <= 1.0 and 0.0 <= h.channels.get("coverage", 0.0) <= 1.0 for h in hits)
