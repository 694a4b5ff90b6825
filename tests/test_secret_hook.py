"""The secret gate at commit time and in lint, through the real entry points: hooks installed by
`memgit hooks install git`, refused by `git commit` itself, and `memgit lint` on the CLI.

Every file under `.memory/` is pushed, so every file is scanned, from what git will commit;
secrets are compared by value with the committed version; oversize files are refused unread.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgit.cli import cli

from .conftest import git

# Built from pieces so that this file does not itself hold a token a scanner would block.
GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
NPM = "npm_" + "aB3dE6gH9jK2mN5pQ8sV1yZ4" + "bC7fI0lOrU3x"
AWS_1 = "AKIA" + "Q3ZXW7VB2NM4KL6P"
AWS_2 = "AKIA" + "R8TY6UI1OE5AS2DF"
REFUSED = "memgit: commit refused: memories are pushed to remotes"


def run(*args: str, cwd: Path):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["-C", str(cwd), *args], catch_exceptions=False)


@pytest.fixture
def hooked(repo: Path) -> Path:
    """A repository with a memory folder and memgit's git hooks, installed by the CLI."""
    assert run("init", cwd=repo).exit_code == 0
    assert run("hooks", "install", "git", cwd=repo).exit_code == 0
    return repo


def commit(repo: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    git(repo, "add", "-A", ".memory")
    return subprocess.run(
        ["git", "commit", "-m", "memories", *extra],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def write(repo: Path, rel: str, data: str | bytes) -> None:
    path = repo / ".memory" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)


@pytest.mark.parametrize(
    ("rel", "text", "line"),
    [
        ("config.toml", f'[index]\nembedder = "none"\ntoken = "{GITHUB}"\n', 3),
        ("notes.txt", f"scratch\nthe bot publishes with {NPM}\n", 2),
        ("README.md", f"# Memories\n\nCI pushes with {GITHUB}\n", 3),
        (".hidden.md", f"---\ntitle: hidden\n---\n\nuse {GITHUB}\n", 5),
        ("team/.env", f"GITHUB_TOKEN={GITHUB}\n", 1),
    ],
)
def test_a_secret_in_any_file_under_the_memory_folder_is_refused_and_linted(
    hooked: Path, rel: str, text: str, line: int
) -> None:
    write(hooked, rel, text)
    refused = commit(hooked)
    assert refused.returncode == 1
    assert f"memgit: .memory/{rel}:{line}: this looks like a secret (" in refused.stderr
    assert REFUSED in refused.stderr
    linted = run("lint", cwd=hooked)
    assert linted.exit_code == 1
    kind = "npm token (npm_…)" if "npm" in text else "GitHub token (ghp_…)"
    assert [line_ for line_ in linted.stdout.splitlines() if "secret" in line_] == [
        f"{rel}:{line}: looks like a secret: {kind}"
    ]


def test_ignored_files_are_not_linted_and_clean_ones_commit(hooked: Path) -> None:
    (hooked / ".gitignore").write_text(".memory/local/\n")
    write(hooked, "local/token.txt", f"{GITHUB}\n")  # ignored: git will never commit it
    write(hooked, "notes.txt", "nothing secret here\n")
    assert commit(hooked).returncode == 0
    assert run("lint", cwd=hooked).exit_code == 0


def test_the_hook_reads_what_git_commits_not_the_work_tree(hooked: Path) -> None:
    write(hooked, "notes.txt", f"use {GITHUB}\n")
    git(hooked, "add", ".memory")
    write(hooked, "notes.txt", "clean now, but the index still holds the token\n")
    refused = subprocess.run(
        ["git", "commit", "-m", "x"], cwd=hooked, capture_output=True, text=True, check=False
    )
    assert (
        refused.returncode == 1 and "memgit: .memory/notes.txt:1: this looks like a secret" in refused.stderr
    )
    write(hooked, "notes.txt", "clean\n")
    git(hooked, "add", ".memory")
    write(hooked, "notes.txt", f"not staged: {GITHUB}\n")
    assert (
        subprocess.run(["git", "commit", "-m", "x"], cwd=hooked, capture_output=True, check=False).returncode
        == 0
    )
    assert git(hooked, "show", "HEAD:.memory/notes.txt") == "clean\n"


def test_a_binary_file_is_scanned_in_its_text(hooked: Path) -> None:
    write(
        hooked, "cache.sqlite", b"SQLite format 3\0\0\x10\0" + f"token\0{NPM}\0".encode() + bytes(range(256))
    )
    refused = commit(hooked)
    assert refused.returncode == 1
    assert (
        "memgit: .memory/cache.sqlite: in its binary content: this looks like a secret (npm token: npm_…)"
        in refused.stderr
    )
    assert (
        "cache.sqlite: looks like a secret: in its binary content: npm token (npm_…)"
        in run("lint", cwd=hooked).stdout
    )


def test_a_second_secret_of_the_same_kind_is_refused_an_old_one_does_not_block(hooked: Path) -> None:
    write(hooked, "aws.md", f"# Deploy user\n\nkey id {AWS_1}\n")
    assert commit(hooked, env={**os.environ, "MEMGIT_ALLOW_SECRET": "1"}).returncode == 0
    write(hooked, "aws.md", f"# Deploy user\n\nkey id {AWS_1}\n\nMore about the deploy user.\n")
    assert commit(hooked).returncode == 0  # the committed key is not added by this commit
    git(hooked, "mv", ".memory/aws.md", ".memory/deploy-user.md")
    assert commit(hooked).returncode == 0  # nor by a rename
    write(hooked, "deploy-user.md", f"# Deploy user\n\nkey id {AWS_1}\nand the new one {AWS_2}\n")
    refused = commit(hooked)
    assert refused.returncode == 1
    assert (
        "memgit: .memory/deploy-user.md:4: this looks like a secret (AWS access key id: AKIA…)"
        in refused.stderr
    )
    assert ":3:" not in refused.stderr  # the committed one is not reported


def test_an_oversize_file_is_refused_unread(hooked: Path) -> None:
    write(hooked, "big.md", "---\ntitle: big\n---\n\n" + "a log line\n" * 200_000)  # 2.2 MB
    write(hooked, "dump.bin", b"\0" * 1_500_000)
    refused = commit(hooked)
    assert refused.returncode == 1
    assert (
        "memgit: .memory/big.md: 2.2 MB, over the 1.0 MB limit for files under .memory/ (memories are short "
        "notes; it was not read). Keep it outside .memory/ and unstage it: "
        "git restore --staged '.memory/big.md'"
    ) in refused.stderr
    assert "memgit: .memory/dump.bin: 1.5 MB, over the 1.0 MB limit" in refused.stderr
    assert "memgit: commit refused: a file under .memory/ is too large" in refused.stderr
    assert git(hooked, "log", "--format=%s", "-1") == "memory: init\n"
    lines = run("lint", cwd=hooked).stdout.splitlines()
    assert "big.md: file is over 1 MB; memory files are limited to 1 MB" in lines
    assert (
        "dump.bin: 1.5 MB, over the 1.0 MB limit for files in the memory folder (the pre-commit hook refuses "
        "it): keep it elsewhere"
    ) in lines


def test_a_credential_of_an_unknown_kind_is_refused(hooked: Path) -> None:
    token = "zyWF3IyT6IEh" + "03GeCqdPyx85y8qBsksKo1SR5wrL"
    write(
        hooked,
        "smoke.md",
        f'# Smoke test\n\ncurl -H "X-Api-Token: {token}" https://internal.example.org/health\n',
    )
    refused = commit(hooked)
    assert refused.returncode == 1
    assert "memgit: .memory/smoke.md:3: this looks like a secret (" in refused.stderr


@pytest.mark.parametrize(
    "title",
    [
        '"' + "".join(f"\\x{ord(c):02x}" for c in GITHUB) + '"',  # YAML escapes
        f'"{GITHUB[:12]}\\\n  {GITHUB[12:]}"',  # a line continuation: one value, no space
    ],
    ids=["escapes", "continuation"],
)
def test_a_secret_the_yaml_text_hides_is_refused_as_lint_reports_it(hooked: Path, title: str) -> None:
    head = f"---\nid: m-escaped\ntitle: {title}\nkind: fact\nsource: user\n---\n\n"
    write(hooked, "escaped.md", head + "body\n")
    linted = run("lint", cwd=hooked)
    assert "escaped.md: looks like a secret in title: GitHub token (ghp_…)" in linted.stdout
    refused = commit(hooked)
    assert refused.returncode == 1
    assert "memgit: .memory/escaped.md: in its title: this looks like a secret (GitHub token: ghp_…)" in (
        refused.stderr)
    assert REFUSED in refused.stderr
    assert commit(hooked, env={**os.environ, "MEMGIT_ALLOW_SECRET": "1"}).returncode == 0
    write(hooked, "escaped.md", head + "more\n")
    assert commit(hooked).returncode == 0  # the committed secret is not added again


def test_a_secret_in_a_file_name_is_refused_and_linted(hooked: Path) -> None:
    write(hooked, f"keys/{AWS_1}.txt", "the deploy user's key id is the file name\n")
    refused = commit(hooked)
    assert refused.returncode == 1
    assert (f"memgit: .memory/keys/{AWS_1}.txt: its name looks like a secret (AWS access key id: AKIA…)"
            in refused.stderr)
    assert REFUSED in refused.stderr
    linted = run("lint", cwd=hooked)
    assert linted.exit_code == 1
    assert f"keys/{AWS_1}.txt: its name looks like a secret: AWS access key id (AKIA…)" in linted.stdout
    assert commit(hooked, env={**os.environ, "MEMGIT_ALLOW_SECRET": "1"}).returncode == 0
    write(hooked, f"keys/{AWS_1}.txt", "edited: the name was committed already\n")
    assert commit(hooked).returncode == 0
    git(hooked, "mv", f".memory/keys/{AWS_1}.txt", f".memory/{AWS_2}.txt")  # a rename to another secret
    refused = commit(hooked)
    assert refused.returncode == 1 and f".memory/{AWS_2}.txt: its name looks like a secret" in refused.stderr


def test_a_half_written_file_of_a_killed_write_is_not_committed(hooked: Path) -> None:
    # What a memgit write killed while writing a memory leaves next to it (store.py's temp file).
    write(hooked, ".tmp-k3j9x2.md", "---\nid: m-half\ntitle: half writ")
    refused = commit(hooked)
    assert refused.returncode == 1
    assert ("memgit: .memory/.tmp-k3j9x2.md: a half-written file left by a memgit command that was killed, "
            "not a memory. Unstage and remove it: git rm --cached -q '.memory/.tmp-k3j9x2.md' && "
            "rm '.memory/.tmp-k3j9x2.md'") in refused.stderr
    assert "memgit: commit refused: a file under .memory/ is too large or half-written" in refused.stderr
    assert git(hooked, "log", "--format=%s", "-1") == "memory: init\n"
