"""Unresolved merge conflicts in memory files: lint names them, recall still finds the memory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import memgit
from memgit.memory import lenient

from .conftest import git


def test_a_real_merge_conflict_is_reported_and_the_memory_still_recalled(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    m = mem.remember("Uploads retry with backoff\n\nThe uploader retries failed chunks.").memory
    git(repo, "switch", "-q", "-c", "feature")
    mem.update(m.id, title="Uploads retry five times with backoff", body="The uploader retries five times.")
    git(repo, "switch", "-q", "main")
    mem.update(m.id, title="Uploads retry three times with backoff", body="The uploader retries three times.")
    merge = subprocess.run(["git", "merge", "-q", "feature"], cwd=repo, capture_output=True, text=True)
    assert merge.returncode != 0  # a real conflict, markers written by git
    text = (repo / ".memory" / m.path).read_text()
    assert "<<<<<<< HEAD" in text and ">>>>>>> feature" in text

    during = memgit.open(repo, warn=lambda message: None)
    assert [h.id for h in during.recall("uploads retry backoff")][:1] == [m.id]
    shown = during.get(m.id)
    assert shown.title == "Uploads retry three times with backoff"  # the first side, HEAD's
    lines = text.split("\n")
    starts = [n for n, line in enumerate(lines, 1) if line.startswith("<<<<<<<")]
    reported = [p for p in during.lint() if "conflict" in p.message]
    assert [(p.path, p.line) for p in reported] == [(m.path, n) for n in starts]
    assert all(p.message == "unresolved merge conflict markers (<<<<<<<): resolve them" for p in reported)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_markers_in_the_body_keep_the_body_searchable(newline: str) -> None:
    text = newline.join([
        "---", "title: Cache TTL", "---", "", "The TTL is", "<<<<<<< HEAD", "60 seconds", "=======",
        "300 seconds", ">>>>>>> feature/ttl", "",
    ])
    memory, problems = lenient.check(text.encode(), "ttl.md")
    assert memory is not None and "60 seconds" in memory.body and "300 seconds" in memory.body
    assert [(p.line, p.message) for p in problems] == [(6, "unresolved merge conflict markers (<<<<<<<): resolve them")]


def test_markers_in_the_front_matter_read_the_first_side_diff3_too() -> None:
    text = (
        "---\ntitle: TTL\n<<<<<<< HEAD\nconfidence: 0.6\n||||||| base\nconfidence: 0.5\n=======\n"
        "confidence: 0.9\ntags: [x]\n>>>>>>> other\nkind: lesson\n---\nbody\n"
    )
    memory, problems = lenient.check(text, "ttl.md")
    assert memory is not None
    assert (memory.confidence, memory.kind, memory.tags, memory.body) == (0.6, "lesson", (), "body")
    assert [p.line for p in problems] == [3]


def test_a_setext_heading_is_not_a_conflict() -> None:
    memory, problems = lenient.check("---\ntitle: t\n---\nHeading\n=======\n\ntext\n", "h.md")
    assert problems == [] and memory is not None


def test_memgit_does_not_edit_a_file_with_conflict_markers(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".memory" / "ttl.md"
    text = "---\n<<<<<<< HEAD\ntitle: TTL is 60 s\n=======\ntitle: TTL is 300 s\n>>>>>>> other\n---\nbody\n"
    path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "markers committed by mistake")
    with pytest.raises(memgit.MemgitError, match="unresolved merge conflict markers: resolve them first"):
        mem.update("ttl", confidence=0.5)
    assert path.read_text() == text
