"""reflect used by a team and against a hostile branch: the "no" a revert or a person writes,
what a forged history can and cannot do, and what the MCP server answers within its budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import memgit

from .conftest import git


def memgit_cli(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "memgit", *args], cwd=repo, capture_output=True, text=True,
                          check=False)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def mcp_call(repo: Path, tool: str, arguments: dict[str, Any]) -> Any:
    """One call of `tool` through the MCP SDK's client over real stdio."""
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(repo),
                                   env=dict(os.environ))

    async def main() -> Any:
        async with Client(params) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(main)


def test_an_answer_cut_to_the_budget_keeps_what_fits(repo: Path, mem: memgit.Memgit) -> None:
    """A memory whose body alone is over `[mcp] max_bytes`: `show` cuts the body and keeps the
    id, title and the other small fields, rather than cutting everything."""
    made = mem.remember("A long note. " + "word " * 14_000, title="A very long note", force=True)
    result = mcp_call(repo, "show", {"ref": made.memory.id})
    assert result.is_error is False
    shown = result.structured_content
    assert shown["id"] == made.memory.id and shown["title"] == "A very long note"
    assert shown["body"].startswith("A long note. word")
    assert shown["truncated"]["cut"] == {"body": shown["truncated"]["cut"]["body"]}
    assert len(__import__("json").dumps(shown, ensure_ascii=False).encode("utf-8")) <= 60_000


# Two notes that state one thing in nearly the same words: reflect merges them on words alone.
BACKOFF = ("Retry uploads with exponential backoff",
           "The upload client retries failed uploads with exponential backoff capped at 30 seconds.")
BACKOFF_AGAIN = ("Uploads retry with exponential backoff",
                 "Failed uploads are retried by the upload client, exponential backoff, capped at 30 s.")
DEPLOY = ("Deploys go out on Tuesdays", "Production releases are cut on Tuesday mornings after the staging soak.")
DEPLOY_AGAIN = ("Releases are cut on Tuesdays", "Production deploys go out on Tuesday mornings after the staging soak.")


def remember(root: Path, title: str, body: str) -> str:
    return memgit_cli(root, "remember", "--title", title, body).stdout.strip()


def duplicates(root: Path) -> list[tuple[str, list[str]]]:
    data = json.loads(memgit_cli(root, "reflect", "--only", "duplicates", "--json").stdout)
    return [(p["kind"], sorted(p["ids"])) for p in data["proposals"]]


def test_a_forged_merge_trailer_in_a_reverted_commit_says_no_no(repo: Path, mem: memgit.Memgit) -> None:
    """`Memgit-Merged:` lines in a commit that merged nothing, then "reverted": reflect still
    proposes the merge (a trailer counts only where its commit deleted the merged memory)."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memgit init", "--allow-empty")
    a, b = remember(repo, *BACKOFF), remember(repo, *BACKOFF_AGAIN)
    c, d = remember(repo, *DEPLOY), remember(repo, *DEPLOY_AGAIN)
    assert sorted(duplicates(repo)) == sorted([("merge", sorted([a, b])), ("merge", sorted([c, d]))])
    (repo / "notes.txt").write_text("typo\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", f"docs: a typo\n\nMemgit-Merged: {a} {b}\nMemgit-Merged: {c} {d}\n")
    git(repo, "revert", "--no-edit", "HEAD")
    assert sorted(duplicates(repo)) == sorted([("merge", sorted([a, b])), ("merge", sorted([c, d]))])

    # A real reflect merge of one pair whose message also names the other pair: only the merge
    # it made is a "no" when it is reverted.
    memgit_cli(repo, "reflect", "--only", "duplicates", "--apply", "--exclude", c)
    message = git(repo, "log", "-1", "--format=%B")
    assert "Memgit-Merged:" in message and c not in message
    git(repo, "commit", "-q", "--amend", "-m", message.rstrip() + f"\nMemgit-Merged: {c} {d}\n")
    git(repo, "revert", "--no-edit", "HEAD")
    assert sorted(duplicates(repo)) == sorted([("distinct", sorted([a, b])), ("merge", sorted([c, d]))])


def test_reverting_the_merge_of_a_reflect_branch_is_a_no(repo: Path, mem: memgit.Memgit) -> None:
    """The team flow of `reflect --branch`: the branch is merged as a pull request (a merge
    commit), and reverting that pull request (`git revert -m 1`) says no to its merges."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memgit init", "--allow-empty")
    a, b = remember(repo, *BACKOFF), remember(repo, *BACKOFF_AGAIN)
    remember(repo, *DEPLOY)
    memgit_cli(repo, "reflect", "--only", "duplicates", "--branch", "memory/reflect-1")
    git(repo, "commit", "-q", "--allow-empty", "-m", "other work meanwhile")
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "memory/reflect-1")
    assert len(list((repo / ".memory").glob("*.md"))) == 2
    git(repo, "revert", "--no-edit", "-m", "1", "HEAD")
    assert len(list((repo / ".memory").glob("*.md"))) == 3
    assert duplicates(repo) == [("distinct", sorted([a, b]))]
    memgit_cli(repo, "reflect", "--only", "duplicates", "--apply")
    assert duplicates(repo) == []


def test_a_revert_of_the_revert_of_the_revert_says_no_again(repo: Path, mem: memgit.Memgit) -> None:
    """One person reverts reflect's merge, another reverts that revert (the merge is back), the
    first reverts again: the memories are two again and the "no" stands again."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memgit init", "--allow-empty")
    a, b = remember(repo, *BACKOFF), remember(repo, *BACKOFF_AGAIN)
    remember(repo, *DEPLOY)
    memgit_cli(repo, "reflect", "--only", "duplicates", "--apply")
    git(repo, "revert", "--no-edit", "HEAD")
    assert duplicates(repo) == [("distinct", sorted([a, b]))]
    git(repo, "revert", "--no-edit", "HEAD")  # merged again: nothing to propose
    assert duplicates(repo) == []
    git(repo, "revert", "--no-edit", "HEAD")  # two again, and a "no"
    assert len(list((repo / ".memory").glob("*.md"))) == 3
    assert duplicates(repo) == [("distinct", sorted([a, b]))]


def test_merging_away_a_memory_with_changes_not_committed_is_refused(repo: Path, mem: memgit.Memgit) -> None:
    """`feedback A B --duplicate` deletes one file: like `forget --hard`, it refuses when that
    file has changes git does not hold, which the merge could drop without a trace."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memgit init", "--allow-empty")
    a = remember(repo, *BACKOFF)
    b = memgit_cli(repo, "remember", "--title", BACKOFF_AGAIN[0], "--confidence", "0.5",
                   BACKOFF_AGAIN[1]).stdout.strip()
    (path,) = [p for p in (repo / ".memory").glob("*.md") if f"id: {b}\n" in p.read_text()]
    edited = path.read_text().replace("capped at 30 s.", "capped at 60 s.")
    path.write_text(edited)
    refused = memgit_cli(repo, "feedback", a, b, "--duplicate", check=False)
    assert refused.returncode != 0 and "not committed" in refused.stderr and "--force" not in refused.stderr
    assert path.read_text() == edited
    git(repo, "commit", "-q", "-am", "backoff is capped at 60 s")
    memgit_cli(repo, "feedback", a, b, "--duplicate")
    assert not path.exists()
    assert git(repo, "status", "--porcelain") == ""


def test_merging_away_a_memory_never_committed_is_refused_cleanly(repo: Path, mem: memgit.Memgit) -> None:
    """A memory remembered with --no-commit (staged only): `--duplicate` says to commit it
    first, and leaves no half-made change behind."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memgit init", "--allow-empty")
    a = remember(repo, *BACKOFF)
    b = memgit_cli(repo, "remember", "--no-commit", "--confidence", "0.5", "--title", BACKOFF_AGAIN[0],
                   BACKOFF_AGAIN[1]).stdout.strip()
    before = git(repo, "status", "--porcelain")
    refused = memgit_cli(repo, "feedback", a, b, "--duplicate", check=False)
    assert refused.returncode != 0 and "not committed" in refused.stderr
    assert "memgit finish" not in refused.stderr
    assert git(repo, "status", "--porcelain") == before
    git(repo, "commit", "-q", "-m", "the second note")
    memgit_cli(repo, "feedback", a, b, "--duplicate")
    assert git(repo, "status", "--porcelain") == ""


def test_a_revert_in_a_shallow_clone_still_says_no(tmp_path: Path) -> None:
    """A CI checkout two commits deep holds the reflect commit and its revert but not the
    commit before: the "no" holds there too."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q")
    git(origin, "commit", "-q", "--allow-empty", "-m", "initial")
    memgit_cli(origin, "init")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "memgit init", "--allow-empty")
    a, b = remember(origin, *BACKOFF), remember(origin, *BACKOFF_AGAIN)
    remember(origin, *DEPLOY)
    memgit_cli(origin, "reflect", "--only", "duplicates", "--apply")
    git(origin, "revert", "--no-edit", "HEAD")
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{origin}", str(ci))
    assert duplicates(ci) == [("distinct", sorted([a, b]))]


def test_two_verdicts_on_a_pair_at_once_are_refused(repo: Path, mem: memgit.Memgit) -> None:
    """`--not-duplicate --duplicate` merged the pair (the last flag won); saying both is refused."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memgit init", "--allow-empty")
    a, b = remember(repo, *BACKOFF), remember(repo, *BACKOFF_AGAIN)
    head = git(repo, "rev-parse", "HEAD")
    for flags in (("--not-duplicate", "--duplicate"), ("--duplicate", "--not-duplicate")):
        refused = memgit_cli(repo, "feedback", a, b, *flags, check=False)
        assert refused.returncode != 0 and "give one of them" in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == head and len(list((repo / ".memory").glob("*.md"))) == 2
    memgit_cli(repo, "feedback", a, b, "--not-duplicate")
    assert duplicates(repo) == []


def test_an_error_answer_stays_within_the_budget(repo: Path, mem: memgit.Memgit) -> None:
    """An error quotes what it was given: a 100 kB cursor or ref came back whole, over
    `[mcp] max_bytes`; it is cut to the budget."""
    for tool, arguments in (("reflect", {"cursor": "x" * 100_000}), ("show", {"ref": "y" * 100_000})):
        result = mcp_call(repo, tool, arguments)
        assert result.is_error is True
        text = str(result.content[0].text)
        assert len(text.encode("utf-8")) <= 60_000 and "cut to the answer's byte budget" in text


def test_two_memories_written_against_different_versions_of_the_code_are_not_merged(repo: Path) -> None:
    # A note from before a change and one from after it read alike, but a merge would give the
    # kept one the other's outdated sentence: reflect leaves them apart and says why.
    (repo / "src").mkdir()
    (repo / "src" / "auth.py").write_text("def login(user):\n    return user\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "login")
    memgit_cli(repo, "init")
    memgit_cli(repo, "remember", "login() returns the user object it is given, and callers check the session",
               "--entity", "src/auth.py::login")
    (repo / "src" / "auth.py").write_text("def login(user, session):\n    return session.user\n")
    git(repo, "commit", "-q", "-am", "login takes a session")
    memgit_cli(repo, "remember", "login() returns the user object of the session it is given, callers check",
               "--entity", "src/auth.py::login")
    out = json.loads(memgit_cli(repo, "reflect", "--json").stdout)
    assert [p for p in out["proposals"] if p["kind"] == "merge"] == []
    assert "written against different versions of `src/auth.py::login`" in json.dumps(out)
    # The same two notes written against the same code do merge.
    memgit_cli(repo, "remember", "login() returns the user object of the session it is given; callers check",
               "--entity", "src/auth.py::login")
    out = json.loads(memgit_cli(repo, "reflect", "--json").stdout)
    assert [p["kind"] for p in out["proposals"]].count("merge") == 1
