"""memgit as a team and a stranger meet it: rules files linked into the git directory, a block
edited by hand meeting a pull, on real repositories."""

from __future__ import annotations

import re
import subprocess
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


def clone(origin: Path, where: Path) -> Path:
    git(origin.parent, "clone", "-q", str(origin), str(where))
    return where


def test_two_clones_updating_the_block_merge_and_memgit_rules_resolves_the_conflict(tmp_path: Path) -> None:
    """Both clones add a convention and commit their block: the begin lines' hashes differ, so
    git's merge always conflicts in AGENTS.md. `memgit rules` writes the block afresh, both
    conventions in it, and leaves the bytes outside the block alone."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    a = clone(origin, tmp_path / "a")
    (a / "AGENTS.md").write_text("# Agents\n\nOur own words.\n")
    git(a, "add", "AGENTS.md")
    git(a, "commit", "-q", "-m", "initial")
    assert run(a, "init")[0] == 0
    assert run(a, "rules")[0] == 0
    git(a, "commit", "-q", "-am", "block")
    git(a, "push", "-q", "origin", "HEAD")
    b = clone(origin, tmp_path / "b")
    for where, text in ((a, "A: format with black"), (b, "B: sort imports with isort")):
        # memgit's commit of the memory carries the block brought up to date
        assert run(where, "remember", text, "--kind", "convention", "--source", "user")[0] == 0
        assert git(where, "status", "--porcelain") == ""
    git(a, "push", "-q", "origin", "HEAD")
    merge = subprocess.run(["git", "pull", "-q", "--no-rebase"], cwd=b, capture_output=True, text=True, check=False)
    assert merge.returncode != 0 and "<<<<<<<" in (b / "AGENTS.md").read_text()
    code, _, err = run(b, "rules")
    assert code == 0, err
    text = (b / "AGENTS.md").read_text()
    assert "<<<<<<<" not in text and "=======" not in text and ">>>>>>>" not in text
    assert "A: format with black" in text and "B: sort imports with isort" in text
    assert text.startswith("<!-- memgit:begin ") and text.endswith("<!-- memgit:end -->\n# Agents\n\nOur own words.\n")
    assert run(b, "rules", "--check")[0] == 0


def test_a_conflict_outside_the_block_is_left_to_the_person(mem, repo: Path) -> None:
    mem.remember("Run the tests with pytest -q", kind="convention", source="user")
    assert run(repo, "rules")[0] == 0
    agents = repo / "AGENTS.md"
    block = agents.read_text()
    other = re.sub(r"sha256:[0-9a-f]{12}", "sha256:" + "0" * 12, block)
    conflicted = f"<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> b\n{block}{other}"
    agents.write_text(conflicted)
    code, _, err = run(repo, "rules")
    assert code == 1 and "two memgit begin lines" in err and agents.read_text() == conflicted


def test_remove_keeps_a_block_edited_by_hand_unless_forced(mem, repo: Path) -> None:
    mem.remember("Run the tests with pytest -q", kind="convention", source="user")
    agents = repo / "AGENTS.md"
    agents.write_text("# Ours\n")
    assert run(repo, "rules")[0] == 0
    edited = agents.read_text().replace("- Run the tests", "- My own rule, written nowhere else\n- Run the tests")
    agents.write_text(edited)
    code, _, err = run(repo, "rules", "--remove")
    assert code == 1 and "edited by hand" in err and agents.read_text() == edited
    assert run(repo, "rules", "--remove", "--force")[0] == 0
    assert agents.read_text() == "# Ours\n"


def test_status_tells_a_teammate_whose_block_the_hooks_left_alone(tmp_path: Path) -> None:
    """B wrote inside the block; A's new convention comes with A's block brought up to date in
    the same commit, so git's pull refuses to overwrite B's uncommitted text (nothing of it is
    lost), and `memgit status` says the block is not kept current, and why."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    a = clone(origin, tmp_path / "a")
    (a / "README.md").write_text("project\n")
    git(a, "add", "README.md")
    git(a, "commit", "-q", "-m", "initial")
    assert run(a, "init")[0] == 0
    assert run(a, "remember", "Run the tests with pytest -q", "--kind", "convention", "--source", "user")[0] == 0
    assert run(a, "rules")[0] == 0
    git(a, "add", "AGENTS.md")
    git(a, "commit", "-q", "-m", "block")
    git(a, "push", "-q", "origin", "HEAD")
    b = clone(origin, tmp_path / "b")
    code, out, _ = run(b, "status")
    assert code == 0 and "rules_files:" in out and "AGENTS.md current" in out
    agents = b / "AGENTS.md"
    edited = agents.read_text().replace("- Run the tests", "- B's own line\n- Run the tests")
    agents.write_text(edited)
    assert run(a, "remember", "Use ruff", "--kind", "convention", "--source", "user")[0] == 0
    git(a, "push", "-q", "origin", "HEAD")
    pulled = subprocess.run(["git", "pull", "-q"], cwd=b, capture_output=True, text=True, check=False)
    assert pulled.returncode != 0 and "AGENTS.md" in pulled.stderr
    code, out, _ = run(b, "status")
    assert agents.read_text() == edited
    assert "AGENTS.md edited by hand, so not kept current" in out


def test_edit_pins_and_unpins_a_memory_for_the_block(mem, repo: Path) -> None:
    memory = mem.remember("The deploy goes through CI only", kind="decision", source="user").memory
    code, _, err = run(repo, "edit", memory.id, "--pin")
    assert code == 0, err
    assert mem.get(memory.id).pinned and "pinned: true" in (repo / mem.rel_path(memory)).read_text()
    assert run(repo, "rules")[0] == 0
    assert "Pinned:\n- The deploy goes through CI only" in (repo / "AGENTS.md").read_text()
    assert run(repo, "edit", memory.id, "--unpin")[0] == 0
    assert not mem.get(memory.id).pinned and "pinned" not in (repo / mem.rel_path(memory)).read_text()
    assert git(repo, "status", "--short", ".memory") == ""


def test_committed_links_never_copy_a_users_file_into_the_project(mem, repo: Path, tmp_path: Path) -> None:
    """A stranger's branch commits `.codex/config.toml` as a link to the user's credentials and
    `.mcp.json` to a JSON file of theirs, `.claude` to the user's own Claude folder: registering
    memgit read them and wrote their contents into plain project files, ready to be committed, or
    wrote into the user's folder. Each is refused, and nothing outside changes."""
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = hunter2\n")
    token = tmp_path / "tokens.json"
    token.write_text('{"token": "hunter2"}\n')
    user_claude = tmp_path / "user-claude"
    user_claude.mkdir()
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").symlink_to(secret)
    (repo / ".mcp.json").symlink_to(token)
    (repo / ".claude").symlink_to(user_claude, target_is_directory=True)
    (repo / ".gemini").symlink_to(".git", target_is_directory=True)
    for args in (("mcp", "install", "codex"), ("mcp", "install", "claude"), ("hooks", "install", "claude"),
                 ("hooks", "install", "codex", "--mcp"), ("mcp", "install", "gemini")):
        code, _, err = run(repo, *args)
        assert code == 1 and "is a symbolic link or leads outside the work tree" in err, (args, err)
    assert (repo / ".codex" / "config.toml").is_symlink() and (repo / ".mcp.json").is_symlink()
    assert "hunter2" not in git(repo, "status", "--porcelain", "-uall")
    assert secret.read_text() == "aws_secret_access_key = hunter2\n" and token.read_text() == '{"token": "hunter2"}\n'
    assert list(user_claude.iterdir()) == [] and not (repo / ".git" / "settings.json").exists()
