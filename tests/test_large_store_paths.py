"""What a recall or a `remember` does at a big store, counted rather than timed: folder
listings after memgit's own write, files stat'ed by the rolling check, passages scored
exactly, queries embedded. The results stay what the slower paths gave.

Vectors come from `HashEmbedder`, a stand-in (no model): seeded random unit vectors per
text, 32-d. It records the queries it embeds and the thread that embedded them.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

import memgit
from memgit.index import changes, passages
from memgit.index.index import Index
from memgit.memory.format import Memory
from memgit.store.folder import Store

from . import hash_embedder

OLD_NS = 1_000_000_000_000_000_000  # 2001: never a racy timestamp


class HashEmbedder(hash_embedder.HashEmbedder):
    """The shared stand-in (`tests.hash_embedder`), recording each query it embeds."""

    queries: ClassVar[list[tuple[str, str]]] = []  # (query, thread name)

    def embed_query(self, text: str) -> Any:
        HashEmbedder.queries.append((text, threading.current_thread().name))
        return self._one(text)


EMBEDDER = f"{__name__}:HashEmbedder"


def age(*paths: Path) -> None:
    for path in paths:
        os.utime(path, ns=(OLD_NS, OLD_NS))


def listings(monkeypatch: pytest.MonkeyPatch, folder: Path) -> list[str]:
    """Every `os.scandir` of `folder` from now on (the change check lists a folder with it)."""
    seen: list[str] = []
    real = os.scandir

    def counting(path: Any = ".") -> Any:
        if os.path.realpath(path) == os.path.realpath(folder):
            seen.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return seen


def seeded_store(repo: Path, n: int) -> Path:
    """`n` memories committed in `repo/.memory`, files and folder aged, indexed in full."""
    folder = repo / ".memory"
    store = Store(folder)
    for i in range(n):
        store.write(Memory(id=f"m-{i:03d}", title=f"Note {i} about topic {i % 7}", body=f"Body {i}.",
                           path=f"n{i:03d}.md"))
    subprocess_git(repo, "add", ".memory")
    subprocess_git(repo, "commit", "-q", "-m", "notes")
    age(*folder.iterdir(), folder)
    with memgit.open(repo, warn=lambda m: None) as mem:
        mem.index.sync(full=True)
    return folder


def subprocess_git(repo: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


# -- memgit's own writes -----------------------------------------------------------------------


def test_remember_leaves_no_folder_listing_for_the_next_command(
        mem: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = seeded_store(repo, 30)
    mem.index.sync()
    seen = listings(monkeypatch, folder)
    remembered = mem.remember("Retries back off exponentially after a timeout")
    assert seen == []  # its own change check found the folder as the index left it
    # The next command comes within the clock tick of the write (`changes.RACY_NS`), whatever
    # the machine's load: one after that tick lists the folder once, by design (the deletion
    # test below).
    tick = folder.stat().st_mtime_ns
    monkeypatch.setattr(changes, "time", SimpleNamespace(time_ns=lambda: tick, time=time.time))
    with memgit.open(repo, warn=lambda m: None) as later:  # the next command, a new Memgit
        report = later.index.sync()
        assert seen == [] and report.touched == 0
        assert [h.id for h in later.recall("exponentially", min_score=0)] == [remembered.memory.id]


def test_a_file_written_by_someone_else_beside_memgits_own_write_is_still_indexed(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = seeded_store(repo, 5)
    store = Store(folder)
    with memgit.open(repo, warn=lambda m: None) as mem:
        mem.index.sync()
        store.write(Memory(id="m-own1", title="Own note before", body="Walrus.", path="own1.md"))
        (folder / "foreign1.md").write_text("---\nid: m-for1\ntitle: Foreign walrus note\n---\n\nWalrus too.\n")
        (folder / "foreign2.md").write_text("---\nid: m-for2\ntitle: Foreign walrus again\n---\n\nWalrus.\n")
        store.write(Memory(id="m-own2", title="Own note after", body="Walrus.", path="own2.md"))
        seen = listings(monkeypatch, folder)
        mem.index.sync()
        assert seen  # the chain of its own writes is broken: the folder is listed
        found = {h.id for h in mem.recall("walrus", k=10, min_score=0)}
        assert found == {"m-own1", "m-own2", "m-for1", "m-for2"}


def test_a_deletion_by_memgit_is_taken_without_a_listing(
        mem: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = seeded_store(repo, 8)
    time.sleep(changes.RACY_NS / 1e9 * 2)  # the folder's time is then stored as it is, not "check again"
    mem.index.sync()
    seen = listings(monkeypatch, folder)
    mem.forget("m-003", hard=True)
    assert seen == []  # the write itself lists nothing
    # The next sync may list the folder once if the write's clock tick is over by then
    # (`changes.RACY_NS`: a file another program made in that tick), as a loaded machine
    # makes it; the deletion is taken either way.
    with memgit.open(repo, warn=lambda m: None) as later:
        later.index.sync()
        assert "m-003" not in later.index.memories(["m-003"])
    assert len(seen) <= 1


# -- the rolling stat --------------------------------------------------------------------------


def test_close_calls_stat_a_share_of_the_store_and_a_pause_checks_it_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(changes, "ROLLING_MIN", 10)
    folder = tmp_path / "repo" / ".memory"
    folder.mkdir(parents=True)
    store = Store(folder)
    for i in range(40):
        store.write(Memory(id=f"m-{i:03d}", title=f"Note {i}", body=f"Body {i}.", path=f"n{i:03d}.md"))
    age(*folder.iterdir(), folder)
    index = Index(tmp_path / "repo" / "git" / "memgit" / "index.db", store, "none", warn=lambda m: None)
    index.sync(full=True)
    index.sync()
    assert index.sync().checked < 40  # one call right after another: not every file again
    edited = folder / "n017.md"
    before = os.stat(folder).st_mtime_ns
    edited.write_text(edited.read_text().replace("Body 17.", "Body 17, edited in place."))
    age(edited)
    os.utime(folder, ns=(before, before))
    index.db.set_meta("rolled", repr(time.time() - changes.ROLLING_WINDOW_S - 1))
    report = index.sync()  # a pause as long as the window: every file is stat'ed
    assert report.checked == 40 and report.changed == 1
    assert "in place" in index.memory("m-017").body
    index.close()


def test_a_small_store_is_checked_whole_on_every_call(tmp_path: Path) -> None:
    folder = tmp_path / "repo" / ".memory"
    folder.mkdir(parents=True)
    store = Store(folder)
    for i in range(20):
        store.write(Memory(id=f"m-{i:03d}", title=f"Note {i}", body=f"Body {i}.", path=f"n{i:03d}.md"))
    age(*folder.iterdir(), folder)
    index = Index(tmp_path / "repo" / "git" / "memgit" / "index.db", store, "none", warn=lambda m: None)
    index.sync(full=True)
    assert [index.sync().checked for _ in range(3)] == [20, 20, 20]
    index.close()


# -- passages and query vectors ----------------------------------------------------------------


@pytest.fixture
def vector_index(tmp_path: Path) -> Index:
    folder = tmp_path / "repo" / ".memory"
    folder.mkdir(parents=True)
    store = Store(folder)
    hash_embedder.seed_notes(store, 90)
    built = Index(tmp_path / "repo" / "git" / "memgit" / "index.db", store, EMBEDDER, warn=lambda m: None)
    built.sync(embed="all")
    return built


def test_passages_past_the_exact_limit_are_shortlisted_by_their_bits_with_the_same_result(
        vector_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = vector_index.conn
    total = conn.execute("SELECT count(*) FROM passage_vectors").fetchone()[0]
    assert total >= 60
    assert conn.execute("SELECT count(*) FROM passage_bits").fetchone()[0] == total
    queries = [f"how do we handle topic {n}" for n in range(6)] + ["retry backoff mod_3.py"]
    exact = {q: passages.best(conn, vector_index.vectors.query_vector(q), 8) for q in queries}
    monkeypatch.setattr(passages, "EXACT_MAX", 10)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        shortlisted = {q: passages.best(conn, vector_index.vectors.query_vector(q), 8) for q in queries}
    finally:
        conn.set_trace_callback(None)
    assert shortlisted == exact
    assert sum("vec_distance_hamming" in s and "passage_bits" in s for s in seen) == len(queries)


def test_passages_stored_before_their_bits_get_them_on_the_next_sync(vector_index: Index) -> None:
    conn = vector_index.conn
    with vector_index.db.transaction():
        conn.execute("DROP TABLE passage_bits")
        vector_index.db.set_meta(passages.BITS_DONE, None)
    assert not passages._has_bits(conn)  # an older index: the exact scan still answers
    vector_index.sync(embed="auto")
    total = conn.execute("SELECT count(*) FROM passage_vectors").fetchone()[0]
    assert conn.execute("SELECT count(*) FROM passage_bits WHERE bits IS NOT NULL").fetchone()[0] == total
    assert passages._has_bits(conn)


def test_a_query_is_embedded_once_on_its_own_thread_and_kept(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", EMBEDDER)
    seeded_store(repo, 12)
    with memgit.open(repo, warn=lambda m: None) as mem:
        mem.index.sync(embed="all")
        mem.recall("warm up the embedder")
        HashEmbedder.queries.clear()
        asked = ["topic three notes", "notes on topic five", "topic three notes", "notes on topic five"]
        answers = [[h.id for h in mem.recall(q, min_score=0)] for q in asked]
        assert answers[0] == answers[2] and answers[1] == answers[3]
        assert [q for q, _ in HashEmbedder.queries] == asked[:2]  # each text embedded once
        assert all(thread == "memgit-query-vector" for _, thread in HashEmbedder.queries)


class ThreadShyEmbedder(HashEmbedder):
    """Fails on the prefetch thread for a query saying "flaky" (as a warm embedder's socket
    might), works on the caller's thread."""

    id = "hash-32-shy"

    def embed_query(self, text: str) -> Any:
        if "flaky" in text and threading.current_thread().name == "memgit-query-vector":
            raise OSError("the thread could not embed")
        return super().embed_query(text)


def test_a_query_whose_thread_failed_is_embedded_again_and_recall_still_uses_vectors(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", f"{__name__}:ThreadShyEmbedder")
    seeded_store(repo, 12)
    with memgit.open(repo, warn=lambda m: None) as mem:
        mem.index.sync(embed="all")
        mem.recall("warm up the embedder")
        HashEmbedder.queries.clear()
        hits = mem.recall("flaky notes on topic three", min_score=0)
        assert hits.how is not None and hits.how.vectors.state == "used"
        assert HashEmbedder.queries == [("flaky notes on topic three", "MainThread")]


def test_an_anchor_under_a_folder_that_is_gone_costs_no_realpath(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memgit.git import codeprint

    (repo / "src").mkdir()
    (repo / "src" / "here.py").write_text("x = 1\n")
    (repo / "linked").symlink_to(repo / "src")
    calls: list[str] = []
    real = os.path.realpath

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", counting)
    assert codeprint.inside(repo, "gone/deeper/mod_7.py") is None
    assert calls == []
    assert codeprint.inside(repo, "src/here.py") == repo / "src" / "here.py"
    assert codeprint.inside(repo, "linked/here.py") is not None  # a link on the way is still followed


def test_the_index_entries_of_one_memory_are_asked_of_git_by_path_not_by_folder(
        repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from memgit.git import repo as gitrepo

    seeded_store(repo, 6)
    trace = tmp_path / "git-trace.txt"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    found = gitrepo.index_entries(gitrepo.find(repo), [".memory/n002.md", ".memory/new.md"])
    assert found[".memory/new.md"] is None and (found[".memory/n002.md"] or "").startswith("100644 ")
    runs = [line for line in trace.read_text().splitlines() if "ls-files" in line]
    assert len(runs) == 1
    assert runs[0].split(" -- ", 1)[1].split() == [".memory/n002.md", ".memory/new.md"]  # the paths, not their folder
