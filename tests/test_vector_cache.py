"""A text embedded once is never embedded again: the vector cache beside the index.

Real repositories and real SQLite; the embedder is a recording stand-in (hashed words, the
standard library only) loaded through memgit's own `module:attr` plug-in interface, so the
tests can see every text given to `embed()`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pytest

import memgit
FILE = "vectors.db"  # the cache beside the index (memgit.index.vectorcache)

from .gated_embedder import _vector

EMBEDDED: dict[str, list[str]] = {}  # embedder id -> every text it embedded, in order


class Recording:
    """Records each text it embeds under its id."""

    dim = 64

    def __init__(self, id: str = "recording-a") -> None:
        self.id = id

    def embed(self, texts: Sequence[str]) -> list[Any]:
        EMBEDDED.setdefault(self.id, []).extend(texts)
        return [_vector(text) for text in texts]

    def embed_query(self, text: str) -> Any:
        return _vector(text)


RECORDING_A = Recording("recording-a")
RECORDING_B = Recording("recording-b")
A = f"{__name__}:RECORDING_A"
B = f"{__name__}:RECORDING_B"


@pytest.fixture(autouse=True)
def recorded(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    EMBEDDED.clear()
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", A)
    return EMBEDDED


def store(repo: Path, embedder: str = A) -> Any:
    import os

    os.environ["MEMGIT_INDEX_EMBEDDER"] = embedder
    return memgit.open(repo, warn=lambda message: None)


def seeded(repo: Path, n: int = 4) -> list[str]:
    with store(repo) as mem:
        mem.init()
        ids = [mem.remember(f"Fact {i}: the retry queue {i} backs off {i} seconds", kind="fact").memory.id
               for i in range(n)]
        mem.reindex()
    return ids


def delete_index(repo: Path) -> None:
    for path in (repo / ".git" / "memgit").glob("index.db*"):
        path.unlink()


def vectors_of(repo: Path) -> int:
    with store(repo) as mem:
        return int(mem.status()["vectors"])


def test_a_rebuilt_index_takes_its_vectors_from_the_cache(repo: Path, recorded: dict[str, list[str]]) -> None:
    seeded(repo)
    first = list(recorded["recording-a"])
    assert len(first) == 4 and len(set(first)) == 4
    assert (repo / ".git" / "memgit" / FILE).is_file()
    delete_index(repo)
    with store(repo) as mem:
        mem.reindex()
        assert mem.status()["vectors"] == 4 and mem.status()["pending_vectors"] == 0
        hits = mem.recall("retry queue 2 backs off", min_score=0)
        assert hits and hits[0].title.startswith("Fact 2")
    assert recorded["recording-a"] == first  # nothing embedded a second time


def test_an_edit_undone_is_not_embedded_again(repo: Path, recorded: dict[str, list[str]]) -> None:
    ids = seeded(repo, 2)
    with store(repo) as mem:
        before = mem.get(ids[0]).body
        mem.update(ids[0], body="The retry queue now waits a full minute")
        mem.index.sync()
        mem.update(ids[0], body=before)
        mem.index.sync()
        assert mem.status()["pending_vectors"] == 0
    # The memories' own texts end with their body after a newline; the others are the title
    # lane's (`memgit.index.titles`: the edited memory's title got a lane once it had a body).
    texts = [text for text in recorded["recording-a"] if "\n" in text]
    assert len(texts) == 3  # two at first, the edited text once; the text restored came from the cache
    assert len(set(texts)) == 3
    assert len(recorded["recording-a"]) == len(set(recorded["recording-a"]))  # nothing twice


def test_an_embedder_switched_back_does_not_embed_again(repo: Path, recorded: dict[str, list[str]]) -> None:
    seeded(repo, 3)
    with store(repo, B) as mem:
        mem.reindex()
    with store(repo, A) as mem:
        mem.reindex()
        assert mem.status()["vectors"] == 3
    assert len(recorded["recording-a"]) == 3 and len(recorded["recording-b"]) == 3


def test_a_corrupt_cache_is_started_again(repo: Path, recorded: dict[str, list[str]]) -> None:
    seeded(repo, 2)
    cache = repo / ".git" / "memgit" / FILE
    for extra in ("-wal", "-shm"):
        Path(str(cache) + extra).unlink(missing_ok=True)
    cache.write_bytes(b"this is not a database" * 100)
    delete_index(repo)
    with store(repo) as mem:
        mem.reindex()  # embeds again (the cache was lost), and keeps the vectors anew
        assert mem.status()["vectors"] == 2
    assert len(recorded["recording-a"]) == 4
    delete_index(repo)
    with store(repo) as mem:
        mem.reindex()
    assert len(recorded["recording-a"]) == 4


def test_an_unwritable_cache_leaves_embedding_working(repo: Path, recorded: dict[str, list[str]]) -> None:
    cache = repo / ".git" / "memgit" / FILE
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.mkdir()  # a folder where the file should be: SQLite cannot open it
    seeded(repo, 2)
    assert vectors_of(repo) == 2
