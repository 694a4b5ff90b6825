"""The title lane: a vector of each memory's title and anchor names, searched as a channel of its own.

Real repositories and real SQLite; the embedder is a recording stand-in (hashed words, the
standard library only) loaded through memgit's own `module:attr` plug-in interface, so the
tests see every text given to `embed()` and a memory whose title holds the query's words is
the lane's nearest.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.index import titles

from .gated_embedder import _vector

EMBEDDED: list[str] = []


class Recording:
    """Bag of hashed words (64-d); records each text it embeds."""

    id = "recording-lanes"
    dim = 64

    def embed(self, texts: Sequence[str]) -> list[Any]:
        EMBEDDED.extend(texts)
        return [_vector(text) for text in texts]

    def embed_query(self, text: str) -> Any:
        return _vector(text)


RECORDING = Recording()
EMBEDDER = f"{__name__}:RECORDING"

#: The answer's title says what the query asks; its body is about other things (a long
#: rules note whose words are the body's), so only its title and names point at it.
ANSWER_TITLE = "Optional extras install"
ANSWER_BODY = ("Run the full matrix with every interpreter before a release; the release notes "
               "list each change by its pull request, and the changelog fragments go in changelog.")


@pytest.fixture(autouse=True)
def recording(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    EMBEDDED.clear()
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", EMBEDDER)
    return EMBEDDED


def seeded(repo: Path) -> str:
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        answer = mem.remember(ANSWER_BODY, title=ANSWER_TITLE, kind="fact",
                              entity="src/pkg/setup_tools.py::installExtras").memory.id
        for i, words in enumerate(("pull request review checklist release notes",
                                   "changelog fragments release interpreter matrix",
                                   "every interpreter release full matrix notes")):
            mem.remember(f"Note {i}: {words} {words}", title=f"Note {i} on {words.split()[0]}", kind="fact")
        mem.reindex()
    return answer


def lane_rows(repo: Path) -> dict[int, str]:
    conn = sqlite3.connect(repo / ".git" / "memgit" / "index.db")
    try:
        return dict(conn.execute("SELECT doc, sha FROM title_vectors").fetchall())
    finally:
        conn.close()


def test_identifiers_read_as_words() -> None:
    assert titles.words("get_user_id") == "get user id"
    assert titles.words("getUserId") == "get user id"
    assert titles.words("HTTPServer") == "http server"
    assert titles.words("été_données") == "été données" and titles.words("v2Parser") == "v2 parser"
    assert titles.words("src/_pytest/hookspec.py::pytest_report_from_serializable") == (
        "src pytest hookspec pytest report from serializable")
    text = titles.text("Optional extras", ["src/pkg/setup_tools.py::installExtras", "docs/extras.md"])
    assert text == "Optional extras\nsrc pkg setup tools install docs"


def test_a_title_that_is_a_bare_name_or_the_bodys_start_gets_no_lane_vector(repo: Path) -> None:
    assert not titles.worth("writeBoolean", "def writeBoolean(self, n): ...")
    assert not titles.worth("api: Let's get started on the api project. It's a REST …",
                            "user: Let's get started on the api project. It's a REST API for a shop")
    assert titles.worth("Optional extras install", ANSWER_BODY)
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        bare = mem.remember("def paste(xsel=False): returns the clipboard", title="paste", kind="fact").memory.id
        mem.reindex()
        assert "paste" not in EMBEDDED  # no lane text was embedded for it
        assert titles.count_pending(mem.index.conn) == 0 and titles.share(mem.index.conn) == 0.0
        hits = mem.recall("paste the clipboard", k=1, min_score=0, record=False)
        assert hits[0].id == bare and "title" not in hits[0].channels
        assert hits.how is not None and hits.how.weights["vector"] == pytest.approx(0.9)  # 0.6 x 1.5


def test_a_memory_whose_title_is_the_answer_is_found_by_the_lane(repo: Path) -> None:
    answer = seeded(repo)
    assert any(t.startswith(ANSWER_TITLE + "\n") for t in EMBEDDED)  # the lane's text, names as words
    with memgit.open(repo, warn=lambda message: None) as mem:
        hits = mem.recall("how do I install the optional extras", k=3, min_score=0, record=False)
    assert hits[0].id == answer
    assert hits[0].channels["title"] == max(h.channels.get("title", 0.0) for h in hits)
    assert hits.how is not None and hits.how.weights["title"] > 0
    assert hits.how.weights["vector"] == pytest.approx(0.6)  # every memory has a lane: 0.6 x (1.5 - 0.5)


def test_the_lane_is_pending_after_an_edit_and_gone_after_a_delete(repo: Path) -> None:
    answer = seeded(repo)
    rows = lane_rows(repo)
    assert len(rows) == 4
    with memgit.open(repo, warn=lambda message: None) as mem:
        doc = mem.index.conn.execute("SELECT doc FROM memories WHERE id = ?", (answer,)).fetchone()[0]
        mem.update(answer, entity="src/pkg/extras.py::optionalGroups")
        mem.index.sync(embed="none")
        assert titles.count_pending(mem.index.conn) == 1
        assert [d for d, *_ in titles.pending(mem.index.conn)] == [doc]
        before = len(EMBEDDED)
        mem.index.sync(embed="auto")  # one pending: embedded during the call
        # words the title has already are not repeated
        assert EMBEDDED[before:] == [f"{ANSWER_TITLE}\nsrc pkg groups"]
        assert titles.count_pending(mem.index.conn) == 0
        hits = mem.recall("optional groups", k=1, min_score=0, record=False)
        assert hits[0].id == answer and hits[0].channels.get("title", 0) > 0
        mem.forget(answer, hard=True)
        mem.index.sync(embed="none")
    assert doc not in lane_rows(repo) and len(lane_rows(repo)) == 3


def test_reindex_embeds_nothing_already_embedded(repo: Path) -> None:
    seeded(repo)
    first = list(EMBEDDED)
    assert len(first) == 8  # four memories, four title texts
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.reindex()
    for path in (repo / ".git" / "memgit").glob("index.db*"):
        path.unlink()  # a rebuilt index takes every vector, lane included, from the cache
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.reindex()
        assert titles.count_pending(mem.index.conn) == 0
    assert EMBEDDED == first
    assert len(lane_rows(repo)) == 4


def test_explain_and_json_show_the_lanes_strength(repo: Path) -> None:
    answer = seeded(repo)
    os.chdir(repo)
    runner = CliRunner()
    out = runner.invoke(cli, ["recall", "optional extras install", "--json", "--min-score", "0"],
                        catch_exceptions=False)
    assert out.exit_code == 0, out.output
    hits = json.loads(out.stdout)
    assert hits[0]["id"] == answer and hits[0]["channels"]["title"] > 0
    assert hits[0]["how"]["weights"]["title"] > 0
    out = runner.invoke(cli, ["recall", "optional extras install", "--explain", "--min-score", "0"],
                        catch_exceptions=False)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert " title " in lines[2] and "; weights " in lines[-1] and " title " in lines[-1]


def test_a_store_without_vectors_recalls_as_before(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "none")
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        answer = mem.remember(ANSWER_BODY, title=ANSWER_TITLE, kind="fact").memory.id
        hits = mem.recall("optional extras install", k=1, min_score=0, record=False)
    assert hits[0].id == answer and "title" not in hits[0].channels
    assert not EMBEDDED


def test_a_rebuilt_index_takes_passages_from_the_cache_too(repo: Path) -> None:
    long_body = "\n".join(f"Rule {i}: the retry queue number {i} backs off {i} seconds before it tries again."
                          for i in range(9))
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        mem.remember(long_body, title="Retry rules", kind="fact")
        mem.reindex()
    first = list(EMBEDDED)
    assert any(text.startswith("Retry rules\nRule ") for text in first)  # a passage was embedded
    for path in (repo / ".git" / "memgit").glob("index.db*"):
        path.unlink()
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.reindex()
    assert EMBEDDED == first


def test_above_the_exact_size_the_lane_judges_the_other_channels_candidates(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memgit.index import channels

    answer = seeded(repo)
    monkeypatch.setattr(channels, "VECTOR_EXACT_MAX", 2)  # a "big" store of four memories
    with memgit.open(repo, warn=lambda message: None) as mem:
        conn = mem.index.conn
        vector = mem.index.vectors.query_vector("optional extras install")
        assert vector is not None
        assert channels.title(conn, vector, 10, "1", [], among=[]) == []
        judged = channels.title(conn, vector, 10, "1", [], among=[answer])
        assert [mid for mid, _ in judged] == [answer]
        hits = mem.recall("optional extras install", k=1, min_score=0, record=False)
    assert hits[0].id == answer and hits[0].channels["title"] > 0
