"""Pseudo-relevance feedback from the best hits' anchors (memgit.recall.prf), and the keyword
channel's identifier words (memgit.index.fts.split_words).

Real repositories, memories imported in one commit, recall with keywords and anchors (the
vector channel is off, as in most tests), so what a memory is found by is plain to see.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import memgit
from memgit.index import fts
from memgit.index import sqlite as sq

LEDGER = "src/billing/ledger.py"


def _import(repo: Path, memories: list[dict]) -> memgit.Memgit:  # type: ignore[type-arg]
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    mem.import_jsonl([json.dumps(m) for m in memories])
    return mem


def _fillers(n: int) -> list[dict]:  # type: ignore[type-arg]
    return [{"id": f"filler-{i}", "title": f"Module {i} notes",
             "body": f"Module {i} formats dates as ISO strings.", "files": [f"src/other/mod{i}.py"]}
            for i in range(n)]


def _ledger_store(repo: Path) -> memgit.Memgit:
    return _import(repo, [
        {"id": "seed-a", "title": "Refunds post a reversing entry",
         "body": "A refund never deletes the charge: it posts a reversing entry.", "files": [LEDGER]},
        {"id": "seed-b", "title": "Partial refunds keep the original charge",
         "body": "A partial refund posts a reversing entry for the refunded amount only.", "files": [LEDGER]},
        {"id": "quiet", "title": "Balances are summed in integer cents",
         "body": "Floating point drifted by one cent on large accounts; sums use integer cents.",
         "files": [LEDGER]},
        *_fillers(16),
    ])


QUESTION = "how do we undo a refund when the customer was charged twice"


def test_a_question_reaches_a_memory_about_the_same_code_as_its_best_hits(repo: Path) -> None:
    mem = _ledger_store(repo)
    hits = mem.recall(QUESTION, k=5, min_score=0)
    assert hits.how is not None and hits.how.query_kind == "question"
    ids = [h.id for h in hits]
    # "quiet" shares no word with the question; both best hits are anchored where it is.
    assert ids[:2] == ["seed-b", "seed-a"] or ids[:2] == ["seed-a", "seed-b"]
    assert "quiet" in ids
    quiet = hits[ids.index("quiet")]
    assert "prf" in quiet.channels and set(quiet.channels) <= {"prf", "keyword", "anchor"}
    # Never above the hits it came from.
    assert quiet.score < min(h.score for h in hits if h.id.startswith("seed-"))
    # The relevance floor still applies: a memory found only by feedback has a relevance of
    # its own, below its seeds'.
    assert 0 < quiet.relevance < min(h.relevance for h in hits if h.id.startswith("seed-"))


def test_no_lift_when_the_best_hits_share_no_anchor(repo: Path) -> None:
    mem = _import(repo, [
        {"id": "seed-a", "title": "Refunds post a reversing entry",
         "body": "A refund never deletes the charge: it posts a reversing entry.", "files": [LEDGER]},
        {"id": "seed-b", "title": "Partial refunds keep the original charge",
         "body": "A partial refund posts a reversing entry for the refunded amount only.",
         "files": ["src/billing/partial.py"]},
        {"id": "quiet", "title": "Balances are summed in integer cents",
         "body": "Floating point drifted by one cent on large accounts; sums use integer cents.",
         "files": [LEDGER]},
        *_fillers(16),
    ])
    # The best hits share no anchor: nothing is lifted.
    assert "quiet" not in [h.id for h in mem.recall(QUESTION, k=5, min_score=0)]


def test_an_anchor_most_of_the_store_holds_lifts_nothing(repo: Path) -> None:
    common = [{**m, "files": [LEDGER]} for m in _fillers(6)]
    mem = _import(repo, [
        {"id": "seed-a", "title": "Refunds post a reversing entry",
         "body": "A refund never deletes the charge: it posts a reversing entry.", "files": [LEDGER]},
        {"id": "seed-b", "title": "Partial refunds keep the original charge",
         "body": "A partial refund posts a reversing entry for the refunded amount only.", "files": [LEDGER]},
        {"id": "quiet", "title": "Balances are summed in integer cents",
         "body": "Floating point drifted by one cent on large accounts.", "files": [LEDGER]},
        *common, *_fillers(3),
    ])
    # LEDGER is in 9 of 12 memories (above prf.COMMON): it says nothing of the question.
    assert "quiet" not in [h.id for h in mem.recall(QUESTION, k=5, min_score=0)]


def test_identifier_words_are_split_at_index_and_query_time() -> None:
    assert fts.split_words("writeBoolean") == "write Boolean"
    assert fts.split_words("call XMLHttpRequest then base64Encode") == "XML Http Request base64 Encode"
    assert fts.split_words("get_user_id and plain words") == ""
    assert fts.query_terms("getUserId") == ["getuserid", "get", "user", "id"]


def test_a_camel_case_name_and_words_find_each_other(repo: Path) -> None:
    mem = _import(repo, [
        {"id": "camel", "title": "writeBoolean", "body": "def writeBoolean(self, n): self.stream.write(n)"},
        {"id": "snake", "title": "read_config_file",
         "body": "def read_config_file(path): return open(path).read()"},
        *_fillers(4),
    ])
    assert [h.id for h in mem.recall("write a boolean to the stream", k=2, min_score=0)][:1] == ["camel"]
    assert [h.id for h in mem.recall("readConfigFile", k=2, min_score=0)][:1] == ["snake"]


def test_an_index_of_the_previous_schema_gets_identifier_words_in_place(repo: Path) -> None:
    mem = _import(repo, [{"id": "camel", "title": "writeBoolean", "body": "Sets a flag.",
                          "tags": ["fooBar"]}, *_fillers(3)])
    mem.index.close()
    db = repo / ".git" / "memgit" / "index.db"
    with sqlite3.connect(db) as conn:  # as memgit 4 left it: the title's words not indexed
        for rowid, title, tags in conn.execute("SELECT rowid, title, tags FROM memories_fts").fetchall():
            conn.execute("UPDATE memories_fts SET title = ?, tags = ? WHERE rowid = ?",
                         (title.split("\n")[0], tags.split("\n")[0], rowid))
        conn.execute("INSERT INTO meta(key, value) VALUES ('left-by-test', 'kept')")
        conn.execute("PRAGMA user_version = 4")
    again = memgit.open(repo, warn=lambda message: None)
    assert [h.id for h in again.recall("write boolean", k=1, min_score=0)] == ["camel"]
    assert [h.id for h in again.recall("foo bar", k=1, min_score=0)] == ["camel"]
    # In place: a rebuild (every table dropped; vectors embedded again) would have lost this row.
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == sq.SCHEMA_VERSION
        assert conn.execute("SELECT value FROM meta WHERE key = 'left-by-test'").fetchone() == ("kept",)
