"""What a user's own embedder (`module:attr`) gives memgit is normalised or refused, never
trusted as it is.

sqlite-vec computes cosines in float32: a plug-in whose vectors have huge but finite
components (1e30) used to overflow every cosine into inf/NaN, so the vector channel silently
gave 0 for everything. Every vector memgit stores or queries with is now scaled to length 1
(its norm taken in float64), and one with no direction (zero, NaN, inf, a norm past float64,
the wrong length) is refused with a warning: its memory is found by keywords and anchors, and
is not embedded again until its text changes.

The embedders are real plug-in modules written into `tmp_path` and loaded through memgit's
own `module:attr` interface (bags of hashed words, 16-d, numpy only); real git repositories,
real SQLite, and the CLI run as a subprocess the way a user runs it.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import memgit
from memgit.index.unit import unit

PLUGIN = '''
import hashlib, re
import numpy as np

EMBEDDED = []  # every text embedded, in order


def words(text, scale=1.0):
    v = np.zeros(16, dtype=np.float64)
    for w in re.findall(r"[a-z]+", text.lower()):
        v[int(hashlib.sha1(w.encode()).hexdigest(), 16) % 16] += 1.0
    if not v.any():
        v[0] = 1.0
    return v * scale


class Plain:
    id = "words-16"
    dim = 16
    scale = 1.0

    def one(self, text):
        EMBEDDED.append(text)
        return words(text, self.scale).astype(np.float32)

    def embed(self, texts):
        return np.stack([self.one(t) for t in texts])

    def embed_query(self, text):
        return self.one(text)


class Huge(Plain):
    """The same directions, every component times 1e30: finite in float32, but its squares are not."""
    id = "words-16-huge"
    scale = 1e30


class Odd(Plain):
    """No direction for some texts: what a plug-in may give for a text it cannot embed."""
    id = "words-16-odd"

    def one(self, text):
        EMBEDDED.append(text)
        if "blankword" in text:
            return np.zeros(16, dtype=np.float32)
        if "nanword" in text:
            return np.full(16, np.nan, dtype=np.float32)
        if "infword" in text:
            return np.full(16, np.inf, dtype=np.float32)
        if "hugeword" in text:
            return np.full(16, 1e308, dtype=np.float64)  # finite, but its norm is past float64
        if "shortword" in text:
            return np.ones(3, dtype=np.float32)  # not the embedder's dimension
        return words(text).astype(np.float32)

    def embed(self, texts):
        return [self.one(t) for t in texts]
'''

NOTES = [
    ("Uploads retry three times", "The uploader retries a failed upload three times with backoff."),
    ("Database runs in WAL mode", "SQLite runs in WAL journal mode so readers never block the writer."),
    ("Release with make release", "Run make release from the root to publish a version."),
    ("Tests run under pytest xdist", "Use pytest -n 2 for the whole suite on two cores."),
    ("Config lives in config.toml", "The loader reads config.toml first, then the environment."),
]
ODD = [
    ("Blank note", "The blankword embedder case."),
    ("NaN note", "The nanword embedder case."),
    ("Inf note", "The infword embedder case."),
    ("Overflowing note", "The hugeword embedder case."),
    ("Short note", "The shortword embedder case."),
]
QUERIES = ["upload retries", "how do I publish a release", "WAL journal readers", "pytest cores",
           "config loader"]


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "wordsplug.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop("wordsplug", None)
    return folder


def store_with(root: Path, embedder: str, notes: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch,
               warnings: list[str] | None = None) -> memgit.Memgit:
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", embedder)
    mem = memgit.open(root, warn=(warnings.append if warnings is not None else lambda message: None))
    mem.init()
    for title, body in notes:
        mem.remember(body, title=title)
    return mem


def ranked(mem: memgit.Memgit, query: str) -> list[tuple[str, float, dict[str, float]]]:
    return [(h.title, h.score, dict(h.channels)) for h in mem.recall(query)]


def finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    return True


def test_unit_scales_and_refuses() -> None:
    import numpy as np

    same = unit(np.array([3.0, 4.0], dtype=np.float32))
    assert same == unit([3e300, 4e300]) == np.array([0.6, 0.8], dtype=np.float32).tobytes()
    huge = unit(np.array([3e30, 4e30], dtype=np.float32))  # 3e30 is not exact in float32
    assert huge is not None and np.allclose(np.frombuffer(huge, dtype=np.float32), [0.6, 0.8])
    assert unit(same) == same  # a stored vector read back (the warm embedder's bytes) stays as it is
    for bad in (np.zeros(4), [float("nan"), 1.0], [float("inf"), 1.0], [1.5e308, 1.5e308], [], "text",
                np.ones((2, 2))):
        assert unit(bad) is None, bad
    assert unit([1.0, 2.0], dim=3) is None


def test_huge_components_rank_as_their_directions(tmp_path: Path, plugin: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    plain = store_with(tmp_path / "plain", "wordsplug:Plain", NOTES, monkeypatch)
    expected = {q: ranked(plain, q) for q in QUERIES}
    huge = store_with(tmp_path / "huge", "wordsplug:Huge", NOTES, monkeypatch)
    for query in QUERIES:
        hits = huge.recall(query)
        assert hits.how is not None and hits.how.vectors.state == "used"
        got = [(h.title, h.score, dict(h.channels)) for h in hits]
        assert [g[0] for g in got] == [e[0] for e in expected[query]], query
        for (_, score, channels), (_, want, want_channels) in zip(got, expected[query]):
            assert score == pytest.approx(want, abs=1e-4)
            assert channels.keys() == want_channels.keys()
            assert all(channels[k] == pytest.approx(want_channels[k], abs=1e-4) for k in channels)
        assert any(ch.get("vector", 0.0) > 0.2 for _, _, ch in got), got  # the channel still speaks


def test_the_command_line_with_a_huge_embedder_gives_no_nan(tmp_path: Path, plugin: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    mem = store_with(tmp_path / "repo", "wordsplug:Huge", NOTES, monkeypatch)
    del mem
    env = {**os.environ, "PYTHONPATH": str(plugin), "MEMGIT_INDEX_EMBEDDER": "wordsplug:Huge"}
    done = subprocess.run([sys.executable, "-m", "memgit", "recall", "--json", "how do I publish a release"],
                          cwd=tmp_path / "repo", capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr

    def no_nan(word: str) -> float:
        raise AssertionError(f"{word} in recall's JSON")

    hits = json.loads(done.stdout, parse_constant=no_nan)
    assert hits[0]["title"] == "Release with make release"
    assert hits[0]["channels"]["vector"] > 0.3
    assert finite(hits)


def test_vectors_with_no_direction_are_refused_and_the_memories_stay_found(
        tmp_path: Path, plugin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warnings: list[str] = []
    mem = store_with(tmp_path / "repo", "wordsplug:Odd", NOTES + ODD, monkeypatch, warnings)
    hits = mem.recall("upload retries")
    assert hits[0].title == "Uploads retry three times"
    assert hits.how is not None and hits.how.vectors.state == "used"
    assert any("gave no usable vector" in w and "5 text(s)" in w for w in warnings), warnings
    db = sqlite3.connect(mem.index_path())
    assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(NOTES)
    assert db.execute("SELECT count(*) FROM memories WHERE vec_sha IS NULL").fetchone()[0] == 0  # not pending
    db.close()
    for (title, _), word in zip(ODD, ("blankword", "nanword", "infword", "hugeword", "shortword")):
        found = mem.recall(f"{word} embedder")
        assert found[0].title == title
        assert all(finite(h.score) and finite(dict(h.channels)) for h in found)
    blank = mem.recall("blank note case")[0]  # its text has no vector, its title has one: a vector
    assert blank.title == "Blank note" and "vector" not in blank.channels  # it lacks is not a poor one
    assert blank.relevance > 0.8
    refused = mem.recall("blankword")  # the query's own vector is refused: keywords answer
    assert refused[0].title == "Blank note"
    assert refused.how is not None and refused.how.vectors.state == "failed"
    assert "no usable vector" in (refused.how.vectors.detail or "")
    assert any("for a query" in w for w in warnings), warnings
    mem.close()
    embedded = sys.modules["wordsplug"].EMBEDDED
    embedded.clear()
    again = memgit.open(tmp_path / "repo", warn=lambda message: None)
    again.recall("config loader")
    assert embedded == ["config loader"]  # the refused memories are not embedded again


def test_a_refused_passage_keeps_its_place_and_matches_nothing(tmp_path: Path, plugin: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [f"Step {i}: the script uploads artefact {i}." for i in range(24)]
    lines[20] = "Step 20: nanword mirror."
    mem = store_with(tmp_path / "repo", "wordsplug:Odd", [("Release runbook", "\n".join(lines)), *NOTES[:3]],
                     monkeypatch)
    mem.reindex()
    hits = mem.recall("artefact mirror script")  # its own vector is refused too (nanword): keywords find it
    runbook = next(h for h in hits if h.title == "Release runbook")
    assert runbook.channels["keyword"] == 1.0 and runbook.relevance >= 0.25  # its other passages have vectors
    assert all(finite(h.score) and finite(dict(h.channels)) for h in hits)
    db = sqlite3.connect(mem.index_path())
    rows = db.execute("SELECT n, embedding FROM passage_vectors ORDER BY n").fetchall()
    db.close()
    assert len(rows) > 1 and [n for n, _ in rows] == list(range(1, len(rows) + 1))  # numbering kept
    assert sum(not any(blob) for _, blob in rows) == 1  # the refused one: no direction
