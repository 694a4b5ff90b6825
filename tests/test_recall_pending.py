"""Recall right after a `git pull` brings memories that have no vector yet.

A recall embeds at most `AUTO_EMBED_MAX` pending memories in the call, so after a pull of
60-100 memories most of them have no vector until `memgit reindex`. Their vector strength
is unknown, not 0: these tests pull real commits between two real repositories and check
that such a memory is judged on its keywords and anchors, ranks above vector-only noise,
passes the relevance floor, and that the list is sorted by the score it shows.

Vectors come from `DialEmbedder`, a stand-in whose cosines are written in the text
("[cos 0.85]"): the real model is not the point here, the arithmetic of the fusion is.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest

import memgit
from memgit.index.vectors import AUTO_EMBED_MAX

DIAL = re.compile(r"\[cos ([0-9.]+)\]")


class DialEmbedder:
    """A query is the unit vector e0; a text with "[cos c]" is c * e0 plus a unit vector
    orthogonal to e0 chosen by the text (so cosine with any plain query is c); a text
    without one is orthogonal to every query."""

    id = "dial-16"
    dim = 16

    def _one(self, text: str, query: bool) -> Any:
        vector = np.zeros(self.dim, np.float32)
        match = DIAL.search(text)
        if query and not match:
            vector[0] = 1.0
            return vector
        cos = float(match.group(1)) if match else 0.0
        axis = 1 + int(hashlib.sha1(text.encode()).hexdigest(), 16) % (self.dim - 1)
        vector[0], vector[axis] = cos, (1 - cos * cos) ** 0.5
        return vector

    def embed(self, texts: Sequence[str]) -> Any:
        return np.stack([self._one(t, query=False) for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._one(text, query=True)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def memory_file(folder: Path, memory_id: str, title: str, body: str) -> None:
    """A memory as a teammate's memgit wrote it, arriving as a plain file."""
    (folder / f"{memory_id}.md").write_text(
        f"---\nid: {memory_id}\ntitle: {title}\nkind: fact\nconfidence: 0.9\nsource: user\n---\n\n{body}\n",
        encoding="utf-8")


@pytest.fixture(autouse=True)
def dial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", f"{__name__}:DialEmbedder")


NOISE = [0.95, 0.9, 0.85, 0.8]  # vector-only candidates: similar to everything, about nothing


def pulled(tmp_path: Path, new: dict[str, tuple[str, str]], fillers: int,
           noise: Sequence[float] = NOISE) -> memgit.Memgit:
    """A clone whose recall embedded memories with the cosines `noise` to any query, then
    pulled `new` plus `fillers` unrelated memories from its origin (committed there as
    plain files)."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q")
    mem = memgit.open(origin, warn=lambda message: None)
    mem.init()
    folder = origin / ".memory"
    for n, cos in enumerate(noise):
        memory_file(folder, f"noise-{n}", f"Team lunch notes {n}", f"Lunch was pizza again [cos {cos}].")
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "memory: noise")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    local = memgit.open(clone, warn=lambda message: None)
    local.recall("lunch", record=False)  # embeds the few memories it has
    assert local.index.status()["pending_vectors"] == 0

    for memory_id, (title, body) in new.items():
        memory_file(folder, memory_id, title, body)
    for n in range(fillers):
        memory_file(folder, f"filler-{n:03d}", f"Release checklist step {n}",
                    f"Step {n} of the release checklist: tag, build wheels, upload.")
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "memory: a teammate's memories")
    git(clone, "pull", "-q")
    return memgit.open(clone, warn=lambda message: None)


ANSWER = {"new-answer": ("Flaky websocket reconnect needs jittered backoff",
                         "The websocket reconnect loop hammered the gateway; jittered backoff fixed it.")}


def test_a_keyword_answer_without_a_vector_outranks_vector_noise(tmp_path: Path) -> None:
    mem = pulled(tmp_path, ANSWER, fillers=60)
    hits = mem.recall("websocket reconnect backoff", k=5, min_score=0, record=False)
    assert mem.index.status()["pending_vectors"] > AUTO_EMBED_MAX  # still not embedded
    assert [h.id for h in hits][0] == "new-answer"
    assert "vector" not in hits[0].channels
    assert hits[0].relevance == pytest.approx(hits[0].channels["keyword"])  # its own evidence only


def test_the_list_is_sorted_by_the_score_it_shows(tmp_path: Path) -> None:
    mem = pulled(tmp_path, ANSWER, fillers=60)
    for query in ("websocket reconnect backoff", "websocket", "lunch pizza", "release checklist"):
        hits = mem.recall(query, k=10, min_score=0, record=False)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True), query
        assert all(0.0 <= h.score <= 1.0 and 0.0 <= h.relevance <= 1.0 for h in hits)


def test_a_keyword_match_among_100_pending_passes_the_floor(tmp_path: Path) -> None:
    mem = pulled(tmp_path, ANSWER, fillers=100, noise=[0.1, 0.05])
    # Two of the four words match: a real but partial keyword match, no vector yet. Its
    # vector counted as 0 put it under the floor, and recall said "nothing relevant found".
    hits = mem.recall("websocket gateway deadline telemetry", record=False)
    assert [h.id for h in hits] == ["new-answer"]
    assert hits[0].relevance == pytest.approx(hits[0].channels["keyword"])
    assert hits[0].relevance >= mem.config.recall_min_score


def test_once_embedded_the_vector_counts_again(tmp_path: Path) -> None:
    mem = pulled(tmp_path, ANSWER, fillers=60)
    mem.reindex()
    (hit,) = [h for h in mem.recall("websocket reconnect backoff", k=10, min_score=0, record=False)
              if h.id == "new-answer"]
    assert hit.channels.get("vector", 0.0) == 0.0  # orthogonal: embedded, and it counts as 0
    assert hit.relevance < hit.channels["keyword"]
