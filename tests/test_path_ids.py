"""No memory is hidden by its file name: two files never share a path-derived id."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.memory import format as fmt

from .conftest import git

#: Pairs of hand-written files (no `id:`) whose path-derived ids used to be the same.
COLLIDING = [
    ("日本.md", "中文.md"),
    ("notes.md", "notes .md"),
    ("team/notes.md", "team.notes.md"),
]


@pytest.mark.parametrize(("first", "second"), COLLIDING)
def test_files_without_ids_are_all_recalled_and_listed(mem, repo: Path, first: str, second: str) -> None:  # type: ignore[no-untyped-def]
    folder = repo / ".memory"
    for name, word in ((first, "aardvark"), (second, "bison")):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"The {word} lives in this file.\n", encoding="utf-8")
    listed = {m.path: m.id for m in mem.list()}
    assert set(listed) == {first, second} and len(set(listed.values())) == 2
    assert [h.memory.path for h in mem.recall("aardvark", min_score=0)] == [first]
    assert [h.memory.path for h in mem.recall("bison", min_score=0)] == [second]
    # A fresh clone's index (a rebuild) reads them under the same ids as the store.
    mem.reindex()
    assert {m.path: m.id for m in mem.list()} == listed


def test_non_ascii_names_get_a_hash_of_their_exact_path() -> None:
    assert fmt.path_id("日本.md") != fmt.path_id("中文.md")
    assert fmt.path_id("日本.md").startswith("memory-")
    assert fmt.path_id("team/日本.md").startswith("team-")
    assert fmt.ID_RE.match(fmt.path_id("日本.md"))
    # Ordinary ASCII names keep the ids people already use.
    names = ("notes.md", "team/notes.md", "team/tooling notes.md", "Upper-case.MD")
    assert [fmt.path_id(p) for p in names] == ["notes", "team.notes", "team.tooling-notes", "Upper-case"]


def test_lint_names_the_collision_and_fix_writes_distinct_ids(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    folder = repo / ".memory"
    (folder / "notes.md").write_text("The aardvark note.\n")
    git(repo, "add", ".memory/notes.md")
    git(repo, "commit", "-q", "-m", "notes")
    (folder / "notes .md").write_text("The bison note.\n")
    result = CliRunner().invoke(cli, ["-C", str(repo), "lint"])
    assert result.exit_code != 0
    hashed = fmt.hashed_path_id("notes .md")
    assert (f"notes .md: duplicate id 'notes': its path gives the id of notes.md, so it is read as {hashed!r}"
            in result.output)
    result = CliRunner().invoke(cli, ["-C", str(repo), "lint", "--fix"])
    assert "duplicate id" not in result.output
    assert (folder / "notes.md").read_text() == "---\nid: notes\n---\n\nThe aardvark note.\n"
    assert (folder / "notes .md").read_text() == f"---\nid: {hashed}\n---\n\nThe bison note.\n"
    assert {m.id for m in memgit.open(repo).list()} == {"notes", hashed}
