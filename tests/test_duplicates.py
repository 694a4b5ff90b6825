"""Two files that declare the same id (a copied memory): both are recalled, lint names the copy."""

from __future__ import annotations

from pathlib import Path

import memgit

from .conftest import git


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


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
        assert [p.path for p in fresh.lint() if "duplicate id" in p.message] == ["a-deploy.md"]
    fresh.reindex()
    assert fresh.get("deploy-vpn").path == "deploy.md"
