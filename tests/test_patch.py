"""memgit edits a hand-written file by changing only the lines of the fields it sets."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import memgit
from memgit import memory as fmt
from memgit.patch import patch

from .conftest import git

HAND_WRITTEN = (
    "\ufeff---\r\n"
    "# Written by hand; keep the comments.\r\n"
    "kind: lesson\r\n"
    "title: 'Deploys need the VPN: staging is private'\r\n"
    "confidence: 0.8   # a guess\r\n"
    "tags:\r\n"
    "  - ops\r\n"
    "  - vpn\r\n"
    "id: m-deploy\r\n"
    "owner: ana\r\n"
    "---\r\n"
    "\r\n"
    "Connect to the VPN before `make deploy`; staging.example is not public.\r\n"
)


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def changed_lines(repo: Path) -> list[str]:
    """The -/+ lines of the last commit's diff (CR kept: a CRLF file must stay CRLF)."""
    diff = subprocess.run(["git", "show", "--format=", "--unified=0", "HEAD"], cwd=repo, check=True,
                          capture_output=True).stdout.decode()
    return [line for line in diff.split("\n") if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))]


def test_edit_changes_only_the_confidence_and_updated_lines(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".memory" / "deploy.md"
    path.write_bytes(HAND_WRITTEN.encode())
    commit_all(repo, "hand-written memory")
    updated = mem.update("m-deploy", confidence=0.5)
    assert changed_lines(repo) == [
        "-confidence: 0.8   # a guess\r",
        "+confidence: 0.5   # a guess\r",
        f"+updated: {updated.updated}\r",
    ]
    text = path.read_bytes().decode()
    assert text.startswith("\ufeff---\r\n# Written by hand") and "\n" not in text.replace("\r\n", "")
    assert mem.get("m-deploy").confidence == 0.5 and mem.get("m-deploy").extra == {"owner": "ana"}


def test_forget_and_list_edits_keep_the_rest(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".memory" / "deploy.md"
    path.write_bytes(HAND_WRITTEN.encode())
    commit_all(repo, "hand-written memory")
    mem.update("m-deploy", tags=("ops", "network"), title="Deploys need the VPN")
    assert changed_lines(repo)[:6] == [
        "-title: 'Deploys need the VPN: staging is private'\r",
        "+title: Deploys need the VPN\r",
        "-  - ops\r",  # the list is rewritten as memgit writes lists
        "-  - vpn\r",
        "+- ops\r",
        "+- network\r",
    ]
    before = mem.get("m-deploy")
    archived = mem.forget("m-deploy")
    lines = changed_lines(repo)  # `updated` may be the same second as the edit above
    assert "+status: archived\r" in lines
    assert set(lines) <= {f"-updated: {before.updated}\r", f"+updated: {archived.updated}\r", "+status: archived\r"}
    assert "# Written by hand; keep the comments." in path.read_bytes().decode()


def test_edit_of_a_leniently_read_file_writes_valid_values_only_where_it_changes(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".memory" / "odd.md"
    path.write_text("---\ntitle: Odd one\nkind: Gotcha\ncreated: 2023-05-08T13:56:00\nconfidence: high\n---\nbody\n")
    commit_all(repo, "odd memory")
    mem.update("odd", confidence=0.6, kind="lesson")
    text = path.read_text()
    assert "confidence: 0.6\n" in text and "kind: lesson\n" in text
    assert "created: 2023-05-08T13:56:00\n" in text  # not memgit's field to fix; lint still reports it
    assert [p.message for p in mem.lint()][0].startswith("'created' has no timezone")


@pytest.mark.parametrize(
    ("text", "changes", "expected"),
    [
        ("---\ntitle: t\n---\nbody\n", {"confidence": 0.5}, "---\ntitle: t\nconfidence: 0.5\n---\nbody\n"),
        ("---\ntitle: t\n---\n", {"confidence": 0.5, "updated": "2026-01-01"},
         "---\ntitle: t\nconfidence: 0.5\nupdated: 2026-01-01\n---\n"),
        ("---\ntitle: t\ntask_id: T-1\n---\n", {"task_id": None}, "---\ntitle: t\n---\n"),
        ("---\ntitle: t\nstatus: archived\n---\n", {"status": "active"}, "---\ntitle: t\n---\n"),
        ("---\ntitle: t\n---", {"status": "archived"}, "---\ntitle: t\nstatus: archived\n---\n"),
        ("---\ntitle: t\n---\n\n\nold body\n", {"body": "new body"}, "---\ntitle: t\n---\n\n\nnew body\n"),
        ("plain note\n", {"confidence": 0.5}, "---\nconfidence: 0.5\n---\n\nplain note\n"),
        ("---\ntitle: a #b\n---\n", {"title": "c"}, "---\ntitle: c #b\n---\n"),
        ("---\ntitle: 'a #b'\n---\n", {"title": "c"}, "---\ntitle: c\n---\n"),
        ("---\ntitle: t\ntags: [a, b]\n---\n", {"tags": ("c",)}, "---\ntitle: t\ntags:\n- c\n---\n"),
    ],
)
def test_patch(text: str, changes: dict[str, object], expected: str) -> None:
    assert patch(text, changes) == expected


def test_patch_refuses_what_it_cannot_do_safely() -> None:
    assert patch("---\ntitle: t\n", {"confidence": 0.5}) is None  # never closed
    assert patch("---\ntitle: a\ntitle: b\n---\n", {"title": "c"}) is None  # a key twice
    assert patch("plain note\n", {"body": "x"}) is None
    assert patch("---\rtitle: t\r---\r", {"confidence": 0.5}) is None  # CR-only line endings


def test_example_files_patch_to_the_same_text_as_dump() -> None:
    from .conftest import EXAMPLE

    for path in sorted(EXAMPLE.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        memory = fmt.parse(text, path.name)
        new = fmt.Memory(**{**memory.__dict__, "confidence": 0.42, "title": "A new title"})
        assert patch(text, {"confidence": 0.42, "title": "A new title"}) == fmt.dump(new), path.name


def test_a_copied_memory_and_its_original_are_both_recalled(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    original = mem.remember("Staging deploys need the VPN; connect before make deploy").memory
    source = repo / ".memory" / original.path
    # A teammate copies the file to start a similar memory and edits the copy. Its name sorts
    # first, which used to drop the original from recall.
    copy = repo / ".memory" / "aaa-copy.md"
    copy.write_text(source.read_text().replace("Staging deploys need the VPN", "Production deploys need the bastion"))
    commit_all(repo, "copy a memory")
    ids = {m.id for m in mem.list()}
    assert ids == {original.id, "aaa-copy"}
    assert [h.id for h in mem.recall("staging VPN")][:1] == [original.id]
    assert [h.id for h in mem.recall("production bastion")][:1] == ["aaa-copy"]
    assert mem.get(original.id).path == original.path and mem.get("aaa-copy").path == "aaa-copy.md"
    messages = [str(p) for p in mem.lint()]
    assert messages == [
        f"aaa-copy.md: duplicate id {original.id!r} (the original is {original.path}): this copy is read as "
        "'aaa-copy'; give it its own id ('memgit lint --fix' writes that one)"
    ]
    assert mem.lint(fix=True) == []
    assert "id: aaa-copy\n" in copy.read_text() and f"id: {original.id}\n" in source.read_text()
    assert {m.id for m in mem.list()} == ids and mem.lint() == []


def test_editing_a_copy_writes_its_own_id(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    original = mem.remember("Logs rotate daily at midnight UTC").memory
    copy = repo / ".memory" / "rotation notes.md"
    copy.write_text((repo / ".memory" / original.path).read_text().replace("daily", "hourly"))
    commit_all(repo, "copy")
    mem.update("rotation-notes", confidence=0.4)
    text = copy.read_text()
    assert "id: rotation-notes\n" in text and "confidence: 0.4\n" in text and "hourly" in text
    assert mem.get(original.id).confidence == 0.9


def test_git_history_tells_a_hand_named_original_from_its_copy(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    original = repo / ".memory" / "deploy.md"
    original.write_text("---\nid: deploy-vpn\ntitle: Staging deploys need the VPN\n---\n")
    commit_all(repo, "hand-written memory")
    # The copy's name sorts first and neither name says which is the original: git does.
    (repo / ".memory" / "a-deploy.md").write_text("---\nid: deploy-vpn\ntitle: Production deploys need the bastion\n---\n")
    for state in ("untracked", "committed"):
        if state == "committed":
            commit_all(repo, "copy")
        fresh = memgit.open(repo, warn=lambda message: None)
        assert fresh.get("deploy-vpn").path == "deploy.md", state
        assert [h.id for h in fresh.recall("bastion")][:1] == ["a-deploy"], state
        assert {m.id for m in fresh.list()} == {"deploy-vpn", "a-deploy"}
        assert [p.path for p in fresh.lint()] == ["a-deploy.md"]
    fresh.reindex()
    assert fresh.get("deploy-vpn").path == "deploy.md"
