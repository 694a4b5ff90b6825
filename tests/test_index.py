"""The SQLite index: change detection, bad files, corruption, vectors, concurrency.

Real SQLite and real files in tmp_path. Most tests run with embedder "none"; the vector
tests use `WordHashEmbedder` below, a tiny deterministic embedder loaded through memgit's
plugin interface ("module:attr"), so they can count and change embedder ids cheaply. The
real MiniLM model runs in tests/test_recall.py's end-to-end test.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memgit.index.changes as changes_mod
import memgit.index.vectors as vectors_mod
from memgit.errors import MemgitError
from memgit.index import sqlite as sq
from memgit.index.index import Index
from memgit.memory.format import Memory
from memgit.store.folder import Store

ROOT = Path(__file__).resolve().parent.parent


class WordHashEmbedder:
    """Bag of hashed words, 64-d, L2-normalised. Counts what it embeds."""

    id = "word-hash-a"
    dim = 64
    calls: list[str] = []

    def embed(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            type(self).calls.append(text)
            for word in text.lower().split():
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        return self.embed([text])[0]


class OtherHashEmbedder(WordHashEmbedder):
    id = "word-hash-b"


EMBEDDER_A = f"{__name__}:WordHashEmbedder"
EMBEDDER_B = f"{__name__}:OtherHashEmbedder"


class Warnings(list):
    def __call__(self, message: str) -> None:
        self.append(message)


@pytest.fixture(autouse=True)
def fresh_calls() -> None:
    WordHashEmbedder.calls = []


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / ".memory"
    path.mkdir(parents=True)
    return path


def write(folder: Path, rel: str, id: str, title: str, body: str = "", **fields: object) -> Path:
    memory = Memory(id=id, title=title, body=body, path=rel, **fields)  # type: ignore[arg-type]
    return Store(folder).write(memory)


def make(folder: Path, db: Path | None = None, embedder: str = "none", warn: Warnings | None = None) -> Index:
    return Index(db if db is not None else folder.parent / "git" / "memgit" / "index.db",
                 Store(folder), embedder, warn=warn if warn is not None else Warnings())


def keyword_ids(index: Index, query: str, **kw: object) -> list[str]:
    return [mid for mid, _ in index.search(query, **kw).channels.keyword or ()]  # type: ignore[arg-type]


def age(path: Path, seconds: float = 10) -> None:
    """Move a file's (and its folder's) mtime into the past, out of the racy window."""
    t = time.time() - seconds
    os.utime(path, (t, t))


# -- change detection ---------------------------------------------------------------------


def test_add_edit_delete_rename_are_seen_on_the_next_sync(folder: Path) -> None:
    index = make(folder)
    write(folder, "a.md", "m-a", "Parser returns a tuple", "parse_config returns (config, warnings)")
    report = index.sync()
    assert report.added == 1
    assert keyword_ids(index, "tuple") == ["m-a"]

    write(folder, "b.md", "m-b", "Retry policy", "network calls retry three times")
    assert index.sync().added == 1
    assert keyword_ids(index, "retry") == ["m-b"]

    write(folder, "a.md", "m-a", "Parser returns a dict", "parse_config returns a dict now")
    assert index.sync().changed == 1
    assert keyword_ids(index, "tuple") == []
    assert keyword_ids(index, "dict") == ["m-a"]

    os.rename(folder / "b.md", folder / "renamed.md")
    report = index.sync()
    assert index.memory("m-b").path == "renamed.md"
    assert keyword_ids(index, "retry") == ["m-b"]

    (folder / "renamed.md").unlink()
    assert index.sync().removed == 1
    assert keyword_ids(index, "retry") == []
    with pytest.raises(MemgitError):
        index.memory("m-b")


def test_nothing_changed_means_no_write(folder: Path) -> None:
    write(folder, "a.md", "m-a", "One")
    index = make(folder)
    index.sync()
    for path in (folder / "a.md", folder):
        age(path)
    index.sync()  # records the settled mtimes
    report = index.sync()
    assert report.touched == 0 and not report.problems


def test_subfolders_created_and_removed(folder: Path) -> None:
    index = make(folder)
    index.sync()
    write(folder, "topic/deep/a.md", "m-a", "Deep memory about caching")
    index.sync()
    assert keyword_ids(index, "caching") == ["m-a"]
    (folder / "topic" / "deep" / "a.md").unlink()
    (folder / "topic" / "deep").rmdir()
    index.sync()
    assert keyword_ids(index, "caching") == []
    assert index.status()["memories"] == 0


def test_in_place_edit_with_unchanged_folder_mtime_is_seen(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor that writes in place leaves the folder's mtime alone: the rolling stat finds it."""
    monkeypatch.setattr(changes_mod, "ROLLING_FILES", 3)
    for i in range(7):
        write(folder, f"m{i}.md", f"m-{i}", f"memory number {i}", "plain text")
        age(folder / f"m{i}.md")
    age(folder)
    index = make(folder)
    index.sync()
    index.sync()
    folder_mtime = os.stat(folder).st_mtime_ns
    path = folder / "m5.md"
    text = path.read_text().replace("plain text", "zebra crossing")
    with open(path, "r+", encoding="utf-8") as handle:  # in place: same inode, folder untouched
        handle.write(text)
        handle.truncate()
    age(path)
    assert os.stat(folder).st_mtime_ns == folder_mtime
    for _ in range(3):  # 7 files, 3 per call: every file is checked within 3 calls
        index.sync()
    assert keyword_ids(index, "zebra") == ["m-5"]


@pytest.mark.parametrize("huge_folder", [False, True])
@pytest.mark.parametrize("how", ["rename over", "unlink and create", "new file", "delete"])
def test_folder_changes_are_seen_at_once_in_a_big_store(folder: Path, monkeypatch: pytest.MonkeyPatch,
                                                        how: str, huge_folder: bool) -> None:
    """Beyond ROLLING_FILES, a change that touches the folder is still seen on the next call.

    In a folder past STAT_ALL_MAX files only changed inode numbers are stat'ed: a file
    deleted and re-created may get its inode back (ext4 does), and is then found by the
    rolling check instead, a few calls later."""
    monkeypatch.setattr(changes_mod, "ROLLING_FILES", 1)
    if huge_folder:
        monkeypatch.setattr(changes_mod, "STAT_ALL_MAX", 2)
    for i in range(6):
        write(folder, f"m{i}.md", f"m-{i}", f"memory {i}", "calm words")
        age(folder / f"m{i}.md")
    age(folder)
    index = make(folder)
    index.sync()
    index.sync()
    path = folder / "m3.md"
    if how == "rename over":
        write(folder, "m3.md", "m-3", "memory 3", "stormy words")
    elif how == "unlink and create":  # what git checkout does
        text = path.read_text().replace("calm", "stormy")
        path.unlink()
        path.write_text(text)
    elif how == "new file":
        write(folder, "m9.md", "m-9", "memory 9", "stormy words")
    else:
        write(folder, "m3.md", "m-3", "memory 3", "stormy words")
        index.sync()
        path.unlink()
    calls = 6 if huge_folder and how == "unlink and create" else 1  # 6 files, 1 per rolling check
    for _ in range(calls):
        index.sync()
    assert keyword_ids(index, "stormy") == ([] if how == "delete" else ["m-9" if how == "new file" else "m-3"])


def test_racy_edit_in_the_same_tick_is_seen(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same size, same mtime as when indexed: the racy rule re-reads young files."""
    monkeypatch.setattr(changes_mod, "RACY_NS", 60_000_000_000)  # "young", however slow this box is
    path = write(folder, "a.md", "m-a", "Colour is red")
    index = make(folder)
    index.sync()
    st = os.stat(path)
    path.write_text(path.read_text().replace("red", "tan"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    index.sync()
    assert keyword_ids(index, "tan") == ["m-a"]


def test_touch_without_change_does_not_reindex(folder: Path) -> None:
    path = write(folder, "a.md", "m-a", "Stable")
    index = make(folder)
    index.sync()
    age(path, 30)
    report = index.sync()
    assert report.changed == 0 and report.added == 0


def test_full_sync_checks_every_file(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(changes_mod, "ROLLING_FILES", 1)
    for i in range(4):
        write(folder, f"m{i}.md", f"m-{i}", f"memory {i}", "old words")
        age(folder / f"m{i}.md")
    age(folder)
    index = make(folder)
    index.sync()
    path = folder / "m2.md"
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(path.read_text().replace("old words", "new words"))
    age(path)
    index.sync(full=True)
    assert keyword_ids(index, "new") == ["m-2"]


def test_bad_file_is_skipped_with_one_warning_and_the_rest_works(folder: Path) -> None:
    write(folder, "good.md", "m-good", "Good memory about logging")
    (folder / "bad.md").write_text("---\nid: [unclosed\n---\nbody\n")
    (folder / "binary.md").write_bytes(b"\x00\x01\x02")
    (folder / "notes.txt").write_text("not a memory")
    (folder / ".hidden.md").write_text("---\nid: m-hidden\n---\n")
    warnings = Warnings()
    index = make(folder, warn=warnings)
    report = index.sync()
    assert report.added == 2  # bad.md's YAML is broken, but its body is still a memory
    assert len(warnings) == 1 and warnings[0].startswith("skipping binary.md: binary file")
    index.sync()
    index.sync()
    assert len(warnings) == 1  # once per command (one Index) ...
    assert keyword_ids(index, "logging") == ["m-good"]
    assert keyword_ids(index, "body") == ["bad"]
    assert index.status()["skipped_files"] == 1
    again = make(folder, warn=warnings)
    again.sync()
    assert len(warnings) == 2 and warnings[1] == warnings[0]  # ... and on every command until fixed

    (folder / "binary.md").write_text("---\nid: m-fixed\ntitle: Fixed memory about tracing\n---\n")
    again.sync()
    assert keyword_ids(again, "tracing") == ["m-fixed"]
    assert again.status()["skipped_files"] == 0


def test_upper_case_and_markdown_extensions_are_memories_and_readmes_are_not(folder: Path) -> None:
    write(folder, "a.md", "m-a", "First memory")
    index = make(folder)
    index.sync()
    (folder / "team").mkdir()
    for name in ("Notes.MD", "team/plan.markdown", "README.md", "team/readme.MD", "notes.txt"):
        (folder / name).write_text("---\ntitle: Walrus in " + name + "\n---\n")
    index.sync()
    assert sorted(keyword_ids(index, "walrus")) == ["Notes", "team.plan"]


def test_unknown_kind_is_read_as_a_fact_quietly(folder: Path) -> None:
    (folder / "a.md").write_text("---\nid: m-a\ntitle: odd\nkind: rumour\n---\nx\n")
    warnings = Warnings()
    index = make(folder, warn=warnings)
    index.sync()
    assert index.memory("m-a").kind == "fact"
    assert warnings == []  # lint reports it; recall does not nag


def test_duplicate_id_copy_gets_its_path_id_then_takes_over(folder: Path) -> None:
    write(folder, "a.md", "m-same", "First holder of the id")
    write(folder, "b.md", "m-same", "Second holder of the id")
    warnings = Warnings()
    index = make(folder, warn=warnings)
    index.sync()
    assert index.memory("m-same").path == "a.md"
    assert index.memory("b").path == "b.md" and keyword_ids(index, "second") == ["b"]
    assert warnings == []  # lint names the copy
    (folder / "a.md").unlink()
    index.sync()
    assert index.memory("m-same").path == "b.md"
    assert keyword_ids(index, "second") == ["m-same"]
    assert index.status()["memories"] == 1


def test_a_copy_deleted_or_given_its_own_id_leaves_no_trace(folder: Path) -> None:
    write(folder, "a.md", "m-same", "Original about queues")
    write(folder, "b.md", "m-same", "Copy about queues")
    index = make(folder)
    index.sync()
    assert sorted(keyword_ids(index, "queues")) == ["b", "m-same"]
    write(folder, "b.md", "m-own", "Copy about queues")
    index.sync()
    assert sorted(keyword_ids(index, "queues")) == ["m-own", "m-same"]
    write(folder, "b.md", "m-same", "Copy about queues")
    index.sync()
    assert sorted(keyword_ids(index, "queues")) == ["b", "m-same"]
    (folder / "b.md").unlink()
    index.sync()
    assert keyword_ids(index, "queues") == ["m-same"] and index.status()["memories"] == 1


def test_an_original_found_after_its_copy_takes_its_id_back(folder: Path) -> None:
    write(folder, "a-copy.md", "m-7f3a2c", "Copy of the memory about sockets")
    index = make(folder)
    index.sync()
    assert index.memory("m-7f3a2c").path == "a-copy.md"
    write(folder, "sockets-7f3a2c.md", "m-7f3a2c", "The memory about sockets")  # memgit's name for it
    index.sync()
    assert index.memory("m-7f3a2c").path == "sockets-7f3a2c.md"
    assert index.memory("a-copy").path == "a-copy.md"
    assert sorted(keyword_ids(index, "sockets")) == ["a-copy", "m-7f3a2c"]
    fresh = make(folder)
    fresh.rebuild(embed="none")
    assert fresh.memory("m-7f3a2c").path == "sockets-7f3a2c.md" and fresh.status()["memories"] == 2


def test_id_change_inside_a_file(folder: Path) -> None:
    write(folder, "a.md", "m-old", "Memory about widgets")
    index = make(folder)
    index.sync()
    write(folder, "a.md", "m-new", "Memory about widgets")
    index.sync()
    assert keyword_ids(index, "widgets") == ["m-new"]
    assert index.status()["memories"] == 1


def test_memory_folder_missing_then_created(tmp_path: Path) -> None:
    folder = tmp_path / "nowhere" / ".memory"
    index = make(folder, db=tmp_path / "index.db")
    assert index.sync().touched == 0
    folder.mkdir(parents=True)
    write(folder, "a.md", "m-a", "Arrived later")
    index.sync()
    assert keyword_ids(index, "arrived") == ["m-a"]


def test_memory_is_rebuilt_from_the_row(folder: Path) -> None:
    write(folder, "x/a.md", "m-a", "Full memory", "Body with `src/app.py::main`.", kind="decision",
          entity="src/app.py", task_id="T-1", tags=("arch", "cli"), files=("src/app.py",),
          symbols=("main",), created="2026-01-02T03:04:05+00:00", confidence=0.7, source="static",
          extra={"custom": [1, 2]})
    index = make(folder)
    index.sync()
    expected = Store(folder).load().memories[0]
    got = index.memory("m-a")
    assert got == expected
    assert got.path == "x/a.md" and got.extra == {"custom": [1, 2]}


# -- the database file --------------------------------------------------------------------


def test_deleted_index_rebuilds_silently(folder: Path) -> None:
    write(folder, "a.md", "m-a", "Persistent memory")
    index = make(folder)
    index.sync()
    db = index.db_path
    index.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    warnings = Warnings()
    again = make(folder, warn=warnings)
    again.sync()
    assert keyword_ids(again, "persistent") == ["m-a"]
    assert warnings == []


@pytest.mark.parametrize("garbage", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 5000])
def test_garbage_index_rebuilds_with_one_line(folder: Path, garbage: bytes) -> None:
    write(folder, "a.md", "m-a", "Survivor memory")
    db = folder.parent / "index.db"
    make(folder, db=db).close()
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(garbage)
    warnings = Warnings()
    index = make(folder, db=db, warn=warnings)
    index.sync()
    assert keyword_ids(index, "survivor") == ["m-a"]
    assert len(warnings) == 1 and "rebuilding" in warnings[0]


def test_unwritable_index_location_falls_back_to_memory(folder: Path, tmp_path: Path) -> None:
    write(folder, "a.md", "m-a", "Fallback memory", "see src/fallback.py")
    blocker = tmp_path / "git-dir-is-a-file"
    blocker.write_text("")
    warnings = Warnings()
    index = make(folder, db=blocker / "memgit" / "index.db", embedder=EMBEDDER_A, warn=warnings)
    index.sync()
    assert index.in_memory
    assert keyword_ids(index, "fallback") == ["m-a"]
    assert [m for m, _ in index.search("src/fallback.py").channels.anchor or ()] == ["m-a"]
    assert index.search("fallback").channels.vector is None
    assert len(warnings) == 1 and "in-memory" in warnings[0]
    status = index.status()
    assert status["in_memory"] and status["vectors_on"] is False and "memory" in status["vectors_reason"]


READ_ONLY_INDEX = """
import json, sys
from pathlib import Path
from memgit.index.index import Index
from memgit.store.folder import Store

warnings = []
index = Index(Path(sys.argv[1]), Store(Path(sys.argv[2])), "none", warn=warnings.append)
index.sync()
hits = [mid for mid, _ in index.search("readonly").channels.keyword or ()]
print(json.dumps({"in_memory": index.in_memory, "hits": hits, "warnings": warnings}))
"""


def test_read_only_git_dir_falls_back_to_memory(folder: Path, tmp_path: Path) -> None:
    """Run in a process the folder's mode refuses (as root too: see tests/unprivileged.py)."""
    import json
    import subprocess
    import sys

    from .unprivileged import preexec

    drop = preexec()
    write(folder, "a.md", "m-a", "Readonly memory")
    git_dir = tmp_path / "ro-git"
    git_dir.mkdir()
    git_dir.chmod(0o555)
    try:
        done = subprocess.run([sys.executable, "-c", READ_ONLY_INDEX, str(git_dir / "memgit" / "index.db"),
                               str(folder)], preexec_fn=drop, capture_output=True, text=True, timeout=120,
                              check=False)
    finally:
        git_dir.chmod(0o755)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["in_memory"] is True and seen["hits"] == ["m-a"]
    assert seen["warnings"] == [f"cannot create {git_dir / 'memgit'} (Permission denied); recalling from "
                                "a fresh in-memory index (keywords and anchors only)"]
    assert not (git_dir / "memgit").exists()


def test_schema_version_and_migration_from_a_newer_index(folder: Path) -> None:
    write(folder, "a.md", "m-a", "Versioned memory")
    index = make(folder)
    index.sync()
    db = index.db_path
    index.close()
    conn = sqlite3.connect(str(db))
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    index = make(folder)  # a cache from another version: dropped and rebuilt
    index.sync()
    assert keyword_ids(index, "versioned") == ["m-a"]
    assert index.status()["schema_version"] == sq.SCHEMA_VERSION


# -- search -------------------------------------------------------------------------------

NASTY = [
    'NOT', 'AND OR NOT', '"', '""', "'", "NEAR(a b)", "a NEAR b", "*", "x*", "(", ")", "-", "--x",
    "src/auth/login.py::Login.check", "::", "a:b", "title:foo", "^start", "{a b}", "+", "a + b",
    "\x00\x01\x1f", "\u200b", "😀 emoji", "Ünïcödé", "한국어 日本語 中文 mixed", "\\", "%", "_",
    "SELECT * FROM memories; DROP TABLE memories", "x" * 5000, "word " * 3000,
]


@pytest.fixture
def filled(folder: Path) -> Index:
    write(folder, "a.md", "m-login", "Login fails on empty password",
          "In src/auth/login.py::Login.check an empty password raised a null pointer.",
          files=("src/auth/login.py",), kind="lesson")
    write(folder, "b.md", "m-cfg", "parse_config returns a tuple", "So callers can log warnings.")
    write(folder, "c.md", "m-old", "Old decision about tabs", "We used tabs.", status="archived")
    write(folder, "d.md", "m-task", "Task note about login retries", "Retry login twice.", task_id="T-1")
    index = make(folder)
    index.sync()
    return index


@pytest.mark.parametrize("query", NASTY)
def test_fts_syntax_and_odd_queries_never_raise(filled: Index, query: str) -> None:
    found = filled.search(query)
    for channel in (found.channels.keyword, found.channels.anchor):
        for _, strength in channel or ():
            assert 0.0 <= strength <= 1.0


#: Anchor-like queries wrapped in FTS syntax or punctuation: each must still find its memory,
#: by keywords and by the exact anchor channel (archived `m-old` never comes back).
ANCHOR_LIKE = {
    "src/auth/login.py::Login.check": "m-login", "src/auth/login.py": "m-login", "login.py": "m-login",
    "Login.check": "m-login", "auth/login.py:12": "m-login", "`src/auth/login.py`": "m-login",
    "login.py::Login": "m-login", "parse_config()": "m-cfg", '"parse_config"': "m-cfg",
    "NOT parse_config": "m-cfg", "parse_config OR tabs": "m-cfg", "title:parse_config": "m-cfg",
    "parse_config*": "m-cfg", "(parse_config": "m-cfg", "-parse_config": "m-cfg",
    "parse_config; DROP TABLE memories": "m-cfg",
}


@pytest.mark.parametrize("query", list(ANCHOR_LIKE))
def test_anchor_like_queries_in_query_syntax_find_their_memory(filled: Index, query: str) -> None:
    found = filled.search(query)
    assert [m for m, _ in found.channels.keyword or ()] == [ANCHOR_LIKE[query]]
    assert [m for m, _ in found.channels.anchor or ()] == [ANCHOR_LIKE[query]]
    assert keyword_ids(filled, "parse_config") == ["m-cfg"]  # and the index is still whole


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_any_text_is_a_safe_query(filled: Index, query: str) -> None:
    found = filled.search(query)
    assert all(0.0 <= s <= 1.0 for _, s in found.channels.keyword or ())


def test_channels_and_strengths(filled: Index) -> None:
    found = filled.search("null pointer in src/auth/login.py")
    keyword = dict(found.channels.keyword or ())
    anchor = dict(found.channels.anchor or ())
    assert list(keyword)[0] == "m-login" and 0.3 < keyword["m-login"] <= 1.0
    assert list(anchor) == ["m-login"] and anchor["m-login"] == pytest.approx(1.0)
    assert found.channels.vector is None  # embedder "none"
    assert filled.search("just some words").channels.anchor is None  # no anchors in the query


def test_title_outweighs_body(folder: Path) -> None:
    write(folder, "a.md", "m-title", "Sharding strategy", "We split tables by customer.")
    write(folder, "b.md", "m-body", "Database notes", "A word on the sharding of tables.")
    index = make(folder)
    index.sync()
    assert keyword_ids(index, "sharding")[0] == "m-title"


def test_stemming(filled: Index) -> None:
    assert "m-login" in keyword_ids(filled, "failing logins")


def test_archived_only_when_asked(filled: Index) -> None:
    assert keyword_ids(filled, "tabs") == []
    assert keyword_ids(filled, "tabs", include_archived=True) == ["m-old"]
    assert filled.search("m-old").exact == ()
    assert filled.search("m-old", include_archived=True).exact == ("m-old",)


def test_task_filter(filled: Index) -> None:
    assert set(keyword_ids(filled, "login")) == {"m-login", "m-task"}
    assert set(keyword_ids(filled, "login", task_id="T-1")) == {"m-login", "m-task"}
    assert set(keyword_ids(filled, "login", task_id="T-2")) == {"m-login"}
    assert keyword_ids(filled, "login", kinds=["lesson"]) == ["m-login"]


def test_exact_id_and_title(filled: Index) -> None:
    assert filled.search("m-cfg").exact == ("m-cfg",)
    assert filled.search("  PARSE_CONFIG returns a TUPLE ").exact == ("m-cfg",)
    assert filled.search("parse_config").exact == ()


def test_nonsense_query_finds_nothing_strong(filled: Index) -> None:
    found = filled.search("purple elephants dancing the tango")
    assert all(s < 0.2 for _, s in found.channels.keyword or ())


def test_status(filled: Index) -> None:
    status = filled.status()
    assert status["memories"] == 4 and status["active"] == 3 and status["archived"] == 1
    assert status["vectors_on"] is False and "none" in status["vectors_reason"]
    assert status["channels"] == ["keyword", "anchor"]
    assert status["anchors"] > 0 and status["size_bytes"] > 0 and status["last_sync"]
    assert "porter" in status["fts_tokenizer"]


def test_rebuild(filled: Index, folder: Path) -> None:
    (folder / "b.md").unlink()
    report = filled.rebuild()
    assert report.changed == 3 and report.removed == 1
    assert filled.status()["memories"] == 3
    assert keyword_ids(filled, "tuple") == []


def test_rebuild_keeps_vectors_of_unchanged_text_and_resumes(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_mod, "EMBED_BATCH", 2)
    for i in range(6):
        write(folder, f"m{i}.md", f"m-{i}", f"Memory {i}", "words " * (i + 1))
    index = make(folder, embedder=EMBEDDER_A)

    def interrupt(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        index.rebuild(progress=interrupt)
    assert index.status()["vectors"] == 2
    report = index.rebuild()  # a second `memgit reindex` continues
    # The memories' own texts (title, newline, body); the rest are the title lane's.
    assert report.embedded == 4 and len([t for t in WordHashEmbedder.calls if "\n" in t]) == 6
    write(folder, "m0.md", "m-0", "Memory 0", "different words")
    assert index.rebuild().embedded == 1


# -- vectors ------------------------------------------------------------------------------


def test_vectors_auto_embeds_a_few_and_defers_many(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_mod, "AUTO_EMBED_MAX", 3)
    write(folder, "a.md", "m-a", "Vector memory one", "alpha beta")
    warnings = Warnings()
    index = make(folder, embedder=EMBEDDER_A, warn=warnings)
    report = index.sync()
    assert report.embedded == 1 and index.status()["vectors"] == 1
    assert [m for m, _ in index.search("alpha beta").channels.vector or ()] == ["m-a"]
    for i in range(5):
        write(folder, f"n{i}.md", f"m-n{i}", f"Note {i}", "gamma")
    report = index.sync()
    assert report.embedded == 0 and report.pending_vectors == 5
    assert any("5 memories have no vectors yet; run 'memgit reindex'" in w for w in warnings)
    index.sync()
    assert sum("no vectors yet" in w for w in warnings) == 1  # once
    report = index.sync(embed="all")
    assert report.embedded == 5 and index.status()["pending_vectors"] == 0


def test_only_changed_memories_are_re_embedded(folder: Path) -> None:
    write(folder, "a.md", "m-a", "First", "one")
    write(folder, "b.md", "m-b", "Second", "two")
    index = make(folder, embedder=EMBEDDER_A)
    index.sync(embed="all")
    WordHashEmbedder.calls = []
    write(folder, "b.md", "m-b", "Second", "two changed")
    write(folder, "a.md", "m-a", "First", "one", status="archived")  # metadata only
    os.rename(folder / "a.md", folder / "moved.md")
    index.sync(embed="all")
    assert WordHashEmbedder.calls == ["Second\ntwo changed"]


def test_embedding_is_resumable(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_mod, "EMBED_BATCH", 2)
    for i in range(7):
        write(folder, f"m{i}.md", f"m-{i}", f"Memory {i}", "x " * i)
    index = make(folder, embedder=EMBEDDER_A)
    index.sync(embed="none")
    seen: list[tuple[int, int]] = []

    def interrupt(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        index.sync(embed="all", progress=interrupt)
    assert seen[0] == (0, 7) and index.status()["vectors"] == 4
    first = list(WordHashEmbedder.calls)
    again = make(folder, embedder=EMBEDDER_A)
    progress: list[tuple[int, int]] = []
    report = again.sync(embed="all", progress=lambda d, t: progress.append((d, t)))
    assert report.embedded == 3 and (3, 3) in progress  # then the title lane's own round
    own = [t for t in WordHashEmbedder.calls if "\n" in t]  # the memories' texts, not the lane's
    assert len(own) == 7 and not set(first) & set(WordHashEmbedder.calls[len(first):])


def test_embedder_change_re_embeds(folder: Path) -> None:
    write(folder, "a.md", "m-a", "Alpha", "one")
    write(folder, "b.md", "m-b", "Beta", "two")
    index = make(folder, embedder=EMBEDDER_A)
    index.sync(embed="all")
    index.close()
    warnings = Warnings()
    other = make(folder, embedder=EMBEDDER_B, warn=warnings)
    report = other.sync(embed="all")
    assert report.embedded == 2
    assert other.status()["embedder_id"] == "word-hash-b"
    assert any("embedder changed (word-hash-a -> word-hash-b)" in w for w in warnings)
    # and with embedder "none", existing vectors are left alone and not used
    none = make(folder)
    write(folder, "b.md", "m-b", "Beta", "two more")
    none.sync()
    assert none.search("beta").channels.vector is None


def test_vector_channel_respects_filters(folder: Path) -> None:
    write(folder, "a.md", "m-a", "Shared words here", "apple banana")
    write(folder, "b.md", "m-b", "Shared words there", "apple banana", status="archived")
    write(folder, "c.md", "m-c", "Shared words task", "apple banana", task_id="T-9")
    index = make(folder, embedder=EMBEDDER_A)
    index.sync(embed="all")
    ids = lambda **kw: {m for m, _ in index.search("apple banana", **kw).channels.vector or ()}  # noqa: E731
    assert ids() == {"m-a", "m-c"}
    assert ids(include_archived=True) == {"m-a", "m-b", "m-c"}
    assert ids(task_id="T-1") == {"m-a"}
    assert ids(task_id="T-9") == {"m-a", "m-c"}


# -- concurrency --------------------------------------------------------------------------

WORKER = r"""
import sys, time, random
sys.path.insert(0, {root!r})
from pathlib import Path
from memgit.index.index import Index
from memgit.store.folder import Store
from memgit.memory.format import Memory
folder, db, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
store = Store(folder)
index = Index(db, store, "none", warn=lambda m: None)
rng = random.Random(me)
end = time.time() + 2.5
n = 0
while time.time() < end:
    n += 1
    rel = f"{{me}}-{{rng.randrange(15)}}.md"
    if rng.random() < 0.2 and (folder / rel).exists():
        (folder / rel).unlink()
    else:
        store.write(Memory(id=rel[:-3], title=f"{{me}} memory {{n}}", body="shared words " * rng.randrange(1, 20), path=rel))
    index.sync()
    index.search("shared words memory")
# A write by the other process in the clock tick of one's own is listed once that tick is over
# (memgit.index.changes, RACY_NS): the last sync comes after it, so it sees every file.
time.sleep(0.3)
index.sync()
print(n)
"""


def test_two_processes_syncing_and_searching_do_not_corrupt(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(root=str(ROOT)))
    procs = [subprocess.Popen([sys.executable, str(script), str(folder), str(db), name],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in ("p", "q")]
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert int(out) > 3
    # What the two processes left, read as they left it: no memgit call (which would repair it).
    from memgit.index import sqlite as sq

    raw = sq.driver().connect(str(db))
    try:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        raw.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
        left = {r[0] for r in raw.execute("SELECT id FROM memories")}
        fts_rows = raw.execute("SELECT count(*) FROM memories_fts").fetchone()[0]
    finally:
        raw.close()
    on_disk = {m.id: m for m in Store(folder).load().memories}
    assert left == set(on_disk) and fts_rows == len(on_disk)  # the last process's sync saw every file
    index = make(folder, db=db)
    assert index.sync().touched == 0  # nothing left for an ordinary sync to repair
    assert index.memories(on_disk) == on_disk
