"""What recall leaves out by default: other kinds (inside the vector channel, not after
its global top k), archived, expired and superseded memories.

Real git repositories and SQLite; vectors from the stand-in `DialEmbedder` (the cosine
with any query is written in the text).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import memgit
import memgit.channels as channels
import memgit.index as index_mod


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(autouse=True)
def dial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "tests.test_recall_pending:DialEmbedder")
    monkeypatch.setattr(index_mod, "_warned", set())


def write(folder: Path, memory_id: str, title: str, body: str, kind: str = "fact", **extra: str) -> None:
    lines = [f"id: {memory_id}", f"title: {title}", f"kind: {kind}", "confidence: 0.9", "source: user"]
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
