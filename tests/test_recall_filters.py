"""What recall leaves out by default: other kinds (inside the vector channel, not after
its global top k), archived, expired and superseded memories.

Real git repositories and SQLite; vectors from the stand-in `DialEmbedder` (the cosine
with any query is written in the text).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import memgit
import memgit.index.channels as channels


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(autouse=True)
def dial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "tests.test_recall_pending:DialEmbedder")


def write(folder: Path, memory_id: str, title: str, body: str, kind: str = "fact", **extra: str) -> None:
    lines = [f"id: {memory_id}", f"title: {json.dumps(title)}", f"kind: {kind}", "confidence: 0.9", "source: user"]
    lines += [f"{key}: {value}" for key, value in extra.items()]
    (folder / f"{memory_id}.md").write_text("---\n" + "\n".join(lines) + f"\n---\n\n{body}\n", encoding="utf-8")


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, memgit.Memgit]:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    mem = memgit.open(root, warn=lambda message: None)
    mem.init()
    return root / ".memory", mem


@pytest.mark.parametrize("exact_max", [10**9, 0], ids=["exact", "two-stage"])
def test_kind_filter_applies_inside_the_vector_channel(store: tuple[Path, memgit.Memgit], exact_max: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    folder, mem = store
    for n in range(300):  # facts nearer to every query than any preference
        write(folder, f"fact-{n:03d}", f"Fact {n}", f"Fact number {n} [cos 0.9].")
    write(folder, "pref-a", "Answers in short sentences", "The user likes short answers [cos 0.6].", "preference")
    write(folder, "pref-b", "Tabs over spaces", "Indent with tabs [cos 0.5].", "preference")
    mem.reindex()
    monkeypatch.setattr(channels, "VECTOR_EXACT_MAX", exact_max)
    found = mem.index.search("how should replies look", kinds=("preference",))
    assert [mid for mid, _ in found.channels.vector or ()] == ["pref-a", "pref-b"]
    hits = mem.recall("how should replies look", kinds=["preference"], min_score=0, record=False)
    assert [h.id for h in hits] == ["pref-a", "pref-b"]
    assert hits[0].channels["vector"] == pytest.approx(0.6)
    # unfiltered, the facts fill the top as before
    assert {mid for mid, _ in mem.index.search("how should replies look", limit=10).channels.vector or ()} \
        <= {f"fact-{n:03d}" for n in range(300)}


def test_expired_memories_are_recalled_only_with_archived(store: tuple[Path, memgit.Memgit]) -> None:
    folder, mem = store
    write(folder, "ckpt-old", "Checkpoint: websocket refactor", "Halfway through the websocket refactor.",
          "checkpoint", expires="2020-01-01T00:00:00+00:00")
    write(folder, "ckpt-day", "Checkpoint: websocket tests", "Websocket tests pending.", "checkpoint",
          expires="2021-06-30")
    write(folder, "ckpt-new", "Checkpoint: websocket docs", "Websocket docs to write.", "checkpoint",
          expires="2999-01-01T09:00:00+02:00")
    write(folder, "note", "Websocket note", "A websocket note.")
    assert {h.id for h in mem.recall("websocket", k=10, min_score=0, record=False)} == {"ckpt-new", "note"}
    assert {h.id for h in mem.recall("websocket", k=10, min_score=0, include_archived=True, record=False)} \
        == {"ckpt-old", "ckpt-day", "ckpt-new", "note"}


def test_superseded_memories_are_recalled_only_with_archived(store: tuple[Path, memgit.Memgit]) -> None:
    folder, mem = store
    write(folder, "cfg-v1", "parse_config returns a Config", "parse_config returns the Config alone.")
    write(folder, "cfg-v2", "parse_config returns a tuple", "parse_config returns (path, Config).",
          "decision", supersedes="[cfg-v1]")
    write(folder, "self", "parse_config is cached", "parse_config results are cached.", supersedes="[self]")
    assert {h.id for h in mem.recall("parse_config", k=10, min_score=0, record=False)} == {"cfg-v2", "self"}
    assert "cfg-v1" in {h.id for h in mem.recall("parse_config", k=10, min_score=0, include_archived=True,
                                                  record=False)}
    assert mem.recall("cfg-v1", record=False) == []  # not even by its id
    # archived, the newer memory no longer hides the one it replaced
    write(folder, "cfg-v2", "parse_config returns a tuple", "parse_config returns (path, Config).",
          "decision", supersedes="[cfg-v1]", status="archived")
    assert {h.id for h in mem.recall("parse_config", k=10, min_score=0, record=False)} == {"cfg-v1", "self"}


def test_a_version_3_index_gains_the_superseding_index_in_place(store: tuple[Path, memgit.Memgit]) -> None:
    import sqlite3

    from memgit.index import sqlite as sq

    folder, mem = store
    write(folder, "kept", "A memory with a vector", "Embedded once [cos 0.7].")
    mem.reindex()
    db = mem.index.db_path
    assert db is not None
    mem.index.close()
    conn = sqlite3.connect(str(db))
    conn.execute("DROP INDEX memories_superseding")
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    again = memgit.open(folder.parent, warn=lambda message: None)
    assert sq.user_version(again.index.conn) == sq.SCHEMA_VERSION
    assert again.index.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'memories_superseding'").fetchone() is not None
    assert again.index.status()["pending_vectors"] == 0  # nothing to embed again
