"""QA: hand-written files that are not valid UTF-8 (a Latin-1 editor) must not lose bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_the_secret_gate_scans_the_id(repo: Path, mem) -> None:  # type: ignore[no-untyped-def]
    """An imported id ends up in the front-matter and in the file name, both pushed."""
    import json

    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    report = mem.import_jsonl([json.dumps({"id": token, "title": "a note with a strange id"})])
    assert report.imported == 0
    assert any("secret in id" in line for line in report.skipped), report.skipped
    assert not [p for p in (repo / ".memory").iterdir() if token in p.name]
    (repo / ".memory" / "hand.md").write_text(f"---\nid: {token}\ntitle: hand-written\n---\nbody\n")
    assert any("secret in id" in p.message for p in mem.lint())


def test_lint_finds_a_secret_in_a_field_that_liberal_reading_replaced(repo: Path, mem) -> None:  # type: ignore[no-untyped-def]
    """`kind: <token>` is read as `fact`, so the memory no longer holds the token, but the file
    (pushed to the remote) still does: lint must say so, naming the field."""
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    (repo / ".memory" / "hand.md").write_text(f"---\ntitle: hand-written\nkind: {token}\nexpires: {token}\n---\nbody\n")
    found = {(p.line, p.message.split(":")[0]) for p in mem.lint() if "secret" in p.message}
    assert found == {(3, "looks like a secret in kind"), (4, "looks like a secret in expires")}


def test_rollback_restores_a_hand_written_file_with_an_odd_field(repo: Path, mem) -> None:  # type: ignore[no-untyped-def]
    """Hand-written files often have a time without a timezone or a list title: they are read
    liberally everywhere, and rollback must restore them too (byte for byte), not refuse."""
    original = b"---\nid: hw-1\ntitle: [Parser, returns, a, tuple]\ncreated: 2023-05-08 13:56\n---\nbody\n"
    path = repo / ".memory" / "hw.md"
    path.write_bytes(original)
    git(repo, "add", ".memory/hw.md")
    git(repo, "commit", "-q", "-m", "hand-written")
    mem.update("hw-1", confidence=0.3)
    mem.rollback("hw-1", "HEAD~1")
    assert path.read_bytes() == original


def test_lint_and_import_messages_do_not_repeat_a_token(repo: Path, mem) -> None:  # type: ignore[no-untyped-def]
    """'unknown kind <the token>' printed the credential in full to terminals and CI logs."""
    import json

    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    (repo / ".memory" / "hand.md").write_text(f"---\ntitle: hand\nkind: {token}\nconfidence: {token}\n---\nbody\n")
    messages = [p.message for p in mem.lint()]
    assert any("unknown kind" in m for m in messages)
    assert not [m for m in messages if token in m]
    report = mem.import_jsonl([json.dumps({"title": "t", "expires": token})])
    assert report.skipped and not [line for line in report.skipped if token in line]
