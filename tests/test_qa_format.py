"""QA: hand-written files that are not valid UTF-8 (a Latin-1 editor) must not lose bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

import memgit
from memgit.errors import MemgitError

from .conftest import git

LATIN1 = b"---\nid: m-aaa001\ntitle: Caf\xe9 opening hours\nkind: fact\n---\nThe caf\xe9 opens at 8.\n"


def test_edit_and_forget_refuse_a_file_that_is_not_utf8(repo: Path, mem) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".memory" / "cafe.md"
    path.write_bytes(LATIN1)
    git(repo, "add", ".memory/cafe.md")
    git(repo, "commit", "-q", "-m", "hand-written")
    assert mem.get("m-aaa001").title.startswith("Caf")  # still read (with a replacement character)
    with pytest.raises(MemgitError, match="UTF-8"):
        mem.update("m-aaa001", confidence=0.5)
    with pytest.raises(MemgitError, match="UTF-8"):
        mem.forget("m-aaa001")
    assert path.read_bytes() == LATIN1


def test_lint_fix_skips_a_file_that_is_not_utf8(repo: Path, mem) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".memory" / "cafe.md"
    data = LATIN1.replace(b"id: m-aaa001\n", b"")
    path.write_bytes(data)
    git(repo, "add", ".memory/cafe.md")
    git(repo, "commit", "-q", "-m", "hand-written")
    problems = mem.lint(fix=True)  # used to crash with UnicodeDecodeError
    assert any("UTF-8" in p.message for p in problems)
    assert path.read_bytes() == data


def test_an_id_yaml_reads_as_a_number_keeps_its_written_text(repo: Path, mem) -> None:  # type: ignore[no-untyped-def]
    """`id: 0x1F` is the number 31 to YAML: the memory was unreachable as `0x1F` and lint was silent."""
    (repo / ".memory" / "hex.md").write_text("---\nid: 0x1F\ntitle: version 1.10  \n---\nbody\n")
    (repo / ".memory" / "ver.md").write_text("---\nid: v-110\ntitle: 1.10\n---\nbody\n")
    assert mem.get("0x1F").title == "version 1.10"
    assert mem.get("v-110").title == "1.10"
    messages = [p.message for p in mem.lint()]
    assert any("0x1F" in m and "quote" in m for m in messages), messages
