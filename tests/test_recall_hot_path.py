"""The recall an MCP server answers, many times over in one process: every token's postings
read as the server starts (`memgit.index.workspace.Workspace.start`), and what the process keeps
between recalls (postings, each candidate's tokens, the work tree's code fingerprints) never
answering from a store or a work tree that has changed since.

The store and its stand-in embedder (`HashEmbedder`, no model) are
tests/test_recall_resident.py's; each answer is also compared with the same recall with
nothing kept (`same_both_ways`: every stage in SQL).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import memgit
from memgit.index import postings
from memgit.memory.format import Memory
from memgit.recall import adaptive, coverage
from tests.conftest import git
from tests.test_recall_resident import QUERIES, same_both_ways, store

__all__ = ["store"]  # the fixture, used by name

#: Queries that name code, so that `memgit.recall.coverage` reads which of their terms each
#: candidate holds (from the postings when kept, else from the candidates' text).
CODE_QUERIES = ["mod_3.py retries 3 times", "Note 9 mod_7.py gives up", "topic 4 mod_11.py before"]


@pytest.fixture(autouse=True)
def preload(monkeypatch: pytest.MonkeyPatch) -> None:
    """The postings read on a thread, as in the MCP server (`memgit.mcpserver.serve`)."""
    monkeypatch.setattr(postings, "PRELOAD", True)


def started(repo: Path) -> Any:
    """A store opened as the MCP server opens it: its postings read as it starts."""
    opened = memgit.open(repo, warn=lambda message: None)
    assert opened.workspace.start() is True
    return opened


def ids(mem: Any, query: str, k: int = 10) -> list[str]:
    return [h.id for h in mem.recall(query, k, record=False)]


def remember_elsewhere(repo: Path, text: str) -> None:
    """Another process writes a memory (the CLI, as a person or a hook would)."""
    subprocess.run([sys.executable, "-m", "memgit", "remember", text], cwd=repo, check=True,
                   capture_output=True, env=dict(os.environ))


def test_a_starting_server_has_every_tokens_postings_before_its_first_recall(store: Any, repo: Path) -> None:
    store.close()
    mem = started(repo)
    try:
        book = mem.index.resident.postings
        # The first recall comes at once: it waits for the read begun at the start rather than
        # read its own tokens beside it, and answers from every token's postings.
        first = same_both_ways(mem, QUERIES)
        assert book.complete and mem.index.resident.postings is book
        assert same_both_ways(mem, QUERIES) == first
    finally:
        mem.close()


def test_a_recall_during_the_start_read_waits_for_it(store: Any, repo: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The read made slow on purpose (it sleeps first: a big store on a busy machine): the
    recall that comes meanwhile answers from every token's postings, once they are in."""
    read_all = postings._read_all

    def slow(*args: Any) -> Any:
        time.sleep(0.5)
        return read_all(*args)

    monkeypatch.setattr(postings, "_read_all", slow)
    store.close()
    mem = started(repo)
    try:
        book = mem.index.resident.postings
        assert not book.complete
        assert ids(mem, "Note 7 on topic 1")[:1] == ["m-007"]
        assert book.complete  # it waited for the read rather than read its own words
        same_both_ways(mem, QUERIES)
    finally:
        mem.close()


def test_coverage_from_the_kept_postings_is_what_the_candidates_text_says(store: Any, repo: Path) -> None:
    assert all(coverage.applies(adaptive.shape(q).kind) for q in CODE_QUERIES)
    store.close()
    mem = started(repo)
    try:
        def shares(mem: Any, query: str) -> list[tuple[str, float, Any]]:
            return [(h.id, h.score, h.channels.get("coverage")) for h in mem.recall(query, 10, record=False)]

        answers = same_both_ways(mem, CODE_QUERIES, shares)
        assert mem.index.resident.postings.complete
        assert all(any(share for _, _, share in answer) for answer in answers)
    finally:
        mem.close()


def test_an_edit_in_place_a_delete_and_another_process_write_are_seen(store: Any, repo: Path) -> None:
    store.close()
    mem = started(repo)
    try:
        assert ids(mem, "Note 7 on topic 1")[:1] == ["m-007"]
        assert mem.index.resident.postings.complete
        path = mem.memory_dir / "n007.md"
        path.write_text(path.read_text().replace("A short note 7 about topic 1.", "Kittiwakes nest on cliffs."))
        assert ids(mem, "kittiwakes") == ["m-007"]
        assert same_both_ways(mem, ["kittiwakes nest", "short note 7 about topic 1"])
        (mem.memory_dir / "n008.md").unlink()
        assert "m-008" not in ids(mem, "Note 8 on topic 2")
        remember_elsewhere(repo, "Puffins winter far out at sea")
        found = mem.recall("puffins winter", 3, record=False)
        assert [h.title for h in found][:1] == ["Puffins winter far out at sea"]
        same_both_ways(mem, ["puffins winter at sea", "kittiwakes", *QUERIES[:3]])
    finally:
        mem.close()


def test_a_reindex_between_two_recalls_in_one_process(store: Any, repo: Path) -> None:
    store.close()
    mem = started(repo)
    try:
        before = same_both_ways(mem, QUERIES)
        assert mem.index.resident.postings.complete
        mem.store.write(Memory(id="m-900", title="Gannets dive for fish", body="Gannets dive from thirty metres.",
                               path="n900.md"))
        mem.reindex()
        after = same_both_ways(mem, [*QUERIES, "gannets dive"])
        assert after[-1][0][0][0] == "m-900"
        with memgit.open(repo, warn=lambda message: None) as fresh:  # a process that kept nothing
            assert [ids(fresh, q) for q in QUERIES] == [ids(mem, q) for q in QUERIES]
        assert len(after) == len(before) + 1
    finally:
        mem.close()


def test_a_changed_code_file_is_said_changed_on_the_next_recall(repo: Path, mem: Any) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "auth.py").write_text("def login(user, password):\n    if not password:\n"
                                          "        return False\n    return True\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "auth")
    made = mem.remember("login refuses an empty password", entity="src/auth.py::login").memory
    mem.close()
    server = started(repo)
    try:
        def state() -> str:
            hit = next(h for h in server.recall("login empty password", record=False) if h.id == made.id)
            assert hit.code is not None
            return hit.code.status

        assert state() == "fresh"
        assert state() == "fresh"  # from the fingerprints kept by file stat
        (repo / "src" / "auth.py").write_text("def login(user, password):\n    if password is None:\n"
                                              "        return False\n    return True\n")
        assert state() == "changed"
        (repo / "src" / "auth.py").unlink()
        assert state() == "gone"
        # Its folder gone, then back: a folder found missing is looked at again next recall.
        (repo / "src").rmdir()
        assert state() == "gone"
        (repo / "src").mkdir()
        (repo / "src" / "auth.py").write_text("def login(user, password):\n    if not password:\n"
                                              "        return False\n    return True\n")
        assert state() == "fresh"
    finally:
        server.close()


def test_the_mcp_server_sees_an_edit_and_another_process_write_between_two_calls(
        repo: Path, mem: Any) -> None:
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    made = mem.remember("The deploy script tags the release", kind="fact").memory
    path = mem.memory_dir / made.path
    params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(repo),
                                   env=dict(os.environ))

    def titles(result: Any) -> list[str]:
        assert result.is_error is False, result.content
        text = json.loads(result.content[0].text)
        assert text == result.structured_content  # the same answer twice: as text and as data
        return [h["title"] for h in result.structured_content["hits"]]

    async def steps() -> None:
        async with Client(params) as client:
            assert titles(await client.call_tool("recall", {"query": "deploy script release"})) == [made.title]
            path.write_text(path.read_text().replace("tags the release", "signs the tarball"))
            assert titles(await client.call_tool("recall", {"query": "signs the tarball"})) == [
                "The deploy script signs the tarball"]
            assert titles(await client.call_tool("recall", {"query": "tags the release"})) == []
            remember_elsewhere(repo, "Storm petrels feed at night")
            assert titles(await client.call_tool("recall", {"query": "storm petrels"}))[:1] == [
                "Storm petrels feed at night"]

    anyio.run(steps)
