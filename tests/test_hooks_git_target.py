"""`memgit hooks install|status|uninstall git`: git's hooks through the same command group as
the agents', driven by a real `git checkout` and `git commit` afterwards."""

from __future__ import annotations

import stat
from pathlib import Path

from click.testing import CliRunner

from memgit.cli import cli

from .conftest import git


def run(repo: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


def test_install_status_uninstall_git_keeps_a_foreign_hook(repo: Path) -> None:
    assert run(repo, "init").exit_code == 0
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    foreign = hooks / "pre-commit"
    foreign.write_text("#!/bin/sh\necho foreign >> \"$(git rev-parse --git-dir)/foreign.log\"\n")
    foreign.chmod(foreign.stat().st_mode | stat.S_IEXEC)
    before = foreign.read_bytes()

    dry = run(repo, "hooks", "install", "git", "--dry-run")
    assert dry.exit_code == 0 and "pre-commit    foreign" in dry.stdout
    assert foreign.read_bytes() == before  # --dry-run writes nothing

    done = run(repo, "hooks", "install", "git")
    assert done.exit_code == 0
    assert "pre-commit    chained" in done.stdout and "post-merge    installed" in done.stdout
    assert "git    repo    pre-commit: chained" in run(repo, "hooks", "status").stdout
    assert git(repo, "config", "--get", "merge.memgit.driver").strip()

    (repo / "notes.txt").write_text("x\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "a commit runs both hooks")
    assert (repo / ".git" / "foreign.log").read_text() == "foreign\n"

    assert run(repo, "hooks", "uninstall", "git").exit_code == 0
    assert foreign.read_bytes() == before and not (hooks / "post-merge").exists()
    assert "pre-commit: foreign" in run(repo, "hooks", "status").stdout
