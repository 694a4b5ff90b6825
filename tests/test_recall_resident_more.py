"""What a recalling process keeps (`memgit.index.resident`, `memgit.index.postings`) is tied
to the generations of the tables it was read from (`memgit.index.stamps`), not to every
commit of the index: a prompt hook's bookkeeping by another process keeps it, while any write
of a memory, by whatever writer, is seen at once.

The store, its stand-in embedder (`HashEmbedder`, no model) and the comparison of both paths
(`same_both_ways`: ids, scores, relevance, channel strengths and passages with what is kept,
then with it off) are tests/test_recall_resident.py's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from memgit.index import postings, stamps
from tests.conftest import git
from tests.test_recall_resident import QUERIES, its_text, same_both_ways, store, used, vector_ids

__all__ = ["store"]  # the fixture, used by name

WATCHED = ("vector_bits", "vectors", "passage_bits", "passage_vectors", "memories_fts_docsize")


def other_process(repo: Path, script: str, *args: str) -> str:
    """`script` run by another Python process with `repo` as argv[1] (memgit as installed)."""
    return subprocess.run([sys.executable, "-c", script, str(repo), *args], check=True, env=os.environ.copy(),
                          capture_output=True, text=True).stdout


def cli(repo: Path, *args: str) -> None:
    """`memgit -C repo args...` as a user runs it."""
    subprocess.run([sys.executable, "-m", "memgit", "-C", str(repo), *args], check=True, env=os.environ.copy(),
                   capture_output=True)


def kept_objects(mem: Any) -> list[int]:
    kept = mem.index.resident
    return [id(kept.tables["vector_bits"]), id(kept.tables["passage_bits"]), id(kept.postings.docs)]


def data_version(mem: Any) -> int:
    return int(mem.index.conn.execute("PRAGMA data_version").fetchone()[0])


BOOKKEEPING = """
import sys, memgit
m = memgit.open(sys.argv[1], warn=lambda m: None)
m.index.sync()
with m.index.db.transaction():
    m.index.db.set_meta("probe", "a prompt hook's bookkeeping")
    m.index.conn.execute("UPDATE files SET mtime_ns = mtime_ns")
"""


def test_another_processs_bookkeeping_keeps_what_is_kept(repo: Path, store: Any) -> None:
    first = same_both_ways(store, QUERIES)
    used(store)
    before, version = kept_objects(store), data_version(store)
    other_process(repo, BOOKKEEPING)
    assert data_version(store) != version  # the other process did commit
    assert same_both_ways(store, QUERIES) == first
    assert kept_objects(store) == before  # nothing was read again


def test_a_memory_remembered_by_the_cli_is_found(repo: Path, store: Any) -> None:
    same_both_ways(store, QUERIES)
    used(store)
    before = kept_objects(store)
    cli(repo, "remember", "Deploys go out on Tuesdays only, never on Fridays.", "--title", "Deploy days")
    (answer,) = same_both_ways(store, ["deploys tuesdays fridays"])
    keyword = [mid for mid, _ in answer[1][3]]
    assert keyword and store.index.memory(keyword[0]).title == "Deploy days"
    assert kept_objects(store)[2] != before[2]  # the postings were read again
    (answer,) = same_both_ways(store, [its_text(store, keyword[0])])
    assert vector_ids(answer)[0] == keyword[0]


def test_a_vector_deleted_by_any_writer_is_seen(repo: Path, store: Any) -> None:
    """A plain SQL write by another process (an older memgit, a tool): the triggers are in
    the database, not in memgit."""
    same_both_ways(store, QUERIES)
    used(store)
    text = its_text(store, "m-001")
    (answer,) = same_both_ways(store, [text])
    assert vector_ids(answer)[0] == "m-001"
    index = store.index.db.path
    script = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
              "c.execute(\"DELETE FROM vector_bits WHERE doc = (SELECT doc FROM memories WHERE id = 'm-001')\"); "
              "c.commit()")
    subprocess.run([sys.executable, "-c", script, str(index)], check=True)
    (answer,) = same_both_ways(store, [text])
    assert "m-001" not in vector_ids(answer)


def test_a_pull_then_recall_finds_the_pulled_memory(repo: Path, store: Any, tmp_path: Path) -> None:
    same_both_ways(store, QUERIES)
    used(store)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    cli(clone, "remember", "Backups run at 3am from the ops box.", "--title", "Backup schedule")
    git(repo, "pull", "-q", "--no-rebase", str(clone), "HEAD")
    (answer,) = same_both_ways(store, ["backups 3am ops box"])
    keyword = [mid for mid, _ in answer[1][3]]
    assert keyword and store.index.memory(keyword[0]).title == "Backup schedule"


def drop_generations(index: Path) -> None:
    """The index as an older memgit left it: no generations, no triggers."""
    script = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
              "[c.execute(f'DROP TRIGGER \"{n}\"') for (n,) in c.execute(\"SELECT name FROM sqlite_master "
              "WHERE type = 'trigger' AND name LIKE 'memgit_gen_%'\").fetchall()]; "
              f"c.execute('DROP TABLE {stamps.TABLE}'); c.commit()")
    subprocess.run([sys.executable, "-c", script, str(index)], check=True)


def test_an_index_without_generations_gets_them_in_place(repo: Path, store: Any) -> None:
    first = same_both_ways(store, QUERIES)
    drop_generations(store.index.db.path)
    assert same_both_ways(store, QUERIES) == first
    used(store)
    assert stamps.missing(store.index.conn, WATCHED) == []
    assert stamps.stamp(store.index.conn, WATCHED) is not None


HOLD = """
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
c.execute("ROLLBACK")
"""


def test_a_locked_index_keeps_nothing_until_it_can_watch(repo: Path, store: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    first = same_both_ways(store, QUERIES[:2])
    drop_generations(store.index.db.path)
    store.index.resident.tables.clear()
    index = store.index.db.path
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(index)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert same_both_ways(store, QUERIES[:2]) == first  # the triggers could not be made: SQL
        assert not store.index.resident.tables
        assert stamps.stamp(store.index.conn, WATCHED) is None
    finally:
        holder.communicate("\n", timeout=30)
    assert same_both_ways(store, QUERIES[:2]) == first
    used(store)


@pytest.fixture
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread that reads every token's postings (on, as in the MCP server) starts without
    waiting for a quiet spell."""
    monkeypatch.setattr(postings, "PRELOAD", True)
    monkeypatch.setattr(postings, "IDLE_SECONDS", 0.0)


@pytest.fixture
def preload(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread that reads every token's postings on, as in the MCP server."""
    monkeypatch.setattr(postings, "PRELOAD", True)


@pytest.mark.usefixtures("no_wait")
def test_every_tokens_postings_read_on_a_thread_answer_as_the_sql_does(store: Any) -> None:
    first = same_both_ways(store, QUERIES)
    book = store.index.resident.postings
    assert book.wait(60) and book.complete
    assert "short" not in str(QUERIES) and "line" not in str(QUERIES)
    assert {"short", "line"} <= set(book.terms)  # tokens no query asked for
    assert same_both_ways(store, QUERIES) == first
    same_both_ways(store, ["retries before it gives up", "zzzz nothing holds this", "note topic"])


@pytest.mark.usefixtures("no_wait")
def test_postings_read_on_a_thread_before_a_write_are_not_used(repo: Path, store: Any) -> None:
    same_both_ways(store, QUERIES)
    book = store.index.resident.postings
    assert book.wait(60) and book.complete
    cli(repo, "remember", "Canary deploys go to the staging cluster first.", "--title", "Canary deploys")
    (answer,) = same_both_ways(store, ["canary staging cluster"])
    keyword = [mid for mid, _ in answer[1][3]]
    assert keyword and store.index.memory(keyword[0]).title == "Canary deploys"
    assert book.wait(60) and "canari" in book.terms  # read again under the new stamp
    (again,) = same_both_ways(store, ["canary staging cluster"])
    assert again == answer


@pytest.mark.usefixtures("preload")
def test_closing_the_store_stops_the_thread(store: Any) -> None:
    same_both_ways(store, QUERIES[:2])
    book = store.index.resident.postings
    assert book._loading is not None and not book.complete  # waiting for a quiet second
    store.close()
    assert not book.wait(30)
    assert not [t for t in threading.enumerate() if t.name == "memgit-postings" and t.is_alive()]


def test_a_process_other_than_the_mcp_server_starts_no_thread(store: Any) -> None:
    same_both_ways(store, QUERIES[:3])
    assert store.index.resident.postings._loading is None
    assert not [t for t in threading.enumerate() if t.name == "memgit-postings" and t.is_alive()]
