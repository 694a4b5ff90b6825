"""The memgit block of a committed rules file rides along in memgit's own memory commits, also
when such a commit is refused (a hook) or interrupted and then finished or abandoned; the
user's own edits to the file never go in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import git
from .test_rulesfile import memgit_cli


@pytest.fixture
def project(repo: Path) -> Path:
    """A repository with a committed AGENTS.md holding memgit's block."""
    memgit_cli(repo, "init")
    memgit_cli(repo, "remember", "Run the tests with pytest -q", "--kind", "convention")
    memgit_cli(repo, "rules")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memgit rules")
    return repo


def refusing_hook(repo: Path) -> Path:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    return hook


def test_finish_after_a_refused_commit_carries_the_block_it_wrote(project: Path) -> None:
    hook = refusing_hook(project)
    assert memgit_cli(project, "remember", "Never push to main", "--kind", "convention", check=False).returncode != 0
    assert "Never push to main" in (project / "AGENTS.md").read_text()
    hook.unlink()
    memgit_cli(project, "finish")
    assert "AGENTS.md" in git(project, "show", "--name-only", "--format=", "HEAD")
    assert git(project, "status", "--porcelain") == ""


def test_the_next_memory_commit_carries_a_block_left_by_a_refused_commit(project: Path) -> None:
    hook = refusing_hook(project)
    memgit_cli(project, "remember", "Never push to main", "--kind", "convention", check=False)
    hook.unlink()
    memgit_cli(project, "abandon")
    assert git(project, "status", "--porcelain") == ""  # abandon puts the block back in step too
    hook = refusing_hook(project)
    memgit_cli(project, "remember", "Use tabs", "--kind", "convention", check=False)
    hook.unlink()
    memgit_cli(project, "remember", "Name branches after the ticket", "--kind", "convention")  # finishes, then commits
    assert git(project, "status", "--porcelain") == ""
    assert "Use tabs" in git(project, "show", "HEAD:AGENTS.md")


def test_abandon_after_a_refused_commit_puts_the_block_back(project: Path) -> None:
    before = (project / "AGENTS.md").read_bytes()
    hook = refusing_hook(project)
    memgit_cli(project, "remember", "Never push to main", "--kind", "convention", check=False)
    hook.unlink()
    memgit_cli(project, "abandon")
    assert (project / "AGENTS.md").read_bytes() == before
    assert git(project, "status", "--porcelain") == ""
    assert memgit_cli(project, "rules", "--check", check=False).returncode == 0


def test_the_users_edits_never_go_in_after_a_refused_commit(project: Path) -> None:
    hook = refusing_hook(project)
    memgit_cli(project, "remember", "Never push to main", "--kind", "convention", check=False)
    hook.unlink()
    with (project / "AGENTS.md").open("a") as handle:
        handle.write("my own line\n")
    memgit_cli(project, "finish")
    assert "AGENTS.md" not in git(project, "show", "--name-only", "--format=", "HEAD")
    assert (project / "AGENTS.md").read_text().endswith("my own line\n")
    # staged by the user: not memgit's to commit either
    git(project, "add", "AGENTS.md")
    memgit_cli(project, "remember", "Use tabs", "--kind", "convention")
    assert "AGENTS.md" not in git(project, "show", "--name-only", "--format=", "HEAD")
    assert "my own line" in git(project, "show", ":AGENTS.md")


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_rules_file_git_is_told_to_leave_alone_stays_out(project: Path, flag: str) -> None:
    """A local version of AGENTS.md hidden from git (`update-index --assume-unchanged` or
    `--skip-worktree`): `git status` is clean, but it is the user's, never memgit's to commit,
    and it must not make the memory commit fail."""
    with (project / "AGENTS.md").open("a") as handle:
        handle.write("my local line\n")
    git(project, "update-index", flag, "AGENTS.md")
    memgit_cli(project, "remember", "Never push to main", "--kind", "convention")
    assert "my local line" not in git(project, "show", "HEAD:AGENTS.md")
    assert (project / "AGENTS.md").read_text().endswith("my local line\n")
    assert git(project, "log", "-1", "--format=%s").startswith("memory:")


def killed_in_commit(project: Path) -> None:
    """`memgit remember` and its `git commit` killed by SIGKILL once git staged everything (a hook
    kills them both), as a closed terminal would; git's lock file removed, as the user would."""
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text('#!/bin/sh\nkill -9 "$(ps -o ppid= -p "$PPID" | tr -d " ")" "$PPID"\nsleep 5\nexit 1\n')
    hook.chmod(0o755)
    memgit_cli(project, "remember", "Never push to main", "--kind", "convention", check=False)
    hook.unlink()
    (project / ".git" / "index.lock").unlink(missing_ok=True)
    assert "AGENTS.md" in git(project, "diff", "--cached", "--name-only")  # memgit's own staging


@pytest.mark.skipif(shutil.which("ps") is None, reason="needs ps")
def test_finish_after_a_kill_carries_the_block_the_killed_commit_staged(project: Path) -> None:
    killed_in_commit(project)
    memgit_cli(project, "finish")
    assert "AGENTS.md" in git(project, "show", "--name-only", "--format=", "HEAD")
    assert git(project, "status", "--porcelain") == ""


@pytest.mark.skipif(shutil.which("ps") is None, reason="needs ps")
def test_abandon_after_a_kill_puts_the_block_back_and_unstages_it(project: Path) -> None:
    before = (project / "AGENTS.md").read_bytes()
    killed_in_commit(project)
    memgit_cli(project, "abandon")
    assert (project / "AGENTS.md").read_bytes() == before
    assert git(project, "status", "--porcelain") == ""


def test_the_users_chmod_of_the_rules_file_stays_out(project: Path) -> None:
    hook = refusing_hook(project)
    memgit_cli(project, "remember", "Never push to main", "--kind", "convention", check=False)
    hook.unlink()
    (project / "AGENTS.md").chmod(0o755)  # the block memgit left, and the user's own change
    memgit_cli(project, "finish")
    assert "AGENTS.md" not in git(project, "show", "--name-only", "--format=", "HEAD")
    assert git(project, "ls-tree", "HEAD", "AGENTS.md").startswith("100644")
