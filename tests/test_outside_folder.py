"""A memory folder that leads out of the work tree (a symlink) is never read through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.errors import MemgitError

from .conftest import git

SECRET = "The zanzibar deploy key lives in the vault"


@pytest.fixture
def linked(repo: Path, tmp_path: Path) -> Path:
    """`repo/.memory` is a symlink to a folder outside the repository, with one memory in it."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "config.toml").write_text("")
    (outside / "zanzibar.md").write_text(f"---\ntitle: {SECRET}\npinned: true\n---\nzanzibar body\n")
    os.symlink(outside, repo / ".memory")
    return repo


def test_commands_refuse_a_memory_folder_outside_the_repository(linked: Path) -> None:
    for args in (["recall", "zanzibar deploy key"], ["list"], ["lint"], ["show", "zanzibar"]):
        result = CliRunner().invoke(cli, ["-C", str(linked), *args])
        assert result.exit_code == 1, args
        assert "zanzibar" not in result.stdout
        assert "leads outside the repository" in result.stderr and "make it a folder inside" in result.stderr
    with pytest.raises(MemgitError, match="leads outside the repository"):
        memgit.open(linked).recall("zanzibar", min_score=0)
    with pytest.raises(MemgitError, match="leads outside the repository"):
        memgit.open(linked).init()


def test_session_start_hook_says_nothing_from_outside(linked: Path) -> None:
    data = {"session_id": "5b2c9a8e-1111-4c2d-9e3f-0123456789ab", "cwd": str(linked),
            "hook_event_name": "SessionStart", "source": "startup", "transcript_path": ""}
    done = subprocess.run([sys.executable, "-m", "memgit.hookrun", "claude", "session-start"],
                          input=json.dumps(data).encode(), cwd=linked, capture_output=True, timeout=120,
                          check=False)
    assert done.returncode == 0
    assert b"zanzibar" not in done.stdout and b"zanzibar" not in done.stderr
    log = Path(git(linked, "rev-parse", "--absolute-git-dir").strip()) / "memgit" / "hooks.log"
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and "leads outside the repository" in lines[0]


def test_symlinked_sub_folders_and_files_are_not_read(mem, repo: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "elsewhere"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "zanzibar.md").write_text(f"{SECRET}\n")
    os.symlink(outside / "deep", repo / ".memory" / "team")
    os.symlink(outside / "deep" / "zanzibar.md", repo / ".memory" / "zanzibar.md")
    assert mem.list() == [] and mem.recall("zanzibar deploy key", min_score=0) == []
    with pytest.raises(MemgitError, match="leads outside"):
        mem.store.read("zanzibar.md")


def test_a_git_dir_committed_inside_the_work_tree_is_not_used(repo: Path) -> None:
    """A folder shaped as a git dir whose config points its work tree at the repository: run from
    there, git would take its config and memgit would keep its index and sessions in it."""
    assert CliRunner().invoke(cli, ["-C", str(repo), "init"]).exit_code == 0
    embedded = repo / "tools"
    subprocess.run(["git", "init", "-q", "--bare", str(embedded)], check=True)
    subprocess.run(["git", "-C", str(embedded), "config", "core.bare", "false"], check=True)
    subprocess.run(["git", "-C", str(embedded), "config", "core.worktree", ".."], check=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tools")
    result = CliRunner().invoke(cli, ["-C", str(embedded), "recall", "deploys"])
    assert result.exit_code != 0 and "is a git dir committed inside the work tree" in result.output
    payload = json.dumps({"session_id": "s1", "cwd": str(embedded), "source": "startup"})
    for event in ("session-start", "pre-compact"):
        hook = subprocess.run([sys.executable, "-I", "-m", "memgit.hookrun", "claude", event], input=payload,
                              cwd=embedded, capture_output=True, text=True, check=False)
        assert hook.returncode == 0 and hook.stdout == ""
    assert not (embedded / "memgit").exists()
    assert git(repo, "status", "--porcelain") == ""
