"""Recall rules for questions in words: query-term coverage rewards holding all a query says,
not a part of it (memgit.recall.coverage); a question of several sentences is also searched by
meaning sentence by sentence, embedded with the whole on its thread (memgit.recall.sentences).

Real repositories and real SQLite; keywords only where vectors are not the point, else the
hashed-words stand-in of tests/gated_embedder.py through memgit's `module:attr` plug-in
interface (it counts its calls, to show what is embedded in one call).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import memgit
from memgit.index.ranking import Ranked
from memgit.recall import coverage, sentences

from .gated_embedder import _vector

#: Names one identifier; the rest is the asker's own words.
MIXED = "why does `parse_config` get slow when the cache folder sits on a network drive and times out"


def _coverage_store(repo: Path) -> memgit.Memgit:
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    fillers = [{"id": f"filler-{i}", "title": f"Module {i} notes",
                "body": f"Module {i} formats dates as ISO strings and option values as text."}
               for i in range(12)]
    mem.import_jsonl([json.dumps(m) for m in [
        {"id": "full", "title": "parse_config on network drives",
         "body": "parse_config gets slow when the cache folder sits on a network drive: each stat "
                 "waits on the drive and the call times out. Keep the cache local."},
        {"id": "partial", "title": "Mapped drives",
         "body": "Mapped network paths show up under a drive letter."},
        {"id": "other", "title": "Release checklist", "body": "Tag, build wheels, upload, announce."},
        *fillers,
    ]])
    return mem


def test_coverage_lifts_a_memory_holding_all_the_query_says_over_one_holding_a_part(repo: Path) -> None:
    mem = _coverage_store(repo)
    index = mem.workspace.index
    index.sync(embed="none")
    probe = {r.id: r.channels.get("coverage", 0.0) for r in coverage.lift(
        index, MIXED, [Ranked(mid, 0.1, 0.1, {}) for mid in ("full", "partial", "other")])}
    share = probe["partial"]
    assert probe["full"] == pytest.approx(1.0) and 0.05 < share < 0.3 and probe["other"] == 0.0
    # "other" leads "partial" by less than a linear lift of a fifth of the share would make up
    # (0.2 * share), by more than what holding a part of the query earns now; "full" trails by 0.3.
    gap = 0.18 * share
    ranked = [Ranked("other", 0.5, 0.5, {}), Ranked("partial", 0.5 - gap, 0.5 - gap, {}),
              Ranked("full", 0.2, 0.2, {})]
    lifted = coverage.lift(index, MIXED, ranked)
    assert [r.id for r in lifted] == ["full", "other", "partial"]
    # Only the order changes: relevance stays what the channels said.
    assert {r.id: r.relevance for r in lifted} == {r.id: r.relevance for r in ranked}
    assert all(0.0 <= r.score <= 1.0 for r in lifted)


# -- questions of several sentences (memgit.recall.sentences) ---------------------------------


class CountingHashed:
    """Bag of hashed words (64-d, tests/gated_embedder.py) that counts its calls: `embed_queries`
    takes several queries in one call, as the bundled model does."""

    id = "hashed-sentences"
    dim = 64

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[Any]:
        return [_vector(text) for text in texts]

    def embed_query(self, text: str) -> Any:
        self.calls.append([text])
        return _vector(text)

    def embed_queries(self, texts: Sequence[str]) -> list[Any]:
        self.calls.append(list(texts))
        return [_vector(text) for text in texts]


COUNTING = CountingHashed()

#: Two sentences: the first about the export job, the second asks which retry setting was raised.
TWO = "nightly export job keeps timing out on staging box. which retry setting did we raise last time?"
RETRY = "which retry setting did we raise last time?"


def _sentence_store(repo: Path, monkeypatch: pytest.MonkeyPatch) -> memgit.Memgit:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", f"{__name__}:COUNTING")
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    fillers = [{"id": f"filler-{i}", "title": f"Module {i} notes",
                "body": f"Module {i} formats dates as ISO strings and option values as text."}
               for i in range(8)]
    mem.import_jsonl([json.dumps(m) for m in [
        {"id": "answer", "title": "Upload retries", "body": "which retry setting did we raise last time? uploads: 5"},
        {"id": "job", "title": "Export job", "body": "nightly export job keeps timing out on staging box."},
        *fillers,
    ]])
    mem.reindex()
    return mem


@pytest.mark.parametrize(("query", "expected"), [
    (TWO, ["nightly export job keeps timing out on staging box.", RETRY]),
    ("Why does `Config.getini` return Any? The checker infers a huge union otherwise.",
     ["Why does `Config.getini` return Any?", "The checker infers a huge union otherwise."]),
    ("a; b; c d e. f g h", []),                                  # too few words in each
    ("how to add a ? in python url", []),                      # a "?" after a space ends nothing
    ("Which CI platform (e.g. GitHub Actions) runs the nightly build?", []),  # "e.g." ends nothing
    ("one two three. four five six. seven eight nine. ten eleven twelve. thirteen fourteen fifteen",
     ["one two three.", "four five six.", "seven eight nine.", "ten eleven twelve."]),  # the first four
    ("Fix the flaky test now. Fix the flaky test now.", []),  # one sentence twice is one sentence
    ("", []),
])
def test_split_keeps_substantive_sentences_of_questions_of_two_or_more(query: str, expected: list[str]) -> None:
    assert sentences.split(query) == expected


def test_each_sentence_is_searched_by_meaning_and_embedded_in_one_call_with_the_query(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = _sentence_store(repo, monkeypatch)
    mem.recall("warm up the model", k=1, min_score=0, record=False)  # the embedder is loaded: prefetch runs
    COUNTING.calls.clear()
    hits = mem.recall(TWO, k=3, min_score=0, record=False)
    assert hits.how is not None and hits.how.vectors.state == "used"
    # One call to the model for the whole question and both its sentences.
    assert COUNTING.calls == [[TWO, "nightly export job keeps timing out on staging box.", RETRY]]
    strengths = {h.id: h.channels.get("vector", 0.0) for h in hits}
    # The memory that answers the second sentence gets the strength that sentence gives it.
    index = mem.workspace.index
    alone = dict(index.search(RETRY, limit=10).channels.vector or ())
    assert strengths["answer"] == pytest.approx(alone["answer"]) and alone["answer"] > 0.7
    whole = dict(index.search(TWO, limit=10).channels.vector or ())
    assert whole["answer"] < strengths["answer"] - 0.1
    # Asked again, nothing is embedded: the sentences' vectors are kept with the query's.
    COUNTING.calls.clear()
    assert [h.id for h in mem.recall(TWO, k=3, min_score=0, record=False)] == [h.id for h in hits]
    assert COUNTING.calls == []


def test_a_one_sentence_question_is_searched_as_before(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = _sentence_store(repo, monkeypatch)
    mem.recall("warm up the model", k=1, min_score=0, record=False)
    COUNTING.calls.clear()
    hits = mem.recall("nightly export job keeps timing out on staging box", k=3, min_score=0, record=False)
    assert COUNTING.calls == [["nightly export job keeps timing out on staging box"]]
    assert hits[0].id == "job"


def test_the_prompt_hooks_recall_searches_a_prompt_as_a_whole(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memgit.agents import briefing

    mem = _sentence_store(repo, monkeypatch)
    mem.recall("warm up the model", k=1, min_score=0, record=False)
    COUNTING.calls.clear()
    briefing.for_prompt(mem.workspace, TWO, task=None)
    assert COUNTING.calls == [[TWO]]  # runs on every prompt: no embedding per sentence
    COUNTING.calls.clear()
    mem.recall(TWO, k=3, min_score=0, record=False)
    # Recall proper does search by sentence: the question's vector is kept, its sentences are
    # embedded now, in one call.
    assert COUNTING.calls == [["nightly export job keeps timing out on staging box.", RETRY]]
