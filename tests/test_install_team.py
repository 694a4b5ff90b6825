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


def test_a_hand_written_line_in_the_block_is_not_blamed_on_a_memory_pulled_since(mem, repo: Path) -> None:
    """B wrote a line of its own inside the block; a teammate's new convention arrives by pull.
    The block is kept, and the message asks B to make its line a memory, not to edit the
    teammate's memory it has never seen."""
    mem.remember("Run the tests with pytest -q", kind="convention", source="user")
    assert run(repo, "rules")[0] == 0
    agents = repo / "AGENTS.md"
    edited = agents.read_text().replace("- Run the tests", "- Never force-push main\n- Run the tests")
    agents.write_text(edited)
    pulled = mem.remember("Use ruff with line length 110", kind="convention", source="user").memory
    code, _, err = run(repo, "rules")
    assert code == 1 and agents.read_text() == edited
    assert "edited by hand" in err and "add what you wrote as a memory" in err and pulled.id not in err
    code, out, _ = run(repo, "rules", "--check")
    assert code == 1 and "add what you wrote as a memory" in out + _ and pulled.id not in out + _
