"""`memgit diff`: a branch's memory changes, in memory terms, on a real history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.errors import MemgitError

from .conftest import git


@pytest.fixture
def branch(repo: Path, mem: memgit.Memgit) -> dict[str, str]:
    """`feature` adds, edits, archives, merges two into one and deletes memories kept on main."""
    ids = {name: mem.remember(text).memory.id for name, text in (
        ("edited", "the cache key includes the locale"),
        ("archived", "deploys run from tools/deploy.sh"),
        ("dup1", "retries use exponential backoff"),
        ("dup2", "retry with backoff, starting at 100 ms"),
        ("deleted", "the staging database is reset nightly"),
    )}
    git(repo, "switch", "-q", "-c", "feature")
    ids["added"] = mem.remember("parse_config returns a tuple (path, Config)", kind="decision").memory.id
    mem.update(ids["edited"], confidence=0.6, tags=("cache",))
    mem.forget(ids["archived"])
    ids["merged"] = mem.remember("Retries: exponential backoff from 100 ms",
                                 supersedes=(ids["dup1"], ids["dup2"])).memory.id
    mem.forget(ids["dup1"])
    mem.forget(ids["dup2"])
    mem.forget(ids["deleted"], hard=True)
    return ids


def test_diff_of_a_branch(repo: Path, mem: memgit.Memgit, branch: dict[str, str]) -> None:
    changes = {c.id: c for c in mem.diff("main...feature")}
    assert {i: c.change for i, c in changes.items()} == {
        branch["added"]: "added", branch["merged"]: "added", branch["edited"]: "edited",
        branch["archived"]: "archived", branch["dup1"]: "merged", branch["dup2"]: "merged",
        branch["deleted"]: "deleted",
    }
    edited = changes[branch["edited"]]
    assert edited.fields == {"confidence": (0.9, 0.6), "tags": ((), ("cache",))} and not edited.body_changed
    assert changes[branch["dup1"]].merged_into == (branch["merged"],)
    assert mem.diff("feature..feature") == []


def test_diff_markdown_and_json(repo: Path, mem: memgit.Memgit, branch: dict[str, str]) -> None:
    out = CliRunner().invoke(cli, ["-C", str(repo), "diff", "main...HEAD"], catch_exceptions=False).output
    assert out.splitlines()[0] == "### Memory changes: 2 added, 1 edited, 2 merged, 1 archived, 1 deleted"
    assert f"- **the cache key includes the locale** (`{branch['edited']}`, fact): confidence `0.9` → `0.6`; tags +`cache`" in out
    assert (f"- **retries use exponential backoff** (`{branch['dup1']}`, fact): into "
            f"**Retries: exponential backoff from 100 ms** (`{branch['merged']}`)") in out
    data = json.loads(CliRunner().invoke(cli, ["-C", str(repo), "diff", "main..feature", "--json"]).output)
    assert {d["change"] for d in data} == {"added", "edited", "merged", "archived", "deleted"}


def test_diff_of_the_work_tree_and_bad_ranges(repo: Path, mem: memgit.Memgit) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo), "diff"]).output == "No memory changes.\n"
    memory = mem.remember("uncommitted one", commit=False).memory
    (repo / ".memory" / "notes.md").write_text("# Hand-written note\n\nNot committed yet.\n")
    assert {(c.id, c.change) for c in mem.diff()} == {(memory.id, "added"), ("notes", "added")}
    with pytest.raises(MemgitError, match="unknown revision 'nope'"):
        mem.diff("nope...HEAD")
    result = CliRunner().invoke(cli, ["-C", str(repo), "diff", "--", "-x"])
    assert result.exit_code != 0


def test_a_moved_file_is_one_edited_memory(repo: Path, mem: memgit.Memgit) -> None:
    memory = mem.remember("the cache key includes the locale").memory
    (repo / ".memory" / "team").mkdir()
    git(repo, "mv", f".memory/{memory.path}", ".memory/team/cache.md")
    git(repo, "commit", "-q", "-m", "move")
    (change,) = mem.diff("HEAD~1..HEAD")
    assert (change.id, change.change, change.fields) == (memory.id, "edited", {"path": (memory.path, "team/cache.md")})
