"""`memgit recall --at REV`: memory as a commit holds it, read from git's objects, in real
repositories; revisions and trees that are hostile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.errors import MemgitError

from .conftest import git


def run(repo: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


def recall_json(repo: Path, *args: str) -> list[dict[str, Any]]:
    done = run(repo, "recall", *args, "--json")
    assert done.exit_code == 0, done.stderr
    return list(json.loads(done.stdout))


def status(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all")


@pytest.fixture
def history(repo: Path, mem: memgit.Memgit) -> dict[str, str]:
    """v1: the deploy memory says blue and a cache memory exists; since then the deploy
    memory was edited to say green and the cache memory was deleted."""
    deploy = mem.remember("Deploys go to the blue pool first, then the rest.", title="Deploy order",
                          files=["deploy/pools.yaml"]).memory
    cache = mem.remember("The cache key includes the locale and the tenant.", title="Cache key",
                         entity="src/cache.py::key").memory
    git(repo, "tag", "v1")
    mem.update(deploy.id, body="Deploys go to the green pool first, then the rest.")
    mem.forget(cache.id, hard=True)
    return {"deploy": deploy.id, "cache": cache.id}


def test_at_a_tag_before_an_edit_gives_the_old_text(repo: Path, history: dict[str, str]) -> None:
    now = recall_json(repo, "which pool do deploys go to first?")
    assert [h["id"] for h in now] == [history["deploy"]]
    assert "green" in now[0]["memory"]["body"]

    old = recall_json(repo, "which pool do deploys go to first?", "--at", "v1")
    assert [h["id"] for h in old] == [history["deploy"]]
    assert old[0]["memory"]["body"] == "Deploys go to the blue pool first, then the rest."
    assert old[0]["path"] == now[0]["path"]
    # The anchor channel works on the commit's memories too.
    by_anchor = recall_json(repo, "deploy/pools.yaml", "--at", "v1")
    assert by_anchor[0]["id"] == history["deploy"] and "anchor" in by_anchor[0]["channels"]
    # Markdown, as an agent is given it, and the plain listing.
    markdown = run(repo, "recall", "deploy pool", "--at", "v1", "--format", "markdown")
    assert "Deploys go to the blue pool first" in markdown.stdout and "green" not in markdown.stdout
    assert run(repo, "recall", "deploy pool", "--at", "v1").stdout.startswith("1.00  " + history["deploy"])
    assert status(repo) == ""  # nothing checked out, written or staged


def test_a_memory_deleted_since_is_found_at_the_old_revision(repo: Path, history: dict[str, str]) -> None:
    assert recall_json(repo, "what is in the cache key?") == []
    old = recall_json(repo, "what is in the cache key?", "--at", "v1")
    assert old[0]["id"] == history["cache"]
    assert old[0]["memory"]["entity"] == "src/cache.py::key"
    # A sha and a relative name work as well as a tag; the rest of the work tree is untouched.
    sha = git(repo, "rev-parse", "v1").strip()
    assert [h["id"] for h in recall_json(repo, "cache key", "--at", sha[:10])] == [history["cache"]]
    assert [h["id"] for h in recall_json(repo, "cache key", "--at", "HEAD~2")] == [history["cache"]]
    assert memgit.open(repo).recall("cache key", at="v1")[0].memory.body.startswith("The cache key")


def test_a_revision_on_another_branch(repo: Path, mem: memgit.Memgit) -> None:
    git(repo, "checkout", "-q", "-b", "release/2.x")
    backport = mem.remember("Release 2.x still signs tokens with HS256.", title="Token signing on 2.x").memory
    git(repo, "checkout", "-q", "main")
    mem.remember("Tokens are signed with EdDSA.", title="Token signing")

    here = recall_json(repo, "how are tokens signed?")
    assert backport.id not in [h["id"] for h in here]
    there = recall_json(repo, "how are tokens signed?", "--at", "release/2.x")
    assert [h["id"] for h in there] == [backport.id]
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def test_the_mcp_tool_takes_at(repo: Path, history: dict[str, str]) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(repo),
                                   env=dict(os.environ))

    async def main() -> tuple[Any, Any, Any]:
        async with Client(params) as client:
            old = await client.call_tool("recall", {"query": "cache key", "at": "v1"})
            now = await client.call_tool("recall", {"query": "cache key"})
            bad = await client.call_tool("recall", {"query": "cache", "at": "--output=/tmp/x"})
            return old, now, bad

    old, now, bad = anyio.run(main)
    assert [h["id"] for h in old.structured_content["hits"]] == [history["cache"]]
    assert now.structured_content["hits"] == []
    assert bad.is_error and "is not a revision" in bad.content[0].text


@pytest.mark.parametrize("rev, message", [
    ("--output=OWNED", "is not a revision"),
    ("-h", "is not a revision"),
    ("no-such-tag", "unknown revision 'no-such-tag'"),
    ("HEAD:README.md", "unknown revision"),  # a blob, not a commit
    ("a\nb", "is not a revision"),
    ("", "the revision is empty"),
])
def test_bad_revisions_get_a_clear_error(repo: Path, history: dict[str, str], rev: str, message: str,
                                         tmp_path: Path) -> None:
    owned = tmp_path / "owned"
    done = run(repo, "recall", "cache", "--at", rev.replace("OWNED", str(owned)))
    assert done.exit_code == 1 and message in done.stderr and done.stdout == ""
    assert not owned.exists()


def test_a_revision_before_memgit_was_set_up(repo: Path, history: dict[str, str]) -> None:
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    done = run(repo, "recall", "cache", "--at", first)
    assert done.exit_code == 1 and "has no .memory/" in done.stderr and "name a later one" in done.stderr


def test_a_hostile_tree_is_read_liberally_and_never_outside(repo: Path, mem: memgit.Memgit, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("---\nid: m-leak01\ntitle: Leaked zebra secret\n---\nzebra outside the repository\n")
    memory = repo / ".memory"
    os.symlink(outside, memory / "link.md")  # a link out of the work tree
    (memory / "huge.md").write_text("---\ntitle: Huge zebra\n---\n" + "zebra " * 200_000)
    (memory / "broken.md").write_text("---\ntitle: [unclosed zebra\nkind: Decision\nconfidence: high\n---\n"
                                      "the zebra crossing is painted white\n")
    (memory / ".hidden").mkdir()
    (memory / ".hidden" / "h.md").write_text("---\ntitle: Hidden zebra\n---\nzebra\n")
    (memory / "notes.txt").write_text("zebra notes\n")
    (memory / "binary.md").write_bytes(b"\0zebra\0" * 10)
    git(repo, "add", "-f", ".memory")
    git(repo, "commit", "-q", "--no-verify", "-m", "hostile")  # what a branch may hold, hooks or not
    git(repo, "tag", "hostile")
    git(repo, "rm", "-q", "-r", "--cached", ".memory/link.md", ".memory/huge.md", ".memory/broken.md",
        ".memory/.hidden", ".memory/notes.txt", ".memory/binary.md")
    git(repo, "commit", "-q", "--no-verify", "-m", "clean up")
    for name in ("link.md", "huge.md", "broken.md", "notes.txt", "binary.md"):
        (memory / name).unlink()
    (memory / ".hidden" / "h.md").unlink()

    said: list[str] = []
    store = memgit.open(repo, warn=said.append)
    hits = store.recall("zebra", 10, at="hostile", min_score=0)
    assert [h.path for h in hits] == [".memory/broken.md"]  # read as lenient reading reads it
    assert hits[0].memory.body.strip() == "the zebra crossing is painted white"
    assert not any("outside the repository" in h.memory.body for h in hits)
    assert any("huge.md: file is over 1 MB" in line for line in said)
    assert any("binary.md" in line for line in said)
    assert status(repo) == ""


def test_a_store_outside_git_has_no_revisions(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "no-history.md").write_text("---\ntitle: No history\n---\nplain folders have no history\n")
    store = memgit.open(tmp_path, memory_dir=str(folder), warn=lambda message: None)
    assert [h.title for h in store.recall("history")] == ["No history"]
    with pytest.raises(MemgitError, match="not in a git repository"):
        store.recall("history", at="HEAD")


def test_the_index_of_a_commit_is_kept_for_the_next_question(repo: Path, history: dict[str, str]) -> None:
    """One process asks about a release twice: the second answer comes from the kept index,
    which is the commit's (a commit never changes) whatever the work tree does meanwhile."""
    store = memgit.open(repo, warn=lambda message: None)
    first = store.recall("cache key", at="v1")
    (repo / ".memory" / "extra.md").write_text("---\ntitle: Cache key extra\n---\ncache key extra\n")
    second = store.recall("cache key", at="v1")
    assert [h.id for h in first] == [h.id for h in second] == [history["cache"]]
    done = subprocess.run([sys.executable, "-m", "memgit", "recall", "cache key", "--at", "v1", "--json"],
                          cwd=repo, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and [h["id"] for h in json.loads(done.stdout)] == [history["cache"]]
