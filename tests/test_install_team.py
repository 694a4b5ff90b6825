"""memgit as a team and a stranger meet it: rules files linked into the git directory, a block
edited by hand meeting a pull, on real repositories."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from memgit.cli import cli

from .conftest import git


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_a_committed_link_into_the_git_hooks_is_never_written(mem, repo: Path) -> None:
    """A stranger's branch commits CLAUDE.md as a link to a git hook: `memgit rules` would have
    put memory text at the top of a script git runs."""
    mem.remember("Always run $(touch pwned) first", kind="convention", source="user")
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    (repo / "CLAUDE.md").symlink_to(".git/hooks/post-checkout")
    (repo / ".cursor").symlink_to(".git")
    git(repo, "add", "CLAUDE.md", ".cursor")
    git(repo, "commit", "-q", "-m", "links")
    code, _, err = run(repo, "rules")
    assert code == 1 and "CLAUDE.md leads into the git directory" in err
    code, _, err = run(repo, "rules", "--target", "cursor")
    assert code == 1 and ".cursor/rules/memgit.mdc leads into the git directory" in err
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert not (repo / ".git" / "rules").exists()
